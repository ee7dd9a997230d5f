// Package claims checks a reproduced paper's claims and published numbers
// (the [[claims]] tables of a spec, experiments.ClaimSpec) against a run,
// and writes the verdicts as claims.csv.
//
// # Verdicts
//
// Every claim is decided at each of its x values (a trend over all of them)
// with the run's own uncertainty, so that a verdict is "held" only when the
// data say so:
//
//   - match: held when |ours − paper| ≤ (our CI's half-width) + tolerance,
//     else not held. The CI is the summary's (bootstrap of the mean); for
//     a proportion whose replicates all agree (width 0) the half-width is
//     3/n, the rule of three.
//   - greater / less: the difference ours − theirs, paired by replicate
//     where the kind pairs its rows ([Options.PairKey]: the same
//     repetition and fold, say, at the same dataset and x) and unpaired
//     otherwise (a value computed once for the whole run, such as a
//     variability interval's length, counts as fixed); its normal 95%
//     CI, mean ± 1.96·SE, decides: held when it lies on the claimed side of
//     0, not held when it lies on the other, inconclusive when it straddles
//     0.
//   - increasing / decreasing: held when the means are monotone in x and
//     the CIs at the smallest and largest x do not overlap in the claimed
//     order; not held when the last mean lies beyond the first against the
//     claim with non-overlapping CIs; inconclusive otherwise.
//   - below_x, at_most, at_least: the CI against the bound: held when it is
//     entirely on the claimed side, not held when entirely on the other,
//     inconclusive when it contains the bound.
//
// A claim evaluated on a synthetic stand-in gets the verdict "synthetic"
// (never held: a stand-in cannot reproduce a paper), and one whose x, method
// or metric the run does not have (a quick profile sweeps fewer values)
// gets "missing".
package claims

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
)

// Verdicts.
const (
	Held         = "held"
	NotHeld      = "not held"
	Inconclusive = "inconclusive"
	Synthetic    = "synthetic"
	Missing      = "missing"
)

// Columns is the claims.csv schema.
var Columns = []string{"experiment", "claim_id", "source", "statement", "dataset", "method", "metric", "x", "paper", "ours", "ci_low", "ci_high", "rule", "verdict"}

// Result is one verdict: a claim at one x (NaN for a trend, which is
// decided over all its x).
type Result struct {
	Experiment, ClaimID, Source, Statement string
	Dataset, Method, Metric                string
	X                                      float64
	// Paper is the published value (NaN when the claim has none); Ours,
	// CILow and CIHigh the statistic the rule decides on: our mean (match,
	// bounds), the difference ours − theirs (greater/less), the last
	// minus the first mean (trends).
	Paper, Ours, CILow, CIHigh float64
	Rule, Verdict              string
}

// Options configures Evaluate.
type Options struct {
	// PairKey are the rows.csv columns that identify a replicate across
	// methods at one dataset and x (e.g. rep, fold): rows of two methods
	// with equal values in them are paired. Empty: differences are
	// unpaired.
	PairKey []string
}

// z is the normal quantile of a two-sided 95% interval.
const z = 1.959963984540054

// Evaluate decides every claim of spec on a run's rows and summary.
func Evaluate(spec *experiments.Spec, rows []results.Row, summary []results.SummaryRow, o Options) []Result {
	idx := indexSummary(summary)
	var out []Result
	for _, c := range spec.Claims {
		ds := c.Dataset
		if ds == "" && len(spec.Data.Datasets) == 1 {
			ds = spec.Data.Datasets[0]
		}
		base := Result{Experiment: spec.ID, ClaimID: c.ID, Source: c.Source, Statement: c.Statement,
			Dataset: ds, Method: c.Method, Metric: c.Metric, Rule: c.Rule, Paper: math.NaN()}
		xs := c.X
		if len(xs) == 0 {
			xs = idx.xs(ds, c.Method, c.Metric)
		}
		synthetic := idx.synthetic[ds]
		switch c.Rule {
		case experiments.RuleIncreasing, experiments.RuleDecreasing:
			r := base
			r.X = math.NaN()
			r.Ours, r.CILow, r.CIHigh, r.Verdict = trend(idx, ds, c, xs)
			out = append(out, finish(r, synthetic))
			continue
		}
		for k, x := range xs {
			r := base
			r.X = x
			if k < len(c.Paper) {
				r.Paper = c.Paper[k]
			}
			s, ok := idx.get(ds, c.Method, c.Metric, x)
			if !ok {
				r.Ours, r.CILow, r.CIHigh, r.Verdict = math.NaN(), math.NaN(), math.NaN(), Missing
				out = append(out, r)
				continue
			}
			switch c.Rule {
			case experiments.RuleMatch:
				r.Ours, r.CILow, r.CIHigh = s.Mean, s.CILow, s.CIHigh
				half := (s.CIHigh - s.CILow) / 2
				if half == 0 && s.N > 0 && s.Mean >= 0 && s.Mean <= 1 {
					// Every replicate gave the same proportion (20 of 20
					// intervals covering): the bootstrap CI has width 0,
					// yet n replicates cannot tell a rate within 3/n of
					// it from it (the rule of three: the 95% bound on a
					// rate never seen in n trials).
					half = 3 / float64(s.N)
				}
				r.Verdict = NotHeld
				if math.Abs(s.Mean-r.Paper) <= half+c.Tolerance+1e-12 {
					r.Verdict = Held
				}
			case experiments.RuleGreater, experiments.RuleLess:
				d, lo, hi, ok := difference(rows, idx, ds, c, x, o.PairKey)
				r.Ours, r.CILow, r.CIHigh = d, lo, hi
				if !ok {
					r.Verdict = Missing
					break
				}
				r.Verdict = side(lo, hi, 0, c.Rule == experiments.RuleGreater)
			case experiments.RuleBelowX:
				r.Ours, r.CILow, r.CIHigh = s.Mean, s.CILow, s.CIHigh
				r.Verdict = side(s.CILow, s.CIHigh, x, false)
			case experiments.RuleAtMost, experiments.RuleAtLeast:
				r.Ours, r.CILow, r.CIHigh = s.Mean, s.CILow, s.CIHigh
				r.Verdict = side(s.CILow, s.CIHigh, *c.Value, c.Rule == experiments.RuleAtLeast)
			}
			out = append(out, finish(r, synthetic))
		}
	}
	return out
}

// finish marks a verdict on synthetic data.
func finish(r Result, synthetic bool) Result {
	if synthetic && r.Verdict != Missing {
		r.Verdict = Synthetic
	}
	return r
}

// side decides an interval [lo, hi] against bound: held when it lies
// entirely above (above = true) or below it, not held when entirely on
// the other side, inconclusive when it contains bound.
func side(lo, hi, bound float64, above bool) string {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return Inconclusive
	case lo > bound:
		if above {
			return Held
		}
		return NotHeld
	case hi < bound:
		if above {
			return NotHeld
		}
		return Held
	}
	return Inconclusive
}

// trend decides an increasing/decreasing claim over xs.
func trend(idx *index, ds string, c experiments.ClaimSpec, xs []float64) (d, lo, hi float64, verdict string) {
	xs = slices.Clone(xs)
	sort.Float64s(xs)
	var ss []results.SummaryRow
	for _, x := range xs {
		s, ok := idx.get(ds, c.Method, c.Metric, x)
		if !ok {
			return math.NaN(), math.NaN(), math.NaN(), Missing
		}
		ss = append(ss, s)
	}
	if len(ss) < 2 {
		return math.NaN(), math.NaN(), math.NaN(), Missing
	}
	up := c.Rule == experiments.RuleIncreasing
	first, last := ss[0], ss[len(ss)-1]
	d = last.Mean - first.Mean
	lo, hi = last.CILow-first.CIHigh, last.CIHigh-first.CILow // the range of differences the two CIs allow
	monotone := true
	for k := 1; k < len(ss); k++ {
		if (up && ss[k].Mean < ss[k-1].Mean) || (!up && ss[k].Mean > ss[k-1].Mean) {
			monotone = false
		}
	}
	switch v := side(lo, hi, 0, up); {
	case v == Held && monotone:
		return d, lo, hi, Held
	case v == NotHeld:
		return d, lo, hi, NotHeld
	}
	return d, lo, hi, Inconclusive
}

// difference returns the mean difference ours − theirs at x and its 95%
// CI: paired over replicates when pairKey is set and both sides are row
// columns, else from the two summary rows (unpaired, SE from sd/√n).
func difference(rows []results.Row, idx *index, ds string, c experiments.ClaimSpec, x float64, pairKey []string) (d, lo, hi float64, ok bool) {
	other, otherMetric := c.Than, c.Metric
	if c.ThanMetric != "" {
		other, otherMetric = c.Method, c.ThanMetric
	}
	a, okA := idx.get(ds, c.Method, c.Metric, x)
	b, okB := idx.get(ds, other, otherMetric, x)
	if !okA || !okB || a.N < 1 || b.N < 1 {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	if diffs := paired(rows, ds, c, other, otherMetric, a.XName, x, pairKey); len(diffs) >= 2 {
		mean, sd := meanSD(diffs)
		se := sd / math.Sqrt(float64(len(diffs)))
		return mean, mean - z*se, mean + z*se, true
	}
	d = a.Mean - b.Mean
	se := math.Sqrt(variance(a) + variance(b))
	return d, d - z*se, d + z*se, true
}

// paired returns the per-replicate differences of metric (of c.Method)
// and otherMetric (of other) at x, or nil when the rows cannot be paired
// (no pair key, or a metric that is not a row column). Rows are selected
// by their "dataset" and "method" columns and by the x column (xName, the
// summary's x_name), and paired by equal values in pairKey.
func paired(rows []results.Row, ds string, c experiments.ClaimSpec, other, otherMetric, xName string, x float64, pairKey []string) []float64 {
	if len(rows) == 0 || len(pairKey) == 0 {
		return nil
	}
	for _, col := range append([]string{xName, c.Metric, otherMetric, "method"}, pairKey...) {
		if _, ok := rows[0][col]; !ok {
			return nil
		}
	}
	key := func(r results.Row) string {
		var b bytes.Buffer
		for _, k := range pairKey {
			b.WriteString(r[k])
			b.WriteByte(0)
		}
		return b.String()
	}
	theirs := map[string]float64{}
	mine := map[string]float64{}
	var order []string
	for _, r := range rows {
		if ds != "" && r["dataset"] != ds {
			continue
		}
		if v, err := strconv.ParseFloat(r[xName], 64); err != nil || v != x {
			continue
		}
		k := key(r)
		if r["method"] == other {
			theirs[k] = r.Float(otherMetric)
		}
		if r["method"] == c.Method {
			if _, seen := mine[k]; !seen {
				order = append(order, k)
			}
			mine[k] = r.Float(c.Metric)
		}
	}
	var diffs []float64
	for _, k := range order {
		b, ok := theirs[k]
		a := mine[k]
		if !ok || math.IsNaN(a) || math.IsNaN(b) {
			continue
		}
		diffs = append(diffs, a-b)
	}
	return diffs
}

// variance is the squared standard error of a summary mean, sd²/n; zero
// for a value computed once (n = 1 or no sd, such as a variability
// interval's length, a statistic of the whole run), which is then taken
// as fixed.
func variance(s results.SummaryRow) float64 {
	if s.N < 2 || math.IsNaN(s.SD) {
		return 0
	}
	return s.SD * s.SD / float64(s.N)
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, v := range xs {
		mean += v
	}
	mean /= float64(len(xs))
	for _, v := range xs {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// index finds summary rows by (dataset, method, metric, x).
type index struct {
	rows      map[string]results.SummaryRow
	xsOf      map[string][]float64
	synthetic map[string]bool
}

func indexSummary(summary []results.SummaryRow) *index {
	idx := &index{rows: map[string]results.SummaryRow{}, xsOf: map[string][]float64{}, synthetic: map[string]bool{}}
	for _, s := range summary {
		idx.rows[fmt.Sprintf("%s|%s|%s|%v", s.Dataset, s.Method, s.Metric, s.X)] = s
		k := s.Dataset + "|" + s.Method + "|" + s.Metric
		if !slices.Contains(idx.xsOf[k], s.X) {
			idx.xsOf[k] = append(idx.xsOf[k], s.X)
		}
		if s.DataSource != "real" {
			idx.synthetic[s.Dataset] = true
		}
	}
	return idx
}

func (idx *index) get(ds, method, metric string, x float64) (results.SummaryRow, bool) {
	s, ok := idx.rows[fmt.Sprintf("%s|%s|%s|%v", ds, method, metric, x)]
	return s, ok
}

func (idx *index) xs(ds, method, metric string) []float64 {
	xs := slices.Clone(idx.xsOf[ds+"|"+method+"|"+metric])
	sort.Float64s(xs)
	return xs
}

// CSV encodes results as claims.csv.
func CSV(rs []Result) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(Columns)
	for _, r := range rs {
		w.Write([]string{r.Experiment, r.ClaimID, r.Source, r.Statement, r.Dataset, r.Method, r.Metric,
			results.FormatFloat(r.X), results.FormatFloat(r.Paper), results.FormatFloat(r.Ours),
			results.FormatFloat(r.CILow), results.FormatFloat(r.CIHigh), r.Rule, r.Verdict})
	}
	w.Flush()
	return b.Bytes(), w.Error()
}
