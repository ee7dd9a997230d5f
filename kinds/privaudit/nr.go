package privaudit

import (
	"fmt"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/audit"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/noisered"
)

// Broken variants of noise reduction (Ligett et al. 2017, Algorithm 1),
// written out in the target (see nrBroken): realistic slips in the
// backward recursion
//
//	v̂_t = v̂_{t+1}                 with probability (ε_t/ε_{t+1})²
//	v̂_t = v̂_{t+1} + Lap(Δ/ε_t)    otherwise
//
// that leave the last level v̂_T, and hence the whole-prefix release, as it
// should be.
const (
	// KeepUnsquared keeps v̂_{t+1} with probability ε_t/ε_{t+1}, the square
	// dropped: too few adds, so the lower levels are less noisy than
	// Lap(Δ/ε_t).
	KeepUnsquared = "keep-unsquared"
	// ScaleNextLevel adds Lap(Δ/ε_{t+1}) at step t, the scale of the level
	// above (an index off by one).
	ScaleNextLevel = "scale-next-level"
)

// nrLevels is the grid of the per-level noise-reduction audits at parameter
// x: the T = 5 levels x/4, x/2, x, 2x, 4x (ε_{t+1}/ε_t = 2, keep
// probability 1/4; powers of 2, so ε_3 = x exactly).
func nrLevels(x float64) []float64 {
	return []float64{x / 4, x / 2, x, 2 * x, 4 * x}
}

// nrLevelT is the level t, chosen in advance, whose prefix
// (v̂_1, …, v̂_t) the per-level audit releases: ε_t = x.
const nrLevelT = 3

// nrSampler returns the release sampler of a noise-reduction chain on the
// scalar query f(D) = 0, f(D′) = shift (sensitivity Δ = 1) at levels eps in
// variant v, releasing the prefix up to level t (1-based) as the statistics
// (v̂_t, v̂_1, mean of v̂_1 … v̂_t), or v̂_t alone for one statistic. The correct variant (and HalfNoise and
// Sensitivity2, which change only eps and the pair) runs noisered.New, the
// chain of the experiments; the broken recursions run nrBroken.
func nrSampler(eps []float64, t int, v string, shift float64) audit.Sampler {
	val := make([]float64, 1)
	prefix := make([]float64, t)
	return func(dst []float64, rng *rand.Rand, side int) error {
		val[0] = sideValue(side, shift)
		switch v {
		case KeepUnsquared, ScaleNextLevel:
			nrBroken(prefix, rng, val[0], 1, eps, v)
		default:
			c, err := noisered.New(rng, val, 1, eps)
			if err != nil {
				return err
			}
			for k := range t {
				if !c.Next() {
					return fmt.Errorf("privaudit: noise-reduction chain ended at step %d of %d", k, t)
				}
				prefix[k] = c.Value()[0]
			}
		}
		var sum float64
		for _, p := range prefix {
			sum += p
		}
		dst[0] = prefix[t-1]
		if len(dst) == 3 {
			dst[1] = prefix[0]
			dst[2] = sum / float64(t)
		}
		return nil
	}
}

// nrBroken fills prefix with v̂_1 … v̂_len(prefix) of Algorithm 1 on the
// scalar v with sensitivity delta, run as written (backward from v̂_T) with
// the slip of variant v (KeepUnsquared or ScaleNextLevel).
func nrBroken(prefix []float64, rng *rand.Rand, v, delta float64, eps []float64, variant string) {
	T := len(eps)
	cur := v + mech.LaplaceNoise(rng, delta/eps[T-1])
	for s := T - 2; s >= 0; s-- { // 0-based level s: v̂_{s+1} from v̂_{s+2}
		keep := eps[s] / eps[s+1]
		scale := delta / eps[s]
		switch variant {
		case KeepUnsquared:
			// the square dropped
		case ScaleNextLevel:
			keep *= keep
			scale = delta / eps[s+1]
		}
		if rng.Float64() >= keep {
			cur += mech.LaplaceNoise(rng, scale)
		}
		if s < len(prefix) {
			prefix[s] = cur
		}
	}
}

// nrLevelTarget audits the prefix (v̂_1, …, v̂_t) of noise reduction up to
// a level t chosen in advance against ε_t (Ligett et al. 2017, Theorem 2.7:
// the prefix is ε_t-private). The whole-prefix audit ("noise-reduction")
// cannot see a slip in the keep probability or the per-level scale: the
// whole prefix is a post-processing of v̂_T, which the slips leave alone.
// Here v̂_t is exactly f + Lap(Δ/ε_t) when the recursion is right, so the
// audit is tight, and either slip leaves v̂_t with too little noise.
func nrLevelTarget() target {
	return target{
		name:  "noise-reduction-level",
		what:  fmt.Sprintf("f(D)=0, f(D′)=Δ=1; noise-reduction chain of 5 levels ε/4, ε/2, ε, 2ε, 4ε, the prefix up to level t = %d (ε_t = ε) released; s0 = v̂_t, s1 = v̂_1, s2 = mean of the prefix", nrLevelT),
		stats: 3, variants: []string{HalfNoise, Sensitivity2, KeepUnsquared, ScaleNextLevel},
		sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
			mul, shift := noiseScale(v)
			eps := nrLevels(mul * x)
			if eps[nrLevelT-1] != mul*x {
				return nil, fmt.Errorf("privaudit: noise-reduction level %d is %v, want %v", nrLevelT, eps[nrLevelT-1], mul*x)
			}
			return nrSampler(eps, nrLevelT, v, shift), nil
		},
	}
}

// nrStepTarget audits one keep/add step of noise reduction: levels ε and
// 2ε, the more private v̂_1 released alone against ε_1 = ε. v̂_1 is v̂_2
// (kept, probability 1/4) or v̂_2 + Lap(Δ/ε) (added), and only the law
// P(keep) = (ε_1/ε_2)² with the scale Δ/ε_1 makes it exactly f + Lap(Δ/ε):
// with keep probability 1/2 (KeepUnsquared) v̂_1 − f is the mixture
// (1/3)·Lap(b) + (2/3)·Lap(2b), b = Δ/(2ε) (partial fractions of the
// characteristic functions), too sharp at the centre: the event v̂_1 ≤ f(D)
// has ratio 1/((1/3)e^{−2ε} + (2/3)e^{−ε}), e^{1.24} at ε = 1; with the
// scale Δ/ε_2 (ScaleNextLevel) the whole law is too narrow.
func nrStepTarget() target {
	return target{
		name:  "noise-reduction-step",
		what:  "f(D)=0, f(D′)=Δ=1; one keep/add step of noise reduction: levels ε, 2ε, v̂_1 released alone (claim ε_1 = ε); s0 = v̂_1",
		stats: 1, variants: []string{HalfNoise, Sensitivity2, KeepUnsquared, ScaleNextLevel},
		sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
			mul, shift := noiseScale(v)
			eps := []float64{mul * x, 2 * mul * x}
			return nrSampler(eps, 1, v, shift), nil
		},
	}
}
