package learners_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/learners"
)

// meanDifference is a non-private baseline learner: w = (mean of x over
// y = +1 − mean over y = −1)/(1 + λ), released without noise. Its
// guarantee says so, and the rows of every method that uses it then say
// private = false.
type meanDifference struct{}

func (meanDifference) Name() string { return "mean-difference" }

func (meanDifference) Fit(_ context.Context, _ *rand.Rand, train *learners.Data, lambda float64, _ learners.Level) (learners.Model, privacy.Guarantee, error) {
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

func (w linear) Margins(dst []float64, d *learners.Data) []float64 {
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
func ExampleRegister() {
	if err := learners.Register(meanDifference{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(learners.Names())
	fmt.Println(learners.Register(meanDifference{}))

	// Fit it on four rows, as a cv-tuning unit would on its training set.
	X := mat.NewDense(4, 2, []float64{1, 2, 1, 1, 1, -1, 1, -2})
	y := []float64{1, 1, -1, -1}
	m, g, _ := meanDifference{}.Fit(context.Background(), rand.New(rand.NewPCG(1, 2)), learners.NewData(X, y, nil), 1, learners.Level{Epsilon: 1})
	fmt.Println(m.Margins(nil, learners.NewData(X, y, []int{0, 3})), g)
	// Output:
	// [objective-perturbation output-perturbation non-private mean-difference]
	// name already registered: learner "mean-difference"
	// [3 -3] not private
}
