package dpci

import (
	"testing"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/randx"
)

// BenchmarkBootstrapFit times one weighted (bootstrap by multiplicity),
// warm-started non-private fit at n = 450,000, d = 11 (dense synthetic rows
// in the unit ball, planted logistic labels, c = 1e-3), as run per
// bootstrap replicate by the experiment layer. The warm start is the
// full-data θ̂; four bootstrap weight vectors are built outside the timer
// and cycled.
func BenchmarkBootstrapFit(b *testing.B) {
	const n, d = 450000, 11
	rng := randx.New(11, "dpci", "bench")
	thetaStar := make([]float64, d)
	for j := range thetaStar {
		thetaStar[j] = rng.NormFloat64()
	}
	X, y := plantedData(rng, n, thetaStar)
	rows := erm.NewRows(X, y, nil)
	p := Params{Model: LR, C: 1e-3}
	full, err := FitNonPrivate(rows, p, erm.FitOptions{})
	if err != nil {
		b.Fatal(err)
	}
	boots := make([]*erm.Rows, 4)
	for k := range boots {
		w := make([]float64, n)
		for i := 0; i < n; i++ {
			w[rng.IntN(n)]++
		}
		boots[k] = rows.WithWeights(w)
	}
	ws := new(erm.Workspace)
	for i := 0; b.Loop(); i++ {
		res, err := FitNonPrivate(boots[i%len(boots)], p, erm.FitOptions{Init: full.W, Work: ws})
		if err != nil || res.Status != erm.StatusConverged {
			b.Fatalf("fit: %v %s", err, res.Status)
		}
	}
}
