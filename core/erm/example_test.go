package erm_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/erm"
)

func ExampleFit() {
	// Six labelled points in the unit ball: an intercept column and one
	// feature, symmetric under (x, y) → (−x, −y), so the intercept weight is
	// 0. The values were checked by bisection on the 1-D gradient (logistic)
	// and by hand (ridge: θ = (XᵀX/6 + 0.1·I)⁻¹·Xᵀy/6 = (0, 0.4/0.4)).
	X := mat.NewDense(6, 2, []float64{
		0.6, -0.8,
		0.6, -0.5,
		0.6, 0.1,
		0.6, -0.1,
		0.6, 0.5,
		0.6, 0.8,
	})
	y := []float64{-1, -1, -1, 1, 1, 1}
	rows := erm.NewRows(X, y, nil)
	obj := erm.Objective{Loss: erm.Logistic{}, Lambda: 0.1}
	res, err := erm.Fit(rows, obj, erm.FitOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s, w = [%.4f %.4f], J = %.4f\n", res.Status, res.W[0], res.W[1], res.Value)

	ridge, err := erm.FitRidge(rows, 0.1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ridge θ = [%.4f %.4f]\n", ridge[0], ridge[1])
	// Output:
	// converged, w = [0.0000 1.1707], J = 0.5775
	// ridge θ = [0.0000 1.0000]
}
