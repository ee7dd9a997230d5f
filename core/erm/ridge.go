package erm

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Gram returns the weighted sufficient statistics of least squares,
//
//	XᵀΩX = Σᵢ ωᵢ·xᵢxᵢᵀ   (d×d)
//	XᵀΩy = Σᵢ ωᵢ·yᵢ·xᵢ   (length d)
//
// with Ω = diag(ω) (identity when rows has no weights). They are not divided
// by N. With them the ridge risk of any θ is
//
//	L(θ) = (yᵀΩy − 2θᵀXᵀΩy + θᵀXᵀΩXθ)/(2N) + (λ/2)‖θ‖²
//
// in O(d²), not O(Nd). The cost is one pass over the nonzero pairs of
// each row, done once per Rows and cached (the returned matrix is a copy).
// Gram does not check [Rows.Err]: invalid values propagate.
func Gram(rows *Rows) (*mat.SymDense, []float64) {
	d := rows.d
	g := mat.NewSymDense(d, append([]float64(nil), rows.gramMatrix()...))
	c := make([]float64, rows.n)
	for i := range c {
		c[i] = rows.Weight(i) * rows.y[i]
	}
	xty := make([]float64, d)
	rows.mulTransAdd(xty, c)
	return g, xty
}

// FitRidge returns the ridge-regression estimate
//
//	θ = argmin (1/(2N))·Σᵢ ωᵢ·(yᵢ − θᵀxᵢ)² + (λ/2)‖θ‖²
//	  = (XᵀΩX/N + λI)⁻¹ · XᵀΩy/N
//
// with N = Σᵢ ωᵢ, solved by Cholesky factorization of the (λ-strongly
// positive definite) matrix. lambda: required, finite and > 0. It returns an
// error for invalid lambda or rows ([Rows.Err]).
func FitRidge(rows *Rows, lambda float64) ([]float64, error) {
	if rows == nil {
		return nil, errors.New("erm: ridge: rows is nil")
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("erm: ridge: %w", err)
	}
	if !(lambda > 0) || math.IsInf(lambda, 1) {
		return nil, fmt.Errorf("erm: ridge: lambda must be finite and > 0 (got %v)", lambda)
	}
	g, xty := Gram(rows)
	d := rows.d
	invN := 1 / rows.sumW
	a := mat.NewSymDense(d, nil)
	a.ScaleSym(invN, g)
	for j := 0; j < d; j++ {
		a.SetSym(j, j, a.At(j, j)+lambda)
	}
	var chol mat.Cholesky
	if !chol.Factorize(a) {
		return nil, fmt.Errorf("erm: ridge: matrix not positive definite (lambda %v too small for the data scale)", lambda)
	}
	b := mat.NewVecDense(d, xty)
	b.ScaleVec(invN, b)
	theta := mat.NewVecDense(d, nil)
	if err := chol.SolveVecTo(theta, b); err != nil {
		if _, ok := err.(mat.Condition); !ok {
			return nil, fmt.Errorf("erm: ridge: %w", err)
		}
	}
	return theta.RawVector().Data, nil
}
