package dpci

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// TestEmpiricalQuantiles checks the selection against stat.Quantile on
// sorted data, for sizes from 1 to 30,001 (Floyd–Rivest sampling above 600), heavy ties and the levels of
// the paper's intervals and the extremes.
func TestEmpiricalQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	levels := [][2]float64{{0.025, 0.975}, {0.05, 0.95}, {0, 1}, {0.5, 0.5}, {1e-9, 1 - 1e-9}, {0.3, 0.31}}
	for _, m := range []int{1, 2, 3, 7, 40, 501, 601, 602, 1999, 10000, 30001} {
		for _, ties := range []int{0, 1, 3, 50} {
			x := make([]float64, m)
			for i := range x {
				if ties > 0 {
					x[i] = float64(rng.IntN(ties))
				} else {
					x[i] = rng.NormFloat64()
				}
			}
			sorted := slices.Clone(x)
			slices.Sort(sorted)
			for _, l := range levels {
				lo, hi := empiricalQuantiles(slices.Clone(x), l[0], l[1])
				wlo := stat.Quantile(l[0], stat.Empirical, sorted, nil)
				whi := stat.Quantile(l[1], stat.Empirical, sorted, nil)
				if lo != wlo || hi != whi {
					t.Errorf("m = %d, ties = %d, levels %v: got (%v, %v), want (%v, %v)", m, ties, l, lo, hi, wlo, whi)
				}
			}
		}
	}
	// tailQuantiles reads its pivots off every (m/128)-th value: samples
	// whose strided values mislead it (all the largest, all the smallest,
	// infinite) must still give the order statistics.
	for _, c := range []struct {
		name   string
		stride func(i int) float64
	}{{"largest", func(i int) float64 { return 1e6 + float64(i) }}, {"smallest", func(i int) float64 { return -1e6 - float64(i) }},
		{"infinite", func(i int) float64 { return math.Inf(1 - 2*(i%2)) }},
		{"zeros of both signs", func(i int) float64 { return math.Copysign(0, float64(1-2*(i%2))) }}} {
		const m = 10000
		x := make([]float64, m)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := 0; i < 128; i++ {
			x[i*m/128] = c.stride(i)
		}
		sorted := slices.Clone(x)
		slices.Sort(sorted)
		lo, hi := empiricalQuantiles(slices.Clone(x), 0.025, 0.975)
		if wlo, whi := stat.Quantile(0.025, stat.Empirical, sorted, nil), stat.Quantile(0.975, stat.Empirical, sorted, nil); lo != wlo || hi != whi {
			t.Errorf("strided values %s: got (%v, %v), want (%v, %v)", c.name, lo, hi, wlo, whi)
		}
	}
	if lo, hi := empiricalQuantiles([]float64{1, math.NaN(), 2}, 0.1, 0.9); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("NaN input: got (%v, %v), want NaN", lo, hi)
	}
	// A NaN in a long sample, where tailQuantiles would take it: in its
	// strided sample (i = 0), in a tail copy and in the middle (the pass
	// sees it), first or last.
	for _, at := range []int{0, 1, 5000, 9999} {
		x := make([]float64, 10000)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		x[at] = math.NaN()
		if lo, hi := empiricalQuantiles(x, 0.025, 0.975); !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("NaN at %d of 10,000: got (%v, %v), want NaN", at, lo, hi)
		}
	}
	// selectBracket's own fallback: samples whose strided values give
	// pivots that do not bracket the rank.
	for _, k := range []int{0, 1, 300, 598, 599} {
		x := make([]float64, 600)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := 0; i < 64; i++ {
			x[i*600/64] = 1e6 + float64(i) // every sampled value the largest
		}
		sorted := slices.Clone(x)
		slices.Sort(sorted)
		if got := selectBracket(slices.Clone(x), k, make([]float64, 600)); got != sorted[k] {
			t.Errorf("selectBracket, misleading sample, k = %d: %v, want %v", k, got, sorted[k])
		}
	}
	for _, n := range []int{511, 512, 740, 2000} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(rng.IntN(5)) // heavy ties
		}
		sorted := slices.Clone(x)
		slices.Sort(sorted)
		for _, k := range []int{0, n / 3, n - 1} {
			if got := selectBracket(slices.Clone(x), k, make([]float64, n)); got != sorted[k] {
				t.Errorf("selectBracket, n = %d with ties, k = %d: %v, want %v", n, k, got, sorted[k])
			}
		}
	}
}
