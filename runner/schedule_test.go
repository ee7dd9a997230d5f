package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dprepro/dprepro/results"
)

// costFake is fakeExp with a cost estimate per unit (its rep modulo 7,
// plus one: units of cost 1 … 7 interleaved), recording the order its
// units start in.
type costFake struct {
	*fakeExp
	mu      sync.Mutex
	started []string
}

func repOf(key string) int {
	var i int
	fmt.Sscanf(key[strings.LastIndex(key, "=")+1:], "%d", &i)
	return i
}

func (e *costFake) UnitCost(u Unit) float64 { return float64(repOf(u.Key())%7 + 1) }

func (e *costFake) RunUnit(ctx context.Context, u Unit, env Env) ([]results.Row, error) {
	e.mu.Lock()
	e.started = append(e.started, u.Key())
	e.mu.Unlock()
	return e.fakeExp.RunUnit(ctx, u, env)
}

func keysOf(us []Unit) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Key()
	}
	return out
}

// TestDispatchOrder_LongestFirst: units by cost, largest first, ties in
// the units' order; nil costs keep the order.
func TestDispatchOrder_LongestFirst(t *testing.T) {
	units := []Unit{Key("a"), Key("b"), Key("c"), Key("d"), Key("e")}
	got := keysOf(dispatchOrder(units, []float64{1, 5, 2, 5, 0}, nil))
	if want := []string{"b", "d", "c", "a", "e"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if got := keysOf(dispatchOrder(units, nil, nil)); !slices.Equal(got, keysOf(units)) {
		t.Errorf("no costs: order %v, want the units' own", got)
	}
}

// TestDispatchOrder_Scopes: a kind with scratch scopes keeps them
// grouped — scopes by total cost, largest first, and within one its units
// largest first.
func TestDispatchOrder_Scopes(t *testing.T) {
	e := &scopedFake{fakeExp: newFake(6), scopes: 2} // reps 0..5: s0 = 0,2,4; s1 = 1,3,5
	units := e.Units()
	costs := []float64{1, 2, 9, 2, 1, 2} // s0 total 11, s1 total 6
	got := keysOf(dispatchOrder(units, costs, e))
	want := []string{"d/m2/rep=2", "d/m0/rep=0", "d/m1/rep=4", "d/m1/rep=1", "d/m0/rep=3", "d/m2/rep=5"}
	if !slices.Equal(got, want) {
		t.Errorf("order\n got %v\nwant %v", got, want)
	}
	// Without costs: grouped in the order of each scope's first unit.
	got = keysOf(dispatchOrder(units, nil, e))
	want = []string{"d/m0/rep=0", "d/m2/rep=2", "d/m1/rep=4", "d/m1/rep=1", "d/m0/rep=3", "d/m2/rep=5"}
	if !slices.Equal(got, want) {
		t.Errorf("no costs\n got %v\nwant %v", got, want)
	}
}

// TestUnitCosts: measured times win over estimates, which are scaled to
// seconds by the measured/estimated ratio of the units with both; no
// estimate and no time is no information.
func TestUnitCosts(t *testing.T) {
	e := &costFake{fakeExp: newFake(4)} // estimates 1, 2, 3, 4
	units := e.Units()
	measured := map[string]float64{units[0].Key(): 10, units[1].Key(): 50} // ratio 60/3 = 20
	m := func(k string) (float64, bool) { s, ok := measured[k]; return s, ok }
	got := unitCosts(units, e, m, units)
	if want := []float64{10, 50, 60, 80}; !slices.Equal(got, want) {
		t.Errorf("costs %v, want %v", got, want)
	}
	none := func(string) (float64, bool) { return 0, false }
	if got := unitCosts(units, e, none, units); !slices.Equal(got, []float64{1, 2, 3, 4}) {
		t.Errorf("estimates only: %v", got)
	}
	if got := unitCosts(units, nil, none, units); got != nil {
		t.Errorf("no information: %v, want nil", got)
	}
	// No estimate: the unmeasured units cost the mean measured time.
	if got := unitCosts(units, nil, m, units); !slices.Equal(got, []float64{10, 50, 30, 30}) {
		t.Errorf("measured only: %v", got)
	}
}

// TestLPTAssign: greedy LPT on hand-worked costs, every item assigned.
func TestLPTAssign(t *testing.T) {
	// Largest first, 7,5,4,3,1 on 2 bins: 7→0; 5→1; 4→1 (load 5 < 7);
	// 3→0 (7 < 9); 1→1 (9 < 10). Final loads 10 and 10.
	got := lptAssign([]float64{3, 7, 1, 5, 4}, 2)
	if want := []int{0, 0, 1, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("bins %v, want %v", got, want)
	}
}

// TestShardUnits_CostBalanced: with estimates the shards are a partition
// of the units, each in the units' order, with loads within the largest
// unit of each other, the same on every call; without, by position.
func TestShardUnits_CostBalanced(t *testing.T) {
	e := &costFake{fakeExp: newFake(40)}
	units := e.Units()
	costs := unitCosts(units, e, func(string) (float64, bool) { return 0, false }, nil)
	seen := map[string]int{}
	var loads []float64
	for i := 0; i < 3; i++ {
		s := Shard{Index: i, Count: 3}
		mine := shardUnits(units, costs, s)
		if again := shardUnits(units, costs, s); !slices.Equal(keysOf(again), keysOf(mine)) {
			t.Fatalf("shard %d: not deterministic", i)
		}
		load, last := 0.0, -1
		for _, u := range mine {
			seen[u.Key()]++
			load += e.UnitCost(u)
			p := slices.Index(keysOf(units), u.Key())
			if p < last {
				t.Errorf("shard %d: units not in the units' order", i)
			}
			last = p
		}
		loads = append(loads, load)
	}
	if len(seen) != len(units) {
		t.Errorf("%d units assigned, want %d", len(seen), len(units))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("unit %s in %d shards", k, n)
		}
	}
	// Greedy LPT: the last item placed went to the least loaded bin, so
	// no two loads differ by more than the largest cost (7).
	if lo, hi := slices.Min(loads), slices.Max(loads); hi-lo > 7 {
		t.Errorf("loads %v differ by more than the largest unit", loads)
	}
	byPos := shardUnits(units, nil, Shard{Index: 1, Count: 3})
	if byPos[0].Key() != units[1].Key() || byPos[1].Key() != units[4].Key() {
		t.Errorf("no estimates: shard 1/3 = %v…, want positions 1, 4, …", keysOf(byPos)[:2])
	}
}

// TestRun_LongestFirstIdenticalRows: a kind with estimates runs its units
// longest first (one worker: exactly the estimates' order) and writes the
// same rows.csv and summary.csv as without estimates at 1, 2 and 4
// workers and as three merged shards; the manifest records the simulated
// schedules and the estimates' rank check.
func TestRun_LongestFirstIdenticalRows(t *testing.T) {
	plain, err := Run(context.Background(), newFake(30), Options{OutDir: t.TempDir(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := [2][]byte{readFile(t, filepath.Join(plain, "rows.csv")), readFile(t, filepath.Join(plain, "summary.csv"))}
	for _, w := range []int{1, 2, 4} {
		e := &costFake{fakeExp: newFake(30)}
		dir, err := Run(context.Background(), e, Options{OutDir: t.TempDir(), Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(readFile(t, filepath.Join(dir, "rows.csv")), want[0]) || !bytes.Equal(readFile(t, filepath.Join(dir, "summary.csv")), want[1]) {
			t.Errorf("workers=%d: rows.csv or summary.csv differ from the run without estimates", w)
		}
		if w == 1 {
			want := keysOf(dispatchOrder(e.Units(), unitCosts(e.Units(), e, func(string) (float64, bool) { return 0, false }, nil), nil))
			if !slices.Equal(e.started, want) {
				t.Errorf("one worker: started %v, want longest first %v", e.started, want)
			}
			if c0, c1 := e.UnitCost(Key(e.started[0])), e.UnitCost(Key(e.started[len(e.started)-1])); c0 != 7 || c1 != 1 {
				t.Errorf("first unit costs %v, last %v: want 7 and 1", c0, c1)
			}
		}
		var m struct {
			UnitTimes results.UnitTimes `json:"unit_times"`
		}
		if err := json.Unmarshal(readFile(t, filepath.Join(dir, "manifest.json")), &m); err != nil {
			t.Fatal(err)
		}
		sc := m.UnitTimes.Scaling
		if sc == nil || sc.Units != 30 || len(sc.Dispatch) != len(results.ScheduleWorkers) || len(sc.UnitOrder) != len(results.ScheduleWorkers) {
			t.Fatalf("workers=%d: scaling %+v", w, sc)
		}
		for i, p := range sc.LPT {
			if p.MakespanS < sc.Bound[i].MakespanS-1e-6 {
				t.Errorf("workers=%d: LPT makespan %v below the bound %v", w, p.MakespanS, sc.Bound[i].MakespanS)
			}
		}
	}
	// Shards by estimated cost, merged: the same files.
	var srcs []string
	for i := 0; i < 3; i++ {
		out := t.TempDir()
		dir, err := Run(context.Background(), &costFake{fakeExp: newFake(30)}, Options{OutDir: out, Workers: 2, Shard: Shard{Index: i, Count: 3}})
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, filepath.Join(dir, ".checkpoint"))
	}
	e := &costFake{fakeExp: newFake(30)}
	out := t.TempDir()
	dst := filepath.Join(RunDir(out, e.Spec()), ".checkpoint")
	if _, err := results.MergeCheckpoints(dst, Header(e), srcs, keysOf(e.Units())); err != nil {
		t.Fatal(err)
	}
	dir, err := Run(context.Background(), e, Options{OutDir: out, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.started) != 0 {
		t.Errorf("merged run computed %d units, want 0", len(e.started))
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, "rows.csv")), want[0]) {
		t.Error("merged shards: rows.csv differs")
	}
}
