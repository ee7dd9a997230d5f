package expostsweep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/noisered"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/runner"
)

// The test binary doubles as a hypothesis worker: with DPREPRO_FAKE_HYP
// set it speaks the protocol in the mode named there instead of running
// tests (as methods/external/pool_test.go does for learners).
func TestMain(m *testing.M) {
	if mode := os.Getenv("DPREPRO_FAKE_HYP"); mode != "" {
		os.Exit(fakeHypWorker(mode))
	}
	os.Exit(m.Run())
}

// fakeHypWorker is a deterministic hypothesis generator: θ = s·u with u
// the unit vector (1, …, 1)/√d and s a fraction of params.radius that
// depends on the seed and, for a sequence, shrinks towards the last level
// (so the excess risk changes along the sequence). It checks that x.npy is
// n×d. The sequence claims ε_T, an independent release twice its ε (so a
// test sees that the claim, not the level, is booked). mode bends it to
// each fault.
func fakeHypWorker(mode string) int {
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
	form, tasks := "pure", []string{"logistic"}
	switch mode {
	case "approx":
		form = "approx"
	case "ridgeonly":
		tasks = []string{"ridge"}
	case "notasks":
		tasks = nil
	}
	attrs := map[string]any{}
	if tasks != nil {
		attrs["tasks"] = tasks
	}
	if mode == "params" {
		// One declared parameter: the hypotheses' scale (default 1).
		attrs["params"] = []any{map[string]any{"name": "scale", "type": "float", "default": 1.0}}
	}
	send(map[string]any{"type": "hello", "protocol": 1, "serves": "hypothesis", "privacy": form, "attributes": attrs})
	for in.Scan() {
		var req struct {
			ID     uint64
			Op     string
			Seed   uint64
			Params struct {
				N, D         int
				Radius       float64
				Epsilons     []float64
				Epsilon      float64
				MethodParams struct{ Scale *float64 } `json:"method_params"`
			}
			Data map[string]string
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return 2
		}
		fail := func(msg string) { send(map[string]any{"type": "error", "id": req.ID, "message": msg}) }
		f, err := os.Open(req.Data["x"])
		if err != nil {
			fail(err.Error())
			continue
		}
		var x mat.Dense
		err = npy.Read(f, &x)
		f.Close()
		if r, c := x.Dims(); err != nil || r != req.Params.N || c != req.Params.D {
			fail(fmt.Sprintf("x.npy: %v, %d×%d for n = %d, d = %d", err, r, c, req.Params.N, req.Params.D))
			continue
		}
		d := req.Params.D
		s := 0.05 + 0.4*float64(req.Seed%1000)/1000
		if mode == "params" {
			if req.Params.MethodParams.Scale == nil {
				fail("no method_params.scale in the call")
				continue
			}
			s *= *req.Params.MethodParams.Scale
		}
		theta := func(scale float64) []float64 {
			th := make([]float64, d)
			for j := range th {
				th[j] = scale * req.Params.Radius / math.Sqrt(float64(d))
			}
			return th
		}
		var output, claim map[string]any
		switch req.Op {
		case "sequence":
			eps := req.Params.Epsilons
			T := len(eps)
			thetas := make([][]float64, T)
			for t := range thetas {
				thetas[t] = theta(s * float64(T-t) / float64(T))
			}
			last := eps[T-1]
			switch mode {
			case "short":
				thetas = thetas[1:]
			case "dim":
				thetas[3] = append(thetas[3], 0)
			case "norm":
				thetas[0] = theta(1.5)
			case "claim":
				last = eps[0]
			}
			output, claim = map[string]any{"thetas": thetas}, map[string]any{"epsilon": last}
			if mode == "extra" {
				output["note"] = "a misspelt or unknown key"
			}
		case "independent":
			claimed := 2 * req.Params.Epsilon
			if mode == "hundredth" {
				claimed = req.Params.Epsilon / 100
			}
			output, claim = map[string]any{"theta": theta(s)}, map[string]any{"epsilon": claimed}
		default:
			fail("unknown op " + req.Op)
			continue
		}
		if mode == "huge" && req.Op == "sequence" {
			// 1e999 is valid JSON but no float64: a careless worker's
			// overflow.
			fmt.Fprintf(out, `{"type":"result","id":%d,"output":{"thetas":[[1e999]]},"privacy":{"epsilon":1}}`+"\n", req.ID)
			out.Flush()
			continue
		}
		send(map[string]any{"type": "result", "id": req.ID, "output": output, "privacy": claim})
	}
	return 0
}

// extSpec is a logistic sweep on the Magic stand-in whose generator is the
// fake worker; the built-in output perturbation runs beside it and sets
// the grid. The large α let the fake's hypotheses pass.
const extSpec = `schema = 1
id = "af-ext"
kind = "expost-sweep"
seed = 5

[[methods]]
name = "fake-hyp"
serves = "hypothesis"
command = [EXE]
timeout = "20s"

[data]
datasets = ["magic"]
synthetic = "always"
column_scale = "none"
intercept = false
row_norm = "l1-max"
subsample = 400

[accuracy_first]
task = "logistic"
generator = "fake-hyp"
grid_generator = "output"
calibration = "paper"
lambda = 0.01
gamma = 0.1
steps = 20
alphas = [0.3, 1.0]
trials = 3
methods = ["noise-reduction", "doubling", "noise-reduction-output"]

[output]
bootstrap = 100
`

// fakeSpec returns extSpec running the test binary as the worker in mode,
// with the replacements of r applied.
func fakeSpec(t *testing.T, mode string, r ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DPREPRO_FAKE_HYP", mode)
	src := strings.Replace(extSpec, "EXE", fmt.Sprintf("%q", exe), 1)
	return strings.NewReplacer(r...).Replace(src)
}

func parseSpec(src string) (*experiments.Spec, error) {
	return experiments.Parse("spec.toml", []byte(src), "", testKinds)
}

// TestExternalGenerator_Validate checks the spec errors of external
// generators, each with its file:line.
func TestExternalGenerator_Validate(t *testing.T) {
	tests := []struct {
		name string
		r    []string // replacements in fakeSpec
		want string
	}{
		{"no grid generator", []string{`grid_generator = "output"`, ``}, `spec.toml:22: accuracy_first.generator: generator "fake-hyp" has no utility theorem`},
		{"grid generator external", []string{`grid_generator = "output"`, `grid_generator = "fake-hyp"`}, `spec.toml:23: accuracy_first.grid_generator: generator "fake-hyp" has no utility theorem`},
		{"unknown grid generator", []string{`grid_generator = "output"`, `grid_generator = "nope"`}, `spec.toml:23: accuracy_first.grid_generator: unknown generator "nope" (known: `},
		{"theory with external", []string{`"noise-reduction-output"]`, `"theory"]`}, `spec.toml:30: accuracy_first.methods[2]: method "theory" needs a utility theorem, and generator "fake-hyp" has none`},
		{"theory suffix external", []string{`"noise-reduction-output"]`, `"theory-fake-hyp"]`}, `spec.toml:30: accuracy_first.methods[2]: method "theory-fake-hyp" needs a utility theorem`},
		{"unknown suffix", []string{`"noise-reduction-output"]`, `"doubling-nope"]`}, `spec.toml:30: accuracy_first.methods[2]: method "doubling-nope": unknown generator "nope" (known: covariance,`},
		{"shadows a built-in", []string{`name = "fake-hyp"`, `name = "output"`}, `spec.toml:7: methods[0].name: "output" is the name of a registered hypothesis method`},
		{"serves a learner", []string{`serves = "hypothesis"`, `serves = "learner"`}, `spec.toml:8: methods[0].serves: a expost-sweep spec runs external methods serving hypothesis, not "learner"`},
		{"unknown generator lists external", []string{`generator = "fake-hyp"`, `generator = "fake-hop"`}, `output, fake-hyp)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseSpec(fakeSpec(t, "ok", tt.r...))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant it to contain %q", err, tt.want)
			}
		})
	}
	// Validation does not start the worker: the spec passes with a worker
	// whose handshake New refuses.
	if _, err := parseSpec(fakeSpec(t, "approx")); err != nil {
		t.Fatal(err)
	}
}

// loadExt parses src and builds the experiment (shaking hands with the
// fake worker).
func loadExt(t *testing.T, src string) (*Experiment, error) {
	t.Helper()
	s, err := parseSpec(src)
	if err != nil {
		t.Fatal(err)
	}
	return New(s, Options{})
}

// TestExternalGenerator_Run runs the fake generator beside the built-in
// one: the rows are identical for 1 and 3 workers (seeds come from the
// units' streams), noise reduction books the grid level εₜ of its stop
// (the sequence's claim is ε_T, the prefix is trusted), doubling books
// the independent releases' claims (2ε each, not the levels), and the
// ledger says whose word the guarantees are.
func TestExternalGenerator_Run(t *testing.T) {
	src := fakeSpec(t, "ok")
	e1, err := loadExt(t, src)
	if err != nil {
		t.Fatal(err)
	}
	rows1, sum1, dir := run(t, e1, 1)
	e3, err := loadExt(t, src)
	if err != nil {
		t.Fatal(err)
	}
	rows3, sum3, _ := run(t, e3, 3)
	if !bytes.Equal(rows1, rows3) || !bytes.Equal(sum1, sum3) {
		t.Fatal("outputs differ between 1 and 3 workers")
	}
	rows := parseRows(t, rows1)
	if len(rows) != 3*2*3 {
		t.Fatalf("%d rows", len(rows))
	}
	succ := map[string]int{}
	for _, r := range rows {
		if r["generator"] != "fake-hyp" {
			t.Errorf("%s: generator column %q", r["unit"], r["generator"])
		}
		if r["success_rate"] != "1" {
			continue
		}
		succ[r["method"]]++
		if r.Float("norm") > r.Float("norm_bound")*(1+1e-9) {
			t.Errorf("%s: ‖θ‖ = %v > %v", r["unit"], r.Float("norm"), r.Float("norm_bound"))
		}
		hyp, stop := r.Float("hypothesis_eps"), int(r.Float("stop"))
		switch r["method"] {
		case "noise-reduction", "noise-reduction-output":
			grid, err := noisered.Geometric(r.Float("eps_min"), r.Float("eps_max"), 20)
			if err != nil {
				t.Fatal(err)
			}
			if hyp != grid[stop-1] {
				t.Errorf("%s: hypothesis ε %v, want the grid's ε_%d = %v", r["unit"], hyp, stop, grid[stop-1])
			}
		case "doubling":
			// Levels ε_min·2^k, each claimed at 2ε: Σ = 2ε_min(2^stop − 1).
			want := 2 * r.Float("eps_min") * (math.Exp2(float64(stop)) - 1)
			if math.Abs(hyp-want) > 1e-12*want {
				t.Errorf("%s: hypothesis ε %v, want the claims' sum %v", r["unit"], hyp, want)
			}
			if note := fmt.Sprintf("(%d of %d releases over their level)", stop, stop); !strings.HasPrefix(r["status"], "warning: generator fake-hyp returned ε=") || !strings.HasSuffix(r["status"], note) {
				t.Errorf("%s: status %q does not flag the claims over their level", r["unit"], r["status"])
			}
		}
	}
	for _, m := range []string{"noise-reduction", "doubling", "noise-reduction-output"} {
		if succ[m] == 0 {
			t.Errorf("method %s: no trial succeeded", m)
		}
	}
	man, err := os.ReadFile(dir + "/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"guarantee declared by the external method fake-hyp",
		"the prefix property (θ¹…θᵗ is εₜ-DP) is declared by fake-hyp, not checked",
	} {
		if !bytes.Contains(man, []byte(want)) {
			t.Errorf("manifest lacks %q", want)
		}
	}
	// The built-in's ledger entries do not claim the method's word.
	var m struct {
		Ledger []struct {
			Method     string
			Components []struct{ Release string }
		} `json:"privacy_ledger"`
	}
	if err := json.Unmarshal(man, &m); err != nil {
		t.Fatal(err)
	}
	for _, le := range m.Ledger {
		declared := strings.Contains(le.Components[0].Release, "declared")
		if declared != (le.Method != "noise-reduction-output") {
			t.Errorf("ledger entry of %s: generating release %q", le.Method, le.Components[0].Release)
		}
	}
}

// TestExternalGenerator_UnderClaim: an external generator whose
// independent releases claim ε/100 of the ε they were asked for is booked
// at the levels asked, Σ ε_min·2^k = ε_min(2^stop − 1), not at its
// claims, and flagged in the status and the manifest's warnings; the
// ledger's generating charge shows the claim and names the method.
func TestExternalGenerator_UnderClaim(t *testing.T) {
	e, err := loadExt(t, fakeSpec(t, "hundredth", `methods = ["noise-reduction", "doubling", "noise-reduction-output"]`, `methods = ["doubling"]`))
	if err != nil {
		t.Fatal(err)
	}
	rowsCSV, _, dir := run(t, e, 2)
	for _, r := range parseRows(t, rowsCSV) {
		if r["success_rate"] != "1" {
			continue
		}
		stop := int(r.Float("stop"))
		want := r.Float("eps_min") * (math.Exp2(float64(stop)) - 1)
		if hyp := r.Float("hypothesis_eps"); math.Abs(hyp-want) > 1e-12*want {
			t.Errorf("%s: hypothesis ε %v, want the levels' sum %v", r["unit"], hyp, want)
		}
		if note := fmt.Sprintf("(%d of %d releases below their level)", stop, stop); !strings.HasPrefix(r["status"], "warning: generator fake-hyp returned ε=") || !strings.HasSuffix(r["status"], note) {
			t.Errorf("%s: status %q", r["unit"], r["status"])
		}
	}
	man, err := os.ReadFile(dir + "/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"method doubling: 6 of 6 trials have releases below their level, e.g. generator fake-hyp returned ε=`,
		`"declared_by": "fake-hyp"`,
		`; booked at the level"`,
	} {
		if !bytes.Contains(man, []byte(want)) {
			t.Errorf("manifest lacks %s", want)
		}
	}
}

// TestExternalGenerator_Faults checks the handshakes New refuses and the
// outputs that fail a unit with an output fault.
func TestExternalGenerator_Faults(t *testing.T) {
	tests := []struct {
		mode   string
		atNew  bool
		unit   string // the unit run (atNew false)
		want   string
		output bool // an external.FaultOutput
	}{
		{mode: "approx", atNew: true, want: `declares the "approx" privacy form`},
		{mode: "notasks", atNew: true, want: `attributes must list the tasks`},
		{mode: "ridgeonly", atNew: true, want: `accuracy_first.generator: generator "fake-hyp" is defined for task ridge only, not for "logistic"`},
		{mode: "short", unit: "noise-reduction", want: "the output has 19 hypotheses for T = 20 levels", output: true},
		{mode: "dim", unit: "noise-reduction", want: "thetas[3] has 11 coordinates for d = 10", output: true},
		{mode: "huge", unit: "noise-reduction", want: "cannot unmarshal number 1e999", output: true},
		{mode: "extra", unit: "noise-reduction", want: `the output must be {"thetas": [T lists of d numbers]}: json: unknown field "note"`, output: true},
		{mode: "norm", unit: "noise-reduction", want: "thetas[0] has norm", output: true},
		{mode: "claim", unit: "noise-reduction", want: `a noise-reduction sequence claims {"epsilon": ε_T}`, output: true},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			e, err := loadExt(t, fakeSpec(t, tt.mode))
			if tt.atNew {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("New: %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			_, err = runner.RunKey(context.Background(), e, "magic/"+tt.unit+"/alpha=1/trial=1")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("unit: %v, want %q", err, tt.want)
			}
			var f *external.Fault
			if tt.output && (!errors.As(err, &f) || f.Kind != external.FaultOutput) {
				t.Errorf("error %v is not an output fault", err)
			}
		})
	}
}

// TestExternalGenerator_Params: a generator worker that declares a
// parameter gets its value in every call (params.method_params), set by
// the spec's [methods.params] (a list is refused: one setting per
// generator); a changed value is part of the identity of the units that
// call it, so the rerun recomputes them (saying so) instead of resuming
// stale rows, and leaves the built-in generator's units resumed.
func TestExternalGenerator_Params(t *testing.T) {
	out := t.TempDir()
	run := func(scale string) (string, []byte) {
		t.Helper()
		src := fakeSpec(t, "params", "timeout = \"20s\"\n", "timeout = \"20s\"\n[methods.params]\nscale = "+scale+"\n")
		s, err := parseSpec(src)
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: out, Workers: 2, Stderr: &stderr})
		if err != nil {
			t.Fatalf("scale %s: %v\n%s", scale, err, stderr.String())
		}
		rows, err := os.ReadFile(dir + "/rows.csv")
		if err != nil {
			t.Fatal(err)
		}
		return stderr.String(), rows
	}
	_, rows1 := run("1.0")
	stderr, rows2 := run("0.5")
	if !strings.Contains(stderr, "recomputing the units whose inputs changed") || !strings.Contains(stderr, "method noise-reduction changed (6 units)") ||
		!strings.Contains(stderr, "method doubling changed (6 units)") || strings.Contains(stderr, "noise-reduction-output changed") {
		t.Errorf("scale changed: stderr does not say that fake-hyp's units (and only those) are recomputed:\n%s", stderr)
	}
	if string(rows1) == string(rows2) {
		t.Error("the rows did not change with the generator's scale")
	}
	s, err := parseSpec(fakeSpec(t, "params", "timeout = \"20s\"\n", "timeout = \"20s\"\n[methods.params]\nscale = [0.5, 1.0]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(s, Options{}); err == nil || !strings.Contains(err.Error(), "methods[0].params: lists expand into variants for learners only") {
		t.Errorf("a list for a generator: err %v, want it refused", err)
	}
}
