package experiments

import (
	"fmt"
	"math"
	"strings"
)

// Section is an experiment kind's own part of a spec: a pointer to a
// struct whose fields are the top-level TOML tables the kind reads (for
// example [cv] and [tuning]), each with an explicit toml tag and its
// defaults already set (the kind's NewSection). Load decodes the file over
// it as it decodes the shared part over DefaultSpec, applies the profile to
// it, and rejects keys that neither took.
//
// A section holds tables only (no top-level keys), so that the canonical
// encoding of a spec (Spec.Canonical) is the shared part followed by the
// section.
type Section interface {
	// Validate checks the section, with the shared part s at hand (its
	// data and output settings), and reports each problem to p with the
	// key path at fault.
	Validate(s *Spec, p *Problems)
	// Limits returns the upper bounds of the section's counts (see
	// "Bounded work" in limits.go).
	Limits(s *Spec) []Limit
	// Workload returns the number of units and rows of a run of s and
	// the memory terms of what the kind allocates (its datasets through
	// s.DataTerm). It must not fail on a spec that did not validate.
	Workload(s *Spec) Workload
}

// Kinds is what Load needs to know of the experiment kinds: which exist,
// and the section of each with its defaults. runner.Registry implements
// it.
type Kinds interface {
	// Section returns a new section of the named kind with its defaults,
	// or false for a kind it does not know.
	Section(kind string) (Section, bool)
	// Names lists the known kinds, for messages.
	Names() []string
}

// Workload is the size of a run, for the memory estimate and the limits'
// messages.
type Workload struct {
	// Units and Rows are the numbers of runner units and of rows.
	Units, Rows float64
	// UnitKey is the key of the largest factor of the unit count, blamed
	// when the rows dominate the estimate.
	UnitKey string
	// Terms are the kind's memory terms.
	Terms []MemTerm
}

// MemTerm is one term of the memory estimate.
type MemTerm struct {
	Key     string  // the spec key that drives the term, blamed when it dominates
	Bytes   float64 // live bytes, for one unit if PerUnit
	Formula string  // how it is computed
	PerUnit bool    // held by each unit in flight
	// Dataset names the dataset whose n and d the term grows with (Spec.DataTerm,
	// MemTerm.Of), so that a refusal names it with its shape; empty for
	// a term of no one dataset.
	Dataset string
}

// Term returns a MemTerm with a formatted formula.
func Term(key string, bytes float64, perUnit bool, format string, args ...any) MemTerm {
	return MemTerm{Key: key, Bytes: bytes, PerUnit: perUnit, Formula: fmt.Sprintf(format, args...)}
}

// Of returns t as a term of dataset name (MemTerm.Dataset).
func (t MemTerm) Of(name string) MemTerm {
	t.Dataset = name
	return t
}

// Limit is the upper bound of one count key of a spec.
type Limit struct {
	Key    string  // key path, for the line lookup and the message
	Max    float64 // inclusive upper bound
	Counts []Count // the values to check (Value, Length, Each)
	// Why says where the bound comes from: the papers' largest value and
	// the margin, and what one more unit of the count costs.
	Why string
	// Work, if set, estimates the work the spec asks for through this key
	// (for keys that cost time rather than memory).
	Work string
}

// Count is one value checked against a Limit.
type Count struct {
	Path string  // key path as shown, e.g. "histogram.bins[2]"
	V    float64 // the value
	Len  bool    // V is the number of values of a list
}

// Value is the count of an integer key.
func Value(key string, v int) []Count { return []Count{{Path: key, V: float64(v)}} }

// Length is the count of values of a list key.
func Length(key string, n int) []Count { return []Count{{Path: key, V: float64(n), Len: true}} }

// Each is the counts of every element of an integer list key.
func Each(key string, xs []int) []Count {
	out := make([]Count, len(xs))
	for i, x := range xs {
		out[i] = Count{Path: fmt.Sprintf("%s[%d]", key, i), V: float64(x)}
	}
	return out
}

// Bytes per stored object, measured (go1.26, amd64) or counted from the
// code, for the kinds' memory terms:
const (
	// RowBytes is a results.Row of about 35 columns (a map of short
	// strings) with its share of the checkpoint and of rows.csv: about
	// 3 KiB measured, rounded up.
	RowBytes = 4 << 10
	// UnitBytes is a unit key with its map entries (byKey, checkpoint).
	UnitBytes = 256
	// CSRBytes is erm.Rows per matrix entry at most: the full CSR (index and
	// value, 16 bytes) and the dense-or-sparse split copy (≤ 16 bytes).
	CSRBytes = 32
)

// Pos returns v as a float64, at least 1 (counts of a spec that failed
// validation must not make the estimate negative or zero).
func Pos(v int) float64 { return math.Max(1, float64(v)) }

// Problems collects the validation errors of a spec: each with the key
// whose line is reported, the path shown and the message.
type Problems struct {
	errs []fieldErr
}

// Add reports a problem at key (the key path looked up for the line, e.g.
// "tuning.lambdas"), shown as path (e.g. "tuning.lambdas[3]").
func (p *Problems) Add(key, path, format string, args ...any) {
	p.errs = append(p.errs, fieldErr{key: key, path: path, msg: fmt.Sprintf(format, args...)})
}

// At reports a problem at key, shown as key.
func (p *Problems) At(key, format string, args ...any) { p.Add(key, key, format, args...) }

// OneOf reports v at key unless it is one of allowed.
func (p *Problems) OneOf(key, v string, allowed ...string) {
	if !contains(allowed, v) {
		p.At(key, "must be one of %s (got %q)%s", strings.Join(allowed, ", "), v, Hint(v, allowed))
	}
}

// Names checks a list of names at key against known (nil: not checked):
// unknown and duplicate names, and an empty list when required. what names
// one element in the messages ("method", "mechanism", "name").
func (p *Problems) Names(key string, xs, known []string, required bool, what string) {
	if required && len(xs) == 0 {
		p.At(key, "must list at least one %s (known: %s)", what, strings.Join(known, ", "))
	}
	dup := SeenBefore[string]()
	for i, name := range xs {
		path := fmt.Sprintf("%s[%d]", key, i)
		if known != nil && !contains(known, name) {
			p.Add(key, path, "%s", Unknown(what, name, known))
		}
		if dup(name) {
			p.Add(key, path, "duplicate %s %q", what, name)
		}
	}
}

// Grid checks a non-empty list of numbers at key: each must satisfy ok
// (described as want, e.g. "finite and > 0") and lie within the
// magnitudes of Magnitude, none may repeat.
func (p *Problems) Grid(key string, xs []float64, ok func(float64) bool, want string) {
	if len(xs) == 0 {
		p.At(key, "must not be empty")
	}
	dup := SeenBefore[float64]()
	for i, x := range xs {
		path := fmt.Sprintf("%s[%d]", key, i)
		if !ok(x) {
			p.Add(key, path, "must be %s (got %v)", want, x)
		} else {
			p.Magnitude(key, path, x)
		}
		if dup(x) {
			p.Add(key, path, "duplicate value %v", x)
		}
	}
}

// Positive reports whether x is finite and > 0.
func Positive(x float64) bool { return x > 0 && !math.IsInf(x, 1) }

// The magnitudes a real-valued parameter of a spec may take (ε, α, λ, c,
// h, …): 1e-100 ≤ |x| ≤ 1e100, or 0 where a key allows it. Within them the
// product or quotient of two parameters (ρ = ε²/2, the noise scale
// 2/(nλε), ε_max = factor·E) stays a finite, non-zero float64 (whose range
// is 1e-308 … 1.8e308), and so do the figures' positions: a log axis
// spans at most 200 decades, and a point is jittered by at most 3 % of
// them (plots.MaxJitterSpan), 6 decades, where 1e300 with its jitter
// would be +Inf and refuse the figure after every unit ran. Beyond them a
// value is refused at load (Problems.Magnitude, and Problems.Grid for
// every grid it checks).
const (
	MinMagnitude = 1e-100
	MaxMagnitude = 1e100
)

// Magnitude reports a problem at key (shown as path) when x is finite and
// non-zero but |x| lies outside [MinMagnitude, MaxMagnitude]. Other values
// (0, NaN, ±Inf, a negative value) are left to the key's own check.
func (p *Problems) Magnitude(key, path string, x float64) {
	if msg := magnitude(x); msg != "" {
		p.Add(key, path, "%s", msg)
	}
}

// magnitude returns the problem of x under Magnitude, or "".
func magnitude(x float64) string {
	a := math.Abs(x)
	switch {
	case a == 0 || math.IsNaN(a) || math.IsInf(a, 0):
		return ""
	case a > MaxMagnitude:
		return fmt.Sprintf("must be at most %g in magnitude (got %v): beyond it, products of two parameters and the figures' jittered log axes overflow float64", MaxMagnitude, x)
	case a < MinMagnitude:
		return fmt.Sprintf("must be at least %g in magnitude (got %v): below it, products of two parameters underflow float64 to 0 (and their reciprocals overflow)", MinMagnitude, x)
	}
	return ""
}

// SeenBefore returns a test that reports whether its argument was passed to
// it before: the linear duplicate check of the validate functions (a scan
// of the earlier values would take hours on a list of a million). Values
// compare with ==, so NaN is never a duplicate.
func SeenBefore[T comparable]() func(T) bool {
	seen := map[T]bool{}
	return func(x T) bool {
		if seen[x] {
			return true
		}
		seen[x] = true
		return false
	}
}
