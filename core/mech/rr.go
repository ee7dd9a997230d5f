package mech

import (
	"math"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/privacy"
)

// RandomizedResponse returns a randomized report of one private bit
// ([Warner 1965]; Nguyen 2019 review Definition 3.1 with symmetric flip
// probabilities p = q = 1/(1 + e^ε)): the true bit is kept with probability
//
//	keep = e^epsilon / (1 + e^epsilon)
//
// and flipped otherwise, using a single rng.Float64().
//
// Privacy: one call is ε-differentially private with respect to changing the
// bit (Nguyen 2019 Proposition 3.2, where max{(1−p)/q, p/(1−q), …} = e^ε
// exactly); ε = ln 3 is the coin-flipping scheme of [Dwork & Roth 2014]
// Section 3.2, Claim 3.5. Applied once per respondent to a database of bits
// it is ε-DP for the whole database under the adjacency "one respondent's bit
// changes" (parallel composition), and [RRDebias] estimates the proportion.
//
// epsilon: required, finite and > 0. It returns a *ParamError otherwise.
//
// [Warner 1965]: https://doi.org/10.1080/01621459.1965.10480775
// [Dwork & Roth 2014]: https://doi.org/10.1561/0400000042
func RandomizedResponse(rng *rand.Rand, bit bool, epsilon float64) (bool, error) {
	if err := checkPositive("randomized response", "epsilon", epsilon); err != nil {
		return false, err
	}
	note(rng, false, RRKeepProb(epsilon))
	keep := rng.Float64() < RRKeepProb(epsilon)
	Record(rng, Release{Mechanism: "randomized-response", Scale: RRKeepProb(epsilon), Sensitivity: 1, Dim: 1,
		Guarantee: privacy.EpsDP(epsilon, "one respondent's reported bit")})
	if keep {
		return bit, nil
	}
	return !bit, nil
}

// RRKeepProb returns the probability e^ε/(1 + e^ε) with which
// [RandomizedResponse] reports the true bit, computed as 1/(1 + e^(−ε)) so
// that large ε does not overflow. It is 3/4 at ε = ln 3 (Nguyen 2019
// Example 4.1b). It returns NaN unless epsilon is finite and > 0.
func RRKeepProb(epsilon float64) float64 {
	if checkPositive("", "", epsilon) != nil {
		return math.NaN()
	}
	return 1 / (1 + math.Exp(-epsilon))
}

// RRDebias returns the unbiased estimate of the population proportion π of
// true bits from the observed fraction λ̂ of "true" reports produced by
// [RandomizedResponse] at the given epsilon:
//
//	E[λ̂] = (1 − keep) + π·(2·keep − 1)
//	π̂    = (observedFrac − (1 − keep)) / (2·keep − 1)
//	     = (observedFrac − 1/(1 + e^epsilon)) / tanh(epsilon/2)
//
// with keep = [RRKeepProb](epsilon); tanh(ε/2) = 2·keep − 1 keeps full
// precision for small ε. For n independent reports its variance is
// λ(1 − λ)/(n·tanh²(ε/2)) with λ = E[λ̂].
//
// π̂ is not clamped to [0, 1]: clamping would bias it. Estimating π from
// released reports is post-processing and costs no extra privacy.
//
// It returns NaN unless observedFrac ∈ [0, 1] and epsilon is finite and > 0.
func RRDebias(observedFrac, epsilon float64) float64 {
	if checkPositive("", "", epsilon) != nil || !(observedFrac >= 0 && observedFrac <= 1) {
		return math.NaN()
	}
	flip := 1 / (1 + math.Exp(epsilon))
	return (observedFrac - flip) / math.Tanh(epsilon/2)
}
