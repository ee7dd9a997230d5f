package noisered

import (
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/mech"
)

// Reduce is Noise Reduction as written, [LNRWW17] Algorithm 1: it returns
// v̂_1, …, v̂_T (element t−1 is v̂_t) as T fresh slices of len(v), built by
// the backward recursion
//
//	v̂_T = v + Lap(Δ/ε_T)
//	v̂_t = v̂_{t+1}                 with probability (ε_t/ε_{t+1})²
//	v̂_t = v̂_{t+1} + Lap(Δ/ε_t)    otherwise
//
// independently per coordinate and step, with Δ = delta and ε_t = eps[t−1].
// It costs T·len(v) uniform draws and T·len(v) stored values; it is the
// reference implementation for tests and small problems. Use [New] for
// large T or len(v).
//
// Draw order: the len(v) Laplace draws of v̂_T in coordinate order, then for
// t = T−1 down to 1 and each coordinate in order one uniform U (keep when
// U < (ε_t/ε_{t+1})²) followed, on an add, by one Laplace draw.
//
// Privacy: the prefix (v̂_1, …, v̂_t) is ε_t-differentially private when
// delta bounds the ℓ1 sensitivity of v ([LNRWW17] Theorem 2.7); see the
// package documentation.
//
// delta: required, finite and > 0. eps: required, non-empty, finite, > 0,
// strictly increasing, with delta/eps[0] finite and delta/eps[T−1] > 0.
// v: finite (may be empty); it is not modified. Reduce returns an error for
// any other input.
//
// [LNRWW17]: https://arxiv.org/abs/1705.10829v1
func Reduce(rng *rand.Rand, v []float64, delta float64, eps []float64) ([][]float64, error) {
	if err := validate("reduce", v, delta, eps); err != nil {
		return nil, err
	}
	n, T := len(v), len(eps)
	// One backing block, cut with full slice expressions so that the T
	// slices do not overlap and appending to one cannot clobber another.
	buf := make([]float64, n*T)
	out := make([][]float64, T)
	for t := range out {
		out[t] = buf[t*n : (t+1)*n : (t+1)*n]
	}
	top := out[T-1]
	scale := delta / eps[T-1]
	for i, x := range v {
		top[i] = x + mech.LaplaceNoise(rng, scale)
	}
	for t := T - 2; t >= 0; t-- {
		// The ratio is formed before squaring so that ε² cannot overflow
		// or underflow.
		r := eps[t] / eps[t+1]
		keep := r * r
		scale := delta / eps[t]
		cur, next := out[t], out[t+1]
		for i, x := range next {
			if rng.Float64() < keep {
				cur[i] = x
			} else {
				cur[i] = x + mech.LaplaceNoise(rng, scale)
			}
		}
	}
	scales := make([]float64, T)
	for t, e := range eps {
		scales[t] = delta / e
	}
	record(rng, "noise-reduction", delta, eps, scales, n)
	return out, nil
}
