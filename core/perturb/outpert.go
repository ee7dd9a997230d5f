package perturb

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
)

// OutPertOptions configures output perturbation.
type OutPertOptions struct {
	// Epsilon is the privacy parameter ε. Required, finite and > 0.
	Epsilon float64
	// Lambda is the regularization parameter λ of (λ/2)‖w‖². Required,
	// finite and > 0.
	Lambda float64
	// Loss is the margin loss; nil means erm.Logistic{}. It must be convex,
	// differentiable and 1-Lipschitz and supported by erm.Fit: erm.Logistic
	// or erm.Huber.
	Loss erm.Loss
}

// OutPertPlan is the deterministic part of output perturbation ([CMS11]
// Algorithm 1; [CV13] Algorithm 4, supplementary material) for given options
// and n rows:
//
//	w* = argmin (λ/2)‖w‖² + (1/n)Σᵢ ℓ(yᵢxᵢᵀw)
//	release w* + b,  p(b) ∝ exp(−(nλε/2)‖b‖₂)
//
// The L2 sensitivity of w* to replacing one row is 2/(nλ) for a 1-Lipschitz
// loss and ‖x‖ ≤ 1 (Lemma 1 of [CMS11], as used in the [CV13] proof of
// Theorem 4: two λ-strongly convex objectives differing by a 2/n-Lipschitz
// term have minimizers within 2/(nλ)), so the release is ε-differentially
// private. With
// b = 2R/(λεn) and R ∝ exp(−‖r‖) this is [CV13] Algorithm 4 exactly.
//
// A plan is a plain value, safe to copy and share.
//
// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
// [CV13]: https://proceedings.neurips.cc/paper/2013
type OutPertPlan struct {
	N       int      // number of training rows n
	Epsilon float64  // ε
	Lambda  float64  // λ
	Loss    erm.Loss // the loss (erm.Logistic{} when the options had nil)
	// L2Sensitivity is 2/(nλ).
	L2Sensitivity float64
	// NoiseGamma is the rate γ = nλε/2 = ε/L2Sensitivity of p(b) ∝ exp(−γ‖b‖₂).
	NoiseGamma float64
	// EpsilonDelivered is ε.
	EpsilonDelivered float64
}

// PlanOutPert computes the output-perturbation plan for opts and n rows. It
// returns an error for ε or λ not finite and > 0, n < 1, or a loss that is
// not convex, differentiable and 1-Lipschitz.
func PlanOutPert(opts OutPertOptions, n int) (OutPertPlan, error) {
	const op = "perturb: output perturbation"
	if err := checkParams(op, opts.Epsilon, opts.Lambda, n); err != nil {
		return OutPertPlan{}, err
	}
	loss := opts.Loss
	if loss == nil {
		loss = erm.Logistic{}
	}
	if _, err := checkLoss(op, loss, false); err != nil {
		return OutPertPlan{}, err
	}
	nf := float64(n)
	p := OutPertPlan{
		N: n, Epsilon: opts.Epsilon, Lambda: opts.Lambda, Loss: loss,
		L2Sensitivity:    2 / (nf * opts.Lambda),
		NoiseGamma:       nf * opts.Lambda * opts.Epsilon / 2,
		EpsilonDelivered: opts.Epsilon,
	}
	return p, nil
}

// DrawNoise fills dst with b, p(b) ∝ exp(−NoiseGamma·‖b‖₂), in
// d = len(dst) dimensions (the G of [CV13]). It returns an error if dst is
// empty.
//
// [CV13]: https://proceedings.neurips.cc/paper/2013
func (p OutPertPlan) DrawNoise(dst []float64, rng *rand.Rand) error {
	if err := mech.SphericalLaplace(dst, rng, p.NoiseGamma); err != nil {
		return fmt.Errorf("perturb: output perturbation noise: %w", err)
	}
	mech.Record(rng, mech.Release{Mechanism: "output-perturbation", Scale: p.NoiseGamma, Sensitivity: p.L2Sensitivity, Dim: len(dst),
		Guarantee: privacy.EpsDP(p.EpsilonDelivered, "the model θ of output perturbation (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 1)"),
		Params:    map[string]float64{"n": float64(p.N), "lambda": p.Lambda}})
	return nil
}

// Fit returns the non-private minimizer plus the noise, W = w* + b (the
// deterministic F of [CV13]). Iter, GradNorm, Value and Status describe the
// non-private fit w* (J(w*) and ‖∇J(w*)‖), not W. Errors are as for
// [ObjPertPlan.Fit].
//
// [CV13]: https://proceedings.neurips.cc/paper/2013
func (p OutPertPlan) Fit(rows *erm.Rows, b []float64, fit erm.FitOptions) (erm.Result, error) {
	const op = "perturb: output perturbation"
	if err := checkRows(op, rows, p.N); err != nil {
		return erm.Result{}, err
	}
	if err := checkNoise(op, b, rows.D()); err != nil {
		return erm.Result{}, err
	}
	res, err := erm.Fit(rows, erm.Objective{Loss: p.Loss, Lambda: p.Lambda}, fit)
	if err != nil {
		return erm.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	p.Release(res.W, res.W, b)
	return res, nil
}

// Release sets dst = wStar + b and returns dst (allocated when nil), so that
// one non-private fit w* can be combined with many noise draws (each
// combination released on real data spends ε again). It panics if the
// lengths differ.
func (p OutPertPlan) Release(dst, wStar, b []float64) []float64 {
	if len(wStar) != len(b) || (dst != nil && len(dst) != len(b)) {
		panic(fmt.Sprintf("perturb: Release: lengths %d, %d, %d differ", len(dst), len(wStar), len(b)))
	}
	if dst == nil {
		dst = make([]float64, len(b))
	}
	for j := range dst {
		dst[j] = wStar[j] + b[j]
	}
	return dst
}

// OutputPerturbation runs [PlanOutPert] with n = rows.N(), checks rows,
// draws the noise from rng and fits: one ε-DP release. It returns the fit
// and the plan.
func OutputPerturbation(rng *rand.Rand, rows *erm.Rows, opts OutPertOptions, fit erm.FitOptions) (erm.Result, OutPertPlan, error) {
	if rows == nil {
		return erm.Result{}, OutPertPlan{}, errors.New("perturb: output perturbation: rows is nil")
	}
	plan, err := PlanOutPert(opts, rows.N())
	if err != nil {
		return erm.Result{}, OutPertPlan{}, err
	}
	if err := checkRows("perturb: output perturbation", rows, plan.N); err != nil {
		return erm.Result{}, plan, err
	}
	b := make([]float64, rows.D())
	if err := plan.DrawNoise(b, rng); err != nil {
		return erm.Result{}, plan, err
	}
	res, err := plan.Fit(rows, b, fit)
	return res, plan, err
}
