package accfirst_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/expost"
)

// Output perturbation as a hypothesis generator (Ligett et al. 2017,
// Algorithm 5): a noise-reduction sequence whose prefix θ¹…θᵗ is εₜ-DP
// (Theorem 2.7), and an independent release that is ε-DP. The guarantees
// are values a search composes. The seeded generator makes the output
// reproducible; it is a simulation, not secure noise.
func ExampleOutput() {
	// Six records with ‖x‖₁ ≤ 1 and labels ±1.
	X := mat.NewDense(6, 2, []float64{0.5, 0.2, -0.3, 0.6, 0.9, -0.1, -0.4, -0.5, 0.1, 0.8, -0.7, 0.2})
	y := []float64{1, -1, 1, -1, 1, -1}
	pr, err := accfirst.NewLogistic(X, y, 0.1)
	if err != nil {
		fmt.Println(err)
		return
	}
	set := accfirst.Setting{Task: accfirst.TaskLogistic, Problem: pr, Calibration: expost.Paper}
	var g accfirst.Generator = accfirst.Output{}
	rng := rand.New(rand.NewPCG(1, 2))

	seq, err := g.Sequence(context.Background(), rng, set, []float64{0.5, 1, 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		_, ok, err := seq.Next()
		if err != nil || !ok {
			break
		}
		fmt.Println("prefix:", seq.Guarantee())
	}
	_, gi, err := g.Independent(context.Background(), rng, set, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("independent release:", gi)
	fmt.Println("covariance for logistic:", accfirst.SupportsTask(accfirst.Covariance{}, accfirst.TaskLogistic))
	// Output:
	// prefix: ε=0.5
	// prefix: ε=1
	// prefix: ε=2
	// independent release: ε=2
	// covariance for logistic: false
}
