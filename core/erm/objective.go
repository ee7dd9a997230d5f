package erm

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ErrUnsupportedLoss reports a loss that [Fit] cannot minimize: one that is
// not twice differentiable with bounded ℓ″ (hinge, ramp), not convex (ramp),
// not a margin loss (squared; use [FitRidge]), or a [Huber] with H ≤ 0.
var ErrUnsupportedLoss = errors.New("erm: loss not supported by the Newton solver")

// Objective is the regularized, linearly perturbed empirical risk
//
//	J(w) = (Lambda/2)‖w‖² + (1/N)·Σᵢ ωᵢ·ℓ(yᵢ·xᵢᵀw) + Linearᵀw + (ExtraL2/2)‖w‖²
//
// over the rows of a [Rows] value, with N = Σᵢ ωᵢ ([Rows.SumWeights]). With
// Linear = b/n and ExtraL2 = Δ it is the objective-perturbation problem of
// [CMS11] Algorithm 2 (J_priv(f) + (Δ/2)‖f‖²); with Linear = nil and
// ExtraL2 = 0 it is the non-private problem of [CV13] Eq. (1).
//
// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
// [CV13]: https://proceedings.neurips.cc/paper/2013
type Objective struct {
	// Loss is the margin loss ℓ. Required; Fit supports [Logistic], [Huber]
	// with H > 0, and other convex losses with finite [Curvature].
	Loss Loss
	// Lambda is the regularization parameter λ. Required, finite and > 0.
	Lambda float64
	// Linear is the vector added as a linear term Linearᵀw: b/n for objective
	// perturbation, where b is the noise vector and n the number of rows.
	// nil means zero; otherwise length D() and finite.
	Linear []float64
	// ExtraL2 is the additional regularization Δ of [CMS11] Algorithm 2
	// (used when the privacy budget cannot absorb the curvature term).
	// Finite and ≥ 0; zero means none.
	//
	// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
	ExtraL2 float64
}

// Validate reports whether o can be minimized over rows by [Fit]: Lambda
// finite and > 0, ExtraL2 finite and ≥ 0, Linear nil or finite of length
// rows.D(), a supported loss, and rows without invalid values ([Rows.Err]).
func (o Objective) Validate(rows *Rows) error {
	if rows == nil {
		return errors.New("erm: rows is nil")
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if !(o.Lambda > 0) || math.IsInf(o.Lambda, 1) {
		return fmt.Errorf("erm: lambda must be finite and > 0 (got %v)", o.Lambda)
	}
	if !(o.ExtraL2 >= 0) || math.IsInf(o.ExtraL2, 1) {
		return fmt.Errorf("erm: extra L2 regularization must be finite and >= 0 (got %v)", o.ExtraL2)
	}
	if o.Linear != nil {
		if len(o.Linear) != rows.D() {
			return fmt.Errorf("erm: len(linear) = %d, want %d", len(o.Linear), rows.D())
		}
		for j, v := range o.Linear {
			if !isFinite(v) {
				return fmt.Errorf("erm: linear[%d] = %v: %w", j, v, ErrNotFinite)
			}
		}
	}
	return checkLoss(o.Loss)
}

func checkLoss(l Loss) error {
	switch l := l.(type) {
	case nil:
		return errors.New("erm: loss is nil")
	case Squared:
		return fmt.Errorf("%w: squared loss is not a margin loss (use FitRidge)", ErrUnsupportedLoss)
	case Ramp:
		return fmt.Errorf("%w: ramp loss is not convex", ErrUnsupportedLoss)
	case Huber:
		if !validHuberH(l.H) {
			return fmt.Errorf("%w: huber H must be finite and > 0 (got %v)", ErrUnsupportedLoss, l.H)
		}
		return nil
	}
	if c := Curvature(l); math.IsInf(c, 1) || math.IsNaN(c) {
		return fmt.Errorf("%w: %s loss has unbounded second derivative", ErrUnsupportedLoss, l.Name())
	}
	return nil
}

// Value returns J(w). It does not validate o (see [Objective.Validate]) and
// works for any Loss, smooth or not. It panics if len(w) ≠ rows.D().
func (o Objective) Value(rows *Rows, w []float64) float64 {
	rows.checkD(w, "Value", "w")
	m := make([]float64, rows.n)
	rows.margins(m, w, rows.y)
	var s float64
	for i, z := range m {
		s += rows.Weight(i) * o.Loss.Value(z)
	}
	return o.penalty(w) + s/rows.sumW
}

// penalty returns ((Lambda+ExtraL2)/2)‖w‖² + Linearᵀw.
func (o Objective) penalty(w []float64) float64 {
	var ww, lw float64
	for j, v := range w {
		ww += v * v
		if o.Linear != nil {
			lw += o.Linear[j] * v
		}
	}
	return 0.5*(o.Lambda+o.ExtraL2)*ww + lw
}

// Grad sets dst = ∇J(w) and returns it (allocated when nil). For a
// non-differentiable loss it returns the subgradient given by Loss.Deriv.
// It panics if len(w) ≠ rows.D() or a non-nil dst has the wrong length.
func (o Objective) Grad(dst []float64, rows *Rows, w []float64) []float64 {
	rows.checkD(w, "Grad", "w")
	m := make([]float64, rows.n)
	rows.margins(m, w, rows.y)
	for i, z := range m {
		m[i] = rows.y[i] * o.Loss.Deriv(z)
	}
	dst = rows.MulTrans(dst, m)
	o.addPenaltyGrad(dst, w, 1/rows.sumW)
	return dst
}

// addPenaltyGrad scales the data part g by invN and adds the gradient of the
// penalty: g ← invN·g + (Lambda+ExtraL2)·w + Linear.
func (o Objective) addPenaltyGrad(g, w []float64, invN float64) {
	lam := o.Lambda + o.ExtraL2
	for j := range g {
		g[j] = invN*g[j] + lam*w[j]
		if o.Linear != nil {
			g[j] += o.Linear[j]
		}
	}
}

// HessVec sets dst = ∇²J(w)·v, computed without forming the Hessian as
// (Lambda+ExtraL2)·v + (1/N)·Σᵢ ωᵢ·ℓ″(mᵢ)·(xᵢᵀv)·xᵢ, and returns dst
// (allocated when nil). It panics on mismatched lengths.
func (o Objective) HessVec(dst []float64, rows *Rows, w, v []float64) []float64 {
	rows.checkD(w, "HessVec", "w")
	rows.checkD(v, "HessVec", "v")
	m := make([]float64, rows.n)
	rows.margins(m, w, rows.y)
	xv := make([]float64, rows.n)
	rows.margins(xv, v, nil)
	for i, z := range m {
		m[i] = o.Loss.Deriv2(z) * xv[i]
	}
	dst = rows.MulTrans(dst, m)
	lam := o.Lambda + o.ExtraL2
	invN := 1 / rows.sumW
	for j := range dst {
		dst[j] = invN*dst[j] + lam*v[j]
	}
	return dst
}

// Hessian returns ∇²J(w) = (Lambda+ExtraL2)·I + (1/N)·Σᵢ ωᵢ·ℓ″(mᵢ)·xᵢxᵢᵀ,
// stored in dst (allocated when nil; otherwise it must be D()×D()). The sum
// runs over the nonzeros of each row only, as in [Fit].
func (o Objective) Hessian(dst *mat.SymDense, rows *Rows, w []float64) *mat.SymDense {
	rows.checkD(w, "Hessian", "w")
	d := rows.d
	if dst == nil {
		dst = mat.NewSymDense(d, nil)
	} else if dst.SymmetricDim() != d {
		panic(fmt.Sprintf("erm: Hessian: dst is %d×%d, want %d×%d", dst.SymmetricDim(), dst.SymmetricDim(), d, d))
	}
	m := make([]float64, rows.n)
	rows.margins(m, w, rows.y)
	o.hessianAt(dst, rows, m, m)
	return dst
}

// hessianAt sets dst (D()×D()) to the Hessian at the label-signed margins m
// (yᵢxᵢᵀw, as rows.margins(m, w, rows.y) sets them), using s (length N(),
// may be m itself) for the per-row curvatures.
func (o Objective) hessianAt(dst *mat.SymDense, rows *Rows, m, s []float64) {
	o.curvatures(s, rows, m)
	h := make([]float64, rows.d*rows.d)
	buildHessian(h, rows, s, nil, o.Lambda+o.ExtraL2, 1/rows.sumW)
	setUpper(dst, h)
}

// curvatures sets s[i] = ωᵢ·ℓ″(mᵢ) (s may be m), as
// rows.Weight(i)*o.Loss.Deriv2(m[i]) gives it: the same products (ωᵢ·x =
// x·ωᵢ, and 1·x = x for unweighted rows), with a static call per row for
// the built-in losses instead of an interface call (about a quarter of a
// Hessian's time at d = 11).
func (o Objective) curvatures(s []float64, rows *Rows, m []float64) {
	copy(s, m)
	fillDeriv2(o.Loss, s)
	if rows.weight != nil {
		wt := rows.weight[:len(s)]
		for i, v := range wt {
			s[i] = v * s[i]
		}
	}
}

// setUpper copies the upper triangle of the row-major h into dst.
func setUpper(dst *mat.SymDense, h []float64) {
	d := dst.SymmetricDim()
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			dst.SetSym(i, j, h[i*d+j])
		}
	}
}

// Hessians returns the Hessians ∇²J(w) of the objectives objs at one w
// ([Objective.Hessian] of each, bit for bit), computing the margins of
// rows at w once for all of them: for callers that need the curvature of
// several losses at the same point (core/dpci's Hessian and gradient
// covariance). It panics if len(w) ≠ rows.D().
func Hessians(rows *Rows, w []float64, objs ...Objective) []*mat.SymDense {
	rows.checkD(w, "Hessians", "w")
	d := rows.d
	m := make([]float64, rows.n)
	rows.margins(m, w, rows.y)
	out := make([]*mat.SymDense, len(objs))
	for k := range objs {
		out[k] = mat.NewSymDense(d, nil)
	}
	if len(objs) == 2 && len(rows.dcols) < d {
		// Two Hessians over sparse rows: one scatter pass over the pairs
		// of nonzeros adds to both (addOuterUpperPair), each entry the
		// same sum in the same row order as two passes.
		s1, s2 := make([]float64, rows.n), m
		objs[0].curvatures(s1, rows, m)
		objs[1].curvatures(s2, rows, m)
		h1, h2 := make([]float64, d*d), make([]float64, d*d)
		rows.addOuterUpperPair(h1, h2, s1, s2)
		invN := 1 / rows.sumW
		scaleHessian(h1, d, objs[0].Lambda+objs[0].ExtraL2, invN)
		scaleHessian(h2, d, objs[1].Lambda+objs[1].ExtraL2, invN)
		setUpper(out[0], h1)
		setUpper(out[1], h2)
		return out
	}
	s := make([]float64, rows.n)
	for k, o := range objs {
		o.hessianAt(out[k], rows, m, s)
	}
	return out
}

// buildHessian sets the row-major d×d matrix h to lam·I + invN·Σᵢ s2ᵢ·xᵢxᵢᵀ
// (s2 includes the weights), accumulating the upper triangle over nonzero
// pairs only and then mirroring it into the lower triangle. scratch (length
// n, or nil) is used for column-major storage.
func buildHessian(h []float64, rows *Rows, s2, scratch []float64, lam, invN float64) {
	clear(h)
	rows.addOuterUpper(h, s2, scratch)
	scaleHessian(h, rows.d, lam, invN)
}

// scaleHessian sets the row-major d×d h, holding Σᵢ s2ᵢ·xᵢxᵢᵀ in its upper
// triangle, to lam·I + invN·h, mirrored into the lower triangle.
func scaleHessian(h []float64, d int, lam, invN float64) {
	for i := 0; i < d; i++ {
		hi := h[i*d : i*d+d]
		hi[i] = invN*hi[i] + lam
		for j := i + 1; j < d; j++ {
			v := invN * hi[j]
			hi[j] = v
			h[j*d+i] = v
		}
	}
}

// Deriv2Filler is an optional method set of a [Loss] that
// [Objective.Hessian] uses when present: FillDeriv2 sets z[i] to
// Deriv2(z[i]) for every i, the same values bit for bit, in one call
// rather than one interface call per row.
type Deriv2Filler interface {
	FillDeriv2(z []float64)
}

// fillDeriv2 sets z[i] = loss.Deriv2(z[i]): by a static call for
// [Logistic] and [Huber], through [Deriv2Filler] when loss has it, else
// one interface call per value. Every branch computes the same values.
func fillDeriv2(loss Loss, z []float64) {
	switch l := loss.(type) {
	case Logistic:
		for i, v := range z {
			z[i] = l.Deriv2(v)
		}
	case Huber:
		for i, v := range z {
			z[i] = l.Deriv2(v)
		}
	case Deriv2Filler:
		l.FillDeriv2(z)
	default:
		for i, v := range z {
			z[i] = loss.Deriv2(v)
		}
	}
}
