package histogram

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// Density is a known density on [0, 1], for synthetic data whose integrated
// squared error can be computed exactly.
type Density interface {
	// CDF returns F(x) = ∫₀ˣ f.
	CDF(x float64) float64
	// L2Squared returns ∫ f².
	L2Squared() float64
	// Rand draws one point from f using rng.
	Rand(rng *rand.Rand) float64
}

// ISE returns the integrated squared error ∫ (f̂ − f)² of e against the
// known density f, exactly (Eq. 5):
//
//	∫ f² + ∫ f̂² − 2·Σᵢ Dens[i]·(F(ih) − F((i−1)h)).
func ISE(e Estimate, f Density) float64 {
	h := e.Width()
	var cross float64
	prev := f.CDF(0)
	for i, d := range e.Dens {
		next := f.CDF(float64(i+1) * h)
		cross += d * (next - prev)
		prev = next
	}
	return f.L2Squared() + e.L2Squared() - 2*cross
}

// BetaMixture is the density Σₖ W[k]·Beta(A[k], B[k]) on [0, 1]. A single
// component with A = B = 1 is the uniform density. Every A[k], B[k] must
// be > 1/2 so that ∫ f² is finite.
type BetaMixture struct {
	W, A, B []float64
}

// Validate reports whether m is a valid mixture: equal lengths ≥ 1, weights
// ≥ 0 summing to 1 (within 1e-12), shapes finite and > 1/2.
func (m BetaMixture) Validate() error {
	if len(m.W) == 0 || len(m.A) != len(m.W) || len(m.B) != len(m.W) {
		return fmt.Errorf("histogram: beta mixture: %d weights, %d a, %d b: want equal lengths >= 1", len(m.W), len(m.A), len(m.B))
	}
	var s float64
	for k, w := range m.W {
		if !(w >= 0) || math.IsInf(w, 1) {
			return fmt.Errorf("histogram: beta mixture: weight %d = %v", k, w)
		}
		if !(m.A[k] > 0.5 && m.B[k] > 0.5) || math.IsInf(m.A[k], 1) || math.IsInf(m.B[k], 1) {
			return fmt.Errorf("histogram: beta mixture: component %d has shapes (%v, %v); need finite and > 1/2", k, m.A[k], m.B[k])
		}
		s += w
	}
	if math.Abs(s-1) > 1e-12 {
		return fmt.Errorf("histogram: beta mixture: weights sum to %v, want 1", s)
	}
	return nil
}

// CDF implements Density.
func (m BetaMixture) CDF(x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	var s float64
	for k, w := range m.W {
		s += w * mathext.RegIncBeta(m.A[k], m.B[k], x)
	}
	return s
}

// PDF returns f(x).
func (m BetaMixture) PDF(x float64) float64 {
	var s float64
	for k, w := range m.W {
		s += w * distuv.Beta{Alpha: m.A[k], Beta: m.B[k]}.Prob(x) // lint:nosrc (density only)
	}
	return s
}

// L2Squared implements Density exactly: ∫ fⱼ·fₖ = B(aⱼ+aₖ−1, bⱼ+bₖ−1) /
// (B(aⱼ, bⱼ)·B(aₖ, bₖ)) for Beta densities fⱼ, fₖ.
func (m BetaMixture) L2Squared() float64 {
	var s float64
	for j, wj := range m.W {
		for k, wk := range m.W {
			lb := mathext.Lbeta(m.A[j]+m.A[k]-1, m.B[j]+m.B[k]-1) - mathext.Lbeta(m.A[j], m.B[j]) - mathext.Lbeta(m.A[k], m.B[k])
			s += wj * wk * math.Exp(lb)
		}
	}
	return s
}

// Rand implements Density: a component chosen by weight, then a Beta draw
// (gonum's sampler with Src = rng).
func (m BetaMixture) Rand(rng *rand.Rand) float64 {
	u := rng.Float64()
	k := 0
	for c := m.W[0]; k < len(m.W)-1 && u >= c; c += m.W[k] {
		k++
	}
	return distuv.Beta{Alpha: m.A[k], Beta: m.B[k], Src: rng}.Rand()
}

// Densities are the named synthetic densities of the histogram experiment:
// the uniform density (every width is unbiased; the smallest variance wins),
// a skewed Beta(2, 5), and a bimodal mixture 0.4·Beta(2, 10) + 0.6·Beta(12, 3)
// whose modes need narrow bins.
var Densities = map[string]BetaMixture{
	"uniform":   {W: []float64{1}, A: []float64{1}, B: []float64{1}},
	"beta(2,5)": {W: []float64{1}, A: []float64{2}, B: []float64{5}},
	"bimodal":   {W: []float64{0.4, 0.6}, A: []float64{2, 12}, B: []float64{10, 3}},
}
