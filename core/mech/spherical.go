package mech

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
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
	r := distuv.Gamma{Alpha: float64(d), Beta: gamma, Src: rng}.Rand()
	s := r / math.Sqrt(ss)
	for i := range dst {
		dst[i] *= s
	}
	return nil
}
