package dpci

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/privacy"
	"gonum.org/v1/gonum/mat"
)

// Guarantee is the composed privacy guarantee of one run of
// [ObjectivePerturbation] or [OutputPerturbation], as data for a manifest.
// It holds for unweighted rows with ‖xᵢ‖₂ ≤ 1 and labels ±1 under
// replace-one adjacency (and an exact minimizer). Everything released in
// the [Result] except ThetaHat is covered; ThetaHat is not private.
type Guarantee struct {
	// Privacy is the definition the budgets are measured in.
	Privacy Privacy
	// Epsilon is the pure-DP ε when Privacy is DP, else 0.
	Epsilon float64
	// Rho is the zCDP ρ when Privacy is ZCDP, else 0.
	Rho float64
	// Phi1, Phi2, Phi3 are the budgets of θ̃, H̃ and Σ̃ as given.
	Phi1, Phi2, Phi3 float64
	// Source names the theorem giving the composition.
	Source string
}

// Result is the output of [ObjectivePerturbation] or [OutputPerturbation].
type Result struct {
	// Theta is the private θ̃.
	Theta []float64
	// ThetaHat is the non-private θ̂ of output perturbation (nil for
	// objective perturbation). Not private: do not release.
	ThetaHat []float64
	// CI holds the (1 − α) intervals for θ₀.
	CI Interval
	// H and Sigma are the private estimates H̃ and Σ̃ (eigenvalues ≥ 2c).
	H, Sigma *mat.SymDense
	// EpsilonPrime is ε′ of Algorithm 1 (objective perturbation only).
	EpsilonPrime float64
	// Status is the solver status ([erm.StatusConverged], ...); anything
	// but converged means θ̃ is not the exact minimizer the privacy proof
	// assumes.
	Status string
	// Guarantee is the composed privacy guarantee.
	Guarantee Guarantee
}

// ObjPertGuarantee returns the guarantee of Algorithm 3 (Theorem 2 of
// [Wang, Kifer & Lee 2019]): (ϕ₁ + ϕ₂ + ϕ₃)-DP under DP, and
// (ϕ₁²/2 + ϕ₂ + ϕ₃)-zCDP under zCDP (objective perturbation is ϕ₁-DP, hence
// ϕ₁²/2-zCDP by Proposition 1; PrivSPDMat is ϕ-DP or ϕ-zCDP by Lemma 1).
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func ObjPertGuarantee(p Params) Guarantee {
	g := Guarantee{Privacy: p.Privacy, Phi1: p.Phi1, Phi2: p.Phi2, Phi3: p.Phi3,
		Source: "Wang, Kifer & Lee 2019, Theorem 2"}
	if p.Privacy == ZCDP {
		g.Rho = p.Phi1*p.Phi1/2 + p.Phi2 + p.Phi3
	} else {
		g.Epsilon = p.Phi1 + p.Phi2 + p.Phi3
	}
	return g
}

// OutPertGuarantee returns the guarantee of Algorithm 5 (Theorem 4 of
// [Wang, Kifer & Lee 2019]): (ϕ₁ + ϕ₂ + ϕ₃)-DP under DP and
// (ϕ₁ + ϕ₂ + ϕ₃)-zCDP under zCDP.
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func OutPertGuarantee(p Params) Guarantee {
	g := Guarantee{Privacy: p.Privacy, Phi1: p.Phi1, Phi2: p.Phi2, Phi3: p.Phi3,
		Source: "Wang, Kifer & Lee 2019, Theorem 4"}
	if p.Privacy == ZCDP {
		g.Rho = p.Phi1 + p.Phi2 + p.Phi3
	} else {
		g.Epsilon = p.Phi1 + p.Phi2 + p.Phi3
	}
	return g
}

// ObjPertParts returns the three releases of Algorithm 3 of
// [Wang, Kifer & Lee 2019] with their guarantees as values, in release
// order: θ̃ by objective perturbation at ε = ϕ₁ (Algorithm 1: ϕ₁-DP by
// Theorem 1, hence ϕ₁²/2-zCDP by Proposition 1), then H̃ and Σ̃ by
// PrivSPDMat with budgets ϕ₂ and ϕ₃ (Algorithm 2: ϕ-DP and ϕ-zCDP, Lemma 1).
// Under DP they are ε-DP guarantees, under zCDP ρ-zCDP ones:
//
//	DP:   ϕ₁, ϕ₂, ϕ₃          composed: ϕ₁ + ϕ₂ + ϕ₃        (Theorem 2)
//	zCDP: ϕ₁²/2, ϕ₂, ϕ₃       composed: ϕ₁²/2 + ϕ₂ + ϕ₃     (Theorem 2)
//
// Composed sequentially ([privacy.Compose]) they give [ObjPertGuarantee].
// The adjacency and assumptions are those of [Guarantee]. For a p.Privacy
// other than DP and ZCDP the guarantees are invalid
// ([privacy.Guarantee.Validate] reports it).
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func ObjPertParts(p Params) [3]privacy.Guarantee {
	theta := "θ̃ (objective perturbation, Algorithm 1 at ε₁; as zCDP it counts ε₁²/2)"
	switch p.Privacy {
	case DP:
		return [3]privacy.Guarantee{privacy.EpsDP(p.Phi1, theta), privacy.EpsDP(p.Phi2, hessianRelease), privacy.EpsDP(p.Phi3, covRelease)}
	case ZCDP:
		return [3]privacy.Guarantee{privacy.Rho(p.Phi1*p.Phi1/2, theta), privacy.Rho(p.Phi2, hessianRelease), privacy.Rho(p.Phi3, covRelease)}
	}
	return [3]privacy.Guarantee{} // invalid: the zero Guarantee has no notion
}

// OutPertParts returns the three releases of Algorithm 5 of
// [Wang, Kifer & Lee 2019] with their guarantees as values, in release
// order: θ̃ by output perturbation with budget ϕ₁ (Algorithm 4: ϕ₁-DP and
// ϕ₁-zCDP, Theorem 3), then H̃ and Σ̃ (Algorithm 2, Lemma 1):
//
//	DP:   ϕ₁, ϕ₂, ϕ₃   composed: ϕ₁ + ϕ₂ + ϕ₃   (Theorem 4)
//	zCDP: ϕ₁, ϕ₂, ϕ₃   composed: ϕ₁ + ϕ₂ + ϕ₃   (Theorem 4)
//
// Composed sequentially ([privacy.Compose]) they give [OutPertGuarantee].
// For a p.Privacy other than DP and ZCDP the guarantees are invalid.
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func OutPertParts(p Params) [3]privacy.Guarantee {
	theta := "θ̃ (output perturbation, Algorithm 4)"
	switch p.Privacy {
	case DP:
		return [3]privacy.Guarantee{privacy.EpsDP(p.Phi1, theta), privacy.EpsDP(p.Phi2, hessianRelease), privacy.EpsDP(p.Phi3, covRelease)}
	case ZCDP:
		return [3]privacy.Guarantee{privacy.Rho(p.Phi1, theta), privacy.Rho(p.Phi2, hessianRelease), privacy.Rho(p.Phi3, covRelease)}
	}
	return [3]privacy.Guarantee{}
}

// What the matrix releases of Algorithms 3 and 5 cover.
const (
	hessianRelease = "Hessian (Algorithm 2)"
	covRelease     = "gradient covariance (Algorithm 2)"
)

// PrivMatrices releases H̃ and Σ̃ at theta (Algorithm 3 lines 3–6,
// Algorithm 5 lines 2–5): [PrivSPDMat] on [Hessian] with budget p.Phi2
// and sensitivity [SensHessian], then on [GradCov] with p.Phi3 and
// [SensGradCov], both from rng in that order. Σ̃'s eigenvalue floor is
// [Params.CovFloor] (2c unless p.SigmaFloor says otherwise); H̃'s is 2c.
// Each release records, for a traced run, n and ‖θ‖₂ ("n", "theta_norm"
// in mech.Release.Params), the public values its sensitivity depends on
// (Lemma 2's 2·S(‖θ‖₂)²/n for the logistic Σ).
func PrivMatrices(rng *rand.Rand, rows *erm.Rows, p Params, theta []float64) (h, sigma *mat.SymDense, err error) {
	m, err := ExactMatrices(rows, p, theta)
	if err != nil {
		return nil, nil, err
	}
	return PrivMatricesOf(rng, rows.SumWeights(), p, theta, m)
}

// Matrices are the exact (non-private) [Hessian] and [GradCov] at one θ,
// the inputs of [PrivMatricesOf]. They depend on the rows, θ and p's
// Model, H and C only, so the releases of several methods at the same θ
// on the same rows (the DP and zCDP objective perturbations of a
// replicate, which share θ̃) may compute them once. Read only.
type Matrices struct {
	Hessian, GradCov *mat.SymDense
}

// ExactMatrices returns the [Matrices] at theta, both from one margins
// pass (no randomness): the same values, bit for bit, as [Hessian] and
// [GradCov].
func ExactMatrices(rows *erm.Rows, p Params, theta []float64) (Matrices, error) {
	hm, sm, err := hessianGradCov(rows, p, theta)
	return Matrices{hm, sm}, err
}

// PrivMatricesOf is [PrivMatrices] on matrices already computed at theta
// on rows of total weight n (m = ExactMatrices(rows, p, theta)): the same
// releases, drawn from rng in the same order.
func PrivMatricesOf(rng *rand.Rand, n float64, p Params, theta []float64, m Matrices) (h, sigma *mat.SymDense, err error) {
	hm, sm := m.Hessian, m.GradCov
	sh, err := SensHessian(p, n)
	if err != nil {
		return nil, nil, err
	}
	if err := checkPos("c", p.C); err != nil {
		return nil, nil, fmt.Errorf("dpci: PrivSPDMat: %w", err)
	}
	var ss2 float64
	for _, v := range theta {
		ss2 += v * v
	}
	params := map[string]float64{"n": n, "theta_norm": math.Sqrt(ss2)}
	if h, err = privSPDMat(nil, rng, hm, sh, p.Phi2, 2*p.C, p.Privacy, params); err != nil {
		return nil, nil, fmt.Errorf("dpci: hessian: %w", err)
	}
	ss, err := SensGradCov(p, n, theta)
	if err != nil {
		return nil, nil, err
	}
	if sigma, err = privSPDMat(nil, rng, sm, ss, p.Phi3, p.CovFloor(), p.Privacy, params); err != nil {
		return nil, nil, fmt.Errorf("dpci: gradient covariance: %w", err)
	}
	return h, sigma, nil
}

// ObjectivePerturbation runs Algorithm 3 of [Wang, Kifer & Lee 2019]:
// θ̃ by objective perturbation with ε = ϕ₁ ([ObjPertFit]), H̃ and Σ̃ at θ̃ by
// [PrivSPDMat] with budgets ϕ₂ and ϕ₃ ([Hessian], [GradCov], sensitivities
// of Lemmas 2–5), and the Monte Carlo intervals of [ObjPertCI] with p.M
// samples. The release (Theta, CI, H, Sigma) satisfies
// [ObjPertGuarantee] (Theorem 2); one call is one release.
//
// It returns an error for invalid p ([Params.Validate]), rows that break the
// privacy assumptions ([CheckRows]) or ε′ ≤ 0 ([ErrEpsilonPrime]), and
// ctx's error once ctx is done (the fit, unless p.Fit.Context is set, and
// the Monte Carlo draws check it).
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func ObjectivePerturbation(ctx context.Context, rng *rand.Rand, rows *erm.Rows, p Params) (Result, error) {
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	if p.Fit.Context == nil {
		p.Fit.Context = ctx
	}
	if rows != nil && rows.Weighted() {
		return Result{}, errors.New("dpci: ObjectivePerturbation releases under Theorem 2 assume unweighted rows (one row per person); weighted rows (e.g. a bootstrap replicate) are for simulation with the lower-level pieces")
	}
	fit, ep, err := ObjPertFit(rng, rows, p)
	if err != nil {
		return Result{}, err
	}
	h, sigma, err := PrivMatrices(rng, rows, p, fit.W)
	if err != nil {
		return Result{}, err
	}
	ci, err := ObjPertCI(ctx, rng, fit.W, h, sigma, rows.SumWeights(), ep, p.Alpha, p.m())
	if err != nil {
		return Result{}, err
	}
	return Result{Theta: fit.W, CI: ci, H: h, Sigma: sigma, EpsilonPrime: ep,
		Status: fit.Status, Guarantee: ObjPertGuarantee(p)}, nil
}

// OutputPerturbation runs Algorithm 5 of [Wang, Kifer & Lee 2019]: θ̃ by
// output perturbation with budget ϕ₁ ([OutPertFit]), H̃ and Σ̃ at θ̃ by
// [PrivSPDMat] with budgets ϕ₂ and ϕ₃, and the intervals of [OutPertCI]
// (Monte Carlo under DP, closed form under zCDP). The release (Theta, CI,
// H, Sigma) satisfies [OutPertGuarantee] (Theorem 4); one call is one
// release. ThetaHat is returned for reuse and is not private.
//
// Deviation (clarification): Section 5.2 derives the interval around θ̂ but
// Algorithm 5 evaluates H and Σ at the released θ̃ (lines 2 and 4); this
// follows the algorithm, since the sensitivities of Lemmas 2–5 hold for a θ
// that is fixed given the data's private releases, which θ̂ is not.
//
// It returns ctx's error once ctx is done (the fit, unless p.Fit.Context is
// set, and the Monte Carlo draws check it).
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func OutputPerturbation(ctx context.Context, rng *rand.Rand, rows *erm.Rows, p Params) (Result, error) {
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	if p.Fit.Context == nil {
		p.Fit.Context = ctx
	}
	if rows != nil && rows.Weighted() {
		return Result{}, errors.New("dpci: OutputPerturbation releases under Theorem 4 assume unweighted rows (one row per person); weighted rows (e.g. a bootstrap replicate) are for simulation with the lower-level pieces")
	}
	theta, hat, err := OutPertFit(rng, rows, p)
	if err != nil {
		return Result{}, err
	}
	h, sigma, err := PrivMatrices(rng, rows, p, theta)
	if err != nil {
		return Result{}, err
	}
	ci, err := OutPertCI(ctx, rng, theta, h, sigma, rows.SumWeights(), p.C, p.Phi1, p.Privacy, p.Alpha, p.m())
	if err != nil {
		return Result{}, err
	}
	return Result{Theta: theta, ThetaHat: hat.W, CI: ci, H: h, Sigma: sigma,
		Status: hat.Status, Guarantee: OutPertGuarantee(p)}, nil
}
