package metrics_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/metrics"
)

func ExampleAUC() {
	scores := []float64{0.1, 0.4, 0.35, 0.8, 0.4}
	labels := []float64{-1, -1, 1, 1, 1}
	fmt.Printf("%.4f\n", metrics.AUC(scores, labels))
	// Output: 0.7500
}

func ExampleBrier() {
	margins := []float64{2, -1, 0}
	labels := []float64{1, -1, 1}
	probs := metrics.LogisticProbs(nil, margins)
	fmt.Printf("%.4f\n", metrics.Brier(probs, labels))
	// Output: 0.1122
}

func ExampleErrorRate() {
	scores := []float64{1.5, -0.2, 0, -3}
	labels := []float64{1, 1, -1, -1}
	fmt.Println(metrics.ErrorCount(scores, labels), metrics.ErrorRate(scores, labels))
	// Output: 2 0.5
}

func ExampleRampScore() {
	margins := []float64{2, 0.5, -1}
	labels := []float64{1, 1, 1}
	fmt.Println(metrics.RampScore(margins, labels))
	// Output: -0.5
}

func ExampleMeanCI() {
	rng := rand.New(rand.NewPCG(1, 2))
	x := []float64{0.81, 0.84, 0.79, 0.88, 0.83, 0.80, 0.86, 0.82}
	mean, lo, hi := metrics.MeanCI(rng, x, 0.95, 2000)
	fmt.Printf("%.4f [%.4f, %.4f]\n", mean, lo, hi)
	m, sd := metrics.MeanSD(x)
	fmt.Printf("%.4f ± %.4f\n", m, sd)
	// Output:
	// 0.8287 [0.8100, 0.8488]
	// 0.8287 ± 0.0304
}

func ExampleSigmoid() {
	fmt.Println(metrics.Sigmoid(0), metrics.Sigmoid(-720) > 0)
	// Output: 0.5 true
}

func ExampleRampLoss() {
	for _, z := range []float64{-2, 0, 0.25, 1, 3} {
		fmt.Print(metrics.RampLoss(z), " ")
	}
	fmt.Println()
	// Output: 1 1 0.75 0 0
}
