package mech

import (
	"math"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/privacy"
)

// ExponentialLogProbs sets dst[i] to the log-probability with which the
// exponential mechanism ([McSherry & Talwar 2007]; [Dwork & Roth 2014]
// Definition 3.4; Nguyen 2019 review Definition 3.10 with λ = ε/(2Δ)) selects
// candidate i, and returns dst:
//
//	log p_i = lambda·(scores[i] − max) − log Σ_j exp(lambda·(scores[j] − max))
//	lambda  = epsilon / (2·sensitivity)
//
// Higher scores are more likely. Callers that want p_i ∝ exp(−α·e_i/2) for
// error counts e_i pass scores = −e_i, sensitivity 1 and epsilon α.
//
// Numerics: the maximum score is subtracted before scaling, so every exponent
// is ≤ 0 and the largest is exactly 0 (log-sum-exp); the normaliser is formed
// with Log1p over the non-maximal terms. Scores such as ±1e6 with ε = 1e3 give
// finite log-probabilities (down to about −1e9) and no NaN; a score difference
// that overflows gives −Inf, i.e. probability 0.
//
// scores: required, non-empty and finite. epsilon, sensitivity: required,
// finite and > 0, with epsilon/(2·sensitivity) finite. It returns a
// *ParamError otherwise. When dst is nil a new slice is allocated; dst may
// alias scores. It panics if a non-nil dst has a different length from scores.
//
// [McSherry & Talwar 2007]: https://doi.org/10.1109/FOCS.2007.66
// [Dwork & Roth 2014]: https://doi.org/10.1561/0400000042
func ExponentialLogProbs(dst, scores []float64, epsilon, sensitivity float64) ([]float64, error) {
	lambda, err := exponentialLambda("exponential mechanism", scores, epsilon, sensitivity)
	if err != nil {
		return nil, err
	}
	dst = fill(dst, scores)
	imax := shiftedLogWeights(dst, scores, lambda)
	// Σ_j exp(w_j) = 1 + rest with w_imax = 0, so log Σ = Log1p(rest),
	// accurate even when rest is far below machine epsilon.
	var rest float64
	for j, w := range dst {
		if j != imax {
			rest += math.Exp(w)
		}
	}
	lse := math.Log1p(rest)
	for j := range dst {
		dst[j] -= lse
	}
	return dst, nil
}

// ExponentialProbs sets dst[i] to the probability p_i with which the
// exponential mechanism selects candidate i, and returns dst:
//
//	p_i = exp(lambda·scores[i]) / Σ_j exp(lambda·scores[j])
//	lambda = epsilon / (2·sensitivity)
//
// computed stably in log space by [ExponentialLogProbs]; probabilities below
// the smallest float64 underflow to 0. Parameters, errors and dst handling are
// as for [ExponentialLogProbs].
//
// Privacy: if every score changes by at most sensitivity between neighbouring
// datasets, sampling from p is ε-differentially private
// ([McSherry & Talwar 2007] Theorem 6; [Dwork & Roth 2014] Theorem 3.10;
// Nguyen 2019 Proposition 3.11). p is a function of the private scores:
// release a sample from it (see [Exponential]), never p itself.
//
// Utility (Nguyen 2019 Corollary 3.13): for k candidates and t > 0,
//
//	P(max score − score of the selection ≥ 2·sensitivity/epsilon·(ln k + t)) ≤ e^(−t)
//
// [McSherry & Talwar 2007]: https://doi.org/10.1109/FOCS.2007.66
// [Dwork & Roth 2014]: https://doi.org/10.1561/0400000042
func ExponentialProbs(dst, scores []float64, epsilon, sensitivity float64) ([]float64, error) {
	dst, err := ExponentialLogProbs(dst, scores, epsilon, sensitivity)
	if err != nil {
		return nil, err
	}
	for i, lp := range dst {
		dst[i] = math.Exp(lp)
	}
	return dst, nil
}

// Exponential draws one index from the exponential mechanism: index i with
// probability p_i ∝ exp(epsilon·scores[i]/(2·sensitivity)), as given by
// [ExponentialProbs].
//
// The draw inverts the CDF of the unnormalised weights
// w_i = exp(lambda·(scores[i] − max)) with a single rng.Float64(), so the
// result is a deterministic function of the generator state. Candidates with
// weight 0 (after underflow) are never selected.
//
// Privacy: one call is ε-differentially private when each score has
// sensitivity at most sensitivity between neighbouring datasets
// ([McSherry & Talwar 2007] Theorem 6; [Dwork & Roth 2014] Theorem 3.10;
// Nguyen 2019 Proposition 3.11). Only the index may be released, not the
// scores.
//
// It returns a *ParamError under the same conditions as [ExponentialLogProbs].
//
// [McSherry & Talwar 2007]: https://doi.org/10.1109/FOCS.2007.66
// [Dwork & Roth 2014]: https://doi.org/10.1561/0400000042
func Exponential(rng *rand.Rand, scores []float64, epsilon, sensitivity float64) (int, error) {
	lambda, err := exponentialLambda("exponential mechanism", scores, epsilon, sensitivity)
	if err != nil {
		return 0, err
	}
	w := make([]float64, len(scores))
	shiftedLogWeights(w, scores, lambda)
	var total float64
	for i, lw := range w {
		w[i] = math.Exp(lw)
		total += w[i]
	}
	note(rng, false, lambda)
	i := sampleIndex(w, total, rng.Float64())
	Record(rng, Release{Mechanism: "exponential-mechanism", Scale: lambda, Sensitivity: sensitivity, Dim: 1,
		Guarantee: privacy.EpsDP(epsilon, "the index selected")})
	return i, nil
}

// ReportNoisyMax returns the index maximising scores[i] + E_i, where the E_i
// are independent exponential variables with scale (mean) 2·sensitivity/epsilon;
// ties go to the lowest index. It draws len(scores) exponentials from rng in
// index order.
//
// Privacy: one call is ε-differentially private when each score has
// sensitivity at most sensitivity between neighbouring datasets. Report noisy
// max with exponential noise is identical in distribution to the
// permute-and-flip mechanism ([McKenna & Sheldon 2020] Algorithm 1;
// [Ding et al. 2021]), whose selection probabilities are
//
//	P(i) = q_i · ∫₀¹ Π_{j≠i} (1 − q_j·t) dt,   q_j = exp(lambda·(scores[j] − max))
//
// with lambda = epsilon/(2·sensitivity). Its expected score is never below the
// exponential mechanism's at the same ε ([McKenna & Sheldon 2020]).
//
// Note: it is NOT distributed as the exponential mechanism
// ([ExponentialProbs]); that equivalence holds for Gumbel noise, not
// exponential noise. For two candidates with weight ratio r = q_2 < 1 the
// best is chosen with probability 1 − r/2 here and 1/(1 + r) by the
// exponential mechanism. Use [Exponential] when the exponential mechanism's
// distribution is required.
//
// Numerics: the argmax is taken of lambda·(scores[i] − max) + Exp(1), which
// has the same argmax as scores[i] + (2·sensitivity/epsilon)·Exp(1) but
// cannot overflow and keeps full resolution for scores like ±1e6.
//
// It returns a *ParamError under the same conditions as [ExponentialLogProbs].
//
// [McKenna & Sheldon 2020]: https://arxiv.org/abs/2010.12603v1
// [Ding et al. 2021]: https://arxiv.org/abs/2105.07260v3
func ReportNoisyMax(rng *rand.Rand, scores []float64, epsilon, sensitivity float64) (int, error) {
	lambda, err := exponentialLambda("report noisy max", scores, epsilon, sensitivity)
	if err != nil {
		return 0, err
	}
	note(rng, false, lambda)
	m := maxOf(scores)
	best, arg := math.Inf(-1), 0
	for i, s := range scores {
		// lambda·(s − m) ≤ 0 may be −Inf for an overflowing difference;
		// −Inf + finite stays −Inf and never wins, and the maximal score
		// contributes 0 + Exp(1) > −Inf, so arg is always set.
		v := lambda*(s-m) + rng.ExpFloat64()
		if v > best { // strict: ties keep the lowest index
			best, arg = v, i
		}
	}
	Record(rng, Release{Mechanism: "report-noisy-max", Scale: lambda, Sensitivity: sensitivity, Dim: 1,
		Guarantee: privacy.EpsDP(epsilon, "the index selected")})
	return arg, nil
}

// ExponentialNoise returns one draw from the exponential distribution with the
// given mean (rate 1/mean), density
//
//	p(z) = exp(−z/mean) / mean,   z ≥ 0
//
// using rng.ExpFloat64. It is a raw sampler with no privacy accounting, used
// for instance for the Z_i ~ Exp(1/α₂) (expectation 1/α₂) of the
// maximum-of-exponentials selection of Chaudhuri & Vinterbo 2013 (NIPS),
// Algorithm 1 line 5.
//
// mean must be finite and > 0; ExponentialNoise panics otherwise, because it
// is a building block for code that has already validated its parameters.
func ExponentialNoise(rng *rand.Rand, mean float64) float64 {
	if !(mean > 0) || math.IsInf(mean, 1) {
		panic("mech: ExponentialNoise: mean must be finite and > 0")
	}
	note(rng, false, mean)
	return mean * rng.ExpFloat64()
}

// ExponentialNoiseScaled returns factor·(mean·E), E ~ Exp(1): exponential
// noise of mean factor·mean, for a site that adds a multiple of a draw of
// the algorithm's own mean (the 2β·Z_i, Z_i ~ Exp(mean 1/α₂), of Chaudhuri
// & Vinterbo 2013, Algorithm 1 line 5). The draw is noted at the scale
// factor·mean, the mean of the noise the site adds, so that a site which
// records one mean and adds another is caught ([Release.ScaleMismatch]);
// the product is computed in this order so that its bits are those of
// factor·ExponentialNoise(rng, mean).
//
// factor and mean must be finite and > 0; it panics otherwise, as
// ExponentialNoise.
func ExponentialNoiseScaled(rng *rand.Rand, factor, mean float64) float64 {
	if !(mean > 0) || math.IsInf(mean, 1) || !(factor > 0) || math.IsInf(factor, 1) {
		panic("mech: ExponentialNoiseScaled: factor and mean must be finite and > 0")
	}
	note(rng, false, factor*mean)
	return factor * (mean * rng.ExpFloat64())
}

// exponentialLambda validates the inputs of the selection mechanisms and
// returns lambda = epsilon/(2·sensitivity).
func exponentialLambda(op string, scores []float64, epsilon, sensitivity float64) (float64, error) {
	if err := checkPositive(op, "epsilon", epsilon); err != nil {
		return 0, err
	}
	if err := checkPositive(op, "sensitivity", sensitivity); err != nil {
		return 0, err
	}
	if err := checkScores(op, scores); err != nil {
		return 0, err
	}
	// A lambda of +Inf would give Inf·0 = NaN for the maximal score, and a
	// lambda of 0 would give 0·(−Inf) = NaN for an overflowing difference.
	lambda := epsilon / (2 * sensitivity)
	if err := checkPositive(op, "epsilon/(2*sensitivity)", lambda); err != nil {
		return 0, err
	}
	return lambda, nil
}

// shiftedLogWeights sets dst[i] = lambda·(scores[i] − max scores), which is ≤ 0
// and exactly 0 at the returned index of the (first) maximum.
func shiftedLogWeights(dst, scores []float64, lambda float64) (imax int) {
	for i, s := range scores {
		if s > scores[imax] {
			imax = i
		}
	}
	m := scores[imax]
	for i, s := range scores {
		dst[i] = lambda * (s - m)
	}
	return imax
}

// maxOf returns the largest element of a non-empty slice.
func maxOf(x []float64) float64 {
	m := x[0]
	for _, v := range x[1:] {
		if v > m {
			m = v
		}
	}
	return m
}

// sampleIndex returns the smallest i with u·total < w_0 + … + w_i, inverting
// the CDF of the non-negative weights w (total = Σ w > 0, u ∈ [0, 1)).
// Indices with w_i = 0 are never returned. If rounding leaves u·total at or
// above the running sum, it returns the last index with positive weight.
func sampleIndex(w []float64, total, u float64) int {
	target := u * total
	var c float64
	last := -1
	for i, wi := range w {
		if wi <= 0 {
			continue
		}
		c += wi
		last = i
		if target < c {
			return i
		}
	}
	if last < 0 {
		panic("mech: sampleIndex: no positive weight")
	}
	return last
}
