// Package generators is the hypothesis-generator extension point of the
// "expost-sweep" experiment kind: the private ERM methods that the
// accuracy-first searches of Ligett, Neel, Roth, Waggoner & Wu, "Accuracy
// First: Selecting a Differential Privacy Level for Accuracy-Constrained
// ERM" (NeurIPS 2017, arXiv:1705.10829), drive — noise reduction
// (Algorithm 1 over the method's Laplace release), the doubling method
// (Algorithm 4) and the theory approach (Section 4).
//
// It holds the interface ([Generator], an alias of core/accfirst's, with
// the types an implementation needs), the registry that a spec's names
// are checked against ([Register], [Names], [Lookup]), and the adapter of
// a generator served by an external command ([External]). The built-ins,
// covariance perturbation ("covariance", Algorithm 3 / Theorem 3.1) and
// output perturbation ("output", Algorithm 5 / Theorems 3.3, A.9), are
// accfirst.Covariance and accfirst.Output; their algorithms live in
// core/accfirst, the math layer.
//
// # Adding a generator
//
// A user's module implements [Generator] (and [TheoryGenerator] for the
// theory methods and its own ε grid; [MemoryEstimator] for the memory
// estimate) and calls [Register] before loading specs, typically from the
// main function of a program built on package cli. Every release returns
// its privacy guarantee as a core/privacy.Guarantee value, as at every
// extension point; the kind books those values, never a name. A generator
// that is not built in is labelled "declared by the method"
// ([DeclaredBy]).
package generators

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/methods/registry"
)

// Generator is a private ERM method that the accuracy-first searches
// drive: a noise-reduction sequence (Sequence) and independent releases
// (Independent), each stating its privacy guarantee as a value; see
// accfirst.Generator for the contract (concurrency, randomness, the norm
// bound).
type Generator = accfirst.Generator

// TheoryGenerator is a [Generator] with a utility theorem, which gives the
// theory method and the scale of the ε grid; see accfirst.TheoryGenerator.
type TheoryGenerator = accfirst.TheoryGenerator

// MemoryEstimator is implemented by a [Generator] that states the
// [Footprint] of its sequences for the memory estimate; see
// accfirst.MemoryEstimator.
type MemoryEstimator = accfirst.MemoryEstimator

// Footprint is the memory shape of a noise-reduction sequence; see
// accfirst.Footprint.
type Footprint = accfirst.Footprint

// Setting is what a [Generator] runs on: the task, the problem and the
// calibration of the accuracy tests; see accfirst.Setting.
type Setting = accfirst.Setting

// Task is the ERM problem of a search, as a spec names it
// (accuracy_first.task); see accfirst.Task.
type Task = accfirst.Task

// The tasks a [Generator] may declare.
const (
	// TaskRidge is ridge regression (Ligett et al. 2017, Section 3.1).
	TaskRidge = accfirst.TaskRidge
	// TaskLogistic is ℓ₂-regularized logistic regression (Section 3.2).
	TaskLogistic = accfirst.TaskLogistic
)

// Problem is the private ERM problem of a [Setting] (data, θ*, norm
// bound, sensitivities); see accfirst.Problem.
type Problem = accfirst.Problem

// Sequence is a noise-reduction sequence of hypotheses, as
// Generator.Sequence returns it; see expost.Sequence.
type Sequence = expost.Sequence

// Hypothesis is one released hypothesis; see expost.Hypothesis.
type Hypothesis = expost.Hypothesis

// ErrDuplicate is returned (wrapped) by [Register] for a name that is
// already registered: registry.ErrDuplicate.
var ErrDuplicate = registry.ErrDuplicate

// generators holds the built-in generators, covariance perturbation
// (Ligett et al. 2017, Algorithm 3) and output perturbation (Algorithm 5),
// and whatever Register adds.
var generators = registry.New[Generator]("generator", checkTasks, accfirst.Covariance{}, accfirst.Output{})

// checkTasks refuses a generator that declares no task or an unknown one.
func checkTasks(g Generator) error {
	ts := g.Tasks()
	if len(ts) == 0 {
		return fmt.Errorf("generators: generator %q declares no task", g.Name())
	}
	for _, t := range ts {
		if !slices.Contains(accfirst.KnownTasks(), t) {
			return fmt.Errorf("generators: generator %q declares unknown task %q (known: %s)", g.Name(), t, taskList())
		}
	}
	return nil
}

// Register adds g to the hypothesis generators that a spec can name in
// accuracy_first.generator (and as "theory-<name>" in
// accuracy_first.methods when g is a [TheoryGenerator]). The built-ins
// are "covariance" (accfirst.Covariance, Ligett et al. 2017, Algorithm 3
// / Theorem 3.1) and "output" (accfirst.Output, Algorithm 5 / Theorems
// 3.3, A.9).
//
// It returns an error for a nil generator or a name that breaks the
// registries' one rule (registry.CheckName: 1–64 bytes, a letter or digit,
// then letters, digits, '_', '.' or '-'; wrapping registry.ErrBadName), a
// generator that declares no task or an unknown one, and [ErrDuplicate]
// (wrapped) for a name already registered; the registry is then
// unchanged. Register before loading specs, typically from the main
// function of a program built on package cli. Safe for concurrent use.
func Register(g Generator) error { return generators.Register(g) }

// Names returns the names of the registered generators in registration
// order (the built-ins first).
func Names() []string { return generators.Names() }

// Lookup returns the registered generator called name.
func Lookup(name string) (Generator, bool) { return generators.Lookup(name) }

// DeclaredBy returns the name of generator g when its guarantees are its
// own word, which the harness does not check: a generator served by an
// external command ([External]) or one a user's module registered
// ([Register]) — a Go extension is no more audited by the harness than a
// worker is. It returns "" for the built-in generators, covariance and
// output perturbation (core/accfirst, checked by the harness's tests and
// privacy audit), and for nil. The ledger names such a generator in its
// charges' declared_by, and the figures' legends say "declared by the
// method".
func DeclaredBy(g Generator) string {
	if g == nil || generators.Builtin(g) { // no other generator may take a built-in's name
		return ""
	}
	return g.Name()
}

// taskList lists the known tasks for messages.
func taskList() string {
	var s []string
	for _, t := range accfirst.KnownTasks() {
		s = append(s, string(t))
	}
	return strings.Join(s, ", ")
}
