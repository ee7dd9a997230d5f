package mech

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dprepro/dprepro/core/privacy"
)

// Laplace is the Laplace mechanism calibrated to pure ε-differential privacy
// for a query with L1 sensitivity Δ₁ ([Dwork et al. 2006]; [Dwork & Roth 2014]
// Definition 3.3; Nguyen 2019 review Definition 3.5). It adds independent
// Lap(0, b) noise to each coordinate, with density and scale
//
//	p(z) = exp(−|z|/b) / (2b)
//	b    = l1Sensitivity / epsilon
//
// Privacy: each AddNoise call (and each Sample used as the noise of one scalar
// query) is ε-differentially private with respect to the adjacency under which
// l1Sensitivity bounds ‖f(X) − f(X′)‖₁ ([Dwork & Roth 2014] Theorem 3.6;
// Nguyen 2019 Proposition 3.6). The guarantee covers the whole vector released
// by one AddNoise call; every call spends ε again.
//
// Accuracy (Nguyen 2019 Proposition 3.7): for k coordinates and δ ∈ (0, 1],
//
//	P(‖noise‖∞ ≥ b·ln(k/δ)) ≤ δ
//
// The noise is unbiased with variance 2b² per coordinate.
//
// A Laplace is immutable and safe for concurrent use; the *rand.Rand passed to
// its methods is not. Seeded noise is simulation only (see the package doc).
//
// [Dwork et al. 2006]: https://doi.org/10.1007/11681878_14
// [Dwork & Roth 2014]: https://doi.org/10.1561/0400000042
type Laplace struct {
	epsilon       float64
	l1Sensitivity float64
	scale         float64
}

// NewLaplace returns the Laplace mechanism with scale b = l1Sensitivity/epsilon.
//
// epsilon: required, finite and > 0. l1Sensitivity: required, finite and > 0.
// It returns a *ParamError for any other value, or when b overflows to +Inf or
// underflows to 0.
func NewLaplace(epsilon, l1Sensitivity float64) (*Laplace, error) {
	const op = "laplace"
	if err := checkPositive(op, "epsilon", epsilon); err != nil {
		return nil, err
	}
	if err := checkPositive(op, "l1Sensitivity", l1Sensitivity); err != nil {
		return nil, err
	}
	b := l1Sensitivity / epsilon
	if err := checkPositive(op, "scale l1Sensitivity/epsilon", b); err != nil {
		return nil, err
	}
	return &Laplace{epsilon: epsilon, l1Sensitivity: l1Sensitivity, scale: b}, nil
}

// Scale returns the Laplace scale b = Δ₁/ε.
func (l *Laplace) Scale() float64 { return l.scale }

// Epsilon returns the ε that one release spends.
func (l *Laplace) Epsilon() float64 { return l.epsilon }

// L1Sensitivity returns the L1 sensitivity Δ₁ the mechanism is calibrated to.
func (l *Laplace) L1Sensitivity() float64 { return l.l1Sensitivity }

// Sample returns one Lap(0, b) draw from rng.
func (l *Laplace) Sample(rng *rand.Rand) float64 { return LaplaceNoise(rng, l.scale) }

// AddNoise sets dst[i] = x[i] + Lap(0, b) ([AddLaplace]: [SecureLaplace] in
// secure mode), drawing the noise in index order, and returns dst. When dst is nil a new slice is allocated; dst may alias x.
// It panics if a non-nil dst has a different length from x.
//
// One call is one ε-DP release of the vector x = f(X) (see [Laplace]).
func (l *Laplace) AddNoise(dst, x []float64, rng *rand.Rand) []float64 {
	dst = fill(dst, x)
	for i, v := range x {
		dst[i] = AddLaplace(rng, v, l.scale)
	}
	Record(rng, Release{Mechanism: "laplace", Scale: l.scale, Sensitivity: l.l1Sensitivity, Dim: len(x),
		Guarantee: privacy.EpsDP(l.epsilon, "the vector released")})
	return dst
}

// LaplaceNoise returns one raw draw from Lap(0, scale), with density
//
//	p(z) = exp(−|z|/scale) / (2·scale)
//
// using gonum's [distuv.Laplace] sampler with Src = rng (one uniform per draw,
// inverted through the CDF). It carries no privacy accounting: the caller sets
// scale = Δ₁/ε ([Dwork & Roth 2014] Definition 3.3).
//
// scale must be finite and > 0; LaplaceNoise panics otherwise, because it is a
// building block for code that has already validated its parameters. Use
// [NewLaplace] to validate user input.
//
// [Dwork & Roth 2014]: https://doi.org/10.1561/0400000042
func LaplaceNoise(rng *rand.Rand, scale float64) float64 {
	if !(scale > 0) || math.IsInf(scale, 1) {
		panic("mech: LaplaceNoise: scale must be finite and > 0")
	}
	note(rng, false, scale)
	d := distuv.Laplace{Mu: 0, Scale: scale, Src: rng}
	for {
		// gonum maps the uniform u = 0 (probability 2⁻⁵³ per draw with
		// math/rand/v2's Float64) to scale·log(0) = −Inf. The Laplace
		// distribution has no atom at infinity, so redraw; conditioning on
		// an event of probability 2⁻⁵³ changes nothing measurable.
		if z := d.Rand(); !math.IsInf(z, 0) {
			return z
		}
	}
}
