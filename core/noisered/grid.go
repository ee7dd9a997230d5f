package noisered

import (
	"fmt"
	"math"
)

// Geometric returns the geometric privacy grid of T levels from lo to hi,
//
//	ε_t = lo · (hi/lo)^((t−1)/(T−1)),   t = 1, …, T
//
// with ε_1 = lo and ε_T = hi exactly. Element t−1 of the result is ε_t.
//
// The experiments of [LNRWW17] (Appendix B.1) use a geometric grid with
// T = 1000 written ε_t = ε_1·r^t, r = (ε_T/ε_1)^(1/T), which taken
// literally starts one ratio above ε_1. Deviation: Geometric spaces the T
// levels so that both ends are exact; pass lo = ε_1·r to reproduce the
// literal formula.
//
// lo: required, finite and > 0. hi: required, finite and > lo. T: required,
// ≥ 2. It returns an error otherwise, or when lo and hi are so close that
// the T rounded levels are not strictly increasing.
//
// The interior levels are computed as exp(ln lo + f·(ln hi − ln lo)) with
// f = (t−1)/(T−1), so neither hi/lo nor an intermediate power can overflow
// or underflow; the relative error of a level is a few ulps times |ln ε_t|.
//
// [LNRWW17]: https://arxiv.org/abs/1705.10829v1
func Geometric(lo, hi float64, T int) ([]float64, error) {
	if !(lo > 0) || math.IsInf(lo, 1) {
		return nil, fmt.Errorf("noisered: geometric: lo must be finite and > 0 (got %v)", lo)
	}
	if !(hi > lo) || math.IsInf(hi, 1) {
		return nil, fmt.Errorf("noisered: geometric: hi must be finite and > lo = %v (got %v)", lo, hi)
	}
	if T < 2 {
		return nil, fmt.Errorf("noisered: geometric: T must be >= 2 (got %d)", T)
	}
	eps := make([]float64, T)
	logLo := math.Log(lo)
	span := math.Log(hi) - logLo
	eps[0], eps[T-1] = lo, hi
	for t := 1; t < T-1; t++ {
		f := float64(t) / float64(T-1)
		eps[t] = math.Exp(logLo + f*span)
	}
	for t := 1; t < T; t++ {
		if !(eps[t] > eps[t-1]) {
			return nil, fmt.Errorf("noisered: geometric: levels %d and %d round to %v and %v, not strictly increasing (lo = %v and hi = %v are too close for T = %d)",
				t, t+1, eps[t-1], eps[t], lo, hi, T)
		}
	}
	return eps, nil
}

// validate checks the inputs of [New] and [Reduce] (op names the caller).
// The negated comparisons also reject NaN, for which every comparison is
// false.
func validate(op string, v []float64, delta float64, eps []float64) error {
	if !(delta > 0) || math.IsInf(delta, 1) {
		return fmt.Errorf("noisered: %s: delta must be finite and > 0 (got %v)", op, delta)
	}
	if len(eps) == 0 {
		return fmt.Errorf("noisered: %s: eps must hold at least one level (got none)", op)
	}
	if len(eps) > math.MaxInt32 || len(v) > math.MaxInt32 {
		return fmt.Errorf("noisered: %s: at most 2³¹−1 levels and coordinates (got %d and %d)", op, len(eps), len(v))
	}
	for k, e := range eps {
		if !(e > 0) || math.IsInf(e, 1) {
			return fmt.Errorf("noisered: %s: eps[%d] must be finite and > 0 (got %v)", op, k, e)
		}
		if k > 0 && !(e > eps[k-1]) {
			return fmt.Errorf("noisered: %s: eps must be strictly increasing (eps[%d] = %v, eps[%d] = %v)", op, k-1, eps[k-1], k, e)
		}
	}
	// The scales Δ/ε_t decrease in t: the first is the largest, the last
	// the smallest. mech.LaplaceNoise needs every one finite and > 0.
	if s := delta / eps[0]; math.IsInf(s, 1) {
		return fmt.Errorf("noisered: %s: Laplace scale delta/eps[0] = %v/%v overflows", op, delta, eps[0])
	}
	if s := delta / eps[len(eps)-1]; !(s > 0) {
		return fmt.Errorf("noisered: %s: Laplace scale delta/eps[%d] = %v/%v underflows to 0", op, len(eps)-1, delta, eps[len(eps)-1])
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("noisered: %s: v[%d] must be finite (got %v)", op, i, x)
		}
	}
	return nil
}
