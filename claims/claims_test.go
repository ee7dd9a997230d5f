package claims

import (
	"math"
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
