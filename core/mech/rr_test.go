package mech

import (
	"errors"
	"math"
	"testing"
)

func TestRRKeepProb(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		epsilon float64
		want    float64
	}{
		// Nguyen 2019 Example 4.1b / Dwork & Roth 2014 Claim 3.5: ε = ln 3,
		// flip probability p = q = 1/4.
		{name: "ln 3", epsilon: math.Log(3), want: 0.75},
		// e^ε/(1 + e^ε) = 9/10 at ε = ln 9.
		{name: "ln 9", epsilon: math.Log(9), want: 0.9},
		// 1/(1 + e^(−x)) = 1/2 + x/4 − x³/48 + …; at x = 1e-8 the cubic
		// term is below double precision.
		{name: "tiny", epsilon: 1e-8, want: 0.5 + 1e-8/4},
		// 1 − 1/(1 + e⁵⁰) < 2⁻⁵³: rounds to 1, no overflow.
		{name: "large", epsilon: 50, want: 1},
		{name: "very large", epsilon: 1e6, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRel(t, "RRKeepProb", RRKeepProb(tt.epsilon), tt.want, 1e-15)
		})
	}
	for _, eps := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := RRKeepProb(eps); !math.IsNaN(got) {
			t.Errorf("RRKeepProb(%v) = %v, want NaN", eps, got)
		}
	}
}

func TestRRKeepProb_PrivacyRatio(t *testing.T) {
	t.Parallel()
	// Nguyen 2019 Prop. 3.2 with p = q = 1 − keep: the likelihood ratio of
	// any report under bit 1 versus bit 0 is keep/(1 − keep) = e^ε exactly,
	// so the mechanism is ε-DP and no better.
	for _, eps := range []float64{0.01, 0.5, math.Log(3), 2, 5} {
		keep := RRKeepProb(eps)
		// ln(keep/(1−keep)) with 1 − keep = keep·e^(−ε) rounds to ~1e-15 relative
		// of keep; the log-ratio is then accurate to ~1e-15/(1−keep).
		checkWithin(t, "ln(keep/(1-keep)) at eps="+formatFloat(eps), math.Log(keep/(1-keep)), eps, 1e-12)
	}
}

func TestRandomizedResponse_KeepFrequency(t *testing.T) {
	t.Parallel()
	const n = 100_000
	tests := []struct {
		name    string
		bit     bool
		epsilon float64
	}{
		{"true bit, ln 3", true, math.Log(3)},
		{"false bit, ln 3", false, math.Log(3)},
		{"true bit, eps 0.1", true, 0.1},
		{"false bit, eps 3", false, 3},
	}
	// One binomial check per case, Bonferroni over the four cases.
	z := zCrit(len(tests))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, seed := range testSeeds(40) {
				rng := newRNG(seed)
				kept := 0
				for range n {
					got, err := RandomizedResponse(rng, tt.bit, tt.epsilon)
					if err != nil {
						t.Fatal(err)
					}
					if got == tt.bit {
						kept++
					}
				}
				checkProportion(t, "kept fraction", kept, n, RRKeepProb(tt.epsilon), z)
			}
		})
	}
}

func TestRandomizedResponse_InvalidEpsilon(t *testing.T) {
	t.Parallel()
	for _, eps := range []float64{0, -0.5, math.NaN(), math.Inf(1), math.Inf(-1)} {
		t.Run(formatFloat(eps), func(t *testing.T) {
			_, err := RandomizedResponse(newRNG(41), true, eps)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != "epsilon" {
				t.Errorf("RandomizedResponse(eps=%v) error = %v, want *ParamError on epsilon", eps, err)
			}
		})
	}
}

func TestRRDebias_ClosedForm(t *testing.T) {
	t.Parallel()
	ln3, ln9 := math.Log(3), math.Log(9)
	tests := []struct {
		name              string
		observed, epsilon float64
		want              float64
	}{
		// π̂ = (λ̂ − (1 − keep))/(2 keep − 1). ε = ln 3: keep = 3/4.
		{"all true at ln 3", 0.75, ln3, 1},
		{"all false at ln 3", 0.25, ln3, 0},
		{"half at ln 3", 0.5, ln3, 0.5},
		{"observed 0 at ln 3 (below range)", 0, ln3, -0.5},
		// ε = ln 9: keep = 9/10.
		{"all true at ln 9", 0.9, ln9, 1},
		{"all false at ln 9", 0.1, ln9, 0},
		{"0.3 at ln 9", 0.1 + 0.3*0.8, ln9, 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Tanh/Exp/Log rounding of a few ulps, amplified by 1/(2keep−1) ≤ 2.
			checkWithin(t, "RRDebias", RRDebias(tt.observed, tt.epsilon), tt.want, 1e-14)
		})
	}
	invalid := []struct {
		name              string
		observed, epsilon float64
	}{
		{"observed < 0", -0.1, 1},
		{"observed > 1", 1.1, 1},
		{"observed NaN", math.NaN(), 1},
		{"eps 0", 0.5, 0},
		{"eps negative", 0.5, -1},
		{"eps NaN", 0.5, math.NaN()},
		{"eps +Inf", 0.5, math.Inf(1)},
	}
	for _, tt := range invalid {
		if got := RRDebias(tt.observed, tt.epsilon); !math.IsNaN(got) {
			t.Errorf("%s: RRDebias(%v, %v) = %v, want NaN", tt.name, tt.observed, tt.epsilon, got)
		}
	}
}

func TestRRDebias_Unbiased(t *testing.T) {
	t.Parallel()
	// A fixed population of N respondents, a fraction π = 0.3 holding true.
	// Each report is an independent Bernoulli that equals the truth with
	// probability keep, so Var(λ̂) = keep(1 − keep)/N exactly, and
	// se(π̂) = √(keep(1 − keep)/N)/tanh(ε/2). One check at zCrit(1).
	const (
		nPop = 100_000
		pi   = 0.3
		eps  = 1.0
	)
	keep := RRKeepProb(eps)
	se := math.Sqrt(keep*(1-keep)/nPop) / math.Tanh(eps/2)
	for _, seed := range testSeeds(42) {
		rng := newRNG(seed)
		yes := 0
		for i := range nPop {
			r, err := RandomizedResponse(rng, i < int(pi*nPop), eps)
			if err != nil {
				t.Fatal(err)
			}
			if r {
				yes++
			}
		}
		checkWithin(t, "debiased proportion", RRDebias(float64(yes)/nPop, eps), pi, zCrit(1)*se)
	}
}
