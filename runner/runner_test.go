package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
)

// fakeExp is a small experiment whose units draw from their own streams.
type fakeExp struct {
	spec     *experiments.Spec
	units    []string
	calls    atomic.Int64
	failKey  string                // RunUnit returns an error for this key
	panicKey string                // RunUnit panics for this key
	failIf   func(key string) bool // RunUnit returns an error for the keys it holds
	onRun    func(key string)      // called at the start of every RunUnit
	data     []results.DatasetInfo
	figure   string // the name of its one figure; "" means "f"
}

func newFake(n int) *fakeExp {
	s := experiments.DefaultSpec()
	s.ID, s.Kind, s.Seed, s.Profile = "fake", "cv-tuning", 99, "paper"
	s.Data.Datasets = []string{"d"}
	e := &fakeExp{spec: &s}
	for i := 0; i < n; i++ {
		e.units = append(e.units, fmt.Sprintf("d/m%d/rep=%d", i%3, i))
	}
	return e
}

func (e *fakeExp) Spec() *experiments.Spec { return e.spec }
func (e *fakeExp) Units() []Unit {
	us := make([]Unit, len(e.units))
	for i, k := range e.units {
		us[i] = Key(k)
	}
	return us
}
func (e *fakeExp) Columns() []string {
	return []string{"dataset", "data_source", "method", "alpha", "unit", "value"}
}
func (e *fakeExp) RunUnit(ctx context.Context, u Unit, env Env) ([]results.Row, error) {
	key := u.Key()
	e.calls.Add(1)
	if e.onRun != nil {
		e.onRun(key)
	}
	if key == e.failKey || e.failIf != nil && e.failIf(key) {
		return nil, errors.New("boom")
	}
	if key == e.panicKey {
		panic("kaboom")
	}
	rng := randx.New(uint64(e.spec.Seed), key)
	r := results.Row{"dataset": "d", "data_source": "synthetic", "unit": key, "method": strings.Split(key, "/")[1]}
	r.SetFloat("alpha", float64(len(key)%2+1))
	r.SetFloat("value", rng.NormFloat64())
	return []results.Row{r}, nil
}
func (e *fakeExp) Summary(rows []results.Row) []results.SummaryRow {
	return results.Summarize(rows, results.SummaryOptions{Experiment: "fake", XName: "alpha", XCol: "alpha",
		Metrics: []string{"value"}, Bootstrap: 200, Level: 0.95, Seed: e.spec.Seed})
}
func (e *fakeExp) Figures() []plots.FigureSpec {
	name := e.figure
	if name == "" {
		name = "f"
	}
	return []plots.FigureSpec{{Name: name, Title: "fake", Metric: "value", XLabel: "alpha", YLabel: "value"}}
}
func (e *fakeExp) Datasets() []results.DatasetInfo            { return e.data }
func (e *fakeExp) Ledger([]results.Row) []results.LedgerEntry { return nil }
func (e *fakeExp) Warnings() []string                         { return nil }

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRun_WorkersBitIdentical(t *testing.T) {
	var outs [][2][]byte
	for _, w := range []int{1, 4} {
		dir, err := Run(context.Background(), newFake(40), Options{OutDir: t.TempDir(), Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, [2][]byte{readFile(t, filepath.Join(dir, "rows.csv")), readFile(t, filepath.Join(dir, "summary.csv"))})
		for _, f := range []string{"manifest.json", "spec.toml", "figures/f.png", "figures/f.svg"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("workers=%d: %v", w, err)
			}
		}
	}
	if !bytes.Equal(outs[0][0], outs[1][0]) || !bytes.Equal(outs[0][1], outs[1][1]) {
		t.Error("rows.csv or summary.csv differ between 1 and 4 workers")
	}
}

// TestRun_Resume interrupts a run part-way, then runs again: the second run
// computes only the missing units and its output equals an uninterrupted run.
func TestRun_Resume(t *testing.T) {
	ref, err := Run(context.Background(), newFake(30), Options{OutDir: t.TempDir(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	e := newFake(30)
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	e.onRun = func(string) {
		if n.Add(1) == 10 {
			cancel()
		}
	}
	_, err = Run(ctx, e, Options{OutDir: out, Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("interrupted run: got %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "fake", "paper-seed99", "manifest.json")); err == nil {
		t.Fatal("an interrupted run left a manifest.json")
	}
	e2 := newFake(30)
	dir, err := Run(context.Background(), e2, Options{OutDir: out, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var m results.Manifest
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "manifest.json")), &m); err != nil {
		t.Fatal(err)
	}
	if m.Units.Resumed < 5 || m.Units.Resumed+m.Units.Computed != 30 || int(e2.calls.Load()) != m.Units.Computed {
		t.Errorf("resume: %+v with %d calls", m.Units, e2.calls.Load())
	}
	for _, f := range []string{"rows.csv", "summary.csv"} {
		if !bytes.Equal(readFile(t, filepath.Join(ref, f)), readFile(t, filepath.Join(dir, f))) {
			t.Errorf("%s of the resumed run differs from the uninterrupted run", f)
		}
	}
}

func TestRun_FailuresReported(t *testing.T) {
	for _, mode := range []string{"error", "panic"} {
		t.Run(mode, func(t *testing.T) {
			e := newFake(12)
			if mode == "error" {
				e.failKey = e.units[5]
			} else {
				e.panicKey = e.units[5]
			}
			out := t.TempDir()
			_, err := Run(context.Background(), e, Options{OutDir: out, Workers: 3})
			if err == nil || !strings.Contains(err.Error(), e.units[5]) || !strings.Contains(err.Error(), "1 of 12 units failed") {
				t.Fatalf("got %v", err)
			}
			if _, err := os.Stat(filepath.Join(out, "fake", "paper-seed99", "summary.csv")); err == nil {
				t.Error("a failed run wrote summary.csv")
			}
			// The other units were checkpointed: a fixed rerun computes one unit.
			e2 := newFake(12)
			if _, err := Run(context.Background(), e2, Options{OutDir: out, Workers: 3}); err != nil {
				t.Fatal(err)
			}
			if c := e2.calls.Load(); c != 1 {
				t.Errorf("rerun computed %d units, want 1", c)
			}
		})
	}
}

// TestRun_StaleCheckpointDiscarded: a checkpoint of another run identity
// in the same folder (here: the data changed from a stand-in to the real
// file, then the real file's bytes changed) is never resumed, and stderr
// says what changed.
func TestRun_StaleCheckpointDiscarded(t *testing.T) {
	out := t.TempDir()
	stand := []results.DatasetInfo{{Name: "d", Source: "synthetic", Generator: "planted-logistic/v1",
		Params: map[string]string{"n": "100", "reason": "real file absent: /somewhere"}}}
	real := func(sum string) []results.DatasetInfo {
		return []results.DatasetInfo{{Name: "d", Source: "real", Files: []results.FileInfo{{Name: "d.data", SHA256: sum}}}}
	}
	steps := []struct {
		data      []results.DatasetInfo
		wantCalls int64
		want      string
	}{
		{stand, 6, ""},
		{stand, 0, ""}, // same identity: all resumed
		{real("318f00aa"), 6, "data: d changed from synthetic planted-logistic/v1 to real d.data sha256 318f00aa"},
		{real("99990000"), 6, "data: d changed from real d.data sha256 318f00aa to real d.data sha256 99990000"},
	}
	for i, st := range steps {
		e := newFake(6)
		e.data = st.data
		var stderr bytes.Buffer
		if _, err := Run(context.Background(), e, Options{OutDir: out, Workers: 1, Stderr: &stderr}); err != nil {
			t.Fatal(err)
		}
		if e.calls.Load() != st.wantCalls || !strings.Contains(stderr.String(), st.want) {
			t.Errorf("step %d: calls %d (want %d), stderr %q (want %q)", i, e.calls.Load(), st.wantCalls, stderr.String(), st.want)
		}
	}
}

func TestCheckpoint_Damage(t *testing.T) {
	dir := t.TempDir()
	h := results.CheckpointHeader{SpecHash: "h", Seed: 1, Binary: "b"}
	cp, _, err := results.OpenCheckpoint(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := cp.Append(fmt.Sprint("u", i), []results.Row{{"v": fmt.Sprint(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	cp.Close()
	path := filepath.Join(dir, "units.jsonl")
	data := readFile(t, path)

	// A torn last line is dropped and the unit recomputed.
	if err := os.WriteFile(path, data[:len(data)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	cp, _, err = results.OpenCheckpoint(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Len() != 2 {
		t.Errorf("torn tail: %d units kept, want 2", cp.Len())
	}
	cp.Close()

	// A damaged line in the middle is an error, never silently used.
	bad := bytes.Replace(data, []byte(`"v":"1"`), []byte(`"v":"7"`), 1)
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := results.OpenCheckpoint(dir, h); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged line: got %v", err)
	}
}

// TestHeader_Changes: the messages of a changed identity name the part that
// changed; a stand-in whose parameters changed says so without dumping them.
func TestHeader_Changes(t *testing.T) {
	base := results.CheckpointHeader{Format: results.CheckpointFormat, SpecID: "s", SpecHash: "h1", Seed: 1, Profile: "quick",
		Data:  []results.DataIdentity{{Name: "d", Source: "synthetic gen/v1 (n=10, seed=1)"}},
		Build: "m@v rev", Binary: "b1"}
	cases := []struct {
		name   string
		change func(h *results.CheckpointHeader)
		want   string
	}{
		{"seed", func(h *results.CheckpointHeader) { h.Seed = 2 }, "seed: 1 changed to 2"},
		{"profile", func(h *results.CheckpointHeader) { h.Profile = "paper" }, `profile: "quick" changed to "paper"`},
		{"spec", func(h *results.CheckpointHeader) { h.SpecHash = "h2" }, "spec: the resolved spec changed"},
		{"stand-in parameters", func(h *results.CheckpointHeader) { h.Data[0].Source = "synthetic gen/v1 (n=10, seed=2)" }, "data: d: the parameters of its stand-in changed (synthetic gen/v1)"},
		{"dataset added", func(h *results.CheckpointHeader) {
			h.Data = append(h.Data, results.DataIdentity{Name: "e", Source: "real e.csv sha256 00"})
		}, "data: e was not read before (now real e.csv sha256 00)"},
		{"build", func(h *results.CheckpointHeader) { h.Build = "m@v rev2" }, "build: m@v rev changed to m@v rev2"},
		{"binary", func(h *results.CheckpointHeader) { h.Binary = "b2" }, "build: the program changed"},
	}
	for _, c := range cases {
		h := base
		h.Data = append([]results.DataIdentity(nil), base.Data...)
		c.change(&h)
		ch := h.Changes(base) // h is the new identity, base the checkpoint's
		if len(ch) != 1 || !strings.Contains(ch[0], c.want) {
			t.Errorf("%s: changes %q, want one containing %q", c.name, ch, c.want)
		}
	}
	old := base
	old.Format = 1
	if ch := base.Changes(old); len(ch) != 1 || !strings.Contains(ch[0], "format: the checkpoint was written in format 1") {
		t.Errorf("an old-format checkpoint: %q", ch)
	}
	if ch := base.Changes(base); len(ch) != 0 {
		t.Errorf("equal headers: %q", ch)
	}
}

// TestRun_SecureNoiseRefusesDataDependentScaling: Run refuses a spec
// switched to secure noise in code on data-dependent scaling it does not
// accept, before any work, with the spec's error.
func TestRun_SecureNoiseRefusesDataDependentScaling(t *testing.T) {
	e := newFake(3)
	if len(e.spec.Data.Datasets) == 0 {
		t.Fatal("the fake reads no dataset")
	}
	e.spec.Output.SecureNoise = true
	out := t.TempDir()
	_, err := Run(context.Background(), e, Options{OutDir: out, Workers: 1})
	if !errors.Is(err, experiments.ErrDataDependentScaling) {
		t.Fatalf("Run = %v, want ErrDataDependentScaling", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("the refused run wrote %d entries", len(entries))
	}
}

// TestRun_NoiseReportExternal: the manifest's noise report of a run with
// secure noise says that the spec's external methods draw their own noise,
// not hardened by the harness; without external methods, or without
// secure noise, it is package mech's report alone.
func TestRun_NoiseReportExternal(t *testing.T) {
	const line = "external methods (py-a, py-b): draw their own noise"
	for _, c := range []struct {
		name            string
		secure, methods bool
	}{
		{"secure with methods", true, true},
		{"secure without methods", true, false},
		{"simulation with methods", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newFake(3)
			e.spec.Output.SecureNoise = c.secure
			e.spec.Data.AcceptDataDependentScaling = c.secure // the fake's data are scaled as the papers do
			if c.methods {
				e.spec.Methods = []experiments.MethodSpec{
					{Name: "py-a", Serves: experiments.ServesLearner, Command: []string{"python3", "a.py"}},
					{Name: "py-b", Serves: experiments.ServesLearner, Command: []string{"python3", "b.py"}},
				}
			}
			dir, err := Run(context.Background(), e, Options{OutDir: t.TempDir(), Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, l := range m.Noise {
				if strings.HasPrefix(l, line) {
					found = true
					if !strings.Contains(l, "crypto/rand") || !strings.Contains(l, "NOT hardened by the harness") {
						t.Errorf("noise line %q", l)
					}
				}
			}
			if want := c.secure && c.methods; found != want {
				t.Errorf("noise report %q: external line present %v, want %v", m.Noise, found, want)
			}
			if m.SecureNoise != c.secure {
				t.Errorf("secure_noise %v, want %v", m.SecureNoise, c.secure)
			}
		})
	}
}

// TestFigureCaption: the runner states the profile a figure was run with
// (a quick profile that fell back to the spec's own settings is the
// paper's) and the level of its intervals, unless the kind stated them.
func TestFigureCaption(t *testing.T) {
	t.Parallel()
	spec := func(profile string, fallback bool) *experiments.Spec {
		return &experiments.Spec{Profile: profile, ProfileFallback: fallback, Output: experiments.OutputSpec{CILevel: 0.9}}
	}
	tests := []struct {
		name string
		spec *experiments.Spec
		in   plots.Caption
		want plots.Caption
	}{
		{"quick", spec("quick", false), plots.Caption{}, plots.Caption{Profile: "quick", CILevel: 0.9}},
		{"fallback", spec("quick", true), plots.Caption{}, plots.Caption{Profile: plots.AsWritten, CILevel: 0.9}},
		// A built-in spec without the profile asked: its settings are the paper's.
		{"built-in fallback", func() *experiments.Spec { s := spec("quick", true); s.ID = experiments.BuiltinIDs()[0]; return s }(), plots.Caption{}, plots.Caption{Profile: "paper", CILevel: 0.9}},
		{"kind's own", spec("quick", false), plots.Caption{Profile: "mine", CILevel: 0.5, Note: "n"}, plots.Caption{Profile: "mine", CILevel: 0.5, Note: "n"}},
	}
	for _, tt := range tests {
		if got := FigureCaption(tt.spec, tt.in); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// scopedFake is fakeExp with a scratch scope per unit (its rep modulo
// scopes, so that the units' order interleaves the scopes), recording
// which scopes are open — a unit started, the scope not yet released.
type scopedFake struct {
	*fakeExp
	scopes   int
	mu       sync.Mutex
	open     map[string]bool
	maxOpen  int
	released []string
}

func (e *scopedFake) ScratchScope(u Unit) string {
	var i int
	fmt.Sscanf(u.Key()[strings.LastIndex(u.Key(), "=")+1:], "%d", &i)
	return fmt.Sprintf("s%d", i%e.scopes)
}

func (e *scopedFake) ReleaseScratch(scope string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.open, scope)
	e.released = append(e.released, scope)
}

func (e *scopedFake) RunUnit(ctx context.Context, u Unit, env Env) ([]results.Row, error) {
	sc := ScratchScopeOf(ctx)
	if sc != e.ScratchScope(u) {
		return nil, fmt.Errorf("unit %s ran with scope %q", u.Key(), sc)
	}
	e.mu.Lock()
	e.open[sc] = true
	e.maxOpen = max(e.maxOpen, len(e.open))
	e.mu.Unlock()
	return e.fakeExp.RunUnit(ctx, u, env)
}

// TestRun_ScratchScopes: the units run scope by scope whatever their
// order — with one worker one scope is open at a time and each is
// released once, after its last unit; with two, at most three are open
// (two running units' and the latest started) — and rows.csv is byte-identical to the
// unscoped run's: the order units run in changes no result.
func TestRun_ScratchScopes(t *testing.T) {
	plain, err := Run(context.Background(), newFake(24), Options{OutDir: t.TempDir(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1, 2} {
		e := &scopedFake{fakeExp: newFake(24), scopes: 4, open: map[string]bool{}}
		dir, err := Run(context.Background(), e, Options{OutDir: t.TempDir(), Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(readFile(t, filepath.Join(dir, "rows.csv")), readFile(t, filepath.Join(plain, "rows.csv"))) {
			t.Errorf("workers=%d: rows.csv differs from the unscoped run's", w)
		}
		if slices.Sort(e.released); !slices.Equal(e.released, []string{"s0", "s1", "s2", "s3"}) {
			t.Errorf("workers=%d: released %v, want each of the 4 scopes once", w, e.released)
		}
		// Open: the scopes of the w running units, and the one whose
		// units have started but not all (the latest, as they run in
		// scope order); with one worker that is the running unit's.
		limit := w + 1
		if w == 1 {
			limit = 1
		}
		if e.maxOpen > limit {
			t.Errorf("workers=%d: %d scopes open at once, want at most %d", w, e.maxOpen, limit)
		}
	}
}
