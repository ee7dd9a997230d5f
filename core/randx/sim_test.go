package randx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprepro/dprepro/internal/stattest"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestSim_Xoshiro256PlusPlus checks the generator against the first
// outputs of the reference xoshiro256++ from the state {1, 2, 3, 4},
// worked by hand from its definition (rotl(s0 + s3, 23) + s0, then the
// state update).
func TestSim_Xoshiro256PlusPlus(t *testing.T) {
	s := &Sim{1, 2, 3, 4}
	for i, want := range []uint64{41943041, 58720359} {
		if got := s.Uint64(); got != want {
			t.Errorf("output %d = %d, want %d", i+1, got, want)
		}
	}
}

func TestNewSim_Deterministic(t *testing.T) {
	a, b := NewSim(New(7, "mc")), NewSim(New(7, "mc"))
	c := NewSim(New(7, "other"))
	same := true
	for i := 0; i < 100; i++ {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		if x != y {
			t.Fatalf("draw %d: two Sims of one stream differ", i)
		}
		same = same && x == z
	}
	if same {
		t.Error("Sims of different streams draw the same words")
	}
	if NewSim(rand.New(zeroSource{})).Uint64() == 0 {
		t.Error("a Sim seeded with four zero words is stuck at zero")
	}
}

type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

// TestSim_Norm checks the ziggurat's normals: the Kolmogorov–Smirnov
// distance to Φ (DKW bound), the counts in 40 bins of width 0.25 over
// [−5, 5] (the rectangles, the wedges of every layer and the tail:
// binomial standard errors), the tail beyond the base layer's edge zigR
// alone, and the moments 1–4 (their standard errors at N draws).
func TestSim_Norm(t *testing.T) {
	const n = 2_000_000
	for _, seed := range stattest.Seeds(11) {
		s := NewSim(New(seed, "norm"))
		x := make([]float64, n)
		for i := range x[:n/2] {
			x[i] = s.Norm()
		}
		s.NormFill(x[n/2:])
		const checks = 40 + 1 + 4 + 1
		z := stattest.ZCrit(checks)
		phi := distuv.UnitNormal.CDF
		for b := 0; b < 40; b++ {
			lo, hi := -5+0.25*float64(b), -5+0.25*float64(b+1)
			c := 0
			for _, v := range x {
				if v >= lo && v < hi {
					c++
				}
			}
			stattest.CheckProportion(t, fmt.Sprintf("seed %d: P(%.2f ≤ Z < %.2f)", seed, lo, hi), c, n, phi(hi)-phi(lo), z)
		}
		tail := 0
		for _, v := range x {
			if math.Abs(v) > zigR {
				tail++
			}
		}
		stattest.CheckProportion(t, fmt.Sprintf("seed %d: P(|Z| > %v)", seed, zigR), tail, n, math.Erfc(zigR/math.Sqrt2), z)
		var m [5]float64
		for _, v := range x {
			p := 1.0
			for k := 1; k <= 4; k++ {
				p *= v
				m[k] += p
			}
		}
		// Moments of N(0,1): 0, 1, 0, 3; variances of the sample moments
		// E[Z^2k] − E[Z^k]²: 1, 2, 15, 96.
		for k, mv := range [][2]float64{{0, 1}, {1, 2}, {0, 15}, {3, 96}} {
			stattest.CheckWithin(t, fmt.Sprintf("seed %d: E[Z^%d]", seed, k+1), m[k+1]/n, mv[0], z*math.Sqrt(mv[1]/n))
		}
		if d, c := stattest.KS(x, phi), stattest.DKWCrit(n, checks); d > c {
			t.Errorf("seed %d: KS distance to Φ = %.3g > %.3g", seed, d, c)
		}
	}
}

// TestSim_Gamma checks Marsaglia–Tsang's gammas at the shapes the
// intervals use (1 and d + 1 = 2, 11) and a large one: the KS distance
// to the Gamma CDF (the regularized incomplete gamma function; DKW bound) and the mean (its standard error).
func TestSim_Gamma(t *testing.T) {
	const n = 200_000
	cases := []struct{ a, b float64 }{{1, 1}, {2, 0.5}, {11, 3}, {101, 40}}
	checks := 2 * len(cases)
	z := stattest.ZCrit(checks)
	for _, seed := range stattest.Seeds(12) {
		s := NewSim(New(seed, "gamma"))
		for _, c := range cases {
			x := make([]float64, n)
			sum := 0.0
			for i := range x {
				x[i] = s.Gamma(c.a, c.b)
				sum += x[i]
			}
			stattest.CheckWithin(t, fmt.Sprintf("seed %d: mean of Gamma(%v, rate %v)", seed, c.a, c.b), sum/n, c.a/c.b, z*math.Sqrt(c.a)/c.b/math.Sqrt(n))
			cdf := func(x float64) float64 { return mathext.GammaIncReg(c.a, c.b*x) } // Gamma(a, rate b)
			if d, crit := stattest.KS(x, cdf), stattest.DKWCrit(n, checks); d > crit {
				t.Errorf("seed %d: Gamma(%v, rate %v): KS distance %.3g > %.3g", seed, c.a, c.b, d, crit)
			}
		}
	}
}

// TestSim_SphericalLaplace checks the density ∝ exp(−γ‖b‖): the norm is
// Gamma(d, γ) (KS), each coordinate has mean 0 and E[b_i²] = (d+1)/γ², and
// the direction is uniform (the first coordinate of b/‖b‖ has the
// law of a coordinate of a uniform point on the sphere: E[u₁²] = 1/d, and
// its sign is fair).
func TestSim_SphericalLaplace(t *testing.T) {
	const n = 200_000
	for _, seed := range stattest.Seeds(13) {
		s := NewSim(New(seed, "spherical"))
		for _, c := range []struct {
			d     int
			gamma float64
		}{{1, 2}, {11, 0.7}} {
			const checks = 4
			z := stattest.ZCrit(2 * checks)
			b := make([]float64, c.d)
			norms := make([]float64, n)
			var m1, m2, u2 float64
			pos := 0
			for i := range norms {
				s.SphericalLaplace(b, c.gamma)
				ss := 0.0
				for _, v := range b {
					ss += v * v
				}
				norms[i] = math.Sqrt(ss)
				m1 += b[0]
				m2 += b[0] * b[0]
				u2 += b[0] * b[0] / ss
				if b[0] > 0 {
					pos++
				}
			}
			d := float64(c.d)
			what := fmt.Sprintf("seed %d, d = %d", seed, c.d)
			e2 := (d + 1) / (c.gamma * c.gamma)
			// Var b₁ = e2; Var b₁² = E[b₁⁴] − e2², E[b₁⁴] = E[r⁴]·3/(d(d+2)),
			// E[r⁴] = d(d+1)(d+2)(d+3)/γ⁴.
			e4 := (d + 1) * (d + 3) * 3 / math.Pow(c.gamma, 4)
			stattest.CheckWithin(t, what+": E[b₁]", m1/n, 0, z*math.Sqrt(e2/n))
			stattest.CheckWithin(t, what+": E[b₁²]", m2/n, e2, z*math.Sqrt((e4-e2*e2)/n))
			stattest.CheckProportion(t, what+": P(b₁ > 0)", pos, n, 0.5, z)
			if c.d > 1 {
				// E[u₁⁴] = 3/(d(d+2)).
				stattest.CheckWithin(t, what+": E[u₁²]", u2/n, 1/d, z*math.Sqrt((3/(d*(d+2))-1/(d*d))/n))
			}
			cdf := func(x float64) float64 { return mathext.GammaIncReg(d, c.gamma*x) }
			if dist, crit := stattest.KS(norms, cdf), stattest.DKWCrit(n, 2*checks); dist > crit {
				t.Errorf("%s: KS distance of ‖b‖ to Gamma(d, γ) %.3g > %.3g", what, dist, crit)
			}
		}
	}
}

// BenchmarkNorm compares a Sim's normal with *rand.Rand's over ChaCha8
// (the streams' generator), which the Monte Carlo intervals drew before.
func BenchmarkNorm(b *testing.B) {
	b.Run("sim", func(b *testing.B) {
		s, x := NewSim(New(1, "b")), 0.0
		for b.Loop() {
			x += s.Norm()
		}
		sinkF = x
	})
	b.Run("fill", func(b *testing.B) {
		s, x := NewSim(New(1, "b")), make([]float64, 11)
		for b.Loop() {
			s.NormFill(x)
		}
		sinkF = x[0]
	})
	b.Run("chacha8", func(b *testing.B) {
		r, x := New(1, "b"), 0.0
		for b.Loop() {
			x += r.NormFloat64()
		}
		sinkF = x
	})
}

var sinkF float64

// TestSim_NormFillSameDraws checks that NormFill draws what Norm draws, in
// order, through the slow paths too (2·10⁵ draws take about 2,400 of them).
func TestSim_NormFillSameDraws(t *testing.T) {
	a, b := NewSim(New(3, "fill")), NewSim(New(3, "fill"))
	x := make([]float64, 200_000)
	a.NormFill(x)
	for i, v := range x {
		if w := b.Norm(); w != v {
			t.Fatalf("draw %d: NormFill %v, Norm %v", i, v, w)
		}
	}
	if a.Uint64() != b.Uint64() {
		t.Error("the generators' states differ after the draws")
	}
}

// TestSumSquares checks the four-chain sum of squares against a plain
// loop, to rounding, at every length up to 13 (the tails of the loop).
func TestSumSquares(t *testing.T) {
	s := NewSim(New(3, "sumsq"))
	for n := 0; n <= 13; n++ {
		x := make([]float64, n)
		s.NormFill(x)
		want := 0.0
		for _, v := range x {
			want += v * v
		}
		if got := sumSquares(x); math.Abs(got-want) > 1e-14*want {
			t.Errorf("n = %d: %v, want %v", n, got, want)
		}
	}
}
