package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/results"
)

// TestProcess_Profiles runs the built binary with --cpuprofile and
// --memprofile and checks that both files are pprof profiles (gzip, and
// `go tool pprof -top` reads them as a CPU and a heap profile); that a
// path that cannot be written is refused with exit 2 before any unit, for
// every command that runs units; and that profiling changes no byte of
// rows.csv or summary.csv.
func TestProcess_Profiles(t *testing.T) {
	bin := sharedBinary(t)
	env := cleanEnv(t)
	spec := writeSpec(t, strings.Replace(processSpecSmall, "replicates = 20", "replicates = 3", 1))
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	out, plain := t.TempDir(), t.TempDir()
	r := runProc(t, env, bin, "run", spec, "--out", out, "--workers", "2", "--cpuprofile", cpu, "--memprofile", mem)
	if r.code != 0 {
		t.Fatalf("profiled run: exit %d\n%s", r.code, r.stderr)
	}
	for _, w := range []string{"CPU profile written to " + cpu, "heap profile written to " + mem} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	for path, typ := range map[string]string{cpu: "Type: cpu", mem: "Type: inuse_space"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: not gzip (a pprof profile is gzipped protobuf): % x", path, b[:min(len(b), 4)])
		}
		top, err := exec.Command("go", "tool", "pprof", "-top", path).CombinedOutput()
		if err != nil || !bytes.Contains(top, []byte(typ)) {
			t.Errorf("go tool pprof -top %s: %v, want %q in\n%s", path, err, typ, top)
		}
	}
	if r := runProc(t, env, bin, "run", spec, "--out", plain, "--workers", "1"); r.code != 0 {
		t.Fatalf("plain run: exit %d\n%s", r.code, r.stderr)
	}
	rows, sum, _ := readRun(t, filepath.Join(out, "proc", "quick-seed17"))
	prows, psum, _ := readRun(t, filepath.Join(plain, "proc", "quick-seed17"))
	if !bytes.Equal(rows, prows) || !bytes.Equal(sum, psum) {
		t.Error("the profiled run's rows.csv or summary.csv differs from the plain run's")
	}

	bad := filepath.Join(dir, "no-such-folder", "x.prof")
	for _, flag := range []string{"--cpuprofile", "--memprofile"} {
		for _, args := range [][]string{
			{"run", spec},
			{"reproduce", "--specs", filepath.Dir(spec)},
			{"audit", "laplace"},
			{"merge", spec, "--shards", dir},
		} {
			o := t.TempDir()
			r := runProc(t, env, bin, append(args, "--out", o, flag, bad)...)
			want := "dprepro: " + flag + ": cannot write the profile: open " + bad + ": no such file or directory"
			if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, startedUnits) {
				t.Errorf("%s %s: exit %d, want 2 and %q before any unit:\n%s", args[0], flag, r.code, want, r.stderr)
			}
			if ents, _ := os.ReadDir(o); len(ents) != 0 {
				t.Errorf("%s %s: a refused profile path left %d entries in --out", args[0], flag, len(ents))
			}
		}
	}
}

// TestProcess_UnitTimes checks the manifest's per-unit times for their
// structure only (times vary from run to run): counts against the units,
// ordered quantiles, the longest units, the critical path and busy
// fraction consistent with them; a rerun of the finished run resumes
// every unit and counts them as resumed with the times they were computed
// with; the shards' times reach the merged manifest per shard; and
// dprepro check still finds the run identical to itself in exact mode.
func TestProcess_UnitTimes(t *testing.T) {
	bin := sharedBinary(t)
	env := cleanEnv(t)
	spec := writeSpec(t, strings.Replace(processSpecSmall, "replicates = 20", "replicates = 3", 1))
	consistent := func(t *testing.T, what string, st results.UnitTimeStats, count int, timedWall bool) {
		t.Helper()
		if st.Count != count {
			t.Errorf("%s: count %d, want %d", what, st.Count, count)
		}
		if count == 0 {
			return
		}
		if !(0 <= st.P50 && st.P50 <= st.P90 && st.P90 <= st.P99 && st.P99 <= st.MaxSeconds && st.MaxSeconds <= st.TotalSeconds) {
			t.Errorf("%s: want 0 ≤ p50 ≤ p90 ≤ p99 ≤ max ≤ total: %+v", what, st)
		}
		if len(st.Longest) != min(5, count) || st.Longest[0].Seconds != st.MaxSeconds {
			t.Errorf("%s: longest %+v, want %d units, the first of max %v", what, st.Longest, min(5, count), st.MaxSeconds)
		}
		for i := 1; i < len(st.Longest); i++ {
			if st.Longest[i].Seconds > st.Longest[i-1].Seconds || st.Longest[i].Unit == "" {
				t.Errorf("%s: longest not in decreasing order: %+v", what, st.Longest)
			}
		}
		if !timedWall {
			return
		}
		if st.Workers < 1 || st.WallSeconds <= 0 {
			t.Fatalf("%s: no workers or wall time: %+v", what, st)
		}
		cp := max(st.MaxSeconds, st.TotalSeconds/float64(st.Workers))
		if d := st.CriticalPathSeconds - cp; d > 1e-6 || d < -1e-6 {
			t.Errorf("%s: critical path %v, want max(max, total/workers) = %v", what, st.CriticalPathSeconds, cp)
		}
		bf := st.TotalSeconds / (float64(st.Workers) * st.WallSeconds)
		if d := st.BusyFraction - bf; d > 1e-4 || d < -1e-4 {
			t.Errorf("%s: busy fraction %v, want total/(workers×wall) = %v", what, st.BusyFraction, bf)
		}
	}

	out := t.TempDir()
	run := filepath.Join(out, "proc", "quick-seed17")
	if r := runProc(t, env, bin, "run", spec, "--out", out, "--workers", "2"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	rows, sum, m := readRun(t, run)
	units := m.Units.Total // 4 mechanisms × 3 ε × 3 replicates
	if units != 36 || m.Units.Computed != units {
		t.Fatalf("units %+v, want 36 computed", m.Units)
	}
	ut := m.UnitTimes
	if ut == nil {
		t.Fatal("manifest has no unit_times")
	}
	if ut.Kind != "mechanism-bounds" || (ut.Measure != results.MeasureThreadCPU && ut.Measure != results.MeasureWall) || ut.Note == "" {
		t.Errorf("unit_times kind %q measure %q note %q", ut.Kind, ut.Measure, ut.Note)
	}
	consistent(t, "computed", ut.Computed, units, true)
	if ut.Computed.Workers != 2 || ut.Resumed != 0 || ut.ResumedTimed != nil || ut.Shards != nil {
		t.Errorf("fresh run: %+v", ut)
	}

	// The same command again resumes every unit of the finished run.
	r := runProc(t, env, bin, "run", spec, "--out", out, "--workers", "1")
	if r.code != 0 || !strings.Contains(r.stderr, "resuming") {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	rows2, sum2, m2 := readRun(t, run)
	if !bytes.Equal(rows, rows2) || !bytes.Equal(sum, sum2) {
		t.Error("the resumed run's rows.csv or summary.csv differs")
	}
	if ut := m2.UnitTimes; ut == nil || ut.Resumed != units || ut.Computed.Count != 0 || ut.ResumedTimed == nil {
		t.Fatalf("resumed run: unit_times %+v, want %d resumed with their recorded times", ut, units)
	}
	consistent(t, "resumed", *m2.UnitTimes.ResumedTimed, units, true)
	if got, want := m2.UnitTimes.ResumedTimed.Longest, m.UnitTimes.Computed.Longest; !sameUnits(got, want) {
		t.Errorf("resumed: longest %+v, want the first run's %+v", got, want)
	}

	// Shards: each records its units' times in its checkpoint; the merge
	// reports them per shard.
	shards := []string{t.TempDir(), t.TempDir()}
	for i, d := range shards {
		if r := runProc(t, env, bin, "run", spec, "--out", d, "--workers", "1", "--shard", []string{"0/2", "1/2"}[i]); r.code != 0 {
			t.Fatalf("shard %d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
	merged := t.TempDir()
	if r := runProc(t, env, bin, "merge", spec, "--out", merged, "--shards", strings.Join(shards, ",")); r.code != 0 {
		t.Fatalf("merge: exit %d\n%s", r.code, r.stderr)
	}
	mrows, msum, mm := readRun(t, filepath.Join(merged, "proc", "quick-seed17"))
	if !bytes.Equal(rows, mrows) || !bytes.Equal(sum, msum) {
		t.Error("the merged run's rows.csv or summary.csv differs from the unsharded run's")
	}
	mt := mm.UnitTimes
	if mt == nil || mt.Resumed != units || mt.Computed.Count != 0 || mt.ResumedTimed == nil || len(mt.Shards) != 2 {
		t.Fatalf("merged: unit_times %+v, want %d resumed units from 2 shards", mt, units)
	}
	consistent(t, "merged", *mt.ResumedTimed, units, true)
	for i, s := range mt.Shards {
		if want := []string{"0/2", "1/2"}[i]; s.Shard != want || s.Workers != 1 {
			t.Errorf("shard %d: %q workers %d, want %q, 1", i, s.Shard, s.Workers, want)
		}
		consistent(t, "shard "+s.Shard, s.UnitTimeStats, units/2, true) // unit p goes to shard p mod 2
	}

	// The times are no result: check compares the runs bit for bit.
	refs := t.TempDir()
	mkdirT(t, filepath.Join(refs, "proc"))
	for _, f := range []string{"summary.csv", "manifest.json"} {
		writeT(t, filepath.Join(refs, "proc", f), mustRead(t, filepath.Join(run, f)))
	}
	r = runProc(t, env, bin, "check", merged, "--against", refs)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "identical [exact]") {
		t.Errorf("check of the merged run against the first: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// sameUnits reports whether a and b list the same units with the same times.
func sameUnits(a, b []results.UnitDuration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
