package claims

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
)

func sum(method, metric string, x, mean, lo, hi, sd float64, n int) results.SummaryRow {
	return results.SummaryRow{Experiment: "e", Dataset: "d", DataSource: "real", Method: method, XName: "alpha",
		X: x, Metric: metric, Mean: mean, SD: sd, CILow: lo, CIHigh: hi, N: n}
}

func spec(cs ...experiments.ClaimSpec) *experiments.Spec {
	return &experiments.Spec{ID: "e", Data: experiments.DataSpec{Datasets: []string{"d"}}, Claims: cs}
}

func verdicts(rs []Result) string {
	var v []string
	for _, r := range rs {
		v = append(v, r.Verdict)
	}
	return strings.Join(v, ",")
}

func TestEvaluate_Match(t *testing.T) {
	s := spec(experiments.ClaimSpec{ID: "m", Rule: "match", Method: "a", Metric: "coverage",
		X: []float64{1, 2, 3, 4}, Paper: []float64{0.95, 0.95, 0.90, 0.95}, Tolerance: 0.01})
	summary := []results.SummaryRow{
		sum("a", "coverage", 1, 0.955, 0.945, 0.965, 0, 100), // within the CI
		sum("a", "coverage", 2, 0.97, 0.965, 0.975, 0, 100),  // 0.02 off, half-width 0.005 + 0.01 < 0.02
		sum("a", "coverage", 3, 0.914, 0.91, 0.918, 0, 100),  // 0.014 ≤ 0.004 + 0.01
		sum("a", "coverage", 4, 1, 1, 1, 0, 20),              // 20 of 20: the rule of three, 3/20 = 0.15 ≥ 0.05
	}
	got := Evaluate(s, nil, summary, Options{})
	if v := verdicts(got); v != "held,not held,held,held" {
		t.Fatalf("verdicts %s", v)
	}
	if got[0].Paper != 0.95 || got[0].Ours != 0.955 || got[0].X != 1 {
		t.Fatalf("result %+v", got[0])
	}
}

// TestEvaluate_PairedDifference: the rows pair by (rep, fold); a
// difference that is small against each method's spread but constant
// across replicates is decided by the pairing, which the unpaired
// fallback (summary rows only) cannot do.
func TestEvaluate_PairedDifference(t *testing.T) {
	var rows []results.Row
	for rep := 1; rep <= 20; rep++ {
		base := float64(rep) / 10 // a large replicate effect shared by both methods
		for _, m := range []struct {
			name  string
			shift float64
		}{{"a", 0.01}, {"b", 0}} {
			rows = append(rows, results.Row{"dataset": "d", "method": m.name, "alpha": "1", "rep": strconv.Itoa(rep), "fold": "1",
				"auc": results.FormatFloat(base + m.shift + 0.001*float64(rep%3))})
		}
	}
	summary := []results.SummaryRow{sum("a", "auc", 1, 1.06, 0.8, 1.3, 0.6, 20), sum("b", "auc", 1, 1.05, 0.8, 1.3, 0.6, 20)}
	greater := experiments.ClaimSpec{ID: "g", Rule: "greater", Method: "a", Than: "b", Metric: "auc"}
	less := greater
	less.ID, less.Rule = "l", "less"
	got := Evaluate(spec(greater, less), rows, summary, Options{PairKey: []string{"rep", "fold"}})
	if v := verdicts(got); v != "held,not held" {
		t.Fatalf("paired: %s (%+v)", v, got)
	}
	if math.Abs(got[0].Ours-0.01) > 1e-9 || !(got[0].CILow > 0) {
		t.Fatalf("paired difference %+v", got[0])
	}
	// Unpaired, the same data is inconclusive.
	got = Evaluate(spec(greater), rows, summary, Options{})
	if v := verdicts(got); v != "inconclusive" {
		t.Fatalf("unpaired: %s", v)
	}
}

func TestEvaluate_MetricVsMetric(t *testing.T) {
	rows := []results.Row{
		{"dataset": "d", "method": "nr", "alpha": "0.1", "trial": "1", "test_eps": "2", "hypothesis_eps": "1"},
		{"dataset": "d", "method": "nr", "alpha": "0.1", "trial": "2", "test_eps": "2.2", "hypothesis_eps": "1.1"},
		{"dataset": "d", "method": "nr", "alpha": "0.1", "trial": "3", "test_eps": "1.9", "hypothesis_eps": "0.8"},
	}
	summary := []results.SummaryRow{sum("nr", "test_eps", 0.1, 2.03, 1.9, 2.2, 0.15, 3), sum("nr", "hypothesis_eps", 0.1, 0.97, 0.8, 1.1, 0.15, 3)}
	c := experiments.ClaimSpec{ID: "t", Rule: "greater", Method: "nr", Metric: "test_eps", ThanMetric: "hypothesis_eps"}
	if v := verdicts(Evaluate(spec(c), rows, summary, Options{PairKey: []string{"trial"}})); v != "held" {
		t.Fatalf("%s", v)
	}
}

func TestEvaluate_TrendsBoundsSyntheticMissing(t *testing.T) {
	summary := []results.SummaryRow{
		sum("a", "auc", 0.5, 0.60, 0.58, 0.62, 0, 10), sum("a", "auc", 1, 0.70, 0.68, 0.72, 0, 10), sum("a", "auc", 2, 0.80, 0.78, 0.82, 0, 10),
		sum("a", "risk", 0.1, 0.05, 0.04, 0.06, 0, 10), sum("a", "risk", 0.2, 0.19, 0.15, 0.23, 0, 10),
	}
	five := 0.65
	s := spec(
		experiments.ClaimSpec{ID: "up", Rule: "increasing", Method: "a", Metric: "auc"},
		experiments.ClaimSpec{ID: "down", Rule: "decreasing", Method: "a", Metric: "auc"},
		experiments.ClaimSpec{ID: "below", Rule: "below_x", Method: "a", Metric: "risk"},
		experiments.ClaimSpec{ID: "least", Rule: "at_least", Method: "a", Metric: "auc", X: []float64{0.5, 1}, Value: &five},
		experiments.ClaimSpec{ID: "other", Rule: "greater", Method: "a", Than: "zz", Metric: "auc", X: []float64{1}},
	)
	got := Evaluate(s, nil, summary, Options{})
	if v := verdicts(got); v != "held,not held,held,inconclusive,not held,held,missing" {
		t.Fatalf("verdicts %s", v)
	}
	for i := range summary {
		summary[i].DataSource = "synthetic"
	}
	got = Evaluate(s, nil, summary, Options{})
	if v := verdicts(got); v != "synthetic,synthetic,synthetic,synthetic,synthetic,synthetic,missing" {
		t.Fatalf("on synthetic data: %s", v)
	}
	b, err := CSV(got[:1])
	if err != nil || !strings.HasPrefix(string(b), strings.Join(Columns, ",")+"\n") {
		t.Fatalf("csv %q %v", b, err)
	}
}

// TestEvaluate_EveryClaimHasARow: whatever the run holds, every claim
// yields at least one row, and a missing verdict says which of the
// dataset, method, metric and x the run lacks (or that the cell has no
// values) — the claim is counted, never dropped.
func TestEvaluate_EveryClaimHasARow(t *testing.T) {
	nanRow := sum("a", "risk", 1, math.NaN(), math.NaN(), math.NaN(), math.NaN(), 0) // every value NaN
	summary := []results.SummaryRow{
		sum("a", "auc", 1, 0.7, 0.68, 0.72, 0.02, 10), sum("a", "auc", 2, 0.8, 0.78, 0.82, 0.02, 10),
		nanRow, sum("b", "auc", 1, 0.6, 0.58, 0.62, 0.02, 10),
	}
	one := 1.0
	cases := []struct {
		claim experiments.ClaimSpec
		want  []string // verdict, then reason, of each row
	}{
		{experiments.ClaimSpec{ID: "metric", Rule: "at_most", Method: "a", Metric: "AUC", Value: &one},
			[]string{"missing", "metric not run: AUC of a on d (the summary has auc, risk)"}},
		{experiments.ClaimSpec{ID: "method", Rule: "greater", Method: "zz", Metric: "auc", Than: "a"},
			[]string{"missing", "method not run: zz on d (the run has a, b)"}},
		{experiments.ClaimSpec{ID: "dataset", Rule: "match", Dataset: "e", Method: "a", Metric: "auc", X: []float64{1}, Paper: []float64{0.7}},
			[]string{"missing", "dataset not run: e (the run has d)"}},
		{experiments.ClaimSpec{ID: "than", Rule: "greater", Method: "a", Metric: "auc", Than: "b", X: []float64{1, 2}},
			[]string{"held", "", "missing", "x not run (the run has alpha = 1 of b on d)"}},
		{experiments.ClaimSpec{ID: "than-metric", Rule: "greater", Method: "a", Metric: "auc", ThanMetric: "mse"},
			[]string{"missing", "metric not run: mse of a on d (the summary has auc, risk)", "missing", "metric not run: mse of a on d (the summary has auc, risk)"}},
		{experiments.ClaimSpec{ID: "no-values", Rule: "at_most", Method: "a", Metric: "risk", Value: &one},
			[]string{"missing", "no values: every risk of a on d at this alpha is NaN (n = 0)"}},
		{experiments.ClaimSpec{ID: "no-values-match", Rule: "match", Method: "a", Metric: "risk", X: []float64{1}, Paper: []float64{0.5}},
			[]string{"missing", "no values: every risk of a on d at this alpha is NaN (n = 0)"}},
		{experiments.ClaimSpec{ID: "trend", Rule: "increasing", Method: "b", Metric: "auc"},
			[]string{"missing", "too few x: a trend needs two x, and the run has alpha = 1 of b on d only"}},
		{experiments.ClaimSpec{ID: "trend-x", Rule: "increasing", Method: "a", Metric: "auc", X: []float64{1, 3}},
			[]string{"missing", "x not run (the run has alpha = 1, 2 of a on d)"}},
	}
	for _, c := range cases {
		got := Evaluate(spec(c.claim), nil, summary, Options{})
		var v []string
		for _, r := range got {
			v = append(v, r.Verdict, r.Reason)
			if (r.Verdict == Missing) != (r.Reason != "") {
				t.Errorf("%s: verdict %q with reason %q", c.claim.ID, r.Verdict, r.Reason)
			}
		}
		if !slices.Equal(v, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.claim.ID, v, c.want)
		}
	}
	// An empty summary (a run of nothing): every claim still has a row.
	var all []experiments.ClaimSpec
	for _, c := range cases {
		all = append(all, c.claim)
	}
	got := Evaluate(spec(all...), nil, nil, Options{})
	seen := map[string]bool{}
	for _, r := range got {
		seen[r.ClaimID] = true
		if r.Verdict != Missing || !strings.HasPrefix(r.Reason, DatasetNotRun+": the run's summary is empty") {
			t.Errorf("%s on an empty summary: %q, %q", r.ClaimID, r.Verdict, r.Reason)
		}
	}
	if len(seen) != len(all) {
		t.Errorf("%d of %d claims have rows", len(seen), len(all))
	}
	// Every reason starts with one of Reasons.
	for _, c := range cases {
		for k := 1; k < len(c.want); k += 2 {
			if c.want[k] != "" && !slices.ContainsFunc(Reasons, func(p string) bool { return strings.HasPrefix(c.want[k], p) }) {
				t.Errorf("reason %q starts with none of %q", c.want[k], Reasons)
			}
		}
	}
}

// TestEvaluate_DefaultDataset: a claim that names no dataset is about the
// spec's one dataset, as its kind declares it (the mechanism of a
// mechanism-bounds spec: not in data.datasets).
func TestEvaluate_DefaultDataset(t *testing.T) {
	s := spec(experiments.ClaimSpec{ID: "c", Rule: "at_most", Method: "a", Metric: "auc", Value: new(float64)})
	s.Data.Datasets = nil
	s.Section = declared{experiments.Produced{Datasets: []string{"d"}, Methods: []string{"a"}, Metrics: []string{"auc"}}}
	got := Evaluate(s, nil, []results.SummaryRow{sum("a", "auc", 1, 0.7, 0.6, 0.8, 0.1, 10)}, Options{})
	if len(got) != 1 || got[0].Dataset != "d" || got[0].Verdict != NotHeld {
		t.Errorf("%+v", got)
	}
}

// declared is a section that declares its summary's names.
type declared struct{ p experiments.Produced }

func (declared) Validate(*experiments.Spec, *experiments.Problems) {}
func (declared) Limits(*experiments.Spec) []experiments.Limit      { return nil }
func (declared) Workload(*experiments.Spec) experiments.Workload   { return experiments.Workload{} }
func (d declared) Produces(*experiments.Spec) experiments.Produced { return d.p }

// TestHeader: claims.csv is read with the reason column or without it
// (files written before it); any other header is refused.
func TestHeader(t *testing.T) {
	for _, h := range [][]string{Columns, LegacyColumns} {
		col, ok := Header(h)
		if !ok || col("verdict") != 13 {
			t.Fatalf("header %v refused", h)
		}
		if want := map[int]int{15: 14, 14: -1}[len(h)]; col("reason") != want {
			t.Errorf("header %v: reason at %d, want %d", h, col("reason"), want)
		}
	}
	if _, ok := Header([]string{"a", "b"}); ok {
		t.Error("another header accepted")
	}
	b, err := CSV([]Result{{ClaimID: "c", X: 1, Paper: math.NaN(), Ours: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN(), Verdict: Missing, Reason: "x not run (the run has alpha = 2 of a on d)"}})
	if err != nil || !strings.HasSuffix(string(b), ",missing,x not run (the run has alpha = 2 of a on d)\n") {
		t.Errorf("csv %q %v", b, err)
	}
}
