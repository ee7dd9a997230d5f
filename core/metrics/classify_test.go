package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestAUC_Cases(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	tests := []struct {
		name   string
		scores []float64
		labels []float64
		want   float64
	}{
		// scikit-learn roc_auc_score docstring example: 3 of 4 pairs ordered.
		{"sklearn example", []float64{0.1, 0.4, 0.35, 0.8}, []float64{-1, -1, 1, 1}, 0.75},
		// Pairs (pos,neg): (1,1)=½, (1,0)=1, (2,1)=1, (2,0)=1 → 3.5/4.
		{"one tie", []float64{1, 1, 2, 0}, []float64{1, -1, 1, -1}, 0.875},
		// Every pair tied counts ½.
		{"all ties", []float64{3, 3, 3, 3, 3}, []float64{1, -1, -1, 1, 1}, 0.5},
		{"perfect", []float64{-2, -1, 0, 1, 2}, []float64{-1, -1, 1, 1, 1}, 1},
		{"reversed", []float64{2, 1, 0, -1, -2}, []float64{-1, -1, 1, 1, 1}, 0},
		// ±Inf are ordinary ordered values; the two +Inf form a tie (pos,neg): ½.
		{"infinities", []float64{inf, inf, -inf, 0}, []float64{1, -1, -1, 1}, (0.5 + 1 + 0 + 1) / 4},
		// Ties spanning the classes at both ends: pos {0,5,5}, neg {0,5}:
		// pos 0: ½ + 0; pos 5: 1 + ½ (twice) → (0.5 + 1.5 + 1.5)/6.
		{"ties at both ends", []float64{0, 5, 5, 0, 5}, []float64{1, 1, 1, -1, -1}, 3.5 / 6},
		{"only positives", []float64{1, 2}, []float64{1, 1}, math.NaN()},
		{"only negatives", []float64{1, 2}, []float64{-1, -1}, math.NaN()},
		{"empty", nil, nil, math.NaN()},
		{"NaN score", []float64{1, math.NaN()}, []float64{1, -1}, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := AUC(tt.scores, tt.labels)
			if !sameFloat(got, tt.want, 1e-15) {
				t.Errorf("AUC = %v, want %v", got, tt.want)
			}
		})
	}
}

// bruteAUC is the O(n²) definition: the fraction of (positive, negative)
// pairs ordered correctly, ties counting ½.
func bruteAUC(scores, labels []float64) float64 {
	var num, den float64
	for i := range scores {
		if labels[i] != 1 {
			continue
		}
		for j := range scores {
			if labels[j] != -1 {
				continue
			}
			den++
			switch {
			case scores[i] > scores[j]:
				num++
			case scores[i] == scores[j]:
				num += 0.5
			}
		}
	}
	return num / den
}

func TestAUC_MatchesBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 2 + rng.IntN(150)
		levels := 1 + rng.IntN(8) // few distinct scores → many ties
		scores := make([]float64, n)
		labels := make([]float64, n)
		for i := range n {
			scores[i] = float64(rng.IntN(levels)) + 0.25*rng.NormFloat64()*float64(trial%2)
			labels[i] = -1
			if rng.Float64() < 0.4 {
				labels[i] = 1
			}
		}
		labels[0], labels[1] = 1, -1 // both classes present
		got, want := AUC(scores, labels), bruteAUC(scores, labels)
		// Both are exact rationals 2U/(2·n₊·n₋) up to one rounding of the
		// division (brute force sums halves exactly in float64), so they agree
		// to a few ulps.
		if !sameFloat(got, want, 1e-14) {
			t.Fatalf("trial %d: AUC = %v, brute force = %v", trial, got, want)
		}
	}
}

func TestAUC_Panics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		scores, labels []float64
	}{
		{"length mismatch", []float64{1, 2}, []float64{1}},
		{"label 0", []float64{1, 2}, []float64{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assertPanics(t, func() { AUC(tt.scores, tt.labels) })
		})
	}
}

func TestBrier(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		probs, labels []float64
		want          float64
	}{
		// (0² + 0² + 0.5²)/3.
		{"hand", []float64{1, 0, 0.5}, []float64{1, -1, 1}, 0.25 / 3},
		// Every prediction maximally wrong.
		{"worst", []float64{0, 1}, []float64{1, -1}, 1},
		// Constant 0.5 forecast: 0.25 whatever the labels.
		{"uninformative", []float64{0.5, 0.5, 0.5}, []float64{1, -1, -1}, 0.25},
		{"empty", nil, nil, math.NaN()},
		{"NaN", []float64{math.NaN()}, []float64{1}, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Brier(tt.probs, tt.labels); !sameFloat(got, tt.want, 1e-15) {
				t.Errorf("Brier = %v, want %v", got, tt.want)
			}
		})
	}
	assertPanics(t, func() { Brier([]float64{0.5}, []float64{2}) })
}

func TestSigmoid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		z    float64
		want float64
	}{
		{"zero", 0, 0.5},
		// 1/(1+e^(-1)) = 0.7310585786300049 (closed form, evaluated in float64).
		{"one", 1, 1 / (1 + math.Exp(-1))},
		{"minus one", -1, 1 - 1/(1+math.Exp(-1))},
		{"large", 800, 1},
		// Lower tail: e^(-720)/(1+e^(-720)) = e^(-720) (subnormal, > 0),
		// where the naive 1/(1+e^720) = 1/(1+Inf) gives 0.
		{"deep lower tail", -720, math.Exp(-720)},
		{"-Inf", math.Inf(-1), 0},
		{"+Inf", math.Inf(1), 1},
		{"NaN", math.NaN(), math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Sigmoid(tt.z); !sameFloat(got, tt.want, 1e-15) {
				t.Errorf("Sigmoid(%v) = %v, want %v", tt.z, got, tt.want)
			}
		})
	}
	if Sigmoid(-720) <= 0 {
		t.Errorf("Sigmoid(-720) underflowed to 0")
	}
	// Symmetry σ(−z) = 1 − σ(z), exact up to rounding near 0.5.
	for _, z := range []float64{0.1, 1, 3, 10} {
		if d := math.Abs(Sigmoid(-z) - (1 - Sigmoid(z))); d > 1e-15 {
			t.Errorf("σ(−%v) − (1 − σ(%v)) = %v", z, z, d)
		}
	}
}

func TestLogisticProbs(t *testing.T) {
	t.Parallel()
	m := []float64{-1, 0, 2}
	got := LogisticProbs(nil, m)
	for i, z := range m {
		if got[i] != Sigmoid(z) {
			t.Errorf("LogisticProbs[%d] = %v, want %v", i, got[i], Sigmoid(z))
		}
	}
	dst := make([]float64, 3)
	if out := LogisticProbs(dst, m); &out[0] != &dst[0] {
		t.Errorf("LogisticProbs did not fill the given dst")
	}
	// In place.
	LogisticProbs(m, m)
	if m[1] != 0.5 {
		t.Errorf("in-place LogisticProbs: m[1] = %v, want 0.5", m[1])
	}
	assertPanics(t, func() { LogisticProbs(make([]float64, 2), m) })
}

func TestErrorCount(t *testing.T) {
	t.Parallel()
	negZero := math.Copysign(0, -1)
	tests := []struct {
		name           string
		scores, labels []float64
		want           int
		wantRate       float64
	}{
		{"perfect", []float64{2, -3}, []float64{1, -1}, 0, 0},
		{"all wrong", []float64{-2, 3}, []float64{1, -1}, 2, 1},
		// 0 and −0 predict +1: right for a +1 label, wrong for −1.
		{"zero score", []float64{0, negZero, 0}, []float64{1, 1, -1}, 1, 1.0 / 3},
		// NaN predicts no class: always an error.
		{"NaN", []float64{math.NaN(), math.NaN(), 1}, []float64{1, -1, 1}, 2, 2.0 / 3},
		{"empty", nil, nil, 0, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ErrorCount(tt.scores, tt.labels); got != tt.want {
				t.Errorf("ErrorCount = %d, want %d", got, tt.want)
			}
			if got := ErrorRate(tt.scores, tt.labels); !sameFloat(got, tt.wantRate, 1e-15) {
				t.Errorf("ErrorRate = %v, want %v", got, tt.wantRate)
			}
		})
	}
	assertPanics(t, func() { ErrorRate(nil, []float64{1}) })
	assertPanics(t, func() { ErrorCount([]float64{1}, []float64{0.5}) })
}

func TestRampLoss(t *testing.T) {
	t.Parallel()
	tests := []struct {
		z, want float64
	}{
		{2, 0}, {1, 0}, {0.5, 0.5}, {0, 1}, {-3, 1},
		{math.Inf(1), 0}, {math.Inf(-1), 1},
	}
	for _, tt := range tests {
		if got := RampLoss(tt.z); got != tt.want {
			t.Errorf("RampLoss(%v) = %v, want %v", tt.z, got, tt.want)
		}
	}
	if !math.IsNaN(RampLoss(math.NaN())) {
		t.Errorf("RampLoss(NaN) is not NaN")
	}
	// 1-Lipschitz and bounded in [0, 1] (the properties the validation
	// procedure's sensitivity bound relies on).
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		a, b := 3*rng.NormFloat64(), 3*rng.NormFloat64()
		ga, gb := RampLoss(a), RampLoss(b)
		if math.Abs(ga-gb) > math.Abs(a-b)+1e-15 || ga < 0 || ga > 1 {
			t.Fatalf("RampLoss(%v) = %v, RampLoss(%v) = %v", a, ga, b, gb)
		}
	}
}

func TestRampScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		margins, labels []float64
		want            float64
	}{
		// y·s = 2, 0.5, −1 → g = 0, 0.5, 1 → q = −1.5/3.
		{"hand", []float64{2, 0.5, -1}, []float64{1, 1, 1}, -0.5},
		// Flipping the labels flips y·s = −2, −0.5, 1 → g = 1, 1, 0.
		{"flipped", []float64{2, 0.5, -1}, []float64{-1, -1, -1}, -2.0 / 3},
		{"perfect", []float64{5, -5}, []float64{1, -1}, 0},
		{"empty", nil, nil, math.NaN()},
		{"NaN", []float64{math.NaN()}, []float64{1}, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := RampScore(tt.margins, tt.labels); !sameFloat(got, tt.want, 1e-15) {
				t.Errorf("RampScore = %v, want %v", got, tt.want)
			}
		})
	}
	assertPanics(t, func() { RampScore([]float64{1}, nil) })
}

// sameFloat reports whether got and want are both NaN or agree within an
// absolute tolerance tol (exact for infinities).
func sameFloat(got, want, tol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= tol
}

func assertPanics(t *testing.T, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("did not panic")
		}
	}()
	f()
}
