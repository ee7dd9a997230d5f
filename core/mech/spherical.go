package mech

import (
	"math"
	"math/rand/v2"
)

// SphericalLaplace fills dst with one draw b ∈ R^d, d = len(dst), from the
// density
//
//	p(b) ∝ exp(−gamma·‖b‖₂)
//
// used by output perturbation and objective perturbation
// ([Chaudhuri et al. 2011], i.e. Chaudhuri, Monteleoni & Sarwate, JMLR 12:
// Algorithm 1 with gamma = β = nΛε/2, and Algorithm 2 with gamma = ε′/2;
// Wang, Kifer & Lee 2019 Eq. 3).
//
// The draw is made in polar form: the norm ‖b‖₂ is Gamma(shape d, rate gamma)
// distributed (mean d/gamma, variance d/gamma²), and the direction is uniform
// on the unit sphere, obtained by normalising a standard Gaussian vector. The
// d normals are drawn first, then the norm, all from rng. For d = 1 the draw
// is Lap(0, 1/gamma).
//
// Privacy: adding b to a query f whose L2 sensitivity is Δ₂ is
// (gamma·Δ₂)-differentially private, since by the triangle inequality the
// density ratio at any output is at most exp(gamma·‖f(X) − f(X′)‖₂)
// (the argument of the privacy proof for Algorithm 1 in
// [Chaudhuri et al. 2011]). Each call is one release.
//
// It returns a *ParamError when gamma is not finite and > 0 or dst is empty,
// leaving dst unchanged. Seeded noise is simulation only (see the package doc).
//
// [Chaudhuri et al. 2011]: https://jmlr.org/papers/v12/chaudhuri11a.html
func SphericalLaplace(dst []float64, rng *rand.Rand, gamma float64) error {
	const op = "spherical Laplace"
	d := len(dst)
	if d == 0 {
		return &ParamError{Op: op, Param: "len(dst)", Value: 0, Want: "> 0"}
	}
	if err := checkPositive(op, "gamma", gamma); err != nil {
		return err
	}
	note(rng, false, gamma)
	var ss float64
	for {
		ss = 0
		for i := range dst {
			z := rng.NormFloat64()
			dst[i] = z
			ss += z * z
		}
		// An all-zero Gaussian vector has no direction; it has probability
		// zero but redraw rather than divide by zero.
		if ss > 0 {
			break
		}
	}
	r := gammaShapeAtLeast1(rng, float64(d), gamma)
	s := r / math.Sqrt(ss)
	for i := range dst {
		dst[i] *= s
	}
	return nil
}

// gammaShapeAtLeast1 draws from Gamma(shape a ≥ 1, rate b) exactly as
// gonum's distuv.Gamma{Alpha: a, Beta: b, Src: rng}.Rand() does (v0.16:
// an exponential for a = 1, else Marsaglia and Tsang 2000, "A simple
// method for generating gamma variables", ACM TOMS 26(3)): the same
// calls on rng in the same order and the same arithmetic, so the same
// value bit for bit. It exists because distuv.Gamma.Rand wraps Src in a
// new rand.Rand and three method values on every call — four allocations
// per draw, and a Monte Carlo interval of Wang, Kifer & Lee draws 10,000
// of these. (A rand.Rand over a *rand.Rand draws the same numbers as the
// inner one: its Uint64 is the inner Uint64, and Float64, NormFloat64
// and ExpFloat64 are built on Uint64 alone.) TestGammaShapeAtLeast1
// checks the equality against gonum.
func gammaShapeAtLeast1(rng *rand.Rand, a, b float64) float64 {
	if a == 1 {
		return rng.ExpFloat64() / b
	}
	d := a - 1.0/3
	c := 1 / (3 * math.Sqrt(d))
	for {
		x := rng.NormFloat64()
		v := 1 + x*c
		if v <= 0.0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1.0-0.0331*(x*x)*(x*x) {
			return d * v / b
		}
		if math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v / b
		}
	}
}
