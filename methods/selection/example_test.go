package selection_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/selection"
)

// firstCandidate is a selection method that ignores the data: it releases
// the first candidate trained on all of T at the whole budget α, so it is
// α-DP whatever V holds (the argument of Random, Chaudhuri & Vinterbo
// 2013, Theorem 5).
type firstCandidate struct{}

func (firstCandidate) Name() string { return "first" }

func (s firstCandidate) Select(_ context.Context, rng *rand.Rand, c selection.Candidates, b selection.Budget) (selection.Outcome, error) {
	f, err := c.Train(rng, 0, learners.Level{Epsilon: b.Alpha}, 0, 1)
	if err != nil {
		return selection.Outcome{}, err
	}
	a, err := s.account(c.Terms(), f.Guarantee)
	return selection.Outcome{Index: 0, Fit: f, Fits: 1, Account: a}, err
}

func (s firstCandidate) Plan(b selection.Budget, _ int, t selection.Terms) (selection.Account, error) {
	return s.account(t, privacy.EpsDP(b.Alpha, ""))
}

func (firstCandidate) account(t selection.Terms, fit privacy.Guarantee) (selection.Account, error) {
	train, err := privacy.Compose(privacy.Sequential, "one "+t.Fit+" at alpha for the first "+t.Param, fit)
	if err != nil {
		return selection.Account{}, err
	}
	return selection.Account{
		Charges: []selection.Charge{{Part: selection.Training, Data: "T", Guarantee: train}},
		Total:   train,
		Rule:    "the choice does not look at the data",
	}, nil
}

// A user's module registers its selection method from main() before
// cli.Main; a spec then names it in tuning.methods. Its Plan is what the
// ledger describes.
func ExampleRegister() {
	if err := selection.Register(firstCandidate{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(selection.Names())
	plan, _ := firstCandidate{}.Plan(selection.Budget{Alpha: 0.5, Delta: 0.01}, 10, selection.Terms{Fit: "objective-perturbation fit", Param: "lambda"})
	fmt.Println(plan.Charges[0].Guarantee.Covers+":", plan.Total)
	// Output:
	// [stability alphaSplit dataSplit random control first]
	// one objective-perturbation fit at alpha for the first lambda: ε=0.5
}
