package cvtune_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/kinds/cvtune"
)

// meanDifference is a non-private baseline learner: w = (mean of x over
// y = +1 − mean over y = −1)/(1 + λ), released without noise. Its
// guarantee says so, and the rows of every method that uses it then say
// private = false.
type meanDifference struct{}

func (meanDifference) Name() string { return "mean-difference" }

func (meanDifference) Fit(_ context.Context, _ *rand.Rand, train *cvtune.Data, lambda float64, _ cvtune.Level) (cvtune.Model, privacy.Guarantee, error) {
	X, y := train.X(), train.Y()
	w := make([]float64, train.D())
	var nPos, nNeg float64
	for _, yi := range y {
		if yi > 0 {
			nPos++
		} else {
			nNeg++
		}
	}
	for i, yi := range y {
		for j, v := range X.RawRowView(i) {
			if yi > 0 {
				w[j] += v / nPos / (1 + lambda)
			} else {
				w[j] -= v / nNeg / (1 + lambda)
			}
		}
	}
	return linear(w), privacy.NonPrivate("the class-mean difference of T, without noise"), nil
}

// linear is the model x ↦ w·x.
type linear []float64

func (w linear) Margins(dst []float64, d *cvtune.Data) []float64 {
	if len(dst) != d.N() {
		dst = make([]float64, d.N())
	}
	wv := mat.NewVecDense(len(w), w)
	for i := range dst {
		dst[i] = mat.Dot(wv, d.X().RowView(i))
	}
	return dst
}

// A user's module registers its learner from main() before cli.Main; a
// spec then names it in tuning.learners, e.g.
// learners = ["objective-perturbation", "mean-difference"].
func ExampleRegisterLearner() {
	if err := cvtune.RegisterLearner(meanDifference{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cvtune.LearnerNames())
	fmt.Println(cvtune.RegisterLearner(meanDifference{}))

	// Fit it on four rows, as a cv-tuning unit would on its training set.
	X := mat.NewDense(4, 2, []float64{1, 2, 1, 1, 1, -1, 1, -2})
	y := []float64{1, 1, -1, -1}
	m, g, _ := meanDifference{}.Fit(context.Background(), rand.New(rand.NewPCG(1, 2)), cvtune.NewData(X, y, nil), 1, cvtune.Level{Epsilon: 1})
	fmt.Println(m.Margins(nil, cvtune.NewData(X, y, []int{0, 3})), g)
	// Output:
	// [objective-perturbation output-perturbation non-private mean-difference]
	// name already registered: learner "mean-difference"
	// [3 -3] not private
}

// firstCandidate is a selection method that ignores the data: it releases
// the first candidate trained on all of T at the whole budget α, so it is
// α-DP whatever V holds (the argument of Random, Chaudhuri & Vinterbo
// 2013, Theorem 5).
type firstCandidate struct{}

func (firstCandidate) Name() string { return "first" }

func (s firstCandidate) Select(rng *rand.Rand, c cvtune.Candidates, b cvtune.Budget) (cvtune.Selection, error) {
	f, err := c.Train(rng, 0, cvtune.Level{Epsilon: b.Alpha}, 0, 1)
	if err != nil {
		return cvtune.Selection{}, err
	}
	a, err := s.account(c.Terms(), f.Guarantee)
	return cvtune.Selection{Index: 0, Fit: f, Fits: 1, Account: a}, err
}

func (s firstCandidate) Plan(b cvtune.Budget, _ int, t cvtune.Terms) (cvtune.Account, error) {
	return s.account(t, privacy.EpsDP(b.Alpha, ""))
}

func (firstCandidate) account(t cvtune.Terms, fit privacy.Guarantee) (cvtune.Account, error) {
	train, err := privacy.Compose(privacy.Sequential, "one "+t.Fit+" at alpha for the first "+t.Param, fit)
	if err != nil {
		return cvtune.Account{}, err
	}
	return cvtune.Account{
		Charges: []cvtune.Charge{{Part: cvtune.Training, Data: "T", Guarantee: train}},
		Total:   train,
		Rule:    "the choice does not look at the data",
	}, nil
}

// A user's module registers its selection method from main() before
// cli.Main; a spec then names it in tuning.methods. Its Plan is what the
// ledger describes.
func ExampleRegisterSelector() {
	if err := cvtune.RegisterSelector(firstCandidate{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cvtune.SelectorNames())
	plan, _ := firstCandidate{}.Plan(cvtune.Budget{Alpha: 0.5, Delta: 0.01}, 10, cvtune.Terms{Fit: "objective-perturbation fit", Param: "lambda"})
	fmt.Println(plan.Charges[0].Guarantee.Covers+":", plan.Total)
	// Output:
	// [stability alphaSplit dataSplit random control first]
	// one objective-perturbation fit at alpha for the first lambda: ε=0.5
}
