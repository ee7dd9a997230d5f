package expostsweep

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/methods/registry"
)

// ErrDuplicateGenerator is returned (wrapped) by [RegisterGenerator] for a
// name that is already registered: registry.ErrDuplicate.
var ErrDuplicateGenerator = registry.ErrDuplicate

// generators holds the built-in generators, covariance perturbation
// (Ligett et al. 2017, Algorithm 3) and output perturbation (Algorithm 5),
// and whatever RegisterGenerator adds.
var generators = registry.New[accfirst.Generator]("generator", checkTasks, accfirst.Covariance{}, accfirst.Output{})

// checkTasks refuses a generator that declares no task or an unknown one.
func checkTasks(g accfirst.Generator) error {
	ts := g.Tasks()
	if len(ts) == 0 {
		return fmt.Errorf("expostsweep: generator %q declares no task", g.Name())
	}
	for _, t := range ts {
		if !slices.Contains(accfirst.KnownTasks(), t) {
			return fmt.Errorf("expostsweep: generator %q declares unknown task %q (known: %s)", g.Name(), t, taskList())
		}
	}
	return nil
}

// DeclaredBy returns the name of generator g when its guarantees are its
// own word, which the harness does not check: a generator served by an
// external command ([ExternalGenerator]) or one a user's module
// registered ([RegisterGenerator]) — a Go extension is no more audited by
// the harness than a worker is. It returns "" for the built-in
// generators, covariance and output perturbation (core/accfirst, checked
// by the harness's tests and privacy audit). The ledger names such a
// generator in its charges' declared_by, and the figures' legends say
// "declared by the method".
func DeclaredBy(g accfirst.Generator) string {
	if g == nil || generators.Builtin(g) { // no other generator may take a built-in's name
		return ""
	}
	return g.Name()
}

// RegisterGenerator adds g to the hypothesis generators that a spec can
// name in accuracy_first.generator (and as "theory-<name>" in
// accuracy_first.methods when g is an [accfirst.TheoryGenerator]). The
// built-ins are "covariance" ([accfirst.Covariance], Ligett et al. 2017,
// Algorithm 3 / Theorem 3.1) and "output" ([accfirst.Output], Algorithm 5
// / Theorems 3.3, A.9).
//
// It returns an error for a nil generator or a name that breaks the
// registries' one rule (registry.CheckName: 1–64 bytes, a letter or digit,
// then letters, digits, '_', '.' or '-'; wrapping registry.ErrBadName), a
// generator that declares no task or an unknown one, and
// [ErrDuplicateGenerator] (wrapped) for a name already registered; the
// registry is then unchanged. Register before loading specs, typically
// from the main function of a program built on package cli. Safe for
// concurrent use.
func RegisterGenerator(g accfirst.Generator) error { return generators.Register(g) }

// GeneratorNames returns the names of the registered generators in
// registration order (the built-ins first).
func GeneratorNames() []string { return generators.Names() }

func taskList() string { return strings.Join(taskNames(), ", ") }

func taskNames() []string {
	var s []string
	for _, t := range accfirst.KnownTasks() {
		s = append(s, string(t))
	}
	return s
}
