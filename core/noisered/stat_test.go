package noisered

import (
	"flag"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dprepro/dprepro/core/randx"
)

// Randomized tests in this package use a fixed seed and a tolerance from
// theory such that a test fails for a random seed with probability at most
// familyAlpha. A test that makes k checks splits familyAlpha over them
// (Bonferroni, valid under any dependence between the checks) and uses
// zCrit(k) standard errors for normal-approximation checks; zCrit(1) ≈ 4.42.
//
// The -stat.seeds=N flag reruns every randomized test with N extra seeds, to
// audit the calibration (expect about N·familyAlpha failures per test).
var statSeeds = flag.Int("stat.seeds", 0, "extra seeds for each randomized test (calibration audit)")

// familyAlpha is the per-test false-failure probability for any seed.
const familyAlpha = 1e-5

// zCrit returns the two-sided normal critical value for k simultaneous checks
// at family-wise level familyAlpha: Φ⁻¹(1 − familyAlpha/(2k)).
func zCrit(k int) float64 {
	return distuv.UnitNormal.Quantile(1 - familyAlpha/(2*float64(k)))
}

// dkwCrit returns the critical value of a one-sample Kolmogorov–Smirnov
// statistic on n draws at level familyAlpha/k, from the
// Dvoretzky–Kiefer–Wolfowitz inequality with Massart's constant,
// P(sup|F_n − F| > c) ≤ 2·exp(−2nc²). The bound holds for every n and every
// F, continuous or not, so no asymptotics are involved.
func dkwCrit(n, k int) float64 {
	return math.Sqrt(math.Log(2*float64(k)/familyAlpha) / (2 * float64(n)))
}

// twoSampleCrit returns the critical value of the two-sample
// Kolmogorov–Smirnov statistic D for two samples of n draws each from the
// same law, at level familyAlpha/k. For a continuous law the one-sided tail
// is exact (Gnedenko–Korolyuk): P(D⁺ ≥ j/n) = C(2n, n−j)/C(2n, n) =
// ∏_{i=1..j} (1 − j/(n+i)) ≤ exp(−j²/(n+j)), so
// P(D ≥ d) ≤ 2·exp(−n·d²/(1+d)); solving for d gives
// d = (L + √(L² + 4nL))/(2n) with L = ln(2k/familyAlpha). For a discrete
// law, D is a supremum over a subset of the thresholds of the continuous
// case (X = F⁻¹(U)), so the bound still holds.
func twoSampleCrit(n, k int) float64 {
	l := math.Log(2 * float64(k) / familyAlpha)
	nf := float64(n)
	return (l + math.Sqrt(l*l+4*nf*l)) / (2 * nf)
}

// testSeeds returns the fixed seed followed by the -stat.seeds extra seeds.
func testSeeds(fixed uint64) []uint64 {
	s := []uint64{fixed}
	for i := 1; i <= *statSeeds; i++ {
		s = append(s, fixed^(uint64(i)*0x9e3779b97f4a7c15))
	}
	return s
}

// newRNG returns the test stream for (seed, name).
func newRNG(seed uint64, name string) *rand.Rand {
	return randx.New(seed, "noisered-test", name)
}

// checkWithin reports an error when |got − want| > tol.
func checkWithin(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol) {
		t.Errorf("%s = %.6g, want %.6g ± %.3g (off by %.2f tolerances)", what, got, want, tol, math.Abs(got-want)/tol)
	}
}

// checkProportion checks that count/n is within z binomial standard errors
// of p: |count/n − p| ≤ z·√(p(1−p)/n) (normal approximation, n·p(1−p) ≫ 1).
func checkProportion(t *testing.T, what string, count, n int, p, z float64) {
	t.Helper()
	checkWithin(t, what, float64(count)/float64(n), p, z*math.Sqrt(p*(1-p)/float64(n)))
}

// ksStat returns sup_x |F_n(x) − cdf(x)| for the sample x (sorted in
// place), evaluated on both sides of every jump of F_n.
func ksStat(x []float64, cdf func(float64) float64) float64 {
	sort.Float64s(x)
	n := float64(len(x))
	d := 0.0
	for i, xi := range x {
		f := cdf(xi)
		d = math.Max(d, math.Max(float64(i+1)/n-f, f-float64(i)/n))
	}
	return d
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
