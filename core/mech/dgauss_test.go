package mech

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// refDiscreteGaussian is DiscreteGaussian as first written, in big.Rat
// arithmetic normalized after every operation (CKS20 Algorithm 3 read
// literally): the reference the integer version must match draw for draw.
func refDiscreteGaussian(rng *rand.Rand, sigma float64) int64 {
	t := uint64(math.Floor(sigma)) + 1
	s := new(big.Rat).SetFloat64(sigma)
	s2 := new(big.Rat).Mul(s, s)
	shift := new(big.Rat).Quo(s2, new(big.Rat).SetInt64(int64(t)))
	twoS2 := new(big.Rat).Add(s2, s2)
	for {
		y := DiscreteLaplace(rng, t)
		a := y
		if a < 0 {
			a = -a
		}
		d := new(big.Rat).SetInt64(a)
		d.Sub(d, shift)
		gamma := new(big.Rat).Mul(d, d)
		gamma.Quo(gamma, twoS2)
		if refBernoulliExpNegRat(rng, gamma) {
			return y
		}
	}
}

func refBernoulliExpNegRat(rng *rand.Rand, gamma *big.Rat) bool {
	num, den := new(big.Int).Set(gamma.Num()), new(big.Int).Set(gamma.Denom())
	whole, frac := new(big.Int).QuoRem(num, den, new(big.Int))
	for i := int64(0); whole.Cmp(big.NewInt(i)) > 0; i++ {
		if !bernoulliExpNeg1(rng, 1, 1) {
			return false
		}
	}
	if frac.Sign() == 0 {
		return true
	}
	bound := new(big.Int)
	for k := int64(1); ; k++ {
		bound.Mul(den, big.NewInt(k))
		bits := bound.BitLen()
		buf := make([]byte, (bits+7)/8)
		x := new(big.Int)
		for {
			for i := 0; i < len(buf); i += 8 {
				var w [8]byte
				binary.LittleEndian.PutUint64(w[:], rng.Uint64())
				copy(buf[i:], w[:])
			}
			x.SetBytes(buf)
			x.Rsh(x, uint(len(buf)*8-bits))
			if x.Cmp(bound) < 0 {
				break
			}
		}
		if x.Cmp(frac) >= 0 {
			return k%2 == 1
		}
	}
}

// testSigmas are the σ the draw-for-draw tests use: small and fractional
// (Q up to 2¹⁰⁶), integers with and without trailing zero bits, the
// secure samplers' σ/g ∈ [2⁴⁰, 2⁴¹) with fractional bits, and random ones.
func testSigmas() []float64 {
	s := []float64{0.7, 1, 1.5, 2.5, 3, 0.1, 1e-3, 17.25, 1 << 20, 0x1p45, 0x1p47 + 1,
		0x1.8p40, 0x1.23456789abcdep40, 0x1.fffffffffffffp40, 0x1p48 - 1}
	rng := rand.New(rand.NewPCG(51, 52))
	for range 20 {
		s = append(s, math.Ldexp(1+rng.Float64(), rng.IntN(50)-8))
	}
	return s
}

// TestDGammaReduced checks γ's reduced fraction against big.Rat's for
// every test σ and candidates a around σ²/t (where X is smallest and the
// gcd largest) and far from it.
func TestDGammaReduced(t *testing.T) {
	for _, sigma := range testSigmas() {
		tt := uint64(math.Floor(sigma)) + 1
		s := new(big.Rat).SetFloat64(sigma)
		s2 := new(big.Rat).Mul(s, s)
		shift := new(big.Rat).Quo(s2, new(big.Rat).SetInt64(int64(tt)))
		twoS2 := new(big.Rat).Add(s2, s2)
		c, _ := shift.Float64()
		g := newDGamma(sigma, tt)
		for _, a := range []uint64{0, 1, 2, 3, uint64(c), uint64(c) + 1, uint64(c) + 2, tt, 2 * tt, 7*tt + 3, 1 << 40} {
			d := new(big.Rat).SetInt64(int64(a))
			d.Sub(d, shift)
			want := new(big.Rat).Mul(d, d)
			want.Quo(want, twoS2)
			g.set(a)
			if g.num.Cmp(want.Num()) != 0 || g.den.Cmp(want.Denom()) != 0 {
				t.Errorf("σ=%v a=%d: γ = %v/%v, want %v", sigma, a, &g.num, &g.den, want)
			}
		}
	}
}

// TestDiscreteGaussianSameDraws checks that DiscreteGaussian returns what
// the big.Rat reference returns on the same stream and leaves the stream
// at the same place: its outputs replay across the change, so the audit's
// secure-Gaussian rows and any seeded use are unchanged.
func TestDiscreteGaussianSameDraws(t *testing.T) {
	for i, sigma := range testSigmas() {
		r1 := rand.New(rand.NewPCG(uint64(i), 99))
		r2 := rand.New(rand.NewPCG(uint64(i), 99))
		for k := range 300 {
			got, want := DiscreteGaussian(r1, sigma), refDiscreteGaussian(r2, sigma)
			if got != want {
				t.Fatalf("σ=%v draw %d: %d, reference %d", sigma, k, got, want)
			}
		}
		if r1.Uint64() != r2.Uint64() {
			t.Fatalf("σ=%v: the streams parted after 300 draws", sigma)
		}
	}
}

// BenchmarkDiscreteGaussian times one draw at the secure samplers' scale
// (σ/g ∈ [2⁴⁰, 2⁴¹)) and at σ = 2.5, against the big.Rat reference.
func BenchmarkDiscreteGaussian(b *testing.B) {
	for _, c := range []struct {
		name  string
		sigma float64
	}{{"secure", 0x1.23456789abcdep40}, {"sigma2.5", 2.5}} {
		for _, impl := range []string{"integer", "rat"} {
			b.Run(c.name+"/"+impl, func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				b.ReportAllocs()
				for b.Loop() {
					if impl == "integer" {
						DiscreteGaussian(rng, c.sigma)
					} else {
						refDiscreteGaussian(rng, c.sigma)
					}
				}
			})
		}
	}
}
