package mech

import (
	crand "crypto/rand"
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"sync"
)

// # Secure noise
//
// The functions in this file are the opt-in alternative to the seeded,
// floating-point samplers of the rest of the package (see "Simulation only"
// in the package documentation). They fix the two weaknesses that matter
// for releasing real data:
//
//   - bits: [CryptoRand] draws from crypto/rand, not from a seeded stream;
//   - floating point: [SecureLaplace] and [SecureGaussian] never add a
//     continuous float sample to the exact value. The value is rounded to a
//     grid of granularity g (a power of two, ≈ 2⁻⁴⁰ of the noise scale) and
//     an integer multiple of g drawn from an exactly sampled discrete
//     distribution is added, the construction of Google's
//     differential-privacy library (its "secure noise" design note). The
//     output's low bits then carry no information about the input's low
//     bits, which is what Mironov's 2012 attack on the textbook Laplace
//     sampler exploits. The discrete Laplace and discrete Gaussian samplers
//     are Algorithms 1–3 of Canonne, Kamath & Steinke, "The Discrete
//     Gaussian for Differential Privacy" (NeurIPS 2020): they use only
//     uniform random integers and exact integer or rational arithmetic.
//
// Privacy of the grid construction. Rounding to the nearest multiple of g
// moves each coordinate by at most g/2, so two neighbouring values end up
// at most g further apart per coordinate: a release of d coordinates with
// ℓ₁ sensitivity Δ₁ (Laplace) or ℓ₂ sensitivity Δ₂ (Gaussian) has
// sensitivity ≤ Δ₁ + d·g, resp. ≤ Δ₂ + √d·g, on the grid (d·g in Frobenius
// norm for a d×d matrix, as PrivSPDMat releases):
//
//	Laplace:  ε_delivered = (Δ₁ + d·g)/b ≤ ε + d·2⁻³⁹          (b = Δ₁/ε, g ≤ 2⁻³⁹·b)
//	Gaussian: ρ_delivered = (Δ₂ + √d·g)²/(2σ²) ≤ ρ·(1 + √d·2⁻³⁹·σ/Δ₂)²
//
// The discrete Laplace P(k) ∝ exp(−|k|/t) is the two-sided geometric
// mechanism: ε = Δ/t for integer queries of sensitivity Δ (Ghosh,
// Roughgarden & Sundararajan 2009). The discrete Gaussian satisfies
// ½(Δ/σ)²-zCDP for integer queries of ℓ₂ sensitivity Δ, as the continuous
// one does (CKS20, Section 2). An (ε, δ) claim for a Gaussian release
// calibrated by Dwork & Roth's Theorem A.1 (proved for the continuous
// Gaussian) is not separately proven here for the discrete Gaussian; the
// zCDP statement is. The noise scale in grid units is rounded up, which only adds
// noise. Histogram counts are integers, already on the grid: no excess.
// The manifest of a --secure-noise run states these bounds
// ([NoiseReport]); for d up to 10⁶ they are below 2⁻¹⁹·ε.
//
// Limits: a value further than 2⁵³·g ≈ 2¹³·b from zero is left as it is
// (it is a multiple of g already), and the noise added to it is absorbed by
// rounding when |x| exceeds the noise by 2⁵³: such a release is not
// private, as with any floating-point noise (the same limit as Google's
// library; no release of the harness comes near it). The timing of the
// samplers depends on the random draws, not on the input. Mechanisms without
// a floating-point-safe construction here — the spherical Laplace noise of
// objective and output perturbation, the exponential mechanism's inverse-CDF
// draw, the noise-reduction chain's conditional resampling — draw their bits
// from crypto/rand in secure mode but keep their floating-point samplers;
// [SecureNoiseReport] says so and the manifest records it.

// IsSecure reports whether rng is [CryptoRand]: the mark of a release in
// secure mode. The mode travels as a value — the generator the caller hands
// down (the runner hands every unit CryptoRand in a run with secure noise;
// see runner.Env) — not as a process-wide switch: [AddLaplace] and
// [AddGaussian] given CryptoRand use [SecureLaplace] and [SecureGaussian];
// given a seeded stream, the seeded floating-point samplers. Code whose
// noise has no floating-point-safe construction draws from the generator it
// is given, so in secure mode its bits come from crypto/rand.
//
// A generator wrapping a secure one (rand.New(rng)) or a copy of one
// (*rng) is secure too: IsSecure follows the generator down to its source
// (see "Streams and the privacy trace").
func IsSecure(rng *rand.Rand) bool {
	if rng == cryptoRand {
		return true
	}
	s, base := unwrap(rng)
	return s != nil && s.secure || base == rand.Source(cryptoSrc)
}

// cryptoSource is a math/rand/v2 Source reading crypto/rand through a
// 4 KiB buffer (one read per 512 draws instead of one per draw), guarded by
// a mutex, so a *rand.Rand over it is safe for concurrent use. The buffer
// holds bits not yet handed out; each is handed out once.
type cryptoSource struct {
	mu  sync.Mutex
	buf [4096]byte
	off int
}

func (c *cryptoSource) Uint64() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off == 0 || c.off+8 > len(c.buf) {
		if _, err := crand.Read(c.buf[:]); err != nil {
			// crypto/rand.Read does not fail on supported platforms (Go
			// 1.24+ crashes the program itself if the OS source fails).
			panic("mech: crypto/rand failed: " + err.Error())
		}
		c.off = 0
	}
	v := binary.LittleEndian.Uint64(c.buf[c.off:])
	c.off += 8
	if c.off == len(c.buf) {
		c.off = 0 // refill on the next draw
	}
	return v
}

var (
	cryptoSrc  = &cryptoSource{}
	cryptoRand = rand.New(cryptoSrc)
)

// CryptoRand returns a generator whose bits come from crypto/rand. Unlike
// the seeded generators, it is safe for concurrent use.
func CryptoRand() *rand.Rand { return cryptoRand }

// AddLaplace returns x + Lap(0, scale) as one release of the Laplace
// mechanism (scale = Δ₁/ε): x + [LaplaceNoise](rng, scale) for a seeded
// rng, [SecureLaplace](rng, x, scale) when rng is [CryptoRand] ([IsSecure]).
func AddLaplace(rng *rand.Rand, x, scale float64) float64 {
	if IsSecure(rng) {
		return SecureLaplace(rng, x, scale)
	}
	return x + LaplaceNoise(rng, scale)
}

// AddGaussian returns x + N(0, σ²) as one release of the Gaussian
// mechanism: x + σ·rng.NormFloat64() for a seeded rng,
// [SecureGaussian](rng, x, σ) when rng is [CryptoRand] ([IsSecure]).
func AddGaussian(rng *rand.Rand, x, sigma float64) float64 {
	if IsSecure(rng) {
		return SecureGaussian(rng, x, sigma)
	}
	note(rng, false, sigma)
	return x + sigma*rng.NormFloat64()
}

// RoundToGrid returns x rounded to the grid of the secure samplers at noise
// scale `scale` (GridGranularity), for code that adds secure grid noise
// ([SecureLaplace] or [SecureGaussian] at x = 0) to a value it combines
// first. It returns NaN for a scale that is not finite and ≥ 0.
func RoundToGrid(x, scale float64) float64 { return roundToGrid(x, GridGranularity(scale)) }

// GridGranularity returns the grid of the secure samplers for a noise
// scale (Laplace b or Gaussian σ): the smallest power of two ≥ scale·2⁻⁴⁰
// (the smallest subnormal for scales below 2⁻¹⁰³⁴). It returns NaN for a
// scale that is not finite and ≥ 0.
func GridGranularity(scale float64) float64 {
	if !(scale >= 0) || math.IsInf(scale, 1) {
		return math.NaN()
	}
	lo := scale * 0x1p-40
	if lo == 0 {
		return math.SmallestNonzeroFloat64 // scale below 2⁻¹⁰³⁴: the finest grid there is
	}
	g := math.Ldexp(1, int(math.Ceil(math.Log2(scale)))-40)
	for g/2 >= lo && g/2 > 0 { // guard against Log2 rounding up
		g /= 2
	}
	for g < lo {
		g *= 2
	}
	return g
}

// roundToGrid returns the multiple of g nearest to x (ties away from zero).
// x/g and the product are exact because g is a power of two. A value with
// |x| ≥ 2⁵³·g is a multiple of g already (its ulp is ≥ 2g) and is returned
// as it is, which also keeps x/g from overflowing.
func roundToGrid(x, g float64) float64 {
	if math.Abs(x) >= 0x1p53*g {
		return x
	}
	return math.Round(x/g) * g
}

// SecureLaplace returns a floating-point-safe release of x with Laplace
// noise of scale b: with g = GridGranularity(b), x rounded to the nearest
// multiple of g plus g·K, K from the discrete Laplace distribution
// P(K = k) ∝ exp(−|k|/t) with t = ⌈b/g⌉, sampled exactly
// ([DiscreteLaplace]). Its privacy is ε + 2⁻³⁹ for ε = Δ₁/b, per coordinate
// released (see the notes above). All randomness comes from rng (use [CryptoRand] for real data).
// It panics on a non-finite x or a scale that is not finite and > 0.
func SecureLaplace(rng *rand.Rand, x, scale float64) float64 {
	if !(scale > 0) || math.IsInf(scale, 1) || math.IsNaN(x) || math.IsInf(x, 0) {
		panic("mech: SecureLaplace: x must be finite and scale finite and > 0")
	}
	note(rng, true, scale)
	g := GridGranularity(scale)
	t := uint64(math.Ceil(scale / g))
	return roundToGrid(x, g) + float64(DiscreteLaplace(rng, t))*g
}

// SecureGaussian returns a floating-point-safe release of x with Gaussian
// noise of standard deviation σ: with g = GridGranularity(σ), x rounded to
// the nearest multiple of g plus g·K, K from the discrete Gaussian
// P(K = k) ∝ exp(−k²/(2s²)) with s = σ/g, sampled exactly
// ([DiscreteGaussian]). All randomness comes from rng. It panics on a
// non-finite x or a σ that is not finite and > 0.
func SecureGaussian(rng *rand.Rand, x, sigma float64) float64 {
	if !(sigma > 0) || math.IsInf(sigma, 1) || math.IsNaN(x) || math.IsInf(x, 0) {
		panic("mech: SecureGaussian: x must be finite and sigma finite and > 0")
	}
	note(rng, true, sigma)
	g := GridGranularity(sigma)
	return roundToGrid(x, g) + float64(DiscreteGaussian(rng, sigma/g))*g
}

// bernoulliExpNeg1 returns true with probability exp(−num/den) for
// 0 ≤ num ≤ den (CKS20 Algorithm 1, first case: K = 1; while
// Bernoulli(γ/K) { K++ }; return K odd), with Bernoulli(num/(den·K)) drawn
// as a uniform integer below den·K compared with num.
func bernoulliExpNeg1(rng *rand.Rand, num, den uint64) bool {
	k := uint64(1)
	for {
		if den > math.MaxUint64/(k+1) {
			// den·(k+1) would overflow, which needs k ≥ 2⁶⁴/den − 1 ≥ 2¹⁶
			// for den ≤ 2⁴⁸ (the callers' limit): the probability of
			// getting here is below 1/(2¹⁶)!, far below 2⁻⁴⁰⁰; stop as the
			// series would.
			return k%2 == 1
		}
		if rng.Uint64N(den*k) >= num {
			return k%2 == 1
		}
		k++
	}
}

// DiscreteLaplace returns K with P(K = k) ∝ exp(−|k|/t) on the integers,
// t ≥ 1, by CKS20 Algorithm 2 with s = 1: U uniform in {0, …, t−1}
// accepted with probability exp(−U/t), V ~ Geometric(1 − e⁻¹) by repeated
// Bernoulli(e⁻¹), X = U + t·V, a random sign, and −0 rejected. Exact: only
// uniform integers and integer comparisons. It panics for t = 0 or t > 2⁴⁸
// (the limit up to which its Bernoulli series is exact; the secure
// samplers use t ≤ 2⁴⁰ + 1).
func DiscreteLaplace(rng *rand.Rand, t uint64) int64 {
	if t == 0 || t > 1<<48 {
		panic("mech: DiscreteLaplace: t must be in [1, 2^48]")
	}
	for {
		u := rng.Uint64N(t)
		if !bernoulliExpNeg1(rng, u, t) {
			continue
		}
		var v uint64
		for bernoulliExpNeg1(rng, 1, 1) {
			v++
		}
		if v > (1<<63-1-u)/t {
			continue // |X| ≥ 2⁶³: probability below exp(−2⁶³/t)
		}
		x := int64(u + t*v)
		neg := rng.Uint64()&1 == 1
		if neg && x == 0 {
			continue
		}
		if neg {
			return -x
		}
		return x
	}
}

// DiscreteGaussian returns K with P(K = k) ∝ exp(−k²/(2σ²)) on the
// integers, by CKS20 Algorithm 3: with t = ⌊σ⌋ + 1, Y ~ DiscreteLaplace(t)
// is accepted with probability exp(−γ), γ = (|Y| − σ²/t)²/(2σ²), evaluated
// exactly in integer arithmetic (σ² is the exact square of the float64 σ;
// see [dgamma]). It panics for σ not finite and > 0 or σ ≥ 2⁴⁸ (the limit
// of [DiscreteLaplace]).
func DiscreteGaussian(rng *rand.Rand, sigma float64) int64 {
	if !(sigma > 0) || sigma >= 0x1p48 {
		panic("mech: DiscreteGaussian: sigma must be in (0, 2^48)")
	}
	t := uint64(math.Floor(sigma)) + 1
	g := dgammaPool.Get().(*dgamma)
	defer dgammaPool.Put(g)
	g.prepare(sigma, t)
	for {
		y := DiscreteLaplace(rng, t)
		a := y
		if a < 0 {
			a = -a
		}
		g.set(uint64(a))
		if g.bernoulliExpNeg(rng) {
			return y
		}
	}
}

// dgamma is the acceptance exponent γ = (a − σ²/t)²/(2σ²) of
// [DiscreteGaussian] as a reduced fraction num/den, computed for one σ and t
// and then for each candidate a with integers reused across candidates.
//
// With σ = M·2ᵉ (M odd), write σ² = P/Q with √P = M·2^max(e,0) and
// √Q = 2^max(−e,0). Then γ = X²/(2R²) with X = a·t·Q − P and R = √Q·t·√P.
// With g = gcd(|X|, R), x = |X|/g and r = R/g coprime, the reduced fraction
// is x²/(2r²) for x odd and (x²/2)/r² for x even (then r is odd). That is
// the fraction big.Rat arrives at by normalizing after every operation (the
// implementation this replaces: three gcds of numbers up to 2²²⁰ and a
// dozen allocations per candidate), so the Bernoulli draws consume the
// same bits: DiscreteGaussian's output is unchanged for every stream
// (TestDiscreteGaussianSameDraws).
type dgamma struct {
	sigma                          float64 // the σ of tQ, p and r (0: none yet)
	tQ, p, r                       big.Int // t·Q, P and R
	x, gcd, xr, rr, num, den, frac big.Int // per candidate
	whole                          big.Int
	u                              uniformBig
}

// dgammaPool holds [dgamma] values (*dgamma) for reuse: a release draws
// one DiscreteGaussian, which mostly accepts its first or second
// candidate, so the integers' storage and σ's constants are worth keeping
// across calls (a vector release draws many at one σ).
var dgammaPool = sync.Pool{New: func() any { return new(dgamma) }}

// newDGamma returns a dgamma prepared for σ and t = ⌊σ⌋ + 1.
func newDGamma(sigma float64, t uint64) *dgamma {
	g := new(dgamma)
	g.prepare(sigma, t)
	return g
}

// prepare sets γ's constants for σ and t = ⌊σ⌋ + 1, unless they are set.
func (g *dgamma) prepare(sigma float64, t uint64) {
	if g.sigma == sigma {
		return
	}
	g.sigma = sigma
	frac, exp := math.Frexp(sigma) // σ = frac·2^exp, frac in [1/2, 1)
	m := uint64(frac * 0x1p53)     // exact: 53 significant bits
	e := exp - 53
	tz := bits.TrailingZeros64(m)
	m >>= uint(tz)
	e += tz
	var sqrtP, sqrtQ, bt big.Int
	sqrtP.SetUint64(m)
	sqrtQ.SetUint64(1)
	if e >= 0 {
		sqrtP.Lsh(&sqrtP, uint(e))
	} else {
		sqrtQ.Lsh(&sqrtQ, uint(-e))
	}
	bt.SetUint64(t)
	g.p.Mul(&sqrtP, &sqrtP)
	g.tQ.Mul(&sqrtQ, &sqrtQ)
	g.tQ.Mul(&g.tQ, &bt)
	g.r.Mul(&sqrtQ, &bt)
	g.r.Mul(&g.r, &sqrtP)
}

// set sets num/den to γ for the candidate |Y| = a, reduced.
func (g *dgamma) set(a uint64) {
	g.x.SetUint64(a)
	g.x.Mul(&g.x, &g.tQ)
	g.x.Sub(&g.x, &g.p)
	g.x.Abs(&g.x)
	if g.x.Sign() == 0 {
		g.num.SetUint64(0)
		g.den.SetUint64(1)
		return
	}
	g.gcd.GCD(nil, nil, &g.x, &g.r)
	g.xr.Quo(&g.x, &g.gcd)
	g.rr.Quo(&g.r, &g.gcd)
	g.num.Mul(&g.xr, &g.xr)
	g.den.Mul(&g.rr, &g.rr)
	if g.xr.Bit(0) == 0 {
		g.num.Rsh(&g.num, 1)
	} else {
		g.den.Lsh(&g.den, 1)
	}
}

// bernoulliExpNeg returns true with probability exp(−num/den) (CKS20
// Algorithm 1): ⌊γ⌋ independent Bernoulli(e⁻¹) draws that must all
// succeed, then Bernoulli(exp(−(γ − ⌊γ⌋))) by the series of
// Bernoulli(frac/K), each a uniform big integer below den·K compared with
// the numerator of the fractional part.
func (g *dgamma) bernoulliExpNeg(rng *rand.Rand) bool {
	g.whole.QuoRem(&g.num, &g.den, &g.frac)
	// ⌊γ⌋ beyond 2⁶⁴ (i never reaches it) needs 2⁶⁴ successes first.
	small := g.whole.IsUint64()
	for i := uint64(0); !small || i < g.whole.Uint64(); i++ {
		if !bernoulliExpNeg1(rng, 1, 1) {
			return false
		}
	}
	if g.frac.Sign() == 0 {
		return true
	}
	for k := uint64(1); ; k++ {
		if g.u.below(rng, &g.den, k).Cmp(&g.frac) >= 0 {
			return k%2 == 1
		}
	}
}

// bernoulliExpNegRat returns true with probability exp(−γ) for a rational
// γ ≥ 0, by [dgamma.bernoulliExpNeg] on γ's reduced numerator and
// denominator.
func bernoulliExpNegRat(rng *rand.Rand, gamma *big.Rat) bool {
	var g dgamma
	g.num.Set(gamma.Num())
	g.den.Set(gamma.Denom())
	return g.bernoulliExpNeg(rng)
}

// uniformBig draws uniform big integers, reusing its storage.
type uniformBig struct {
	n, x big.Int
	k    big.Int
	buf  []byte
}

// below returns a uniform integer in [0, den·k) for den·k > 0, by
// rejection on BitLen(den·k) random bits (fewer than two tries on
// average): the bytes of successive rng.Uint64 values, little-endian,
// read as a big-endian integer and shifted right to that many bits. The
// result is valid until the next call.
func (u *uniformBig) below(rng *rand.Rand, den *big.Int, k uint64) *big.Int {
	u.k.SetUint64(k)
	u.n.Mul(den, &u.k)
	nb := u.n.BitLen()
	size := (nb + 7) / 8
	if cap(u.buf) < size {
		u.buf = make([]byte, size)
	}
	buf := u.buf[:size]
	for {
		for i := 0; i < len(buf); i += 8 {
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], rng.Uint64())
			copy(buf[i:], w[:])
		}
		u.x.SetBytes(buf)
		u.x.Rsh(&u.x, uint(len(buf)*8-nb))
		if u.x.Cmp(&u.n) < 0 {
			return &u.x
		}
	}
}

// NoiseReport describes, for a run's manifest, where the noise of the
// releases comes from and which construction each kind of release uses.
func NoiseReport(secure bool) []string {
	if !secure {
		return []string{
			"simulation: seeded ChaCha8 streams per unit (results replay bit for bit); floating-point samplers (gonum's single-uniform Laplace, math/rand/v2 normal and exponential); NOT for protecting real data",
		}
	}
	return []string{
		"secure (--secure-noise): every release draws its bits from crypto/rand; results do not replay",
		"Laplace releases (histogram counts, AboveThreshold threshold and query noise, the doubling method's test noise, the Accuracy-First generators' output and sufficient-statistic noise, Laplace.AddNoise): each coordinate snapped to a power-of-two grid g <= 2^-39 b, plus g times an exact discrete Laplace (Canonne, Kamath & Steinke 2020, Algorithms 1-2); epsilon delivered <= epsilon + d 2^-39 for d coordinates (integer histogram counts: no excess)",
		"Gaussian releases (zCDP output perturbation, zCDP PrivSPDMat, Gaussian.AddNoise): the same grid, plus g times an exact discrete Gaussian (CKS20 Algorithm 3); rho delivered <= rho (1 + sqrt(d) 2^-39 sigma/Delta)^2 for d coordinates (d 2^-39 for a d x d matrix); an (epsilon, delta) claim from Dwork & Roth's Theorem A.1 is proven for the continuous Gaussian only",
		"not hardened against floating-point attacks (crypto/rand bits, floating-point samplers): spherical Laplace noise of objective and output perturbation and of DP PrivSPDMat, the exponential mechanism, report-noisy-max, the exponential noise of stability validation, randomized response's uniform, the noise-reduction chain (its Laplace draws and its resampling coins)",
	}
}
