package learners

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/perturb"
	"github.com/dprepro/dprepro/core/privacy"
)

// unitBallData returns n rows in d dimensions inside the unit ball, labelled
// by the sign of their first coordinate (flipped for every fifth row).
func unitBallData(n, d int, seed uint64) *Data {
	rng := rand.New(rand.NewPCG(seed, 1))
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		var norm float64
		row := X.RawRowView(i)
		for j := range row {
			row[j] = rng.NormFloat64()
			norm += row[j] * row[j]
		}
		norm = math.Sqrt(norm)
		for j := range row {
			row[j] /= norm
		}
		y[i] = 1
		if row[0] < 0 {
			y[i] = -1
		}
		if i%5 == 0 {
			y[i] = -y[i]
		}
	}
	return NewData(X, y, nil)
}

func TestLookupLearner(t *testing.T) {
	cfg := Config{Table: "comparison", Loss: "logistic"}
	for _, name := range []string{"objective-perturbation", "output-perturbation", "non-private"} {
		l, err := Lookup(nil, name, cfg)
		if err != nil || l.Name() != name {
			t.Errorf("LookupLearner(%q) = %v, %v", name, l, err)
		}
	}
	_, err := Lookup(nil, "nope", cfg)
	if want := `unknown learner "nope" (known: objective-perturbation, output-perturbation, non-private`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("unknown: err = %v, want %s", err, want)
	}
	cfg.Loss = "hinge"
	_, err = Lookup(nil, "output-perturbation", cfg)
	if want := `learner "output-perturbation": comparison.loss: learner output-perturbation has no loss "hinge" (want logistic or huber)`; err == nil || err.Error() != want {
		t.Errorf("bad loss: err = %v, want %s", err, want)
	}
	l, err := Lookup(nil, "objective-perturbation", Config{Loss: "huber", HuberH: 0.5, ObjPert: perturb.VariantPrivateLR1169})
	if op, ok := l.(ObjectivePerturbation); err != nil || !ok || op.Loss != (erm.Huber{H: 0.5}) || op.Variant != perturb.VariantPrivateLR1169 {
		t.Errorf("configured objective perturbation = %#v, %v", l, err)
	}
}

// TestOutputPerturbation_Release: the release is w* + b with b drawn from
// the rng as perturb.PlanOutPert draws it, ε-DP at the ε asked for; the
// non-private learner releases w* itself, booked as not private.
func TestOutputPerturbation_Release(t *testing.T) {
	train := unitBallData(200, 4, 3)
	const lambda, eps = 0.1, 0.5
	m, g, err := OutputPerturbation{}.Fit(context.Background(), rand.New(rand.NewPCG(7, 7)), train, lambda, Level{Epsilon: eps})
	if err != nil {
		t.Fatal(err)
	}
	if g.Notion != privacy.Pure || g.Epsilon != eps || g.Delta != 0 || !g.Private() {
		t.Errorf("guarantee %+v, want pure ε = %v", g, eps)
	}
	ref, gr, err := NonPrivate{}.Fit(context.Background(), nil, train, lambda, Level{Epsilon: math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	if gr.Private() || !math.IsInf(gr.Epsilon, 1) {
		t.Errorf("non-private guarantee %+v", gr)
	}
	plan, err := perturb.PlanOutPert(perturb.OutPertOptions{Epsilon: eps, Lambda: lambda}, train.N())
	if err != nil {
		t.Fatal(err)
	}
	b := make([]float64, train.D())
	if err := plan.DrawNoise(b, rand.New(rand.NewPCG(7, 7))); err != nil {
		t.Fatal(err)
	}
	w, wStar := m.(*weightModel).w, ref.(*weightModel).w
	for j := range w {
		// Both solve the same problem to the solver's tolerance: w*
		// agrees to far better than 1e-9.
		if d := w[j] - wStar[j] - b[j]; math.Abs(d) > 1e-9 {
			t.Errorf("w[%d] − w*[%d] − b[%d] = %v", j, j, j, d)
		}
	}
	if r := m.(Reporter).Report(); !r.Converged || !math.IsNaN(r.EpsPrime) {
		t.Errorf("report %+v", r)
	}
	b1, b2, err := OutputPerturbation{}.StabilityConstants(context.Background(), []float64{0.5, 0.1}, 10, 1, 0.01)
	if err != nil || b1 != 2/0.1 || b2 != 1 {
		t.Errorf("stability constants %v, %v, %v; want 20, 1 (Theorem 4)", b1, b2, err)
	}
}
