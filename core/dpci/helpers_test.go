package dpci

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprepro/dprepro/core/erm"
	"gonum.org/v1/gonum/mat"
)

// ballRow fills x with a point of the unit ball: a uniform direction times
// a radius uniform on [0, 1] (not the uniform law on the ball; any law with
// ‖x‖₂ ≤ 1 serves).
func ballRow(rng *rand.Rand, x []float64) {
	var ss float64
	for j := range x {
		x[j] = rng.NormFloat64()
		ss += x[j] * x[j]
	}
	r := rng.Float64() / math.Sqrt(ss)
	for j := range x {
		x[j] *= r
	}
}

// sphereRow fills x with a uniform point of the unit sphere.
func sphereRow(rng *rand.Rand, x []float64) {
	var ss float64
	for j := range x {
		x[j] = rng.NormFloat64()
		ss += x[j] * x[j]
	}
	for j := range x {
		x[j] /= math.Sqrt(ss)
	}
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// plantedData returns n rows in the unit ball with labels ±1 from the
// logistic model P(y = 1 | x) = S(θ*ᵀx).
func plantedData(rng *rand.Rand, n int, thetaStar []float64) (*mat.Dense, []float64) {
	d := len(thetaStar)
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		x := X.RawRowView(i)
		ballRow(rng, x)
		y[i] = -1
		if rng.Float64() < sigmoid(dot(x, thetaStar)) {
			y[i] = 1
		}
	}
	return X, y
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func symmetricEigs(t *testing.T, s mat.Symmetric) []float64 {
	t.Helper()
	var es mat.EigenSym
	if !es.Factorize(s, false) {
		t.Fatal("eigendecomposition failed")
	}
	return es.Values(nil)
}

func frobDiff(a, b mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2)
}

func mustRows(X *mat.Dense, y []float64) *erm.Rows { return erm.NewRows(X, y, nil) }
