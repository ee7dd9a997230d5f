package mech

import (
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestNewLaplace_Scale(t *testing.T) {
	t.Parallel()
	// b = Δ₁/ε (Dwork & Roth 2014 Def. 3.3; Nguyen 2019 Prop. 3.6 with β = κ/ε),
	// computed by hand; all values are exact in binary floating point except
	// 1/0.1, for which Go's division is correctly rounded.
	tests := []struct {
		name        string
		epsilon, l1 float64
		want        float64
	}{
		{name: "unit", epsilon: 1, l1: 1, want: 1},
		{name: "eps=0.5,l1=2", epsilon: 0.5, l1: 2, want: 4},
		{name: "eps=0.1", epsilon: 0.1, l1: 1, want: 10},
		{name: "eps=2,l1=0.5", epsilon: 2, l1: 0.5, want: 0.25},
		{name: "mean of n=100 in [0,1]", epsilon: 0.5, l1: 1.0 / 100, want: 0.02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLaplace(tt.epsilon, tt.l1)
			if err != nil {
				t.Fatalf("NewLaplace(%v, %v): %v", tt.epsilon, tt.l1, err)
			}
			checkRel(t, "Scale()", l.Scale(), tt.want, 1e-15)
			if l.Epsilon() != tt.epsilon || l.L1Sensitivity() != tt.l1 {
				t.Errorf("Epsilon, L1Sensitivity = %v, %v, want %v, %v", l.Epsilon(), l.L1Sensitivity(), tt.epsilon, tt.l1)
			}
		})
	}
}

func TestNewLaplace_InvalidParams(t *testing.T) {
	t.Parallel()
	inf, nan := math.Inf(1), math.NaN()
	tests := []struct {
		name        string
		epsilon, l1 float64
		wantParam   string
	}{
		{"eps NaN", nan, 1, "epsilon"},
		{"eps +Inf", inf, 1, "epsilon"},
		{"eps -Inf", -inf, 1, "epsilon"},
		{"eps 0", 0, 1, "epsilon"},
		{"eps negative", -1, 1, "epsilon"},
		{"l1 NaN", 1, nan, "l1Sensitivity"},
		{"l1 +Inf", 1, inf, "l1Sensitivity"},
		{"l1 0", 1, 0, "l1Sensitivity"},
		{"l1 negative", 1, -2, "l1Sensitivity"},
		{"scale overflows", 1e-300, 1e300, "scale l1Sensitivity/epsilon"},
		{"scale underflows", 1e300, 1e-300, "scale l1Sensitivity/epsilon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLaplace(tt.epsilon, tt.l1)
			var pe *ParamError
			if !errors.As(err, &pe) || l != nil {
				t.Fatalf("NewLaplace(%v, %v) = %v, %v; want nil, *ParamError", tt.epsilon, tt.l1, l, err)
			}
			if pe.Param != tt.wantParam {
				t.Errorf("Param = %q, want %q (error %q)", pe.Param, tt.wantParam, err)
			}
		})
	}
}

func TestNewLaplace_ErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := NewLaplace(-1, 1)
	const want = "mech: laplace: epsilon must be finite and > 0 (got -1)"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestLaplace_Metamorphic(t *testing.T) {
	t.Parallel()
	// Larger ε gives less noise; larger sensitivity gives more.
	scale := func(eps, l1 float64) float64 {
		l, err := NewLaplace(eps, l1)
		if err != nil {
			t.Fatal(err)
		}
		return l.Scale()
	}
	if !(scale(2, 1) < scale(1, 1)) {
		t.Error("scale did not decrease when epsilon grew")
	}
	if !(scale(1, 2) > scale(1, 1)) {
		t.Error("scale did not increase when l1Sensitivity grew")
	}
}

func TestLaplace_SampleDistribution(t *testing.T) {
	t.Parallel()
	const (
		n = 200_000
		b = 2.5
	)
	// Five checks, each at level familyAlpha/5 (Bonferroni); normal
	// approximation of means of n iid terms (CLT). For the variance, the
	// skewness of X² makes Cramér's correction to one tail about 1.3× at
	// n = 2e5, inside the Bonferroni slack.
	z := zCrit(5)
	l, err := NewLaplace(0.4, 1) // b = 1/0.4 = 2.5
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range testSeeds(1) {
		rng := newRNG(seed)
		x := make([]float64, n)
		var neg, tail, belowB int
		for i := range x {
			x[i] = l.Sample(rng)
			if x[i] < 0 {
				neg++
			}
			if math.Abs(x[i]) > b*math.Log(20) {
				tail++
			}
			if x[i] <= b {
				belowB++
			}
		}
		mean, variance := stat.MeanVariance(x, nil)
		// Mean 0, sd b√2: se of the mean b·√(2/n).
		checkWithin(t, "mean", mean, 0, z*b*math.Sqrt(2.0/n))
		// Variance 2b²; Var(X²) = E[X⁴] − (E[X²])² = 24b⁴ − 4b⁴ = 20b⁴, so
		// the sample variance has se b²·√(20/n).
		checkWithin(t, "unbiased variance", variance, 2*b*b, z*b*b*math.Sqrt(20.0/n))
		// Median 0: P(X < 0) = 1/2.
		checkProportion(t, "P(X < 0)", neg, n, 0.5, z)
		// P(|X| > b ln 20) = exp(−ln 20) = 0.05.
		checkProportion(t, "P(|X| > b ln 20)", tail, n, 0.05, z)
		// CDF at b: 1 − e^(−1)/2.
		checkProportion(t, "P(X <= b)", belowB, n, 1-math.Exp(-1)/2, z)
	}
}

func TestLaplace_AccuracyBound(t *testing.T) {
	t.Parallel()
	// Nguyen 2019 Prop. 3.7: P(‖noise‖∞ ≥ b·ln(k/δ)) ≤ δ. For k iid
	// coordinates the exact value is 1 − (1 − δ/k)^k, here with k = 10 and
	// δ = 0.1: 1 − 0.99¹⁰ ≈ 0.0956. One binomial check at z = zCrit(1).
	const (
		k     = 10
		delta = 0.1
		reps  = 40_000
	)
	z := zCrit(1)
	l, err := NewLaplace(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	threshold := l.Scale() * math.Log(k/delta)
	want := 1 - math.Pow(1-delta/k, k)
	x := make([]float64, k)
	for _, seed := range testSeeds(2) {
		rng := newRNG(seed)
		exceed := 0
		noise := make([]float64, k)
		for range reps {
			l.AddNoise(noise, x, rng)
			for _, v := range noise {
				if math.Abs(v) >= threshold {
					exceed++
					break
				}
			}
		}
		checkProportion(t, "P(‖noise‖∞ ≥ b ln(k/δ))", exceed, reps, want, z)
		if want > delta {
			t.Errorf("exact probability %v exceeds the bound δ = %v", want, delta)
		}
	}
}

func TestLaplace_AddNoise(t *testing.T) {
	t.Parallel()
	l, err := NewLaplace(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{1, -2, 3.5, 0, 1e6}

	t.Run("nil dst allocates and matches Sample stream", func(t *testing.T) {
		got := l.AddNoise(nil, x, newRNG(3))
		rng := newRNG(3)
		if len(got) != len(x) {
			t.Fatalf("len = %d, want %d", len(got), len(x))
		}
		for i := range x {
			if want := x[i] + l.Sample(rng); got[i] != want {
				t.Errorf("dst[%d] = %v, want x + Sample = %v", i, got[i], want)
			}
		}
	})
	t.Run("dst aliases x", func(t *testing.T) {
		want := l.AddNoise(nil, x, newRNG(4))
		y := slices.Clone(x)
		got := l.AddNoise(y, y, newRNG(4))
		if !slices.Equal(got, want) || &got[0] != &y[0] {
			t.Errorf("aliased AddNoise = %v (same backing array: %v), want %v", got, &got[0] == &y[0], want)
		}
	})
	t.Run("x unchanged", func(t *testing.T) {
		y := slices.Clone(x)
		l.AddNoise(nil, y, newRNG(5))
		if !slices.Equal(x, y) {
			t.Errorf("x modified: %v", y)
		}
	})
	t.Run("empty", func(t *testing.T) {
		if got := l.AddNoise(nil, nil, newRNG(6)); len(got) != 0 {
			t.Errorf("AddNoise(nil, nil) = %v, want empty", got)
		}
	})
	t.Run("length mismatch panics", func(t *testing.T) {
		mustPanic(t, "AddNoise(len 2, len 5)", func() { l.AddNoise(make([]float64, 2), x, newRNG(7)) })
	})
}

func TestLaplaceNoise_InvalidScalePanics(t *testing.T) {
	t.Parallel()
	for _, scale := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		mustPanic(t, "LaplaceNoise(scale="+formatFloat(scale)+")", func() { LaplaceNoise(newRNG(8), scale) })
	}
}

func TestLaplaceNoise_RedrawsZeroUniform(t *testing.T) {
	t.Parallel()
	// A source whose first word gives Float64() = 0 (gonum would return
	// −Inf) and whose second gives Float64() = 0.75, for which gonum's
	// inverse CDF is −scale·ln(1 − 2·0.25) = scale·ln 2.
	u75 := uint64(3) << 51 // (3·2⁵¹)/2⁵³ = 0.75
	src := &scriptSource{vals: []uint64{0, u75}}
	got := LaplaceNoise(randFrom(src), 2)
	checkRel(t, "LaplaceNoise after u = 0", got, 2*math.Ln2, 1e-15)
}
