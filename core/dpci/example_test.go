package dpci_test

import (
	"context"
	"fmt"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/randx"
	"gonum.org/v1/gonum/mat"
)

func ExampleEpsilonPrime() {
	// Logistic regression (t = 1/4), n = 1000, c = 0.01, ε = 1.
	ep, err := dpci.EpsilonPrime(1, 1000, 0.01, 0.25)
	fmt.Printf("%.4f %v\n", ep, err)
	// Too little regularization for ε = 0.001.
	_, err = dpci.EpsilonPrime(0.001, 1000, 0.01, 0.25)
	fmt.Println(err != nil)
	// Output:
	// 0.9876 <nil>
	// true
}

func ExampleOutputPerturbation() {
	// Four rows on the unit circle, labels ±1.
	X := mat.NewDense(4, 2, []float64{1, 0, 0, 1, -0.6, 0.8, 0.6, -0.8})
	rows := erm.NewRows(X, []float64{1, -1, -1, 1}, nil)
	p := dpci.Params{Model: dpci.LR, C: 0.1, Privacy: dpci.ZCDP,
		Phi1: 0.5, Phi2: 0.25, Phi3: 0.25, Alpha: 0.05}
	res, err := dpci.OutputPerturbation(context.Background(), randx.New(1, "example"), rows, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	g := res.Guarantee
	fmt.Printf("%s rho=%g (%s); %d intervals\n", g.Privacy, g.Rho, g.Source, len(res.CI.Lo))
	// Output:
	// zcdp rho=1 (Wang, Kifer & Lee 2019, Theorem 4); 2 intervals
}
