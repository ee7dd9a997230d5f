package results

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Cell is the outcome of comparing one summary cell (experiment, dataset,
// method, x, metric) of a run with its reference.
type Cell struct {
	Key      string
	Ref, Got float64
	Diff     float64 // |Got − Ref|
	Tol      float64 // the tolerance applied (0 in exact mode)
	Status   string  // CellSame, CellMoved, CellOut, CellMissing or CellNew
}

// Cell statuses.
const (
	CellSame    = "same"             // bit-identical
	CellMoved   = "moved"            // different, within tolerance
	CellOut     = "out of tolerance" // different beyond tolerance (or at all, in exact mode)
	CellMissing = "missing in run"   // in the reference only
	CellNew     = "new in run"       // in the run only
)

// Comparison is the outcome of [CompareSummaries].
type Comparison struct {
	Exact  bool   // every value had to match bit for bit
	Cells  []Cell // every compared cell, in reference order then new ones
	Failed int    // cells out of tolerance, missing or new
	Moved  int    // cells that differ but are within tolerance
}

// RelTolNoCI is the relative tolerance of a cell without a confidence
// interval (one value per cell, e.g. a variability-interval length), in
// tolerance mode.
const RelTolNoCI = 1e-9

// CompareSummaries compares a run's summary rows with the reference's.
//
// In exact mode (same spec, seed, profile, platform and data: see
// [SameSetting]) every mean, sd and CI bound must be bit-identical. In
// tolerance mode a mean may move by
//
//	z · √(hw_ref² + hw_run²)
//
// with hw the half-width of the cell's 95 % percentile-bootstrap CI of the
// mean (CIHigh − CILow)/2: z = 3 flags a move larger than three combined
// CI half-widths — about 3·1.96 standard errors — which sampling noise
// alone (another seed, another platform's rounding) produces with
// negligible probability. A cell without a CI (fewer than two values) may
// move by RelTolNoCI relative to 1 + |reference|. Two NaN means agree.
func CompareSummaries(ref, run []SummaryRow, exact bool, z float64) Comparison {
	key := func(r SummaryRow) string {
		return strings.Join([]string{r.Experiment, r.Dataset, r.Method, r.XName, FormatFloat(r.X), r.Metric}, " | ")
	}
	got := make(map[string]SummaryRow, len(run))
	for _, r := range run {
		got[key(r)] = r
	}
	c := Comparison{Exact: exact}
	seen := map[string]bool{}
	for _, r := range ref {
		k := key(r)
		seen[k] = true
		g, ok := got[k]
		if !ok {
			c.Cells = append(c.Cells, Cell{Key: k, Ref: r.Mean, Got: math.NaN(), Diff: math.NaN(), Status: CellMissing})
			c.Failed++
			continue
		}
		cell := Cell{Key: k, Ref: r.Mean, Got: g.Mean, Diff: math.Abs(g.Mean - r.Mean)}
		same := sameFloat(r.Mean, g.Mean) && sameFloat(r.SD, g.SD) && sameFloat(r.CILow, g.CILow) && sameFloat(r.CIHigh, g.CIHigh) && r.N == g.N
		switch {
		case same:
			cell.Status = CellSame
		case exact:
			cell.Status = CellOut
		default:
			cell.Tol = tolerance(r, g, z)
			if math.IsNaN(r.Mean) && math.IsNaN(g.Mean) || cell.Diff <= cell.Tol {
				cell.Status = CellMoved
			} else {
				cell.Status = CellOut
			}
		}
		switch cell.Status {
		case CellOut:
			c.Failed++
		case CellMoved:
			c.Moved++
		}
		c.Cells = append(c.Cells, cell)
	}
	for _, r := range run {
		if k := key(r); !seen[k] {
			c.Cells = append(c.Cells, Cell{Key: k, Ref: math.NaN(), Got: r.Mean, Diff: math.NaN(), Status: CellNew})
			c.Failed++
		}
	}
	return c
}

// sameFloat is bit equality, with NaN equal to NaN.
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

func tolerance(ref, run SummaryRow, z float64) float64 {
	hw := func(r SummaryRow) float64 { return (r.CIHigh - r.CILow) / 2 }
	a, b := hw(ref), hw(run)
	if !(a >= 0 && b >= 0) || math.IsInf(a, 0) || math.IsInf(b, 0) || (a == 0 && b == 0 && ref.N < 2) {
		return RelTolNoCI * (1 + math.Abs(ref.Mean))
	}
	return z*math.Sqrt(a*a+b*b) + RelTolNoCI*(1+math.Abs(ref.Mean))
}

// SameSetting reports whether a run and its reference were made with the
// same spec (resolved hash), seed, profile, platform (GOOS, GOARCH,
// GOAMD64) and data sources, so that their summaries must be bit-identical;
// otherwise it says what differs.
func SameSetting(ref, run Manifest) (bool, string) {
	var diffs []string
	diff := func(what, a, b string) {
		if a != b {
			diffs = append(diffs, fmt.Sprintf("%s %q vs %q", what, a, b))
		}
	}
	diff("spec", ref.Spec.Hash, run.Spec.Hash)
	diff("seed", fmt.Sprint(ref.Seed), fmt.Sprint(run.Seed))
	diff("profile", ref.Profile, run.Profile)
	diff("platform", ref.GOOS+"/"+ref.GOARCH+"/"+ref.GOAMD64, run.GOOS+"/"+run.GOARCH+"/"+run.GOAMD64)
	diff("data", dataSources(ref), dataSources(run))
	return len(diffs) == 0, strings.Join(diffs, "; ")
}

func dataSources(m Manifest) string {
	var s []string
	for _, d := range m.Datasets {
		var files []string
		for _, f := range d.Files {
			files = append(files, f.SHA256)
		}
		s = append(s, d.Name+"="+d.Source+":"+strings.Join(files, ","))
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}
