package cicoverage

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/internal/stattest"
	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/runner"
)

// builtinNames are the paper's eight methods.
var builtinNames = []string{"dp-obj-lr", "dp-obj-svm", "dp-output-lr", "dp-output-svm",
	"zcdp-obj-lr", "zcdp-obj-svm", "zcdp-output-lr", "zcdp-output-svm"}

// TestReplicate_IndependentStreams checks that the releases of one
// replicate draw their noise from independent streams, as the composition
// of Theorems 2 and 4 assumes (θ̃, H̃ and Σ̃ with independent noise, and the
// methods' releases independent of each other and of the bootstrap draw):
//
//   - the eight built-in methods, run on one replicate through the kind's
//     stream derivation (Experiment.stream, as runCI), ask for every named
//     step at most once: a step asked for twice hands out a generator with
//     the same seed, whose draws replay — the Hessian's noise would repeat
//     θ̃'s, say. (The DP and zCDP objective perturbations share one
//     Algorithm 1 run through Share, by design: the same ε₁-DP release.)
//   - the steps' generators, the replicate's own ("resample") included,
//     differ pairwise, and differ from the same steps of the next
//     replicate: the derivation keys on the step and the replicate.
func TestReplicate_IndependentStreams(t *testing.T) {
	e, err := newWith(t, builtinNames...)
	if err != nil {
		t.Fatal(err)
	}
	env := runner.NewEnv(e.spec.Spec, "", false)
	pt := e.points[0]
	first := map[string]uint64{} // model/rep/step → first draw
	for _, model := range []dpci.Model{dpci.LR, dpci.SVM} {
		prob := e.problem(erm.FitOptions{Init: pt.theta0[model]})
		for rep := range 2 {
			calls := map[string]int{}
			rs := newResampler(pt.data, false)
			d := cimethods.Data{
				Rows:    rs.draw(e.stream(env, pt, model, "ci", rep, resampleStep)),
				Problem: prob,
				Streams: streams(func(step string) *rand.Rand {
					calls[step]++
					return e.stream(env, pt, model, "ci", rep, step)
				}),
				Shared: new(cimethods.Shared),
			}
			for _, i := range e.sel(model) {
				if _, err := e.methods[i].Interval(context.Background(), d, pt.budget()); err != nil {
					t.Fatalf("%s: %v", e.methods[i].Name(), err)
				}
			}
			steps := []string{resampleStep}
			for step, k := range calls {
				if k > 1 {
					t.Errorf("%s replicate %d: step %q asked for %d times: its releases replay the same noise", model, rep, step, k)
				}
				steps = append(steps, step)
			}
			slices.Sort(steps)
			if len(steps) < 6 { // obj-fit, {dp,zcdp}-obj-ci, {dp,zcdp}-output, resample
				t.Errorf("%s replicate %d: steps %v, want the 5 steps of the built-ins and resample", model, rep, steps)
			}
			for _, step := range steps {
				first[fmt.Sprintf("%s/%d/%s", model, rep, step)] = e.stream(env, pt, model, "ci", rep, step).Uint64()
			}
		}
	}
	// Distinct keys must give distinct generators: equal first draws of two
	// independent 64-bit streams have probability 2⁻⁶⁴ per pair.
	seen := map[uint64]string{}
	for k, v := range first {
		if o, ok := seen[v]; ok {
			t.Errorf("streams %s and %s start with the same draw: one seed", o, k)
		}
		seen[v] = k
	}
}

// TestZCDP_RhoIsHalfEpsilonSquared pins the conversion ρ = ε²/2 of Wang,
// Kifer & Lee's Section 7 ("we set ρ = ε²/2") in the noise the coverage
// experiment draws (the parameters the zCDP methods hand to dpci are
// pinned beside the methods, methods/cimethods TestWKL_ZCDPParams):
// zcdp-output-lr's θ̃ − θ̂ is N(0, σ²I) with σ = 1/(n·c·√(2ρ₁)) =
// 1/(n·c·ε₁) (Algorithm 4). Over R releases of the d+1 coordinates (m
// values), the mean of (θ̃ − θ̂)² is σ² within z·σ²·√(2/m) (χ²: Var = 2σ⁴),
// z = ZCrit(1); ρ = ε² would halve σ², ρ = ε²/4 double it.
func TestZCDP_RhoIsHalfEpsilonSquared(t *testing.T) {
	b := cimethods.Budget{Eps1: 0.5, Eps2: 0.25, Eps3: 0.25}
	e, err := newWith(t, "zcdp-output-lr")
	if err != nil {
		t.Fatal(err)
	}
	pt := e.points[0]
	rows := newResampler(pt.data, false).draw(randx.New(5, "rho", "resample"))
	d := cimethods.Data{Rows: rows, Problem: e.problem(erm.FitOptions{Init: pt.theta0[dpci.LR]}), Shared: new(cimethods.Shared)}
	m, err := cimethods.Lookup("zcdp-output-lr")
	if err != nil {
		t.Fatal(err)
	}
	// θ̂ of Eq. 7, fitted as the method fits it (deterministic: the same
	// rows, problem and warm start).
	hat, err := dpci.FitNonPrivate(d.Rows, dpci.Params{Model: dpci.LR, H: d.Problem.H, C: d.Problem.C}, d.Problem.Fit)
	if err != nil {
		t.Fatal(err)
	}
	n, c := rows.SumWeights(), d.Problem.C
	sigma2 := math.Pow(1/(n*c*b.Eps1), 2)
	const R = 300
	for _, seed := range stattest.Seeds(7) {
		var ss float64
		var k int
		for r := range R {
			d.Streams = streams(func(step string) *rand.Rand { return randx.New(seed, "rho", fmt.Sprint(r), step) })
			est, err := m.Fit(context.Background(), d, b.Eps1)
			if err != nil {
				t.Fatal(err)
			}
			for j, v := range est.Theta {
				dv := v - hat.W[j]
				ss += dv * dv
				k++
			}
		}
		stattest.CheckWithin(t, fmt.Sprintf("seed %d: mean (θ̃ − θ̂)² (σ² = 1/(n·c·ε₁)²)", seed), ss/float64(k), sigma2, stattest.ZCrit(1)*sigma2*math.Sqrt(2/float64(k)))
	}
}
