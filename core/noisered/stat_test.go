package noisered

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/dprepro/dprepro/internal/stattest"

	"github.com/dprepro/dprepro/core/randx"
)

// Randomized tests in this package follow internal/stattest: a fixed seed,
// tolerances from theory at family-wise level stattest.FamilyAlpha, and the
// -stat.seeds audit flag.
var (
	zCrit           = stattest.ZCrit
	dkwCrit         = stattest.DKWCrit
	twoSampleCrit   = stattest.TwoSampleCrit
	testSeeds       = stattest.Seeds
	checkWithin     = stattest.CheckWithin
	checkProportion = stattest.CheckProportion
	ksStat          = stattest.KS
)

const familyAlpha = stattest.FamilyAlpha

// newRNG returns the test stream for (seed, name).
func newRNG(seed uint64, name string) *rand.Rand {
	return randx.New(seed, "noisered-test", name)
}

// discreteKS returns sup_k |F_a(k) − F_b(k)| for two distributions on
// {0, 1, …} given by their probability mass functions (missing entries are
// 0). For a discrete law the supremum over x is attained at the integers.
func discreteKS(pa, pb []float64) float64 {
	ca, cb, d := 0.0, 0.0, 0.0
	for k := range max(len(pa), len(pb)) {
		if k < len(pa) {
			ca += pa[k]
		}
		if k < len(pb) {
			cb += pb[k]
		}
		d = math.Max(d, math.Abs(ca-cb))
	}
	return d
}

// empiricalPMF returns the empirical mass function of non-negative counts.
func empiricalPMF(counts []int) []float64 {
	m := 0
	for _, c := range counts {
		m = max(m, c)
	}
	p := make([]float64, m+1)
	for _, c := range counts {
		p[c] += 1 / float64(len(counts))
	}
	return p
}

// corr returns the Pearson correlation of x and y (population moments). It
// returns 0 when either is constant.
func corr(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// formatFloat formats v for test names and messages.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// irregularGrid returns a 20-level grid whose keep probabilities
// (ε_t/ε_{t+1})² are the listed q_t, all in [0.1, 0.9] and deliberately
// uneven, so that an off-by-one in step or scale indexing shows (a geometric
// grid has one keep probability for every step and hides such errors).
func irregularGrid() []float64 {
	q := []float64{0.5, 0.9, 0.2, 0.75, 0.1, 0.6, 0.85, 0.3, 0.45, 0.8,
		0.15, 0.7, 0.4, 0.9, 0.25, 0.65, 0.35, 0.55, 0.12}
	eps := []float64{0.05}
	for _, qt := range q {
		eps = append(eps, eps[len(eps)-1]/math.Sqrt(qt))
	}
	return eps
}

// geometricGrid returns Geometric(0.01, 10, 50), the grid of the marginal
// tests (scales Δ/ε from 100Δ down to 0.1Δ).
func geometricGrid(t testing.TB) []float64 {
	t.Helper()
	eps, err := Geometric(0.01, 10, 50)
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

// testVector returns n exactly representable private values in [−3.5, 2.5],
// varying by coordinate so that centring errors show.
func testVector(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i%7) - 3.5
	}
	return v
}

// paths returns the T levels of one run of impl as T slices (element t−1 is
// v̂_t): Reduce's output, or a Chain walked forward and copied.
func paths(t *testing.T, impl string, rng *rand.Rand, v []float64, delta float64, eps []float64) [][]float64 {
	t.Helper()
	switch impl {
	case "reduce":
		out, err := Reduce(rng, v, delta, eps)
		if err != nil {
			t.Fatal(err)
		}
		return out
	case "chain":
		c, err := New(rng, v, delta, eps)
		if err != nil {
			t.Fatal(err)
		}
		out := make([][]float64, 0, len(eps))
		for c.Next() {
			out = append(out, append([]float64(nil), c.Value()...))
		}
		if len(out) != len(eps) {
			t.Fatalf("chain gave %d levels, want %d", len(out), len(eps))
		}
		return out
	}
	t.Fatalf("unknown implementation %q", impl)
	return nil
}

// same reports whether a and b have the same bits (so +0 ≠ −0).
func same(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// numChanges returns, per coordinate, the number of steps t < T at which
// v̂_t differs from v̂_{t+1}: the number of adds along the path.
func numChanges(p [][]float64) []int {
	n := len(p[0])
	c := make([]int, n)
	for t := 0; t+1 < len(p); t++ {
		for i := range n {
			if !same(p[t][i], p[t+1][i]) {
				c[i]++
			}
		}
	}
	return c
}

// addCountPMF returns the exact law of the number of adds along one
// coordinate's path: a Poisson-binomial with success probabilities
// 1 − (ε_t/ε_{t+1})², t = 1…T−1 (the decisions of Algorithm 1 are
// independent), by the usual O(T²) convolution.
func addCountPMF(eps []float64) []float64 {
	p := []float64{1}
	for t := 0; t+1 < len(eps); t++ {
		r := eps[t] / eps[t+1]
		a := 1 - r*r
		next := make([]float64, len(p)+1)
		for k, pk := range p {
			next[k] += pk * (1 - a)
			next[k+1] += pk * a
		}
		p = next
	}
	return p
}
