package erm

import "math"

// Loss is a margin loss ℓ(z) of the margin z = y·wᵀx, as in the empirical risk
// minimization problems of [CMS11] Section 2. Value, Deriv and Deriv2 return
// ℓ(z), ℓ′(z) and ℓ″(z); where ℓ is not differentiable they return a
// subgradient (Deriv) or 0 (Deriv2), as documented per type. Name returns a
// short stable identifier for result rows.
//
// Implementations are stateless values and safe for concurrent use.
//
// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
type Loss interface {
	Value(z float64) float64
	Deriv(z float64) float64
	Deriv2(z float64) float64
	Name() string
}

// Logistic is the logistic loss
//
//	ℓ(z)  = log(1 + exp(−z))
//	ℓ′(z) = −1/(1 + exp(z))
//	ℓ″(z) = exp(−|z|)/(1 + exp(−|z|))²  ≤  1/4
//
// It is convex, 1-Lipschitz (|ℓ′| < 1) and has curvature bound c = sup ℓ″ =
// 1/4 ([CMS11] Section 3.4.1, regularized logistic regression).
//
// All three functions are evaluated through e = exp(−|z|) ∈ (0, 1], so none
// overflows for any finite z: ℓ(z) = max(−z, 0) + log1p(e). For z → −∞, ℓ(z)
// ≈ −z exactly in float64; for z → +∞, ℓ(z) ≈ e, with full relative accuracy.
//
// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
type Logistic struct{}

// Value returns log(1 + exp(−z)) without overflow.
func (Logistic) Value(z float64) float64 {
	e := math.Exp(-math.Abs(z))
	return math.Max(-z, 0) + math.Log1p(e)
}

// Deriv returns ℓ′(z) = −1/(1 + exp(z)), in (−1, 0).
func (Logistic) Deriv(z float64) float64 {
	e := math.Exp(-math.Abs(z))
	if z >= 0 {
		return -e / (1 + e)
	}
	return -1 / (1 + e)
}

// Deriv2 returns ℓ″(z) = σ(z)σ(−z), in (0, 1/4].
func (Logistic) Deriv2(z float64) float64 {
	e := math.Exp(-math.Abs(z))
	r := 1 / (1 + e)
	return e * r * r
}

// Name returns "logistic".
func (Logistic) Name() string { return "logistic" }

// Curvature returns c = sup ℓ″ = 1/4.
func (Logistic) Curvature() float64 { return 0.25 }

// Lipschitz returns sup |ℓ′| = 1.
func (Logistic) Lipschitz() float64 { return 1 }

// Huber is the Huber-smoothed hinge loss of [CMS11] Eq. (7), with smoothing
// width H:
//
//	ℓ(z) = 0                      if z > 1 + H
//	       (1 + H − z)² / (4H)    if |1 − z| ≤ H
//	       1 − z                  if z < 1 − H
//
// It is convex, differentiable, 1-Lipschitz, and ℓ″ (piecewise 0 or 1/(2H))
// is bounded by the curvature c = 1/(2H). Deriv2 returns 1/(2H) on the closed
// quadratic piece |1 − z| ≤ H, the upper one-sided value at the two kinks.
//
// H: required, finite and > 0 (a zero H is the hinge loss; use [Hinge]). The
// methods do not validate H; [Fit] and the perturb package do.
//
// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
type Huber struct {
	H float64
}

// Value returns the Huber-hinge loss at z.
func (l Huber) Value(z float64) float64 {
	switch {
	case z > 1+l.H:
		return 0
	case z < 1-l.H:
		return 1 - z
	default:
		u := 1 + l.H - z
		return u * u / (4 * l.H)
	}
}

// Deriv returns ℓ′(z) ∈ [−1, 0].
func (l Huber) Deriv(z float64) float64 {
	switch {
	case z > 1+l.H:
		return 0
	case z < 1-l.H:
		return -1
	default:
		return -(1 + l.H - z) / (2 * l.H)
	}
}

// Deriv2 returns ℓ″(z): 1/(2H) on |1 − z| ≤ H, else 0.
func (l Huber) Deriv2(z float64) float64 {
	if z > 1+l.H || z < 1-l.H {
		return 0
	}
	return 1 / (2 * l.H)
}

// Name returns "huber".
func (Huber) Name() string { return "huber" }

// Curvature returns c = 1/(2H).
func (l Huber) Curvature() float64 { return 1 / (2 * l.H) }

// Lipschitz returns sup |ℓ′| = 1.
func (Huber) Lipschitz() float64 { return 1 }

// Hinge is the hinge loss ℓ(z) = max(0, 1 − z) of the support vector machine.
// It is convex and 1-Lipschitz but not differentiable at z = 1: Deriv returns
// the subgradient −1 for z < 1 and 0 for z ≥ 1, and Deriv2 returns 0. Its
// curvature is unbounded (+Inf), so [Fit] and objective perturbation reject
// it; it is provided for scoring and for output-perturbation-style uses.
type Hinge struct{}

// Value returns max(0, 1 − z).
func (Hinge) Value(z float64) float64 { return math.Max(0, 1-z) }

// Deriv returns a subgradient: −1 if z < 1, else 0.
func (Hinge) Deriv(z float64) float64 {
	if z < 1 {
		return -1
	}
	return 0
}

// Deriv2 returns 0 (the distributional second derivative at z = 1 is ignored).
func (Hinge) Deriv2(float64) float64 { return 0 }

// Name returns "hinge".
func (Hinge) Name() string { return "hinge" }

// Curvature returns +Inf: ℓ″ is unbounded (a Dirac mass at z = 1).
func (Hinge) Curvature() float64 { return math.Inf(1) }

// Lipschitz returns 1.
func (Hinge) Lipschitz() float64 { return 1 }

// Ramp is the ramp loss ℓ(z) = min(1, max(0, 1 − z)) used as a bounded,
// 1-Lipschitz validation score by [CV13] Section 4.1 (Eq. (3) with g = ramp).
// It is not convex; [Fit] rejects it. Deriv returns −1 on 0 < z < 1 and 0
// elsewhere (one-sided choice at the kinks); Deriv2 returns 0.
//
// [CV13]: https://proceedings.neurips.cc/paper/2013
type Ramp struct{}

// Value returns min(1, max(0, 1 − z)).
func (Ramp) Value(z float64) float64 { return math.Min(1, math.Max(0, 1-z)) }

// Deriv returns −1 on (0, 1), else 0.
func (Ramp) Deriv(z float64) float64 {
	if z > 0 && z < 1 {
		return -1
	}
	return 0
}

// Deriv2 returns 0.
func (Ramp) Deriv2(float64) float64 { return 0 }

// Name returns "ramp".
func (Ramp) Name() string { return "ramp" }

// Curvature returns +Inf (the ramp loss is not twice differentiable).
func (Ramp) Curvature() float64 { return math.Inf(1) }

// Lipschitz returns 1.
func (Ramp) Lipschitz() float64 { return 1 }

// Squared is the squared error ℓ(r) = r²/2 of the residual r = y − wᵀx, for
// ridge regression. It is not a margin loss: its argument is the residual,
// not y·wᵀx. It satisfies [Loss] so that it can be named in specs and result
// rows, but [Fit] rejects it; ridge problems are solved in closed form by
// [FitRidge].
type Squared struct{}

// Value returns r²/2.
func (Squared) Value(r float64) float64 { return 0.5 * r * r }

// Deriv returns r.
func (Squared) Deriv(r float64) float64 { return r }

// Deriv2 returns 1.
func (Squared) Deriv2(float64) float64 { return 1 }

// Name returns "squared".
func (Squared) Name() string { return "squared" }

// Curvature returns 1.
func (Squared) Curvature() float64 { return 1 }

// Lipschitz returns +Inf (the squared loss is not Lipschitz).
func (Squared) Lipschitz() float64 { return math.Inf(1) }

// Curvature returns the curvature bound c = sup_z ℓ″(z) of l, as used by
// objective perturbation ([CMS11] Algorithm 2). It returns +Inf for losses
// that are not twice differentiable with bounded ℓ″ ([Hinge], [Ramp]) and for
// any Loss without a Curvature() float64 method, and NaN for a nil Loss or a
// [Huber] with invalid H.
//
// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
func Curvature(l Loss) float64 {
	if l == nil {
		return math.NaN()
	}
	if h, ok := l.(Huber); ok && !validHuberH(h.H) {
		return math.NaN()
	}
	if c, ok := l.(interface{ Curvature() float64 }); ok {
		return c.Curvature()
	}
	return math.Inf(1)
}

// Lipschitz returns L = sup_z |ℓ′(z)| for l: 1 for the margin losses of this
// package, +Inf for [Squared] and for any Loss without a Lipschitz() float64
// method, NaN for a nil Loss. Output perturbation and the stability bounds of
// [CV13] Theorem 4 require L ≤ 1.
//
// [CV13]: https://proceedings.neurips.cc/paper/2013
func Lipschitz(l Loss) float64 {
	if l == nil {
		return math.NaN()
	}
	if c, ok := l.(interface{ Lipschitz() float64 }); ok {
		return c.Lipschitz()
	}
	return math.Inf(1)
}

func validHuberH(h float64) bool { return h > 0 && !math.IsInf(h, 1) }
