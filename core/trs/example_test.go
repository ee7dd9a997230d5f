package trs_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/trs"
)

// ExampleSolver_Solve solves Eq. (1) of Ligett et al. (2017) Algorithm 3
// for a noisy Gram matrix Z that is indefinite: A = Z/n + λI has
// eigenvalues of both signs, so the minimizer lies on the sphere
// ‖θ‖ = √(1/λ) even though A⁻¹g would be shorter.
func ExampleSolver_Solve() {
	const (
		n      = 10
		lambda = 0.25
	)
	z := mat.NewSymDense(2, []float64{ // XᵀX + Laplace noise
		4, 9,
		9, -3,
	})
	zy := []float64{2, -1} // Xᵀy + Laplace noise

	a := mat.NewSymDense(2, nil)
	a.ScaleSym(1.0/n, z)
	a.SetSym(0, 0, a.At(0, 0)+lambda)
	a.SetSym(1, 1, a.At(1, 1)+lambda)
	g := []float64{zy[0] / n, zy[1] / n}
	r := math.Sqrt(1 / lambda)

	s := trs.NewSolver(2)
	theta := make([]float64, 2)
	res, err := s.Solve(theta, a, g, r)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("θ = [%.4f %.4f], ‖θ‖ = %.4f\n", theta[0], theta[1], math.Hypot(theta[0], theta[1]))
	fmt.Printf("μ = %.4f, boundary %v, hard case %v\n", res.Mu, res.Boundary, res.HardCase)
	// Output:
	// θ = [1.1730 -1.6199], ‖θ‖ = 2.0000
	// μ = 0.7634, boundary true, hard case false
}

// ExampleSolver_Interior shows the cheap test for the common case of a
// positive definite A whose stationary point lies in the ball.
func ExampleSolver_Interior() {
	a := mat.NewSymDense(2, []float64{
		2, 1,
		1, 2,
	})
	g := []float64{3, 3}
	s := trs.NewSolver(2)
	theta := make([]float64, 2)
	ok := s.Interior(theta, a, g, 10)
	fmt.Printf("%v [%.4f %.4f]\n", ok, theta[0], theta[1]) // A⁻¹g = (1, 1)
	fmt.Println(s.Interior(theta, a, g, 1))                // ‖A⁻¹g‖ = √2 > 1
	// Output:
	// true [1.0000 1.0000]
	// false
}
