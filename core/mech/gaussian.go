package mech

import (
	"math"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/privacy"
)

// Gaussian is the Gaussian mechanism: it adds independent N(0, σ²) noise to
// each coordinate of a query with L2 sensitivity Δ₂ (Nguyen 2019 review
// Definition 3.14; [Dwork & Roth 2014] Appendix A). Two calibrations are
// offered:
//
//   - [NewGaussianZCDP]: σ = Δ₂/√(2ρ), ρ-zCDP ([Bun & Steinke 2016]
//     Proposition 1.6);
//   - [NewGaussianDP]: σ = Δ₂·√(2 ln(1.25/δ))/ε, (ε, δ)-DP for ε < 1
//     ([Dwork & Roth 2014] Theorem A.1).
//
// Whatever the calibration, one AddNoise call is Δ₂²/(2σ²)-zCDP (reported by
// Rho) with respect to the adjacency under which l2Sensitivity bounds
// ‖f(X) − f(X′)‖₂; every call spends the budget again. The noise is unbiased
// with variance σ² per coordinate.
//
// A Gaussian is immutable and safe for concurrent use; the *rand.Rand passed
// to its methods is not. Seeded noise is simulation only (see the package doc).
//
// [Dwork & Roth 2014]: https://doi.org/10.1561/0400000042
// [Bun & Steinke 2016]: https://arxiv.org/abs/1605.02065v1
type Gaussian struct {
	sigma         float64
	l2Sensitivity float64
}

// NewGaussianZCDP returns the Gaussian mechanism calibrated to ρ-zero-
// concentrated DP ([Bun & Steinke 2016] Proposition 1.6; Wang, Kifer & Lee
// 2019 Proposition 3):
//
//	sigma = l2Sensitivity / sqrt(2·rho)
//
// By [Bun & Steinke 2016] Proposition 1.3, ρ-zCDP implies
// (ρ + 2√(ρ·ln(1/δ)), δ)-DP for every δ > 0.
//
// rho: required, finite and > 0. l2Sensitivity: required, finite and > 0.
// It returns a *ParamError for any other value or when σ overflows or
// underflows.
//
// [Bun & Steinke 2016]: https://arxiv.org/abs/1605.02065v1
func NewGaussianZCDP(rho, l2Sensitivity float64) (*Gaussian, error) {
	const op = "gaussian zCDP"
	if err := checkPositive(op, "rho", rho); err != nil {
		return nil, err
	}
	if err := checkPositive(op, "l2Sensitivity", l2Sensitivity); err != nil {
		return nil, err
	}
	sigma := l2Sensitivity / math.Sqrt(2*rho)
	if err := checkPositive(op, "sigma l2Sensitivity/sqrt(2*rho)", sigma); err != nil {
		return nil, err
	}
	return &Gaussian{sigma: sigma, l2Sensitivity: l2Sensitivity}, nil
}

// NewGaussianDP returns the classical Gaussian mechanism calibrated to
// (ε, δ)-differential privacy ([Dwork & Roth 2014] Theorem A.1; Nguyen 2019
// review Proposition 3.15, whose 5/(4δ) equals 1.25/δ):
//
//	sigma = l2Sensitivity · sqrt(2·ln(1.25/delta)) / epsilon
//
// Theorem A.1 holds only for ε ∈ (0, 1), so NewGaussianDP rejects ε ≥ 1; for
// larger ε use [NewGaussianZCDP] with a zCDP-to-DP conversion, or the analytic
// Gaussian mechanism of Balle & Wang (2018), which is not implemented here.
// Theorem A.1 asks for c² > 2 ln(1.25/δ) strictly; the boundary value is used,
// as in Nguyen's Proposition 3.15 (σ ≥ ...), since the (ε, δ) condition is
// closed in σ.
//
// Deviation: Nguyen 2019 Proposition 3.15 states no restriction on ε; we
// follow Dwork & Roth and restrict to ε < 1.
//
// epsilon: required, in (0, 1). delta: required, in (0, 1). l2Sensitivity:
// required, finite and > 0. It returns a *ParamError otherwise.
//
// [Dwork & Roth 2014]: https://doi.org/10.1561/0400000042
func NewGaussianDP(epsilon, delta, l2Sensitivity float64) (*Gaussian, error) {
	const op = "gaussian (epsilon, delta)-DP"
	if !(epsilon > 0 && epsilon < 1) {
		// ε ≥ 1 is outside the validity range of Theorem A.1, not merely
		// an unusual value, so say so in the message.
		return nil, &ParamError{Op: op, Param: "epsilon", Value: epsilon,
			Want: "in (0, 1) for the classical calibration (Dwork & Roth 2014 Thm A.1)"}
	}
	if err := checkOpenUnit(op, "delta", delta); err != nil {
		return nil, err
	}
	if err := checkPositive(op, "l2Sensitivity", l2Sensitivity); err != nil {
		return nil, err
	}
	// ln(1.25/δ) > ln 1.25 > 0 for δ < 1, so the square root is real.
	sigma := l2Sensitivity * math.Sqrt(2*math.Log(1.25/delta)) / epsilon
	if err := checkPositive(op, "sigma", sigma); err != nil {
		return nil, err
	}
	return &Gaussian{sigma: sigma, l2Sensitivity: l2Sensitivity}, nil
}

// Sigma returns the noise standard deviation σ.
func (g *Gaussian) Sigma() float64 { return g.sigma }

// L2Sensitivity returns the L2 sensitivity Δ₂ the mechanism is calibrated to.
func (g *Gaussian) L2Sensitivity() float64 { return g.l2Sensitivity }

// Rho returns the zCDP parameter of one release, ρ = Δ₂²/(2σ²)
// ([Bun & Steinke 2016] Proposition 1.6). For [NewGaussianZCDP] it returns
// the requested ρ up to rounding; for [NewGaussianDP] it is ε²/(4 ln(1.25/δ)).
//
// [Bun & Steinke 2016]: https://arxiv.org/abs/1605.02065v1
func (g *Gaussian) Rho() float64 {
	r := g.l2Sensitivity / g.sigma
	return r * r / 2
}

// Sample returns one N(0, σ²) draw from rng.
// Given [CryptoRand] the bits come from crypto/rand; use AddNoise for a
// floating-point-safe release.
func (g *Gaussian) Sample(rng *rand.Rand) float64 {
	note(rng, false, g.sigma)
	return g.sigma * rng.NormFloat64()
}

// GaussianNoise returns one raw draw σ·N(0, 1) from rng: a building block
// with no privacy accounting and no floating-point-safe construction (use
// [AddGaussian] for a release). sigma must be finite and ≥ 0.
func GaussianNoise(rng *rand.Rand, sigma float64) float64 {
	note(rng, false, sigma)
	return sigma * rng.NormFloat64()
}

// AddNoise sets dst[i] = x[i] + N(0, σ²) ([AddGaussian]: [SecureGaussian]
// in secure mode), drawing the noise in index order,
// and returns dst. When dst is nil a new slice is allocated; dst may alias x.
// It panics if a non-nil dst has a different length from x.
//
// One call is one release of the vector x = f(X) (see [Gaussian]).
func (g *Gaussian) AddNoise(dst, x []float64, rng *rand.Rand) []float64 {
	dst = fill(dst, x)
	for i, v := range x {
		dst[i] = AddGaussian(rng, v, g.sigma)
	}
	Record(rng, Release{Mechanism: "gaussian", Scale: g.sigma, Sensitivity: g.l2Sensitivity, Dim: len(x),
		Guarantee: privacy.Rho(g.Rho(), "the vector released")})
	return dst
}
