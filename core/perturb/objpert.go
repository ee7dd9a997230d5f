package perturb

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
)

// Objective-perturbation variants (ObjPertOptions.Variant).
const (
	// VariantCMS11 is Algorithm 2 of [CMS11] exactly (the default).
	//
	// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
	VariantCMS11 = "cms11"
	// VariantPrivateLR1169 reproduces PrivateLR 1.1-69 (May 2013, the
	// release current when Chaudhuri & Vinterbo 2013 appeared; function
	// dplr), not the current 1.2-22, which the default [VariantCMS11]
	// matches; it does not deliver the stated ε. It was named "dplr2013"
	// until November 2026. See [ObjPertOptions].
	VariantPrivateLR1169 = "privatelr-1.1-69"
)

// Sentinel errors of Fit's data checks and of loss validation.
var (
	// ErrRowNorm reports a row with ‖xᵢ‖₂ > 1 + 1e-9; the privacy analyses
	// of [CMS11] require the unit ball.
	//
	// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
	ErrRowNorm = errors.New("perturb: row norm exceeds 1")
	// ErrLabel reports a label other than −1 or +1.
	ErrLabel = errors.New("perturb: label is not -1 or +1")
	// ErrWeighted reports rows with per-row weights: a weight ω > 1 gives
	// one person ω times the influence assumed by the sensitivity analysis.
	ErrWeighted = errors.New("perturb: weighted rows are not covered by the privacy analysis")
	// ErrUnsupportedLoss reports a loss outside the conditions of the
	// algorithms (convex, differentiable, 1-Lipschitz; for objective
	// perturbation also ℓ″ ≤ c < ∞).
	ErrUnsupportedLoss = errors.New("perturb: loss not supported")
)

// rowNormSlack is the tolerance on ‖xᵢ‖₂ ≤ 1 for rows scaled to the unit
// ball in floating point.
const rowNormSlack = 1e-9

// ObjPertOptions configures objective perturbation.
//
// Variant "privatelr-1.1-69" is an opt-in, labelled reproduction of the 2013 release
// of PrivateLR (R/dplr.r, header "linclass.r", created 16 May 2013, modified
// 3 June 2013; read from the GitHub CRAN mirror cran/PrivateLR at commit
// 49fcaffc22ed9db0efe774f66f1edf142c6309e8), the release contemporary with
// [CV13], to explain published curves, not to deliver privacy. Compared
// with CMS11 it
//   - minimizes λ‖w‖² + (1/n)Σℓ + (1/n)bᵀw, i.e. EffectiveLambda = 2λ in the
//     (λ/2)‖w‖² form of this package;
//   - computes ε′ = ε − 2·log(1 + c/(nλ)) with the requested λ (not 2λ) and
//     c = 1/4 (logistic only);
//   - draws b with density ∝ exp(−ε′‖b‖) (R = sampleR(d, 1)/ε′), half the
//     CMS11 scale 2/ε′;
//   - when ε′ ≤ 0, switches to output perturbation instead of adding Δ:
//     w* + (1/(ελn))·R with R ∝ exp(−‖r‖), which for the regularizer λ‖w‖²
//     (sensitivity 2/(n·2λ)) is exactly ε-DP.
//
// Its delivered privacy, by the proof of CMS11 (noise term 2β for a density
// ∝ exp(−β‖b‖) since ‖b − b′‖ ≤ 2; curvature term 2·log(1 + c/(nΛ)) for a
// regularizer of strength Λ = 2λ), is
//
//	EpsilonDelivered = 2ε′ + 2·log(1 + c/(2nλ))   (ε′ > 0)
//	                 ≤ ε + ε′ < 2ε
//	EpsilonDelivered = ε                           (ε′ ≤ 0, output fallback)
//
// The bound ε + ε′ is what one gets by charging the curvature term at λ, as
// PrivateLR does, instead of at the actual 2λ. The delivered ε exceeds the
// stated one exactly when ε′ > 2·log((1 + q)/(1 + q/2)), q = c/(nλ), which
// holds in the regimes of the experiments (e.g. n = 15,000, λ = 1e-3,
// ε = 1: q ≈ 0.017, EpsilonDelivered ≈ 1.95); when ε′ is tiny it is below ε,
// because the doubled regularizer makes the curvature term cheaper than
// charged. Deviation: dplr solved its problems with R's optim (BFGS,
// default tolerance; the output-perturbation objective there even multiplies
// the regularizer by the loss instead of adding them, while its gradient
// adds them); this package solves the intended problems to GradTol.
//
// [CV13]: https://proceedings.neurips.cc/paper/2013
type ObjPertOptions struct {
	// Epsilon is the requested privacy parameter ε (the α of [CMS11] and
	// [CV13]). Required, finite and > 0.
	//
	// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
	// [CV13]: https://proceedings.neurips.cc/paper/2013
	Epsilon float64
	// Lambda is the regularization parameter λ of (λ/2)‖w‖². Required,
	// finite and > 0.
	Lambda float64
	// Loss is the margin loss; nil means erm.Logistic{}. It must be convex,
	// twice differentiable, 1-Lipschitz with finite curvature bound c
	// (erm.Curvature, erm.Lipschitz): erm.Logistic (c = 1/4) or erm.Huber
	// (c = 1/(2H)). Variant "privatelr-1.1-69" accepts only erm.Logistic.
	Loss erm.Loss
	// Variant is "cms11" (default; "" means "cms11") or "privatelr-1.1-69".
	Variant string
}

// ObjPertPlan is the deterministic part of objective perturbation for given
// options and number of rows n: the quantities of [CMS11] Algorithm 2 before
// any noise is drawn. A plan is a plain value, safe to copy and share.
//
// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
type ObjPertPlan struct {
	Variant string   // VariantCMS11 or VariantPrivateLR1169
	N       int      // number of training rows n
	Epsilon float64  // requested ε
	Lambda  float64  // requested λ
	Loss    erm.Loss // the loss (erm.Logistic{} when the options had nil)
	// Curvature is c = sup ℓ″.
	Curvature float64
	// EpsilonPrime is ε′ after the branch: ε − log(1 + 2c/(nλ) + c²/(n²λ²))
	// when that is > 0, else ε/2 (cms11). For the privatelr-1.1-69 output fallback it
	// is ε, the budget of the output noise.
	EpsilonPrime float64
	// Fallback reports that ε − log(1 + 2c/(nλ) + c²/(n²λ²)) ≤ 0, so that
	// extra regularization Delta (cms11) or output perturbation (privatelr-1.1-69)
	// was used.
	Fallback bool
	// OutputPerturbation is true only for the privatelr-1.1-69 fallback: Fit then
	// releases argmin + b rather than perturbing the objective.
	OutputPerturbation bool
	// Delta is the extra regularization Δ = c/(n(e^{ε/4} − 1)) − λ of the
	// cms11 fallback, else 0.
	Delta float64
	// NoiseGamma is the rate γ of the noise density p(b) ∝ exp(−γ‖b‖₂):
	// ε′/2 for cms11, ε′ for privatelr-1.1-69, ελn for the privatelr-1.1-69 fallback.
	NoiseGamma float64
	// EffectiveLambda is the coefficient of (1/2)‖w‖² in the fitted
	// objective, excluding Delta: λ for cms11, 2λ for privatelr-1.1-69.
	EffectiveLambda float64
	// EpsilonDelivered is the ε of the ε-DP guarantee actually delivered
	// (see ObjPertOptions): Epsilon for cms11 in both branches.
	EpsilonDelivered float64
}

// PlanObjPert computes the objective-perturbation plan for opts and n rows,
// following [CMS11] Algorithm 2 (variant cms11):
//
//	ε′ = ε − log(1 + 2c/(nλ) + c²/(n²λ²))
//	if ε′ > 0:  Δ = 0
//	else:       Δ = c/(n(e^{ε/4} − 1)) − λ,  ε′ = ε/2
//	b ~ p(b) ∝ exp(−(ε′/2)‖b‖₂)
//	w = argmin (λ/2)‖w‖² + (1/n)Σᵢ ℓ(yᵢxᵢᵀw) + (1/n)bᵀw + (Δ/2)‖w‖²
//
// which is ε-differentially private (both branches) under the conditions in
// the package documentation. log(1 + 2q + q²) is evaluated as 2·log1p(q),
// q = c/(nλ), and e^{ε/4} − 1 as expm1(ε/4), for accuracy at small q and ε.
// With b = 2R/ε′ and R ∝ exp(−‖r‖) this is [CV13] Algorithm 3 (Eq. (2))
// with the privacy parameter ε′.
//
// It returns an error for ε or λ not finite and > 0, n < 1, an unknown
// variant, or an unsupported loss.
//
// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
// [CV13]: https://proceedings.neurips.cc/paper/2013
func PlanObjPert(opts ObjPertOptions, n int) (ObjPertPlan, error) {
	const op = "perturb: objective perturbation"
	if err := checkParams(op, opts.Epsilon, opts.Lambda, n); err != nil {
		return ObjPertPlan{}, err
	}
	loss := opts.Loss
	if loss == nil {
		loss = erm.Logistic{}
	}
	c, err := checkLoss(op, loss, true)
	if err != nil {
		return ObjPertPlan{}, err
	}
	eps, lambda, nf := opts.Epsilon, opts.Lambda, float64(n)
	p := ObjPertPlan{N: n, Epsilon: eps, Lambda: lambda, Loss: loss, Curvature: c}
	switch opts.Variant {
	case "", VariantCMS11:
		p.Variant = VariantCMS11
		p.EffectiveLambda = lambda
		p.EpsilonPrime = eps - 2*math.Log1p(c/(nf*lambda))
		if !(p.EpsilonPrime > 0) {
			p.Fallback = true
			p.Delta = c/(nf*math.Expm1(eps/4)) - lambda
			p.EpsilonPrime = eps / 2
		}
		p.NoiseGamma = p.EpsilonPrime / 2
		p.EpsilonDelivered = eps
	case VariantPrivateLR1169:
		if _, ok := loss.(erm.Logistic); !ok {
			return ObjPertPlan{}, fmt.Errorf("%s: variant %s: %w: %s (PrivateLR hard-codes c = 1/4, logistic)",
				op, VariantPrivateLR1169, ErrUnsupportedLoss, loss.Name())
		}
		p.Variant = VariantPrivateLR1169
		p.EffectiveLambda = 2 * lambda
		// PrivateLR: penalty = 2·log(1 + c/(nλ)) with the requested λ.
		p.EpsilonPrime = eps - 2*math.Log1p(c/(nf*lambda))
		if p.EpsilonPrime > 0 {
			p.NoiseGamma = p.EpsilonPrime
			p.EpsilonDelivered = 2*p.EpsilonPrime + 2*math.Log1p(c/(nf*p.EffectiveLambda))
		} else {
			// PrivateLR: "regularizer too small, using output perturbation":
			// w* + (1/(ελn))·R, R ∝ exp(−‖r‖).
			p.Fallback = true
			p.OutputPerturbation = true
			p.EpsilonPrime = eps
			p.NoiseGamma = eps * lambda * nf
			p.EpsilonDelivered = eps
		}
	default:
		return ObjPertPlan{}, fmt.Errorf("%s: unknown variant %q (want %q or %q)", op, opts.Variant, VariantCMS11, VariantPrivateLR1169)
	}
	if !(p.NoiseGamma > 0) || math.IsInf(p.NoiseGamma, 1) {
		return ObjPertPlan{}, fmt.Errorf("%s: noise rate %v is not finite and > 0 (epsilon %v, lambda %v, n %d)", op, p.NoiseGamma, eps, lambda, n)
	}
	return p, nil
}

// DrawNoise fills dst with the noise vector b, p(b) ∝ exp(−NoiseGamma·‖b‖₂),
// in d = len(dst) dimensions (the G of [CV13]). It consumes randomness from
// rng only. It returns an error if dst is empty.
//
// [CV13]: https://proceedings.neurips.cc/paper/2013
func (p ObjPertPlan) DrawNoise(dst []float64, rng *rand.Rand) error {
	if err := mech.SphericalLaplace(dst, rng, p.NoiseGamma); err != nil {
		return fmt.Errorf("perturb: objective perturbation noise: %w", err)
	}
	mech.Record(rng, mech.Release{Mechanism: "objective-perturbation", Scale: p.NoiseGamma, Sensitivity: 2, Dim: len(dst),
		Guarantee: privacy.EpsDP(p.EpsilonDelivered, "the model θ of objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2)"),
		Params: map[string]float64{"n": float64(p.N), "lambda": p.EffectiveLambda, "Delta": p.Delta, "c": p.Curvature,
			"epsilon_prime": p.EpsilonPrime, "output_fallback": b2f(p.OutputPerturbation)}})
	return nil
}

// Fit returns the private classifier for the noise b (the deterministic F
// of [CV13]): W = argmin of
//
//	(EffectiveLambda/2)‖w‖² + (1/n)Σᵢ ℓ(yᵢxᵢᵀw) + (1/n)bᵀw + (Delta/2)‖w‖²
//
// or, for the privatelr-1.1-69 output fallback, W = argmin((EffectiveLambda/2)‖w‖² +
// (1/n)Σᵢ ℓ) + b. fit configures the solver (erm.Fit); a Result.Status other
// than "converged" is reported, not an error.
//
// It returns an error, without fitting, if rows is nil, has invalid values
// or per-row weights, has a number of rows other than p.N, a row with
// ‖xᵢ‖₂ > 1 + 1e-9 (ErrRowNorm) or a label other than ±1 (ErrLabel), or if
// len(b) ≠ rows.D() or b is not finite.
//
// [CV13]: https://proceedings.neurips.cc/paper/2013
func (p ObjPertPlan) Fit(rows *erm.Rows, b []float64, fit erm.FitOptions) (erm.Result, error) {
	const op = "perturb: objective perturbation"
	if err := checkRows(op, rows, p.N); err != nil {
		return erm.Result{}, err
	}
	if err := checkNoise(op, b, rows.D()); err != nil {
		return erm.Result{}, err
	}
	obj := erm.Objective{Loss: p.Loss, Lambda: p.EffectiveLambda, ExtraL2: p.Delta}
	if p.OutputPerturbation {
		res, err := erm.Fit(rows, obj, fit)
		if err != nil {
			return erm.Result{}, fmt.Errorf("%s: %w", op, err)
		}
		for j, v := range b {
			res.W[j] += v
		}
		return res, nil
	}
	lin := make([]float64, len(b))
	for j, v := range b {
		lin[j] = v / float64(p.N)
	}
	obj.Linear = lin
	res, err := erm.Fit(rows, obj, fit)
	if err != nil {
		return erm.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

// ObjectivePerturbation runs [PlanObjPert] with n = rows.N(), checks rows,
// draws the noise from rng and fits: one ε-DP release (EpsilonDelivered for
// the privatelr-1.1-69 variant). It returns the fit and the plan.
func ObjectivePerturbation(rng *rand.Rand, rows *erm.Rows, opts ObjPertOptions, fit erm.FitOptions) (erm.Result, ObjPertPlan, error) {
	if rows == nil {
		return erm.Result{}, ObjPertPlan{}, errors.New("perturb: objective perturbation: rows is nil")
	}
	plan, err := PlanObjPert(opts, rows.N())
	if err != nil {
		return erm.Result{}, ObjPertPlan{}, err
	}
	// Check the data before spending randomness on it.
	if err := checkRows("perturb: objective perturbation", rows, plan.N); err != nil {
		return erm.Result{}, plan, err
	}
	b := make([]float64, rows.D())
	if err := plan.DrawNoise(b, rng); err != nil {
		return erm.Result{}, plan, err
	}
	res, err := plan.Fit(rows, b, fit)
	return res, plan, err
}

// checkParams validates ε, λ and n.
func checkParams(op string, epsilon, lambda float64, n int) error {
	if !(epsilon > 0) || math.IsInf(epsilon, 1) {
		return fmt.Errorf("%s: epsilon must be finite and > 0 (got %v)", op, epsilon)
	}
	if !(lambda > 0) || math.IsInf(lambda, 1) {
		return fmt.Errorf("%s: lambda must be finite and > 0 (got %v)", op, lambda)
	}
	if n < 1 {
		return fmt.Errorf("%s: number of rows must be >= 1 (got %d)", op, n)
	}
	return nil
}

// checkLoss validates the loss and returns its curvature bound c. Objective
// perturbation needs a finite c; both algorithms need a convex,
// differentiable, 1-Lipschitz loss that erm.Fit can minimize.
func checkLoss(op string, loss erm.Loss, needCurvature bool) (float64, error) {
	switch loss.(type) {
	case erm.Hinge:
		return 0, fmt.Errorf("%s: %w: hinge loss is not differentiable (use erm.Huber)", op, ErrUnsupportedLoss)
	case erm.Ramp:
		return 0, fmt.Errorf("%s: %w: ramp loss is not convex", op, ErrUnsupportedLoss)
	case erm.Squared:
		return 0, fmt.Errorf("%s: %w: squared loss is not Lipschitz", op, ErrUnsupportedLoss)
	}
	if L := erm.Lipschitz(loss); !(L <= 1) {
		return 0, fmt.Errorf("%s: %w: %s loss is not 1-Lipschitz (L = %v)", op, ErrUnsupportedLoss, loss.Name(), L)
	}
	c := erm.Curvature(loss)
	if !(c > 0) || math.IsInf(c, 1) {
		if needCurvature || math.IsNaN(c) {
			return 0, fmt.Errorf("%s: %w: %s loss has no finite curvature bound (c = %v)", op, ErrUnsupportedLoss, loss.Name(), c)
		}
	}
	return c, nil
}

// checkRows validates the data conditions of the privacy analyses.
func checkRows(op string, rows *erm.Rows, n int) error {
	if rows == nil {
		return fmt.Errorf("%s: rows is nil", op)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if rows.Weighted() {
		return fmt.Errorf("%s: %w", op, ErrWeighted)
	}
	if rows.N() != n {
		return fmt.Errorf("%s: rows has %d rows, the plan was made for n = %d", op, rows.N(), n)
	}
	if m := rows.MaxRowNorm(); m > 1+rowNormSlack {
		return fmt.Errorf("%s: %w: max ‖x‖₂ = %v (scale rows to the unit ball)", op, ErrRowNorm, m)
	}
	for i, y := range rows.Y() {
		if y != 1 && y != -1 {
			return fmt.Errorf("%s: row %d: %w (got %v)", op, i, ErrLabel, y)
		}
	}
	return nil
}

// checkNoise validates a noise vector for d features.
func checkNoise(op string, b []float64, d int) error {
	if len(b) != d {
		return fmt.Errorf("%s: len(b) = %d, want %d", op, len(b), d)
	}
	for j, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: b[%d] = %v is not finite", op, j, v)
		}
	}
	return nil
}

// b2f is 1 for true, 0 for false (a trace parameter).
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
