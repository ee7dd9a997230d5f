package privaudit

import (
	"testing"

	"github.com/dprepro/dprepro/core/expost"
)

// TestExactLoss_DoublingTest checks the query sensitivities of Ligett et
// al.'s accuracy tests (Claim A.12 for logistic regression, Claim A.5 for
// ridge: accfirst's QuerySensitivity under the paper's calibration) on the
// pairs of newExcessPair over a grid of n (10 to 100,000, the experiments'
// n), λ (0.005, the experiments', to 1) and θ = t·M. The doubling test
// releases e(θ) + Lap(scale) compared with a cut: its exact loss on a pair
// is |e_D(θ) − e_D′(θ)|/scale, which must not exceed ε_test = Δ/scale; so
// |Δe| ≤ Δ on every candidate.
//
// Teeth: the worst candidate of each problem must exceed half of Δ, so that
// a claim that lost its factor 2 (the two terms L(θ) and L(θ*) of the
// excess each move by up to Δ/2; the authors' code's logistic Δ is about
// that half) makes this test fail.
func TestExactLoss_DoublingTest(t *testing.T) {
	t.Parallel()
	for _, problem := range []string{"logistic", "ridge"} {
		var best excessPair
		bestR := -1.0
		for _, n := range []int{10, 100, 100000} {
			for _, lambda := range []float64{0.005, 0.1, 1} {
				for _, tt := range []float64{-1, -0.5, 0.5, 1} {
					pair, err := newExcessPair(problem, n, lambda, tt)
					if err != nil {
						t.Fatalf("%s n=%d λ=%g t=%g: %v", problem, n, lambda, tt, err)
					}
					r := pair.ratio(expost.Paper)
					if !(r <= 1+1e-9) {
						t.Errorf("%s: |Δe| = %.4g·Δ > Δ (exact loss of the test above ε_test) on %s", problem, r, pair.what)
					}
					if r > bestR {
						best, bestR = pair, r
					}
				}
			}
		}
		if !(bestR > 0.55) {
			t.Errorf("%s: the worst pair found has |Δe| = %.4g·Δ: the search lost its worst case (a halved Δ would pass)", problem, bestR)
		}
		t.Logf("%s worst pair (%s): |Δe|/Δ = %.4f (exact loss %.4f·ε_test)", problem, best.what, bestR, bestR)
	}
	pair, err := doublingPair()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("doubling-test audit pair: |Δe|/Δ = %.4f, e = %v", pair.ratio(expost.Paper), pair.excess())
}
