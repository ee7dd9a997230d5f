package noisygd

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/learners"
)

// toy returns n points on the unit circle's right and left halves,
// labelled by the sign of their first coordinate (separable by θ = (1, 0)).
func toy(n int) *learners.Data {
	rng := rand.New(rand.NewPCG(1, 2))
	X := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		a, b := 0.1+0.6*rng.Float64(), rng.Float64()*1.4-0.7
		if i%2 == 0 {
			a = -a
		}
		X.Set(i, 0, a)
		X.Set(i, 1, b)
		y[i] = 1
		if a < 0 {
			y[i] = -1
		}
	}
	return learners.NewData(X, y, nil)
}

// TestFit_Guarantee checks the returned guarantee (pure ε-DP at the level
// asked) and that one seed gives one model.
func TestFit_Guarantee(t *testing.T) {
	d := toy(200)
	l := Learner{Steps: 20}
	m1, g, err := l.Fit(context.Background(), rand.New(rand.NewPCG(3, 4)), d, 0.01, learners.Level{Epsilon: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	if g.Notion != privacy.Pure || g.Epsilon != 0.7 || g.Delta != 0 {
		t.Errorf("guarantee %+v, want pure ε = 0.7", g)
	}
	m2, _, _ := l.Fit(context.Background(), rand.New(rand.NewPCG(3, 4)), d, 0.01, learners.Level{Epsilon: 0.7})
	a, b := m1.Margins(nil, d), m2.Margins(nil, d)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("row %d: margins %v and %v from one seed", i, a[i], b[i])
		}
	}
	if _, _, err := (Learner{}).Fit(context.Background(), rand.New(rand.NewPCG(3, 4)), d, 0.01, learners.Level{Epsilon: 1}); err == nil {
		t.Error("Steps = 0 accepted")
	}
}

// TestFit_Accuracy: at a large ε the noise (norm Gamma(d, γ), mean
// 2·Steps·d/(ε·n) = 2·20·2/(1e4·200) = 4e-5 per step) is negligible, and
// noisy gradient descent separates the toy data.
func TestFit_Accuracy(t *testing.T) {
	d := toy(200)
	m, _, err := Learner{Steps: 20}.Fit(context.Background(), rand.New(rand.NewPCG(5, 6)), d, 0.001, learners.Level{Epsilon: 1e4})
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for i, v := range m.Margins(nil, d) {
		if v*d.Y()[i] <= 0 {
			wrong++
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d toy points misclassified at ε = 1e4", wrong, d.N())
	}
}
