package noisered

import (
	"math"
	"testing"
)

// The benchmark size is the covariance perturbation of Ligett et al. 2017
// (Algorithm 3) on the Twitter data: p = 77 features, so (XᵀX, Xᵀy) has
// p² + p = 6006 coordinates, and T = 1000 levels on Geometric(1e-5, 70,
// 1000), the grid of the experiments. The searches stop around t ≈ 500–650,
// hence the 600-step walk.
const (
	benchP    = 77
	benchN    = benchP*benchP + benchP
	benchT    = 1000
	benchWalk = 600
)

func benchSetup(b *testing.B) (v, eps []float64) {
	b.Helper()
	eps, err := Geometric(1e-5, 70, benchT)
	if err != nil {
		b.Fatal(err)
	}
	v = make([]float64, benchN)
	for i := range v {
		v[i] = math.Sin(float64(i)) // bounded, not exactly representable sums
	}
	return v, eps
}

// BenchmarkNew draws the whole chain; events/op is Events().
func BenchmarkNew(b *testing.B) {
	v, eps := benchSetup(b)
	rng := newRNG(1, "bench/new")
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		c, err := New(rng, v, 2, eps)
		if err != nil {
			b.Fatal(err)
		}
		events += c.Events()
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}

// BenchmarkWalk walks a chain through its first 600 steps; changes/op
// counts the entries of Changed after t = 1. New is not timed: one chain is
// drawn and rewound to before step 1 for each iteration.
func BenchmarkWalk(b *testing.B) {
	v, eps := benchSetup(b)
	c, err := New(newRNG(1, "bench/walk"), v, 2, eps)
	if err != nil {
		b.Fatal(err)
	}
	v1 := append([]float64(nil), c.cur...) // v̂_1
	b.ReportAllocs()
	changes := 0
	for b.Loop() {
		copy(c.cur, v1)
		c.t = 0
		for c.Next() && c.Step() < benchWalk {
			if c.Step() > 1 {
				changes += len(c.Changed())
			}
		}
	}
	b.ReportMetric(float64(changes)/float64(b.N), "changes/op")
}

// BenchmarkReduce is the literal Algorithm 1 at the same size, for
// comparison (T·len(v) = 6·10⁶ uniform draws and stored values).
func BenchmarkReduce(b *testing.B) {
	v, eps := benchSetup(b)
	rng := newRNG(1, "bench/reduce")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Reduce(rng, v, 2, eps); err != nil {
			b.Fatal(err)
		}
	}
}
