package accountant

import (
	"errors"
	"math"
	"testing"
)

// TestRDPSampledGaussian_Edges checks the closed special cases: q = 0
// releases nothing (ε(α) = 0); q = 1 is the Gaussian mechanism, ε(α) =
// α/(2σ²) (Mironov 2017, the Gaussian mechanism), which the general code must
// approach as q → 1; α = +Inf is +Inf.
func TestRDPSampledGaussian_Edges(t *testing.T) {
	for _, alpha := range []float64{1.5, 2, 7.25, 32, 256} {
		if r, err := RDPSampledGaussian(0, 1.3, alpha); err != nil || r != 0 {
			t.Errorf("q=0 α=%v: %v, %v; want 0", alpha, r, err)
		}
		for _, sigma := range []float64{0.5, 1, 4} {
			want := alpha / (2 * sigma * sigma)
			if r, err := RDPSampledGaussian(1, sigma, alpha); err != nil || r != want {
				t.Errorf("q=1 σ=%v α=%v: %v, %v; want %v", sigma, alpha, r, err, want)
			}
			// Continuity at q = 1: with q = 1 − 1e-12 the mixture differs
			// from N(1, σ²) by total variation 1e-12, so ε(α) moves by
			// O(1e-12·e^{(α−1)ε}) relative; 1e-6 is generous and still far
			// below any error of the general code's structure.
			r, err := RDPSampledGaussian(1-1e-12, sigma, alpha)
			if err != nil || math.Abs(r-want) > 1e-6*want {
				t.Errorf("q→1 σ=%v α=%v: %v, %v; want ≈ %v", sigma, alpha, r, err, want)
			}
		}
	}
	if r, err := RDPSampledGaussian(0.01, 1, math.Inf(1)); err != nil || !math.IsInf(r, 1) {
		t.Errorf("α=+Inf: %v, %v", r, err)
	}
	// T steps compose additively (Mironov 2017, Proposition 1).
	one, _ := SampledGaussian{Sigma: 1.1, Q: 0.004, Steps: 1}.RDP(8.5)
	many, _ := SampledGaussian{Sigma: 1.1, Q: 0.004, Steps: 14063}.RDP(8.5)
	if many != 14063*one {
		t.Errorf("T=14063: %v, want 14063×%v", many, one)
	}
	// ε(δ) of q = 0 is 0 for any δ.
	if e, _, err := (SampledGaussian{Sigma: 1, Q: 0, Steps: 100}).Epsilon(1e-9); err != nil || e != 0 {
		t.Errorf("q=0: ε = %v, %v", e, err)
	}
}

// TestRDP_MonotoneInAlpha: ε(α) is non-decreasing in α (Rényi divergence
// is non-decreasing in its order; van Erven & Harremoës 2014),
// across the integer/fractional switch.
func TestRDP_MonotoneInAlpha(t *testing.T) {
	for _, c := range []struct{ q, sigma float64 }{{1e-5, 3}, {0.004, 1.1}, {0.01, 0.7}, {0.1, 2}, {0.5, 0.8}, {0.99, 0.3}} {
		prev := 0.0
		for a := 1.05; a <= 64; a += 0.05 {
			r, err := RDPSampledGaussian(c.q, c.sigma, a)
			if err != nil {
				t.Fatalf("q=%v σ=%v α=%v: %v", c.q, c.sigma, a, err)
			}
			// 1e-12 relative slack for rounding between the two code paths.
			if r < prev*(1-1e-12) {
				t.Errorf("q=%v σ=%v: ε(%.2f) = %.15g < ε(previous) = %.15g", c.q, c.sigma, a, r, prev)
			}
			prev = r
		}
	}
}

// TestEpsilon_Monotone: ε grows with q and T, shrinks with σ and δ —
// strictly, for this DP-SGD setting (60000 records, batch 256, σ = 1.1,
// 60 epochs, δ = 1e-5) and steps of each parameter large enough to move
// the optimum.
func TestEpsilon_Monotone(t *testing.T) {
	base := SampledGaussian{Sigma: 1.1, Q: 256.0 / 60000, Steps: 14063}
	eps := func(m SampledGaussian, delta float64) float64 {
		t.Helper()
		e, _, err := m.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, conv := range []Conversion{Tight, Classic} {
		prev := 0.0
		for _, q := range []float64{1e-4, 1e-3, 256.0 / 60000, 0.01, 0.05, 0.2, 1} {
			m := base
			m.Q = q
			e, _, err := m.EpsilonWith(1e-5, nil, conv)
			if err != nil || !(e > prev) {
				t.Errorf("%v: q=%v ε=%v (%v), previous %v; want increasing", conv, q, e, err, prev)
			}
			prev = e
		}
	}
	prev := 0.0
	for _, steps := range []int{1, 10, 100, 1000, 14063, 100000} {
		m := base
		m.Steps = steps
		if e := eps(m, 1e-5); !(e > prev) {
			t.Errorf("T=%d ε=%v, previous %v; want increasing", steps, e, prev)
		} else {
			prev = e
		}
	}
	prev = math.Inf(1)
	for _, sigma := range []float64{0.3, 0.6, 0.9, 1.1, 2, 5, 20} {
		m := base
		m.Sigma = sigma
		if e := eps(m, 1e-5); !(e < prev) {
			t.Errorf("σ=%v ε=%v, previous %v; want decreasing", sigma, e, prev)
		} else {
			prev = e
		}
	}
	prev = math.Inf(1)
	for _, delta := range []float64{1e-12, 1e-9, 1e-7, 1e-5, 1e-3, 0.1} {
		if e := eps(base, delta); !(e < prev) {
			t.Errorf("δ=%v ε=%v, previous %v; want decreasing", delta, e, prev)
		} else {
			prev = e
		}
	}
}

// TestConversions checks the conversions against each other and against
// the exact Gaussian privacy curve.
//   - Tight never exceeds Classic at the same order: their difference is
//     log(1−1/α) − log(α)/(α−1) < 0.
//   - DeltaFromRDP inverts EpsilonFromRDP: at ε(δ) the δ is δ again (when
//     the optimum is an interior order with ε > 0).
//   - Both are upper bounds on the exact δ(ε) of the Gaussian mechanism
//     (Balle & Wang 2018, arXiv:1805.06530v2, Theorem 8):
//     δ(ε) = Φ(1/(2s) − εs) − e^ε Φ(−1/(2s) − εs), s = σ/√T the
//     effective σ of T full-batch steps — as TF-Privacy's
//     test_get_privacy_spent_gaussian checks.
func TestConversions(t *testing.T) {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, c := range []struct {
		m     SampledGaussian
		delta float64
	}{
		{SampledGaussian{Sigma: 1.1, Q: 256.0 / 60000, Steps: 14063}, 1e-5},
		{SampledGaussian{Sigma: 0.8, Q: 0.01, Steps: 1000}, 1e-6},
		{SampledGaussian{Sigma: 5, Q: 1, Steps: 10}, 1e-5},
		{SampledGaussian{Sigma: 1, Q: 1, Steps: 1}, 1e-3},
	} {
		rdp, err := c.m.RDPCurve(nil, DPSGDOrders)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range DPSGDOrders {
			et, _, _ := EpsilonFromRDP(DPSGDOrders[i:i+1], rdp[i:i+1], c.delta, Tight)
			ec, _, _ := EpsilonFromRDP(DPSGDOrders[i:i+1], rdp[i:i+1], c.delta, Classic)
			if !(et <= ec) {
				t.Errorf("%+v α=%v: tight %v > classic %v", c.m, a, et, ec)
			}
		}
		for _, conv := range []Conversion{Tight, Classic} {
			eps, order, err := EpsilonFromRDP(DPSGDOrders, rdp, c.delta, conv)
			if err != nil {
				t.Fatal(err)
			}
			d, dOrder, err := DeltaFromRDP(DPSGDOrders, rdp, eps, conv)
			if err != nil || math.Abs(d-c.delta) > 1e-9*c.delta || dOrder != order {
				t.Errorf("%+v %v: δ(ε(%v)) = %v at %v (%v), want %v at %v", c.m, conv, c.delta, d, dOrder, err, c.delta, order)
			}
			if c.m.Q == 1 {
				s := c.m.Sigma / math.Sqrt(float64(c.m.Steps))
				exact := phi(1/(2*s)-eps*s) - math.Exp(eps)*phi(-1/(2*s)-eps*s)
				if !(exact <= c.delta) {
					t.Errorf("%+v %v: exact Gaussian δ(%v) = %v > %v", c.m, conv, eps, exact, c.delta)
				}
			}
		}
	}
	// KL branch: a tiny divergence gives ε = 0 once δ ≥ √(1 − e^−r).
	if e, _, err := EpsilonFromRDP([]float64{2}, []float64{1e-8}, 1e-3, Tight); err != nil || e != 0 {
		t.Errorf("KL branch: ε = %v, %v; want 0", e, err)
	}
	// An infinite RDP value at one order is skipped by the minimum.
	if e, o, err := EpsilonFromRDP([]float64{2, 3}, []float64{math.Inf(1), 0.5}, 1e-5, Tight); err != nil || o != 3 || math.IsInf(e, 0) {
		t.Errorf("Inf order: ε = %v at %v, %v", e, o, err)
	}
	if e, _, err := EpsilonFromRDP([]float64{2}, []float64{math.Inf(1)}, 1e-5, Tight); err != nil || !math.IsInf(e, 1) {
		t.Errorf("all Inf: ε = %v, %v; want +Inf", e, err)
	}
	if d, _, err := DeltaFromRDP([]float64{2}, []float64{1}, math.Inf(1), Tight); err != nil || d != 0 {
		t.Errorf("ε=+Inf: δ = %v, %v; want 0", d, err)
	}
}

func TestErrors(t *testing.T) {
	nan := math.NaN()
	good := SampledGaussian{Sigma: 1, Q: 0.01, Steps: 10}
	mechs := []struct {
		name string
		m    SampledGaussian
	}{
		{"sigma 0", SampledGaussian{Sigma: 0, Q: 0.01, Steps: 10}},
		{"sigma negative", SampledGaussian{Sigma: -1, Q: 0.01, Steps: 10}},
		{"sigma NaN", SampledGaussian{Sigma: nan, Q: 0.01, Steps: 10}},
		{"sigma Inf", SampledGaussian{Sigma: math.Inf(1), Q: 0.01, Steps: 10}},
		{"q negative", SampledGaussian{Sigma: 1, Q: -0.1, Steps: 10}},
		{"q above 1", SampledGaussian{Sigma: 1, Q: 1.5, Steps: 10}},
		{"q NaN", SampledGaussian{Sigma: 1, Q: nan, Steps: 10}},
		{"steps 0", SampledGaussian{Sigma: 1, Q: 0.01, Steps: 0}},
		{"steps negative", SampledGaussian{Sigma: 1, Q: 0.01, Steps: -3}},
	}
	for _, tt := range mechs {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.m.RDP(2); !errors.Is(err, ErrInvalid) {
				t.Errorf("RDP: %v", err)
			}
			if _, _, err := tt.m.Epsilon(1e-5); !errors.Is(err, ErrInvalid) {
				t.Errorf("Epsilon: %v", err)
			}
			if _, _, err := tt.m.Delta(1); !errors.Is(err, ErrInvalid) {
				t.Errorf("Delta: %v", err)
			}
		})
	}
	for _, alpha := range []float64{1, 0.5, -2, nan, math.Inf(-1)} {
		if _, err := good.RDP(alpha); !errors.Is(err, ErrInvalid) {
			t.Errorf("α=%v: %v", alpha, err)
		}
	}
	for _, delta := range []float64{0, 1, -1e-5, 1.5, nan, math.Inf(1)} {
		if _, _, err := good.Epsilon(delta); !errors.Is(err, ErrInvalid) {
			t.Errorf("δ=%v: %v", delta, err)
		}
	}
	for _, eps := range []float64{-1, nan} {
		if _, _, err := good.Delta(eps); !errors.Is(err, ErrInvalid) {
			t.Errorf("ε=%v: %v", eps, err)
		}
	}
	curves := []struct {
		name        string
		orders, rdp []float64
	}{
		{"empty", nil, nil},
		{"length mismatch", []float64{2, 3}, []float64{1}},
		{"order 1", []float64{1}, []float64{1}},
		{"order NaN", []float64{nan}, []float64{1}},
		{"order Inf", []float64{math.Inf(1)}, []float64{1}},
		{"rdp negative", []float64{2}, []float64{-1}},
		{"rdp NaN", []float64{2}, []float64{nan}},
	}
	for _, tt := range curves {
		if _, _, err := EpsilonFromRDP(tt.orders, tt.rdp, 1e-5, Tight); !errors.Is(err, ErrInvalid) {
			t.Errorf("EpsilonFromRDP %s: %v", tt.name, err)
		}
		if _, _, err := DeltaFromRDP(tt.orders, tt.rdp, 1, Tight); !errors.Is(err, ErrInvalid) {
			t.Errorf("DeltaFromRDP %s: %v", tt.name, err)
		}
	}
	if _, _, err := EpsilonFromRDP([]float64{2}, []float64{1}, 1e-5, Conversion(7)); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown conversion: %v", err)
	}
	if _, err := good.RDPCurve(make([]float64, 1), []float64{2, 3}); !errors.Is(err, ErrInvalid) {
		t.Errorf("short dst: %v", err)
	}
	if _, err := good.RDP(2e7); !errors.Is(err, ErrInvalid) {
		t.Errorf("huge integer order: %v", err)
	}
}

// TestLogErfc checks the switch to the asymptotic series at x = 25
// against math.Erfc just below it and against continuity across it: both
// sides are accurate to ≈ 1e-15 relative in erfc, so log erfc agrees to
// ≈ 1e-15 absolute; 1e-12 leaves margin for log's rounding at |log| ≈ 630.
func TestLogErfc(t *testing.T) {
	for _, x := range []float64{-3, 0, 1, 10, 24.9} {
		if got, want := logErfc(x), math.Log(math.Erfc(x)); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("logErfc(%v) = %v, want %v", x, got, want)
		}
	}
	below := math.Log(math.Erfc(25 - 1e-9))
	if got := logErfc(25); math.Abs(got-below) > 1e-12*math.Abs(below)+50e-9 {
		t.Errorf("logErfc(25) = %.15g, log erfc(25−1e-9) = %.15g", got, below)
	}
	// Far tail: log erfc(x) ≈ −x² − log(x√π) to O(1/x²).
	x := 1000.0
	if got, want := logErfc(x), -x*x-math.Log(x*math.Sqrt(math.Pi)); math.Abs(got-want) > 1/(x*x) {
		t.Errorf("logErfc(%v) = %v, want ≈ %v", x, got, want)
	}
}

// BenchmarkEpsilon times Epsilon for the TF-Privacy MNIST tutorial
// setting (60000 records, batch 256, σ = 1.1, 60 epochs, δ = 1e-5):
// 72 orders, 62 of them integers up to 512.
func BenchmarkEpsilon(b *testing.B) {
	m := SampledGaussian{Sigma: 1.1, Q: 256.0 / 60000, Steps: 14063}
	for b.Loop() {
		if _, _, err := m.Epsilon(1e-5); err != nil {
			b.Fatal(err)
		}
	}
}
