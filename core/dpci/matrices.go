package dpci

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/mech"
	privpkg "github.com/dprepro/dprepro/core/privacy"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// Hessian returns H[J_n(θ)] = (1/n)Σᵢ f″(yᵢθᵀxᵢ)·xᵢxᵢᵀ + 2c·I, Eq. 5 of
// [Wang, Kifer & Lee 2019] (the (1/n)βᵀθ term of objective perturbation is
// linear and does not contribute), with n = rows.SumWeights(). For the SVM,
// f″ = 1/(2h) on the closed band |1 − yθᵀx| ≤ h (the one-sided value at the
// two kinks). Only p.Model, p.H and p.C are used. It is not private; see
// [SensHessian] and [PrivSPDMat]. It panics if len(theta) ≠ rows.D().
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func Hessian(rows *erm.Rows, p Params, theta []float64) (*mat.SymDense, error) {
	obj, err := p.objective(nil)
	if err != nil {
		return nil, err
	}
	return obj.Hessian(nil, rows, theta), nil
}

// sqDeriv is the pseudo-loss whose "second derivative" is ℓ′(z)², so that
// [erm.Objective.Hessian] with Lambda = 0 computes (1/n)Σᵢ ωᵢℓ′(mᵢ)²xᵢxᵢᵀ
// with erm's sparse outer-product kernel.
type sqDeriv struct{ erm.Loss }

func (l sqDeriv) Deriv2(z float64) float64 {
	g := l.Loss.Deriv(z)
	return g * g
}

// FillDeriv2 sets z[i] = Deriv2(z[i]) (erm.Deriv2Filler), with a static
// call of ℓ′ for the losses of the paper's models (the same values as
// Deriv2, without an interface call per row).
func (l sqDeriv) FillDeriv2(z []float64) {
	switch f := l.Loss.(type) {
	case erm.Logistic:
		for i, v := range z {
			g := f.Deriv(v)
			z[i] = g * g
		}
	case erm.Huber:
		for i, v := range z {
			g := f.Deriv(v)
			z[i] = g * g
		}
	default:
		for i, v := range z {
			z[i] = l.Deriv2(v)
		}
	}
}

// GradCov returns the plug-in covariance of the per-row gradients of
// f + c‖θ‖², Eq. 6 of [Wang, Kifer & Lee 2019]:
//
//	Σ = (1/n)Σᵢ ∇f(xᵢ, yᵢ, θ)∇f(xᵢ, yᵢ, θ)ᵀ − 4c²·θθᵀ
//	  = (1/n)Σᵢ f′(yᵢθᵀxᵢ)²·xᵢxᵢᵀ − 4c²·θθᵀ        (yᵢ² = 1)
//
// with n = rows.SumWeights(). At the non-private minimizer θ̂ the mean
// gradient is −2cθ̂, so Σ is then exactly the (biased, 1/n) empirical
// covariance and positive semidefinite; at another θ (the θ̃ of objective or
// output perturbation) it may be indefinite, which [PrivSPDMat] repairs.
// Only p.Model, p.H and p.C are used. It is not private; see [SensGradCov].
// It panics if len(theta) ≠ rows.D().
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func GradCov(rows *erm.Rows, p Params, theta []float64) (*mat.SymDense, error) {
	obj, err := p.objective(nil)
	if err != nil {
		return nil, err
	}
	s := gradCovObjective(obj).Hessian(nil, rows, theta)
	subThetaTheta(s, p, theta)
	return s, nil
}

// gradCovObjective is the pseudo-objective of [GradCov]: loss ℓ′², no
// penalty.
func gradCovObjective(obj erm.Objective) erm.Objective {
	obj.Loss = sqDeriv{obj.Loss}
	obj.Lambda = 0
	return obj
}

// subThetaTheta subtracts 4c²·θθᵀ from s (the last term of Eq. 6).
func subThetaTheta(s *mat.SymDense, p Params, theta []float64) {
	c2 := 4 * p.C * p.C
	for i := range theta {
		for j := i; j < len(theta); j++ {
			s.SetSym(i, j, s.At(i, j)-c2*theta[i]*theta[j])
		}
	}
}

// hessianGradCov returns [Hessian] and [GradCov] at theta, bit for bit,
// from one pass computing the margins (erm.Hessians).
func hessianGradCov(rows *erm.Rows, p Params, theta []float64) (h, s *mat.SymDense, err error) {
	obj, err := p.objective(nil)
	if err != nil {
		return nil, nil, err
	}
	hs := erm.Hessians(rows, theta, obj, gradCovObjective(obj))
	subThetaTheta(hs[1], p, theta)
	return hs[0], hs[1], nil
}

// SensHessian returns the L2 (Frobenius) sensitivity of [Hessian] at a
// fixed θ under replace-one adjacency with ‖xᵢ‖₂ ≤ 1, labels ±1 and n rows:
//
//	LR:  1/(2n)   (Lemma 3)
//	SVM: 1/(n·h)  (Lemma 5)
//
// of [Wang, Kifer & Lee 2019]. θ must not depend on the data beyond a
// private release (θ̃), as in Algorithms 3 and 5.
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func SensHessian(p Params, n float64) (float64, error) {
	if _, err := p.Loss(); err != nil {
		return 0, err
	}
	if err := checkPos("n", n); err != nil {
		return 0, err
	}
	if p.Model == SVM {
		return 1 / (n * p.H), nil
	}
	return 1 / (2 * n), nil
}

// SensGradCov returns the L2 (Frobenius) sensitivity of [GradCov] at a
// fixed θ under the same assumptions as [SensHessian]:
//
//	LR:  2·S(‖θ‖₂)²/n  (Lemma 2; S the sigmoid, evaluated at the released θ)
//	SVM: 2/n           (Lemma 4)
//
// of [Wang, Kifer & Lee 2019]. Lemma 2 states the bound at θ₀; the proof
// holds for any fixed θ and Algorithms 3 and 5 evaluate Σ at θ̃, so this
// evaluates it at theta (the released θ̃). The −4c²θθᵀ term does not
// depend on the data given θ.
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func SensGradCov(p Params, n float64, theta []float64) (float64, error) {
	if _, err := p.Loss(); err != nil {
		return 0, err
	}
	if err := checkPos("n", n); err != nil {
		return 0, err
	}
	if p.Model == SVM {
		return 2 / n, nil
	}
	var ss float64
	for _, v := range theta {
		ss += v * v
	}
	s := 1 / (1 + math.Exp(-math.Sqrt(ss)))
	return 2 * s * s / n, nil
}

// PrivSPDMat releases a private symmetric positive definite version of the
// symmetric d×d matrix m with L2 (Frobenius) sensitivity sens, Algorithm 2
// of [Wang, Kifer & Lee 2019]:
//
//	DP   (epsilon = phi): η ∈ R^{d²} ~ density ∝ exp(−(phi/sens)·‖η‖₂)  (Eq. 3)
//	zCDP (rho = phi):     η ∈ R^{d²} ~ N(0, (sens²/(2·phi))·I)
//	M̃ = (M + mat(η) + (M + mat(η))ᵀ)/2 = V·diag(Λ)·Vᵀ
//	output V·diag(max(Λ, 2c))·Vᵀ
//
// The noise is added to all d² entries (reshaped row by row) before
// symmetrizing, as in the paper. The output is phi-DP or phi-zCDP
// (Lemma 1) with respect to the adjacency under which sens bounds
// ‖M(D) − M(D′)‖_F; one call is one release. The result is stored in dst
// (allocated when nil; otherwise d×d) and returned. All eigenvalues of the
// output are ≥ 2c (line 12; the paper clamps the covariance at 2c too).
//
// It returns an error for sens, phi or c not finite and > 0, an unknown
// privacy, or a failed eigendecomposition; it panics if dst has the wrong
// size.
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func PrivSPDMat(dst *mat.SymDense, rng *rand.Rand, m mat.Symmetric, sens, phi, c float64, privacy Privacy) (*mat.SymDense, error) {
	if err := checkPos("c", c); err != nil {
		return nil, fmt.Errorf("dpci: PrivSPDMat: %w", err)
	}
	return PrivSPDMatFloor(dst, rng, m, sens, phi, 2*c, privacy)
}

// PrivSPDMatFloor is [PrivSPDMat] with the eigenvalue floor of line 12
// given explicitly: the output's eigenvalues are max(Λ, floor) instead of
// max(Λ, 2c). The floor is post-processing of the noisy matrix, so the
// guarantee is PrivSPDMat's whatever its value. It exists for the
// calibration variant of the gradient covariance ([Params.SigmaFloor]),
// which floors Σ̃ at c where the paper's text says 2c; floor must be
// finite and > 0.
func PrivSPDMatFloor(dst *mat.SymDense, rng *rand.Rand, m mat.Symmetric, sens, phi, floor float64, privacy Privacy) (*mat.SymDense, error) {
	return privSPDMat(dst, rng, m, sens, phi, floor, privacy, nil)
}

// privSPDMat is [PrivSPDMatFloor], recording params (the public values
// the release's sensitivity was computed from, for a traced run) with
// the release.
func privSPDMat(dst *mat.SymDense, rng *rand.Rand, m mat.Symmetric, sens, phi, floor float64, privacy Privacy, params map[string]float64) (*mat.SymDense, error) {
	d := m.SymmetricDim()
	for _, a := range []struct {
		name string
		v    float64
	}{{"sensitivity", sens}, {"phi", phi}, {"floor", floor}} {
		if err := checkPos(a.name, a.v); err != nil {
			return nil, fmt.Errorf("dpci: PrivSPDMat: %w", err)
		}
	}
	sc := eigPool.Get().(*eigScratch)
	defer eigPool.Put(sc)
	sc.reset(d)
	eta := sc.eta
	switch privacy {
	case DP:
		if err := mech.SphericalLaplace(eta, rng, phi/sens); err != nil {
			return nil, fmt.Errorf("dpci: PrivSPDMat: %w", err)
		}
	case ZCDP:
		sigma := sens / math.Sqrt(2*phi)
		for k := range eta {
			eta[k] = mech.AddGaussian(rng, 0, sigma)
		}
	default:
		return nil, fmt.Errorf("dpci: PrivSPDMat: unknown privacy %q (want %q or %q)", privacy, DP, ZCDP)
	}
	// The noisy matrix's upper triangle, row-major in sc.a (the lower
	// triangle zero): the storage of a mat.SymDense, as mat.EigenSym
	// copies it before the decomposition.
	noisy := sc.a
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := m.At(i, j)
			if privacy == ZCDP && mech.IsSecure(rng) {
				// Secure mode: the entries on the noise's grid (the noise
				// below is then grid noise too, so the release carries
				// no low bits of m).
				v = mech.RoundToGrid(v, sens/math.Sqrt(2*phi))
			}
			noisy[i*d+j] = v + (eta[i*d+j]+eta[j*d+i])/2
		}
	}
	r := mech.Release{Mechanism: "privspdmat-dp", Scale: phi / sens, Sensitivity: sens, Dim: d * d, Params: params,
		Guarantee: privpkg.EpsDP(phi, "a d×d matrix of PrivSPDMat (Wang, Kifer & Lee 2019, Algorithm 2)")}
	if privacy == ZCDP {
		r.Mechanism, r.Scale = "privspdmat-zcdp", sens/math.Sqrt(2*phi)
		r.Guarantee = privpkg.Rho(phi, r.Guarantee.Covers)
	}
	mech.Record(rng, r)
	return sc.clampEig(dst, d, floor)
}

// eigScratch is the storage of one privSPDMat call, reused across calls
// (eigPool): the audit's PrivSPDMat targets release millions of 3×3
// matrices, whose allocations (the noise, the matrix, and mat.EigenSym's
// copy, values and vectors) were a large part of their cost.
type eigScratch struct {
	eta, a, w, work []float64
}

var eigPool = sync.Pool{New: func() any { return new(eigScratch) }}

// reset sizes the scratch for d×d matrices: eta and w of any content, a
// cleared, work of the length LAPACK's workspace query asks for (the
// length mat.EigenSym gives it).
func (s *eigScratch) reset(d int) {
	size := func(b []float64, n int) []float64 {
		if cap(b) < n {
			return make([]float64, n)
		}
		return b[:n]
	}
	s.eta, s.a, s.w = size(s.eta, d*d), size(s.a, d*d), size(s.w, d)
	clear(s.a)
	var q [1]float64
	lapack64.Syev(lapack.EVCompute, blas64.Symmetric{N: d, Stride: d, Data: s.a, Uplo: blas.Upper}, s.w, q[:], -1)
	s.work = size(s.work, int(q[0]))
}

// clampEig returns V·diag(max(Λ, floor))·Vᵀ for the symmetric matrix whose
// upper triangle s.a holds (row-major, d×d), s.a = VΛVᵀ (Algorithm 2, line
// 12: eigenvalues below the floor raised to it), in dst (allocated when
// nil). It runs LAPACK's dsyev on s.a in place, as mat.EigenSym.Factorize
// runs it on its copy (same input, same workspace length), so the values
// are bit for bit those of the decomposition through mat.EigenSym
// (TestClampEig_SameBits).
func (s *eigScratch) clampEig(dst *mat.SymDense, d int, floor float64) (*mat.SymDense, error) {
	if dst == nil {
		dst = mat.NewSymDense(d, nil)
	} else if dst.SymmetricDim() != d {
		panic(fmt.Sprintf("dpci: dst is %d×%d, want %d×%d", dst.SymmetricDim(), dst.SymmetricDim(), d, d))
	}
	if !lapack64.Syev(lapack.EVCompute, blas64.Symmetric{N: d, Stride: d, Data: s.a, Uplo: blas.Upper}, s.w, s.work, len(s.work)) {
		return nil, fmt.Errorf("dpci: eigendecomposition failed")
	}
	lam, v := s.w, s.a // v[i·d+k] = component i of eigenvector k
	for k := range lam {
		lam[k] = math.Max(lam[k], floor)
	}
	// Build Σₖ λₖ vₖvₖᵀ entry by entry (upper triangle), so the output is
	// exactly symmetric.
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			var sum float64
			for k, l := range lam {
				sum += l * v[i*d+k] * v[j*d+k]
			}
			dst.SetSym(i, j, sum)
		}
	}
	return dst, nil
}
