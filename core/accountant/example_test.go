package accountant_test

import (
	"fmt"

	"github.com/dprepro/dprepro/core/accountant"
)

// The MNIST setting of TF-Privacy's tutorial: 60000 records, batches of
// 256 (q = 256/60000), σ = 1.1, 60 epochs (14063 steps), δ = 1e-5. The
// tutorial printed ε = 3.01 with the classic conversion.
func ExampleSampledGaussian_Epsilon() {
	m := accountant.SampledGaussian{Sigma: 1.1, Q: 256.0 / 60000, Steps: 14063}
	eps, order, err := m.Epsilon(1e-5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("tight:   ε = %.3f at α = %v\n", eps, order)
	eps, order, _ = m.EpsilonWith(1e-5, nil, accountant.Classic)
	fmt.Printf("classic: ε = %.3f at α = %v\n", eps, order)
	// Output:
	// tight:   ε = 2.597 at α = 8
	// classic: ε = 3.009 at α = 9
}

// The same setting with the privacy-loss-distribution accountant, which
// is tighter than the RDP one (and is what the harness books for a
// learner declaring this mechanism).
func ExampleSampledGaussian_EpsilonPLD() {
	m := accountant.SampledGaussian{Sigma: 1.1, Q: 256.0 / 60000, Steps: 14063}
	eps, err := m.EpsilonPLD(1e-5, accountant.PLDOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("PLD: ε = %.2f (grid h = %.3g)\n", eps, m.DefaultPLDInterval())
	// Output:
	// PLD: ε = 2.39 (grid h = 0.000967)
}
