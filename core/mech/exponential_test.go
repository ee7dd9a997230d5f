package mech

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestExponentialProbs_ClosedForm(t *testing.T) {
	t.Parallel()
	e := math.E
	tests := []struct {
		name                 string
		scores               []float64
		epsilon, sensitivity float64
		want                 []float64
	}{
		{
			// λ = ε/(2Δ) = 1: p ∝ (e⁰, e¹).
			name:   "two candidates lambda=1",
			scores: []float64{0, 1}, epsilon: 2, sensitivity: 1,
			want: []float64{1 / (1 + e), e / (1 + e)},
		},
		{
			// Chaudhuri & Vinterbo 2013 Sec. 6.1: f(D,1) = 1, f(D,2) = 1/2,
			// α/2-DP exponential mechanism with sensitivity 1/n picks 1 with
			// probability e^(nα/4)/(e^(nα/4) + e^(nα/8)); n = 100, α = 1.
			// 1/(1 + e^(−12.5)) = 0.9999962733607158 (Python 3.11.7).
			name:   "Chaudhuri-Vinterbo 6.1 n=100 alpha=1",
			scores: []float64{1, 0.5}, epsilon: 0.5, sensitivity: 1.0 / 100,
			want: []float64{0.9999962733607158, 1 - 0.9999962733607158},
		},
		{
			name:   "equal scores are uniform",
			scores: []float64{3, 3, 3, 3}, epsilon: 1, sensitivity: 1,
			want: []float64{0.25, 0.25, 0.25, 0.25},
		},
		{
			// Error counts e = (0, 1, 2) passed as scores −e, Δ = 1, ε = α = 2:
			// p ∝ exp(−α e/2) = (1, e⁻¹, e⁻²).
			name:   "error counts as negative scores",
			scores: []float64{0, -1, -2}, epsilon: 2, sensitivity: 1,
			want: []float64{1 / (1 + 1/e + 1/(e*e)), (1 / e) / (1 + 1/e + 1/(e*e)), (1 / (e * e)) / (1 + 1/e + 1/(e*e))},
		},
		{
			name:   "single candidate",
			scores: []float64{-7}, epsilon: 0.1, sensitivity: 3,
			want: []float64{1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExponentialProbs(nil, tt.scores, tt.epsilon, tt.sensitivity)
			if err != nil {
				t.Fatal(err)
			}
			logp, err := ExponentialLogProbs(nil, tt.scores, tt.epsilon, tt.sensitivity)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.want {
				// Exp/Log1p rounding is a few ulps (~1e-15 relative); the
				// bound is 1e-10 because the second Chaudhuri–Vinterbo value
				// is 1 minus a 16-digit decimal, exact only to ~3e-11
				// relative.
				checkRel(t, "p["+formatFloat(float64(i))+"]", got[i], tt.want[i], 1e-10)
				checkRel(t, "exp(logp)", math.Exp(logp[i]), tt.want[i], 1e-10)
			}
		})
	}
}

func TestExponentialProbs_Stability(t *testing.T) {
	t.Parallel()
	t.Run("scores ±1e6, eps=1e3", func(t *testing.T) {
		scores := []float64{1e6, -1e6, 1e6 - 1}
		// λ = 500: log-weights (0, −1e9, −500).
		logp, err := ExponentialLogProbs(nil, scores, 1e3, 1)
		if err != nil {
			t.Fatal(err)
		}
		// log Σ = Log1p(e⁻⁵⁰⁰ + 0) ≈ 7e-218, invisible next to −1e9 and
		// −500 but the whole of log p[0].
		wantLog := []float64{-math.Log1p(math.Exp(-500)), -1e9, -500}
		for i := range wantLog {
			if logp[i] != wantLog[i] {
				t.Errorf("logp[%d] = %v, want %v", i, logp[i], wantLog[i])
			}
		}
		p, err := ExponentialProbs(nil, scores, 1e3, 1)
		if err != nil {
			t.Fatal(err)
		}
		if p[0] != 1 || p[1] != 0 {
			t.Errorf("p[0], p[1] = %v, %v, want 1, 0", p[0], p[1])
		}
		// p[2] = e⁻⁵⁰⁰/(1 + e⁻⁵⁰⁰) = e⁻⁵⁰⁰ to double precision.
		checkRel(t, "p[2]", p[2], math.Exp(-500), 1e-13)
	})
	extreme := []struct {
		name                 string
		scores               []float64
		epsilon, sensitivity float64
	}{
		{"scores ±1e300", []float64{1e300, -1e300, 0}, 1e3, 1},
		{"difference overflows", []float64{-1.7e308, 1.7e308}, 1e3, 1},
		{"huge lambda", []float64{1, 2, 3}, 1e300, 1e-7},
		{"tiny lambda", []float64{1, 2, 1e300}, 1e-300, 1e7},
		{"many equal maxima", []float64{5, 5, 5, -1e6}, 1e3, 1},
	}
	for _, tt := range extreme {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ExponentialProbs(nil, tt.scores, tt.epsilon, tt.sensitivity)
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			for i, v := range p {
				if math.IsNaN(v) || v < 0 || v > 1 {
					t.Errorf("p[%d] = %v, want a probability", i, v)
				}
				sum += v
			}
			// The normaliser is computed in float64: at most k·ε_mach off.
			checkWithin(t, "Σ p", sum, 1, 1e-14)
			logp, _ := ExponentialLogProbs(nil, tt.scores, tt.epsilon, tt.sensitivity)
			for i, v := range logp {
				if math.IsNaN(v) || v > 0 {
					t.Errorf("logp[%d] = %v, want ≤ 0 and not NaN", i, v)
				}
			}
			idx, err := Exponential(newRNG(20), tt.scores, tt.epsilon, tt.sensitivity)
			if err != nil || idx < 0 || idx >= len(tt.scores) || p[idx] == 0 {
				t.Errorf("Exponential = %d, %v; want an index with p > 0", idx, err)
			}
			idx, err = ReportNoisyMax(newRNG(21), tt.scores, tt.epsilon, tt.sensitivity)
			if err != nil || idx < 0 || idx >= len(tt.scores) {
				t.Errorf("ReportNoisyMax = %d, %v; want a valid index", idx, err)
			}
		})
	}
}

func TestExponentialProbs_ShiftInvariance(t *testing.T) {
	t.Parallel()
	// Adding a constant to every score leaves p unchanged (the constant
	// cancels in the normalisation). Integer scores keep the shift exact.
	scores := []float64{3, -1, 4, 1, -5}
	shifted := make([]float64, len(scores))
	for i, s := range scores {
		shifted[i] = s + 1e6
	}
	p, _ := ExponentialProbs(nil, scores, 0.7, 2)
	q, _ := ExponentialProbs(nil, shifted, 0.7, 2)
	if !slices.Equal(p, q) {
		t.Errorf("probs changed under shift: %v vs %v", p, q)
	}
}

func TestExponentialProbs_PrivacyRatio(t *testing.T) {
	t.Parallel()
	// ε-DP (McSherry & Talwar 2007 Thm 6; Nguyen 2019 Prop. 3.11): if every
	// score moves by at most Δ, every log-probability moves by at most ε.
	const (
		eps   = 0.8
		delta = 2.0
		k     = 6
	)
	rng := newRNG(22)
	s, s2 := make([]float64, k), make([]float64, k)
	lp, lp2 := make([]float64, k), make([]float64, k)
	for trial := range 2000 {
		for i := range s {
			s[i] = 10 * rng.NormFloat64()
			// Neighbouring scores: moves of ±Δ (the extremes) or uniform.
			switch trial % 3 {
			case 0:
				s2[i] = s[i] + delta*float64(2*rng.IntN(2)-1)
			default:
				s2[i] = s[i] + delta*(2*rng.Float64()-1)
			}
		}
		if _, err := ExponentialLogProbs(lp, s, eps, delta); err != nil {
			t.Fatal(err)
		}
		if _, err := ExponentialLogProbs(lp2, s2, eps, delta); err != nil {
			t.Fatal(err)
		}
		for i := range lp {
			if d := math.Abs(lp[i] - lp2[i]); d > eps*(1+1e-12) {
				t.Fatalf("trial %d: |log p − log p′|[%d] = %v > ε = %v", trial, i, d, eps)
			}
		}
	}
	// Tightness: with k' = 1000 equal scores, raising one by Δ and lowering
	// the rest by Δ moves its log-probability by
	// λΔ + ln k' − ln(e^(λΔ) + (k'−1)e^(−λΔ)) ≈ 0.998·ε at ε = 1, so the
	// calibration λ = ε/(2Δ) is not over-conservative by a factor of 2.
	const kk = 1000
	a, b := make([]float64, kk), make([]float64, kk)
	for i := range b {
		b[i] = -1
	}
	b[0] = 1
	pa, _ := ExponentialLogProbs(nil, a, 1, 1)
	pb, _ := ExponentialLogProbs(nil, b, 1, 1)
	want := 0.5 + math.Log(kk) - math.Log(math.Exp(0.5)+(kk-1)*math.Exp(-0.5))
	if d := pb[0] - pa[0]; math.Abs(d-want) > 1e-12 || d > 1 || d < 0.99 {
		t.Errorf("log-probability shift = %v, want %v in [0.99, 1]", d, want)
	}
}

func TestSelection_InvalidParams(t *testing.T) {
	t.Parallel()
	inf, nan := math.Inf(1), math.NaN()
	tests := []struct {
		name                 string
		scores               []float64
		epsilon, sensitivity float64
		wantParam            string
	}{
		{"empty scores", nil, 1, 1, "len(scores)"},
		{"NaN score", []float64{1, nan}, 1, 1, "scores[1]"},
		{"+Inf score", []float64{inf, 1}, 1, 1, "scores[0]"},
		{"-Inf score", []float64{1, 2, -inf}, 1, 1, "scores[2]"},
		{"eps NaN", []float64{1}, nan, 1, "epsilon"},
		{"eps +Inf", []float64{1}, inf, 1, "epsilon"},
		{"eps 0", []float64{1}, 0, 1, "epsilon"},
		{"eps negative", []float64{1}, -1, 1, "epsilon"},
		{"sensitivity NaN", []float64{1}, 1, nan, "sensitivity"},
		{"sensitivity +Inf", []float64{1}, 1, inf, "sensitivity"},
		{"sensitivity 0", []float64{1}, 1, 0, "sensitivity"},
		{"sensitivity negative", []float64{1}, 1, -1, "sensitivity"},
		{"lambda overflows", []float64{1}, 1e308, 1e-308, "epsilon/(2*sensitivity)"},
		{"lambda underflows", []float64{1}, 1e-308, 1e308, "epsilon/(2*sensitivity)"},
	}
	funcs := []struct {
		name string
		call func(scores []float64, eps, sens float64) error
	}{
		{"ExponentialProbs", func(s []float64, e, d float64) error { _, err := ExponentialProbs(nil, s, e, d); return err }},
		{"ExponentialLogProbs", func(s []float64, e, d float64) error { _, err := ExponentialLogProbs(nil, s, e, d); return err }},
		{"Exponential", func(s []float64, e, d float64) error { _, err := Exponential(newRNG(23), s, e, d); return err }},
		{"ReportNoisyMax", func(s []float64, e, d float64) error { _, err := ReportNoisyMax(newRNG(24), s, e, d); return err }},
	}
	for _, f := range funcs {
		for _, tt := range tests {
			t.Run(f.name+"/"+tt.name, func(t *testing.T) {
				err := f.call(tt.scores, tt.epsilon, tt.sensitivity)
				var pe *ParamError
				if !errors.As(err, &pe) {
					t.Fatalf("error = %v, want *ParamError", err)
				}
				if pe.Param != tt.wantParam {
					t.Errorf("Param = %q, want %q (error %q)", pe.Param, tt.wantParam, err)
				}
			})
		}
	}
}

func TestExponentialProbs_Dst(t *testing.T) {
	t.Parallel()
	scores := []float64{1, 2, 3}
	want, _ := ExponentialProbs(nil, scores, 1, 1)
	t.Run("non-nil dst is filled and returned", func(t *testing.T) {
		dst := make([]float64, 3)
		got, _ := ExponentialProbs(dst, scores, 1, 1)
		if &got[0] != &dst[0] || !slices.Equal(got, want) {
			t.Errorf("got %v (same array %v), want %v", got, &got[0] == &dst[0], want)
		}
	})
	t.Run("dst aliases scores", func(t *testing.T) {
		s := slices.Clone(scores)
		if got, _ := ExponentialProbs(s, s, 1, 1); !slices.Equal(got, want) {
			t.Errorf("aliased = %v, want %v", got, want)
		}
	})
	t.Run("length mismatch panics", func(t *testing.T) {
		mustPanic(t, "ExponentialProbs(len 2, len 3)", func() { _, _ = ExponentialProbs(make([]float64, 2), scores, 1, 1) })
	})
}

func TestExponential_Frequencies(t *testing.T) {
	t.Parallel()
	const n = 200_000
	scores := []float64{0, 1, 2, 3, -1}
	p, err := ExponentialProbs(nil, scores, 1, 1) // smallest p ≈ 0.05
	if err != nil {
		t.Fatal(err)
	}
	// One binomial check per cell, Bonferroni over the cells.
	z := zCrit(len(scores))
	for _, seed := range testSeeds(25) {
		rng := newRNG(seed)
		counts := make([]int, len(scores))
		for range n {
			i, err := Exponential(rng, scores, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			counts[i]++
		}
		for i := range p {
			checkProportion(t, "frequency of "+formatFloat(float64(i)), counts[i], n, p[i], z)
		}
	}
}

func TestExponential_HugeScoresPickMax(t *testing.T) {
	t.Parallel()
	// p of the runner-up is e⁻⁵⁰⁰ ≈ 7e-218: it is never drawn.
	scores := []float64{1e6 - 1, -1e6, 1e6}
	rng := newRNG(26)
	for range 1000 {
		if i, err := Exponential(rng, scores, 1e3, 1); err != nil || i != 2 {
			t.Fatalf("Exponential = %d, %v; want 2", i, err)
		}
		if i, err := ReportNoisyMax(rng, scores, 1e3, 1); err != nil || i != 2 {
			t.Fatalf("ReportNoisyMax = %d, %v; want 2", i, err)
		}
	}
}

func TestSampleIndex(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		w     []float64
		total float64
		u     float64
		want  int
	}{
		{"u=0 skips leading zero weight", []float64{0, 1, 0, 2}, 3, 0, 1},
		{"just below first boundary", []float64{0, 1, 0, 2}, 3, 0.333, 1},
		{"at first boundary goes right", []float64{1, 1}, 2, 0.5, 1},
		{"just above first boundary skips zero", []float64{0, 1, 0, 2}, 3, 0.334, 3},
		{"largest u", []float64{0, 1, 0, 2}, 3, 1 - 0x1p-53, 3},
		{"rounding overshoot returns last positive", []float64{1, 1, 0}, 2.5, 0.99, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sampleIndex(tt.w, tt.total, tt.u); got != tt.want {
				t.Errorf("sampleIndex(%v, %v, %v) = %d, want %d", tt.w, tt.total, tt.u, got, tt.want)
			}
		})
	}
}

// pfProbs returns the selection probabilities of permute-and-flip
// (McKenna & Sheldon 2020, Algorithm 1), which equal those of report noisy max
// with exponential noise (Ding et al. 2021):
//
//	P(i) = q_i ∫₀¹ Π_{j≠i} (1 − q_j t) dt,  q_j = exp(ε(s_j − max s)/(2Δ)).
//
// Each item arrives at an independent uniform time; item j arrives before i
// with probability t and then must fail its coin (1 − q_j). The polynomial is
// expanded and integrated exactly; fine for the few candidates used here.
func pfProbs(scores []float64, epsilon, sensitivity float64) []float64 {
	m := maxOf(scores)
	q := make([]float64, len(scores))
	for j, s := range scores {
		q[j] = math.Exp(epsilon * (s - m) / (2 * sensitivity))
	}
	p := make([]float64, len(scores))
	for i := range scores {
		poly := []float64{1} // coefficients of t⁰, t¹, …
		for j := range scores {
			if j == i {
				continue
			}
			next := make([]float64, len(poly)+1)
			for k, c := range poly {
				next[k] += c
				next[k+1] -= c * q[j]
			}
			poly = next
		}
		var integral float64
		for k, c := range poly {
			integral += c / float64(k+1)
		}
		p[i] = q[i] * integral
	}
	return p
}

func TestPFProbs_ClosedForm(t *testing.T) {
	t.Parallel()
	// Two candidates with weight ratio r: P(best) = 1 − r/2, P(other) = r/2
	// (∫₀¹ (1 − r t) dt and r ∫₀¹ (1 − t) dt).
	r := math.Exp(-1.0)
	p := pfProbs([]float64{2, 0}, 1, 1) // λ = 1/2, gap 2: r = e⁻¹
	checkRel(t, "P(best)", p[0], 1-r/2, 1e-15)
	checkRel(t, "P(other)", p[1], r/2, 1e-15)
	q := pfProbs([]float64{0, 1, 2, 3, -1}, 1, 1)
	var sum float64
	for _, v := range q {
		sum += v
	}
	checkWithin(t, "Σ P", sum, 1, 1e-14)
}

func TestReportNoisyMax_Frequencies(t *testing.T) {
	t.Parallel()
	const n = 200_000
	tests := []struct {
		name                 string
		scores               []float64
		epsilon, sensitivity float64
	}{
		{"five candidates", []float64{0, 1, 2, 3, -1}, 1, 1},
		{"equal scores", []float64{4, 4, 4}, 0.5, 1},
		{"sensitivity 2", []float64{10, 12, 11}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := pfProbs(tt.scores, tt.epsilon, tt.sensitivity)
			z := zCrit(len(tt.scores))
			for _, seed := range testSeeds(27) {
				rng := newRNG(seed)
				counts := make([]int, len(tt.scores))
				for range n {
					i, err := ReportNoisyMax(rng, tt.scores, tt.epsilon, tt.sensitivity)
					if err != nil {
						t.Fatal(err)
					}
					counts[i]++
				}
				for i := range p {
					checkProportion(t, "frequency of "+formatFloat(float64(i)), counts[i], n, p[i], z)
				}
			}
		})
	}
}

func TestReportNoisyMax_DiffersFromExponentialMechanism(t *testing.T) {
	t.Parallel()
	// Documents the note in the ReportNoisyMax doc: with exponential noise
	// the best of two candidates (r = e⁻¹) wins with probability
	// 1 − r/2 ≈ 0.816, not the exponential mechanism's 1/(1 + r) ≈ 0.731.
	// The gap, 0.085, is about 60 binomial standard errors at n = 1e5, so
	// the frequency must match the permute-and-flip value and lie more than
	// 10 standard errors from the exponential-mechanism one.
	const n = 100_000
	scores := []float64{2, 0}
	r := math.Exp(-1.0)
	z := zCrit(1)
	for _, seed := range testSeeds(28) {
		rng := newRNG(seed)
		best := 0
		for range n {
			if i, _ := ReportNoisyMax(rng, scores, 1, 1); i == 0 {
				best++
			}
		}
		checkProportion(t, "P(best), permute-and-flip", best, n, 1-r/2, z)
		em := 1 / (1 + r)
		if f := float64(best) / n; math.Abs(f-em) < 10*math.Sqrt(em*(1-em)/n) {
			t.Errorf("frequency %v is consistent with the exponential mechanism's %v; the ReportNoisyMax doc is wrong", f, em)
		}
	}
}

func TestReportNoisyMax_TiesLowestIndex(t *testing.T) {
	t.Parallel()
	// A constant source makes every ExpFloat64 draw identical (the
	// ziggurat's first branch: low word 7 < ke[5]), so equal scores tie
	// exactly and the lowest index among the maxima must win.
	const word = uint64(5)<<32 | 7
	tests := []struct {
		name   string
		scores []float64
		want   int
	}{
		{"all equal", []float64{1, 1, 1}, 0},
		{"tied maxima after a smaller one", []float64{1, 3, 3}, 1},
		{"single", []float64{-2}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := randFrom(&scriptSource{vals: []uint64{word}})
			if a, b := rng.ExpFloat64(), rng.ExpFloat64(); a != b {
				t.Fatalf("constant source gave different exponentials %v, %v", a, b)
			}
			got, err := ReportNoisyMax(rng, tt.scores, 1, 1)
			if err != nil || got != tt.want {
				t.Errorf("ReportNoisyMax(%v) = %d, %v; want %d", tt.scores, got, err, tt.want)
			}
		})
	}
}

func TestExponentialNoise_Distribution(t *testing.T) {
	t.Parallel()
	const (
		n     = 200_000
		alpha = 2.0 // α₂ of Chaudhuri & Vinterbo 2013 Alg. 1: Z ~ Exp(mean 1/α₂)
		mean  = 1 / alpha
	)
	// Three checks at familyAlpha/3 each, normal approximation.
	z := zCrit(3)
	for _, seed := range testSeeds(29) {
		rng := newRNG(seed)
		var sum, sumSq float64
		tail := 0
		for range n {
			x := ExponentialNoise(rng, mean)
			if x < 0 {
				t.Fatalf("negative draw %v", x)
			}
			sum += x
			sumSq += x * x
			if x > mean*math.Log(20) {
				tail++
			}
		}
		m := sum / n
		// sd = mean, so se of the sample mean is mean/√n.
		checkWithin(t, "mean", m, mean, z*mean/math.Sqrt(n))
		// E[X²] = 2·mean², Var(X²) = 24·mean⁴ − 4·mean⁴ = 20·mean⁴.
		checkWithin(t, "second moment", sumSq/n, 2*mean*mean, z*mean*mean*math.Sqrt(20.0/n))
		// P(X > mean·ln 20) = 1/20.
		checkProportion(t, "P(X > mean ln 20)", tail, n, 0.05, z)
	}
}

func TestExponentialNoise_InvalidMeanPanics(t *testing.T) {
	t.Parallel()
	for _, mean := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		mustPanic(t, "ExponentialNoise(mean="+formatFloat(mean)+")", func() { ExponentialNoise(newRNG(30), mean) })
	}
}
