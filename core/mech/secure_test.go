package mech

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dprepro/dprepro/internal/stattest"
)

// TestDiscreteLaplacePMF checks DiscreteLaplace(t) cell by cell against
// P(K = k) = (1 − q)/(1 + q)·q^|k|, q = e^(−1/t), for every k whose
// expected count is at least 100 (where the normal approximation behind
// CheckProportion holds), and the two tails beyond, pooled.
func TestDiscreteLaplacePMF(t *testing.T) {
	const n = 200000
	for _, seed := range stattest.Seeds(11) {
		for _, tt := range []uint64{1, 3} {
			rng := rand.New(rand.NewPCG(seed, tt))
			counts := map[int64]int{}
			for range n {
				counts[DiscreteLaplace(rng, tt)]++
			}
			q := math.Exp(-1 / float64(tt))
			norm := (1 - q) / (1 + q)
			pk := func(k int64) float64 { return norm * math.Pow(q, math.Abs(float64(k))) }
			kmax := int64(0)
			for pk(kmax+1)*n >= 100 {
				kmax++
			}
			z := stattest.ZCrit(2 * (2*int(kmax) + 2))
			var inner float64
			for k := -kmax; k <= kmax; k++ {
				inner += pk(k)
				stattest.CheckProportion(t, "P(K = k)", counts[k], n, pk(k), z)
			}
			var out int
			for k, c := range counts {
				if k < -kmax || k > kmax {
					out += c
				}
			}
			stattest.CheckProportion(t, "P(|K| > kmax)", out, n, 1-inner, z)
		}
	}
}

// TestDiscreteGaussianPMF checks DiscreteGaussian(σ) against the
// normalized exp(−k²/(2σ²)), for σ below and above 1.
func TestDiscreteGaussianPMF(t *testing.T) {
	const n = 100000
	for _, seed := range stattest.Seeds(12) {
		for _, sigma := range []float64{0.7, 2.5} {
			rng := rand.New(rand.NewPCG(seed, uint64(10*sigma)))
			counts := map[int64]int{}
			for range n {
				counts[DiscreteGaussian(rng, sigma)]++
			}
			var norm float64
			for k := -60; k <= 60; k++ {
				norm += math.Exp(-float64(k*k) / (2 * sigma * sigma))
			}
			z := stattest.ZCrit(2 * 17)
			for k := int64(-8); k <= 8; k++ {
				p := math.Exp(-float64(k*k)/(2*sigma*sigma)) / norm
				if p*n < 20 {
					if counts[k] > int(20*n*p+20) {
						t.Errorf("σ=%v: k=%d seen %d times, expected %v", sigma, k, counts[k], p*n)
					}
					continue
				}
				stattest.CheckProportion(t, "P(K = k)", counts[k], n, p, z)
			}
		}
	}
}

// TestBernoulliExp checks the exact Bernoulli(exp(−γ)) samplers.
func TestBernoulliExp(t *testing.T) {
	const n = 200000
	z := stattest.ZCrit(4)
	for _, seed := range stattest.Seeds(13) {
		rng := rand.New(rand.NewPCG(seed, 14))
		c1, c2 := 0, 0
		for range n {
			if bernoulliExpNeg1(rng, 2, 5) {
				c1++
			}
			if bernoulliExpNegRat(rng, big.NewRat(7, 3)) {
				c2++
			}
		}
		stattest.CheckProportion(t, "Bernoulli(exp(-2/5))", c1, n, math.Exp(-0.4), z)
		stattest.CheckProportion(t, "Bernoulli(exp(-7/3))", c2, n, math.Exp(-7.0/3), z)
	}
}

func TestGridGranularity(t *testing.T) {
	for _, s := range []float64{1e-300, 3e-7, 0.5, 1, 1.5, 2, 1e6, 3.3e200} {
		g := GridGranularity(s)
		m, _ := math.Frexp(g)
		if m != 0.5 || g < s*0x1p-40 || g >= s*0x1p-39 {
			t.Errorf("GridGranularity(%v) = %v: want the power of two in [s·2^-40, s·2^-39)", s, g)
		}
	}
	if g := GridGranularity(1e-320); g != math.SmallestNonzeroFloat64 {
		t.Errorf("GridGranularity(1e-320) = %v, want the smallest subnormal", g)
	}
	// Scales that are not finite and ≥ 0: NaN, not a hang.
	for _, s := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), -1, -1e-300} {
		if g := GridGranularity(s); !math.IsNaN(g) {
			t.Errorf("GridGranularity(%v) = %v, want NaN", s, g)
		}
	}
	if v := RoundToGrid(1.5, -2); !math.IsNaN(v) {
		t.Errorf("RoundToGrid(1.5, -2) = %v, want NaN", v)
	}
	// Values too large for the grid are multiples of g already: left as
	// they are, never overflowed to ±Inf.
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct{ x, scale float64 }{{1e300, 1e-20}, {-1e300, 1e-20}, {1, 1e-320}, {math.MaxFloat64, 1}} {
		g := GridGranularity(c.scale)
		if r := roundToGrid(c.x, g); r != c.x {
			t.Errorf("roundToGrid(%v, %v) = %v, want %v", c.x, g, r, c.x)
		}
		if v := SecureLaplace(rng, c.x, c.scale); math.IsInf(v, 0) || math.IsNaN(v) {
			t.Errorf("SecureLaplace(%v, %v) = %v", c.x, c.scale, v)
		}
		if v := SecureGaussian(rng, c.x, c.scale); math.IsInf(v, 0) || math.IsNaN(v) {
			t.Errorf("SecureGaussian(%v, %v) = %v", c.x, c.scale, v)
		}
	}
}

// TestSecureScale checks, bit for bit, that the secure samplers are the
// rounded value plus g times the discrete sampler at t = ⌈b/g⌉ (resp.
// σ/g), and that t is in (2³⁹, 2⁴⁰ + 1]: a wrong scale in grid units (5 %
// off, say) would escape the distributional tests.
func TestSecureScale(t *testing.T) {
	for _, c := range []struct{ x, scale float64 }{{0.1, 0.75}, {-3.25, 2}, {1e6 + 0.3, 1e-3}, {0, 12345.678}} {
		g := GridGranularity(c.scale)
		tt := uint64(math.Ceil(c.scale / g))
		if tt <= 1<<39 || tt > 1<<40+1 {
			t.Errorf("scale %v: t = %d, want in (2^39, 2^40+1]", c.scale, tt)
		}
		r1, r2 := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
		for range 50 {
			got := SecureLaplace(r1, c.x, c.scale)
			want := roundToGrid(c.x, g) + float64(DiscreteLaplace(r2, tt))*g
			if got != want {
				t.Fatalf("SecureLaplace(%v, %v) = %v, want %v", c.x, c.scale, got, want)
			}
			got = SecureGaussian(r1, c.x, c.scale)
			want = roundToGrid(c.x, g) + float64(DiscreteGaussian(r2, c.scale/g))*g
			if got != want {
				t.Fatalf("SecureGaussian(%v, %v) = %v, want %v", c.x, c.scale, got, want)
			}
		}
	}
	for _, bad := range []func(){
		func() { DiscreteLaplace(rand.New(rand.NewPCG(1, 1)), 1<<48+1) },
		func() { DiscreteGaussian(rand.New(rand.NewPCG(1, 1)), 0x1p48) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a parameter beyond 2^48 did not panic")
				}
			}()
			bad()
		}()
	}
}

// TestCryptoRandConcurrent draws from CryptoRand in 8 goroutines (run
// under -race by scripts/test.sh): no data race, and no two of 8·2000
// 64-bit draws coincide (probability ≈ 2⁻³⁸ if the bits are fresh).
func TestCryptoRandConcurrent(t *testing.T) {
	const workers, per = 8, 2000
	out := make([][]uint64, workers)
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for range per {
				out[w] = append(out[w], CryptoRand().Uint64())
			}
		}()
	}
	for range workers {
		<-done
	}
	seen := map[uint64]bool{}
	for _, o := range out {
		for _, v := range o {
			if seen[v] {
				t.Fatalf("CryptoRand handed out %#x twice", v)
			}
			seen[v] = true
		}
	}
}

// TestSecureLaplace checks the grid construction: every output is on the
// grid; the outputs follow Lap(x, b) (one-sample KS, DKW critical value;
// the discreteness of 2^-40·b is far below it); and two inputs that round
// to the same grid point give bit-identical outputs from the same bits, so
// the release carries nothing of the input's low bits (Mironov 2012).
func TestSecureLaplace(t *testing.T) {
	const n = 20000
	x, b := 0.1, 0.75
	g := GridGranularity(b)
	for _, seed := range stattest.Seeds(15) {
		r1 := rand.New(rand.NewPCG(seed, 16))
		r2 := rand.New(rand.NewPCG(seed, 16))
		out := make([]float64, n)
		for i := range out {
			out[i] = SecureLaplace(r1, x, b)
			if v := SecureLaplace(r2, x+1e-15, b); v != out[i] {
				t.Fatalf("inputs %v and %v (same grid point) gave %v and %v", x, x+1e-15, out[i], v)
			}
			if k := out[i] / g; k != math.Trunc(k) {
				t.Fatalf("output %v is not on the grid %v", out[i], g)
			}
		}
		lap := distuv.Laplace{Mu: x, Scale: b} // lint:nosrc (CDF only)
		if d, crit := stattest.KS(out, lap.CDF), stattest.DKWCrit(n, 2); d > crit {
			t.Errorf("seed %d: KS distance %v to Lap(%v, %v) > %v", seed, d, x, b, crit)
		}
	}
}

// TestSecureGaussian checks the grid construction against N(x, σ²).
func TestSecureGaussian(t *testing.T) {
	const n = 20000
	x, sigma := -3.25, 2.0
	for _, seed := range stattest.Seeds(17) {
		rng := rand.New(rand.NewPCG(seed, 18))
		out := make([]float64, n)
		for i := range out {
			out[i] = SecureGaussian(rng, x, sigma)
		}
		norm := distuv.Normal{Mu: x, Sigma: sigma} // lint:nosrc (CDF only)
		if d, crit := stattest.KS(out, norm.CDF), stattest.DKWCrit(n, 1); d > crit {
			t.Errorf("seed %d: KS distance %v to N(%v, %v²) > %v", seed, d, x, sigma, crit)
		}
	}
}

// TestSecureMode checks that the mode travels with the generator: given
// CryptoRand, AddLaplace and AddGaussian release on the grid of the secure
// samplers; given a seeded stream they are x + the seeded sample, and no
// other stream is touched.
func TestSecureMode(t *testing.T) {
	if !IsSecure(CryptoRand()) {
		t.Fatal("IsSecure(CryptoRand()) = false")
	}
	v := AddLaplace(CryptoRand(), 0.3, 1)
	w := AddGaussian(CryptoRand(), 0.3, 1)
	if v/GridGranularity(1) != math.Trunc(v/GridGranularity(1)) || w/GridGranularity(1) != math.Trunc(w/GridGranularity(1)) {
		t.Errorf("secure releases %v, %v are not on the grid", v, w)
	}
	r1, r2 := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	if IsSecure(r1) {
		t.Error("IsSecure(seeded stream) = true")
	}
	if got, want := AddLaplace(r1, 0.3, 1), 0.3+LaplaceNoise(r2, 1); got != want {
		t.Errorf("simulation AddLaplace = %v, want %v", got, want)
	}
	if got, want := AddGaussian(r1, 0.3, 2), 0.3+2*r2.NormFloat64(); got != want {
		t.Errorf("simulation AddGaussian = %v, want %v", got, want)
	}
	if len(NoiseReport(true)) < 3 || len(NoiseReport(false)) != 1 {
		t.Error("NoiseReport does not describe both modes")
	}
}
