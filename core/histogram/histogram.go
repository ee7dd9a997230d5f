// Package histogram is the histogram case study of Chaudhuri & Vinterbo,
// "A Stability-based Validation Procedure for Differentially Private Machine
// Learning" (NIPS 2013), Appendix 6.3: the differentially private histogram
// density estimator (Algorithm 5), its validation score (Eq. 6), the
// stability constants of Theorem 6, and a [tune.Procedure] so that the bin
// width is chosen by the same Algorithms 1 and 2 (and the alternatives of
// Section 5) as the regularizer of the classifier case study.
//
// Data lie in [0, 1], known in advance (Section 6.3); a histogram with K
// bins has width h = 1/K and bins Iᵢ = [(i−1)h, ih), the last one closed at
// 1. (Algorithm 5 writes Iᵢ = [(i−1)/h, i/h), a typo for the width-h bins of
// the text.)
package histogram

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
)

// Estimate is a histogram density estimate on [0, 1]: K = len(Dens) bins of
// width 1/K with density Dens[i] on bin i (Σᵢ Dens[i]/K = 1).
type Estimate struct {
	Dens []float64
}

// Bins returns K.
func (e Estimate) Bins() int { return len(e.Dens) }

// Width returns h = 1/K.
func (e Estimate) Width() float64 { return 1 / float64(len(e.Dens)) }

// At returns f̂(x): the density of x's bin, 0 outside [0, 1].
func (e Estimate) At(x float64) float64 {
	if !(x >= 0 && x <= 1) {
		return 0
	}
	return e.Dens[bin(x, len(e.Dens))]
}

// L2Squared returns ∫ f̂² = h·Σᵢ Dens[i]².
func (e Estimate) L2Squared() float64 {
	var s float64
	for _, v := range e.Dens {
		s += v * v
	}
	return s * e.Width()
}

// bin returns the index of the bin of x ∈ [0, 1] among k bins.
func bin(x float64, k int) int {
	return min(int(x*float64(k)), k-1)
}

// ErrOutOfRange reports a data point outside [0, 1] (or NaN).
var ErrOutOfRange = errors.New("histogram: value outside [0, 1]")

// Counts returns nᵢ = #{j : x_j ∈ Iᵢ} for k bins of width 1/k. It returns
// an error wrapping [ErrOutOfRange] naming the first x outside [0, 1], and
// an error for k < 1.
func Counts(x []float64, k int) ([]int, error) {
	if k < 1 {
		return nil, fmt.Errorf("histogram: %d bins: need at least 1", k)
	}
	c := make([]int, k)
	for j, v := range x {
		if !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("%w: x[%d] = %v", ErrOutOfRange, j, v)
		}
		c[bin(v, k)]++
	}
	return c, nil
}

// Private is Algorithm 5 of Chaudhuri & Vinterbo 2013 on the bin counts
// nᵢ (from [Counts]) at privacy level alpha: [NoisyCounts], then
// [Normalize]. The k noise draws come from rng in bin order.
func Private(rng *rand.Rand, counts []int, alpha float64) (Estimate, error) {
	noisy, err := NoisyCounts(rng, counts, alpha)
	if err != nil {
		return Estimate{}, err
	}
	return Normalize(noisy), nil
}

// NoisyCounts returns Algorithm 5's ñᵢ = max(0, nᵢ + 2Rᵢ/α), Rᵢ ~ standard
// Laplace (lines 2–5). The ñᵢ are α-DP under replace-one adjacency: moving
// one point changes two counts by 1 (L1 sensitivity 2, Laplace scale 2/α).
// It returns an error for alpha not finite and > 0, no bins or a negative
// count.
func NoisyCounts(rng *rand.Rand, counts []int, alpha float64) ([]float64, error) {
	if !(alpha > 0) || math.IsInf(alpha, 1) {
		return nil, fmt.Errorf("histogram: alpha must be finite and > 0 (got %v)", alpha)
	}
	if len(counts) == 0 {
		return nil, errors.New("histogram: no bins")
	}
	noisy := make([]float64, len(counts))
	for i, n := range counts {
		if n < 0 {
			return nil, fmt.Errorf("histogram: count %d = %d is negative", i, n)
		}
		noisy[i] = math.Max(0, mech.AddLaplace(rng, float64(n), 2/alpha))
	}
	mech.Record(rng, mech.Release{Mechanism: "laplace-histogram", Scale: 2 / alpha, Sensitivity: 2, Dim: len(counts),
		Guarantee: privacy.EpsDP(alpha, "the noisy counts of Algorithm 5 (Chaudhuri & Vinterbo 2013)")})
	return noisy, nil
}

// Normalize returns the density of Algorithm 5, line 6: f̂ = ñᵢ/(h·ñ) on
// bin i with ñ = Σᵢ ñᵢ, for non-negative noisy counts (post-processing).
//
// Deviation: when ñ = 0 (every count clamped; f̂ is undefined in the paper)
// it returns the uniform density, the limit of the normalization as all ñᵢ
// tend to one value; post-processing too.
func Normalize(noisy []float64) Estimate {
	k := len(noisy)
	var total float64
	for _, v := range noisy {
		total += v
	}
	dens := make([]float64, k)
	for i, v := range noisy {
		if total > 0 {
			dens[i] = v * float64(k) / total
		} else {
			dens[i] = 1
		}
	}
	return Estimate{Dens: dens}
}

// Score is the validation score of Chaudhuri & Vinterbo 2013, Eq. 6:
//
//	q(f̂, V) = −∫ f̂² + (2/m)·Σⱼ f̂(zⱼ)
//
// which is ∫ f² − ISE(f̂) estimated on the m validation points: higher is
// better. Points outside [0, 1] score f̂ = 0. It returns NaN for empty V.
func Score(e Estimate, v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	var s float64
	for _, z := range v {
		s += e.At(z)
	}
	return -e.L2Squared() + 2*s/float64(len(v))
}
