package dpci

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprepro/dprepro/core/erm"
)

// TestSqDeriv_FillDeriv2: the batch ℓ′² of GradCov's pseudo-loss is its
// Deriv2 bit for bit, for the losses of both models and a generic one.
func TestSqDeriv_FillDeriv2(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	z := []float64{0, math.Copysign(0, -1), 1, 0, 2, -1, 40, -40, 800, -800, math.Inf(1), math.Inf(-1)}
	for range 500 {
		z = append(z, 10*rng.NormFloat64())
	}
	for _, loss := range []erm.Loss{erm.Logistic{}, erm.Huber{H: 1}, erm.Huber{H: 0.25}, erm.Hinge{}} {
		l := sqDeriv{loss}
		got := append([]float64(nil), z...)
		l.FillDeriv2(got)
		for i, v := range z {
			if want := l.Deriv2(v); math.Float64bits(got[i]) != math.Float64bits(want) {
				t.Errorf("%s: %v: FillDeriv2 %v, Deriv2 %v", loss.Name(), v, got[i], want)
			}
		}
	}
}
