package results

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSummariseUnitTimes_Quantiles checks the nearest-rank quantiles, the
// total, the longest units (ties by key) and the critical path on times
// whose answers are known by hand.
func TestSummariseUnitTimes_Quantiles(t *testing.T) {
	times := map[string]float64{}
	for i := 1; i <= 100; i++ { // 0.01 s … 1.00 s
		times[fmt.Sprintf("u%03d", i)] = float64(i) / 100
	}
	times["tie"] = 1.0 // ties u100 at the top: "tie" sorts after "u100"
	st := SummariseUnitTimes(times, 4, 20)
	// n = 101: p50 is the ⌈50.5⌉ = 51st smallest, p90 the 91st (⌈90.9⌉),
	// p99 the 100th (⌈99.99⌉).
	want := UnitTimeStats{Count: 101, TotalSeconds: 51.5, P50: 0.51, P90: 0.91, P99: 1.0, MaxSeconds: 1.0,
		Workers: 4, WallSeconds: 20, CriticalPathSeconds: 51.5 / 4, BusyFraction: math.Round(51.5/80*1e4) / 1e4} // rounded to 4 digits
	got := st
	got.Longest = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stats\n got %+v\nwant %+v", got, want)
	}
	wantLongest := []UnitDuration{{"tie", 1}, {"u100", 1}, {"u099", 0.99}, {"u098", 0.98}, {"u097", 0.97}}
	if fmt.Sprint(st.Longest) != fmt.Sprint(wantLongest) {
		t.Errorf("longest %v, want %v", st.Longest, wantLongest)
	}
	// One long unit bounds the critical path; no wall time, no bound.
	one := SummariseUnitTimes(map[string]float64{"a": 9, "b": 1}, 4, 10)
	if one.CriticalPathSeconds != 9 || one.P50 != 1 || one.MaxSeconds != 9 || len(one.Longest) != 2 {
		t.Errorf("one long unit: %+v", one)
	}
	if nw := SummariseUnitTimes(map[string]float64{"a": 1}, 2, 0); nw.CriticalPathSeconds != 0 || nw.BusyFraction != 0 || nw.Workers != 0 {
		t.Errorf("no wall time: %+v", nw)
	}
	if e := SummariseUnitTimes(nil, 2, 1); e.Count != 0 || e.Longest != nil {
		t.Errorf("no units: %+v", e)
	}
}

// TestSummariseRecorded_ByShard checks that recorded times are grouped by
// shard and that a group's wall time adds up its attempts' last unit ends.
func TestSummariseRecorded_ByShard(t *testing.T) {
	rec := map[string]UnitTime{
		"a": {Seconds: 1, EndSeconds: 1, Attempt: "t0", Shard: "0/2", Workers: 1},
		"b": {Seconds: 2, EndSeconds: 3, Attempt: "t0", Shard: "0/2", Workers: 1},
		"c": {Seconds: 4, EndSeconds: 4, Attempt: "t1", Shard: "0/2", Workers: 1}, // a resumed attempt
		"d": {Seconds: 5, EndSeconds: 5, Attempt: "t2", Shard: "1/2", Workers: 2},
		"e": {Seconds: 6, EndSeconds: 6, Attempt: "t3"}, // no shard
	}
	sh := ByShard(rec)
	if len(sh) != 2 || sh[0].Shard != "0/2" || sh[1].Shard != "1/2" {
		t.Fatalf("shards %+v", sh)
	}
	if s := sh[0]; s.Count != 3 || s.TotalSeconds != 7 || s.WallSeconds != 7 || s.Workers != 1 || s.CriticalPathSeconds != 7 || s.BusyFraction != 1 {
		t.Errorf("shard 0/2: %+v", s)
	}
	if s := sh[1]; s.Count != 1 || s.Workers != 2 || s.CriticalPathSeconds != 5 || s.BusyFraction != 0.5 {
		t.Errorf("shard 1/2: %+v", s)
	}
	if all := SummariseRecorded(rec); all.Count != 5 || all.TotalSeconds != 18 || all.WallSeconds != 3+4+5+6 {
		t.Errorf("all: %+v", all)
	}
	if ByShard(map[string]UnitTime{"e": rec["e"]}) != nil {
		t.Error("no shard: want nil")
	}
}

// TestCheckpoint_UnitTimes checks that a unit's time is kept by the
// checkpoint (reopened, and merged from shards), is not part of its
// checksum, and that a line without one still reads.
func TestCheckpoint_UnitTimes(t *testing.T) {
	h := CheckpointHeader{SpecHash: "s", Seed: 1, Binary: "b"}
	shard := func(unit string, ut *UnitTime) string {
		dir := filepath.Join(t.TempDir(), ".checkpoint")
		cp, _, err := OpenCheckpoint(dir, h)
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.AppendTimed(unit, []Row{{"v": unit}}, nil, ut); err != nil {
			t.Fatal(err)
		}
		cp.Close()
		return dir
	}
	ta := UnitTime{Seconds: 0.5, Measure: MeasureThreadCPU, WallSeconds: 0.6, EndSeconds: 0.7, Attempt: "x", Shard: "0/2", Workers: 3}
	a := shard("u1", &ta)
	b := shard("u2", nil)
	cp, _, err := OpenCheckpoint(a, h) // reopened: rewritten with its valid lines
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := cp.Time("u1"); !ok || got != ta {
		t.Errorf("reopened: time %+v %v, want %+v", got, ok, ta)
	}
	cp.Close()
	dst := filepath.Join(t.TempDir(), ".checkpoint")
	if _, err := MergeCheckpoints(dst, h, []string{a, b}, []string{"u1", "u2"}); err != nil {
		t.Fatal(err)
	}
	m, _, err := OpenCheckpoint(dst, h)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got, ok := m.Time("u1"); !ok || got != ta {
		t.Errorf("merged: time %+v %v, want %+v", got, ok, ta)
	}
	if _, ok := m.Time("u2"); ok {
		t.Error("merged: u2 has a time it was never given")
	}
	// The checksum covers the rows only: the same rows, timed or not,
	// have the same line sum.
	s1, _ := rowsSum("u1", []Row{{"v": "u1"}})
	line, _ := json.Marshal(checkpointLine{Unit: "u1", Rows: []Row{{"v": "u1"}}, Sum: s1, Time: &ta})
	var back checkpointLine
	if err := json.Unmarshal(line, &back); err != nil || back.Sum != s1 || back.Time == nil || *back.Time != ta {
		t.Errorf("line round trip: %+v %v", back, err)
	}
}

// TestSummariseSim_CriticalPath: a unit of tasks counts for its serial
// work plus its tasks spread over the workers (never less than one task),
// not for its whole time.
func TestSummariseSim_CriticalPath(t *testing.T) {
	units := map[string]SimUnit{
		"a": {Serial: 1, Tasks: 10, TaskSeconds: 10}, // 1 + max(1, 10/4) = 3.5
		"b": {Serial: 2},
	}
	st := SummariseSim(units, 4, 5)
	if st.TotalSeconds != 13 || st.MaxSeconds != 11 || st.CriticalPathSeconds != 3.5 {
		t.Errorf("total %v, max %v, critical path %v; want 13, 11, 3.5", st.TotalSeconds, st.MaxSeconds, st.CriticalPathSeconds)
	}
	// On 40 workers a task (1 s) is the floor: 1 + 1 = 2 = unit b.
	if st := SummariseSim(units, 40, 5); st.CriticalPathSeconds != 2 {
		t.Errorf("40 workers: critical path %v, want 2", st.CriticalPathSeconds)
	}
}
