package mech

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestSphericalLaplace_InvalidParams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		d         int
		gamma     float64
		wantParam string
	}{
		{"empty dst", 0, 1, "len(dst)"},
		{"gamma NaN", 3, math.NaN(), "gamma"},
		{"gamma +Inf", 3, math.Inf(1), "gamma"},
		{"gamma -Inf", 3, math.Inf(-1), "gamma"},
		{"gamma 0", 3, 0, "gamma"},
		{"gamma negative", 3, -2, "gamma"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]float64, tt.d)
			for i := range dst {
				dst[i] = float64(i + 1)
			}
			orig := slices.Clone(dst)
			err := SphericalLaplace(dst, newRNG(50), tt.gamma)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != tt.wantParam {
				t.Fatalf("error = %v, want *ParamError on %s", err, tt.wantParam)
			}
			if !slices.Equal(dst, orig) {
				t.Errorf("dst modified on error: %v", dst)
			}
		})
	}
}

func TestSphericalLaplace_Distribution(t *testing.T) {
	t.Parallel()
	const n = 100_000
	tests := []struct {
		name  string
		d     int
		gamma float64
	}{
		{"d=1", 1, 2},
		{"d=3", 3, 0.5},
		{"d=10", 10, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, g := float64(tt.d), tt.gamma
			// Checks: norm mean, norm variance, and per coordinate the mean
			// of u_i, the mean of u_i² and P(b_i > 0): 2 + 3d checks,
			// Bonferroni, normal approximation of means of n iid terms. The
			// skewness of (‖b‖ − μ)² inflates one tail of the variance
			// check by under 2× at this n (Cramér's correction for d = 1),
			// inside the Bonferroni budget.
			z := zCrit(2 + 3*tt.d)
			for _, seed := range testSeeds(51) {
				rng := newRNG(seed)
				b := make([]float64, tt.d)
				var sumR, sumR2 float64
				sumU := make([]float64, tt.d)
				sumU2 := make([]float64, tt.d)
				pos := make([]int, tt.d)
				for range n {
					if err := SphericalLaplace(b, rng, tt.gamma); err != nil {
						t.Fatal(err)
					}
					var ss float64
					for _, v := range b {
						ss += v * v
					}
					r := math.Sqrt(ss)
					sumR += r
					sumR2 += r * r
					for i, v := range b {
						u := v / r
						sumU[i] += u
						sumU2[i] += u * u
						if v > 0 {
							pos[i]++
						}
					}
				}
				// ‖b‖ ~ Gamma(shape d, rate γ): mean d/γ, variance d/γ², so
				// se of the mean √(d/n)/γ.
				meanR := sumR / n
				checkWithin(t, "mean ‖b‖", meanR, d/g, z*math.Sqrt(d/n)/g)
				// Sample variance (biased form; the n/(n−1) factor is 2e-5
				// relative, far inside the tolerance). Fourth central
				// moment of Gamma: 3d(d+2)/γ⁴, so Var(s²) ≈ (3d²+6d − d²)/(nγ⁴)
				// and se = √((2d² + 6d)/n)/γ².
				varR := sumR2/n - meanR*meanR
				checkWithin(t, "var ‖b‖", varR, d/(g*g), z*math.Sqrt((2*d*d+6*d)/n)/(g*g))
				for i := range tt.d {
					// u uniform on the sphere: E[u_i] = 0, Var(u_i) = 1/d,
					// so se of the mean is 1/√(d n).
					checkWithin(t, "mean u_"+formatFloat(float64(i)), sumU[i]/n, 0, z/math.Sqrt(d*n))
					// E[u_i²] = 1/d and E[u_i⁴] = 3/(d(d+2)), so
					// Var(u_i²) = (2d − 2)/(d²(d+2)); zero for d = 1, where
					// u_1² = 1 exactly (allow rounding of n terms).
					varU2 := (2*d - 2) / (d * d * (d + 2))
					checkWithin(t, "mean u_"+formatFloat(float64(i))+"²", sumU2[i]/n, 1/d, z*math.Sqrt(varU2/n)+1e-12)
					// Symmetry: P(b_i > 0) = 1/2.
					checkProportion(t, "P(b_"+formatFloat(float64(i))+" > 0)", pos[i], n, 0.5, z)
				}
			}
		})
	}
}

func TestSphericalLaplace_OneDimIsLaplace(t *testing.T) {
	t.Parallel()
	// For d = 1 the density exp(−γ|b|) is Lap(0, 1/γ), so
	// P(|b| > ln 20/γ) = 0.05 and P(b ≤ 1/γ) = 1 − e⁻¹/2. Two binomial checks.
	const (
		n     = 200_000
		gamma = 0.5
	)
	z := zCrit(2)
	for _, seed := range testSeeds(52) {
		rng := newRNG(seed)
		b := make([]float64, 1)
		tail, below := 0, 0
		for range n {
			if err := SphericalLaplace(b, rng, gamma); err != nil {
				t.Fatal(err)
			}
			if math.Abs(b[0]) > math.Log(20)/gamma {
				tail++
			}
			if b[0] <= 1/gamma {
				below++
			}
		}
		checkProportion(t, "P(|b| > ln 20/γ)", tail, n, 0.05, z)
		checkProportion(t, "P(b <= 1/γ)", below, n, 1-math.Exp(-1)/2, z)
	}
}

// TestGammaShapeAtLeast1 checks that the local gamma sampler draws what
// gonum's distuv.Gamma.Rand draws from the same stream, bit for bit, and
// leaves the stream at the same place, for the shapes of the spherical
// Laplace draws (d = 1, 2, 11, 100) and a non-integer one.
func TestGammaShapeAtLeast1(t *testing.T) {
	for _, a := range []float64{1, 2, 11, 30.5, 100} {
		for _, b := range []float64{0.01, 1, 37} {
			r1 := rand.New(rand.NewChaCha8([32]byte{byte(a), byte(b)}))
			r2 := rand.New(rand.NewChaCha8([32]byte{byte(a), byte(b)}))
			for i := 0; i < 2000; i++ {
				got := gammaShapeAtLeast1(r1, a, b)
				want := distuv.Gamma{Alpha: a, Beta: b, Src: r2}.Rand()
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("shape %v, rate %v, draw %d: %v, gonum %v", a, b, i, got, want)
				}
			}
			if r1.Uint64() != r2.Uint64() {
				t.Fatalf("shape %v, rate %v: the streams diverged", a, b)
			}
		}
	}
}
