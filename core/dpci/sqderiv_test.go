package dpci

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprepro/dprepro/core/erm"
	"gonum.org/v1/gonum/mat"
)

// TestSqDeriv_FillDeriv2: the batch ℓ′² of GradCov's pseudo-loss is its
// Deriv2 bit for bit, for the losses of both models and a generic one.
func TestSqDeriv_FillDeriv2(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	z := []float64{0, math.Copysign(0, -1), 1, 0, 2, -1, 40, -40, 800, -800, math.Inf(1), math.Inf(-1)}
	for range 500 {
		z = append(z, 10*rng.NormFloat64())
	}
	for _, loss := range []erm.Loss{erm.Logistic{}, erm.Huber{H: 1}, erm.Huber{H: 0.25}, erm.Hinge{}} {
		l := sqDeriv{loss}
		got := append([]float64(nil), z...)
		l.FillDeriv2(got)
		for i, v := range z {
			if want := l.Deriv2(v); math.Float64bits(got[i]) != math.Float64bits(want) {
				t.Errorf("%s: %v: FillDeriv2 %v, Deriv2 %v", loss.Name(), v, got[i], want)
			}
		}
	}
}

// TestHessianGradCov_SameBits: PrivMatrices' shared-margins pair equals
// Hessian and GradCov computed apart, bit for bit, for both models, on
// unweighted and weighted rows.
func TestHessianGradCov_SameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 4))
	thetaStar := []float64{0.8, -0.4, 0.3, 0.1}
	X, y := plantedData(rng, 500, thetaStar)
	wt := make([]float64, len(y))
	for i := range wt {
		wt[i] = float64(rng.IntN(3))
	}
	theta := []float64{0.5, -0.2, 0.1, 0.05}
	for _, weighted := range []bool{false, true} {
		rows := erm.NewRows(X, y, nil)
		if weighted {
			rows = rows.WithWeights(wt)
		}
		for _, p := range []Params{{Model: LR, C: 1e-3}, {Model: SVM, H: 0.5, C: 1e-2}} {
			h, s, err := hessianGradCov(rows, p, theta)
			if err != nil {
				t.Fatal(err)
			}
			wh, err := Hessian(rows, p, theta)
			if err != nil {
				t.Fatal(err)
			}
			ws, err := GradCov(rows, p, theta)
			if err != nil {
				t.Fatal(err)
			}
			for i := range theta {
				for j := range theta {
					if math.Float64bits(h.At(i, j)) != math.Float64bits(wh.At(i, j)) || math.Float64bits(s.At(i, j)) != math.Float64bits(ws.At(i, j)) {
						t.Errorf("%s weighted %v: (%d,%d): H %v / %v, Sigma %v / %v", p.Model, weighted, i, j, h.At(i, j), wh.At(i, j), s.At(i, j), ws.At(i, j))
					}
				}
			}
		}
	}
}

// TestMatVecAdd_SameBits: the two-rows-at-a-time product equals the plain
// left-to-right loop bit for bit, for odd and even sizes and a stride
// longer than a row.
func TestMatVecAdd_SameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 6))
	for _, d := range []int{1, 2, 3, 10, 11} {
		for _, stride := range []int{d, d + 3} {
			a := make([]float64, d*stride)
			for i := range a {
				a[i] = rng.NormFloat64() * math.Exp(10*rng.NormFloat64())
			}
			g := make([]float64, d)
			z := make([]float64, d)
			for i := range g {
				g[i] = rng.NormFloat64()
				z[i] = rng.NormFloat64()
			}
			want := make([]float64, d)
			for j := range want {
				s := z[j]
				for k, v := range a[j*stride : j*stride+d] {
					s += v * g[k]
				}
				want[j] = s
			}
			matVecAdd(z, a, stride, g)
			for j := range z {
				if math.Float64bits(z[j]) != math.Float64bits(want[j]) {
					t.Errorf("d = %d, stride = %d: z[%d] = %v, want %v", d, stride, j, z[j], want[j])
				}
			}
		}
	}
}

// TestMatVecAddLower checks the triangular product of the Monte Carlo
// draws against a plain loop over a lower-triangular a (its upper
// triangle holding garbage that must not be read), and lowerFactor: L
// lower triangular with L·Lᵀ = a·aᵀ (to rounding), and a kept when a·aᵀ is
// singular.
func TestMatVecAddLower(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 6))
	for _, d := range []int{1, 2, 3, 10, 11} {
		for _, stride := range []int{d, d + 3} {
			a := make([]float64, d*stride)
			for i := range a {
				a[i] = rng.NormFloat64()
			}
			g := make([]float64, d)
			z := make([]float64, d)
			for i := range g {
				g[i] = rng.NormFloat64()
				z[i] = rng.NormFloat64()
			}
			want := make([]float64, d)
			for j := range want {
				s := z[j]
				for k := 0; k <= j; k++ {
					s += a[j*stride+k] * g[k]
				}
				want[j] = s
			}
			matVecAddLower(z, a, stride, g)
			for j := range z {
				if math.Abs(z[j]-want[j]) > 1e-12*(1+math.Abs(want[j])) {
					t.Errorf("d = %d, stride = %d: z[%d] = %v, want %v", d, stride, j, z[j], want[j])
				}
			}
		}
		a := mat.NewDense(d, d, nil)
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				a.Set(i, j, rng.NormFloat64())
			}
		}
		l, ok := lowerFactor(a)
		if !ok {
			t.Fatalf("d = %d: no factor of a full-rank a·aᵀ", d)
		}
		var aat, llt mat.Dense
		aat.Mul(a, a.T())
		llt.Mul(l, l.T())
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				if j > i && l.At(i, j) != 0 {
					t.Fatalf("d = %d: L[%d][%d] = %v above the diagonal", d, i, j, l.At(i, j))
				}
				if math.Abs(aat.At(i, j)-llt.At(i, j)) > 1e-10*(1+math.Abs(aat.At(i, j))) {
					t.Errorf("d = %d: (L·Lᵀ)[%d][%d] = %v, a·aᵀ %v", d, i, j, llt.At(i, j), aat.At(i, j))
				}
			}
		}
		if d > 1 {
			a.SetRow(0, make([]float64, d)) // (a·aᵀ)₀₀ = 0: no factor (a rank-deficient a·aᵀ whose pivots round to > 0 is factored, to rounding)
			if got, ok := lowerFactor(a); ok || got != a {
				t.Errorf("d = %d: singular a·aᵀ: ok = %v, want a itself back", d, ok)
			}
		}
	}
}
