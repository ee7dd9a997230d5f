package generators

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/external"
)

// The test binary doubles as a hypothesis worker: with DPREPRO_FAKE_GEN
// set it speaks the protocol in the mode named there instead of running
// tests (as methods/external/pool_test.go does for learners).
func TestMain(m *testing.M) {
	if mode := os.Getenv("DPREPRO_FAKE_GEN"); mode != "" {
		os.Exit(fakeGenWorker(mode))
	}
	os.Exit(m.Run())
}

// seedScale is what the fake encodes a call's seed as: θ₀ = radius·(seed
// mod 1024)/seedScale, so a test can see which seed a call carried.
const seedScale = 4096

// fakeGenWorker is a deterministic hypothesis generator: hypothesis t of
// a sequence of T is radius·(t+1)/(T+1)/√d in every coordinate but the
// first, which carries the seed (seedScale), and an independent release
// is the last of a sequence of one. It checks that x.npy is n×d and y.npy
// has n entries. A sequence claims ε_T, an independent release 2ε. mode
// bends it to each fault.
func fakeGenWorker(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<30)
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	if !in.Scan() {
		return 1
	}
	form, tasks := "pure", []any{"logistic", "ridge", "logistic"}
	switch mode {
	case "approx":
		form = "approx"
	case "notasks":
		tasks = nil
	case "badtask":
		tasks = []any{"logistic", "svm"}
	}
	attrs := map[string]any{}
	if tasks != nil {
		attrs["tasks"] = tasks
	}
	send(map[string]any{"type": "hello", "protocol": 1, "serves": "hypothesis", "privacy": form, "attributes": attrs})
	for in.Scan() {
		var req struct {
			ID     uint64
			Op     string
			Seed   uint64
			Params struct {
				Task, Calibration string
				N, D              int
				Radius, Lambda    float64
				Epsilons          []float64
				Epsilon           float64
			}
			Data map[string]string
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return 2
		}
		p := req.Params
		fail := func(msg string) { send(map[string]any{"type": "error", "id": req.ID, "message": msg}) }
		var x mat.Dense
		var y []float64
		if err := readNPY(req.Data["x"], &x); err != nil {
			fail(err.Error())
			continue
		}
		if err := readNPY(req.Data["y"], &y); err != nil {
			fail(err.Error())
			continue
		}
		if r, c := x.Dims(); r != p.N || c != p.D || len(y) != p.N {
			fail(fmt.Sprintf("x.npy %d×%d, y.npy %d for n = %d, d = %d", r, c, len(y), p.N, p.D))
			continue
		}
		if p.Task != "logistic" || p.Calibration != "paper" {
			fail(fmt.Sprintf("task %q, calibration %q", p.Task, p.Calibration))
			continue
		}
		theta := func(t, T int) []float64 {
			th := make([]float64, p.D)
			for j := range th {
				th[j] = p.Radius * float64(t+1) / float64(T+1) / math.Sqrt(float64(p.D))
			}
			th[0] = p.Radius * float64(req.Seed%1024) / seedScale
			return th
		}
		var output, claim map[string]any
		switch req.Op {
		case "sequence":
			T := len(p.Epsilons)
			thetas := make([][]float64, T)
			for t := range thetas {
				thetas[t] = theta(t, T)
			}
			last := p.Epsilons[T-1]
			switch mode {
			case "short":
				thetas = thetas[1:]
			case "dim":
				thetas[1] = append(thetas[1], 0)
			case "norm":
				thetas[0][1] = 2 * p.Radius
			case "edge": // outside the ball by round-off: rescaled onto it
				thetas[T-1] = make([]float64, p.D)
				thetas[T-1][1] = p.Radius * (1 + 1e-12)
			case "claim":
				last = p.Epsilons[0]
			}
			output, claim = map[string]any{"thetas": thetas}, map[string]any{"epsilon": last}
		case "independent":
			output, claim = map[string]any{"theta": theta(0, 1)}, map[string]any{"epsilon": 2 * p.Epsilon}
		default:
			fail("unknown op " + req.Op)
			continue
		}
		send(map[string]any{"type": "result", "id": req.ID, "output": output, "privacy": claim})
	}
	return 0
}

func readNPY(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return npy.Read(f, v)
}

// stubKinds knows one kind, "gen-test", whose empty section runs
// external methods serving hypothesis: these tests need only a spec's
// [[methods]] tables.
type stubKinds struct{}

type stubSection struct{}

func (*stubSection) Validate(*experiments.Spec, *experiments.Problems) {}
func (*stubSection) Limits(*experiments.Spec) []experiments.Limit      { return nil }
func (*stubSection) Workload(*experiments.Spec) experiments.Workload {
	return experiments.Workload{Units: 1, Rows: 1}
}
func (*stubSection) Serves() []string { return []string{experiments.ServesHypothesis} }

func (stubKinds) Section(kind string) (experiments.Section, bool) {
	return &stubSection{}, kind == "gen-test"
}
func (stubKinds) Names() []string { return []string{"gen-test"} }

// fakeSet returns the external methods of a spec declaring the test
// binary as the worker "fake-gen" in mode, opened on a scratch area.
func fakeSet(t *testing.T, mode string) *external.Set {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DPREPRO_FAKE_GEN", mode)
	src := fmt.Sprintf(`schema = 1
id = "gen-test"
kind = "gen-test"
seed = 1

[[methods]]
name = "fake-gen"
serves = "hypothesis"
command = [%q]
timeout = "20s"

[data]
datasets = ["magic"]
`, exe)
	s, err := experiments.Parse("spec.toml", []byte(src), "", stubKinds{})
	if err != nil {
		t.Fatal(err)
	}
	set := external.NewSet(s)
	if err := set.Open(t.TempDir(), io.Discard); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return set
}

// logisticSetting is a small logistic problem (n = 40, d = 3, rows in the
// unit ball, labels ±1) under the paper's calibration.
func logisticSetting(t *testing.T) (Setting, *mat.Dense, []float64) {
	t.Helper()
	const n, d = 40, 3
	rng := rand.New(rand.NewPCG(7, 7))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		for j := range d {
			x.Set(i, j, (rng.Float64()-0.5)/d)
		}
		y[i] = 1
		if x.At(i, 0)+0.1*rng.NormFloat64() < 0 {
			y[i] = -1
		}
	}
	pr, err := accfirst.NewLogistic(x, y, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	return Setting{Task: TaskLogistic, Problem: pr, Calibration: expost.Paper}, x, y
}

// wantSeed is the seed a call made with a rng seeded (1, 2) carries: the
// first draw of the stream.
func wantSeed() uint64 { return rand.New(rand.NewPCG(1, 2)).Uint64() % external.MaxSeed }

// TestExternal_Calls runs the adapter against the fake worker: the tasks
// of the hello (deduplicated), a refused call on a problem not bound to
// its data, a sequence whose prefix guarantee is εₜ of the levels, and an
// independent release booked as the worker claimed it, each call's seed
// the first draw of the caller's stream.
func TestExternal_Calls(t *testing.T) {
	set := fakeSet(t, "ok")
	g, err := NewExternal(context.Background(), set, "fake-gen")
	if err != nil {
		t.Fatal(err)
	}
	if g.Name() != "fake-gen" || !slices.Equal(g.Tasks(), []Task{TaskLogistic, TaskRidge}) {
		t.Errorf("name %q, tasks %v", g.Name(), g.Tasks())
	}
	if DeclaredBy(g) != "fake-gen" {
		t.Errorf("DeclaredBy = %q, want fake-gen", DeclaredBy(g))
	}
	s, x, y := logisticSetting(t)
	eps := []float64{0.1, 0.2, 0.4}
	if _, err := g.Sequence(context.Background(), rand.New(rand.NewPCG(1, 2)), s, eps); err == nil || !strings.Contains(err.Error(), "not bound to its data") {
		t.Fatalf("unbound problem: %v", err)
	}
	g.Bind(s.Problem, "dataset0", x, y)
	pr := s.Problem
	r, d := pr.Radius(), pr.P()
	theta0 := r * float64(wantSeed()%1024) / seedScale

	seq, err := g.Sequence(context.Background(), rand.New(rand.NewPCG(1, 2)), s, eps)
	if err != nil {
		t.Fatal(err)
	}
	if seq.Len() != len(eps) {
		t.Errorf("Len %d, want %d", seq.Len(), len(eps))
	}
	for i := range eps {
		h, ok, err := seq.Next()
		if err != nil || !ok {
			t.Fatalf("Next %d: %v, %v", i+1, ok, err)
		}
		th, _ := h.Theta()
		want := r * float64(i+1) / float64(len(eps)+1) / math.Sqrt(float64(d))
		if len(th) != d || th[0] != theta0 || th[1] != want {
			t.Errorf("θ%d = %v, want θ₀ = %v (the seed) and %v", i+1, th, theta0, want)
		}
		if e, _ := h.Excess(); e != pr.Excess(th) {
			t.Errorf("θ%d: excess %v, the problem's %v", i+1, e, pr.Excess(th))
		}
		if lo, hi := h.Bounds(); !(lo <= pr.Excess(th) && pr.Excess(th) <= hi) {
			t.Errorf("θ%d: bounds [%v, %v] miss the excess %v", i+1, lo, hi, pr.Excess(th))
		}
		if gu := seq.Guarantee(); gu.Notion != privacy.Pure || gu.Epsilon != eps[i] || !strings.Contains(gu.Covers, "declared by the method fake-gen") {
			t.Errorf("prefix %d: guarantee %+v, want ε = %v declared by the method", i+1, gu, eps[i])
		}
	}
	if _, ok, err := seq.Next(); ok || err != nil {
		t.Errorf("Next past the end: %v, %v", ok, err)
	}

	h, gu, err := g.Independent(context.Background(), rand.New(rand.NewPCG(1, 2)), s, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if th, _ := h.Theta(); len(th) != d || th[0] != theta0 {
		t.Errorf("independent θ = %v, want θ₀ = %v (the seed)", th, theta0)
	}
	if gu.Notion != privacy.Pure || gu.Epsilon != 1 || !strings.Contains(gu.Covers, "declared by the method fake-gen: one hypothesis asked at ε = 0.5") {
		t.Errorf("independent guarantee %+v, want the claim ε = 1, declared", gu)
	}
}

// TestExternal_Rescale: a hypothesis outside the ball by round-off (a
// relative 10⁻¹²) is rescaled onto it.
func TestExternal_Rescale(t *testing.T) {
	g, err := NewExternal(context.Background(), fakeSet(t, "edge"), "fake-gen")
	if err != nil {
		t.Fatal(err)
	}
	s, x, y := logisticSetting(t)
	g.Bind(s.Problem, "dataset0", x, y)
	eps := []float64{0.1, 0.2}
	seq, err := g.Sequence(context.Background(), rand.New(rand.NewPCG(1, 2)), s, eps)
	if err != nil {
		t.Fatal(err)
	}
	var th []float64
	for range eps {
		h, _, err := seq.Next()
		if err != nil {
			t.Fatal(err)
		}
		th, _ = h.Theta()
	}
	if nrm := floats.Norm(th, 2); nrm > s.Problem.Radius() {
		t.Errorf("‖θ‖ = %v > %v after rescaling", nrm, s.Problem.Radius())
	}
}

// TestExternal_Faults checks the handshakes NewExternal refuses and the
// replies that are output faults.
func TestExternal_Faults(t *testing.T) {
	tests := []struct {
		mode  string
		atNew bool
		want  string
	}{
		{mode: "approx", atNew: true, want: `external generator fake-gen declares the "approx" privacy form`},
		{mode: "notasks", atNew: true, want: `external generator fake-gen: the hello's attributes must list the tasks`},
		{mode: "badtask", atNew: true, want: `external generator fake-gen: the hello declares unknown task svm (known: logistic, ridge)`},
		{mode: "short", want: "the output has 2 hypotheses for T = 3 levels"},
		{mode: "dim", want: "thetas[1] has 4 coordinates for d = 3"},
		{mode: "norm", want: "thetas[0] has norm"},
		{mode: "claim", want: `the sequence claims ε = 0.1; a noise-reduction sequence claims {"epsilon": ε_T} = 0.4`},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			g, err := NewExternal(context.Background(), fakeSet(t, tt.mode), "fake-gen")
			if tt.atNew {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("NewExternal: %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s, x, y := logisticSetting(t)
			g.Bind(s.Problem, "dataset0", x, y)
			_, err = g.Sequence(context.Background(), rand.New(rand.NewPCG(1, 2)), s, []float64{0.1, 0.2, 0.4})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Sequence: %v, want %q", err, tt.want)
			}
			var f *external.Fault
			if !errors.As(err, &f) || f.Kind != external.FaultOutput {
				t.Errorf("error %v is not an output fault", err)
			}
		})
	}
}
