package dpci

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/mech"
	privpkg "github.com/dprepro/dprepro/core/privacy"
)

// Model selects the loss f of the ERM problem.
type Model string

// Models of Section 3.3 of [Wang, Kifer & Lee 2019].
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
const (
	// LR is logistic regression, f = log(1 + exp(−yθᵀx)), |f″| ≤ t = 1/4.
	LR Model = "lr"
	// SVM is the Huberized-hinge SVM with width h (Params.H),
	// |f″| ≤ t = 1/(2h).
	SVM Model = "svm"
)

// Privacy selects the privacy definition of the noise calibration.
type Privacy string

// Privacy definitions.
const (
	// DP is pure ε-differential privacy (spherical Laplace noise, Eq. 3).
	DP Privacy = "dp"
	// ZCDP is ρ-zero-concentrated DP (Gaussian noise, Proposition 3).
	ZCDP Privacy = "zcdp"
)

// ErrEpsilonPrime reports that the objective-perturbation budget cannot
// absorb the curvature term: ε′ = ε − log(1 + t/(2nc)) ≤ 0 (Algorithm 1,
// line 1), that is c < t/(2n(e^ε − 1)).
var ErrEpsilonPrime = errors.New("dpci: objective perturbation: epsilon' <= 0")

// Params configures [ObjectivePerturbation] and [OutputPerturbation] and
// their pieces.
type Params struct {
	// Model is LR or SVM. Required.
	Model Model
	// H is the Huber width h of the SVM loss. Required (finite, > 0) when
	// Model is SVM; ignored otherwise.
	H float64
	// C is the regularization coefficient c of (1/n)Σ[f + c‖θ‖²]. Required,
	// finite and > 0.
	C float64
	// Privacy is DP or ZCDP. Required.
	Privacy Privacy
	// Phi1, Phi2, Phi3 are the budgets of θ̃, of the Hessian and of the
	// gradient covariance (ε under DP, ρ under zCDP; for objective
	// perturbation Phi1 is always the ε of Algorithm 1). Required, finite
	// and > 0.
	Phi1, Phi2, Phi3 float64
	// Alpha is the miscoverage α of the (1 − α) intervals. Required, in
	// (0, 1).
	Alpha float64
	// M is the number of Monte Carlo samples of Algorithms 3 and 5. Zero
	// means 10,000 (the paper's m, Section 7); otherwise ≥ 1.
	M int
	// Fit configures the solver ([erm.Fit]); the zero value gives its
	// defaults (GradTol 1e-10).
	Fit erm.FitOptions
	// SigmaFloor is the eigenvalue floor of the private gradient
	// covariance Σ̃ as a multiple of C. Zero means 2, the floor 2c the
	// paper's text gives (Algorithm 2 line 12, as Algorithm 3 line 6 and
	// Algorithm 5 line 5 apply it). Any value > 0 is a calibration variant:
	// 1 (Σ̃ floored at c) is the one that brings the coverages to the
	// published Tables 2–4 (docs/analysis.md). The floor is
	// post-processing; it does not change the guarantee. The Hessian's
	// floor stays 2c. Otherwise finite and > 0.
	SigmaFloor float64
}

// CovFloor returns the eigenvalue floor of Σ̃: SigmaFloor·C, or 2C when
// SigmaFloor is zero (see [Params.SigmaFloor]).
func (p Params) CovFloor() float64 {
	if p.SigmaFloor == 0 {
		return 2 * p.C
	}
	return p.SigmaFloor * p.C
}

// defaultM is the paper's number of post-processing samples (Section 7).
const defaultM = 10000

// Loss returns the erm loss of p.Model: erm.Logistic or erm.Huber{H: p.H}
// (the Huberized hinge of Section 3.3 is [erm.Huber]'s definition).
func (p Params) Loss() (erm.Loss, error) {
	switch p.Model {
	case LR:
		return erm.Logistic{}, nil
	case SVM:
		if !(p.H > 0) || math.IsInf(p.H, 1) {
			return nil, fmt.Errorf("dpci: svm huber width h must be finite and > 0 (got %v)", p.H)
		}
		return erm.Huber{H: p.H}, nil
	}
	return nil, fmt.Errorf("dpci: unknown model %q (want %q or %q)", p.Model, LR, SVM)
}

// T returns the curvature bound t ≥ |f″| of p.Model: 1/4 for LR, 1/(2h)
// for SVM (Section 6).
func (p Params) T() float64 {
	if p.Model == SVM {
		return 1 / (2 * p.H)
	}
	return 0.25
}

func (p Params) m() int {
	if p.M == 0 {
		return defaultM
	}
	return p.M
}

// Validate checks every field of p (see [Params]).
func (p Params) Validate() error {
	var errs []error
	if _, err := p.Loss(); err != nil {
		errs = append(errs, err)
	}
	if err := checkPos("c", p.C); err != nil {
		errs = append(errs, err)
	}
	if p.Privacy != DP && p.Privacy != ZCDP {
		errs = append(errs, fmt.Errorf("dpci: unknown privacy %q (want %q or %q)", p.Privacy, DP, ZCDP))
	}
	for i, phi := range []float64{p.Phi1, p.Phi2, p.Phi3} {
		if err := checkPos(fmt.Sprintf("phi%d", i+1), phi); err != nil {
			errs = append(errs, err)
		}
	}
	if !(p.Alpha > 0 && p.Alpha < 1) {
		errs = append(errs, fmt.Errorf("dpci: alpha must be in (0, 1) (got %v)", p.Alpha))
	}
	if p.M < 0 {
		errs = append(errs, fmt.Errorf("dpci: m must be >= 0 (got %d)", p.M))
	}
	if p.SigmaFloor != 0 {
		if err := checkPos("sigma floor", p.SigmaFloor); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func checkPos(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 1) {
		return fmt.Errorf("dpci: %s must be finite and > 0 (got %v)", name, v)
	}
	return nil
}

// rowNormTol allows for rounding in rows normalized to ‖x‖₂ = 1.
const rowNormTol = 1e-12

// CheckRows reports whether rows satisfy the assumptions of the privacy
// analysis (Theorem 1, Lemmas 2–5): no invalid values, labels in {−1, +1}
// and ‖xᵢ‖₂ ≤ 1 (up to a relative rounding slack of 1e-12).
func CheckRows(rows *erm.Rows) error {
	if rows == nil {
		return errors.New("dpci: rows is nil")
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dpci: %w", err)
	}
	if r := rows.MaxRowNorm(); r > 1+rowNormTol {
		return fmt.Errorf("dpci: max row norm %v > 1: rows must satisfy ||x||_2 <= 1", r)
	}
	for i, y := range rows.Y() {
		if y != 1 && y != -1 {
			return fmt.Errorf("dpci: label %d = %v, want -1 or +1", i, y)
		}
	}
	return nil
}

// EpsilonPrime returns ε′ = ε − log(1 + t/(2nc)) of Algorithm 1, line 1
// (the improved first line of [Wang, Kifer & Lee 2019], Appendix A: the
// Jacobian ratio is at most 1 + t/(2nc)). It returns an error wrapping
// [ErrEpsilonPrime], naming n, c, t and ε, when ε′ ≤ 0, i.e. when
// c < t/(2n(e^ε − 1)) (the input condition of Algorithm 1).
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func EpsilonPrime(epsilon, n, c, t float64) (float64, error) {
	ep := epsilon - math.Log1p(t/(2*n*c))
	if !(ep > 0) {
		return ep, fmt.Errorf("%w (n = %v, c = %v, t = %v, epsilon = %v: epsilon' = %v; need c >= t/(2n(e^epsilon-1)) = %v)",
			ErrEpsilonPrime, n, c, t, epsilon, ep, t/(2*n*math.Expm1(epsilon)))
	}
	return ep, nil
}

// objective returns the erm objective (1/n)Σ[f + c‖θ‖²] + linearᵀθ.
func (p Params) objective(linear []float64) (erm.Objective, error) {
	loss, err := p.Loss()
	if err != nil {
		return erm.Objective{}, err
	}
	if err := checkPos("c", p.C); err != nil {
		return erm.Objective{}, err
	}
	return erm.Objective{Loss: loss, Lambda: 2 * p.C, Linear: linear}, nil
}

// FitNonPrivate returns θ̂ = argmin (1/n)Σᵢ[f(xᵢ, yᵢ, θ) + c‖θ‖²] (Eq. 7,
// Algorithm 4 line 1) with the solver options opts (warm start in
// opts.Init). Only p.Model, p.H and p.C are used. It releases nothing and
// is not private; use it to share θ̂ between output-perturbation variants
// ([OutPertNoise]) or for the non-private analogue of the intervals.
func FitNonPrivate(rows *erm.Rows, p Params, opts erm.FitOptions) (erm.Result, error) {
	obj, err := p.objective(nil)
	if err != nil {
		return erm.Result{}, err
	}
	res, err := erm.Fit(rows, obj, opts)
	if err != nil {
		return erm.Result{}, fmt.Errorf("dpci: non-private fit: %w", err)
	}
	return res, nil
}

// ObjPertFit runs objective perturbation, Algorithm 1 of
// [Wang, Kifer & Lee 2019], with ε = p.Phi1:
//
//	epsilonPrime = epsilon − log(1 + t/(2·n·c))
//	β ~ density ∝ exp(−(epsilonPrime/2)·‖β‖₂)        (Eq. 3)
//	θ̃ = argmin (1/n)Σᵢ[f(xᵢ, yᵢ, θ) + c‖θ‖²] + (1/n)βᵀθ
//
// with t = p.T() and n = rows.SumWeights(). It returns the solver result
// (θ̃ in W) and ε′. Releasing W is ε-DP (Theorem 1) and hence ε²/2-zCDP
// (Proposition 1), for unweighted rows with ‖xᵢ‖₂ ≤ 1 and labels ±1 under
// replace-one adjacency, provided the minimizer is exact (the solver stops at
// ‖∇J‖ ≤ GradTol; the gap is not accounted for). One call is one release.
// Only p.Model, p.H, p.C, p.Phi1 and p.Fit are used.
//
// It returns an error wrapping [ErrEpsilonPrime] when ε′ ≤ 0, and errors for
// invalid parameters or rows ([CheckRows]).
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func ObjPertFit(rng *rand.Rand, rows *erm.Rows, p Params) (erm.Result, float64, error) {
	if err := CheckRows(rows); err != nil {
		return erm.Result{}, 0, err
	}
	if err := checkPos("phi1", p.Phi1); err != nil {
		return erm.Result{}, 0, err
	}
	if _, err := p.objective(nil); err != nil {
		return erm.Result{}, 0, err
	}
	n := rows.SumWeights()
	ep, err := EpsilonPrime(p.Phi1, n, p.C, p.T())
	if err != nil {
		return erm.Result{}, ep, err
	}
	beta := make([]float64, rows.D())
	if err := mech.SphericalLaplace(beta, rng, ep/2); err != nil {
		return erm.Result{}, ep, fmt.Errorf("dpci: objective perturbation: %w", err)
	}
	mech.Record(rng, mech.Release{Mechanism: "objective-perturbation-wkl", Scale: ep / 2, Sensitivity: 2, Dim: len(beta),
		Guarantee: privpkg.EpsDP(p.Phi1, "θ̃ of objective perturbation (Wang, Kifer & Lee 2019, Algorithm 1)"),
		Params:    map[string]float64{"n": n, "c": p.C, "t": p.T(), "epsilon_prime": ep}})
	for j := range beta {
		beta[j] /= n
	}
	obj, _ := p.objective(beta)
	res, err := erm.Fit(rows, obj, p.Fit)
	if err != nil {
		return erm.Result{}, ep, fmt.Errorf("dpci: objective perturbation: %w", err)
	}
	return res, ep, nil
}

// OutPertNoise sets dst = θ̂ + β, the release of output perturbation
// (Algorithm 4, lines 2–7) for a non-private minimizer θ̂ of Eq. 7 at
// sample size n and coefficient c, and returns dst (allocated when nil). The
// L2 sensitivity of θ̂ is 1/(nc) ([Chaudhuri et al. 2011] with λ = 2c):
//
//	DP   (epsilon = phi): β ~ density ∝ exp(−n·phi·c·‖β‖₂)   (Eq. 3, γ = nεc)
//	zCDP (rho = phi):     β ~ N(0, I/(2·phi·(n·c)²))
//
// Releasing dst is phi-DP or phi-zCDP (Theorem 3) when θ̂ is the exact
// minimizer on unweighted rows with ‖xᵢ‖₂ ≤ 1. One call is one release;
// calling it again on the same θ̂ spends phi again.
//
// It returns an error for phi, n or c not finite and > 0 or an unknown
// privacy; it panics if a non-nil dst has length ≠ len(thetaHat).
//
// [Chaudhuri et al. 2011]: https://jmlr.org/papers/v12/chaudhuri11a.html
func OutPertNoise(dst []float64, rng *rand.Rand, thetaHat []float64, n, c, phi float64, privacy Privacy) ([]float64, error) {
	if dst == nil {
		dst = make([]float64, len(thetaHat))
	}
	if len(dst) != len(thetaHat) {
		panic(fmt.Sprintf("dpci: OutPertNoise: len(dst) = %d, want %d", len(dst), len(thetaHat)))
	}
	for _, a := range []struct {
		name string
		v    float64
	}{{"n", n}, {"c", c}, {"phi1", phi}} {
		if err := checkPos(a.name, a.v); err != nil {
			return nil, err
		}
	}
	if privacy == ZCDP && mech.IsSecure(rng) {
		// Secure mode: the floating-point-safe Gaussian on θ̂ itself.
		sigma := 1 / (n * c * math.Sqrt(2*phi))
		for j, v := range thetaHat {
			dst[j] = mech.AddGaussian(rng, v, sigma)
		}
		recordOutPert(rng, n, c, phi, privacy, len(dst))
		return dst, nil
	}
	beta := make([]float64, len(thetaHat))
	if err := outPertBeta(beta, rng, n, c, phi, privacy); err != nil {
		return nil, err
	}
	for j, v := range thetaHat {
		dst[j] = v + beta[j]
	}
	recordOutPert(rng, n, c, phi, privacy, len(dst))
	return dst, nil
}

// recordOutPert records a release of [OutPertNoise] (mech.Record): the
// noise's scale (γ = nφc of spherical Laplace noise, σ of Gaussian noise),
// the ℓ2 sensitivity 1/(nc) and the guarantee φ-DP or φ-zCDP.
func recordOutPert(rng *rand.Rand, n, c, phi float64, p Privacy, d int) {
	r := mech.Release{Mechanism: "output-perturbation-wkl-dp", Scale: n * phi * c, Sensitivity: 1 / (n * c), Dim: d,
		Guarantee: privpkg.EpsDP(phi, "θ̂ + β of output perturbation (Wang, Kifer & Lee 2019, Algorithm 4)"),
		Params:    map[string]float64{"n": n, "c": c}}
	if p == ZCDP {
		r.Mechanism, r.Scale = "output-perturbation-wkl-zcdp", 1/(n*c*math.Sqrt(2*phi))
		r.Guarantee = privpkg.Rho(phi, r.Guarantee.Covers)
	}
	mech.Record(rng, r)
}

// outPertBeta fills beta with one draw of the β of Algorithm 4.
func outPertBeta(beta []float64, rng *rand.Rand, n, c, phi float64, privacy Privacy) error {
	switch privacy {
	case DP:
		if err := mech.SphericalLaplace(beta, rng, n*phi*c); err != nil {
			return fmt.Errorf("dpci: output perturbation: %w", err)
		}
	case ZCDP:
		sigma := 1 / (n * c * math.Sqrt(2*phi))
		for j := range beta {
			beta[j] = mech.GaussianNoise(rng, sigma)
		}
	default:
		return fmt.Errorf("dpci: unknown privacy %q (want %q or %q)", privacy, DP, ZCDP)
	}
	return nil
}

// OutPertFit runs output perturbation, Algorithm 4 of
// [Wang, Kifer & Lee 2019], with phi = p.Phi1 and p.Privacy: it fits θ̂
// ([FitNonPrivate]) and releases θ̃ = θ̂ + β ([OutPertNoise]). It returns θ̃
// and the non-private fit (θ̂ in W, not private, for reuse by the caller).
// The guarantee is that of [OutPertNoise].
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func OutPertFit(rng *rand.Rand, rows *erm.Rows, p Params) (thetaTilde []float64, hat erm.Result, err error) {
	if err := CheckRows(rows); err != nil {
		return nil, erm.Result{}, err
	}
	hat, err = FitNonPrivate(rows, p, p.Fit)
	if err != nil {
		return nil, erm.Result{}, err
	}
	thetaTilde, err = OutPertNoise(nil, rng, hat.W, rows.SumWeights(), p.C, p.Phi1, p.Privacy)
	if err != nil {
		return nil, erm.Result{}, err
	}
	return thetaTilde, hat, nil
}

// HessianFactor returns the factored Hessian of the objective of Eq. 7,
// (1/n)Σᵢ[f(xᵢ, yᵢ, θ) + c‖θ‖²], over rows at theta, for
// [erm.FitOptions.Factor]. Objective perturbation adds only a linear term
// (Algorithm 1), so the factor serves [ObjPertFit] and [FitNonPrivate]
// alike: the bootstrap fits of a variability interval, warm-started at the
// full-data θ̂, take their first Newton step with the full-data Hessian at
// θ̂ instead of building one each. Only p.Model, p.H and p.C are used. It
// releases nothing (the factor is of the data the fits are drawn from and
// steers only the solver: the minimizers are unchanged up to GradTol).
func HessianFactor(rows *erm.Rows, p Params, theta []float64) (*erm.Factor, error) {
	obj, err := p.objective(nil)
	if err != nil {
		return nil, err
	}
	f, err := erm.NewFactor(rows, obj, theta)
	if err != nil {
		return nil, fmt.Errorf("dpci: hessian factor: %w", err)
	}
	return f, nil
}
