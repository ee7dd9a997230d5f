package histogram

import (
	"fmt"
	"math"
)

// MinN returns the sample size Theorem 6 of Chaudhuri & Vinterbo 2013
// requires for k bin widths with smallest width hmin at privacy level alpha
// and failure probability delta: n ≥ 1 + 2·ln(4k/δ)/(α·√h_min).
func MinN(hmin float64, k int, alpha, delta float64) float64 {
	return 1 + 2*math.Log(4*float64(k)/delta)/(alpha*math.Sqrt(hmin))
}

// StabilityConstants returns (β₁, β₂) of Theorem 6 of Chaudhuri & Vinterbo
// 2013, for which the score of Eq. 6 is (β₁, β₂, δ/k)-stable with respect to
// Algorithm 5 and k bin widths with smallest width hmin:
//
//	β₁ = 6/((1 − ν)·h_min),  β₂ = 2/h_min,  ν = 2·ln(4k/δ)/(n·α·√h_min).
//
// n is the training-set size. It returns an error, naming the requirement,
// when n < [MinN] (then ν ≥ 1 − 1/n and the theorem does not apply), and
// for parameters out of range.
func StabilityConstants(hmin float64, k, n int, alpha, delta float64) (beta1, beta2 float64, err error) {
	switch {
	case !(hmin > 0 && hmin <= 1):
		return 0, 0, fmt.Errorf("histogram: h_min = %v: want (0, 1]", hmin)
	case k < 1:
		return 0, 0, fmt.Errorf("histogram: %d bin widths: want >= 1", k)
	case !(alpha > 0) || math.IsInf(alpha, 1):
		return 0, 0, fmt.Errorf("histogram: alpha = %v: want finite and > 0", alpha)
	case !(delta > 0 && delta < 1):
		return 0, 0, fmt.Errorf("histogram: delta = %v: want (0, 1)", delta)
	}
	if need := MinN(hmin, k, alpha, delta); float64(n) < need {
		return 0, 0, fmt.Errorf("histogram: Theorem 6 needs n >= 1 + 2 ln(4k/delta)/(alpha sqrt(h_min)) = %.1f training points (k = %d, h_min = %v, alpha = %v, delta = %v); got n = %d",
			need, k, hmin, alpha, delta, n)
	}
	nu := 2 * math.Log(4*float64(k)/delta) / (float64(n) * alpha * math.Sqrt(hmin))
	return 6 / ((1 - nu) * hmin), 2 / hmin, nil
}
