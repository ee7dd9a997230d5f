package noisered

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// gridCase is one privacy grid of the distribution tests.
type gridCase struct {
	name string
	eps  []float64
}

func gridCases(t *testing.T) []gridCase {
	return []gridCase{
		{"geometric", geometricGrid(t)},
		{"irregular", irregularGrid()},
	}
}

var impls = []string{"chain", "reduce"}

// TestMarginal_Laplace checks the marginal of Algorithm 1 ([LNRWW17]
// Theorem 2.7's Laplace mechanism at each level): v̂_t − v ~ Lap(b) i.i.d.
// over coordinates with b = Δ/ε_t. For n coordinates of one run (independent
// by construction) and each of 5 levels it checks, with z = zCrit(20) ≈ 5.03
// (20 checks):
//
//	mean         0,    tol z·b·√(2/n)   (Var X  = 2b²)
//	mean |X|     b,    tol z·b/√n       (|X| ~ Exp(b), Var = b²)
//	mean X²      2b²,  tol z·b²·√(20/n) (E X⁴ = 24b⁴, Var X² = 20b⁴)
//	KS vs Lap(b) ≤ dkwCrit(n, 20)        (DKW, exact for every n)
//
// The moment checks use the normal approximation; the mean of X² is the
// most skewed (skewness 6.6/√n ≈ 0.04 at n = 30,000).
func TestMarginal_Laplace(t *testing.T) {
	t.Parallel()
	const (
		n      = 30000
		delta  = 2.0
		checks = 20
	)
	z := zCrit(checks)
	v := testVector(n)
	for _, impl := range impls {
		for _, g := range gridCases(t) {
			for _, seed := range testSeeds(11) {
				t.Run(fmt.Sprintf("%s/%s/seed=%d", impl, g.name, seed), func(t *testing.T) {
					t.Parallel()
					p := paths(t, impl, newRNG(seed, "marginal/"+impl+"/"+g.name), v, delta, g.eps)
					T := len(g.eps)
					for _, lvl := range []int{1, T / 4, T / 2, 3 * T / 4, T} {
						b := delta / g.eps[lvl-1]
						x := make([]float64, n)
						var s1, sAbs, s2 float64
						for i := range x {
							x[i] = p[lvl-1][i] - v[i]
							s1 += x[i]
							sAbs += math.Abs(x[i])
							s2 += x[i] * x[i]
						}
						what := fmt.Sprintf("t=%d (b=%s)", lvl, formatFloat(b))
						checkWithin(t, what+": mean", s1/n, 0, z*b*math.Sqrt(2.0/n))
						checkWithin(t, what+": mean |X|", sAbs/n, b, z*b/math.Sqrt(n))
						checkWithin(t, what+": mean X²", s2/n, 2*b*b, z*b*b*math.Sqrt(20.0/n))
						lap := distuv.Laplace{Mu: 0, Scale: b} // lint:nosrc (CDF only)
						if d, c := ksStat(x, lap.CDF), dkwCrit(n, checks); d > c {
							t.Errorf("%s: KS distance to Lap(b) = %.4g > %.4g", what, d, c)
						}
					}
				})
			}
		}
	}
}

// TestKeep_Probability checks the copy step of Algorithm 1: for every
// t < T, P(v̂_t = v̂_{t+1}) = (ε_t/ε_{t+1})² per coordinate, over n
// independent coordinates: binomial, tol z·√(q(1−q)/n) with z = zCrit(T−1)
// (T−1 checks: 5.02 for T = 20, 5.20 for T = 50). Equality is in the
// bits; an add absorbed by rounding would count as a copy, which at these
// scales (Δ/ε ≥ 4.6·10⁻³ against |v| ≤ 3.5) has probability < 10⁻¹¹.
func TestKeep_Probability(t *testing.T) {
	t.Parallel()
	const (
		n     = 30000
		delta = 1.0
	)
	v := testVector(n)
	for _, impl := range impls {
		for _, g := range gridCases(t) {
			for _, seed := range testSeeds(12) {
				t.Run(fmt.Sprintf("%s/%s/seed=%d", impl, g.name, seed), func(t *testing.T) {
					t.Parallel()
					p := paths(t, impl, newRNG(seed, "keep/"+impl+"/"+g.name), v, delta, g.eps)
					T := len(g.eps)
					z := zCrit(T - 1)
					for lvl := 1; lvl < T; lvl++ {
						kept := 0
						for i := range n {
							if same(p[lvl-1][i], p[lvl][i]) {
								kept++
							}
						}
						r := g.eps[lvl-1] / g.eps[lvl]
						checkProportion(t, fmt.Sprintf("P(v̂_%d = v̂_%d)", lvl, lvl+1), kept, n, r*r, z)
					}
				})
			}
		}
	}
}

// TestIndependence_CoordinatesAndSteps checks the independence structure of
// Algorithm 1 on the irregular grid (keep probabilities 0.1…0.9), with n
// coordinates split into m = n/2 disjoint pairs (2j, 2j+1):
//
//   - across coordinates, at each step t < T: the change indicators
//     1{v̂_t ≠ v̂_{t+1}}, the increments v̂_t − v̂_{t+1} and their absolute
//     values are uncorrelated within pairs (19·3 checks), and so is the
//     total noise v̂_1 − v (1 check);
//   - across steps, within a coordinate: the change indicators at steps t
//     and t+1, and at t and t+2, are uncorrelated over the n coordinates
//     (18 + 17 checks), which the event sampler's restart must preserve.
//
// Under independence √m·r → N(0, 1) for the sample correlation r of m pairs
// (finite fourth moments), so |r| ≤ z/√m with z = zCrit(93) ≈ 5.31 (93
// checks). It also checks
// that no step changes all coordinates or none.
func TestIndependence_CoordinatesAndSteps(t *testing.T) {
	t.Parallel()
	const (
		n     = 40000
		m     = n / 2
		delta = 1.0
	)
	eps := irregularGrid()
	T := len(eps)
	checks := 3*(T-1) + 1 + (T - 2) + (T - 3)
	z := zCrit(checks)
	v := testVector(n)
	for _, impl := range impls {
		for _, seed := range testSeeds(13) {
			t.Run(fmt.Sprintf("%s/seed=%d", impl, seed), func(t *testing.T) {
				t.Parallel()
				p := paths(t, impl, newRNG(seed, "indep/"+impl), v, delta, eps)
				// ind[t][i] = 1 when coordinate i changes between t and t+1.
				ind := make([][]float64, T-1)
				a, b := make([]float64, m), make([]float64, m)
				ia, ib := make([]float64, m), make([]float64, m)
				for lvl := 0; lvl+1 < T; lvl++ {
					ind[lvl] = make([]float64, n)
					nChanged := 0
					for i := range n {
						if !same(p[lvl][i], p[lvl+1][i]) {
							ind[lvl][i] = 1
							nChanged++
						}
					}
					if nChanged == 0 || nChanged == n {
						t.Errorf("step %d: %d of %d coordinates changed", lvl+1, nChanged, n)
					}
					for j := range m {
						ia[j], ib[j] = ind[lvl][2*j], ind[lvl][2*j+1]
						a[j] = p[lvl][2*j] - p[lvl+1][2*j]
						b[j] = p[lvl][2*j+1] - p[lvl+1][2*j+1]
					}
					tol := z / math.Sqrt(m)
					checkWithin(t, fmt.Sprintf("step %d: corr(change_2j, change_2j+1)", lvl+1), corr(ia, ib), 0, tol)
					checkWithin(t, fmt.Sprintf("step %d: corr(increment_2j, increment_2j+1)", lvl+1), corr(a, b), 0, tol)
					for j := range m {
						a[j], b[j] = math.Abs(a[j]), math.Abs(b[j])
					}
					checkWithin(t, fmt.Sprintf("step %d: corr(|increment_2j|, |increment_2j+1|)", lvl+1), corr(a, b), 0, tol)
				}
				for j := range m {
					a[j] = p[0][2*j] - v[2*j]
					b[j] = p[0][2*j+1] - v[2*j+1]
				}
				checkWithin(t, "corr(noise_2j, noise_2j+1) at t=1", corr(a, b), 0, z/math.Sqrt(m))
				for lag := 1; lag <= 2; lag++ {
					for lvl := 0; lvl+lag+1 < T; lvl++ {
						checkWithin(t, fmt.Sprintf("corr(change at %d, change at %d)", lvl+1, lvl+lag+1),
							corr(ind[lvl], ind[lvl+lag]), 0, z/math.Sqrt(n))
					}
				}
			})
		}
	}
}

// TestAgreement_ChainReduce compares the law of the number of adds along a
// coordinate's path (the number of distinct values minus one) between Chain,
// Reduce and the exact Poisson-binomial law (success probabilities
// a_t = 1 − (ε_t/ε_{t+1})², t < T), with n coordinates per implementation.
// Five checks per grid, each at level familyAlpha/5:
//
//   - Chain vs exact and Reduce vs exact: KS ≤ dkwCrit(n, 5) (DKW holds for
//     discrete laws);
//   - Chain vs Reduce, two-sample KS ≤ twoSampleCrit(n, 5) (exact
//     finite-sample bound for equal sample sizes);
//   - mean add count of each within z·√(Σ a_t(1−a_t)/n) of Σ a_t,
//     z = zCrit(5).
func TestAgreement_ChainReduce(t *testing.T) {
	t.Parallel()
	const (
		n      = 30000
		delta  = 1.0
		checks = 5
	)
	v := testVector(n)
	for _, g := range gridCases(t) {
		for _, seed := range testSeeds(14) {
			t.Run(fmt.Sprintf("%s/seed=%d", g.name, seed), func(t *testing.T) {
				t.Parallel()
				exact := addCountPMF(g.eps)
				var mean, variance float64
				for k := 0; k+1 < len(g.eps); k++ {
					r := g.eps[k] / g.eps[k+1]
					a := 1 - r*r
					mean += a
					variance += a * (1 - a)
				}
				pmf := map[string][]float64{}
				for _, impl := range impls {
					c := numChanges(paths(t, impl, newRNG(seed, "agree/"+impl+"/"+g.name), v, delta, g.eps))
					pmf[impl] = empiricalPMF(c)
					if d, crit := discreteKS(pmf[impl], exact), dkwCrit(n, checks); d > crit {
						t.Errorf("%s: KS distance of the add count to the exact law = %.4g > %.4g", impl, d, crit)
					}
					s := 0
					for _, ci := range c {
						s += ci
					}
					checkWithin(t, impl+": mean add count", float64(s)/n, mean, zCrit(checks)*math.Sqrt(variance/n))
				}
				if d, crit := discreteKS(pmf["chain"], pmf["reduce"]), twoSampleCrit(n, checks); d > crit {
					t.Errorf("two-sample KS distance chain vs reduce = %.4g > %.4g", d, crit)
				}
			})
		}
	}
}
