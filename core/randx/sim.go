package randx

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// Sim is a fast generator for the draws of a simulation that releases
// nothing — the Monte Carlo samples of a confidence interval (Wang, Kifer
// & Lee 2019, Algorithm 3 lines 12–14 and Algorithm 5 lines 12–14) — where
// a draw through *rand.Rand (ChaCha8 behind an interface, then Go's
// normal sampler) was the largest single cost: 8.3 ns a normal against
// about 2 ns here. It is never a source of privacy noise: a release draws
// from its *rand.Rand stream (or the secure source), as before.
//
// The generator is xoshiro256++ (Blackman & Vigna, "Scrambled linear
// pseudorandom number generators", ACM TOMS 47(4), 2021), seeded by four
// words of the parent stream ([NewSim]), so a Sim is as reproducible as
// the stream it came from and independent of the other streams. Normals
// come from the ziggurat of Marsaglia & Tsang ("The ziggurat method for
// generating random variables", J. Stat. Softw. 5(8), 2000) with 256
// layers, whose rectangles take 98.5 % of draws at once (128 layers took
// 97.2 %, and the rest pays an exp or two logs); the layer index and the
// value are taken from different bits of one 64-bit word (the index from
// bits 0–7, the signed value from bits 8–63), which avoids the dependence
// between them that Doornik ("An improved ziggurat method to generate
// normal random samples", 2005) found in the original's 32-bit version. Gammas are Marsaglia & Tsang
// 2000 ("A simple method for generating gamma variables", ACM TOMS 26(3))
// on these normals.
//
// A Sim must be used by one goroutine at a time.
type Sim struct{ s0, s1, s2, s3 uint64 }

// NewSim returns a Sim seeded by four words drawn from rng (the only draws
// it makes from rng). The all-zero state, which xoshiro cannot leave, has
// probability 2⁻²⁵⁶ and is replaced by a fixed nonzero one.
func NewSim(rng *rand.Rand) *Sim {
	s := &Sim{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()}
	if s.s0|s.s1|s.s2|s.s3 == 0 {
		s.s0 = 0x9e3779b97f4a7c15
	}
	return s
}

// Uint64 returns a uniformly distributed 64-bit word (xoshiro256++).
func (s *Sim) Uint64() uint64 {
	r := bits.RotateLeft64(s.s0+s.s3, 23) + s.s0
	t := s.s1 << 17
	s.s2 ^= s.s0
	s.s3 ^= s.s1
	s.s1 ^= s.s2
	s.s0 ^= s.s3
	s.s2 ^= t
	s.s3 = bits.RotateLeft64(s.s3, 45)
	return r
}

// Open01 returns a uniform draw from the open interval (0, 1): the top 53
// bits of a word, offset by half a step, so that its logarithm is finite.
func (s *Sim) Open01() float64 {
	return (float64(s.Uint64()>>11) + 0.5) * (1.0 / (1 << 53))
}

// Ziggurat constants (Marsaglia & Tsang 2000, 256 layers): zigR is the
// right edge of the base layer's rectangle, zigV the area of every layer.
const (
	zigN = 256
	zigR = 3.6541528853610088
	zigV = 4.92867323399e-3
	// zigScale is 2⁵⁵: the signed value word j (bits 8–63) lies in
	// [−2⁵⁵, 2⁵⁵), so j/2⁵⁵ ∈ [−1, 1).
	zigScale = 1 << 55
)

// The ziggurat's tables: zigK[i] the |j| below which a draw in layer i
// lies inside the layer's rectangle under the density (accepted at once),
// zigW[i] the layer's width over 2⁵⁵, zigF[i] the density exp(−x²/2) at
// the layer's right edge. Layer 0 is the base (the rectangle of width
// zigV/f(zigR) standing in for the base strip and the tail), layer 255 the
// one above it, layer 1 the top.
var zigK [zigN]int64
var zigW, zigF [zigN]float64

func init() {
	f := func(x float64) float64 { return math.Exp(-0.5 * x * x) }
	q := zigV / f(zigR)
	zigK[0] = int64(zigR / q * zigScale)
	zigK[1] = 0
	zigW[0] = q / zigScale
	zigW[zigN-1] = zigR / zigScale
	zigF[0] = 1
	zigF[zigN-1] = f(zigR)
	x, prev := zigR, zigR
	for i := zigN - 2; i >= 1; i-- {
		x = math.Sqrt(-2 * math.Log(zigV/x+f(x)))
		zigK[i+1] = int64(x / prev * zigScale)
		prev = x
		zigF[i] = f(x)
		zigW[i] = x / zigScale
	}
}

// Norm returns a standard normal draw (the ziggurat; see [Sim]).
func (s *Sim) Norm() float64 {
	u := s.Uint64()
	i := u & (zigN - 1)
	j := int64(u) >> 8
	if abs64(j) < zigK[i] {
		return float64(j) * zigW[i] // inside the layer's rectangle: about 98.5 % of draws
	}
	return s.normSlow(u)
}

// normSlow finishes a normal draw whose first word u fell outside its
// layer's rectangle: the tail or the wedge test, then new words until one
// is accepted.
func (s *Sim) normSlow(u uint64) float64 {
	for {
		i := u & (zigN - 1)
		j := int64(u) >> 8
		x := float64(j) * zigW[i]
		if abs64(j) < zigK[i] {
			return x
		}
		if i == 0 {
			// The tail beyond zigR (Marsaglia 1964, as in the ziggurat paper).
			for {
				t := -math.Log(s.Open01()) / zigR
				y := -math.Log(s.Open01())
				if y+y >= t*t {
					if j > 0 {
						return zigR + t
					}
					return -zigR - t
				}
			}
		}
		// The wedge between the rectangle and the density.
		if zigF[i]+s.Open01()*(zigF[i-1]-zigF[i]) < math.Exp(-0.5*x*x) {
			return x
		}
		u = s.Uint64()
	}
}

// NormFill fills dst with standard normal draws: the same draws, in the
// same order, as len(dst) calls of Norm, with the generator's state kept
// in registers on the ziggurat's fast path (about twice as fast).
func (s *Sim) NormFill(dst []float64) {
	s0, s1, s2, s3 := s.s0, s.s1, s.s2, s.s3
	for k := range dst {
		u := bits.RotateLeft64(s0+s3, 23) + s0
		t := s1 << 17
		s2 ^= s0
		s3 ^= s1
		s1 ^= s2
		s0 ^= s3
		s2 ^= t
		s3 = bits.RotateLeft64(s3, 45)
		i := u & (zigN - 1)
		j := int64(u) >> 8
		if abs64(j) < zigK[i] {
			dst[k] = float64(j) * zigW[i]
			continue
		}
		// The rest of Norm's loop, from this word on.
		s.s0, s.s1, s.s2, s.s3 = s0, s1, s2, s3
		dst[k] = s.normSlow(u)
		s0, s1, s2, s3 = s.s0, s.s1, s.s2, s.s3
	}
	s.s0, s.s1, s.s2, s.s3 = s0, s1, s2, s3
}

func abs64(j int64) int64 {
	if j < 0 {
		return -j
	}
	return j
}

// Gamma returns a draw from Gamma(shape a, rate b), a ≥ 1 and b > 0 (mean
// a/b), by Marsaglia & Tsang 2000. It does not check its arguments: a < 1
// would not be Gamma distributed.
func (s *Sim) Gamma(a, b float64) float64 {
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := s.Norm()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := s.Open01()
		if u < 1-0.0331*(x*x)*(x*x) || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v / b
		}
	}
}

// SphericalLaplace fills dst with a draw from the density ∝ exp(−gamma·‖b‖₂)
// on R^len(dst) (the distribution of mech.SphericalLaplace, for
// simulations): a uniform direction (normalized normals) times a
// Gamma(len(dst), gamma) norm. dst must not be empty and gamma must be
// finite and > 0; it does not check.
func (s *Sim) SphericalLaplace(dst []float64, gamma float64) {
	r := s.SphericalLaplaceScale(dst, gamma)
	for i := range dst {
		dst[i] *= r
	}
}

// SphericalLaplaceScale draws what SphericalLaplace draws, from the same
// numbers, unscaled: it fills dst with the normals of the direction and
// returns r, so that r·dst is the draw. A caller that multiplies the draw
// by a matrix applies r to the product instead (len(dst) multiplications
// fewer per draw when the product is as long as dst).
func (s *Sim) SphericalLaplaceScale(dst []float64, gamma float64) float64 {
	var ss float64
	for ss == 0 { // an all-zero vector has no direction: redraw
		s.NormFill(dst)
		ss = sumSquares(dst)
	}
	return s.Gamma(float64(len(dst)), gamma) / math.Sqrt(ss)
}

// sumSquares returns Σ x[i]² in four interleaved partial sums (x[i] goes
// to sum i mod 4), added as (s₀ + s₁) + (s₂ + s₃): four independent chains
// of additions instead of one.
func sumSquares(x []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+3 < len(x); i += 4 {
		s0 += x[i] * x[i]
		s1 += x[i+1] * x[i+1]
		s2 += x[i+2] * x[i+2]
		s3 += x[i+3] * x[i+3]
	}
	for k := 0; i < len(x); i, k = i+1, k+1 {
		switch k {
		case 0:
			s0 += x[i] * x[i]
		case 1:
			s1 += x[i] * x[i]
		default:
			s2 += x[i] * x[i]
		}
	}
	return (s0 + s1) + (s2 + s3)
}
