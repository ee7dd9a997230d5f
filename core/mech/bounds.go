package mech

import (
	"math"

	"gonum.org/v1/gonum/stat/combin"
	"gonum.org/v1/gonum/stat/distuv"
)

// The accuracy bounds of the basic mechanisms as Nguyen's 2019 review
// states them (Corollaries 3.4, 3.8 and 3.13) and, for the Gaussian
// mechanism, whose bound the review leaves as "todo" (Proposition 3.16),
// the standard Gaussian tail with a union bound. Each returns the error
// threshold at a tail probability and, where it has one, the exact tail of
// our mechanism, so that the harness can show each bound hold and how loose
// it is.

// RRFlipBound returns the bound of Corollary 3.4 on the probability that
// randomized response with flip probabilities p, q flips exactly j of k
// bits: C(k, j)·max{p, q}^j·max{1−p, 1−q}^(k−j). For [RandomizedResponse]
// (p = q = 1/(1 + e^ε)) it is the exact binomial probability.
func RRFlipBound(k, j int, p, q float64) float64 {
	if j < 0 || j > k {
		return 0
	}
	a, b := math.Max(p, q), math.Max(1-p, 1-q)
	return combin.GeneralizedBinomial(float64(k), float64(j)) * math.Pow(a, float64(j)) * math.Pow(b, float64(k-j))
}

// RRFlipTail returns the smallest j ≥ 1 whose summed Corollary 3.4 bound
// Σ_{i≥j} RRFlipBound(k, i, p, p) is ≤ level (or j = k when none is), and
// that sum: P(#flips ≥ j) ≤ bound for [RandomizedResponse] at
// p = 1/(1 + e^ε).
func RRFlipTail(k int, epsilon, level float64) (j int, bound float64) {
	p := 1 - RRKeepProb(epsilon)
	tail := make([]float64, k+2)
	for i := k; i >= 0; i-- {
		tail[i] = tail[i+1] + RRFlipBound(k, i, p, p)
	}
	for j = 1; j < k; j++ {
		if tail[j] <= level {
			break
		}
	}
	return j, tail[j]
}

// LaplaceLinfThreshold returns Corollary 3.8's threshold (κ/ε)·ln(k/δ): the
// Laplace mechanism at scale κ/ε on k coordinates has
// P(‖noise‖∞ ≥ threshold) ≤ δ. The exact tail is 1 − (1 − δ/k)^k.
func LaplaceLinfThreshold(k int, epsilon, sensitivity, delta float64) (threshold, exact float64) {
	return sensitivity / epsilon * math.Log(float64(k)/delta), 1 - math.Pow(1-delta/float64(k), float64(k))
}

// ExponentialGapThreshold returns Corollary 3.13's threshold
// (2κ/ε)·(ln|Y| + t): the exponential mechanism at ε with score
// sensitivity κ over |Y| = candidates outcomes has
// P(s* − s(M) ≥ threshold) ≤ e^(−t).
func ExponentialGapThreshold(candidates int, epsilon, sensitivity, t float64) float64 {
	return 2 * sensitivity / epsilon * (math.Log(float64(candidates)) + t)
}

// GaussianSigmaProp315 returns σ = √(2·ln(5/(4δ)))·κ/ε of the review's
// Proposition 3.15 (the classical calibration, 5/(4δ) = 1.25/δ). The review
// states no range for ε; Dwork & Roth's Theorem A.1 proves it for ε < 1
// ([NewGaussianDP] enforces that). Only its accuracy is at stake here.
func GaussianSigmaProp315(epsilon, delta, sensitivity float64) float64 {
	return math.Sqrt(2*math.Log(5/(4*delta))) * sensitivity / epsilon
}

// GaussianLinfThreshold returns σ·√(2·ln(2k/δ)): for k independent N(0, σ²)
// coordinates P(‖noise‖∞ ≥ threshold) ≤ δ, by P(|Z| ≥ t) ≤ 2e^(−t²/2) and a
// union bound (the review's Proposition 3.16 is left as "todo"; this is the
// standard tail, not the review's). The exact tail is 1 − (1 − 2Φ(−t))^k.
func GaussianLinfThreshold(k int, sigma, delta float64) (threshold, exact float64) {
	t := math.Sqrt(2 * math.Log(2*float64(k)/delta))
	p := 2 * distuv.UnitNormal.CDF(-t)
	return sigma * t, 1 - math.Pow(1-p, float64(k))
}
