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
//     variability interval's length, counts as fixed); its 95% CI,
//     mean ± t·SE, decides: held when it lies on the claimed side of 0,
//     not held when it lies on the other, inconclusive when it straddles
//     0. t is Student's 0.975 quantile on n − 1 degrees of freedom for n
//     paired differences (exact for normal differences: a false "greater"
//     is held with probability 2.5%), and on min(na, nb) − 1 for an
//     unpaired difference of na and nb values (Hsu's conservative
//     solution of the Behrens–Fisher problem: at most 2.5% whatever the
//     ratio of the variances, Mickey & Brown 1966; Welch's degrees of
//     freedom reach 3.8% at 3 vs 30 values), a side taken as fixed left
//     out. The normal quantile 1.96 would hold a false "greater" with
//     probability 6.1% at n = 5 paired replicates (calibration_test.go).
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
// gets "missing", with the reason in the reason column: which of the
// dataset, the method (the claim's or its than), the metric, the x was not
// run, or that every value of the cell was NaN (see [Reasons]).
//
// # Nothing vanishes
//
// Every claim of a spec yields at least one row of claims.csv, whatever
// the run holds: a claim without x whose method the run lacks gets one
// "missing" row at x = NaN saying why, rather than no row at all (the
// claims' names are checked at load against what the kind produces,
// experiments.Producer, so this is the case of a profile that runs less,
// or of a kind that declares nothing).
package claims

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/statcrit"
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

// Columns is the claims.csv schema. reason is empty but for a missing
// verdict (see [Reasons]).
var Columns = []string{"experiment", "claim_id", "source", "statement", "dataset", "method", "metric", "x", "paper", "ours", "ci_low", "ci_high", "rule", "verdict", "reason"}

// LegacyColumns is the claims.csv schema before the reason column; such
// files (results/reference, results/paper, older runs) are still read,
// with every reason empty.
var LegacyColumns = Columns[:len(Columns)-1]

// Header returns the column lookup of a claims.csv header (the index of a
// column, -1 for one the file does not have: reason in a legacy file), or
// false when the header is neither [Columns] nor [LegacyColumns].
func Header(h []string) (col func(name string) int, ok bool) {
	if !slices.Equal(h, Columns) && !slices.Equal(h, LegacyColumns) {
		return nil, false
	}
	return func(name string) int { return slices.Index(h, name) }, true
}

// Reasons of a "missing" verdict: the first words of [Result.Reason],
// which go on to name what the run has instead.
const (
	DatasetNotRun = "dataset not run" // the run has no row of the claim's dataset
	MethodNotRun  = "method not run"  // … of its method, or of its than, on that dataset
	MetricNotRun  = "metric not run"  // … of its metric, or of its than_metric, for that method
	XNotRun       = "x not run"       // … at that x (a quick profile sweeps fewer values)
	NoValues      = "no values"       // every value of the cell is NaN (n = 0)
	TooFewX       = "too few x"       // a trend, and the run has fewer than two of its x
)

// Reasons lists the reasons of a missing verdict, in the order they are
// looked for.
var Reasons = []string{DatasetNotRun, MethodNotRun, MetricNotRun, XNotRun, NoValues, TooFewX}

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
	// Reason says why the verdict is missing: one of [Reasons] and what
	// the run has instead, e.g. "x not run (the run has alpha = 1, 2 of
	// stability on magic)". Empty for any other verdict.
	Reason string
}

// Options configures Evaluate.
type Options struct {
	// PairKey are the rows.csv columns that identify a replicate across
	// methods at one dataset and x (e.g. rep, fold): rows of two methods
	// with equal values in them are paired. Empty: differences are
	// unpaired.
	PairKey []string
}

// level is the two-sided level of the difference's interval: 95%.
const level = 0.95

// tQuantile returns Student's two-sided [level] quantile on nu degrees
// of freedom, the normal one for nu = +Inf.
func tQuantile(nu float64) float64 { return statcrit.TQuantile(1-(1-level)/2, nu) }

// hsuDF returns the degrees of freedom of an unpaired difference of two
// means whose squared standard errors are va and vb on na and nb values:
// min(na, nb) − 1 over the sides that vary (Hsu 1938), so that the
// interval's false-held rate is at most its nominal one for every ratio
// of the variances (Mickey & Brown 1966). A side taken as fixed
// (variance 0) is left out, so that ν = na − 1 when b is fixed; +Inf
// when both are.
func hsuDF(va float64, na int, vb float64, nb int) float64 {
	nu := math.Inf(1)
	if va > 0 {
		nu = float64(na - 1)
	}
	if vb > 0 {
		nu = math.Min(nu, float64(nb-1))
	}
	return nu
}

// Evaluate decides every claim of spec on a run's rows and summary. Every
// claim yields at least one Result.
func Evaluate(spec *experiments.Spec, rows []results.Row, summary []results.SummaryRow, o Options) []Result {
	idx := indexSummary(summary)
	var out []Result
	for _, c := range spec.Claims {
		ds := c.Dataset
		if all := spec.ClaimDatasets(); ds == "" && len(all) == 1 {
			ds = all[0]
		}
		base := Result{Experiment: spec.ID, ClaimID: c.ID, Source: c.Source, Statement: c.Statement,
			Dataset: ds, Method: c.Method, Metric: c.Metric, Rule: c.Rule, Paper: math.NaN()}
		missing := func(r Result, reason string) Result {
			r.Ours, r.CILow, r.CIHigh, r.Verdict, r.Reason = math.NaN(), math.NaN(), math.NaN(), Missing, reason
			return r
		}
		xs := c.X
		if len(xs) == 0 {
			xs = idx.xs(ds, c.Method, c.Metric)
		}
		synthetic := idx.synthetic[ds]
		switch c.Rule {
		case experiments.RuleIncreasing, experiments.RuleDecreasing:
			r := base
			r.X = math.NaN()
			r.Ours, r.CILow, r.CIHigh, r.Verdict, r.Reason = trend(idx, ds, c, xs)
			out = append(out, finish(r, synthetic))
			continue
		}
		if len(xs) == 0 {
			// No x named, and the run has none of the claim's cells: one
			// row says why, so that the claim is counted (missing), never
			// dropped.
			r := base
			r.X = math.NaN()
			out = append(out, missing(r, idx.why(ds, c.Method, c.Metric)))
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
				out = append(out, missing(r, idx.why(ds, c.Method, c.Metric)))
				continue
			}
			if s.N < 1 {
				out = append(out, missing(r, noValues(s)))
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
				d, lo, hi, reason := difference(rows, idx, ds, c, x, o.PairKey)
				if reason != "" {
					out = append(out, missing(r, reason))
					continue
				}
				r.Ours, r.CILow, r.CIHigh = d, lo, hi
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

// trend decides an increasing/decreasing claim over xs; reason is set
// when the verdict is missing.
func trend(idx *index, ds string, c experiments.ClaimSpec, xs []float64) (d, lo, hi float64, verdict, reason string) {
	nan := math.NaN()
	xs = slices.Clone(xs)
	sort.Float64s(xs)
	if len(xs) == 0 {
		return nan, nan, nan, Missing, idx.why(ds, c.Method, c.Metric)
	}
	var ss []results.SummaryRow
	for _, x := range xs {
		s, ok := idx.get(ds, c.Method, c.Metric, x)
		if !ok {
			return nan, nan, nan, Missing, idx.why(ds, c.Method, c.Metric)
		}
		if s.N < 1 {
			return nan, nan, nan, Missing, noValues(s)
		}
		ss = append(ss, s)
	}
	if len(ss) < 2 {
		return nan, nan, nan, Missing, fmt.Sprintf("%s: a trend needs two x, and the run has %s of %s on %s only", TooFewX, idx.xText(ds, c.Method, c.Metric, xs[0]), c.Method, ds)
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
		return d, lo, hi, Held, ""
	case v == NotHeld:
		return d, lo, hi, NotHeld, ""
	}
	return d, lo, hi, Inconclusive, ""
}

// difference returns the mean difference ours − theirs at x and its 95%
// CI: paired over replicates when pairKey is set and both sides are row
// columns (SE sd/√n of the n differences, Student's t on n − 1 degrees
// of freedom), else from the two summary rows (unpaired, SE² the sum of
// the sides' sd²/n, t on min(na, nb) − 1 degrees of freedom, [hsuDF]). When a side has no
// value at x, reason says why (and the rest is NaN).
func difference(rows []results.Row, idx *index, ds string, c experiments.ClaimSpec, x float64, pairKey []string) (d, lo, hi float64, reason string) {
	nan := math.NaN()
	other, otherMetric := c.Than, c.Metric
	if c.ThanMetric != "" {
		other, otherMetric = c.Method, c.ThanMetric
	}
	a, okA := idx.get(ds, c.Method, c.Metric, x)
	b, okB := idx.get(ds, other, otherMetric, x)
	switch {
	case !okA:
		return nan, nan, nan, idx.why(ds, c.Method, c.Metric)
	case !okB:
		return nan, nan, nan, idx.why(ds, other, otherMetric)
	case a.N < 1:
		return nan, nan, nan, noValues(a)
	case b.N < 1:
		return nan, nan, nan, noValues(b)
	}
	if diffs := paired(rows, ds, c, other, otherMetric, a.XName, x, pairKey); len(diffs) >= 2 {
		mean, sd := statcrit.MeanSD(diffs)
		se := sd / math.Sqrt(float64(len(diffs)))
		q := tQuantile(float64(len(diffs) - 1))
		return mean, mean - q*se, mean + q*se, ""
	}
	d = a.Mean - b.Mean
	va, vb := variance(a), variance(b)
	se := math.Sqrt(va + vb)
	q := tQuantile(hsuDF(va, a.N, vb, b.N))
	return d, d - q*se, d + q*se, ""
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

// index finds summary rows by (dataset, method, metric, x), and says
// what the run has where it has no such row.
type index struct {
	rows      map[string]results.SummaryRow
	xsOf      map[string][]float64 // by "dataset|method|metric"
	synthetic map[string]bool
	datasets  []string            // in summary order
	methodsOf map[string][]string // by dataset
	metricsOf map[string][]string // by "dataset|method"
	xName     string              // the summary's x_name
}

func indexSummary(summary []results.SummaryRow) *index {
	idx := &index{rows: map[string]results.SummaryRow{}, xsOf: map[string][]float64{}, synthetic: map[string]bool{},
		methodsOf: map[string][]string{}, metricsOf: map[string][]string{}}
	appendNew := func(xs []string, x string) []string {
		if !slices.Contains(xs, x) {
			xs = append(xs, x)
		}
		return xs
	}
	for _, s := range summary {
		idx.rows[fmt.Sprintf("%s|%s|%s|%v", s.Dataset, s.Method, s.Metric, s.X)] = s
		k := s.Dataset + "|" + s.Method + "|" + s.Metric
		if !slices.Contains(idx.xsOf[k], s.X) {
			idx.xsOf[k] = append(idx.xsOf[k], s.X)
		}
		if s.DataSource != "real" {
			idx.synthetic[s.Dataset] = true
		}
		idx.datasets = appendNew(idx.datasets, s.Dataset)
		idx.methodsOf[s.Dataset] = appendNew(idx.methodsOf[s.Dataset], s.Method)
		idx.metricsOf[s.Dataset+"|"+s.Method] = appendNew(idx.metricsOf[s.Dataset+"|"+s.Method], s.Metric)
		if idx.xName == "" {
			idx.xName = s.XName
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

// why says why the run has no summary row of (ds, method, metric) at
// some x, beginning with one of Reasons: the first of the dataset, the
// method, the metric and the x that the run lacks, and what it has
// instead.
func (idx *index) why(ds, method, metric string) string {
	has := func(names []string) string {
		if len(names) == 0 {
			return "none"
		}
		return strings.Join(names, ", ")
	}
	switch {
	case len(idx.datasets) == 0:
		return fmt.Sprintf("%s: the run's summary is empty", DatasetNotRun)
	case ds == "":
		return fmt.Sprintf("%s: the claim names no dataset and the spec has not exactly one (the run has %s)", DatasetNotRun, has(idx.datasets))
	case !slices.Contains(idx.datasets, ds):
		return fmt.Sprintf("%s: %s (the run has %s)", DatasetNotRun, ds, has(idx.datasets))
	case !slices.Contains(idx.methodsOf[ds], method):
		return fmt.Sprintf("%s: %s on %s (the run has %s)", MethodNotRun, method, ds, has(idx.methodsOf[ds]))
	case !slices.Contains(idx.metricsOf[ds+"|"+method], metric):
		return fmt.Sprintf("%s: %s of %s on %s (the summary has %s)", MetricNotRun, metric, method, ds, has(idx.metricsOf[ds+"|"+method]))
	}
	// The x itself is the row's x column: the reason is the same for
	// every x a profile does not run.
	return fmt.Sprintf("%s (the run has %s of %s on %s)", XNotRun, idx.xText(ds, method, metric, math.NaN()), method, ds)
}

// xLabel names the swept value ("alpha", "eps1"), or "x".
func (idx *index) xLabel() string {
	if idx.xName == "" {
		return "x"
	}
	return idx.xName
}

// xText lists the x the run has of (ds, method, metric): "alpha = 1, 2"
// (only is one of them, for a trend, or NaN).
func (idx *index) xText(ds, method, metric string, only float64) string {
	xs := idx.xs(ds, method, metric)
	if !math.IsNaN(only) {
		xs = []float64{only}
	}
	vs := make([]string, len(xs))
	for i, x := range xs {
		vs[i] = results.FormatFloat(x)
	}
	return idx.xLabel() + " = " + strings.Join(vs, ", ")
}

// noValues is the reason of a summary cell with n = 0.
func noValues(s results.SummaryRow) string {
	return fmt.Sprintf("%s: every %s of %s on %s at this %s is NaN (n = 0)", NoValues, s.Metric, s.Method, s.Dataset, s.XName)
}

// CSV encodes results as claims.csv.
func CSV(rs []Result) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(Columns)
	for _, r := range rs {
		w.Write([]string{r.Experiment, r.ClaimID, r.Source, r.Statement, r.Dataset, r.Method, r.Metric,
			results.FormatFloat(r.X), results.FormatFloat(r.Paper), results.FormatFloat(r.Ours),
			results.FormatFloat(r.CILow), results.FormatFloat(r.CIHigh), r.Rule, r.Verdict, r.Reason})
	}
	w.Flush()
	return b.Bytes(), w.Error()
}
