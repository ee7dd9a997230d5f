package erm

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Factor is a Cholesky factor of the Hessian ∇²J(w₀) of an objective at a
// point w₀, for [FitOptions.Factor]: many fits whose minimizers lie near w₀
// (the bootstrap fits of a variability interval, all warm-started at the
// full-data minimizer θ̂) take their first Newton steps with it instead of
// building and factorizing a Hessian each. A Factor is read only after
// [NewFactor] and safe for concurrent use by any number of fits (each
// copies it into its own Workspace).
type Factor struct {
	chol mat.Cholesky
	d    int
}

// NewFactor returns the Cholesky factor of obj's Hessian over rows at w
// (see [Objective.Hessian]). It returns an error for invalid input
// ([Objective.Validate], len(w) ≠ D(), a non-finite w) or when the Hessian
// is not numerically positive definite (Lambda+ExtraL2 tiny against the
// data curvature); no diagonal shift is added, unlike [Fit].
func NewFactor(rows *Rows, obj Objective, w []float64) (*Factor, error) {
	if err := obj.Validate(rows); err != nil {
		return nil, fmt.Errorf("erm: factor: %w", err)
	}
	if len(w) != rows.d {
		return nil, fmt.Errorf("erm: factor: len(w) = %d, want %d", len(w), rows.d)
	}
	for j, v := range w {
		if !isFinite(v) {
			return nil, fmt.Errorf("erm: factor: w[%d] = %v: %w", j, v, ErrNotFinite)
		}
	}
	f := &Factor{d: rows.d}
	if !f.chol.Factorize(obj.Hessian(nil, rows, w)) {
		return nil, errors.New("erm: factor: the Hessian is not positive definite")
	}
	return f, nil
}

// D returns the dimension of the factored Hessian.
func (f *Factor) D() int { return f.d }
