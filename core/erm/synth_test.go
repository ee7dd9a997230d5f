package erm

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// adultGroups are the category counts of the 8 one-hot groups of the
// synthetic Adult-shaped design: 1 intercept + 6 continuous + 98 one-hot
// columns = 105 columns, 1 + 6 + 8 = 15 nonzeros per row, as in the UCI Adult
// data after one-hot encoding (workclass, education, marital status,
// occupation, relationship, race, sex, native country; the country group is
// truncated to 38 levels to reach d ≈ 105).
var adultGroups = []int{9, 16, 7, 15, 6, 5, 2, 38}

// adultShape returns an n×105 design shaped like one-hot-encoded Adult, with
// every row scaled by the largest row norm so that max ‖xᵢ‖₂ = 1, and ±1
// labels drawn from a logistic model with a fixed random coefficient vector.
func adultShape(rng *rand.Rand, n int) (*mat.Dense, []float64) {
	d := 7
	for _, g := range adultGroups {
		d += g
	}
	X := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		row := X.RawRowView(i)
		row[0] = 1
		for j := 1; j <= 6; j++ {
			row[j] = rng.NormFloat64()
		}
		off := 7
		for _, g := range adultGroups {
			// Skewed category frequencies: level k with probability ∝ 0.6^k.
			k := 0
			for k < g-1 && rng.Float64() < 0.4 {
				k++
			}
			row[off+k] = 1
			off += g
		}
	}
	scaleRows(X)
	return X, logisticLabels(rng, X, 3)
}

// magicShape returns an n×11 dense design (intercept + 10 continuous
// features, as the UCI MAGIC gamma telescope data), scaled to max ‖xᵢ‖₂ = 1,
// with logistic labels.
func magicShape(rng *rand.Rand, n int) (*mat.Dense, []float64) {
	const d = 11
	X := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		row := X.RawRowView(i)
		row[0] = 1
		for j := 1; j < d; j++ {
			row[j] = rng.NormFloat64() + 0.3*row[j-1]
		}
	}
	scaleRows(X)
	return X, logisticLabels(rng, X, 6)
}

// sparseRandom returns an n×d design whose entries are nonzero with
// probability density, normal-valued, with rows scaled to max norm 1, and
// logistic labels.
func sparseRandom(rng *rand.Rand, n, d int, density float64) (*mat.Dense, []float64) {
	X := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if rng.Float64() < density {
				X.Set(i, j, rng.NormFloat64())
			}
		}
	}
	scaleRows(X)
	return X, logisticLabels(rng, X, 4)
}

func scaleRows(X *mat.Dense) {
	r, _ := X.Dims()
	var maxNorm float64
	for i := 0; i < r; i++ {
		maxNorm = math.Max(maxNorm, mat.Norm(X.RowView(i), 2))
	}
	if maxNorm > 0 {
		X.Scale(1/maxNorm, X)
	}
}

// logisticLabels draws yᵢ = ±1 with P(yᵢ = 1) = σ(scale·xᵢᵀβ), β a random
// unit vector.
func logisticLabels(rng *rand.Rand, X *mat.Dense, scale float64) []float64 {
	r, c := X.Dims()
	beta := make([]float64, c)
	var ss float64
	for j := range beta {
		beta[j] = rng.NormFloat64()
		ss += beta[j] * beta[j]
	}
	y := make([]float64, r)
	for i := range y {
		var z float64
		for j, v := range X.RawRowView(i) {
			z += v * beta[j]
		}
		z *= scale / math.Sqrt(ss) * math.Sqrt(float64(c))
		y[i] = -1
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	return y
}
