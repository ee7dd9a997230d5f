package mech

import (
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestNewGaussianZCDP_Sigma(t *testing.T) {
	t.Parallel()
	// σ = Δ₂/√(2ρ) (Bun & Steinke 2016 Prop. 1.6; Wang, Kifer & Lee 2019
	// Prop. 3), by hand. The ρ values 0.125 and 0.03125 are ρ₁ and ρ₂ of
	// Wang, Kifer & Lee 2019 Fig. 2.
	tests := []struct {
		name    string
		rho, l2 float64
		want    float64
	}{
		{name: "rho=0.5", rho: 0.5, l2: 1, want: 1},
		{name: "rho=0.125 (WKL19 rho1)", rho: 0.125, l2: 1, want: 2},
		{name: "rho=0.03125 (WKL19 rho2)", rho: 0.03125, l2: 1, want: 4},
		{name: "rho=2,l2=3", rho: 2, l2: 3, want: 1.5},
		{name: "output perturbation n=1000,c=0.001", rho: 0.125, l2: 1.0 / (1000 * 0.001), want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := NewGaussianZCDP(tt.rho, tt.l2)
			if err != nil {
				t.Fatalf("NewGaussianZCDP(%v, %v): %v", tt.rho, tt.l2, err)
			}
			checkRel(t, "Sigma()", g.Sigma(), tt.want, 1e-15)
			checkRel(t, "Rho()", g.Rho(), tt.rho, 1e-15)
			if g.L2Sensitivity() != tt.l2 {
				t.Errorf("L2Sensitivity() = %v, want %v", g.L2Sensitivity(), tt.l2)
			}
		})
	}
}

func TestNewGaussianDP_Sigma(t *testing.T) {
	t.Parallel()
	// σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014 Thm A.1; Nguyen 2019
	// Prop. 3.15 with 5/(4δ) = 1.25/δ). Wanted values from Python 3.11.7:
	// D*math.sqrt(2*math.log(1.25/d))/eps.
	tests := []struct {
		name               string
		epsilon, delta, l2 float64
		want               float64
	}{
		{name: "eps=0.5,delta=1e-5", epsilon: 0.5, delta: 1e-5, l2: 1, want: 9.689610525210778},
		{name: "eps=0.9,delta=1e-6,l2=2", epsilon: 0.9, delta: 1e-6, l2: 2, want: 11.775116726334385},
		{name: "eps=0.1,delta=0.01", epsilon: 0.1, delta: 0.01, l2: 1, want: 31.075114600922394},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := NewGaussianDP(tt.epsilon, tt.delta, tt.l2)
			if err != nil {
				t.Fatalf("NewGaussianDP(%v, %v, %v): %v", tt.epsilon, tt.delta, tt.l2, err)
			}
			// A few ulps: Log, Sqrt and division may round differently
			// from CPython on some platforms.
			checkRel(t, "Sigma()", g.Sigma(), tt.want, 1e-14)
			// ρ = Δ₂²/(2σ²) = ε²/(4 ln(1.25/δ)).
			checkRel(t, "Rho()", g.Rho(), tt.epsilon*tt.epsilon/(4*math.Log(1.25/tt.delta)), 1e-14)
		})
	}
}

func TestNewGaussian_InvalidParams(t *testing.T) {
	t.Parallel()
	inf, nan := math.Inf(1), math.NaN()
	zcdp := []struct {
		name      string
		rho, l2   float64
		wantParam string
	}{
		{"rho NaN", nan, 1, "rho"},
		{"rho +Inf", inf, 1, "rho"},
		{"rho 0", 0, 1, "rho"},
		{"rho negative", -0.5, 1, "rho"},
		{"l2 NaN", 0.5, nan, "l2Sensitivity"},
		{"l2 +Inf", 0.5, inf, "l2Sensitivity"},
		{"l2 0", 0.5, 0, "l2Sensitivity"},
		{"l2 negative", 0.5, -1, "l2Sensitivity"},
		{"sigma overflows", 1e-300, 1e300, "sigma l2Sensitivity/sqrt(2*rho)"},
	}
	for _, tt := range zcdp {
		t.Run("zCDP/"+tt.name, func(t *testing.T) {
			g, err := NewGaussianZCDP(tt.rho, tt.l2)
			var pe *ParamError
			if !errors.As(err, &pe) || g != nil {
				t.Fatalf("NewGaussianZCDP(%v, %v) = %v, %v; want nil, *ParamError", tt.rho, tt.l2, g, err)
			}
			if pe.Param != tt.wantParam {
				t.Errorf("Param = %q, want %q", pe.Param, tt.wantParam)
			}
		})
	}
	dp := []struct {
		name               string
		epsilon, delta, l2 float64
		wantParam          string
	}{
		{"eps NaN", nan, 1e-5, 1, "epsilon"},
		{"eps +Inf", inf, 1e-5, 1, "epsilon"},
		{"eps 0", 0, 1e-5, 1, "epsilon"},
		{"eps negative", -0.5, 1e-5, 1, "epsilon"},
		{"eps 1 (Thm A.1 needs eps < 1)", 1, 1e-5, 1, "epsilon"},
		{"eps 2", 2, 1e-5, 1, "epsilon"},
		{"delta NaN", 0.5, nan, 1, "delta"},
		{"delta 0", 0.5, 0, 1, "delta"},
		{"delta 1", 0.5, 1, 1, "delta"},
		{"delta negative", 0.5, -1e-5, 1, "delta"},
		{"delta > 1", 0.5, 1.5, 1, "delta"},
		{"delta +Inf", 0.5, inf, 1, "delta"},
		{"l2 NaN", 0.5, 1e-5, nan, "l2Sensitivity"},
		{"l2 +Inf", 0.5, 1e-5, inf, "l2Sensitivity"},
		{"l2 0", 0.5, 1e-5, 0, "l2Sensitivity"},
		{"l2 negative", 0.5, 1e-5, -1, "l2Sensitivity"},
		{"sigma overflows", 1e-300, 1e-5, 1e300, "sigma"},
	}
	for _, tt := range dp {
		t.Run("DP/"+tt.name, func(t *testing.T) {
			g, err := NewGaussianDP(tt.epsilon, tt.delta, tt.l2)
			var pe *ParamError
			if !errors.As(err, &pe) || g != nil {
				t.Fatalf("NewGaussianDP(%v, %v, %v) = %v, %v; want nil, *ParamError", tt.epsilon, tt.delta, tt.l2, g, err)
			}
			if pe.Param != tt.wantParam {
				t.Errorf("Param = %q, want %q", pe.Param, tt.wantParam)
			}
		})
	}
}

func TestGaussian_Metamorphic(t *testing.T) {
	t.Parallel()
	sigmaZ := func(rho float64) float64 {
		g, err := NewGaussianZCDP(rho, 1)
		if err != nil {
			t.Fatal(err)
		}
		return g.Sigma()
	}
	sigmaDP := func(eps, delta float64) float64 {
		g, err := NewGaussianDP(eps, delta, 1)
		if err != nil {
			t.Fatal(err)
		}
		return g.Sigma()
	}
	if !(sigmaZ(1) < sigmaZ(0.1)) {
		t.Error("zCDP: sigma did not decrease when rho grew")
	}
	if !(sigmaDP(0.9, 1e-5) < sigmaDP(0.3, 1e-5)) {
		t.Error("DP: sigma did not decrease when epsilon grew")
	}
	if !(sigmaDP(0.5, 1e-8) > sigmaDP(0.5, 1e-3)) {
		t.Error("DP: sigma did not increase when delta shrank")
	}
}

func TestGaussian_SampleDistribution(t *testing.T) {
	t.Parallel()
	const n = 200_000
	// Four checks at familyAlpha/4 each (Bonferroni), normal approximation.
	z := zCrit(4)
	g, err := NewGaussianZCDP(1.0/18, 1) // σ = 1/√(1/9) = 3
	if err != nil {
		t.Fatal(err)
	}
	sigma := g.Sigma()
	checkRel(t, "Sigma()", sigma, 3, 1e-15)
	// P(|X| > 1.96σ) = 2(1 − Φ(1.96)) ≈ 0.04999.
	pTail := 2 * distuv.UnitNormal.Survival(1.96)
	for _, seed := range testSeeds(10) {
		rng := newRNG(seed)
		x := make([]float64, n)
		var neg, tail int
		for i := range x {
			x[i] = g.Sample(rng)
			if x[i] < 0 {
				neg++
			}
			if math.Abs(x[i]) > 1.96*sigma {
				tail++
			}
		}
		mean, variance := stat.MeanVariance(x, nil)
		// se of the mean σ/√n.
		checkWithin(t, "mean", mean, 0, z*sigma/math.Sqrt(n))
		// Var(X²) = 3σ⁴ − σ⁴ = 2σ⁴: se of the sample variance σ²·√(2/n).
		checkWithin(t, "unbiased variance", variance, sigma*sigma, z*sigma*sigma*math.Sqrt(2.0/n))
		checkProportion(t, "P(X < 0)", neg, n, 0.5, z)
		checkProportion(t, "P(|X| > 1.96σ)", tail, n, pTail, z)
	}
}

func TestGaussian_AddNoise(t *testing.T) {
	t.Parallel()
	g, err := NewGaussianDP(0.5, 1e-5, 1)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{1, -2, 3.5, 0}

	t.Run("nil dst allocates and matches Sample stream", func(t *testing.T) {
		got := g.AddNoise(nil, x, newRNG(11))
		rng := newRNG(11)
		for i := range x {
			if want := x[i] + g.Sample(rng); got[i] != want {
				t.Errorf("dst[%d] = %v, want x + Sample = %v", i, got[i], want)
			}
		}
	})
	t.Run("dst aliases x", func(t *testing.T) {
		want := g.AddNoise(nil, x, newRNG(12))
		y := slices.Clone(x)
		if got := g.AddNoise(y, y, newRNG(12)); !slices.Equal(got, want) {
			t.Errorf("aliased AddNoise = %v, want %v", got, want)
		}
	})
	t.Run("length mismatch panics", func(t *testing.T) {
		mustPanic(t, "AddNoise(len 3, len 4)", func() { g.AddNoise(make([]float64, 3), x, newRNG(13)) })
	})
}
