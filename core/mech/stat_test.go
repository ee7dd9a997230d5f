package mech

import (
	"flag"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Randomized tests in this package use a fixed seed and a tolerance from
// theory such that a test fails for a random seed with probability at most
// familyAlpha. A test that makes k checks splits familyAlpha over them
// (Bonferroni) and uses zCrit(k) standard errors; zCrit(1) ≈ 4.42.
//
// The -stat.seeds=N flag reruns every randomized test with N extra seeds, to
// audit the calibration (expect about N·familyAlpha failures per test).
var statSeeds = flag.Int("stat.seeds", 0, "extra seeds for each randomized test (calibration audit)")

// familyAlpha is the per-test false-failure probability for any seed.
const familyAlpha = 1e-5

// zCrit returns the two-sided normal critical value for k simultaneous checks
// at family-wise level familyAlpha: Φ⁻¹(1 − familyAlpha/(2k)).
func zCrit(k int) float64 {
	return distuv.UnitNormal.Quantile(1 - familyAlpha/(2*float64(k)))
}

// testSeeds returns the fixed seed followed by the -stat.seeds extra seeds.
func testSeeds(fixed uint64) []uint64 {
	s := []uint64{fixed}
	for i := 1; i <= *statSeeds; i++ {
		s = append(s, fixed^(uint64(i)*0x9e3779b97f4a7c15))
	}
	return s
}

// newRNG returns a PCG generator for seed; every test draws from its own.
func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0xda3e39cb94b95bdb))
}

// checkWithin reports an error when |got − want| > tol.
func checkWithin(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol) {
		t.Errorf("%s = %.6g, want %.6g ± %.3g (off by %.2f tolerances)", what, got, want, tol, math.Abs(got-want)/tol)
	}
}

// checkProportion checks that count/n is within z binomial standard errors
// of p: |count/n − p| ≤ z·√(p(1−p)/n) (normal approximation, n·p(1−p) ≫ 1).
func checkProportion(t *testing.T, what string, count, n int, p, z float64) {
	t.Helper()
	checkWithin(t, what, float64(count)/float64(n), p, z*math.Sqrt(p*(1-p)/float64(n)))
}

// checkRel reports an error when got differs from want by more than rel
// relative to |want|.
func checkRel(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if !(math.Abs(got-want) <= rel*math.Abs(want)) {
		t.Errorf("%s = %.17g, want %.17g (relative tolerance %g)", what, got, want, rel)
	}
}

// mustPanic fails the test unless f panics.
func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: did not panic", what)
		}
	}()
	f()
}

// scriptSource is a rand.Source returning vals in turn, then repeating the
// last one, for tests that need exact control of the uniform draws.
type scriptSource struct {
	vals []uint64
	i    int
}

func (s *scriptSource) Uint64() uint64 {
	v := s.vals[min(s.i, len(s.vals)-1)]
	s.i++
	return v
}

// randFrom wraps a scripted source in a *rand.Rand.
func randFrom(src rand.Source) *rand.Rand { return rand.New(src) }

// formatFloat formats v for test names and messages.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
