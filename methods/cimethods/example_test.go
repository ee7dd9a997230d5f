package cimethods_test

import (
	"context"
	"fmt"
	"math"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/cimethods"
)

// sandwich is a non-private baseline a user might add: θ̂ and the
// large-sample sandwich interval θ̂[j] ± z·√((H⁻¹ΣH⁻¹)ⱼⱼ/n), which is Eq. 8
// of Wang, Kifer & Lee 2019 (Section 5.2) without privacy noise
// ([dpci.GaussianCI] with noise variance 0). Its cost says so: not
// private.
type sandwich struct{}

func (sandwich) Name() string { return "nonprivate-sandwich-lr" }

func (sandwich) Attributes() cimethods.Attributes {
	return cimethods.Attributes{Privacy: "none", Perturbation: "none", Model: dpci.LR, PrivacyLabel: "non-private"}
}

func (sandwich) Cost(cimethods.Budget) cimethods.Cost {
	return cimethods.Cost{
		Charges: []cimethods.Charge{{Part: "training", Guarantee: privacy.NonPrivate("θ̂, H and Σ, released without noise")}},
		Rule:    "no privacy", Covers: "θ̂ and its sandwich interval",
	}
}

func (m sandwich) Interval(ctx context.Context, d cimethods.Data, b cimethods.Budget) (cimethods.Release, error) {
	p := dpci.Params{Model: dpci.LR, C: d.Problem.C}
	hat, err := dpci.FitNonPrivate(d.Rows, p, d.Problem.Fit)
	if err != nil {
		return cimethods.Release{}, err
	}
	h, err := dpci.Hessian(d.Rows, p, hat.W)
	if err != nil {
		return cimethods.Release{}, err
	}
	sigma, err := dpci.GradCov(d.Rows, p, hat.W)
	if err != nil {
		return cimethods.Release{}, err
	}
	iv, err := dpci.GaussianCI(hat.W, h, sigma, d.Rows.SumWeights(), 0, d.Problem.Alpha)
	if err != nil {
		return cimethods.Release{}, err
	}
	return cimethods.Release{Theta: hat.W, Interval: iv, Status: "ok", EpsilonPrime: math.NaN(), Cost: m.Cost(b)}, nil
}

func (sandwich) Fit(ctx context.Context, d cimethods.Data, eps1 float64) (cimethods.Estimate, error) {
	hat, err := dpci.FitNonPrivate(d.Rows, dpci.Params{Model: dpci.LR, C: d.Problem.C}, d.Problem.Fit)
	if err != nil {
		return cimethods.Estimate{}, err
	}
	return cimethods.Estimate{Theta: hat.W, Status: "ok", EpsilonPrime: math.NaN()}, nil
}

// errSandwich registers the method once, when the package is initialised:
// a variable initializer, not init. A spec can then name
// "nonprivate-sandwich-lr" in confidence_intervals.methods.
var errSandwich = cimethods.Register(sandwich{})

// ExampleRegister registers a method of one's own and reads the
// privacy costs that the ledger composes: the new method's, and a
// built-in's (Theorem 2 of Wang, Kifer & Lee 2019 under zCDP at Table 2's
// budgets, ε₁²/2 + ρ₂ + ρ₃ with ρᵢ = εᵢ²/2).
func ExampleRegister() {
	fmt.Println("registered:", errSandwich)
	b := cimethods.Budget{Eps1: 0.5, Eps2: 0.25, Eps3: 0.25}
	for _, name := range []string{"nonprivate-sandwich-lr", "zcdp-obj-lr", "dp-output-svm"} {
		m, err := cimethods.Lookup(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		total, err := m.Cost(b).Total()
		fmt.Println(name, total, err)
	}
	fmt.Println(cimethods.Register(sandwich{}))
	_, err := cimethods.Lookup("zcdp-objective-lr")
	fmt.Println(err != nil)
	// Output:
	// registered: <nil>
	// nonprivate-sandwich-lr not private <nil>
	// zcdp-obj-lr ρ=0.1875 <nil>
	// dp-output-svm ε=1 <nil>
	// name already registered: method "nonprivate-sandwich-lr"
	// true
}

// ExampleNewWKL builds one of the paper's methods from its parts:
// the name follows from them.
func ExampleNewWKL() {
	m, err := cimethods.NewWKL(dpci.ZCDP, cimethods.OutPert, dpci.SVM)
	if err != nil {
		fmt.Println(err)
		return
	}
	a := m.Attributes()
	fmt.Println(m.Name(), a.PrivacyLabel, a.PerturbationLabel, a.ModelLabel)
	for _, ch := range m.Cost(cimethods.Budget{Eps1: 0.5, Eps2: 0.25, Eps3: 0.25}).Charges {
		fmt.Println(ch.Part, ch.Guarantee)
	}
	// Output:
	// zcdp-output-svm zCDP output SVM
	// training ρ=0.125
	// hessian ρ=0.03125
	// covariance ρ=0.03125
}
