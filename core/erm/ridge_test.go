package erm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// TestFitRidge compares FitRidge and Gram with the closed form computed from
// dense products: θ = (XᵀΩX/N + λI)⁻¹·XᵀΩy/N, solved by LU (mat.Dense.Solve).
func TestFitRidge(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(23, 24))
	for name, r := range testDesigns(rng) {
		n, d := r.N(), r.D()
		// Continuous targets.
		target := make([]float64, n)
		for i := range target {
			target[i] = 2*rng.NormFloat64() + 1
		}
		X := denseOf(r)
		omega := make([]float64, n)
		for i := range omega {
			omega[i] = float64(rng.IntN(3))
		}
		rows := NewRows(X, target, nil).WithWeights(omega)
		lambda := 0.05

		// Dense closed form.
		var sumW float64
		W := mat.NewDiagDense(n, omega)
		for _, o := range omega {
			sumW += o
		}
		var wx, a mat.Dense
		wx.Mul(W, X)
		a.Mul(X.T(), &wx)
		var xty mat.VecDense
		xty.MulVec(wx.T(), mat.NewVecDense(n, target))

		g, gy := Gram(rows)
		if !mat.EqualApprox(g, &a, 1e-12) || !floats.EqualApprox(gy, xty.RawVector().Data, 1e-12) {
			t.Errorf("%s: Gram differs from XᵀΩX, XᵀΩy", name)
		}

		a.Scale(1/sumW, &a)
		for j := 0; j < d; j++ {
			a.Set(j, j, a.At(j, j)+lambda)
		}
		xty.ScaleVec(1/sumW, &xty)
		var want mat.VecDense
		if err := want.SolveVec(&a, &xty); err != nil {
			t.Fatal(err)
		}
		got, err := FitRidge(rows, lambda)
		if err != nil {
			t.Fatal(err)
		}
		if !floats.EqualApprox(got, want.RawVector().Data, 1e-10) {
			t.Errorf("%s: FitRidge = %v, closed form %v", name, got, want.RawVector().Data)
		}
	}
}

func TestFitRidge_Errors(t *testing.T) {
	t.Parallel()
	rows := NewRows(mat.NewDense(2, 1, []float64{1, 2}), []float64{1, 2}, nil)
	for _, lambda := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := FitRidge(rows, lambda); err == nil {
			t.Errorf("lambda %v: no error", lambda)
		}
	}
	bad := NewRows(mat.NewDense(2, 1, []float64{1, 2}), []float64{1, math.NaN()}, nil)
	if _, err := FitRidge(bad, 1); err == nil {
		t.Error("NaN target: no error")
	}
}
