package cicoverage

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"github.com/dprepro/dprepro/internal/stoptest"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// smallSpec is a fast d sweep on the first 1,500 permuted Adult records
// (real when $DPREPRO_DATA holds it, else the labelled stand-in).
const smallSpec = `schema = 1
id = "wkl-small"
kind = "ci-coverage"
seed = 11

[data]
datasets = ["adult"]
intercept = false

[confidence_intervals]
methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-svm", "zcdp-output-svm"]
n1 = 1500
sweep = "d"
values = [1, 3]
replicates = 6
mc_samples = 200
vi_fits = 40
block_size = 4

[output]
bootstrap = 200
`

func load(t *testing.T, src string) *Experiment {
	t.Helper()
	s, err := experiments.Parse("spec.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func run(t *testing.T, e *Experiment, workers int) (rows, summary []byte) {
	t.Helper()
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	rows, err = os.ReadFile(filepath.Join(dir, "rows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	summary, err = os.ReadFile(filepath.Join(dir, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	checkTables(t, dir, e)
	return rows, summary
}

// checkTables checks the paper-layout tables: one row per requested method
// in the paper's order (DP before zCDP, obj before output, LR before SVM),
// one column per swept value, every coverage cell a number in [0, 1] or,
// for a method that released no interval there, the words saying so
// (never a NaN).
func checkTables(t *testing.T, dir string, e *Experiment) {
	t.Helper()
	for _, m := range []string{"coverage", "ci_length", "vi_length"} {
		for _, ext := range []string{".md", ".csv"} {
			if _, err := os.Stat(filepath.Join(dir, "tables", m+ext)); err != nil {
				t.Error(err)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "tables", "coverage.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(e.methods) || len(recs[0]) != 3+len(e.spec.ConfidenceIntervals.Values) {
		t.Fatalf("coverage table %d×%d, want %d rows and %d columns", len(recs), len(recs[0]), 1+len(e.methods), 3+len(e.spec.ConfidenceIntervals.Values))
	}
	// The order check holds for registered methods (external ones come
	// last, in the spec's order).
	registered := !slices.ContainsFunc(e.methods, func(m cimethods.Method) bool { _, ok := m.(*cimethods.External); return ok })
	prev := ""
	for _, rec := range recs[1:] {
		key := rec[0] + "/" + rec[1] + "/" + rec[2]
		if registered && key <= prev { // the paper's order happens to be lexical: DP < zCDP, obj < output, LR < SVM
			t.Errorf("row %s after %s: not in the paper's order", key, prev)
		}
		prev = key
		none := fmt.Sprintf("no interval in %d of %d replicates", e.spec.ConfidenceIntervals.Replicates, e.spec.ConfidenceIntervals.Replicates)
		for _, c := range rec[3:] {
			if v, err := strconv.ParseFloat(c, 64); c != none && (err != nil || !(v >= 0 && v <= 1)) {
				t.Errorf("coverage cell %q in row %s", c, key)
			}
		}
	}
}

func parseRows(t *testing.T, b []byte) []results.Row {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []results.Row
	for _, rec := range recs[1:] {
		r := results.Row{}
		for i, c := range recs[0] {
			r[c] = rec[i]
		}
		out = append(out, r)
	}
	return out
}

// TestRun_DeterministicAcrossWorkers runs the small spec with 1 and 3
// workers and checks identical outputs and the row invariants.
func TestRun_DeterministicAcrossWorkers(t *testing.T) {
	e := load(t, smallSpec)
	rows1, sum1 := run(t, e, 1)
	rows3, sum3 := run(t, load(t, smallSpec), 3)
	if !bytes.Equal(rows1, rows3) || !bytes.Equal(sum1, sum3) {
		t.Fatal("outputs differ between 1 and 3 workers")
	}
	rows := parseRows(t, rows1)
	// 2 values × 4 methods × (6 replicates + 1 VI row).
	if want := 2 * 4 * 7; len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	vi := map[string]float64{}
	for _, r := range rows {
		if r["status"] != "ok" {
			t.Errorf("%s %s: status %q", r["unit"], r["method"], r["status"])
		}
		switch r["row_type"] {
		case "ci":
			cov, l := r.Float("coverage"), r.Float("ci_length")
			if !(cov >= 0 && cov <= 1) || !(l > 0) {
				t.Errorf("%s %s: coverage %v, length %v", r["unit"], r["method"], cov, l)
			}
			// d is swept: the reported length is the first coordinate's.
			if l != r.Float("ci_length_first") {
				t.Errorf("%s: ci_length %v ≠ first coordinate %v", r["unit"], l, r.Float("ci_length_first"))
			}
		case "vi":
			vi[r["method"]+"@"+r["x"]] = r.Float("vi_length")
		}
	}
	// One objective-perturbation VI set serves DP and zCDP (same ε₁).
	for _, x := range []string{"1", "3"} {
		if a, b := vi["dp-obj-lr@"+x], vi["zcdp-obj-lr@"+x]; a != b || !(a > 0) {
			t.Errorf("x = %s: obj VI lengths %v (dp) and %v (zcdp), want equal and > 0", x, a, b)
		}
		// zCDP output noise at ρ₁ = 0.125 (σ = 1/(nc·0.5)) is lighter than
		// the DP noise at ε₁ = 0.5 (norm ~ Gamma(d+1, 1/(ncε₁))).
		if a, b := vi["dp-output-svm@"+x], vi["zcdp-output-svm@"+x]; !(b < a) {
			t.Errorf("x = %s: output VI zcdp %v not below dp %v", x, b, a)
		}
	}
	// One summary row per (method, x, metric): 4 · 2 · 3.
	if got, want := len(parseRows(t, sum1)), 4*2*3; got != want {
		t.Errorf("%d summary rows, want %d", got, want)
	}
}

// nonPrivateSpec: budgets so large that the privacy noise vanishes; the
// zCDP output-perturbation interval is then the closed-form sandwich
// interval (GaussianCI), cheap enough for many replicates.
const nonPrivateSpec = `schema = 1
id = "wkl-nonprivate"
kind = "ci-coverage"
seed = 5

[data]
datasets = ["adult"]
intercept = false

[confidence_intervals]
methods = ["zcdp-output-lr"]
n1 = 3000
d1 = 3
eps1 = 1e6
eps2 = 1e6
eps3 = 1e6
sweep = "eps1"
values = [1e6]
replicates = 400
mc_samples = 1
vi_fits = 2
block_size = 100

[output]
bootstrap = 200
`

// TestRun_NonPrivateCoverage checks that with (nearly) no privacy noise the
// coverage of the θ₀ coordinates is at least about 1−α = 0.95.
//
// Tolerance: each coordinate's indicator over k = 400 independent
// replicates has sd √(α(1−α)/k) = 0.0109; the average over coordinates has
// at most that sd, so z = 4.42 gives 0.048 (a seed passes with probability
// ≥ 1−10⁻⁵); we add 0.03 for the sandwich interval's large-sample error.
// The test is one-sided: Algorithm 2 (line 12) floors the eigenvalues of the
// released Hessian and covariance at 2c, which only widens the interval, and
// on this data several covariance eigenvalues lie below 2c = 0.002, so the
// coverage is near 1 (0.996 measured) even without noise. The exact
// sandwich is checked two-sided in TestBootstrap_SandwichCoverage.
func TestRun_NonPrivateCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("400 replicates")
	}
	e := load(t, nonPrivateSpec)
	rowsB, _ := run(t, e, 4)
	var sum float64
	var k int
	for _, r := range parseRows(t, rowsB) {
		if r["row_type"] == "ci" {
			sum += r.Float("coverage")
			k++
		}
	}
	if k != 400 {
		t.Fatalf("%d replicate rows, want 400", k)
	}
	cov := sum / float64(k)
	t.Logf("non-private coverage %.4f over %d replicates", cov, k)
	if tol := 4.42*math.Sqrt(0.05*0.95/400) + 0.03; cov < 0.95-tol || cov > 1 {
		t.Errorf("coverage %v, want in [%.3f, 1]", cov, 0.95-tol)
	}
}

// TestBootstrap_SandwichCoverage checks the bootstrap plumbing (weights,
// θ₀, warm start) with the exact non-private sandwich interval (Hessian
// and covariance without Algorithm 2): its coverage of θ₀ must be 0.95
// within 4.42·√(α(1−α)/k) = 0.048 (k = 400, as above) plus 0.03 for the
// large-sample error of the sandwich (0.949 measured).
func TestBootstrap_SandwichCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("400 fits")
	}
	e := load(t, nonPrivateSpec)
	pt := e.points[0]
	th0 := pt.theta0[dpci.LR]
	ci := e.spec.ConfidenceIntervals
	p := dpci.Params{Model: dpci.LR, H: ci.H, C: ci.C}
	var covered, total int
	for rep := 0; rep < 400; rep++ {
		rows := newResampler(pt.data, false).draw(e.stream(runner.NewEnv(e.spec.Spec, "", false), pt, dpci.LR, "ci", rep, "resample"))
		hat, err := dpci.FitNonPrivate(rows, p, erm.FitOptions{Init: th0})
		if err != nil {
			t.Fatal(err)
		}
		h, err := dpci.Hessian(rows, p, hat.W)
		if err != nil {
			t.Fatal(err)
		}
		s, err := dpci.GradCov(rows, p, hat.W)
		if err != nil {
			t.Fatal(err)
		}
		iv, err := dpci.GaussianCI(hat.W, h, s, rows.SumWeights(), 0, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range th0 {
			if iv.Covers(j, v) {
				covered++
			}
			total++
		}
	}
	cov := float64(covered) / float64(total)
	if tol := 4.42*math.Sqrt(0.05*0.95/400) + 0.03; math.Abs(cov-0.95) > tol {
		t.Errorf("sandwich coverage %v, want 0.95 ± %.3f", cov, tol)
	}
}

// TestNew_Errors checks the data-dependent errors of New.
func TestNew_Errors(t *testing.T) {
	cases := []struct{ old, new, want string }{
		{"n1 = 1500", "n1 = 100000000", "n1 = 100000000 exceeds the"},
		{"values = [1, 3]", "values = [1, 100000]", "d1 = 100000 exceeds the"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			s, err := experiments.Parse("spec.toml", []byte(strings.Replace(smallSpec, c.old, c.new, 1)), "", testKinds)
			if err != nil {
				t.Fatal(err)
			}
			_, err = New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestFigures_Series checks the figure specs handed to the plotter.
func TestFigures_Series(t *testing.T) {
	e := load(t, smallSpec)
	figs := e.Figures()
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	// smallSpec runs dp-obj-lr, zcdp-obj-lr, dp-output-svm and
	// zcdp-output-svm: no obj/output pair shares a model and privacy.
	want := "coverage figure1-dp-vs-zcdp-obj figure2-dp-vs-zcdp-output figure3-obj-vs-output-dp figure4-obj-vs-output-zcdp"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("figures %q, want %q", got, want)
	}
	if m := figs[1].Methods; len(m) != 2 || m[0] != "dp-obj-lr" || m[1] != "zcdp-obj-lr" {
		t.Errorf("figure 1 methods %v", m)
	}
	if m := figs[3].Methods; len(m) != 2 || m[0] != "dp-obj-lr" || m[1] != "dp-output-svm" {
		t.Errorf("figure 3 methods %v", m)
	}
	for _, f := range figs[1:] {
		if f.ErrorBars != "sd" || f.PanelBy == nil || len(f.Metrics) != 2 {
			t.Errorf("%s: error bars %q, metrics %v, panel by set %v; want sd bars, CI and VI length, a panel per model", f.Name, f.ErrorBars, f.Metrics, f.PanelBy != nil)
		}
	}
	if got := modelPanel(results.SummaryRow{Dataset: "adult", Method: "zcdp-output-svm: vi_length"}); got != "adult, SVM" {
		t.Errorf("modelPanel = %q, want %q", got, "adult, SVM")
	}
	if len(figs[0].RefLines) != 1 || figs[0].RefLines[0].Y != 0.95 {
		t.Errorf("coverage reference lines %v, want 0.95", figs[0].RefLines)
	}
}

// TestVISharedAcrossUnspentBudgets checks that an ε₂ sweep has one VI unit
// per model whose rows, identical, serve every x, while a d sweep has one
// per x.
func TestVISharedAcrossUnspentBudgets(t *testing.T) {
	count := func(e *Experiment) int {
		k := 0
		for _, key := range e.units {
			if e.byKey[key].vi {
				k++
			}
		}
		return k
	}
	if d := load(t, smallSpec); count(d) != 2*2 { // 2 values × 2 models
		t.Errorf("d sweep: %d VI units, want 4", count(d))
	}
	src := strings.Replace(smallSpec, `sweep = "d"
values = [1, 3]`, `d1 = 3
sweep = "eps2"
values = [0.2, 0.9]`, 1)
	e := load(t, src)
	if got := count(e); got != 2 {
		t.Fatalf("eps2 sweep: %d VI units, want 2 (one per model)", got)
	}
	for _, key := range e.units {
		u := e.byKey[key]
		if !u.vi {
			continue
		}
		rows, err := runner.RunKey(context.Background(), e, key)
		if err != nil {
			t.Fatal(err)
		}
		byMethod := map[string][]results.Row{}
		for _, r := range rows {
			byMethod[r["method"]] = append(byMethod[r["method"]], r)
		}
		for m, rs := range byMethod {
			if len(rs) != 2 || rs[0]["x"] != "0.2" || rs[1]["x"] != "0.9" {
				t.Fatalf("%s: %d rows at x %v, want x = 0.2 and 0.9", m, len(rs), rs)
			}
			if rs[0]["vi_length"] != rs[1]["vi_length"] || rs[0]["eps2"] == rs[1]["eps2"] {
				t.Errorf("%s: VI %s vs %s (eps2 %s, %s): want the same VI, each x's own eps2", m, rs[0]["vi_length"], rs[1]["vi_length"], rs[0]["eps2"], rs[1]["eps2"])
			}
		}
	}
}

// TestVI_EpsOneSweepOneUnit checks the VI of an ε₁ sweep (Wang, Kifer &
// Lee 2019, Section 7.1): one unit per model fits each bootstrap replicate
// at every ε₁ (output perturbation's θ̂ fitted once for all of them,
// runVI), and the VI it reports at each ε₁ is, bit for bit, the one a
// spec with that ε₁ alone computes — each ε₁'s VI is the paper's, drawn
// from streams of its data and ε₁, whichever sweep asks for it.
func TestVI_EpsOneSweepOneUnit(t *testing.T) {
	t.Parallel()
	base := strings.Replace(smallSpec, `methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-svm", "zcdp-output-svm"]`,
		`methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-lr", "zcdp-output-lr", "dp-output-svm", "zcdp-output-svm"]`, 1)
	vis := func(src string) map[string]results.Row { // by method and ε₁
		t.Helper()
		out, units := rowsByKey(t, load(t, src), true, func(r results.Row) string { return r["method"] + " eps1=" + r["eps1"] })
		if units != 2 {
			t.Fatalf("%d VI units, want one per model", units)
		}
		return out
	}
	sweep := vis(strings.Replace(base, "sweep = \"d\"\nvalues = [1, 3]", "d1 = 2\nsweep = \"eps1\"\nvalues = [0.5, 1, 2]", 1))
	if len(sweep) != 3*6 {
		t.Fatalf("%d VI rows, want 3 ε₁ × 6 methods", len(sweep))
	}
	for _, eps1 := range []string{"0.5", "2"} {
		alone := vis(strings.Replace(base, "sweep = \"d\"\nvalues = [1, 3]", "d1 = 2\neps1 = "+eps1+"\nsweep = \"eps2\"\nvalues = [0.3]", 1))
		for k, a := range alone {
			s, ok := sweep[k]
			if !ok {
				t.Fatalf("ε₁ = %s: the sweep has no VI row %s", eps1, k)
			}
			for _, c := range []string{"vi_length", "vi_length_mean", "vi_length_first", "epsilon_prime", "status", "n", "d"} {
				if a[c] != s[c] || a[c] == "" {
					t.Errorf("%s: %s %q in the ε₁ sweep, %q alone", k, c, s[c], a[c])
				}
			}
		}
	}
	// The budget moves the VI: Algorithm 1 and output perturbation at ε₁ =
	// 0.5 are noisier than at 2.
	for _, m := range []string{"dp-obj-lr", "dp-output-lr", "dp-output-svm"} {
		lo, hi := sweep[m+" eps1=0.5"], sweep[m+" eps1=2"]
		l, err1 := strconv.ParseFloat(lo["vi_length"], 64)
		h, err2 := strconv.ParseFloat(hi["vi_length"], 64)
		if err1 != nil || err2 != nil || !(l > h) {
			t.Errorf("%s: VI %q at ε₁ = 0.5, %q at 2: want longer at 0.5", m, lo["vi_length"], hi["vi_length"])
		}
	}
}

// TestRunUnit_StopsPromptly gives a coverage unit 2,000,000 Monte Carlo
// draws per interval and a variability unit 1,000,000 fits (minutes of
// work each) and checks that both return the context's error at once when
// it is already done and within a second of a cancellation.
func TestRunUnit_StopsPromptly(t *testing.T) {
	src := strings.NewReplacer("values = [1, 3]", "values = [3]", "replicates = 6", "replicates = 100",
		"mc_samples = 200", "mc_samples = 2000000", "vi_fits = 40", "vi_fits = 1000000", "block_size = 4", "block_size = 100").Replace(smallSpec)
	e := load(t, src)
	var keys []string
	for _, k := range unitKeys(e) {
		if strings.Contains(k, "/lr") || strings.HasSuffix(k, "/lr") {
			keys = append(keys, k)
		}
	}
	if len(keys) != 2 {
		t.Fatalf("units %v", e.Units())
	}
	for _, key := range keys {
		stoptest.Prompt(t, key, 100*time.Millisecond, func(ctx context.Context) error {
			_, err := runner.RunKey(ctx, e, key)
			return err
		})
	}
}

// TestCI_EpsSweepOneUnit checks the coverage units of an ε₁, ε₂ and ε₃
// sweep (runCI): one unit per model and replicate block serves every
// value (the replicate drawn once; in an ε₂ or ε₃ sweep θ̃ and the exact
// matrices computed once too), and each value's rows are, bit for bit,
// those of a spec with that value alone — the draws are keyed by the
// replicate's data and ε₁, not by the swept value, so a point's intervals
// do not depend on the other values of its sweep (and keep the paper's
// law).
func TestCI_EpsSweepOneUnit(t *testing.T) {
	t.Parallel()
	base := strings.Replace(smallSpec, `methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-svm", "zcdp-output-svm"]`,
		`methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-lr", "zcdp-output-lr", "dp-obj-svm", "dp-output-svm", "zcdp-output-svm"]`, 1)
	cov := func(src string, wantUnits int) map[string]results.Row { // by x, method and replicate
		t.Helper()
		out, units := rowsByKey(t, load(t, src), false, func(r results.Row) string { return r["x"] + " " + r["method"] + " " + r["replicate"] })
		if units != wantUnits {
			t.Fatalf("%d coverage units, want %d", units, wantUnits)
		}
		return out
	}
	for _, sweep := range []string{"eps1", "eps2", "eps3"} {
		spec := func(values string) string {
			return strings.Replace(base, "sweep = \"d\"\nvalues = [1, 3]", "d1 = 2\nsweep = \""+sweep+"\"\nvalues = "+values, 1)
		}
		all := cov(spec("[0.2, 0.9, 3]"), 2*2) // 2 models × 2 blocks, every value in each
		if len(all) != 3*7*6 {
			t.Fatalf("%s: %d coverage rows, want 3 values × 7 methods × 6 replicates", sweep, len(all))
		}
		for _, x := range []string{"0.9", "3"} {
			alone := cov(spec("["+x+"]"), 2*2)
			for k, a := range alone {
				s, ok := all[k]
				if !ok {
					t.Fatalf("%s: the sweep has no row %s", sweep, k)
				}
				for c, v := range a {
					if s[c] != v {
						t.Errorf("%s %s: %s %q in the sweep, %q alone", sweep, k, c, s[c], v)
					}
				}
			}
		}
		if sweep == "eps1" {
			continue
		}
		// θ̃ is shared: ε′ is the same at every value; the intervals are
		// each value's own.
		for _, m := range []string{"dp-obj-lr", "dp-obj-svm"} {
			a, b := all["0.2 "+m+" 1"], all["3 "+m+" 1"]
			if a["epsilon_prime"] != b["epsilon_prime"] || a["ci_length"] == b["ci_length"] {
				t.Errorf("%s %s replicate 1: ε′ %s, %s and lengths %s, %s: want one ε′, two lengths", sweep, m, a["epsilon_prime"], b["epsilon_prime"], a["ci_length"], b["ci_length"])
			}
		}
	}
}

// rowsByKey runs the VI units of e (vi) or its coverage units and returns
// their rows by key(row), failing on two rows of one key, and the number
// of units run.
func rowsByKey(t *testing.T, e *Experiment, vi bool, key func(results.Row) string) (map[string]results.Row, int) {
	t.Helper()
	out := map[string]results.Row{}
	units := 0
	for _, k := range e.units {
		if e.byKey[k].vi != vi {
			continue
		}
		units++
		rows, err := runner.RunKey(context.Background(), e, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			rk := key(r)
			if _, dup := out[rk]; dup {
				t.Fatalf("two rows of %s (vi %v)", rk, vi)
			}
			out[rk] = r
		}
	}
	return out, units
}
