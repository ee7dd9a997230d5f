package expostsweep

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/dprepro/dprepro/core/accfirst"
)

// ErrDuplicateGenerator is returned by [RegisterGenerator] for a name that
// is already registered.
var ErrDuplicateGenerator = errors.New("expostsweep: generator already registered")

// safeGeneratorName is the form of a generator name: it appears in unit
// keys ("theory-<name>"), rows.csv and file names.
var safeGeneratorName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// generatorRegistry maps accuracy_first.generator names to generators.
type generatorRegistry struct {
	mu      sync.RWMutex
	m       map[string]accfirst.Generator
	builtin map[string]bool // the names of the built-ins
}

// generators holds the built-in generators, covariance perturbation
// (Ligett et al. 2017, Algorithm 3) and output perturbation (Algorithm 5),
// and whatever RegisterGenerator adds.
var generators = newGeneratorRegistry(accfirst.Covariance{}, accfirst.Output{})

func newGeneratorRegistry(gs ...accfirst.Generator) *generatorRegistry {
	r := &generatorRegistry{m: map[string]accfirst.Generator{}}
	for _, g := range gs {
		if err := r.add(g); err != nil {
			panic(err) // a built-in with a bad name is a bug of this package
		}
	}
	r.builtin = map[string]bool{}
	for _, g := range gs {
		r.builtin[g.Name()] = true
	}
	return r
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
	if g == nil {
		return ""
	}
	name := g.Name()
	generators.mu.RLock()
	defer generators.mu.RUnlock()
	if generators.builtin[name] { // no other generator may take a built-in's name
		return ""
	}
	return name
}

func (r *generatorRegistry) add(g accfirst.Generator) error {
	if g == nil {
		return errors.New("expostsweep: nil generator")
	}
	name := g.Name()
	if name == "" {
		return errors.New("expostsweep: generator with an empty name")
	}
	if !safeGeneratorName.MatchString(name) {
		return fmt.Errorf("expostsweep: generator name %q is not of the form [A-Za-z0-9][A-Za-z0-9._-]* (it appears in unit keys and rows)", name)
	}
	ts := g.Tasks()
	if len(ts) == 0 {
		return fmt.Errorf("expostsweep: generator %q declares no task", name)
	}
	for _, t := range ts {
		if !slices.Contains(accfirst.KnownTasks(), t) {
			return fmt.Errorf("expostsweep: generator %q declares unknown task %q (known: %s)", name, t, taskList())
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateGenerator, name)
	}
	r.m[name] = g
	return nil
}

func (r *generatorRegistry) lookup(name string) (accfirst.Generator, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	g, ok := r.m[name]
	return g, ok
}

func (r *generatorRegistry) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.m))
	for n := range r.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// RegisterGenerator adds g to the hypothesis generators that a spec can
// name in accuracy_first.generator (and as "theory-<name>" in
// accuracy_first.methods when g is an [accfirst.TheoryGenerator]). The
// built-ins are "covariance" ([accfirst.Covariance], Ligett et al. 2017,
// Algorithm 3 / Theorem 3.1) and "output" ([accfirst.Output], Algorithm 5
// / Theorems 3.3, A.9).
//
// It returns an error for a nil generator, an empty name, a name that is
// not a safe file name ([A-Za-z0-9][A-Za-z0-9._-]*), a generator that
// declares no task or an unknown one, and [ErrDuplicateGenerator] (wrapped)
// for a name already registered; the registry is then unchanged. Register
// before loading specs, typically from the main function of a program
// built on package cli. Safe for concurrent use.
func RegisterGenerator(g accfirst.Generator) error { return generators.add(g) }

// GeneratorNames returns the names of the registered generators, sorted.
func GeneratorNames() []string { return generators.names() }

func taskList() string { return strings.Join(taskNames(), ", ") }

func taskNames() []string {
	var s []string
	for _, t := range accfirst.KnownTasks() {
		s = append(s, string(t))
	}
	return s
}
