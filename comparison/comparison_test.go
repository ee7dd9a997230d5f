package comparison

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/internal/stattest"
	"github.com/dprepro/dprepro/results"
)

// row is one rows.csv row of a paired design.
func row(ds, method string, eps float64, rep, fold int, auc, errRate float64) results.Row {
	r := results.Row{}
	r.Set("dataset", ds)
	r.Set("method", method)
	r.SetFloat("epsilon", eps)
	r.SetInt("repetition", rep)
	r.SetInt("fold", fold)
	r.SetFloat("auc", auc)
	r.SetFloat("error_rate", errRate)
	return r
}

var opts = Options{
	Baseline: "base", XCol: "epsilon", XName: "epsilon",
	Metrics: []Metric{{"auc", true}, {"error_rate", false}},
	PairKey: []string{"repetition", "fold"},
}

// TestCompare_Exact: a hand-computed cell. Differences 1, 2, 3 (method −
// baseline, matched by (repetition, fold) whatever the rows' order): mean
// 2, sd 1, t = 2√3 on 2 degrees of freedom, where Student's CDF is
// 1/2 + t/(2√(2 + t²)), so p = 1 − t/√(2 + t²) = 0.0741799…; the 95 %
// interval 2 ± 4.302653·(1/√3). A replicate the method lacks is left out
// (pairs = 3 of the baseline's 4), and error_rate, lower better, makes a
// significant negative difference a win.
func TestCompare_Exact(t *testing.T) {
	rows := []results.Row{
		row("d", "base", 1, 1, 1, 0.50, 0.3), row("d", "base", 1, 1, 2, 0.60, 0.3),
		row("d", "base", 1, 1, 3, 0.70, 0.3), row("d", "base", 1, 1, 4, 0.70, 0.3),
		row("d", "m", 1, 1, 3, 3.70, 0.1), row("d", "m", 1, 1, 1, 1.50, 0.1), row("d", "m", 1, 1, 2, 2.60, 0.1),
	}
	cells, err := Compare(rows, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 {
		t.Fatalf("%d cells, want 2 (auc, error_rate)", len(cells))
	}
	c := cells[0]
	tt := 2 * math.Sqrt(3)
	wantP := 1 - tt/math.Sqrt(2+tt*tt)
	half := 4.302652729911275 / math.Sqrt(3)
	if c.Metric != "auc" || c.Pairs != 3 || math.Abs(c.Mean-2) > 1e-12 || math.Abs(c.SD-1) > 1e-12 ||
		math.Abs(c.P-wantP) > 1e-9 || math.Abs(c.CILow-(2-half)) > 1e-9 || math.Abs(c.CIHigh-(2+half)) > 1e-9 {
		t.Errorf("auc cell %+v, want pairs 3, mean 2, sd 1, p %v, CI 2 ± %v", c, wantP, half)
	}
	if c.PHolm != c.P || c.Outcome != Tie {
		t.Errorf("one cell: Holm p %v (want p), outcome %s (want tie at p = 0.074)", c.PHolm, c.Outcome)
	}
	if e := cells[1]; e.Metric != "error_rate" || e.Mean > -0.2+1e-12 || e.P != 0 || e.Outcome != Win {
		t.Errorf("error_rate cell %+v: an exact difference of −0.2, lower better: p 0, a win", e)
	}
	if _, err := Compare(rows, Options{Baseline: "nosuch", XCol: "epsilon", Metrics: opts.Metrics, PairKey: opts.PairKey}); err == nil || !strings.Contains(err.Error(), `baseline "nosuch" has no rows`) {
		t.Errorf("missing baseline: %v", err)
	}
}

// TestHolm: the step-down adjustment on p = (0.01, 0.04, 0.03, 0.005):
// sorted 0.005, 0.01, 0.03, 0.04 → 4·0.005, 3·0.01, 2·0.03, max(0.06,
// 0.04) = 0.02, 0.03, 0.06, 0.06; a cell without a p-value is skipped.
func TestHolm(t *testing.T) {
	cs := []Cell{{P: 0.01}, {P: 0.04}, {P: 0.03}, {P: 0.005}, {P: math.NaN()}}
	holm(cs)
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i, w := range want {
		if math.Abs(cs[i].PHolm-w) > 1e-15 {
			t.Errorf("cell %d: Holm p %v, want %v", i, cs[i].PHolm, w)
		}
	}
	if !math.IsNaN(cs[4].PHolm) {
		t.Errorf("a cell without p got Holm p %v", cs[4].PHolm)
	}
}

// simulate returns the rows of one run: nMethods methods against base at
// nEps levels on one dataset, pairs replicates each; method j's AUC is the
// baseline's plus a shared fold effect, plus shift[j], plus noise.
func simulate(rng *rand.Rand, nMethods, nEps, pairs int, shift []float64) []results.Row {
	var rows []results.Row
	for e := 0; e < nEps; e++ {
		eps := math.Pow(10, float64(e-1))
		for p := 0; p < pairs; p++ {
			fold := rng.NormFloat64() // shared by every method: what pairing removes
			rows = append(rows, row("d", "base", eps, 1, p+1, 0.7+fold+0.05*rng.NormFloat64(), 0))
			for j := 0; j < nMethods; j++ {
				rows = append(rows, row("d", "m"+strconv.Itoa(j), eps, 1, p+1, 0.7+fold+shift[j]+0.05*rng.NormFloat64(), 0))
			}
		}
	}
	return rows
}

// TestCompare_FamilyErrorRate: with no method differing from the
// baseline, a run's verdicts over its 3 methods × 4 levels hold a win or
// a loss in at most 1 − level of runs (Holm controls the family-wise
// error rate); it is tested at 2,000 simulated runs (fixed seed) within
// stattest.ZCrit(1) binomial standard errors above 0.05. Against a shift of
// 0.2 AUC (the differences' sd is 0.05·√2, so t ≈ 8.9 on 9 degrees of
// freedom, where the strictest Holm step of 12 cells rejects from t ≈ 4.3:
// a miss is more than 4 standard errors away) every cell of that method
// is a win.
func TestCompare_FamilyErrorRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(2025, 11))
	const runs, pairs = 2000, 10
	o := opts
	o.Metrics = []Metric{{"auc", true}}
	false_ := 0
	for i := 0; i < runs; i++ {
		cells, err := Compare(simulate(rng, 3, 4, pairs, []float64{0, 0, 0}), o)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cells {
			if c.Outcome == Win || c.Outcome == Loss {
				false_++
				break
			}
		}
	}
	rate := float64(false_) / runs
	limit := 0.05 + stattest.ZCrit(1)*math.Sqrt(0.05*0.95/runs)
	if rate > limit {
		t.Errorf("family-wise false verdict rate %.4f over %d runs, above %.4f", rate, runs, limit)
	}
	t.Logf("family-wise false verdict rate %.4f (nominal ≤ 0.05)", rate)
	cells, err := Compare(simulate(rng, 3, 4, pairs, []float64{0.2, 0, 0}), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if c.Method == "m0" && c.Outcome != Win {
			t.Errorf("m0 at ε = %v: %s (mean %v, Holm p %v), want a win", c.X, c.Outcome, c.Mean, c.PHolm)
		}
	}
}

// TestCSVAndTable: comparison.csv has one line per cell under Columns,
// and the Markdown table counts each method's outcomes.
func TestCSVAndTable(t *testing.T) {
	rows := []results.Row{
		row("d", "base", 1, 1, 1, 0.5, 0.3), row("d", "base", 1, 1, 2, 0.6, 0.3),
		row("d", "m", 1, 1, 1, 0.6, 0.3), row("d", "m", 1, 1, 2, 0.7, 0.3),
	}
	cells, err := Compare(rows, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := CSV(cells, "epsilon", 0.95)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || lines[0] != strings.Join(Columns, ",") || !strings.HasPrefix(lines[1], "d,m,base,auc,epsilon,1,2,") {
		t.Errorf("comparison.csv:\n%s", b)
	}
	md := string(Table(cells, Options{XName: "epsilon", Level: 0.95}))
	if !strings.Contains(md, "| auc | m | 1 | 0 | 0 | 0 |") || !strings.Contains(md, "| error_rate | m | 0 | 1 | 0 | 0 |") || strings.Contains(md, "not private") {
		t.Errorf("table:\n%s", md)
	}
	// A method whose release is not private (an oracle) is marked in
	// both tables, with a sentence saying why its wins are no private
	// result.
	md = string(Table(cells, Options{XName: "epsilon", Level: 0.95, NotPrivate: []string{"m"}}))
	if !strings.Contains(md, "| auc | m **(not private)** | 1 | 0 | 0 | 0 |") || !strings.Contains(md, "| auc | d | m **(not private)** | 1 |") ||
		!strings.Contains(md, "its wins are no private result") {
		t.Errorf("table with m not private:\n%s", md)
	}
}
