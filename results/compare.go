package results

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Cell is the outcome of comparing one summary cell (experiment, dataset,
// method, x, metric) of a run with its reference.
type Cell struct {
	Key      string
	Ref, Got float64 // the means
	Diff     float64 // |Got − Ref|
	Tol      float64 // the tolerance of the mean applied (0 in exact mode)
	// RefSD and GotSD are the standard deviations; SDLimit is the largest
	// run sd the spread check allowed (+Inf when it did not apply, 0 in
	// exact mode).
	RefSD, GotSD, SDLimit float64
	Status                string // CellSame, CellMoved, CellOut, CellSpread, CellMissing or CellNew
}

// Cell statuses.
const (
	CellSame   = "same"             // bit-identical
	CellMoved  = "moved"            // different, within tolerance
	CellOut    = "out of tolerance" // mean beyond tolerance (or any difference, in exact mode)
	CellSpread = "spread grew"      // mean within tolerance, sd beyond what sampling allows
	CellFewer  = "fewer values"     // the run has fewer than half the reference's values
	// CellUnjudged is a cell whose reference has a single value (no CI,
	// e.g. a variability-interval length) and whose mean moved beyond
	// rounding in tolerance mode: there is no uncertainty to judge the move
	// by, so it is listed but does not fail the check.
	CellUnjudged = "unjudged (one reference value)"
	CellMissing  = "missing in run" // in the reference only
	CellNew      = "new in run"     // in the run only
)

// Comparison is the outcome of [CompareSummaries].
type Comparison struct {
	Exact  bool   // every value had to match bit for bit
	Cells  []Cell // every compared cell, in reference order then new ones
	Failed int    // cells out of tolerance, with a grown spread, missing or new
	Moved  int    // cells that differ but are within tolerance
	// Unjudged counts the CellUnjudged cells: moved, with nothing to judge
	// the move by (tolerance mode only).
	Unjudged int
}

// RelTolNoCI is the relative tolerance of a cell without a confidence
// interval (one value per cell, e.g. a variability-interval length), in
// tolerance mode; it also bounds the sd of a run whose reference had sd 0.
const RelTolNoCI = 1e-9

// SpreadP is the false-alarm probability of the spread check of one cell
// (see [CompareSummaries]).
const SpreadP = 1e-4

// ErrDuplicateRow is returned by [CompareSummaries] when a summary holds
// two rows for one cell: the file is broken, not identical.
var ErrDuplicateRow = errors.New("duplicated summary row")

// CompareSummaries compares a run's summary rows with the reference's.
// It is an error (wrapping [ErrDuplicateRow]) for either to hold two rows
// with the same experiment, dataset, method, x_name, x and metric.
//
// In exact mode (same design, seed, profile, platform and data, seeded
// noise: see [CompareSettings]) every mean, sd, CI bound and n must be
// bit-identical.
//
// In tolerance mode the run is judged against the reference's uncertainty
// only: a run whose own CI blew up gains no slack from it. A mean may move
// by
//
//	tol = z · √2 · hw_ref + RelTolNoCI · (1 + |mean_ref|)
//
// where hw_ref = (ci_high − ci_low)/2 is the half-width of the reference's
// 95 % bootstrap CI of the mean, about 1.96 standard errors se. The two
// means are independent estimates of the same quantity, each with a
// standard error of about se (same design, so the same number of units), so
// their difference has standard error √2·se and √2·hw_ref is the half-width
// of its 95 % interval: z = 3 allows 3·1.96 ≈ 5.9 standard errors, which
// sampling noise alone (another seed, another platform's rounding) exceeds
// with probability about 4e-9 per cell under normality, when hw_ref
// estimates the standard error well. The relative term absorbs rounding.
//
// A reference cell whose values were all equal (n ≥ 2, sd 0: a coverage of
// 1 on every replicate, a rare event that never occurred, a constant chosen
// index) has no uncertainty of its own, and the run's is never used (it
// could be inflated at will). Its scale is taken from the reference's other
// cells of the same experiment and metric: hw_ref and sd_ref are the medians
// of their positive half-widths and sds (the "sibling" scale); with no such
// cell, only RelTolNoCI remains. A cell whose reference has a single value
// (n < 2, e.g. a variability-interval length) may move by
// RelTolNoCI·(1 + |mean_ref|); beyond that it is CellUnjudged: listed,
// counted, but not failed, because no statement about sampling noise can be
// made from one value per side. Exact mode judges every cell bit for bit.
// Two NaN means agree; one NaN does not.
//
// A cell whose mean is within tolerance must also pass a spread check,
// since a run can keep its means and lose its precision. When both cells
// have n ≥ 2 and sd_ref > 0 (its own or the sibling scale), it fails
// ("spread grew") when
//
//	sd_run > sd_ref · √F⁻¹(1 − SpreadP; n_run − 1, n_ref − 1)
//
// the one-sided F test of equal variances: when the two cells are n_run
// and n_ref independent normal values of one variance, sd_run²/sd_ref²
// follows the F distribution with (n_run − 1, n_ref − 1) degrees of
// freedom, so a cell that did not change fails with probability
// SpreadP = 1e-4. The test assumes normal values; heavy tails (a metric with
// occasional outliers) make false alarms more likely, which the small
// SpreadP leaves room for. Over k cells the false-alarm probability of a
// whole run is at most k·SpreadP. With no scale at all (sd 0 and no
// sibling) the run's sd may not exceed RelTolNoCI·(1 + |mean_ref|). Where
// the check applies, a NaN run sd fails it. A run cell with fewer than half
// the reference's values (n counts the values that were not NaN, e.g. AUCs
// on folds with both classes) fails as CellFewer: the same design yields
// the same number of values up to a few undefined ones.
//
// Measured: quick-profile runs at another seed fail on heavy-tailed cells
// of small n (e.g. an AUC whose 20 reference folds happened to agree to sd
// 0.0034 against 0.023 at the new seed); a seed comparison is meaningful at
// a profile with many replicates. Across platforms, where the values differ
// by rounding only, the rule is far from its limits.
func CompareSummaries(ref, run []SummaryRow, exact bool, z float64) (Comparison, error) {
	key := func(r SummaryRow) string {
		return strings.Join([]string{r.Experiment, r.Dataset, r.Method, r.XName, FormatFloat(r.X), r.Metric}, " | ")
	}
	got := make(map[string]SummaryRow, len(run))
	for _, r := range run {
		k := key(r)
		if _, dup := got[k]; dup {
			return Comparison{}, fmt.Errorf("results: run: %w: %s", ErrDuplicateRow, k)
		}
		got[k] = r
	}
	c := Comparison{Exact: exact}
	sib := siblingScales(ref)
	seen := make(map[string]bool, len(ref))
	for _, r := range ref {
		k := key(r)
		if seen[k] {
			return Comparison{}, fmt.Errorf("results: reference: %w: %s", ErrDuplicateRow, k)
		}
		seen[k] = true
		g, ok := got[k]
		if !ok {
			c.Cells = append(c.Cells, Cell{Key: k, Ref: r.Mean, Got: math.NaN(), Diff: math.NaN(),
				RefSD: r.SD, GotSD: math.NaN(), Status: CellMissing})
			c.Failed++
			continue
		}
		cell := Cell{Key: k, Ref: r.Mean, Got: g.Mean, Diff: math.Abs(g.Mean - r.Mean), RefSD: r.SD, GotSD: g.SD}
		same := sameFloat(r.Mean, g.Mean) && sameFloat(r.SD, g.SD) && sameFloat(r.CILow, g.CILow) && sameFloat(r.CIHigh, g.CIHigh) && r.N == g.N
		switch {
		case same:
			cell.Status = CellSame
		case exact:
			cell.Status = CellOut
		default:
			scaled := r
			if r.N >= 2 && r.SD == 0 && r.CIHigh == r.CILow {
				if sc, ok := sib[r.Experiment+" | "+r.Metric]; ok {
					scaled.CILow, scaled.CIHigh, scaled.SD = r.Mean-sc.hw, r.Mean+sc.hw, sc.sd
				}
			}
			cell.Tol = meanTolerance(scaled, z)
			cell.SDLimit = sdLimit(scaled, g)
			switch {
			case r.N >= 2 && 2*g.N < r.N:
				cell.Status = CellFewer
			case math.IsNaN(r.Mean) && math.IsNaN(g.Mean) || cell.Diff <= cell.Tol:
				if cell.SDLimit < math.Inf(1) && !(g.SD <= cell.SDLimit) {
					cell.Status = CellSpread
				} else {
					cell.Status = CellMoved
				}
			case r.N < 2 && !math.IsNaN(r.Mean) && !math.IsNaN(g.Mean):
				cell.Status = CellUnjudged
			default:
				cell.Status = CellOut
			}
		}
		switch cell.Status {
		case CellOut, CellSpread, CellFewer:
			c.Failed++
		case CellMoved:
			c.Moved++
		case CellUnjudged:
			c.Unjudged++
		}
		c.Cells = append(c.Cells, cell)
	}
	for _, r := range run {
		if k := key(r); !seen[k] {
			c.Cells = append(c.Cells, Cell{Key: k, Ref: math.NaN(), Got: r.Mean, Diff: math.NaN(),
				RefSD: math.NaN(), GotSD: r.SD, Status: CellNew})
			c.Failed++
		}
	}
	return c, nil
}

// sameFloat is bit equality, with NaN equal to NaN.
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

// meanTolerance is the tolerance of a mean in tolerance mode, from the
// reference's CI (or its sibling scale) alone (see CompareSummaries).
func meanTolerance(ref SummaryRow, z float64) float64 {
	rel := RelTolNoCI * (1 + math.Abs(ref.Mean))
	hw := (ref.CIHigh - ref.CILow) / 2
	// A NaN or negative half-width (no CI, or a broken one) and an infinite
	// one give no usable scale: fall back to the relative tolerance rather
	// than accept anything.
	if ref.N < 2 || !(hw >= 0) || math.IsInf(hw, 0) {
		return rel
	}
	return z*math.Sqrt2*hw + rel
}

// scale is a typical uncertainty of a metric in a reference.
type scale struct{ hw, sd float64 }

// siblingScales returns, per "experiment | metric", the medians of the
// positive finite CI half-widths and sds of the reference's cells: the
// scale of a cell whose own values were all equal.
func siblingScales(ref []SummaryRow) map[string]scale {
	hws, sds := map[string][]float64{}, map[string][]float64{}
	for _, r := range ref {
		hw := (r.CIHigh - r.CILow) / 2
		if r.N >= 2 && hw > 0 && r.SD > 0 && !math.IsInf(hw, 0) && !math.IsInf(r.SD, 0) {
			k := r.Experiment + " | " + r.Metric
			hws[k] = append(hws[k], hw)
			sds[k] = append(sds[k], r.SD)
		}
	}
	out := make(map[string]scale, len(hws))
	for k := range hws {
		out[k] = scale{hw: median(hws[k]), sd: median(sds[k])}
	}
	return out
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// sdLimit is the largest run sd the spread check allows, +Inf when the
// check does not apply (see CompareSummaries).
func sdLimit(ref, run SummaryRow) float64 {
	switch {
	case ref.N >= 2 && run.N >= 2 && ref.SD > 0 && !math.IsInf(ref.SD, 1):
		// Upper 1 − SpreadP quantile of F(n_run − 1, n_ref − 1): the tail
		// where the run's variance is larger.
		f := distuv.F{D1: float64(run.N - 1), D2: float64(ref.N - 1)}
		return ref.SD * math.Sqrt(f.Quantile(1-SpreadP))
	case ref.N >= 2 && run.N >= 2 && ref.SD == 0:
		return RelTolNoCI * (1 + math.Abs(ref.Mean))
	}
	return math.Inf(1)
}

// ErrNoDesignHash is returned by [CompareSettings] for a manifest written
// before manifests recorded the design hash (spec.design_sha256).
var ErrNoDesignHash = errors.New("manifest predates design hashes (no spec.design_sha256)")

// Setting is how the setting of a run relates to its reference's.
type Setting struct {
	// Refused says what makes the two incomparable: another spec id,
	// profile, design (any setting but the seed and secure noise) or data.
	// Non-empty means they must not be compared at all.
	Refused []string
	// Differs says what differs that leaves them comparable within
	// sampling tolerance: the seed, the platform, secure noise.
	Differs []string
}

// Exact reports whether the summaries must be bit-identical: nothing
// refused and nothing differs.
func (s Setting) Exact() bool { return len(s.Refused) == 0 && len(s.Differs) == 0 }

// CompareSettings compares the manifests of a run and its reference. The
// two are refused when their spec ids, profiles, design hashes or data
// differ (per dataset: name, real or synthetic, the file SHA-256s of real
// data, the generator of synthetic data). They must be bit-identical when,
// in addition, seed and platform (GOOS, GOARCH, GOAMD64) are the same and
// neither used secure noise (crypto/rand draws do not replay). Otherwise
// they are compared within tolerance.
//
// It is an error (wrapping [ErrNoDesignHash]) for either manifest to lack
// the design hash. Messages put the run first: "X (run) vs Y (reference)".
func CompareSettings(ref, run Manifest) (Setting, error) {
	if ref.Spec.DesignHash == "" {
		return Setting{}, fmt.Errorf("reference %w: the references must be refreshed with this version of dprepro", ErrNoDesignHash)
	}
	if run.Spec.DesignHash == "" {
		return Setting{}, fmt.Errorf("run %w: rerun it with this version of dprepro", ErrNoDesignHash)
	}
	var s Setting
	differ := func(list *[]string, what, a, b string) {
		if a != b {
			*list = append(*list, fmt.Sprintf("%s: %s (run) vs %s (reference)", what, a, b))
		}
	}
	differ(&s.Refused, "spec id differs", run.Spec.ID, ref.Spec.ID)
	differ(&s.Refused, "profile differs", run.Profile, ref.Profile)
	// The profile is part of the design, so another profile always changes
	// the design hash: name the profile alone.
	if run.Profile == ref.Profile && run.Spec.DesignHash != ref.Spec.DesignHash {
		s.Refused = append(s.Refused, fmt.Sprintf("design differs (a setting other than seed and secure noise): design_sha256 %s (run) vs %s (reference)",
			run.Spec.DesignHash, ref.Spec.DesignHash))
	}
	if d := dataDiff(ref, run); d != "" {
		s.Refused = append(s.Refused, "data differ: "+d)
	}
	differ(&s.Differs, "seed", fmt.Sprint(run.Seed), fmt.Sprint(ref.Seed))
	differ(&s.Differs, "platform", run.GOOS+"/"+run.GOARCH+"/"+run.GOAMD64, ref.GOOS+"/"+ref.GOARCH+"/"+ref.GOAMD64)
	differ(&s.Differs, "noise", noiseMode(run), noiseMode(ref))
	if noiseMode(run) == "secure" && noiseMode(ref) == "secure" {
		s.Differs = append(s.Differs, "noise: secure on both (crypto/rand draws do not replay)")
	}
	return s, nil
}

// noiseMode is "secure" when a run drew its noise from crypto/rand
// (--secure-noise), else "seeded".
func noiseMode(m Manifest) string {
	if m.SecureNoise {
		return "secure"
	}
	return "seeded"
}

// dataDiff describes the datasets whose provenance differs, run first;
// "" when none does.
func dataDiff(ref, run Manifest) string {
	// full identifies a dataset's provenance; shown abbreviates it.
	type prov struct{ full, shown string }
	describe := func(m Manifest) map[string]prov {
		out := map[string]prov{}
		for _, d := range m.Datasets {
			p := prov{full: d.Name + "=" + d.Source, shown: d.Name + "=" + d.Source}
			switch d.Source {
			case "synthetic":
				p.full += " " + d.Generator
				p.shown += " " + d.Generator
			default:
				var full, shown []string
				for _, f := range d.Files {
					full = append(full, f.SHA256)
					shown = append(shown, short(f.SHA256))
				}
				if len(full) > 0 {
					p.full += " sha256 " + strings.Join(full, ",")
					p.shown += " sha256 " + strings.Join(shown, ",")
				}
			}
			if q, dup := out[d.Name]; dup { // one name listed twice: keep both
				p = prov{full: q.full + "; " + p.full, shown: q.shown + "; " + p.shown}
			}
			out[d.Name] = p
		}
		return out
	}
	a, b := describe(run), describe(ref)
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var diffs []string
	for _, n := range names {
		p, inRun := a[n]
		q, inRef := b[n]
		switch {
		case !inRef:
			diffs = append(diffs, fmt.Sprintf("%s (run) vs no %s (reference)", p.shown, n))
		case !inRun:
			diffs = append(diffs, fmt.Sprintf("no %s (run) vs %s (reference)", n, q.shown))
		case p.full != q.full:
			if p.shown == q.shown { // differ beyond the abbreviation
				p.shown, q.shown = p.full, q.full
			}
			diffs = append(diffs, fmt.Sprintf("%s (run) vs %s (reference)", p.shown, q.shown))
		}
	}
	return strings.Join(diffs, ", ")
}

// short abbreviates a hex digest to its first 12 digits.
func short(h string) string {
	if len(h) <= 12 {
		return h
	}
	return h[:12] + "…"
}
