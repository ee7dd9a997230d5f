package results

import (
	"math"
	"sort"

	"github.com/dprepro/dprepro/core/metrics"
	"github.com/dprepro/dprepro/core/randx"
)

// SummaryOptions configures Summarize.
type SummaryOptions struct {
	Experiment string   // spec id, the experiment column
	XName      string   // name of the x variable, e.g. "alpha"
	XCol       string   // row column holding x
	Metrics    []string // row columns to summarize, in output order
	Bootstrap  int      // bootstrap resamples for the CI of each mean
	Level      float64  // CI level, e.g. 0.95
	Seed       int64    // root seed; each cell's bootstrap stream is derived from it
}

// Summarize groups rows by (dataset, data_source, method, x) and, for each
// metric, reports the mean, the unbiased sample sd, and the percentile
// bootstrap CI of the mean. NaN values (e.g. an AUC on a fold holding one
// class) are left out and n counts the values used. Groups come in the order
// datasets and methods first appear in rows, then by ascending x. The output
// depends only on the rows' values and order and on the seed.
func Summarize(rows []Row, o SummaryOptions) []SummaryRow {
	type key struct {
		dataset, source, method string
		x                       float64
	}
	dsOrder, mOrder := map[string]int{}, map[string]int{}
	groups := map[key][]Row{}
	var keys []key
	for _, r := range rows {
		k := key{r["dataset"], r["data_source"], r["method"], r.Float(o.XCol)}
		if _, ok := dsOrder[k.dataset]; !ok {
			dsOrder[k.dataset] = len(dsOrder)
		}
		if _, ok := mOrder[k.method]; !ok {
			mOrder[k.method] = len(mOrder)
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if dsOrder[a.dataset] != dsOrder[b.dataset] {
			return dsOrder[a.dataset] < dsOrder[b.dataset]
		}
		if mOrder[a.method] != mOrder[b.method] {
			return mOrder[a.method] < mOrder[b.method]
		}
		return a.x < b.x
	})
	var out []SummaryRow
	vals := make([]float64, 0, 128)
	for _, k := range keys {
		for _, m := range o.Metrics {
			vals = vals[:0]
			for _, r := range groups[k] {
				if v := r.Float(m); !math.IsNaN(v) {
					vals = append(vals, v)
				}
			}
			s := SummaryRow{
				Experiment: o.Experiment, Dataset: k.dataset, DataSource: k.source,
				Method: k.method, XName: o.XName, X: k.x, Metric: m, N: len(vals),
				Mean: math.NaN(), SD: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN(),
			}
			if len(vals) > 0 {
				s.Mean, s.SD = metrics.MeanSD(vals)
				rng := randx.New(uint64(o.Seed), "summary", o.Experiment, k.dataset, k.method, FormatFloat(k.x), m)
				_, s.CILow, s.CIHigh = metrics.MeanCI(rng, vals, o.Level, o.Bootstrap)
			}
			out = append(out, s)
		}
	}
	return out
}
