package metrics

import (
	"cmp"
	"math"
	"slices"
)

// checkPair panics when scores and labels differ in length.
func checkPair(op string, a, labels []float64) {
	if len(a) != len(labels) {
		panic("metrics: " + op + ": slice length mismatch")
	}
}

// isPositive reports whether y is the positive label +1. It panics for any
// value other than ±1.
func isPositive(op string, y float64) bool {
	switch y {
	case 1:
		return true
	case -1:
		return false
	}
	panic("metrics: " + op + ": label must be ±1")
}

// AUC returns the area under the ROC curve of scores against ±1 labels,
// i.e. the probability that a random positive outscores a random negative,
// ties counting one half. This is the Mann–Whitney U statistic divided by
// n₊·n₋ (Hanley & McNeil 1982, Radiology 143(1), Eq. (1)–(2)):
//
//	AUC = (1/(n₊·n₋)) · Σ_{i: y_i=+1} Σ_{j: y_j=−1} [s_i > s_j] + ½·[s_i = s_j]
//
// It is computed in O(n log n) by sorting the scores once and walking the
// tie groups in increasing order: a group with p positives and q negatives,
// preceded by N₋ negatives, contributes p·N₋ + ½·p·q. The count is kept as
// the integer 2·U, so the result is exact up to the final division. This
// equals the rank-average (midrank) form U = R₊ − n₊(n₊+1)/2.
//
// AUC returns NaN when one class is absent (the statistic is 0/0) or any
// score is NaN. ±Inf scores are ordinary, comparable values. It allocates
// one index slice of length n.
func AUC(scores, labels []float64) float64 {
	checkPair("AUC", scores, labels)
	idx := make([]int, len(scores))
	for i, s := range scores {
		if math.IsNaN(s) {
			return math.NaN()
		}
		isPositive("AUC", labels[i]) // validate before sorting
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(scores[a], scores[b]) })

	var nPos, nNeg, twoU int64
	for start := 0; start < len(idx); {
		end := start
		var p, q int64
		for end < len(idx) && scores[idx[end]] == scores[idx[start]] {
			if labels[idx[end]] == 1 {
				p++
			} else {
				q++
			}
			end++
		}
		twoU += 2*p*nNeg + p*q
		nPos += p
		nNeg += q
		start = end
	}
	if nPos == 0 || nNeg == 0 {
		return math.NaN()
	}
	return float64(twoU) / (2 * float64(nPos) * float64(nNeg))
}

// Brier returns the Brier score of probabilities for the positive class,
// the mean squared error against the 0/1 encoding of ±1 labels:
//
//	Brier = (1/n) · Σ_i (probs_i − (labels_i+1)/2)²
//
// This is the "MSE" reported by the reproduced papers. It is the usual
// binary form of Brier's score (Brier 1950, Monthly Weather Review
// 78(1):1–3), half of Brier's original sum over both classes. It returns NaN for
// empty input or when any probability is NaN.
func Brier(probs, labels []float64) float64 {
	checkPair("Brier", probs, labels)
	if len(probs) == 0 {
		return math.NaN()
	}
	var sum float64
	for i, p := range probs {
		var t float64
		if isPositive("Brier", labels[i]) {
			t = 1
		}
		d := p - t
		sum += d * d
	}
	return sum / float64(len(probs))
}

// Sigmoid returns the logistic function 1/(1+e^(−z)).
//
// For z < 0 it evaluates e^z/(1+e^z) instead, so that e^(−z) never
// overflows and the lower tail keeps full relative precision down to the
// subnormal range: Sigmoid(−720) = e^(−720) ≈ 2.3e−313, where the naive
// 1/(1+e^720) would be 1/(1+Inf) = 0. Sigmoid(NaN) is NaN.
func Sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z) // z < 0 or NaN: no overflow; NaN propagates
	return e / (1 + e)
}

// LogisticProbs fills dst with Sigmoid(margins[i]), the logistic-regression
// probability of the positive class, and returns it. A nil dst is
// allocated; otherwise it must have len(margins), or LogisticProbs panics.
// dst may alias margins.
func LogisticProbs(dst, margins []float64) []float64 {
	if dst == nil {
		dst = make([]float64, len(margins))
	}
	if len(dst) != len(margins) {
		panic("metrics: LogisticProbs: slice length mismatch")
	}
	for i, z := range margins {
		dst[i] = Sigmoid(z)
	}
	return dst
}

// ErrorCount returns the number of misclassified examples, those with
// sign(scores_i) ≠ labels_i. A score of exactly 0 (either sign of zero)
// predicts +1. A NaN score predicts no class and always counts as an error.
func ErrorCount(scores, labels []float64) int {
	checkPair("ErrorCount", scores, labels)
	var n int
	for i, s := range scores {
		pos := isPositive("ErrorCount", labels[i])
		switch {
		case math.IsNaN(s):
			n++
		case (s >= 0) != pos:
			n++
		}
	}
	return n
}

// ErrorRate returns ErrorCount(scores, labels)/n, the 0–1 loss averaged over
// the examples. It returns NaN for empty input.
func ErrorRate(scores, labels []float64) float64 {
	if len(scores) == 0 {
		checkPair("ErrorRate", scores, labels)
		return math.NaN()
	}
	return float64(ErrorCount(scores, labels)) / float64(len(scores))
}

// RampLoss returns the ramp loss of the functional margin z = y·wᵀx,
//
//	g(z) = min(1, max(0, 1 − z))
//
// the hinge loss clipped at 1. It is 1-Lipschitz in z and takes values in
// [0, 1]. RampLoss(NaN) is NaN.
func RampLoss(z float64) float64 {
	if math.IsNaN(z) {
		return z
	}
	return math.Min(1, math.Max(0, 1-z))
}

// RampScore returns the validation score of a linear classifier on a
// validation set V of m examples with margins s_i = wᵀx_i and ±1 labels,
//
//	q(w, V) = −(1/m) · Σ_i g(y_i · s_i)
//
// with g = [RampLoss] (Chaudhuri & Vinterbo 2013, "A Stability-based
// Validation Procedure for Differentially Private Machine Learning", NIPS 26
// proceedings version, Eq. (3) with the ramp loss as g). Higher is better;
// q ∈ [−1, 0]. Because g is 1-Lipschitz and bounded by 1, changing one
// validation example changes q by at most 1/m. RampScore returns NaN for
// empty input or a NaN margin.
func RampScore(margins, labels []float64) float64 {
	checkPair("RampScore", margins, labels)
	if len(margins) == 0 {
		return math.NaN()
	}
	var sum float64
	for i, s := range margins {
		y := -1.0
		if isPositive("RampScore", labels[i]) {
			y = 1
		}
		sum += RampLoss(y * s)
	}
	return -sum / float64(len(margins))
}
