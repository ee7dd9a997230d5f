package erm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// refLogisticLoop is the unweighted logistic loop of evalLoss as it was
// before logisticPass (commit 0aa4116), kept verbatim as the reference that
// logisticPass must reproduce bit for bit.
func refLogisticLoop(m, y, g1, g2 []float64) float64 {
	var hinge, logs float64
	prod, cnt := 1.0, 0
	for i, z := range m {
		e := expNeg(math.Abs(z))
		r := 1 / (1 + e)
		d1 := -e * r
		var hz float64
		if z < 0 {
			hz = -z
			d1 = -r
		}
		d2 := e * r * r
		hinge += hz
		prod *= 1 + e
		cnt++
		if cnt == 32 {
			logs += math.Log(prod)
			prod, cnt = 1, 0
		}
		g1[i] = y[i] * d1
		g2[i] = d2
	}
	return hinge + logs + math.Log(prod)
}

// TestLogisticPass_BitIdentical checks that the unweighted logistic pass
// returns the same loss sum and derivatives, bit for bit, as the loop it
// replaced, on margins of every regime: typical (|z| < 10), large (up to
// the 708 cut of expNeg and beyond), ±0, and lengths that are and are not
// multiples of the 32-row log blocks; both with the margins given and
// formed in the pass as m + t·q (a line-search trial).
func TestLogisticPass_BitIdentical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 1))
	for _, n := range []int{0, 1, 31, 32, 33, 64, 1000, 15216} {
		m, y := make([]float64, n), make([]float64, n)
		for i := range m {
			switch rng.IntN(10) {
			case 0:
				m[i] = (rng.Float64() - 0.5) * 1600 // beyond ±708 sometimes
			case 1:
				m[i] = math.Copysign(0, rng.Float64()-0.5)
			default:
				m[i] = rng.NormFloat64() * 3
			}
			y[i] = float64(2*rng.IntN(2) - 1)
		}
		for _, trial := range []bool{false, true} {
			g1, g2 := make([]float64, n), make([]float64, n)
			r1, r2 := make([]float64, n), make([]float64, n)
			var got, want float64
			if trial {
				// A line-search trial: margins m + t·q formed in the pass
				// against AddScaledTo followed by the reference loop.
				q, dst, ref := make([]float64, n), make([]float64, n), make([]float64, n)
				for i := range q {
					q[i] = rng.NormFloat64()
				}
				const step = 0.37
				got = logisticPass(dst, m, step, q, y, g1, g2)
				floats.AddScaledTo(ref, m, step, q)
				want = refLogisticLoop(ref, y, r1, r2)
				for i := range ref {
					if math.Float64bits(dst[i]) != math.Float64bits(ref[i]) {
						t.Fatalf("n=%d row %d: trial margin %v, AddScaledTo %v", n, i, dst[i], ref[i])
					}
				}
			} else {
				got = logisticPass(nil, m, 0, nil, y, g1, g2)
				want = refLogisticLoop(m, y, r1, r2)
			}
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("n=%d trial=%v: sum %v, reference %v", n, trial, got, want)
			}
			for i := range m {
				if math.Float64bits(g1[i]) != math.Float64bits(r1[i]) || math.Float64bits(g2[i]) != math.Float64bits(r2[i]) {
					t.Fatalf("n=%d trial=%v row %d: g1,g2 = %v,%v, reference %v,%v", n, trial, i, g1[i], g2[i], r1[i], r2[i])
				}
			}
		}
	}
}

// TestLogisticZero_BitIdentical checks the cached cold-start state of Fit
// (margins, ℓ′, ℓ″, loss sum and data gradient at w = 0) against the
// passes it replaces — margins, logisticPass and mulTransAdd at w = 0 —
// bit for bit, on dense, sparse and mixed designs, twice (computed, then
// cached).
func TestLogisticZero_BitIdentical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 2))
	for name, r := range testDesigns(rng) {
		n, d := r.N(), r.D()
		m, g1, g2 := make([]float64, n), make([]float64, n), make([]float64, n)
		r.margins(m, make([]float64, d), r.y)
		wantLoss := logisticPass(nil, m, 0, nil, r.y, g1, g2)
		wantGrad := make([]float64, d)
		r.mulTransAdd(wantGrad, g1)
		for round := 0; round < 2; round++ {
			zm, z1, z2 := make([]float64, n), make([]float64, n), make([]float64, n)
			loss, grad := r.logisticZero(zm, z1, z2)
			if math.Float64bits(loss) != math.Float64bits(wantLoss) {
				t.Errorf("%s round %d: loss %v, want %v", name, round, loss, wantLoss)
			}
			for j := range grad {
				if math.Float64bits(grad[j]) != math.Float64bits(wantGrad[j]) {
					t.Errorf("%s round %d: grad[%d] = %v, want %v", name, round, j, grad[j], wantGrad[j])
				}
			}
			for i := range zm {
				if math.Float64bits(zm[i]) != math.Float64bits(m[i]) || math.Float64bits(z1[i]) != math.Float64bits(g1[i]) ||
					math.Float64bits(z2[i]) != math.Float64bits(g2[i]) {
					t.Fatalf("%s round %d row %d: m,g1,g2 = %v,%v,%v, want %v,%v,%v", name, round, i, zm[i], z1[i], z2[i], m[i], g1[i], g2[i])
				}
			}
		}
	}
}
