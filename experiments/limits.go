package experiments

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// # Bounded work
//
// Every count a spec sets has an upper bound (the limits table below), so
// that a typo such as steps = 1e12 is refused when the spec is loaded, with
// a message naming the key, instead of ending in a Go "fatal error: out of
// memory" or a run that never finishes. The bounds sit far above the
// papers' protocols (each entry says by how much) and keep every count
// product representable, so the memory estimate cannot overflow.
//
// The memory estimate (EstimateMemory) adds what a run holds at its peak:
// the datasets, what the kind precomputes, the units in flight (each
// worker runs one) and the rows and unit keys of the whole run. Load
// refuses a spec whose estimate with one worker exceeds MemoryBudget;
// CheckResources repeats the test for the worker count of the run.

// MemoryBudget is the memory, in bytes, that a run may be estimated to use
// (Load with one worker, CheckResources with the run's workers). The
// default is the machine's physical memory (MemTotal of /proc/meminfo),
// else 16 GiB. Tests may set it.
var MemoryBudget = physicalMemory()

// DatasetShape, when set, returns what the dataset registry documents
// about a dataset name: its number of records n, of design-matrix columns d
// (every categorical attribute one-hot, before any intercept) and the names
// of its numeric attributes (one column each). The data terms of
// EstimateMemory use them; with data.columns the width is that of the kept
// attributes (a kept categorical attribute counted as all d − len(numeric)
// indicator columns, an upper bound). The command sets it from the
// registry. When it is nil or does not know a name, the estimate assumes
// fallbackRecords × fallbackDim, at least as large as every registered
// dataset.
var DatasetShape func(name string) (n, d int, numeric []string, ok bool)

// The dataset assumed when DatasetShape does not know one: more records
// than the largest registered dataset (twitter, 583,250) and more columns
// than the widest (kddcup99, 118).
const (
	fallbackRecords = 600_000
	fallbackDim     = 128
)

// physicalMemory returns MemTotal of /proc/meminfo in bytes, else 16 GiB.
func physicalMemory() int64 {
	const fallback = 16 << 30
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return fallback
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil || kb <= 0 {
			return fallback
		}
		return kb << 10
	}
	return fallback
}

// countLimit is the upper bound of one count key.
type countLimit struct {
	key   string   // key path, for the line lookup and the message
	max   float64  // inclusive upper bound
	kinds []string // kinds that read the key; nil: every kind
	// counts returns the values to check, named after key: the key's
	// value, each element of a list, or a list's length (len true).
	counts func(s *Spec, key string) []count
	// why says where the bound comes from: the papers' largest value and
	// the margin, and what one more unit of the count costs.
	why string
	// work, if set, estimates the work the spec asks for through this key
	// (for keys that cost time rather than memory).
	work func(s *Spec) string
}

type count struct {
	path string
	v    float64
	len  bool // v is the number of values of a list
}

// value checks an integer key.
func value(f func(s *Spec) int) func(*Spec, string) []count {
	return func(s *Spec, key string) []count { return []count{{path: key, v: float64(f(s))}} }
}

// lengthOf checks the number of values of a list key.
func lengthOf(f func(s *Spec) int) func(*Spec, string) []count {
	return func(s *Spec, key string) []count { return []count{{path: key, v: float64(f(s)), len: true}} }
}

// sweepValues checks each value of confidence_intervals.values when the
// sweep is of the given parameter.
func sweepValues(sweep string) func(*Spec, string) []count {
	return func(s *Spec, key string) []count {
		if s.ConfidenceIntervals.Sweep != sweep {
			return nil
		}
		out := make([]count, len(s.ConfidenceIntervals.Values))
		for i, x := range s.ConfidenceIntervals.Values {
			out[i] = count{path: fmt.Sprintf("%s[%d]", key, i), v: x}
		}
		return out
	}
}

// each checks every element of an integer list key.
func each(f func(s *Spec) []int) func(*Spec, string) []count {
	return func(s *Spec, key string) []count {
		xs := f(s)
		out := make([]count, len(xs))
		for i, x := range xs {
			out[i] = count{path: fmt.Sprintf("%s[%d]", key, i), v: float64(x)}
		}
		return out
	}
}

var (
	expostOnly    = []string{KindExPost}
	ciOnly        = []string{KindCICoverage}
	cvKinds       = []string{KindCVTuning, KindHistogram}
	cvOnly        = []string{KindCVTuning}
	histogramOnly = []string{KindHistogram}
	mechOnly      = []string{KindMechanisms}
	auditOnly     = []string{KindAudit}
)

// limits is the table of upper bounds. The papers' values are those of the
// specs in this folder (paper profile); "×" is the margin above them.
var limits = []countLimit{
	{key: "data.subsample", max: 1e8, counts: value(func(s *Spec) int { return s.Data.Subsample }),
		why: "the papers subsample 100,000 records (1000× margin); the largest registered dataset has 583,250"},
	{key: "output.bootstrap", max: 1e6, counts: value(func(s *Spec) int { return s.Output.Bootstrap }),
		why: "the specs use 2000 resamples (500× margin); each summary cell holds 8 bytes per resample and draws one resample mean per row of the cell"},

	{key: "accuracy_first.steps", max: 1e6, kinds: expostOnly,
		counts: value(func(s *Spec) int { return s.AccuracyFirst.Steps }),
		why:    "Ligett et al. use T = 1000 (1000× margin); a noise-reduction unit holds about 60 bytes per level and chain, and drawing a chain takes about 36 ns per level (0.04 s at the limit, when it cannot be interrupted)"},
	{key: "accuracy_first.trials", max: 1e5, kinds: expostOnly,
		counts: value(func(s *Spec) int { return s.AccuracyFirst.Trials }),
		why:    "the paper profile runs 80 trials (1250× margin); each trial of each method and α is a unit with a row"},
	{key: "accuracy_first.alphas", max: 1e4, kinds: expostOnly,
		counts: lengthOf(func(s *Spec) int { return len(s.AccuracyFirst.Alphas) }),
		why:    "the paper's grid has 40 values (250× margin)"},

	{key: "confidence_intervals.replicates", max: 1e6, kinds: ciOnly,
		counts: value(func(s *Spec) int { return s.ConfidenceIntervals.Replicates }),
		why:    "Wang, Kifer & Lee use k = 1000 (1000× margin); each replicate is a row per method"},
	{key: "confidence_intervals.mc_samples", max: 1e7, kinds: ciOnly,
		counts: value(func(s *Spec) int { return s.ConfidenceIntervals.MCSamples }),
		why:    "the paper uses m = 10,000 (1000× margin); an interval holds m × (d+1) × 8 bytes of draws"},
	{key: "confidence_intervals.vi_fits", max: 1e7, kinds: ciOnly,
		counts: value(func(s *Spec) int { return s.ConfidenceIntervals.VIFits }),
		why:    "the paper uses 10,000 fits (1000× margin); a variability interval holds fits × (d+1) × 8 bytes per variant"},
	{key: "confidence_intervals.block_size", max: 1e6, kinds: ciOnly,
		counts: value(func(s *Spec) int { return s.ConfidenceIntervals.BlockSize }),
		why:    "the specs use 50; a block larger than the replicate limit is never needed"},
	{key: "confidence_intervals.values", max: 1000, kinds: ciOnly,
		counts: lengthOf(func(s *Spec) int { return len(s.ConfidenceIntervals.Values) }),
		why:    "the paper sweeps at most 10 values (100× margin); each value keeps its own (sub)dataset in memory"},
	{key: "confidence_intervals.values", max: 1e8, kinds: ciOnly,
		counts: sweepValues("n"),
		why:    "an n sweep's largest paper value is 450,000 records (200× margin; no registered dataset has more than 583,250)"},
	{key: "confidence_intervals.values", max: 1e5, kinds: ciOnly,
		counts: sweepValues("d"),
		why:    "a d sweep's largest paper value is 10 features (10,000× margin; no registered dataset has more than 118)"},
	{key: "confidence_intervals.n1", max: 1e8, kinds: ciOnly,
		counts: value(func(s *Spec) int { return s.ConfidenceIntervals.N1 }),
		why:    "no registered dataset has more than 583,250 records"},
	{key: "confidence_intervals.d1", max: 1e5, kinds: ciOnly,
		counts: value(func(s *Spec) int { return s.ConfidenceIntervals.D1 }),
		why:    "the paper keeps 10 features; no registered dataset has more than 118"},

	{key: "cv.repetitions", max: 1e4, kinds: cvKinds,
		counts: value(func(s *Spec) int { return s.CV.Repetitions }),
		why:    "Chaudhuri & Vinterbo repeat 10 times (1000× margin); each repetition keeps a fold assignment of 8 bytes per record"},
	{key: "cv.folds", max: 1e5, kinds: cvKinds,
		counts: value(func(s *Spec) int { return s.CV.Folds }),
		why:    "the paper uses 10 folds (10,000× margin); every fold needs at least 2k records"},
	{key: "tuning.lambdas", max: 1e4, kinds: cvOnly,
		counts: lengthOf(func(s *Spec) int { return len(s.Tuning.Lambdas) }),
		why:    "the paper's grid has 10 values (1000× margin); a unit fits up to 2 models per value"},
	{key: "tuning.alphas", max: 1e4, kinds: cvKinds,
		counts: lengthOf(func(s *Spec) int { return len(s.Tuning.Alphas) }),
		why:    "the specs use 6 values (1600× margin)"},
	{key: "histogram.bins", max: 1e4, kinds: histogramOnly,
		counts: lengthOf(func(s *Spec) int { return len(s.Histogram.Bins) }),
		why:    "the spec compares 7 bin counts (1400× margin); a unit keeps one histogram per count"},
	{key: "histogram.bins", max: 1e7, kinds: histogramOnly,
		counts: each(func(s *Spec) []int { return s.Histogram.Bins }),
		why:    "the largest paper bin count is 256 (40,000× margin); a histogram holds 8–24 bytes per bin"},
	{key: "histogram.records", max: 1e8, kinds: histogramOnly,
		counts: value(func(s *Spec) int { return s.Histogram.Records }),
		why:    "the spec draws 20,000 points per density (5000× margin); 8 bytes per point plus 8 per point and repetition for the folds"},
	{key: "histogram.attributes", max: 1000, kinds: histogramOnly,
		counts: lengthOf(func(s *Spec) int { return len(s.Histogram.Attributes) }),
		why:    "the spec reads 2 attributes (500× margin)"},

	{key: "mechanisms.dim", max: 1e6, kinds: mechOnly,
		counts: value(func(s *Spec) int { return s.Mechanisms.Dim }),
		why:    "Nguyen's examples use k = 10 (100,000× margin); every output draws k noise values",
		work:   mechanismWork},
	{key: "mechanisms.candidates", max: 1e6, kinds: mechOnly,
		counts: value(func(s *Spec) int { return s.Mechanisms.Candidates }),
		why:    "the spec uses |Y| = 100 (10,000× margin); every exponential-mechanism draw weighs all candidates (8 bytes and one exp each)",
		work:   mechanismWork},
	{key: "mechanisms.replicates", max: 1e5, kinds: mechOnly,
		counts: value(func(s *Spec) int { return s.Mechanisms.Replicates }),
		why:    "the spec uses 20 replicates (5000× margin); each is a unit"},
	{key: "mechanisms.draws", max: 1e9, kinds: mechOnly,
		counts: value(func(s *Spec) int { return s.Mechanisms.Draws }),
		why:    "the spec draws 10,000 outputs per unit (100,000× margin); draws are counted, not stored",
		work:   mechanismWork},
	{key: "mechanisms.epsilons", max: 1000, kinds: mechOnly,
		counts: lengthOf(func(s *Spec) int { return len(s.Mechanisms.Epsilons) }),
		why:    "the spec uses 6 values (160× margin)"},
	{key: "mechanisms.levels", max: 1000, kinds: mechOnly,
		counts: lengthOf(func(s *Spec) int { return len(s.Mechanisms.Levels) }),
		why:    "the spec uses 4 levels (250× margin)"},

	{key: "audit.draws", max: 1e8, kinds: auditOnly,
		counts: value(func(s *Spec) int { return s.Audit.Draws }),
		why:    "the thorough audit draws 1,000,000 per side (100× margin); a unit stores up to 320 bytes per draw"},
	{key: "audit.fit_draws", max: 1e7, kinds: auditOnly,
		counts: value(func(s *Spec) int { return s.Audit.FitDraws }),
		why:    "the thorough audit fits 100,000 models per side (100× margin); each draw is a model fit"},
	{key: "audit.epsilons", max: 1000, kinds: auditOnly,
		counts: lengthOf(func(s *Spec) int { return len(s.Audit.Epsilons) }),
		why:    "the audit uses 4 values (250× margin)"},
}

// mechanismWork estimates the noise draws of a mechanism-bounds run.
func mechanismWork(s *Spec) string {
	m := s.Mechanisms
	perOutput := math.Max(float64(m.Dim), float64(m.Candidates))
	total := float64(len(m.Mechanisms)) * float64(len(m.Epsilons)) * float64(m.Replicates) * float64(m.Draws) * perOutput
	return fmt.Sprintf("estimated work %.3g noise draws or candidate weights: mechanisms × epsilons × replicates × draws × max(dim, candidates)", total)
}

// validateLimits checks every count of the kind against the limits table.
// The message gives the limit, why it is there and, where the key drives a
// term of the memory estimate, that term.
func (s *Spec) validateLimits() []fieldErr {
	var errs []fieldErr
	var terms []memTerm // computed once, on the first violation
	for _, l := range limits {
		if l.kinds != nil && !slices.Contains(l.kinds, s.Kind) {
			continue
		}
		for _, c := range l.counts(s, l.key) {
			if !(c.v > l.max) {
				continue
			}
			if terms == nil {
				terms = s.memoryTerms()
			}
			what := fmt.Sprintf("%s is above the limit %s", formatCount(c.v), formatCount(l.max))
			if c.len {
				what = fmt.Sprintf("has %s values, above the limit %s", formatCount(c.v), formatCount(l.max))
			}
			var est []string
			for _, t := range terms {
				if t.key == l.key && t.bytes >= 1<<20 {
					est = append(est, fmt.Sprintf("estimated memory %s: %s", formatBytes(t.bytes*gcFactor), t.formula))
				}
			}
			if l.work != nil {
				est = append(est, l.work(s))
			}
			msg := what + " (" + strings.Join(append(est, l.why), "; ") + ")"
			errs = append(errs, fieldErr{key: l.key, path: c.path, msg: msg})
		}
	}
	return errs
}

// formatCount writes an integer count in full and anything else in %g.
func formatCount(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e18 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// formatBytes writes a byte count in binary units.
func formatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	prec := 0
	switch {
	case b < 10:
		prec = 2
	case b < 100:
		prec = 1
	}
	return strconv.FormatFloat(b, 'f', prec, 64) + " " + units[i]
}

// gcFactor is the ratio of peak heap to live heap under Go's default
// garbage-collector target (GOGC = 100: the heap may grow to twice what is
// live before a collection).
const gcFactor = 2

// runtimeBytes is what the process holds whatever the spec: the Go
// runtime, the binary's data, the figure renderer.
const runtimeBytes = 64 << 20

// memTerm is one term of the memory estimate.
type memTerm struct {
	key     string  // the spec key that drives the term, blamed when it dominates
	bytes   float64 // live bytes, for one unit if perUnit
	formula string  // how it is computed
	perUnit bool    // held by each unit in flight
}

// EstimateMemory returns the memory, in bytes, that a run of s with the
// given number of workers is estimated to need at its peak, and the spec
// key of the largest term. The estimate is computed from the spec alone
// (and DatasetShape): the live data of every term (see the kinds' formulas
// in memoryTerms; one unit in flight per worker, at most one per unit)
// times 2 for the garbage collector's headroom, plus 64 MiB for the
// runtime. It saturates at math.MaxInt64.
func (s *Spec) EstimateMemory(workers int) (bytes int64, dominant string) {
	total, top := s.estimate(workers)
	return saturate(total), top.key
}

// estimate returns the total in bytes (float64, so it cannot overflow) and
// the largest term, scaled by the units in flight.
func (s *Spec) estimate(workers int) (float64, memTerm) {
	inFlight := math.Max(1, math.Min(float64(max(workers, 1)), s.unitCount()))
	total := float64(runtimeBytes)
	var top memTerm
	for _, t := range s.memoryTerms() {
		b := t.bytes * gcFactor
		if t.perUnit {
			b *= inFlight
		}
		total += b
		if b > top.bytes {
			top = t
			top.bytes = b
		}
	}
	return total, top
}

func saturate(b float64) int64 {
	if !(b < math.MaxInt64) { // also NaN
		return math.MaxInt64
	}
	return int64(b)
}

// CheckResources returns an error when the estimated memory of a run of s
// with the given number of workers (EstimateMemory) exceeds MemoryBudget.
// The error names the file, line and key of the largest term, the estimate
// and the term's formula. The command calls it right after Load.
func (s *Spec) CheckResources(workers int) error {
	total, top := s.estimate(workers)
	if !(total > float64(MemoryBudget)) {
		return nil
	}
	w := "1 worker"
	if workers > 1 {
		w = fmt.Sprintf("%d workers", workers)
	}
	scale := fmt.Sprintf("×%d for garbage-collector headroom", gcFactor)
	if top.perUnit {
		k := math.Max(1, math.Min(float64(max(workers, 1)), s.unitCount()))
		scale += fmt.Sprintf(" and × %.0f unit%s in flight", k, map[bool]string{true: "s", false: ""}[k > 1])
	}
	msg := fmt.Sprintf("estimated memory %s with %s exceeds the memory budget %s; its largest term, %s, is %s, %s: lower %s",
		formatBytes(total), w, formatBytes(float64(MemoryBudget)), formatBytes(top.bytes), top.formula, scale, top.key)
	if top.perUnit && workers > 1 {
		msg += " or run with fewer workers"
	}
	return fmt.Errorf("%s%s: %s", s.where(top.key), top.key, msg)
}

// where returns "file:line: " for key (the profile's override if it sets
// the key), "file: " without a line, or "" for a spec not read from a file.
func (s *Spec) where(key string) string {
	if s.Source == nil {
		return ""
	}
	base := s.Source.Path
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	line := s.lines.line(key)
	if s.Profile != "" && s.lines.has("profile."+s.Profile+"."+key) {
		line = s.lines.line("profile." + s.Profile + "." + key)
	}
	if line > 0 {
		return fmt.Sprintf("%s:%d: ", base, line)
	}
	return base + ": "
}

// shape returns the records n and design-matrix columns d of a dataset
// with the spec's column selection (see DatasetShape).
func (s *Spec) shape(name string) (n, d float64) {
	if DatasetShape == nil {
		return fallbackRecords, fallbackDim
	}
	rn, rd, numeric, ok := DatasetShape(name)
	if !ok || rn <= 0 || rd <= 0 {
		return fallbackRecords, fallbackDim
	}
	d = float64(rd)
	if cols := s.Data.Columns; len(cols) > 0 {
		sel, categorical := 0.0, false
		for _, c := range cols {
			if slices.Contains(numeric, c) {
				sel++
			} else {
				categorical = true
			}
		}
		if categorical {
			sel += float64(rd - len(numeric))
		}
		d = math.Min(d, sel)
	}
	return float64(rn), math.Max(1, d)
}

// Bytes per stored object, measured (go1.26, amd64) or counted from the
// code:
const (
	// rowBytes is a results.Row of about 35 columns (a map of short
	// strings) with its share of the checkpoint and of rows.csv: about
	// 3 KiB measured, rounded up.
	rowBytes = 4 << 10
	// unitBytes is a unit key with its map entries (byKey, checkpoint).
	unitBytes = 256
	// csrBytes is erm.Rows per matrix entry at most: the full CSR (index and
	// value, 16 bytes) and the dense-or-sparse split copy (≤ 16 bytes).
	csrBytes = 32
)

// unitCount returns the number of units of the run (as the kinds lay them
// out), as a float64.
func (s *Spec) unitCount() float64 {
	u, _, _ := s.units()
	return u
}

// units returns the number of units and rows of the run, and the key of the
// largest factor of the unit count.
func (s *Spec) units() (units, rows float64, key string) {
	type factor struct {
		key string
		v   float64
	}
	big := func(fs ...factor) string {
		best := fs[0]
		for _, f := range fs[1:] {
			if f.v > best.v {
				best = f
			}
		}
		return best.key
	}
	nd := math.Max(1, float64(len(s.Data.Datasets)))
	switch s.Kind {
	case KindExPost:
		a := s.AccuracyFirst
		units = nd * float64(len(a.Methods)) * float64(len(a.Alphas)) * pos(a.Trials)
		return units, units, big(factor{"accuracy_first.trials", pos(a.Trials)}, factor{"accuracy_first.alphas", float64(len(a.Alphas))})
	case KindCICoverage:
		c := s.ConfidenceIntervals
		models := float64(len(ciModels(c.Methods)))
		blocks := math.Ceil(pos(c.Replicates) / pos(c.BlockSize))
		units = nd * float64(len(c.Values)) * models * (blocks + 1)
		rows = nd * float64(len(c.Values)) * float64(len(c.Methods)) * (pos(c.Replicates) + 1)
		return units, rows, big(factor{"confidence_intervals.replicates", pos(c.Replicates)}, factor{"confidence_intervals.values", float64(len(c.Values))})
	case KindCVTuning, KindHistogram:
		sources := nd
		if s.Kind == KindHistogram {
			sources = float64(len(s.Histogram.Densities) + len(s.Histogram.Attributes))
		}
		units = sources * float64(len(s.Tuning.Alphas)) * float64(len(s.Tuning.Methods)) * pos(s.CV.Repetitions) * pos(s.CV.Folds)
		return units, units, big(factor{"cv.repetitions", pos(s.CV.Repetitions)}, factor{"cv.folds", pos(s.CV.Folds)}, factor{"tuning.alphas", float64(len(s.Tuning.Alphas))})
	case KindMechanisms:
		m := s.Mechanisms
		units = float64(len(m.Mechanisms)) * float64(len(m.Epsilons)) * pos(m.Replicates)
		return units, units * float64(len(m.Levels)), big(factor{"mechanisms.replicates", pos(m.Replicates)}, factor{"mechanisms.epsilons", float64(len(m.Epsilons))})
	case KindAudit:
		a := s.Audit
		units = float64(len(a.Mechanisms)) * float64(1+len(a.Variants)) * float64(len(a.Epsilons))
		return units, units, "audit.epsilons"
	}
	return 0, 0, ""
}

// pos returns v as a float64, at least 1 (counts of a spec that failed
// validation must not make the estimate negative or zero).
func pos(v int) float64 { return math.Max(1, float64(v)) }

// ciModels returns the distinct models (last part) of ci-coverage methods.
func ciModels(methods []string) []string {
	var out []string
	for _, m := range methods {
		model := m[strings.LastIndex(m, "-")+1:]
		if !slices.Contains(out, model) {
			out = append(out, model)
		}
	}
	return out
}

// dataTerm returns the memory of loading dataset name with d columns
// (intercept included): the parsed table and the design matrix (8 bytes
// per value each; the table is columnar, categorical codes take less), and
// the subsample's copy.
func (s *Spec) dataTerm(name string) (memTerm, float64, float64) {
	n, d := s.shape(name)
	if s.Data.Intercept {
		d++
	}
	b := 2 * n * (d + 1) * 8
	f := fmt.Sprintf("dataset %s: n × (d+1) × 16 bytes of parsed table and design matrix (n = %.0f, d = %.0f)", name, n, d)
	nEff := n
	if m := float64(s.Data.Subsample); m > 0 && m < n {
		b += m * (d + 1) * 8
		f += fmt.Sprintf(", plus the subsample's copy (%.0f records)", m)
		nEff = m
	}
	return memTerm{key: "data.datasets", bytes: b, formula: f}, nEff, d
}

// memoryTerms returns the terms of the memory estimate of s. Each kind's
// formulas count what its code allocates; where a quantity depends on the
// data (records n, columns d) the registry's documented shape is used,
// which is an upper bound for specs that select columns or records.
func (s *Spec) memoryTerms() []memTerm {
	var terms []memTerm
	add := func(key string, bytes float64, perUnit bool, format string, args ...any) {
		terms = append(terms, memTerm{key: key, bytes: bytes, perUnit: perUnit, formula: fmt.Sprintf(format, args...)})
	}
	units, rows, unitKey := s.units()
	add(unitKey, rows*rowBytes, false, "%.3g rows × %d bytes (rows, checkpoint and rows.csv)", rows, rowBytes)
	add(unitKey, units*unitBytes, false, "%.3g units × %d bytes of unit keys", units, unitBytes)
	add("output.bootstrap", pos(s.Output.Bootstrap)*8, false, "bootstrap × 8 bytes of resample means per summary cell")

	switch s.Kind {
	case KindExPost:
		a := s.AccuracyFirst
		T := pos(a.Steps)
		cov := a.Generator == "covariance"
		var perUnit, coords float64
		for _, name := range s.Data.Datasets {
			dt, n, p := s.dataTerm(name)
			terms = append(terms, dt)
			if a.Task == "logistic" {
				add("data.datasets", n*(p*csrBytes+24)+p*p*8, false, "dataset %s: the logistic problem's rows, n × (d × %d + 24) bytes", name, csrBytes)
			} else {
				add("data.datasets", 6*p*p*8, false, "dataset %s: the ridge problem's statistics, 6 d² × 8 bytes", name)
			}
			c := p
			if cov {
				c = p*p + p
			}
			coords = math.Max(coords, c)
			if a.Task == "logistic" {
				perUnit = math.Max(perUnit, n*8) // the margins of an exact excess risk
			}
		}
		if slices.Contains(a.Methods, "noise-reduction") {
			chains, perLevel := 1.0, 60.0
			if cov {
				chains, perLevel = 2, 120
			}
			add("accuracy_first.steps", T*perLevel, true,
				"T × %.0f bytes of ε grid and noise-reduction chain%s per unit in flight (T = %.0f)", perLevel, map[bool]string{true: "s", false: ""}[chains > 1], T)
			adds := math.Min(T-1, 64) // Σ(1 − (ε_s/ε_{s+1})²) ≤ 2 ln(ε_T/ε_1) ≈ 46 for ε_1 = 1/n
			add("data.datasets", coords*(1+adds)*24, true,
				"%.0f noise-reduction coordinates × (1 + min(T−1, 64)) events × 24 bytes per unit in flight", coords)
		}
		add("data.datasets", perUnit+coords*64, true, "a unit's hypotheses and excess-risk buffers")

	case KindCICoverage:
		c := s.ConfidenceIntervals
		var maxN, maxD, retained, transient float64
		for _, name := range s.Data.Datasets {
			dt, N, D := s.dataTerm(name)
			terms = append(terms, dt)
			for _, x := range c.Values {
				n, d := N, D
				if c.N1 > 0 {
					n = float64(c.N1)
				}
				if c.D1 > 0 {
					d = float64(c.D1)
				}
				switch c.Sweep {
				case "n":
					n = math.Max(1, x)
				case "d":
					d = math.Max(1, x)
				}
				// More records or features than the dataset has are refused
				// when the kind loads it.
				n, d = math.Min(n, N), math.Min(d, D)
				dp := d + 1 // the constant feature
				// Kept per value: record → distinct row (4 bytes) and at
				// most n distinct rows with their weights.
				retained += n * (4 + (dp+1)*csrBytes + 32)
				// Built per value: the subset matrix and the distinct-row
				// index, one value at a time.
				transient = math.Max(transient, n*(dp*8+(dp+1)*8+48))
				maxN, maxD = math.Max(maxN, n), math.Max(maxD, dp)
			}
		}
		add("confidence_intervals.values", retained, false, "every swept (sub)dataset: n × (4 + (d+2) × %d + 32) bytes of distinct rows, weights and record index", csrBytes)
		add("confidence_intervals.values", transient, false, "building one swept (sub)dataset: n × ((d+1) × 8 + (d+2) × 8 + 48) bytes")
		// A unit resamples and fits: counts, the replicate's rows, the
		// solver's workspace (8 n floats).
		add("confidence_intervals.values", maxN*(4+(maxD+1)*csrBytes+24+64), true, "a unit's bootstrap replicate and solver workspace, n × ((d+2) × %d + 92) bytes per unit in flight", csrBytes)
		mc := pos(c.MCSamples) * maxD * 8
		variants := 0.0
		for _, model := range ciModels(c.Methods) {
			v, obj := 0.0, false
			for _, m := range c.Methods {
				if !strings.HasSuffix(m, "-"+model) {
					continue
				}
				if strings.Contains(m, "-obj-") {
					obj = true
				} else {
					v++
				}
			}
			if obj {
				v++
			}
			variants = math.Max(variants, v)
		}
		vi := math.Max(1, variants) * pos(c.VIFits) * maxD * 8
		if mc >= vi {
			add("confidence_intervals.mc_samples", mc, true, "m × (d+1) × 8 bytes of Monte Carlo draws per unit in flight (m = %d, d+1 = %.0f)", c.MCSamples, maxD)
		} else {
			add("confidence_intervals.vi_fits", vi, true, "variants × fits × (d+1) × 8 bytes of variability-interval fits per unit in flight (%.0f × %d × %.0f)", math.Max(1, variants), c.VIFits, maxD)
		}

	case KindCVTuning:
		k := float64(len(s.Tuning.Lambdas))
		for _, name := range s.Data.Datasets {
			dt, n, d := s.dataTerm(name)
			terms = append(terms, dt)
			add("cv.repetitions", pos(s.CV.Repetitions)*n*8, false, "dataset %s: repetitions × n × 8 bytes of fold assignments", name)
			// Training, validation and test rows (and dataSplit's parts),
			// the solver's workspace (8 n floats) and the k models.
			add("data.datasets", 2*n*(d*csrBytes+24)+64*n+2*k*d*8, true, "dataset %s: a unit's rows (2 n × (d × %d + 24) bytes), solver workspace and models per unit in flight", name, csrBytes)
		}

	case KindHistogram:
		h := s.Histogram
		var maxN float64
		for range h.Densities {
			add("histogram.records", pos(h.Records)*8, false, "records × 8 bytes per density")
			maxN = math.Max(maxN, pos(h.Records))
		}
		loaded := map[string]bool{}
		for _, a := range h.Attributes {
			dt, n, _ := s.dataTerm(a.Dataset)
			if !loaded[a.Dataset] {
				terms = append(terms, dt)
				loaded[a.Dataset] = true
			}
			add("histogram.attributes", n*8, false, "attribute %s:%s: n × 8 bytes", a.Dataset, a.Column)
			maxN = math.Max(maxN, n)
		}
		sources := float64(len(h.Densities) + len(h.Attributes))
		add("cv.repetitions", sources*pos(s.CV.Repetitions)*maxN*8, false, "sources × repetitions × n × 8 bytes of fold assignments")
		var sum, most float64
		for _, b := range h.Bins {
			sum += math.Max(1, float64(b))
			most = math.Max(most, float64(b))
		}
		add("histogram.bins", sum*8+most*16+maxN*8, true, "Σ bins × 8 bytes of candidate histograms, 16 bytes per bin of the largest, and the unit's n × 8 bytes of points, per unit in flight")

	case KindMechanisms:
		add("mechanisms.candidates", pos(s.Mechanisms.Candidates)*16, true, "candidates × 16 bytes of scores and weights per unit in flight")

	case KindAudit:
		// Per draw: 2 sides × (1 + 1/4 selection) × stats × 8 bytes of
		// statistics, and the selection's sorted copies; the largest
		// drawsMul × stats of any target is 10 (above-threshold: 10 × 1),
		// which gives 320 bytes; a fitting target (2 statistics) 52.
		add("audit.draws", pos(s.Audit.Draws)*320, true, "draws × 320 bytes of released statistics per unit in flight (the largest target draws 10× as many)")
		add("audit.fit_draws", pos(s.Audit.FitDraws)*52, true, "fit_draws × 52 bytes of released statistics per unit in flight")
	}
	return terms
}

// seenBefore returns a test that reports whether its argument was passed to
// it before: the linear duplicate check of the validate functions (a scan
// of the earlier values would take hours on a list of a million). Values
// compare with ==, so NaN is never a duplicate.
func seenBefore[T comparable]() func(T) bool {
	seen := map[T]bool{}
	return func(x T) bool {
		if seen[x] {
			return true
		}
		seen[x] = true
		return false
	}
}
