package expostsweep

import (
	"math/rand/v2"
	"slices"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
)

// Mechanisms implements runner.Releaser: the mechanisms the spec's methods
// release (Ligett et al. 2017), declared from accuracy_first.methods and
// the generators they drive:
//
//   - noise-reduction: the generator's noise-reduction chains
//     ("noise-reduction", Algorithm 1) tested by InteractiveAboveThreshold
//     ("above-threshold-threshold", "above-threshold-query", Algorithm 2);
//   - doubling: the generator's independent releases, each tested with
//     Laplace noise ("doubling-test", Algorithm 4);
//   - theory: one independent release of the generator.
//
// The built-in generators' independent releases are
// "covariance-perturbation" (Theorem 3.1) and
// "output-perturbation-laplace" (Theorems 3.3, A.9); any other generator
// draws its noise outside the harness and is listed as
// mech.Declared(NAME), "declared-by:NAME", as a traced run records its
// releases (so a secure run's manifest lists it as unhardened).
func (e *Experiment) Mechanisms() []string {
	var out []string
	add := func(ms ...string) {
		for _, m := range ms {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	for _, name := range e.spec.AccuracyFirst.Methods {
		base, _, ok := splitMethod(name)
		m, bound := e.methods[name]
		if !ok || !bound {
			continue
		}
		switch base {
		case "noise-reduction":
			add(chainMechanism(m.gen), "above-threshold-threshold", "above-threshold-query")
		case "doubling":
			add(independentMechanism(m.gen), "doubling-test")
		case "theory":
			add(independentMechanism(m.gen))
		}
	}
	slices.Sort(out)
	return out
}

// independentMechanism names the release of one independent hypothesis of
// g (Generator.Independent, TheoryGenerator.TheoryRelease).
func independentMechanism(g accfirst.Generator) string {
	switch g.(type) {
	case accfirst.Covariance:
		return "covariance-perturbation"
	case accfirst.Output:
		return "output-perturbation-laplace"
	}
	return mech.Declared(g.Name())
}

// chainMechanism names the release of g's noise-reduction sequence
// (Generator.Sequence).
func chainMechanism(g accfirst.Generator) string {
	switch g.(type) {
	case accfirst.Covariance, accfirst.Output:
		return "noise-reduction"
	}
	return mech.Declared(g.Name())
}

// recordDeclared records, in a traced run, a release of a generator that
// is not built in (an external worker's, a user's module's), whose noise
// the harness does not draw, as a declared release (mech.RecordDeclared)
// with the guarantee it declared: the built-in generators' release sites
// record themselves.
func recordDeclared(rng *rand.Rand, g accfirst.Generator, gu privacy.Guarantee) {
	switch g.(type) {
	case accfirst.Covariance, accfirst.Output:
		return
	}
	mech.RecordDeclared(rng, g.Name(), gu, 0)
}
