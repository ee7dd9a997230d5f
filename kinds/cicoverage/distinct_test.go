package cicoverage

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/erm"
)

// TestDistinct checks the storage of a sample as its distinct records: rec
// maps every record to an identical row, full has the objective, gradient
// and Hessian of the records themselves, and a bootstrap replicate drawn
// by the resampler has the weights of the same record draws counted one by
// one.
func TestDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, d = 2000, 4
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		// Few levels per column, so that records repeat.
		for j := 0; j < d-1; j++ {
			x.Set(i, j, float64(rng.IntN(3))/3)
		}
		x.Set(i, d-1, 1)
		y[i] = float64(2*rng.IntN(2) - 1)
	}
	s := distinct(x, y)
	if s.base.N() >= n/4 || s.base.Weighted() {
		t.Fatalf("%d distinct rows of %d (weighted %v): want far fewer, unweighted", s.base.N(), n, s.base.Weighted())
	}
	dense := func(r *erm.Rows, i int) []float64 {
		row := make([]float64, d)
		cols, vals := r.Row(i)
		for k, j := range cols {
			row[j] = vals[k]
		}
		return row
	}
	for i, u := range s.rec {
		if !floats.Equal(dense(s.base, int(u)), x.RawRowView(i)) || s.base.Y()[u] != y[i] {
			t.Fatalf("record %d maps to row %d, which differs", i, u)
		}
	}
	records := erm.NewRows(x, y, nil)
	w := []float64{0.3, -0.7, 1.1, 0.2}
	for _, loss := range []erm.Loss{erm.Logistic{}, erm.Huber{H: 1}} {
		obj := erm.Objective{Loss: loss, Lambda: 0.002}
		if a, b := obj.Value(s.full, w), obj.Value(records, w); math.Abs(a-b) > 1e-12 {
			t.Errorf("%s: value %v, records %v", loss.Name(), a, b)
		}
		if a, b := obj.Grad(nil, s.full, w), obj.Grad(nil, records, w); !floats.EqualApprox(a, b, 1e-12) {
			t.Errorf("%s: gradient %v, records %v", loss.Name(), a, b)
		}
		if a, b := obj.Hessian(nil, s.full, w), obj.Hessian(nil, records, w); !mat.EqualApprox(a, b, 1e-12) {
			t.Errorf("%s: Hessian differs from the records'", loss.Name())
		}
	}
	// The same stream, counted per record (the path of a method that reads
	// the records; a multinomial draw would give other numbers): the
	// replicate's objective.
	rep := newResampler(s, true).draw(rand.New(rand.NewPCG(5, 6)))
	draws := rand.New(rand.NewPCG(5, 6))
	counts := make([]float64, n)
	for i := 0; i < n; i++ {
		counts[draws.IntN(n)]++
	}
	want := records.WithWeights(counts)
	if rep.SumWeights() != n {
		t.Fatalf("replicate has total weight %v, want %d", rep.SumWeights(), n)
	}
	obj := erm.Objective{Loss: erm.Logistic{}, Lambda: 0.002}
	if a, b := obj.Grad(nil, rep, w), obj.Grad(nil, want, w); !floats.EqualApprox(a, b, 1e-12) {
		t.Errorf("replicate gradient %v, record-level %v", a, b)
	}
}
