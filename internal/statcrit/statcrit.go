// Package statcrit holds the critical values the harness's statistical
// checks use: tolerances derived from theory at a fixed family-wise
// false-failure probability FamilyAlpha, split over k simultaneous checks
// (Bonferroni, valid under any dependence between them). The tests of
// randomized code use them through internal/stattest; production code
// that checks a simulated rate against a bound (the mechanism-bounds
// kind) uses them directly, so that the shipped binary links no test
// helper.
package statcrit

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// FamilyAlpha is the per-test false-failure probability for any seed.
const FamilyAlpha = 1e-5

// ZCrit returns the two-sided normal critical value for k simultaneous
// checks at family-wise level FamilyAlpha: Φ⁻¹(1 − FamilyAlpha/(2k)).
func ZCrit(k int) float64 {
	return distuv.UnitNormal.Quantile(1 - FamilyAlpha/(2*float64(k)))
}

// DKWCrit returns the critical value of a one-sample Kolmogorov–Smirnov
// statistic on n draws at level FamilyAlpha/k, from the
// Dvoretzky–Kiefer–Wolfowitz inequality with Massart's constant,
// P(sup|F_n − F| > c) ≤ 2·exp(−2nc²). The bound holds for every n and every
// F, continuous or not, so no asymptotics are involved.
func DKWCrit(n, k int) float64 {
	return math.Sqrt(math.Log(2*float64(k)/FamilyAlpha) / (2 * float64(n)))
}

// TwoSampleCrit returns the critical value of the two-sample
// Kolmogorov–Smirnov statistic D for two samples of n draws each from the
// same law, at level FamilyAlpha/k. For a continuous law the one-sided tail
// is exact (Gnedenko–Korolyuk): P(D⁺ ≥ j/n) = C(2n, n−j)/C(2n, n) =
// ∏_{i=1..j} (1 − j/(n+i)) ≤ exp(−j²/(n+j)), so
// P(D ≥ d) ≤ 2·exp(−n·d²/(1+d)); solving for d gives
// d = (L + √(L² + 4nL))/(2n) with L = ln(2k/FamilyAlpha). For a discrete
// law, D is a supremum over a subset of the thresholds of the continuous
// case (X = F⁻¹(U)), so the bound still holds.
func TwoSampleCrit(n, k int) float64 {
	l := math.Log(2 * float64(k) / FamilyAlpha)
	nf := float64(n)
	return (l + math.Sqrt(l*l+4*nf*l)) / (2 * nf)
}

// MeanSD returns the mean of xs and their sample standard deviation (the
// n − 1 denominator; NaN for fewer than two values), summed in order.
// The claims' paired intervals and the baseline comparison share it.
func MeanSD(xs []float64) (mean, sd float64) {
	for _, v := range xs {
		mean += v
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, math.NaN()
	}
	for _, v := range xs {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// TQuantile returns Student's t quantile at probability p on nu degrees
// of freedom, the normal one for nu = +Inf: TQuantile(0.975, ν) is the
// half-width factor of a two-sided 95 % interval.
func TQuantile(p, nu float64) float64 {
	if math.IsInf(nu, 1) {
		return distuv.UnitNormal.Quantile(p)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(p) // lint:nosrc (quantile only)
}
