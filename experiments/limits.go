package experiments

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"github.com/dprepro/dprepro/datasets"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
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
//
// A dataset's n and d are those the registry documents until the data are
// read; then they are measured (SetDataShape: the records read and the
// design columns after one-hot encoding), and the run checks the estimate
// again: for each dataset before its design matrix is built (with one
// worker), and with the run's workers once every dataset is read. A
// dataset whose shape no registry documents (a [data.files] table, a Go
// provider) is left out of the estimate until it is read: guessing it
// would refuse small files on small machines.

// MemoryBudget is the memory, in bytes, that a run may be estimated to use
// (Load with one worker, CheckResources with the run's workers). The
// default is the machine's physical memory (MemTotal of /proc/meminfo),
// else 16 GiB. Tests may set it.
var MemoryBudget = physicalMemory()

// DatasetShape returns what the dataset registry documents about a dataset
// name: its number of records n, of design-matrix columns d (every
// categorical attribute one-hot, before any intercept) and the names of its
// numeric attributes (one column each). The data terms of EstimateMemory
// use them until the dataset is read (SetDataShape); with data.columns the
// width is that of the kept attributes (a kept categorical attribute
// counted as all d − len(numeric) indicator columns, an upper bound). A
// name it does not know (a data file, a Go provider) has no terms until it
// is read. Tests may replace it.
var DatasetShape = func(name string) (n, d int, numeric []string, ok bool) {
	e, ok := datasets.Lookup(name)
	return e.Records, e.Dim, e.Numeric, ok
}

// shapesMu guards Spec.shapes of every spec (SetDataShape may run while
// another goroutine estimates).
var shapesMu sync.Mutex

// SetDataShape records the measured shape of dataset name of the spec: its
// records (before any subsample) and its design columns after one-hot
// encoding and data.columns, without the intercept (the datasets.Shape
// that datasets.Options.Admit hands over once the records are read). From
// then on the memory estimate uses it instead of the registry's documented
// shape. It is safe for concurrent use.
func (s *Spec) SetDataShape(name string, sh datasets.Shape) {
	shapesMu.Lock()
	defer shapesMu.Unlock()
	if s.shapes == nil {
		s.shapes = map[string]datasets.Shape{}
	}
	s.shapes[name] = sh
}

// dataShape returns the measured shape of dataset name (SetDataShape).
func (s *Spec) dataShape(name string) (datasets.Shape, bool) {
	shapesMu.Lock()
	defer shapesMu.Unlock()
	sh, ok := s.shapes[name]
	return sh, ok
}

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

// sharedLimits are the bounds of the keys every spec has.
func (s *Spec) sharedLimits() []Limit {
	return []Limit{
		{Key: "data.subsample", Max: 1e8, Counts: Value("data.subsample", s.Data.Subsample),
			Why: "the papers subsample 100,000 records (1000× margin); the largest registered dataset has 583,250"},
		{Key: "output.bootstrap", Max: 1e6, Counts: Value("output.bootstrap", s.Output.Bootstrap),
			Why: "the specs use 2000 resamples (500× margin); each summary cell holds 8 bytes per resample and draws one resample mean per row of the cell"},
	}
}

// validateLimits checks every count of the kind against the limits table.
// The message gives the limit, why it is there and, where the key drives a
// term of the memory estimate, that term.
func (s *Spec) validateLimits() []fieldErr {
	var errs []fieldErr
	var terms []MemTerm // computed once, on the first violation
	all := s.sharedLimits()
	if s.Section != nil {
		all = append(all, s.Section.Limits(s)...)
	}
	for _, l := range all {
		for _, c := range l.Counts {
			if !(c.V > l.Max) {
				continue
			}
			if terms == nil {
				terms = s.memoryTerms()
			}
			what := fmt.Sprintf("%s is above the limit %s", formatCount(c.V), formatCount(l.Max))
			if c.Len {
				what = fmt.Sprintf("has %s values, above the limit %s", formatCount(c.V), formatCount(l.Max))
			}
			var est []string
			for _, t := range terms {
				if t.Key == l.Key && t.Bytes >= 1<<20 {
					est = append(est, fmt.Sprintf("estimated memory %s: %s", formatBytes(t.Bytes*gcFactor), t.Formula))
				}
			}
			if l.Work != "" {
				est = append(est, l.Work)
			}
			msg := what + " (" + strings.Join(append(est, l.Why), "; ") + ")"
			errs = append(errs, fieldErr{key: l.Key, path: c.Path, msg: msg})
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

// EstimateMemory returns the memory, in bytes, that a run of s with the
// given number of workers is estimated to need at its peak, and the spec
// key of the largest term. The estimate is computed from the spec alone
// (and DatasetShape): the live data of every term (see the kinds' formulas
// in memoryTerms; one unit in flight per worker, at most one per unit)
// times 2 for the garbage collector's headroom, plus 64 MiB for the
// runtime. It saturates at math.MaxInt64.
func (s *Spec) EstimateMemory(workers int) (bytes int64, dominant string) {
	total, top := s.estimate(workers)
	return saturate(total), top.Key
}

// estimate returns the total in bytes (float64, so it cannot overflow) and
// the largest term, scaled by the units in flight.
func (s *Spec) estimate(workers int) (float64, MemTerm) {
	total, terms := s.scaledTerms(workers)
	if len(terms) == 0 {
		return total, MemTerm{}
	}
	return total, terms[0]
}

// scaledTerms returns the total in bytes and the terms of the estimate
// with their Bytes as counted in it (×gcFactor, per-unit terms × the
// units in flight), largest first (a stable order: ties keep the order of
// memoryTerms).
func (s *Spec) scaledTerms(workers int) (float64, []MemTerm) {
	inFlight := math.Max(1, math.Min(float64(max(workers, 1)), s.unitCount()))
	total := float64(runtimeBytes)
	var terms []MemTerm
	for _, t := range s.memoryTerms() {
		t.Bytes *= gcFactor
		if t.PerUnit {
			t.Bytes *= inFlight
		}
		total += t.Bytes
		if t.Bytes > 0 {
			terms = append(terms, t)
		}
	}
	slices.SortStableFunc(terms, func(a, b MemTerm) int { return cmp.Compare(b.Bytes, a.Bytes) })
	return total, terms
}

func saturate(b float64) int64 {
	if !(b < math.MaxInt64) { // also NaN
		return math.MaxInt64
	}
	return int64(b)
}

// CheckResources returns an error when the estimated memory of a run of s
// with the given number of workers (EstimateMemory) exceeds MemoryBudget.
// It says what can bring the estimate under the budget, and names no
// change that cannot. The terms are taken by what lowers them (a spec
// key; for a dataset's terms, that dataset):
//
//   - when the fixed part of the estimate (the runtime's 64 MiB, needed
//     whatever the spec) alone exceeds the budget, no spec change can
//     help: the error says so, at the spec's file with no key, and asks
//     for a larger budget (MemoryBudgetFrom says where it comes from);
//   - when lowering the terms of one key could bring the estimate under
//     the budget (it would without them), the error names the file, line
//     and key of the largest, the estimate, its formula, what to lower and
//     how far; and the fixed part, with a larger budget as the other way,
//     when it is over half the budget;
//   - otherwise it names, at the largest term's key, the fewest keys
//     whose terms together could, how far they must shrink, and a larger
//     budget.
//
// The command calls it right after Load.
func (s *Spec) CheckResources(workers int) error {
	total, terms := s.scaledTerms(workers)
	budget := float64(MemoryBudget)
	if !(total > budget) {
		return nil
	}
	w := "1 worker"
	if workers > 1 {
		w = fmt.Sprintf("%d workers", workers)
	}
	head := fmt.Sprintf("estimated memory %s with %s exceeds the memory budget %s%s",
		formatBytes(total), w, formatBytes(budget), budgetFrom())
	fixed := float64(runtimeBytes)
	fixedWords := fmt.Sprintf("%s of it is fixed (the Go runtime, the binary's data and the figure renderer, whatever the spec)", formatBytes(fixed))
	if !(fixed < budget) || len(terms) == 0 {
		msg := fmt.Sprintf("%s; %s, above the budget by itself: no change to the spec can bring the estimate under it; %s",
			head, fixedWords, raiseBudget(total))
		return s.ErrorAt("", "", errors.New(msg))
	}
	// The terms by what lowers them, largest share first.
	type share struct {
		terms []MemTerm // largest first
		bytes float64
	}
	var shares []*share
	for _, t := range terms {
		i := slices.IndexFunc(shares, func(sh *share) bool { return sh.terms[0].Key == t.Key && sh.terms[0].Dataset == t.Dataset })
		if i < 0 {
			shares = append(shares, &share{})
			i = len(shares) - 1
		}
		shares[i].terms = append(shares[i].terms, t)
		shares[i].bytes += t.Bytes
	}
	slices.SortStableFunc(shares, func(a, b *share) int { return cmp.Compare(b.bytes, a.bytes) })
	// The fewest largest shares whose removal would bring the estimate
	// under the budget (the fixed part is below it, so all of them would).
	k := 0
	for rest := total; k < len(shares) && rest > budget; k++ {
		rest -= shares[k].bytes
	}
	excess := total - budget
	describe := func(sh *share) string {
		t := sh.terms[0]
		d := fmt.Sprintf("%s, %s, %s", formatBytes(t.Bytes), t.Formula, s.termScale(t, workers))
		if len(sh.terms) > 1 {
			d += fmt.Sprintf(", with %s that %s drives (%s in all)", moreTerms(len(sh.terms)-1), driver(t), formatBytes(sh.bytes))
		}
		return d
	}
	top := shares[0]
	advice, path := s.termAdvice(top.terms[0], workers)
	if k == 1 {
		t := top.terms[0]
		what := fmt.Sprintf("its largest term, %s, is %s, %s", formatBytes(t.Bytes), t.Formula, s.termScale(t, workers))
		until := fmt.Sprintf("until the term is below %s", formatBytes(top.bytes-excess))
		if len(top.terms) > 1 {
			what += fmt.Sprintf(", with %s that %s drives (%s in all)", moreTerms(len(top.terms)-1), driver(t), formatBytes(top.bytes))
			until = fmt.Sprintf("until those terms are below %s together", formatBytes(top.bytes-excess))
		}
		msg := fmt.Sprintf("%s; %s: %s, %s", head, what, advice, until)
		if fixed > budget/2 {
			msg += fmt.Sprintf("; or %s, as %s", raiseBudget(total), fixedWords)
		}
		return s.ErrorAt(t.Key, path, errors.New(msg))
	}
	var parts, advices []string
	for _, sh := range shares[:k] {
		parts = append(parts, describe(sh))
		a, _ := s.termAdvice(sh.terms[0], workers)
		advices = append(advices, a)
	}
	msg := fmt.Sprintf("%s; no one change can bring it under: %s, and the %d largest shares of the rest, which must shrink by %s together, are %s: %s; or %s",
		head, fixedWords, k, formatBytes(excess), strings.Join(parts, "; "), strings.Join(advices, ", and "), raiseBudget(total))
	return s.ErrorAt(top.terms[0].Key, path, errors.New(msg))
}

// driver names what drives term t: its key, or its dataset.
func driver(t MemTerm) string {
	if t.Key == "data.datasets" && t.Dataset != "" {
		return "dataset " + t.Dataset
	}
	return t.Key
}

// moreTerms is "1 more term" or "N more terms".
func moreTerms(n int) string {
	if n == 1 {
		return "1 more term"
	}
	return fmt.Sprintf("%d more terms", n)
}

// termScale says how term t is scaled in the estimate of a run with the
// given workers.
func (s *Spec) termScale(t MemTerm, workers int) string {
	scale := fmt.Sprintf("×%d for garbage-collector headroom", gcFactor)
	if t.PerUnit {
		k := math.Max(1, math.Min(float64(max(workers, 1)), s.unitCount()))
		scale += fmt.Sprintf(" and × %.0f unit%s in flight", k, map[bool]string{true: "s", false: ""}[k > 1])
	}
	return scale
}

// termAdvice says what lowers term t (its key, or for a dataset's term
// what to keep fewer of; fewer workers for a per-unit term of a run with
// several) and returns the key path to blame.
func (s *Spec) termAdvice(t MemTerm, workers int) (advice, path string) {
	fewer := t.PerUnit && workers > 1
	advice, path = "lower "+t.Key, t.Key
	if fewer {
		advice += " or run with fewer workers"
	}
	if t.Key == "data.datasets" {
		advice = s.dataAdvice(t.Dataset, fewer)
		if i := slices.Index(s.Data.Datasets, t.Dataset); i >= 0 {
			path = fmt.Sprintf("data.datasets[%d]", i)
		}
	}
	return advice, path
}

// MemoryBudgetFrom names where MemoryBudget comes from, for the refusals
// of CheckResources, which ask for a larger budget where no spec change
// can help: empty for the machine's physical memory (the default); the
// command sets "$DPREPRO_MEMORY_BUDGET" when that variable sets the
// budget.
var MemoryBudgetFrom = ""

// budgetFrom is " (from …)" for a budget that is not the machine's memory.
func budgetFrom() string {
	if MemoryBudgetFrom == "" {
		return ""
	}
	return " (from " + MemoryBudgetFrom + ")"
}

// raiseBudget says how to give a run that needs need bytes its memory.
func raiseBudget(need float64) string {
	if MemoryBudgetFrom == "" {
		return fmt.Sprintf("run it on a machine with more memory (the estimate needs at least %s)", formatBytes(need))
	}
	return fmt.Sprintf("raise %s to at least %s", MemoryBudgetFrom, formatBytes(need))
}

// dataAdvice says what a spec whose largest memory term is that of
// dataset name ("" for a term of every dataset) can change: which dataset
// it is and what n and d it has (measured once read, with its widest
// categorical attributes; else as the registry documents it), and the keys
// that shrink it.
func (s *Spec) dataAdvice(name string, fewerWorkers bool) string {
	names := s.Data.Datasets
	if name != "" {
		names = []string{name}
	}
	var shapes []string
	what := "keep fewer attributes (data.columns) or records (data.subsample)"
	for _, n := range names {
		if sh, ok := s.dataShape(n); ok {
			shapes = append(shapes, fmt.Sprintf("dataset %s has %s", n, sh))
			if w := sh.Widest(1); len(w) > 0 && 2*w[0].Levels > sh.N && w[0].Levels > 1 {
				what = fmt.Sprintf("the categorical attribute %q has a level for about every record (an identifier?): leave it out with data.columns, or do not list it as categorical; or keep fewer records (data.subsample)", w[0].Name)
			}
		} else if rn, rd, ok := s.shape(n); ok {
			shapes = append(shapes, fmt.Sprintf("dataset %s has n = %.0f, d = %.0f as the registry documents it", n, rn, rd))
		}
	}
	if fewerWorkers {
		what += ", or run with fewer workers"
	}
	if len(shapes) == 0 {
		return what
	}
	return strings.Join(shapes, "; ") + ": " + what
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
// with the spec's column selection: measured (SetDataShape), else
// documented (DatasetShape); ok is false when neither is known.
func (s *Spec) shape(name string) (n, d float64, ok bool) {
	if sh, ok := s.dataShape(name); ok {
		return float64(sh.N), float64(sh.D), true
	}
	if DatasetShape == nil {
		return 0, 0, false
	}
	rn, rd, numeric, ok := DatasetShape(name)
	if !ok || rn <= 0 || rd <= 0 {
		return 0, 0, false
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
	return float64(rn), math.Max(1, d), true
}

// unitCount returns the number of units of the run (as the kind lays them
// out), as a float64.
func (s *Spec) unitCount() float64 {
	if s.Section == nil {
		return 0
	}
	return s.Section.Workload(s).Units
}

// DataTerm returns the memory term of loading dataset name (the parsed
// table and the design matrix, 8 bytes per value each; the table is
// columnar, categorical codes take less; and the subsample's copy), with
// the records n (after subsampling) and columns d (intercept included) it
// assumes: the measured shape once the dataset is read (SetDataShape),
// else the registry's documented one (DatasetShape). A dataset of neither
// (a data file or a Go provider not read yet) gives a zero term and
// n = d = 0, so that the kind's terms built on them are zero too until it
// is read. The term's Dataset is name.
func (s *Spec) DataTerm(name string) (t MemTerm, n, d float64) {
	n, d, ok := s.shape(name)
	if !ok {
		return MemTerm{Key: "data.datasets", Dataset: name, Formula: fmt.Sprintf("dataset %s: not read yet (its shape is measured when it is read)", name)}, 0, 0
	}
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
	return MemTerm{Key: "data.datasets", Dataset: name, Bytes: b, Formula: f}, nEff, d
}

// memoryTerms returns the terms of the memory estimate of s: the rows and
// unit keys of the run, the summary's resamples, and the kind's terms
// (Section.Workload). Each kind's formulas count what its code allocates;
// where a quantity depends on the data (records n, columns d) the
// registry's documented shape is used, which is an upper bound for specs
// that select columns or records.
func (s *Spec) memoryTerms() []MemTerm {
	var w Workload
	if s.Section != nil {
		w = s.Section.Workload(s)
	}
	terms := []MemTerm{
		Term(w.UnitKey, w.Rows*RowBytes, false, "%.3g rows × %d bytes (rows, checkpoint and rows.csv)", w.Rows, RowBytes),
		Term(w.UnitKey, w.Units*UnitBytes, false, "%.3g units × %d bytes of unit keys", w.Units, UnitBytes),
		Term("output.bootstrap", Pos(s.Output.Bootstrap)*8, false, "bootstrap × 8 bytes of resample means per summary cell"),
	}
	return append(terms, w.Terms...)
}
