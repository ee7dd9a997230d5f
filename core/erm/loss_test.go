package erm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
)

// closeTo reports |got − want| ≤ tol·max(1, |want|).
func closeTo(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestLoss_ClosedForm(t *testing.T) {
	t.Parallel()
	h := Huber{H: 0.5}
	tests := []struct {
		name      string
		loss      Loss
		z         float64
		v, d1, d2 float64
		relTol    float64
	}{
		// ℓ(0) = log 2, ℓ′(0) = −1/2, ℓ″(0) = 1/4.
		{"logistic/0", Logistic{}, 0, math.Ln2, -0.5, 0.25, 1e-15},
		// z = 2: ℓ = log(1 + e⁻²), ℓ′ = −1/(1 + e²), ℓ″ = e²/(1 + e²)².
		{"logistic/2", Logistic{}, 2, math.Log(1 + math.Exp(-2)), -1 / (1 + math.Exp(2)),
			math.Exp(2) / ((1 + math.Exp(2)) * (1 + math.Exp(2))), 1e-15},
		// z = 40: ℓ ≈ e⁻⁴⁰ (log1p keeps full relative accuracy), ℓ′ ≈ −e⁻⁴⁰.
		{"logistic/40", Logistic{}, 40, math.Exp(-40), -math.Exp(-40), math.Exp(-40), 1e-15},
		// z = −800: exp(800) overflows, but ℓ = 800 + log1p(e⁻⁸⁰⁰) = 800
		// exactly, ℓ′ = −1, ℓ″ = e⁻⁸⁰⁰ = 0 in float64.
		{"logistic/-800", Logistic{}, -800, 800, -1, 0, 1e-15},
		{"logistic/800", Logistic{}, 800, 0, 0, 0, 1e-15},
		// Huber h = 0.5 ([CMS11] Eq. (7)): z = 2 > 1+h → 0; z = 0 < 1−h →
		// 1 − z = 1, ℓ′ = −1; z = 1 → (1+h−z)²/(4h) = 0.25/2 = 0.125,
		// ℓ′ = −(1+h−z)/(2h) = −0.5, ℓ″ = 1/(2h) = 1.
		{"huber/2", h, 2, 0, 0, 0, 0},
		{"huber/0", h, 0, 1, -1, 0, 0},
		{"huber/1", h, 1, 0.125, -0.5, 1, 1e-15},
		// At the kink z = 1 − h = 0.5 the two pieces agree: (2h)²/(4h) = h.
		{"huber/kink", h, 0.5, 0.5, -1, 1, 1e-15},
		{"hinge/0.5", Hinge{}, 0.5, 0.5, -1, 0, 0},
		{"hinge/1", Hinge{}, 1, 0, 0, 0, 0},
		{"ramp/-3", Ramp{}, -3, 1, 0, 0, 0},
		{"ramp/0.25", Ramp{}, 0.25, 0.75, -1, 0, 0},
		{"ramp/2", Ramp{}, 2, 0, 0, 0, 0},
		{"squared/3", Squared{}, 3, 4.5, 3, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rel := func(got, want float64) bool {
				if want == 0 {
					return got == 0
				}
				return math.Abs(got-want) <= tc.relTol*math.Abs(want)
			}
			if got := tc.loss.Value(tc.z); !rel(got, tc.v) {
				t.Errorf("Value(%v) = %v, want %v", tc.z, got, tc.v)
			}
			if got := tc.loss.Deriv(tc.z); !rel(got, tc.d1) {
				t.Errorf("Deriv(%v) = %v, want %v", tc.z, got, tc.d1)
			}
			if got := tc.loss.Deriv2(tc.z); !rel(got, tc.d2) {
				t.Errorf("Deriv2(%v) = %v, want %v", tc.z, got, tc.d2)
			}
		})
	}
}

// TestLoss_FiniteDifferences checks Deriv against a central difference of
// Value and Deriv2 against a central difference of Deriv (gonum diff/fd,
// step 1e-6: truncation error O(h²·ℓ‴) ≈ 1e-12 plus rounding ≈ ε/h ≈ 1e-10;
// tolerance 1e-7). Points within 1e-4 of a kink are skipped.
func TestLoss_FiniteDifferences(t *testing.T) {
	t.Parallel()
	var zs []float64
	for z := -50.0; z <= 50; z += 0.37 {
		zs = append(zs, z)
	}
	zs = append(zs, -700, -300, -36, 36, 300, 700)
	settings := &fd.Settings{Formula: fd.Central, Step: 1e-6}
	for _, loss := range []Loss{Logistic{}, Huber{H: 0.5}, Huber{H: 0.1}, Huber{H: 2}} {
		kinks := []float64{}
		if h, ok := loss.(Huber); ok {
			kinks = []float64{1 - h.H, 1 + h.H}
		}
		for _, z := range zs {
			nearKink := false
			for _, k := range kinks {
				if math.Abs(z-k) < 1e-4 {
					nearKink = true
				}
			}
			if nearKink {
				continue
			}
			d1 := fd.Derivative(loss.Value, z, settings)
			if got := loss.Deriv(z); !closeTo(got, d1, 1e-7) {
				t.Errorf("%s: Deriv(%v) = %v, finite difference %v", loss.Name(), z, got, d1)
			}
			d2 := fd.Derivative(loss.Deriv, z, settings)
			if got := loss.Deriv2(z); !closeTo(got, d2, 1e-7) {
				t.Errorf("%s: Deriv2(%v) = %v, finite difference %v", loss.Name(), z, got, d2)
			}
		}
	}
}

// TestLoss_Bounds checks |ℓ′| ≤ Lipschitz and 0 ≤ ℓ″ ≤ Curvature on a grid,
// and that the curvature bound is attained (it is a supremum, not a loose
// bound): at z = 0 for logistic, on the quadratic piece for Huber.
func TestLoss_Bounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		loss     Loss
		c, at, L float64
	}{
		{Logistic{}, 0.25, 0, 1},
		{Huber{H: 0.5}, 1, 1, 1},
		{Huber{H: 0.1}, 5, 1, 1},
	} {
		if got := Curvature(tc.loss); got != tc.c {
			t.Errorf("Curvature(%s) = %v, want %v", tc.loss.Name(), got, tc.c)
		}
		if got := tc.loss.Deriv2(tc.at); got != tc.c {
			t.Errorf("%s: Deriv2(%v) = %v, want the bound %v", tc.loss.Name(), tc.at, got, tc.c)
		}
		for z := -60.0; z <= 60; z += 0.01 {
			if d := tc.loss.Deriv(z); math.Abs(d) > tc.L {
				t.Fatalf("%s: |Deriv(%v)| = %v > %v", tc.loss.Name(), z, d, tc.L)
			}
			if d2 := tc.loss.Deriv2(z); d2 < 0 || d2 > tc.c {
				t.Fatalf("%s: Deriv2(%v) = %v outside [0, %v]", tc.loss.Name(), z, d2, tc.c)
			}
		}
	}
	for _, tc := range []struct {
		loss Loss
		c, L float64
	}{
		{Hinge{}, math.Inf(1), 1},
		{Ramp{}, math.Inf(1), 1},
		{Squared{}, 1, math.Inf(1)},
	} {
		if got := Curvature(tc.loss); got != tc.c {
			t.Errorf("Curvature(%s) = %v, want %v", tc.loss.Name(), got, tc.c)
		}
		if got := Lipschitz(tc.loss); got != tc.L {
			t.Errorf("Lipschitz(%s) = %v, want %v", tc.loss.Name(), got, tc.L)
		}
	}
	if !math.IsNaN(Curvature(nil)) || !math.IsNaN(Curvature(Huber{})) {
		t.Errorf("Curvature(nil), Curvature(Huber{}) should be NaN")
	}
}

// TestExpNeg checks the fast exponential of the loss pass against math.Exp:
// relative error ≤ 1e-15 on [0, 708] (about 4.5 ulp; measured maximum 4.8e-16).
func TestExpNeg(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	xs := []float64{0, 1e-300, 1e-17, 0.5 * math.Ln2, math.Ln2, 1, 10, 700, 708}
	for k := 0; k < 200000; k++ {
		xs = append(xs, 708*rng.Float64(), 2*rng.Float64())
	}
	for _, x := range xs {
		got, want := expNeg(x), math.Exp(-x)
		if math.Abs(got-want) > 1e-15*want {
			t.Fatalf("expNeg(%v) = %v, math.Exp = %v", x, got, want)
		}
	}
	if got := expNeg(708.5); got != 0 {
		t.Errorf("expNeg(708.5) = %v, want 0", got)
	}
	if got := expNeg(math.Inf(1)); got != 0 {
		t.Errorf("expNeg(+Inf) = %v, want 0", got)
	}
	if got := expNeg(math.NaN()); !math.IsNaN(got) {
		t.Errorf("expNeg(NaN) = %v, want NaN", got)
	}
}

// TestEvalLoss checks the fused loss pass of Fit against the Loss methods,
// with and without weights (tolerance: the blocked log-of-products sum has
// absolute error ≤ a few ε per block; 1e-12 relative on the sum).
func TestEvalLoss(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	n := 1000
	m := make([]float64, n)
	y := make([]float64, n)
	omega := make([]float64, n)
	for i := range m {
		m[i] = 20 * rng.NormFloat64()
		if i%50 == 0 {
			m[i] = 900 * (rng.Float64() - 0.5) // huge margins
		}
		y[i] = float64(2*rng.IntN(2) - 1)
		omega[i] = float64(rng.IntN(3))
	}
	g1 := make([]float64, n)
	g2 := make([]float64, n)
	for _, loss := range []Loss{Logistic{}, Huber{H: 0.3}, testLoss{}} {
		for _, w := range [][]float64{nil, omega} {
			s := evalLoss(loss, m, y, w, g1, g2)
			var want float64
			for i, z := range m {
				o := 1.0
				if w != nil {
					o = w[i]
				}
				want += o * loss.Value(z)
				if !closeTo(g1[i], o*y[i]*loss.Deriv(z), 1e-14) || !closeTo(g2[i], o*loss.Deriv2(z), 1e-14) {
					t.Fatalf("%s: row %d: g1, g2 = %v, %v; want %v, %v", loss.Name(), i, g1[i], g2[i], o*y[i]*loss.Deriv(z), o*loss.Deriv2(z))
				}
			}
			if math.Abs(s-want) > 1e-12*math.Abs(want) {
				t.Errorf("%s (weighted %v): sum = %v, want %v", loss.Name(), w != nil, s, want)
			}
		}
	}
}

// testLoss is a smooth convex margin loss outside the package's fast paths
// (ℓ(z) = √(1+z²) − z, ℓ′ ∈ (−2, 0), ℓ″ = (1+z²)^(−3/2) ≤ 1), exercising the
// generic Loss-interface code of the solver.
type testLoss struct{}

func (testLoss) Value(z float64) float64  { return math.Sqrt(1+z*z) - z }
func (testLoss) Deriv(z float64) float64  { return z/math.Sqrt(1+z*z) - 1 }
func (testLoss) Deriv2(z float64) float64 { return math.Pow(1+z*z, -1.5) }
func (testLoss) Name() string             { return "test" }
func (testLoss) Curvature() float64       { return 1 }

// TestEvalLossWeightedLogistic checks the product-of-factors path for
// integer weights (bootstrap multiplicities, including 0 and weights above
// maxIntWeight that fall back to log1p) against the direct sum
// Σ ωᵢ·ℓ(zᵢ), and the derivatives against ℓ′ and ℓ″.
func TestEvalLossWeightedLogistic(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 71))
	const n = 50000
	m := make([]float64, n)
	y := make([]float64, n)
	w := make([]float64, n)
	g1 := make([]float64, n)
	g2 := make([]float64, n)
	var want float64
	l := Logistic{}
	for i := range m {
		m[i] = 30 * (rng.Float64() - 0.5)
		y[i] = 1
		if rng.IntN(2) == 0 {
			y[i] = -1
		}
		w[i] = float64(rng.IntN(5))
		if i%1000 == 0 {
			w[i] = float64(maxIntWeight + 1 + rng.IntN(3)) // the log1p fallback
		}
		if i%777 == 0 {
			w[i] = 0.5 // a non-integer weight
		}
		want += w[i] * l.Value(m[i])
	}
	got := evalLoss(l, m, y, w, g1, g2)
	if math.Abs(got-want) > 1e-12*want {
		t.Errorf("weighted loss %.17g, direct sum %.17g (rel. diff %.3g)", got, want, math.Abs(got-want)/want)
	}
	for i := range m {
		if d1 := w[i] * y[i] * l.Deriv(m[i]); math.Abs(g1[i]-d1) > 1e-15*math.Max(1, math.Abs(d1)) {
			t.Fatalf("g1[%d] = %v, want %v", i, g1[i], d1)
		}
		if d2 := w[i] * l.Deriv2(m[i]); math.Abs(g2[i]-d2) > 1e-15*math.Max(1, math.Abs(d2)) {
			t.Fatalf("g2[%d] = %v, want %v", i, g2[i], d2)
		}
	}
}
