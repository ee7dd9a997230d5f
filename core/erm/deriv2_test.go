package erm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// wrapped hides a loss's concrete type, so fillDeriv2 takes its generic
// branch.
type wrapped struct{ Loss }

// TestFillDeriv2_SameBits: the static branches of fillDeriv2 give
// loss.Deriv2 bit for bit (the kinks of the Huber loss, ±0, ±Inf and
// random margins), and Objective.Hessian on weighted rows equals the
// per-row products ωᵢ·ℓ″(mᵢ) it was computed from before.
func TestFillDeriv2_SameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	z := []float64{0, math.Copysign(0, -1), 1, 0, 2, -1, 1e-300, 40, -40, 800, -800, math.Inf(1), math.Inf(-1)}
	for range 500 {
		z = append(z, 10*rng.NormFloat64())
	}
	for _, loss := range []Loss{Logistic{}, Huber{H: 1}, Huber{H: 0.5}, Hinge{}} {
		got := append([]float64(nil), z...)
		fillDeriv2(loss, got)
		for i, v := range z {
			if want := loss.Deriv2(v); math.Float64bits(got[i]) != math.Float64bits(want) {
				t.Errorf("%s: Deriv2(%v) = %v by fillDeriv2, %v by the method", loss.Name(), v, got[i], want)
			}
		}
	}
	const n, d = 300, 4
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	wt := make([]float64, n)
	for i := range y {
		for j := 0; j < d; j++ {
			X.Set(i, j, rng.NormFloat64()/3)
		}
		y[i] = float64(2*rng.IntN(2) - 1)
		wt[i] = float64(rng.IntN(4)) + 0.5
	}
	w := []float64{0.3, -1.2, 0.7, 2}
	for _, weights := range [][]float64{nil, wt} {
		rows := NewRows(X, y, nil)
		if weights != nil {
			rows = rows.WithWeights(weights)
		}
		for _, loss := range []Loss{Logistic{}, Huber{H: 1}} {
			o := Objective{Loss: loss, Lambda: 0.01}
			got := o.Hessian(nil, rows, w)
			ref := Objective{Loss: wrapped{loss}, Lambda: 0.01}
			m := make([]float64, rows.n)
			rows.margins(m, w, rows.y)
			for i, v := range m {
				m[i] = rows.Weight(i) * loss.Deriv2(v)
			}
			h := make([]float64, d*d)
			buildHessian(h, rows, m, nil, ref.Lambda, 1/rows.sumW)
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					if a, b := got.At(i, j), h[i*d+j]; math.Float64bits(a) != math.Float64bits(b) {
						t.Errorf("%s, weighted %v: H[%d][%d] = %v, want %v", loss.Name(), weights != nil, i, j, a, b)
					}
				}
			}
			if gw := ref.Hessian(nil, rows, w); !equalBits(gw.RawSymmetric().Data, got.RawSymmetric().Data) {
				t.Errorf("%s, weighted %v: the generic branch differs from the static one", loss.Name(), weights != nil)
			}
		}
	}
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestHessians_SameBits: Hessians equals Objective.Hessian of each
// objective bit for bit, on dense and on sparse rows (the pair pass of
// two objectives over sparse rows, rows of zero curvature in one or both
// included: Huber's ℓ″ vanishes off its band, and zero weights), and for
// one or three objectives.
func TestHessians_SameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 5))
	const n, d = 400, 6
	for _, sparse := range []bool{false, true} {
		X := mat.NewDense(n, d, nil)
		y := make([]float64, n)
		wt := make([]float64, n)
		for i := range y {
			for j := 0; j < d; j++ {
				if sparse && j >= 2 && rng.IntN(3) > 0 {
					continue
				}
				X.Set(i, j, rng.NormFloat64()/3)
			}
			y[i] = float64(2*rng.IntN(2) - 1)
			wt[i] = float64(rng.IntN(3))
		}
		w := []float64{0.3, -1.2, 0.7, 2, -0.5, 1}
		for _, weights := range [][]float64{nil, wt} {
			rows := NewRows(X, y, nil)
			if weights != nil {
				rows = rows.WithWeights(weights)
			}
			if sparse == (len(rows.dcols) == d) {
				t.Fatalf("sparse %v: %d of %d columns dense", sparse, len(rows.dcols), d)
			}
			objs := []Objective{{Loss: Logistic{}, Lambda: 0.01}, {Loss: Huber{H: 0.5}}, {Loss: wrapped{Huber{H: 1}}, Lambda: 0.1, ExtraL2: 0.2}}
			for _, set := range [][]Objective{objs[:2], objs[1:], objs[:1], objs} {
				got := Hessians(rows, w, set...)
				for k, o := range set {
					want := o.Hessian(nil, rows, w)
					if !equalBits(got[k].RawSymmetric().Data, want.RawSymmetric().Data) {
						t.Errorf("sparse %v, weighted %v, %d objectives: Hessian %d differs", sparse, weights != nil, len(set), k)
					}
				}
			}
		}
	}
}
