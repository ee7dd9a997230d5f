// Package stattest holds the statistical helpers of the harness's tests of
// randomized code: tolerances derived from theory at a fixed family-wise
// false-failure probability, never retries.
//
// A randomized test uses a fixed seed and tolerances such that it fails for
// a random seed with probability at most FamilyAlpha. A test that makes k
// checks splits FamilyAlpha over them (Bonferroni, valid under any
// dependence between the checks) and uses ZCrit(k) standard errors for
// normal-approximation checks; ZCrit(1) ≈ 4.42.
//
// The -stat.seeds=N test flag reruns every randomized test that iterates
// over Seeds with N extra seeds, to audit the calibration (expect about
// N·FamilyAlpha failures per test).
package stattest

import (
	"flag"
	"math"
	"sort"
	"testing"

	"github.com/dprepro/dprepro/internal/statcrit"
)

var statSeeds = flag.Int("stat.seeds", 0, "extra seeds for each randomized test (calibration audit)")

// FamilyAlpha is the per-test false-failure probability for any seed
// (statcrit.FamilyAlpha).
const FamilyAlpha = statcrit.FamilyAlpha

// ZCrit is statcrit.ZCrit: Φ⁻¹(1 − FamilyAlpha/(2k)).
func ZCrit(k int) float64 { return statcrit.ZCrit(k) }

// DKWCrit is statcrit.DKWCrit: the DKW critical value of a one-sample
// Kolmogorov–Smirnov statistic on n draws at level FamilyAlpha/k.
func DKWCrit(n, k int) float64 { return statcrit.DKWCrit(n, k) }

// TwoSampleCrit is statcrit.TwoSampleCrit: the critical value of the
// two-sample Kolmogorov–Smirnov statistic on n draws each at level
// FamilyAlpha/k.
func TwoSampleCrit(n, k int) float64 { return statcrit.TwoSampleCrit(n, k) }

// Seeds returns the fixed seed followed by the -stat.seeds extra seeds.
func Seeds(fixed uint64) []uint64 {
	s := []uint64{fixed}
	for i := 1; i <= *statSeeds; i++ {
		s = append(s, fixed^(uint64(i)*0x9e3779b97f4a7c15))
	}
	return s
}

// CheckWithin reports an error when |got − want| > tol.
func CheckWithin(t testing.TB, what string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol) {
		t.Errorf("%s = %.6g, want %.6g ± %.3g (off by %.2f tolerances)", what, got, want, tol, math.Abs(got-want)/tol)
	}
}

// CheckProportion checks that count/n is within z binomial standard errors
// of p: |count/n − p| ≤ z·√(p(1−p)/n) (normal approximation, n·p(1−p) ≫ 1).
func CheckProportion(t testing.TB, what string, count, n int, p, z float64) {
	t.Helper()
	CheckWithin(t, what, float64(count)/float64(n), p, z*math.Sqrt(p*(1-p)/float64(n)))
}

// KS returns sup_x |F_n(x) − cdf(x)| for the sample x (sorted in place),
// evaluated on both sides of every jump of F_n.
func KS(x []float64, cdf func(float64) float64) float64 {
	sort.Float64s(x)
	n := float64(len(x))
	d := 0.0
	for i, xi := range x {
		f := cdf(xi)
		d = math.Max(d, math.Max(float64(i+1)/n-f, f-float64(i)/n))
	}
	return d
}
