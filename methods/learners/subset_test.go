package learners

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/randx"
)

// TestData_Subset checks that a Subset of a Data holding every row is the
// Data NewData makes of the same rows: the same views, and the same fit of
// the objective-perturbation learner bit for bit (its ERM rows read from
// the whole's instead of being built from X again), with repeated rows
// and a one-hot column that is column-major in the subset only.
func TestData_Subset(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 42))
	const n, d = 200, 6
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		row := X.RawRowView(i)
		row[0] = 0.3 * rng.NormFloat64() // dense
		if i%4 == 0 {
			row[1+rng.IntN(d-1)] = 0.5 // one-hot levels
		}
		y[i] = 1
		if rng.IntN(3) == 0 {
			y[i] = -1
		}
	}
	all := NewData(X, y, nil)
	var idx []int
	for i := 0; i < n; i += 4 { // every row with a level set: a column may become dense
		idx = append(idx, i, i)
	}
	for _, ix := range [][]int{idx, {}, nil, {3, 1, 2}} {
		got, want := all.Subset(ix), NewData(X, y, ix)
		if got.N() != want.N() || !slices.Equal(got.Index(), want.Index()) || !slices.Equal(got.Y(), want.Y()) {
			t.Fatalf("subset %v: N %d / %d, Y differ", ix, got.N(), want.N())
		}
		if got.N() > 0 && !mat.Equal(got.X(), want.X()) {
			t.Fatalf("subset %v: X differs", ix)
		}
		gr, wr := got.ERM(), want.ERM()
		if gr.N() != wr.N() || gr.NNZ() != wr.NNZ() || gr.MaxRowNorm() != wr.MaxRowNorm() {
			t.Fatalf("subset %v: ERM rows %d/%d, NNZ %d/%d", ix, gr.N(), wr.N(), gr.NNZ(), wr.NNZ())
		}
		if got.N() == 0 {
			continue
		}
		lv := Level{Epsilon: 1}
		mg, _, errG := ObjectivePerturbation{}.Fit(context.Background(), randx.New(7, "subset"), got, 0.01, lv)
		mw, _, errW := ObjectivePerturbation{}.Fit(context.Background(), randx.New(7, "subset"), want, 0.01, lv)
		if errG != nil || errW != nil {
			t.Fatal(errG, errW)
		}
		a, b := mg.Margins(nil, all), mw.Margins(nil, all)
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Fatalf("subset %v: the fits differ (margin %d: %v vs %v)", ix, i, a[i], b[i])
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a Subset of a subset did not panic")
		}
	}()
	all.Subset(idx).Subset([]int{0})
}
