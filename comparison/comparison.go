// Package comparison compares every method of a run with a baseline the
// spec names, as a researcher asks "is my method better than objective
// perturbation at ε = 0.1?": for each (dataset, privacy level x, metric,
// method) the differences method − baseline paired by replicate (the
// rows.csv columns of the kind's pair key, e.g. repetition and fold: both
// methods saw the same folds), their mean with a Student-t confidence
// interval, a two-sided paired t-test, Holm's adjustment of its p-values
// across the grid, and a win/tie/loss verdict. The runner writes the
// result as comparison.csv, tables/comparison.md and one figure per
// metric (runner.Comparer).
//
// # Statistics
//
// For n pairs with differences d_i (method − baseline), mean d̄ and
// standard deviation s:
//
//	CI  = d̄ ± t_{n−1, 1−(1−level)/2} · s/√n
//	t   = d̄ / (s/√n),  p = 2·P(T_{n−1} ≥ |t|)
//
// Holm (1979): the m p-values of one metric (every dataset, x and method
// of the run) sorted p_(1) ≤ … ≤ p_(m) are adjusted to
// p̃_(k) = max_{j ≤ k} min(1, (m − j + 1)·p_(j)), which controls the
// family-wise error rate of the metric's verdicts at 1 − level. A cell is
// a win when p̃ < 1 − level and the difference is in the metric's better
// direction, a loss when in the other, a tie otherwise. With s = 0 the
// difference is exact: p = 0 when d̄ ≠ 0, 1 when d̄ = 0. A cell with fewer
// than two pairs has no interval or test ("n/a").
//
// The pairs are matched on the pair key; a replicate that one of the two
// methods lacks (a failed or filtered row) is left out and the cell's
// pairs count says how many were used. Paired differences remove the
// between-fold variance that both methods share, which is why the
// comparison is paired and not two-sample.
package comparison

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dprepro/dprepro/internal/statcrit"
	"github.com/dprepro/dprepro/results"
)

// Metric is one metric compared, with its better direction.
type Metric struct {
	Name           string // a rows.csv column, e.g. "auc"
	HigherIsBetter bool   // AUC: true; error rate, MSE: false
}

// Options say what a run compares.
type Options struct {
	// Baseline is the method label (rows' method column) every other
	// method is compared with. Required.
	Baseline string
	// Methods are the method labels compared with it, in order (nil:
	// every other method of the rows, in order of first appearance).
	Methods []string
	// XCol is the rows.csv column of the privacy level (e.g. "epsilon");
	// XName its name in comparison.csv. Required.
	XCol, XName string
	// Metrics are compared in this order. Required.
	Metrics []Metric
	// PairKey are the rows.csv columns that identify a replicate at one
	// dataset and x (e.g. repetition, fold). Required.
	PairKey []string
	// Level is the confidence level of the intervals; 1 − Level the
	// family-wise error rate of each metric's verdicts. Zero means 0.95.
	Level float64
	// NotPrivate are the method labels whose releases are not private (a
	// selection that reads the test fold, an exact argmax): Table marks
	// them, so that a win is not read as a private result.
	NotPrivate []string
}

// Cell is one comparison: a method against the baseline at one dataset,
// x and metric.
type Cell struct {
	Dataset, Method, Baseline, Metric string
	X                                 float64
	Pairs                             int     // replicates present for both
	Mean, SD                          float64 // of the differences method − baseline
	CILow, CIHigh                     float64 // t interval of the mean difference
	P, PHolm                          float64 // two-sided paired t-test; Holm-adjusted over the metric's cells
	Outcome                           string  // "win", "tie", "loss" (for the method), or "n/a"
	BaselineMean, MethodMean          float64 // the two means over the pairs used
}

// Outcomes.
const (
	Win  = "win"
	Tie  = "tie"
	Loss = "loss"
	NA   = "n/a"
)

// Compare returns the cells of rows (a run's rows.csv), in order: metric,
// dataset (first appearance), method, x ascending. Rows whose metric or x
// is not finite are left out of that metric's pairs. It returns an error
// when o lacks a required field or the baseline has no rows.
func Compare(rows []results.Row, o Options) ([]Cell, error) {
	if o.Baseline == "" || o.XCol == "" || len(o.Metrics) == 0 || len(o.PairKey) == 0 {
		return nil, fmt.Errorf("comparison: options need a baseline, an x column, metrics and a pair key")
	}
	level := o.Level
	if level == 0 {
		level = 0.95
	}
	if !(level > 0 && level < 1) {
		return nil, fmt.Errorf("comparison: level %v not in (0, 1)", level)
	}
	var datasets, methods []string
	type key struct {
		ds, method, pair string
		x                float64
	}
	byKey := map[key]results.Row{}
	hasBaseline := false
	for _, r := range rows {
		ds, m := r["dataset"], r["method"]
		x := r.Float(o.XCol)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue // e.g. the reference fit at ε = +Inf
		}
		if !slices.Contains(datasets, ds) {
			datasets = append(datasets, ds)
		}
		if m == o.Baseline {
			hasBaseline = true
		} else if o.Methods == nil && !slices.Contains(methods, m) {
			methods = append(methods, m)
		}
		parts := make([]string, len(o.PairKey))
		for i, c := range o.PairKey {
			parts[i] = r[c]
		}
		byKey[key{ds, m, strings.Join(parts, "\x00"), x}] = r
	}
	if !hasBaseline {
		return nil, fmt.Errorf("comparison: the baseline %q has no rows", o.Baseline)
	}
	if o.Methods != nil {
		methods = o.Methods
	}
	// The x values and pair keys of the baseline, per dataset.
	type dsx struct {
		ds string
		x  float64
	}
	pairs := map[dsx][]string{}
	var xs = map[string][]float64{}
	for k := range byKey {
		if k.method != o.Baseline {
			continue
		}
		p := dsx{k.ds, k.x}
		pairs[p] = append(pairs[p], k.pair)
		if !slices.Contains(xs[k.ds], k.x) {
			xs[k.ds] = append(xs[k.ds], k.x)
		}
	}
	for _, v := range pairs {
		sort.Strings(v)
	}
	for _, v := range xs {
		slices.Sort(v)
	}
	var out []Cell
	for _, met := range o.Metrics {
		first := len(out)
		for _, ds := range datasets {
			for _, m := range methods {
				for _, x := range xs[ds] {
					var d, a, b []float64
					for _, pk := range pairs[dsx{ds, x}] {
						rb, okb := byKey[key{ds, o.Baseline, pk, x}]
						rm, okm := byKey[key{ds, m, pk, x}]
						if !okb || !okm {
							continue
						}
						vb, vm := rb.Float(met.Name), rm.Float(met.Name)
						if math.IsNaN(vb) || math.IsNaN(vm) || math.IsInf(vb, 0) || math.IsInf(vm, 0) {
							continue
						}
						d = append(d, vm-vb)
						a = append(a, vm)
						b = append(b, vb)
					}
					if len(d) == 0 {
						continue // the method does not run at this x
					}
					c := Cell{Dataset: ds, Method: m, Baseline: o.Baseline, Metric: met.Name, X: x, Pairs: len(d),
						MethodMean: mean(a), BaselineMean: mean(b)}
					c.Mean, c.SD = statcrit.MeanSD(d)
					c.CILow, c.CIHigh, c.P = pairedT(c.Mean, c.SD, len(d), level)
					out = append(out, c)
				}
			}
		}
		holm(out[first:])
		for i := first; i < len(out); i++ {
			out[i].Outcome = outcome(out[i], met.HigherIsBetter, 1-level)
		}
	}
	return out, nil
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// pairedT returns the t interval at level and the two-sided p-value of
// the mean difference m of n pairs with standard deviation sd.
func pairedT(m, sd float64, n int, level float64) (lo, hi, p float64) {
	if n < 2 || math.IsNaN(sd) {
		return math.NaN(), math.NaN(), math.NaN()
	}
	if sd == 0 {
		if m == 0 {
			return m, m, 1
		}
		return m, m, 0
	}
	se := sd / math.Sqrt(float64(n))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)} // lint:nosrc (quantile and CDF only)
	q := statcrit.TQuantile(1-(1-level)/2, float64(n-1))
	p = 2 * t.Survival(math.Abs(m)/se)
	return m - q*se, m + q*se, math.Min(1, p)
}

// holm sets PHolm of cs (one metric's cells): Holm's step-down
// adjustment of their p-values; a cell without a p-value keeps NaN and
// does not count in m.
func holm(cs []Cell) {
	var idx []int
	for i := range cs {
		cs[i].PHolm = math.NaN()
		if !math.IsNaN(cs[i].P) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return cs[idx[a]].P < cs[idx[b]].P })
	m := len(idx)
	running := 0.0
	for j, i := range idx {
		adj := math.Min(1, float64(m-j)*cs[i].P)
		running = math.Max(running, adj)
		cs[i].PHolm = running
	}
}

func outcome(c Cell, higherBetter bool, alpha float64) string {
	if math.IsNaN(c.PHolm) {
		return NA
	}
	if c.PHolm >= alpha {
		return Tie
	}
	if (c.Mean > 0) == higherBetter {
		return Win
	}
	return Loss
}

// Columns is the header of comparison.csv.
var Columns = []string{"dataset", "method", "baseline", "metric", "x_name", "x", "pairs",
	"method_mean", "baseline_mean", "diff_mean", "diff_sd", "ci_low", "ci_high", "ci_level", "p_value", "p_holm", "outcome"}

// CSV encodes cells as comparison.csv; xName names the x column's
// quantity ("epsilon") and level the intervals' level.
func CSV(cells []Cell, xName string, level float64) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write(Columns); err != nil {
		return nil, err
	}
	for _, c := range cells {
		rec := []string{c.Dataset, c.Method, c.Baseline, c.Metric, xName, results.FormatFloat(c.X), strconv.Itoa(c.Pairs),
			results.FormatFloat(c.MethodMean), results.FormatFloat(c.BaselineMean),
			results.FormatFloat(c.Mean), results.FormatFloat(c.SD), results.FormatFloat(c.CILow), results.FormatFloat(c.CIHigh),
			results.FormatFloat(level), results.FormatFloat(c.P), results.FormatFloat(c.PHolm), c.Outcome}
		if err := w.Write(rec); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// Table returns the Markdown win/tie/loss table of cells: one row per
// (metric, method), counting its cells' outcomes over datasets and x,
// then one row per cell with the difference and its interval; o gives
// the x name, the level (zero: 0.95) and the methods marked not private.
func Table(cells []Cell, o Options) []byte {
	xName, level := o.XName, o.Level
	if level == 0 {
		level = 0.95
	}
	var b strings.Builder
	if len(cells) == 0 {
		return []byte("No comparison: no method shares a dataset and privacy level with the baseline.\n")
	}
	fmt.Fprintf(&b, "Each method against the baseline **%s**, paired by replicate: win/tie/loss per metric over every (dataset, %s), a win or loss when the Holm-adjusted paired t-test rejects at %.3g (family: the metric's cells).\n\n", cells[0].Baseline, xName, 1-level)
	label := func(m string) string { return m }
	if slices.Contains(o.NotPrivate, cells[0].Baseline) {
		fmt.Fprintf(&b, "The baseline **%s** is **not private**: its release reads the test fold (an oracle) or takes an exact argmax.\n\n", cells[0].Baseline)
	}
	if slices.ContainsFunc(cells, func(c Cell) bool { return slices.Contains(o.NotPrivate, c.Method) }) {
		b.WriteString("A method marked **(not private)** releases a choice that is not private — it reads the test fold (an oracle) or takes an exact argmax: its wins are no private result.\n\n")
		label = func(m string) string {
			if slices.Contains(o.NotPrivate, m) {
				return m + " **(not private)**"
			}
			return m
		}
	}
	b.WriteString("| metric | method | win | tie | loss | n/a |\n|---|---|---:|---:|---:|---:|\n")
	type mk struct{ metric, method string }
	var order []mk
	count := map[mk]map[string]int{}
	for _, c := range cells {
		k := mk{c.Metric, c.Method}
		if count[k] == nil {
			count[k] = map[string]int{}
			order = append(order, k)
		}
		count[k][c.Outcome]++
	}
	for _, k := range order {
		n := count[k]
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d |\n", k.metric, label(k.method), n[Win], n[Tie], n[Loss], n[NA])
	}
	fmt.Fprintf(&b, "\n| metric | dataset | method | %s | pairs | %s − %s | %.3g %% CI | p (Holm) | outcome |\n|---|---|---|---:|---:|---:|---|---:|---|\n",
		xName, "method", cells[0].Baseline, 100*level)
	for _, c := range cells {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %.4g | [%.4g, %.4g] | %.3g | %s |\n",
			c.Metric, c.Dataset, label(c.Method), results.FormatFloat(c.X), c.Pairs, c.Mean, c.CILow, c.CIHigh, c.PHolm, c.Outcome)
	}
	return []byte(b.String())
}

// SummaryRows returns cells as summary rows for a figure of the
// differences: metric "<metric>_diff", the method's label, x, the mean
// difference and its interval.
func SummaryRows(cells []Cell, experiment, xName string) []results.SummaryRow {
	var out []results.SummaryRow
	for _, c := range cells {
		out = append(out, results.SummaryRow{
			Experiment: experiment, Dataset: c.Dataset, Method: c.Method, Metric: c.Metric + "_diff",
			XName: xName, X: c.X, N: c.Pairs, Mean: c.Mean, SD: c.SD, CILow: c.CILow, CIHigh: c.CIHigh,
		})
	}
	return out
}
