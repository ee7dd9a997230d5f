package dpci

import (
	"context"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/randx"
)

// BenchmarkBootstrapFit times one bootstrap refit as the experiment layer
// runs it, at n = 450,000, d = 11, on dense synthetic rows in the unit
// ball (planted logistic labels, c = 1e-3) that never repeat — the worst
// case: the 450,000 KDD-99 records of Table 2 at d = 10 are 2,489 distinct
// rows, on which the experiment fits instead. Sub-benchmarks:
//
//   - resample: n draws with replacement counted per row and the replicate
//     compacted to the ≈ 63 % of rows drawn ([erm.Rows.Resample]);
//   - fit: the non-private fit of the replicate warm-started at the
//     full-data θ̂; it reports passes = its time over read-pass's;
//   - read-pass: one streaming read of as many bytes as one pass of the
//     solver's kernels reads over the replicate (its d columns, labels and
//     weights: (d+2)·8 bytes a row), the memory-bandwidth bound of a pass.
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
	counts := make([]int32, n)
	draw := func(dst *erm.Rows) *erm.Rows {
		clear(counts)
		for i := 0; i < n; i++ {
			counts[rng.IntN(n)]++
		}
		return rows.Resample(dst, counts)
	}
	b.Run("resample", func(b *testing.B) {
		var dst erm.Rows
		for b.Loop() {
			draw(&dst)
		}
	})
	boots := make([]*erm.Rows, 4)
	for k := range boots {
		boots[k] = draw(nil)
	}
	buf := make([]float64, (d+2)*boots[0].N())
	for i := range buf {
		buf[i] = float64(i % 7)
	}
	var pass float64
	b.Run("read-pass", func(b *testing.B) {
		var s float64
		for b.Loop() {
			s += floats.Sum(buf)
		}
		pass = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		if s == 0 {
			b.Fatal("empty sum")
		}
		b.ReportMetric(float64(8*len(buf))/pass, "bytes/ns")
	})
	b.Run("fit", func(b *testing.B) {
		ws := new(erm.Workspace)
		iters := 0
		for i := 0; b.Loop(); i++ {
			res, err := FitNonPrivate(boots[i%len(boots)], p, erm.FitOptions{Init: full.W, Work: ws})
			if err != nil || res.Status != erm.StatusConverged {
				b.Fatalf("fit: %v %s", err, res.Status)
			}
			iters += res.Iter
		}
		perFit := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		if pass > 0 {
			b.ReportMetric(perFit/pass, "passes")
		}
		b.ReportMetric(float64(iters)/float64(b.N), "newton-steps")
	})
}

// BenchmarkMCQuantiles times the quantile selection of the Monte Carlo
// intervals (mcInterval: per coordinate the α/2 and 1 − α/2 empirical
// quantiles of m sampled coefficients, Wang, Kifer and Lee 2019,
// Algorithms 2 and 4) at m = 10,000 (the paper profile's) for α = 0.05:
// select is empiricalQuantiles, sort the stat.Quantile on sorted samples
// it replaced. Each iteration restores one of 64 unsorted samples first (a
// copy of 80 kB, included in both): repeating one sample let the branch
// predictor learn it (15 µs a selection then, 67 µs on fresh values).
func BenchmarkMCQuantiles(b *testing.B) {
	const m, samples = 10000, 64
	rng := randx.New(5, "dpci", "bench", "quantiles")
	xs := make([][]float64, samples)
	for k := range xs {
		xs[k] = make([]float64, m)
		for i := range xs[k] {
			xs[k][i] = rng.NormFloat64()
		}
	}
	work := make([]float64, m)
	b.Run("select", func(b *testing.B) {
		b.ReportAllocs()
		k := 0
		for b.Loop() {
			copy(work, xs[k%samples])
			k++
			empiricalQuantiles(work, 0.025, 0.975)
		}
	})
	b.Run("sort", func(b *testing.B) {
		b.ReportAllocs()
		k := 0
		for b.Loop() {
			copy(work, xs[k%samples])
			k++
			slices.Sort(work)
			stat.Quantile(0.025, stat.Empirical, work, nil)
			stat.Quantile(0.975, stat.Empirical, work, nil)
		}
	})
}

// BenchmarkMCInterval times the Monte Carlo interval of Algorithm 3 (Wang,
// Kifer and Lee 2019, lines 7–15: ObjPertCI) at the paper profile's m =
// 10,000 and Table 3's d = 11: the draws (fixed by the stream), the two
// matrix-vector products per draw and the quantiles ("obj"); and that of
// Algorithm 5 under DP (OutPertCI: one product per draw, "output-dp").
func BenchmarkMCInterval(b *testing.B) {
	const d, m = 11, 10000
	rng := randx.New(27, "dpci", "bench", "mc")
	h := mat.NewSymDense(d, nil)
	s := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		h.SetSym(i, i, 1+rng.Float64())
		s.SetSym(i, i, 0.5+rng.Float64())
		for j := i + 1; j < d; j++ {
			h.SetSym(i, j, 0.01*rng.NormFloat64())
			s.SetSym(i, j, 0.01*rng.NormFloat64())
		}
	}
	theta := make([]float64, d)
	b.Run("obj", func(b *testing.B) {
		for b.Loop() {
			if _, err := ObjPertCI(context.Background(), rng, theta, h, s, 30162, 0.4, 0.05, m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("output-dp", func(b *testing.B) {
		for b.Loop() {
			if _, err := OutPertCI(context.Background(), rng, theta, h, s, 30162, 0.001, 0.5, DP, 0.05, m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTailQuantiles times the 2.5 % and 97.5 % quantiles of one
// coordinate's m = 10,000 Monte Carlo values, on fresh normal samples
// (64 of them in turn, each copied before the call, as the selection
// reorders it), so the branches of the selection are not learnt.
func BenchmarkTailQuantiles(b *testing.B) {
	const m, k = 10000, 64
	rng := randx.New(29, "dpci", "bench", "tails")
	src := make([][]float64, k)
	for i := range src {
		src[i] = make([]float64, m)
		for j := range src[i] {
			src[i][j] = rng.NormFloat64()
		}
	}
	x := make([]float64, m)
	i := 0
	for b.Loop() {
		copy(x, src[i%k])
		empiricalQuantiles(x, 0.025, 0.975)
		i++
	}
}
