package mech_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/mech"
)

// Release the mean of n = 100 values in [0, 1] (L1 sensitivity 1/n) with
// ε = 0.5. The seeded generator makes the output reproducible; it is a
// simulation, not secure noise.
func ExampleNewLaplace() {
	rng := rand.New(rand.NewPCG(1, 2))
	l, err := mech.NewLaplace(0.5, 1.0/100)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("scale b = %.2f\n", l.Scale())
	noisy := l.AddNoise(nil, []float64{0.25, 0.5, 0.75}, rng)
	fmt.Printf("noisy means: %.4f\n", noisy)

	_, err = mech.NewLaplace(0, 1)
	fmt.Println(err)
	// Output:
	// scale b = 0.02
	// noisy means: [0.2587 0.4984 0.7503]
	// mech: laplace: epsilon must be finite and > 0 (got 0)
}

// Select one of three hyper-parameters by their validation error counts
// e = (12, 10, 15) with ε = 1: scores are −e and the sensitivity is 1, so
// p_i ∝ exp(−e_i/2).
func ExampleExponential() {
	rng := rand.New(rand.NewPCG(1, 2))
	scores := []float64{-12, -10, -15}
	p, err := mech.ExponentialProbs(nil, scores, 1, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("probabilities: %.4f\n", p)
	picks := make([]int, 20)
	for k := range picks {
		picks[k], _ = mech.Exponential(rng, scores, 1, 1)
	}
	fmt.Println("picks:", picks)
	// Output:
	// probabilities: [0.2537 0.6897 0.0566]
	// picks: [1 1 1 1 1 1 1 1 2 1 1 1 0 1 1 1 1 1 2 1]
}

// Report noisy max with exponential noise is ε-DP like the exponential
// mechanism but follows the permute-and-flip distribution.
func ExampleReportNoisyMax() {
	rng := rand.New(rand.NewPCG(1, 2))
	scores := []float64{-12, -10, -15}
	picks := make([]int, 20)
	for k := range picks {
		picks[k], _ = mech.ReportNoisyMax(rng, scores, 1, 1)
	}
	fmt.Println("picks:", picks)
	// Output:
	// picks: [1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 0 1 1 1]
}

// Output perturbation for ρ-zCDP: σ = Δ₂/√(2ρ).
func ExampleNewGaussianZCDP() {
	rng := rand.New(rand.NewPCG(1, 2))
	g, err := mech.NewGaussianZCDP(0.125, 0.1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("sigma = %.3f, rho = %.3f\n", g.Sigma(), g.Rho())
	fmt.Printf("%.4f\n", g.AddNoise(nil, []float64{1, -1}, rng))
	// Output:
	// sigma = 0.200, rho = 0.125
	// [1.0759 -0.9851]
}

// Classical (ε, δ) calibration, valid only for ε < 1.
func ExampleNewGaussianDP() {
	g, err := mech.NewGaussianDP(0.5, 1e-5, 1)
	fmt.Printf("sigma = %.4f, err = %v\n", g.Sigma(), err)
	_, err = mech.NewGaussianDP(2, 1e-5, 1)
	fmt.Println(err)
	// Output:
	// sigma = 9.6896, err = <nil>
	// mech: gaussian (epsilon, delta)-DP: epsilon must be in (0, 1) for the classical calibration (Dwork & Roth 2014 Thm A.1) (got 2)
}

// Estimate the fraction of "yes" answers in a survey of 10000 people, 30 %
// of whom hold "yes", from ln 3-randomized responses.
func ExampleRRDebias() {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 10000
	eps := math.Log(3)
	yes := 0
	for i := range n {
		r, _ := mech.RandomizedResponse(rng, i < 3000, eps)
		if r {
			yes++
		}
	}
	fmt.Printf("keep probability %.2f\n", mech.RRKeepProb(eps))
	fmt.Printf("observed %.4f, debiased %.4f\n", float64(yes)/n, mech.RRDebias(float64(yes)/n, eps))
	// Output:
	// keep probability 0.75
	// observed 0.4013, debiased 0.3026
}

// Noise for objective perturbation in d = 3 dimensions with γ = ε′/2 = 0.5.
func ExampleSphericalLaplace() {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]float64, 3)
	if err := mech.SphericalLaplace(b, rng, 0.5); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", b)
	// Output:
	// [2.1243 0.4184 1.1201]
}
