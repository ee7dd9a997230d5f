package cicoverage

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
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// The test binary doubles as a ci worker: run as "<binary> fake-ci-worker
// <mode>" it speaks the protocol (fakeCIWorker) instead of running tests.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "fake-ci-worker" {
		os.Exit(fakeCIWorker(os.Args[2]))
	}
	os.Exit(m.Run())
}

// fakeCIWorker is a ci worker whose θ̃ is the replicate's weighted column
// mean (1/n)Σᵢ wᵢxᵢ, computed from x.npy and the weights (so a test sees
// that the records and counts arrived), with the interval θ̃ ± 1000, which
// always covers θ₀ (see halfWidth). It claims exactly the declared cost.
// mode bends it:
//
//	seeded    θ̃ shifted and the interval widened by amounts drawn from the seed
//	zcdp      declares "zcdp" and claims ρ = Σ εᵢ²/2
//	approx    declares "approx" (refused)
//	nomodel, noeps1, badattr   hellos with bad attributes
//	shape     one lo too few (an estimate: one θ too few)
//	lohi      lo and hi swapped
//	claim     an interval claims ε₁ alone
//	nostatus, okbare, extrakey  outputs without status, "ok" without lo and hi, an unknown key
//	refuse    no interval, status "budget too small"
func fakeCIWorker(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<30)
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake ci worker:", err)
		}
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	if !in.Scan() {
		return 1
	}
	form := "pure"
	attrs := map[string]any{"model": "lr", "spends": []string{"eps1", "eps2", "eps3"}, "perturbation": "fake-ext", "perturbation_label": "fake (external)"}
	switch mode {
	case "zcdp":
		form = "zcdp"
	case "approx":
		form = "approx"
	case "nomodel":
		delete(attrs, "model")
	case "noeps1":
		attrs["spends"] = []string{"eps2", "eps3"}
	case "badattr":
		attrs["colour"] = "red"
	}
	send(map[string]any{"type": "hello", "protocol": 1, "serves": "ci", "privacy": form, "version": "fake-ci-1", "attributes": attrs})
	matrices := map[string]*mat.Dense{}
	load := func(path string) (*mat.Dense, error) {
		if m, ok := matrices[path]; ok {
			return m, nil
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var m mat.Dense
		if err := npy.Read(f, &m); err != nil {
			return nil, err
		}
		matrices[path] = &m
		return &m, nil
	}
	for in.Scan() {
		var req struct {
			ID     uint64
			Op     string
			Seed   uint64
			Params struct {
				Eps1, Eps2, Eps3, Alpha, C, H float64
				M, N                          int
				Model                         string
			}
			Data    map[string]string
			Weights []int32
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "bad request:", err)
			return 2
		}
		fail := func(format string, args ...any) {
			send(map[string]any{"type": "error", "id": req.ID, "message": fmt.Sprintf(format, args...)})
		}
		x, err := load(req.Data["x"])
		if err != nil {
			fail("%v", err)
			continue
		}
		rows, cols := x.Dims()
		sum := 0
		for _, w := range req.Weights {
			sum += int(w)
		}
		if len(req.Weights) != rows || sum != req.Params.N || req.Params.Model != "lr" || req.Params.C <= 0 {
			fail("x has %d rows, %d weights summing to %d, params %+v", rows, len(req.Weights), sum, req.Params)
			continue
		}
		theta := make([]float64, cols)
		for i, w := range req.Weights {
			for j := range theta {
				theta[j] += float64(w) * x.At(i, j)
			}
		}
		half := 1000.0
		for j := range theta {
			theta[j] /= float64(req.Params.N)
			if mode == "seeded" {
				theta[j] += float64(req.Seed%1000) * 1e-6
			}
		}
		if mode == "seeded" {
			half += float64(req.Seed % 7)
		}
		lo, hi := make([]float64, cols), make([]float64, cols)
		for j, v := range theta {
			lo[j], hi[j] = v-half, v+half
		}
		parts := []float64{req.Params.Eps1}
		if req.Op == "interval" && mode != "claim" {
			parts = append(parts, req.Params.Eps2, req.Params.Eps3)
		}
		claim := map[string]float64{}
		for _, e := range parts {
			if form == "zcdp" {
				claim["rho"] += e * e / 2
			} else {
				claim["epsilon"] += e
			}
		}
		o := map[string]any{"theta": theta, "status": "ok"}
		if req.Op == "interval" {
			o["lo"], o["hi"] = lo, hi
		}
		switch mode {
		case "shape":
			if req.Op == "interval" {
				o["lo"] = lo[1:]
			} else {
				o["theta"] = theta[1:]
			}
		case "lohi":
			o["lo"], o["hi"] = hi, lo
		case "nostatus":
			delete(o, "status")
		case "okbare":
			delete(o, "lo")
			delete(o, "hi")
		case "extrakey":
			o["width"] = 2 * half
		case "refuse":
			o = map[string]any{"status": "budget too small"}
		}
		send(map[string]any{"type": "result", "id": req.ID, "output": o, "privacy": claim})
	}
	return 0
}

// fakeSpec is tinySpec with the [[methods]] tables of fake ci workers
// (name → mode) and methods as confidence_intervals.methods.
func fakeSpec(t *testing.T, fakes map[string]string, methods ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var tables strings.Builder
	names := make([]string, 0, len(fakes))
	for name := range fakes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(&tables, "[[methods]]\nname = %q\nserves = \"ci\"\ncommand = [%q, \"fake-ci-worker\", %q]\ntimeout = \"30s\"\n\n", name, exe, fakes[name])
	}
	quoted := make([]string, len(methods))
	for i, m := range methods {
		quoted[i] = fmt.Sprintf("%q", m)
	}
	src := strings.Replace(tinySpec, "[data]", tables.String()+"[data]", 1)
	return strings.Replace(src, `methods = ["dp-obj-lr"]`, "methods = ["+strings.Join(quoted, ", ")+"]", 1)
}

// loadFake loads fakeSpec through spec validation and New.
func loadFake(t *testing.T, fakes map[string]string, methods ...string) (*Experiment, error) {
	t.Helper()
	s, err := experiments.Parse("spec.toml", []byte(fakeSpec(t, fakes, methods...)), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	return New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
}

// TestSection_ExternalNames checks the validation of
// confidence_intervals.methods against the [[methods]] tables: an unknown
// name, an external method shadowing a built-in, and a table serving
// another extension point, each with the file, line and key.
func TestSection_ExternalNames(t *testing.T) {
	const head = `schema = 1
id = "ext"
kind = "ci-coverage"
seed = 1

[[methods]]
name = %q
serves = %q
command = ["python3", "m.py"]

[data]
datasets = ["adult"]
intercept = false

[confidence_intervals]
methods = ["dp-obj-lr", %q]
sweep = "eps1"
values = [0.5]
replicates = 2
mc_samples = 10
vi_fits = 2
`
	cases := []struct {
		name                 string
		table, serves, using string
		want                 []string
	}{
		{"ok", "py-ci", "ci", "py-ci", nil},
		{"unknown", "py-ci", "ci", "py-cj", []string{`spec.toml:16: confidence_intervals.methods[1]: unknown method "py-cj" (known: dp-obj-lr,`, ", py-ci)"}},
		{"shadowing", "dp-output-lr", "ci", "dp-output-lr", []string{`spec.toml:7: methods[0].name: "dp-output-lr" is the name of a registered ci method: an external method may not shadow it`}},
		{"serves mismatch", "py-learner", "learner", "py-learner", []string{
			`spec.toml:8: methods[0].serves: a ci-coverage spec runs external methods serving ci, not "learner"`,
			`spec.toml:16: confidence_intervals.methods[1]: unknown method "py-learner"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := experiments.Parse("spec.toml", []byte(fmt.Sprintf(head, c.table, c.serves, c.using)), "", testKinds)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

// TestExternalMethod_WeightsAreReplicateCounts calls a fake worker on one
// replicate: the weights it receives are counts over the (sub)dataset's
// records that make the same replicate as the kind's weighted distinct
// rows (the worker's weighted column means equal those of Data.Rows), and
// counting per record does not change the draws.
func TestExternalMethod_WeightsAreReplicateCounts(t *testing.T) {
	e, err := loadFake(t, map[string]string{"fake-ci": "ok"}, "fake-ci")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Open(runner.Workspace{Scratch: filepath.Join(t.TempDir(), "scratch"), Log: io.Discard, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m, ok := e.methods[0].(*cimethods.External)
	if !ok {
		t.Fatalf("methods[0] is a %T", e.methods[0])
	}
	if a := m.Attributes(); a.Privacy != "dp" || a.Perturbation != "fake-ext" || a.Model != "lr" || a.PerturbationLabel != "fake (external)" {
		t.Errorf("attributes %+v", a)
	}
	pt := e.points[0]
	plain, counted := newResampler(pt.data, false), newResampler(pt.data, true)
	for rep := 0; rep < 3; rep++ {
		rowsPlain := plain.draw(rand.New(rand.NewPCG(7, uint64(rep))))
		rows := counted.draw(rand.New(rand.NewPCG(7, uint64(rep))))
		if !slices.Equal(plain.counts, counted.counts) {
			t.Fatalf("replicate %d: counting per record changed the draws", rep)
		}
		// The per-record counts merge into the distinct rows' counts.
		merged := make([]int32, len(counted.counts))
		total := 0
		for i, k := range counted.records.Counts {
			merged[pt.data.rec[i]] += k
			total += int(k)
		}
		if !slices.Equal(merged, counted.counts) || total != pt.n || rowsPlain.SumWeights() != float64(pt.n) {
			t.Fatalf("replicate %d: per-record counts (Σ %d) do not merge into the replicate's (n = %d)", rep, total, pt.n)
		}
		d := cimethods.Data{Rows: rows, Records: counted.records, Problem: e.problem(erm.FitOptions{}), Shared: new(cimethods.Shared),
			Streams: streams(func(step string) *rand.Rand { return rand.New(rand.NewPCG(1, uint64(rep))) })}
		rel, err := m.Interval(context.Background(), d, cimethods.Budget{Eps1: 0.5, Eps2: 0.25, Eps3: 0.25})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, rows.D())
		for k := 0; k < rows.N(); k++ {
			cols, vals := rows.Row(k)
			for i, j := range cols {
				want[j] += rows.Weight(k) * vals[i] / rows.SumWeights()
			}
		}
		// The worker sums n = 400 products in another order: agreement to
		// a relative 1e-12 (400 roundings of 2⁻⁵³ each, with margin).
		for j := range want {
			if math.Abs(rel.Theta[j]-want[j]) > 1e-12*(1+math.Abs(want[j])) {
				t.Errorf("replicate %d: θ̃[%d] = %v from the worker's weights, want the replicate's weighted mean %v", rep, j, rel.Theta[j], want[j])
			}
		}
		if rel.Status != "ok" || !rel.Cost.Equal(m.Cost(cimethods.Budget{Eps1: 0.5, Eps2: 0.25, Eps3: 0.25})) || !math.IsNaN(rel.EpsilonPrime) {
			t.Errorf("release status %q, ε′ %v, cost %+v", rel.Status, rel.EpsilonPrime, rel.Cost)
		}
	}
	sc, err := e.Methods.Scratch()
	if err != nil {
		t.Fatal(err)
	}
	// One (sub)dataset, written once: x (400 × 3) and y.
	if files, _ := filepath.Glob(filepath.Join(sc.Dir(), "*.npy")); len(files) != 2 {
		t.Errorf("scratch holds %v, want one x and one y", files)
	}
}

// TestExternalMethod_Faults checks what the kind refuses of a worker: bad
// hellos when the experiment is built, and per call outputs of the wrong
// shape or a claim other than the declared cost, each failing its unit
// with a fault of kind "output" naming the method.
func TestExternalMethod_Faults(t *testing.T) {
	hellos := []struct{ mode, want string }{
		{"approx", `external method fake-ci: a ci method must declare privacy "pure" or "zcdp", not "approx"`},
		{"nomodel", `attributes.model is required: "lr" or "svm"`},
		{"noeps1", `attributes.spends must include "eps1"`},
		{"badattr", `unknown attribute "colour"`},
	}
	for _, c := range hellos {
		t.Run("hello "+c.mode, func(t *testing.T) {
			_, err := loadFake(t, map[string]string{"fake-ci": c.mode}, "fake-ci")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	calls := []struct {
		mode string
		vi   bool // the variability-interval unit ("estimate") rather than a coverage unit ("interval")
		want string
	}{
		{"shape", false, "lo has 2 numbers for the d+1 = 3 coefficients"},
		{"shape", true, "theta has 2 numbers for the d+1 = 3 coefficients"},
		{"lohi", false, "lo[0] = "},
		{"claim", false, `claimed ε = 0.5, declared ε = 1 (privacy "pure"; the hello says it spends eps1, eps2, eps3)`},
		{"nostatus", false, `the output has no "status"`},
		{"okbare", false, `status "ok" without an interval`},
		{"extrakey", false, `unknown field "width"`},
	}
	for _, c := range calls {
		t.Run(fmt.Sprintf("%s vi=%v", c.mode, c.vi), func(t *testing.T) {
			e, err := loadFake(t, map[string]string{"fake-ci": c.mode}, "fake-ci")
			if err != nil {
				t.Fatal(err)
			}
			keys := unitKeys(e)
			key := keys[0]
			if c.vi {
				key = keys[len(keys)-1]
			}
			_, err = runner.RunKey(context.Background(), e, key)
			var f *external.Fault
			if !errors.As(err, &f) || f.Kind != external.FaultOutput || f.Method != "fake-ci" {
				t.Fatalf("unit %s: error %v, want an output fault of fake-ci", key, err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "external method fake-ci") {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestExternalMethod_ThroughKind runs fake workers beside a built-in: rows
// are byte-identical at 1 and 2 workers; the built-in's rows are those of
// a run without the fakes (the per-record counts draw nothing more); a
// refused interval is a row with the worker's status; the ledger books
// the declared cost, pure and zCDP, as declared by the method.
func TestExternalMethod_ThroughKind(t *testing.T) {
	fakes := map[string]string{"fake-seeded": "seeded", "fake-zcdp": "zcdp", "fake-refuse": "refuse"}
	e1, err := loadFake(t, fakes, "dp-obj-lr", "fake-seeded", "fake-zcdp", "fake-refuse")
	if err != nil {
		t.Fatal(err)
	}
	rows1, _ := run(t, e1, 1)
	e2, err := loadFake(t, fakes, "dp-obj-lr", "fake-seeded", "fake-zcdp", "fake-refuse")
	if err != nil {
		t.Fatal(err)
	}
	rows2, _ := run(t, e2, 2)
	if string(rows1) != string(rows2) {
		t.Error("rows.csv differs between 1 and 2 workers")
	}
	alone, err := loadFake(t, nil, "dp-obj-lr")
	if err != nil {
		t.Fatal(err)
	}
	rowsAlone, _ := run(t, alone, 1)
	builtin := func(b []byte) []results.Row {
		var out []results.Row
		for _, r := range parseRows(t, b) {
			if r["method"] == "dp-obj-lr" {
				out = append(out, r)
			}
		}
		return out
	}
	if got, want := builtin(rows1), builtin(rowsAlone); len(got) != len(want) || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("dp-obj-lr rows beside the external methods differ from its rows alone:\n%v\n%v", got, want)
	}
	var seeded, refused int
	for _, r := range parseRows(t, rows1) {
		switch {
		case r["method"] == "fake-seeded" && r["row_type"] == "ci":
			seeded++
			// θ̃ ± (1000 + seed mod 7): every coordinate covered.
			if r.Float("coverage") != 1 || r["status"] != "ok" || r["perturbation"] != "fake-ext" || r["privacy"] != "dp" {
				t.Errorf("fake-seeded row %v", r)
			}
		case r["method"] == "fake-refuse" && r["row_type"] == "ci":
			refused++
			if r["status"] != "budget too small" || !math.IsNaN(r.Float("coverage")) {
				t.Errorf("fake-refuse row %v", r)
			}
		}
	}
	if seeded != 3 || refused != 3 {
		t.Errorf("%d fake-seeded and %d fake-refuse CI rows, want 3 each", seeded, refused)
	}

	dir, err := runner.Run(context.Background(), e1, runner.Options{OutDir: t.TempDir(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The tables list the external methods after the registered ones, in
	// the spec's order, labelled by their hellos' attributes.
	table, err := os.ReadFile(filepath.Join(dir, "tables", "coverage.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, line := range strings.Split(strings.TrimSpace(string(table)), "\n")[1:] {
		f := strings.Split(line, ",")
		labels = append(labels, strings.Join(f[:3], "/"))
	}
	if want := []string{"DP/obj/LR", "DP/fake (external)/LR", "zCDP/fake (external)/LR", "DP/fake (external)/LR"}; !slices.Equal(labels, want) {
		t.Errorf("coverage table rows %v, want %v", labels, want)
	}
	// fake-refuse never released an interval: its cells say so, in words,
	// in both tables, and the manifest (and stderr) warns.
	for _, name := range []string{"coverage.csv", "coverage.md", "ci_length.md", "vi_length.md"} {
		b, err := os.ReadFile(filepath.Join(dir, "tables", name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		last := lines[len(lines)-1] // fake-refuse, the last of the spec's external methods
		want := "no interval in 3 of 3 replicates"
		if strings.HasPrefix(name, "vi_length") {
			want = "no variability interval"
		}
		if strings.Count(last, want) != 1 || strings.Contains(last, "NaN") {
			t.Errorf("%s: fake-refuse's row %q, want %q", name, last, want)
		}
	}
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`method fake-refuse never released an interval: no interval in 3 of 3 replicates ("budget too small" ×3); its coverage and CI length are NaN (n = 0) in summary.csv`,
		`method fake-refuse: no variability interval at dataset adult, eps1 = 0.5 ("budget too small"): a private fit returned no θ̃; vi_length is NaN there`,
	} {
		if !slices.Contains(m.Warnings, want) {
			t.Errorf("manifest warnings %q\nlack %q", m.Warnings, want)
		}
	}
	// The tiny spec's budget is (0.5, 0.25, 0.25): pure 0.5 + 0.25 + 0.25 = 1;
	// zCDP (0.25 + 0.0625 + 0.0625)/2 = 0.1875.
	want := map[string]float64{"fake-seeded": 1, "fake-zcdp": 0.1875, "fake-refuse": 1}
	for _, le := range m.Ledger {
		w, ok := want[le.Method]
		if !ok {
			continue
		}
		delete(want, le.Method)
		got := float64(le.Total.Epsilon)
		if le.Total.Rho != nil { // a zCDP total records ρ (its ε is NaN)
			got = float64(*le.Total.Rho)
		}
		if got != w || !le.Total.Private || len(le.Components) != 3 {
			t.Errorf("%s: ledger total %+v with %d parts, want %v", le.Method, le.Total, len(le.Components), w)
		}
		if !strings.HasPrefix(le.Rule, "declared by the method "+le.Method) || !strings.Contains(le.Components[0].Release, "declared by the method") {
			t.Errorf("%s: ledger rule %q, release %q: want them declared by the method", le.Method, le.Rule, le.Components[0].Release)
		}
	}
	if len(want) > 0 {
		t.Errorf("no ledger entries for %v", want)
	}
}

// TestExternalMethod_FaultFailsItsUnitsOnly: an external method computes
// in units of its own, so a reply the harness refuses fails that method's
// units and not the built-in method beside it, whose rows are the same as
// without the external method (and are checkpointed by a run, which
// reports only the external method's units as failed).
func TestExternalMethod_FaultFailsItsUnitsOnly(t *testing.T) {
	e, err := loadFake(t, map[string]string{"fake-ci": "shape"}, "dp-obj-lr", "fake-ci")
	if err != nil {
		t.Fatal(err)
	}
	alone, err := loadFake(t, nil, "dp-obj-lr")
	if err != nil {
		t.Fatal(err)
	}
	var own, failed int
	for _, key := range unitKeys(e) {
		rows, err := runner.RunKey(context.Background(), e, key)
		if strings.HasSuffix(key, "/fake-ci") {
			own++
			var f *external.Fault
			if !errors.As(err, &f) || f.Method != "fake-ci" {
				t.Errorf("unit %s: error %v, want a fault of fake-ci", key, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("unit %s of the built-in: %v", key, err)
			continue
		}
		want, err := runner.RunKey(context.Background(), alone, key)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(rows) != fmt.Sprint(want) {
			t.Errorf("unit %s: rows beside the external method differ from the built-in's alone", key)
		}
	}
	if own != 2 { // one coverage block and one VI unit
		t.Errorf("%d units of fake-ci, want 2", own)
	}
	_, err = runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 2})
	if err == nil {
		t.Fatal("a run with a faulty external method succeeded")
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.HasPrefix(line, "unit ") {
			failed++
			if !strings.Contains(line, "/fake-ci: ") {
				t.Errorf("failed unit line %q is not one of fake-ci's", line)
			}
		}
	}
	if failed != own || !strings.Contains(err.Error(), "2 of 4 units failed (the others are checkpointed") {
		t.Errorf("run error %v: want fake-ci's 2 of 4 units failed, the built-in's checkpointed", err)
	}
}

// TestVI_ExternalUnitsPerEpsOne checks the VI layout of an ε₁ sweep with an
// external method: the built-in methods' VI is one unit per model serving
// every ε₁ (their fits share the replicate and θ̂), the external method's a
// unit per ε₁ (its fits share nothing, and units per ε₁ run side by side
// on its workers).
func TestVI_ExternalUnitsPerEpsOne(t *testing.T) {
	src := strings.Replace(fakeSpec(t, map[string]string{"fake-seeded": "seeded"}, "dp-obj-lr", "fake-seeded"), "values = [0.5]", "values = [0.5, 1]", 1)
	e := load(t, src)
	defer e.Close()
	var vi []string
	for _, k := range e.units {
		if e.byKey[k].vi {
			vi = append(vi, fmt.Sprintf("%s %v", k, e.byKey[k].eps1s))
		}
	}
	want := []string{
		"adult/vi/n=400,d=2/lr [0.5 1]",
		"adult/vi/n=400,d=2,eps1=0.5/lr/fake-seeded [0.5]",
		"adult/vi/n=400,d=2,eps1=1/lr/fake-seeded [1]",
	}
	if !slices.Equal(vi, want) {
		t.Errorf("VI units %q, want %q", vi, want)
	}
}
