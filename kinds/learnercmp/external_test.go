package learnercmp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// The test binary doubles as a learner worker: run as "EXE fake-learner
// RECORD" it speaks the protocol instead of running tests.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "fake-learner" {
		os.Exit(fakeLearnerWorker(os.Args[2]))
	}
	if len(os.Args) == 2 && os.Args[1] == "fake-learner-zcdp" {
		os.Exit(fakeZCDPHello())
	}
	if len(os.Args) == 3 && os.Args[1] == "fake-learner-stability" {
		os.Exit(fakeStabilityWorker(os.Args[2]))
	}
	if len(os.Args) == 3 && os.Args[1] == "fake-learner-params" {
		os.Exit(fakeParamsWorker(os.Args[2]))
	}
	if len(os.Args) == 3 && os.Args[1] == "fake-learner-diag" {
		os.Exit(fakeDiagWorker(os.Args[2]))
	}
	if len(os.Args) == 3 && os.Args[1] == "fake-learner-mech" {
		os.Exit(fakeMechWorker(os.Args[2]))
	}
	os.Exit(m.Run())
}

// fakeLearnerWorker is an external learner that releases the zero model
// (d weights 0) and claims twice the ε it was asked for, appending each
// call's params (one JSON object a line) to the file record.
func fakeLearnerWorker(record string) int {
	rec, err := os.OpenFile(record, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 1
	}
	defer rec.Close()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<24)
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
	send(map[string]any{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure"})
	for in.Scan() {
		var req struct {
			ID     uint64          `json:"id"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return 2
		}
		fmt.Fprintf(rec, "%s\n", req.Params)
		var p struct {
			Epsilon float64 `json:"epsilon"`
			D       int     `json:"d"`
		}
		json.Unmarshal(req.Params, &p)
		send(map[string]any{"type": "result", "id": req.ID, "output": map[string]any{"weights": make([]float64, p.D)},
			"privacy": map[string]any{"epsilon": 2 * p.Epsilon}})
	}
	return 0
}

// fakeDiagWorker is an external learner whose hello declares the
// diagnostics iterations and clip_fraction; each fit releases the zero
// model at the ε asked for and reports iterations = 7 and clip_fraction =
// ε (null for ε > 1). mode "extra" also reports an undeclared one,
// "missing" leaves clip_fraction out.
func fakeDiagWorker(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<24)
	if !in.Scan() {
		return 1
	}
	fmt.Println(`{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure", "attributes": {"diagnostics": ["iterations", "clip_fraction"]}}`)
	for in.Scan() {
		var req struct {
			ID     uint64 `json:"id"`
			Params struct {
				Epsilon float64 `json:"epsilon"`
				D       int     `json:"d"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return 2
		}
		diag := map[string]any{"iterations": 7, "clip_fraction": req.Params.Epsilon}
		if req.Params.Epsilon > 1 {
			diag["clip_fraction"] = nil
		}
		switch mode {
		case "extra":
			diag["loss"] = 0.5
		case "missing":
			delete(diag, "clip_fraction")
		}
		b, _ := json.Marshal(map[string]any{"type": "result", "id": req.ID,
			"output":  map[string]any{"weights": make([]float64, req.Params.D), "diagnostics": diag},
			"privacy": map[string]any{"epsilon": req.Params.Epsilon}})
		fmt.Println(string(b))
	}
	return 0
}

// TestExternalLearner_Diagnostics: a worker that declares diagnostics in
// its hello gets a rows.csv column diag_<name> for each, filled in its
// rows from each fit's reply (null: NaN) and empty in the other
// learners' rows; a reply with an undeclared diagnostic, or without a
// declared one, fails the unit naming the method and the name.
func TestExternalLearner_Diagnostics(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec := func(mode string) string {
		return strings.Replace(extSpec(t, t.TempDir()+"/params.jsonl"), fmt.Sprintf("command = [%q, \"fake-learner\",", exe),
			fmt.Sprintf("command = [%q, \"fake-learner-diag\", %q] #", exe, mode), 1)
	}
	e := load(t, spec("ok"))
	if cols := e.Columns(); !slices.Equal(cols[len(cols)-2:], []string{"diag_clip_fraction", "diag_iterations"}) {
		t.Errorf("columns end %v, want the two diagnostics", cols[len(cols)-2:])
	}
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 2, Stderr: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range readRows(t, dir+"/rows.csv") {
		switch r["learner"] {
		case "fake-ext":
			n++
			want := r["epsilon"]
			if r.Float("epsilon") > 1 {
				want = "NaN"
			}
			if r["diag_iterations"] != "7" || r["diag_clip_fraction"] != want {
				t.Errorf("%s: diagnostics %q %q, want 7 and %s", r["key"], r["diag_iterations"], r["diag_clip_fraction"], want)
			}
		default:
			if r["diag_iterations"] != "" || r["diag_clip_fraction"] != "" {
				t.Errorf("%s: a learner without diagnostics has %q %q", r["key"], r["diag_iterations"], r["diag_clip_fraction"])
			}
		}
	}
	if n != 16 {
		t.Errorf("%d rows of fake-ext, want 16", n)
	}
	for mode, want := range map[string]string{
		"extra":   `the output's diagnostics hold "loss", which the hello does not declare`,
		"missing": `the output's diagnostics lack "clip_fraction", which the hello declares`,
	} {
		e := load(t, spec(mode))
		_, err := runner.RunKey(context.Background(), e, "magic/rep=1/fold=1/fake-ext/epsilon=0.1")
		e.Methods.Close()
		if err == nil || !strings.Contains(err.Error(), "fake-ext") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want it to name fake-ext and say %s", mode, err, want)
		}
	}
}

// fakeZCDPHello is a learner worker whose hello declares ρ-zCDP; it
// answers no call.
func fakeZCDPHello() int {
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() {
		return 1
	}
	fmt.Println(`{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "zcdp"}`)
	for in.Scan() {
	}
	return 0
}

// TestExternalLearner_ZCDPAcceptedAtLoad: learner-comparison states a
// ρ-zCDP claim as (ε, δ) at comparison.delta, so an external learner
// declaring ρ-zCDP loads when comparison.delta > 0, and is refused at
// load, at its comparison.learners entry, when it is 0.
func TestExternalLearner_ZCDPAcceptedAtLoad(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := extSpec(t, t.TempDir()+"/params.jsonl")
	src = strings.Replace(src, fmt.Sprintf("command = [%q, \"fake-learner\",", exe), fmt.Sprintf("command = [%q, \"fake-learner-zcdp\"] #", exe), 1)
	_, err = New(parse(t, src), runner.DataOptions{DataDir: os.Getenv("DPREPRO_DATA")})
	if err == nil || !strings.Contains(err.Error(), "comparison.learners[1]: learner fake-ext declares ρ-zCDP") || !strings.Contains(err.Error(), "set comparison.delta > 0") {
		t.Errorf("New with comparison.delta = 0: %v, want the zCDP learner refused at load", err)
	}
	e, err := New(parse(t, strings.Replace(src, "lambda = 0.01", "lambda = 0.01\ndelta = 1e-5", 1)), runner.DataOptions{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		t.Fatalf("New: %v, want the zCDP learner accepted", err)
	}
	e.Methods.Close()
}

// extSpec is smallSpec with the fake worker as the external learner
// fake-ext beside output perturbation.
func extSpec(t *testing.T, record string, r ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(smallSpec, `learners = ["objective-perturbation", "output-perturbation"]`, `learners = ["output-perturbation", "fake-ext"]`, 1)
	src = strings.Replace(src, "[data]\n", fmt.Sprintf("[[methods]]\nname = \"fake-ext\"\nserves = \"learner\"\ncommand = [%q, \"fake-learner\", %q]\ntimeout = \"20s\"\n\n[data]\n", exe, record), 1)
	return strings.NewReplacer(r...).Replace(src)
}

// recorded returns the params of the calls the fake worker recorded.
func recorded(t *testing.T, record string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var p map[string]any
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("recorded params %q: %v", l, err)
		}
		out = append(out, p)
	}
	return out
}

// TestExternalLearner_ParamsLevelAndNoise runs an external learner that
// claims 2ε: each "fit" call carries the spec's loss (with huber_h for
// the Huber loss) and data.row_norm, the preconditions its guarantee may
// need; its rows are flagged as over their level, the manifest warns, and
// the ledger books its claim as declared by the method. With secure noise
// the manifest's noise report says the external method draws its own.
func TestExternalLearner_ParamsLevelAndNoise(t *testing.T) {
	t.Parallel()
	record := t.TempDir() + "/params.jsonl"
	src := extSpec(t, record, "subsample = 600", "subsample = 600\nrow_norm = \"l2-clip\"\naccept_data_dependent_scaling = true",
		"lambda = 0.01", "lambda = 0.01\nloss = \"huber\"\nhuber_h = 0.25", "[output]\n", "[output]\nsecure_noise = true\n")
	e := load(t, src)
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 2, Stderr: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	calls := recorded(t, record)
	if len(calls) != 8*2 {
		t.Fatalf("%d calls, want 16", len(calls))
	}
	for _, p := range calls {
		if p["loss"] != "huber" || p["huber_h"] != 0.25 || p["row_norm"] != "l2-clip" || p["d"] != 11.0 {
			t.Errorf("fit params %v: want loss huber, huber_h 0.25, row_norm l2-clip, d 11", p)
		}
	}
	for _, r := range readRows(t, dir+"/rows.csv") {
		if r["learner"] != "fake-ext" {
			continue
		}
		eps := r.Float("epsilon")
		if want := fmt.Sprintf("warning: learner fake-ext returned ε=%v for a level of ε=%v", 2*eps, eps); r["status"] != want {
			t.Errorf("%s: status %q, want %q", r["key"], r["status"], want)
		}
	}
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(m.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "method fake-ext: 16 of 16 rows have fits over their level, e.g. learner fake-ext returned ε=")
	}) {
		t.Errorf("manifest warnings %q lack fake-ext's fits over their level", m.Warnings)
	}
	declared := 0
	for _, le := range m.Ledger {
		if strings.Contains(le.Components[0].Release, "declared by the method") {
			declared++
			if le.Method != "fake-ext" {
				t.Errorf("ledger entry of %s says its guarantee is declared by the method", le.Method)
			}
		}
	}
	if declared != 2 {
		t.Errorf("%d ledger entries declared by the method, want fake-ext's 2", declared)
	}
	if !m.SecureNoise || !slices.ContainsFunc(m.Noise, func(l string) bool { return strings.HasPrefix(l, "external methods (fake-ext): draw their own noise") }) {
		t.Errorf("noise report %q does not say that fake-ext draws its own noise", m.Noise)
	}

	// The default loss: "logistic", without huber_h; the default row norm.
	record2 := t.TempDir() + "/params.jsonl"
	e = load(t, extSpec(t, record2))
	if _, err := runner.RunKey(context.Background(), e, "magic/rep=1/fold=1/fake-ext/epsilon=0.1"); err != nil {
		t.Fatal(err)
	}
	for _, p := range recorded(t, record2) {
		if _, ok := p["huber_h"]; p["loss"] != "logistic" || ok || p["row_norm"] != "l2-max" {
			t.Errorf("fit params %v: want loss logistic, no huber_h, row_norm l2-max", p)
		}
	}
}

// TestSection_ExternalReference: an external learner cannot be the
// reference, which is handed ε = +Inf (JSON has none); the spec error is
// at comparison.reference's line and says why.
func TestSection_ExternalReference(t *testing.T) {
	t.Parallel()
	src := extSpec(t, t.TempDir()+"/params.jsonl", `learners = ["output-perturbation", "fake-ext"]`, `learners = ["output-perturbation"]`,
		"lambda = 0.01", "lambda = 0.01\nreference = \"fake-ext\"")
	_, err := experiments.Parse("small.toml", []byte(src), "", testKinds)
	const want = `small.toml:24: comparison.reference: learner "fake-ext" is an external method ([[methods]]): the reference is fit at ε = +Inf, which the worker protocol cannot send (JSON has no infinity); name a registered learner (objective-perturbation, output-perturbation, non-private`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant it to contain %s", err, want)
	}
}
