package perturb_test

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/perturb"
)

func ExamplePlanObjPert() {
	// Adult-sized training fold (n = 24,000, λ = 1e-3; values checked in
	// Python). At ε = 0.01 the budget cannot absorb the curvature term
	// 2·log(1 + c/(nλ)) ≈ 0.0207, so CMS11 adds the regularization Δ.
	for _, eps := range []float64{1, 0.01} {
		p, err := perturb.PlanObjPert(perturb.ObjPertOptions{Epsilon: eps, Lambda: 1e-3}, 24000)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("ε=%g: ε′=%.4f Δ=%.3g γ=%.4f fallback=%v delivered=%g\n",
			eps, p.EpsilonPrime, p.Delta, p.NoiseGamma, p.Fallback, p.EpsilonDelivered)
	}
	// Output:
	// ε=1: ε′=0.9793 Δ=0 γ=0.4896 fallback=false delivered=1
	// ε=0.01: ε′=0.0050 Δ=0.00316 γ=0.0025 fallback=true delivered=0.01
}

func ExampleObjectivePerturbation() {
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
	rng := rand.New(rand.NewChaCha8([32]byte{'d', 'p', 'r', 'e', 'p', 'r', 'o'}))

	// G then F: draw the noise once, fit deterministically.
	plan, err := perturb.PlanObjPert(perturb.ObjPertOptions{Epsilon: 1, Lambda: 0.1}, rows.N())
	if err != nil {
		fmt.Println(err)
		return
	}
	b := make([]float64, rows.D())
	if err := plan.DrawNoise(b, rng); err != nil {
		fmt.Println(err)
		return
	}
	res, err := plan.Fit(rows, b, erm.FitOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ε′=%.4f γ=%.4f status=%s ‖w‖>0: %v\n", plan.EpsilonPrime, plan.NoiseGamma, res.Status, res.W[0] != 0 || res.W[1] != 0)
	// Output:
	// ε′=0.3034 γ=0.1517 status=converged ‖w‖>0: true
}
