// Package noisygd is a private learner written outside dprepro: L2-
// regularized logistic regression trained by noisy full-batch gradient
// descent, registered with learners.Register so that the cv-tuning
// kind tunes it beside the published baselines on Chaudhuri & Vinterbo's
// protocol (repeated 10-fold CV; alphaSplit, dataSplit, Random, Control).
//
// # Algorithm
//
// The objective is J(θ) = (1/n)·Σᵢ log(1 + exp(−yᵢ·θᵀxᵢ)) + (λ/2)·‖θ‖².
// Starting from θ₀ = 0, each of the Steps iterations releases a noisy
// gradient
//
//	g_t = (1/n)·Σᵢ clip(∇ℓ(θ_t; xᵢ, yᵢ)) + λ·θ_t + b_t,   p(b_t) ∝ exp(−γ·‖b_t‖₂)
//	θ_{t+1} = θ_t − η·g_t,   η = 1/(1/4 + λ)
//
// where clip scales a per-record gradient to Euclidean norm at most 1 (for
// rows with ‖x‖ ≤ 1, as dprepro's default row_norm l2-max makes them, the
// logistic gradient already has norm ≤ 1 and clipping changes nothing).
// The released model is θ_Steps. This is the gradient-perturbation method
// of Bassily, Smith & Thakurta, "Private Empirical Risk Minimization:
// Efficient Algorithms and Tight Error Bounds" (FOCS 2014), with full
// batches and the spherical Laplace noise of Chaudhuri, Monteleoni &
// Sarwate (JMLR 2011) in place of Gaussian noise, so that the guarantee is
// pure ε-DP (the selection methods of the cv-tuning kind compose pure
// guarantees).
//
// # Privacy
//
// Neighbouring training sets differ in one record (replace-one). The
// clipped average gradient then changes by at most 2/n in L2 norm, so each
// noisy gradient with γ = ε·n/(2·Steps) is (ε/Steps)-DP (Chaudhuri et al.
// 2011, the argument of Algorithm 1), and the Steps releases compose
// sequentially to ε-DP (Dwork & Roth 2014, Theorem 3.16). θ_Steps is a
// function of the released gradients only. Fit returns that guarantee as a
// privacy.Guarantee; the harness composes it into the run's ledger.
//
// The learner has no stability constants (learners.StableLearner), so it
// cannot run under the Stability method of Chaudhuri & Vinterbo, which
// needs them; the harness refuses that pairing.
package noisygd

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/params"
)

// Learner is noisy gradient descent. The zero value is not usable: set
// Steps.
//
// It declares one parameter (learners.Parameterized), "steps", so that a
// spec can set it, or run several values side by side, without a new
// build:
//
//	[[methods]]
//	name = "noisy-gd"
//	serves = "learner"
//	[methods.params]
//	steps = [10, 30, 100]   # three curves: noisy-gd[steps=10], …
type Learner struct {
	// Steps is the number of noisy gradient steps; >= 1. Each costs ε/Steps.
	Steps int

	label string // a variant's label ("noisy-gd[steps=10]"); "" for the registered learner
}

// Name implements learners.Learner: "noisy-gd", or a variant's label.
func (l Learner) Name() string {
	if l.label != "" {
		return l.label
	}
	return "noisy-gd"
}

// Params implements learners.Parameterized: steps, an int whose default
// is the registered learner's Steps.
func (l Learner) Params() []params.Param {
	return []params.Param{{Name: "steps", Type: params.Int, Default: int64(l.Steps),
		Doc: "noisy gradient steps; each costs ε/steps"}}
}

// WithParams implements learners.Parameterized: the learner of setting s,
// named name.
func (l Learner) WithParams(name string, s params.Setting) (learners.Learner, error) {
	steps := s.Int("steps")
	if steps < 1 || steps > 100000 {
		return nil, fmt.Errorf("steps = %d: want 1 to 100000", steps)
	}
	return Learner{Steps: int(steps), label: name}, nil
}

// Fit implements learners.Learner: Steps noisy gradient steps on train at
// regularization lambda, ε-DP at level.Epsilon (level.Delta is not used).
func (l Learner) Fit(ctx context.Context, rng *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	if l.Steps < 1 {
		return nil, privacy.Guarantee{}, fmt.Errorf("noisy-gd: steps must be >= 1 (got %d)", l.Steps)
	}
	eps := level.Epsilon
	if !(eps > 0) || math.IsInf(eps, 1) || !(lambda > 0) {
		return nil, privacy.Guarantee{}, fmt.Errorf("noisy-gd: need finite ε > 0 and λ > 0 (got ε = %v, λ = %v)", eps, lambda)
	}
	n, d := train.N(), train.D()
	X, y := train.X(), train.Y()
	theta := make([]float64, d)
	grad := make([]float64, d)
	noise := make([]float64, d)
	gi := make([]float64, d)
	eta := 1 / (0.25 + lambda)
	gamma := eps * float64(n) / (2 * float64(l.Steps))
	for t := 0; t < l.Steps; t++ {
		if err := ctx.Err(); err != nil {
			return nil, privacy.Guarantee{}, err
		}
		clear(grad)
		for i := 0; i < n; i++ {
			x := X.RawRowView(i)
			m := 0.0
			for j, v := range x {
				m += theta[j] * v
			}
			// ∇ log(1+exp(−y·m)) = −y·σ(−y·m)·x
			c := -y[i] / (1 + math.Exp(y[i]*m))
			norm := 0.0
			for j, v := range x {
				gi[j] = c * v
				norm += gi[j] * gi[j]
			}
			scale := 1.0
			if norm > 1 {
				scale = 1 / math.Sqrt(norm) // clip to norm 1
			}
			for j := range grad {
				grad[j] += scale * gi[j] / float64(n)
			}
		}
		if err := mech.SphericalLaplace(noise, rng, gamma); err != nil {
			return nil, privacy.Guarantee{}, fmt.Errorf("noisy-gd: %w", err)
		}
		for j := range theta {
			theta[j] -= eta * (grad[j] + lambda*theta[j] + noise[j])
		}
	}
	g := privacy.EpsDP(eps, fmt.Sprintf("θ after %d noisy gradient steps on the training folds (replace-one adjacency)", l.Steps))
	return model(theta), g, nil
}

// model is a linear classifier θ.
type model []float64

// Margins implements learners.Model: θᵀx for each row of d.
func (m model) Margins(dst []float64, d *learners.Data) []float64 {
	n := d.N()
	if len(dst) != n {
		dst = make([]float64, n)
	}
	X := d.X()
	for i := 0; i < n; i++ {
		s := 0.0
		for j, v := range X.RawRowView(i) {
			s += m[j] * v
		}
		dst[i] = s
	}
	return dst
}
