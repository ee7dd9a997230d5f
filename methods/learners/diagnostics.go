package learners

import (
	"fmt"
	"regexp"
	"slices"
)

// Diagnoser is implemented by a Learner whose fits report diagnostics of
// their own (iterations, the fraction of clipped gradients, …): the names
// it declares, before any fit, so that a kind's rows.csv has a column
// "diag_<name>" for each ([DiagnosticColumns]). Its models implement
// [Diagnosed]. An external learner declares them in its hello
// (attributes.diagnostics, docs/worker-protocol.md).
type Diagnoser interface {
	DiagnosticNames() []string
}

// Diagnosed is implemented by a Model that carries the diagnostics of
// the fit that made it, by declared name; a diagnostic the fit did not
// report is NaN.
type Diagnosed interface {
	Diagnostics() map[string]float64
}

// MaxDiagnostics is the most diagnostics a learner may declare.
const MaxDiagnostics = 16

// diagName is the rule of a diagnostic's name: a lower-case letter, then
// up to 31 lower-case letters, digits or '_' (it becomes a CSV column).
var diagName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// CheckDiagnosticNames checks a learner's declared diagnostics: at most
// MaxDiagnostics names, each a lower-case letter then letters, digits or
// '_' (at most 32 bytes), no duplicates.
func CheckDiagnosticNames(names []string) error {
	if len(names) > MaxDiagnostics {
		return fmt.Errorf("%d diagnostics declared; at most %d", len(names), MaxDiagnostics)
	}
	for i, n := range names {
		if !diagName.MatchString(n) {
			return fmt.Errorf("diagnostic %q: want a lower-case letter, then up to 31 lower-case letters, digits or '_'", n)
		}
		if slices.Contains(names[:i], n) {
			return fmt.Errorf("diagnostic %q declared twice", n)
		}
	}
	return nil
}

// DiagnosticColumns returns the rows.csv columns of the diagnostics the
// learners ls declare ([Diagnoser]): "diag_<name>" for each name any of
// them declares, sorted, without repeats; nil when none declares any.
func DiagnosticColumns(ls ...Learner) []string {
	var out []string
	for _, l := range ls {
		if d, ok := l.(Diagnoser); ok {
			for _, n := range d.DiagnosticNames() {
				out = append(out, "diag_"+n)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// SetDiagnostics writes the diagnostics of model m into set (a row's
// SetFloat), as "diag_<name>": nothing for a model that carries none.
func SetDiagnostics(m Model, set func(col string, v float64)) {
	d, ok := m.(Diagnosed)
	if !ok {
		return
	}
	names := make([]string, 0, len(d.Diagnostics()))
	for n := range d.Diagnostics() {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		set("diag_"+n, d.Diagnostics()[n])
	}
}
