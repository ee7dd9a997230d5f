package trs

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// ErrInvalid is wrapped by the errors Solve returns for invalid input.
var ErrInvalid = errors.New("trs: invalid input")

// ErrNoConvergence is wrapped by the errors Solve returns when the
// eigendecomposition or the Newton iteration on the secular equation fails.
var ErrNoConvergence = errors.New("trs: no convergence")

const (
	// eps is the float64 machine epsilon 2⁻⁵².
	eps = 0x1p-52

	// maxNewton bounds the safeguarded Newton iteration. Started left of the
	// root it converges monotonically; the slowest regime is the nearly hard
	// case, where the iterate grows by a factor of about 1.5 per step until
	// it nears the root, then converges quadratically (at most 31 steps in
	// nearly hard cases with R within 1e-14 of ‖θ̃‖, 6 in generic ones).
	// Bisection steps taken when Newton leaves the bracket halve it.
	maxNewton = 200
)

// Solver holds workspace for dimension p; not safe for concurrent use.
//
// Solver solves the trust-region subproblem
//
//	minimize ½·θᵀAθ − gᵀθ  subject to  ‖θ‖₂ ≤ R
//
// for symmetric p×p matrices A of any inertia; see the package
// documentation for the method and its use in Ligett et al. (2017)
// Algorithm 3, Eq. (1). The zero value is a solver for p = 0; call
// [NewSolver].
type Solver struct {
	p    int
	fact []float64 // p×p row-major: a copy of A, then its Cholesky factor or eigenvectors (columns)
	x    []float64 // Cholesky solution A⁻¹g
	lam  []float64 // eigenvalues λ₁ ≤ … ≤ λ_p
	gh   []float64 // ĝ = Qᵀg
	y    []float64 // θ in the eigenbasis, Qᵀθ
	work []float64 // dsyev workspace
}

// Result describes a solution.
type Result struct {
	Mu       float64 // Lagrange multiplier μ ≥ 0: (A + μI)θ = g, A + μI ⪰ 0, μ(R − ‖θ‖) = 0
	Boundary bool    // ‖θ‖ = R
	HardCase bool    // the "hard case" (g ⊥ eigenspace of λ_min) was taken
}

// NewSolver returns a Solver for dimension p, allocating all the workspace
// Interior and Solve need (p² + 38p float64s with gonum v0.17, whose dsyev
// asks for 34p). p = 0 gives a solver for the empty problem; for p < 0
// Solve returns an error wrapping [ErrInvalid] and Interior reports false.
func NewSolver(p int) *Solver {
	s := &Solver{p: p}
	if p <= 0 {
		return s
	}
	s.fact = make([]float64, p*p)
	s.x = make([]float64, p)
	s.lam = make([]float64, p)
	s.gh = make([]float64, p)
	s.y = make([]float64, p)
	query := []float64{0}
	lapack64.Syev(lapack.EVCompute, s.sym(), s.lam, query, -1)
	s.work = make([]float64, int(query[0]))
	return s
}

// sym views fact as an upper-triangular symmetric matrix.
func (s *Solver) sym() blas64.Symmetric {
	return blas64.Symmetric{Uplo: blas.Upper, N: s.p, Stride: s.p, Data: s.fact}
}

// Interior writes A⁻¹g into dst and reports true when A is positive definite
// (a Cholesky factorisation succeeds) and ‖A⁻¹g‖ ≤ R, i.e. when the global
// minimizer is the interior stationary point. When it reports false the
// minimizer lies on the sphere ‖θ‖ = R (dst contents then unspecified).
// Cost: one Cholesky, O(p³/3).
//
// Interior also reports false, without writing dst, for input Solve would
// reject (wrong lengths or dimension, non-finite entries, r not finite and
// > 0); call Solve to get the reason. dst may alias g.
//
// Near ties the factorization decides: for a numerically singular or very
// ill-conditioned A, or ‖A⁻¹g‖ within rounding of R, Interior can report
// false while Solve still returns a point with ‖θ‖ < R and μ = 0.
func (s *Solver) Interior(dst []float64, a *mat.SymDense, g []float64, r float64) bool {
	if s.check(dst, a, g, r) != nil {
		return false
	}
	return s.interior(dst, g, r)
}

// Solve writes the global minimizer into dst. It first tries Interior;
// otherwise it eigendecomposes A = QΛQᵀ (LAPACK dsyev, the routine behind
// gonum's mat.EigenSym) and solves the secular equation
//
//	‖(Λ + μI)⁻¹ Qᵀg‖ = R   for μ > max(0, −λ_min)
//
// with a safeguarded Newton iteration on φ(μ) = 1/‖θ(μ)‖ − 1/R (Moré &
// Sorensen 1983, "Computing a trust region step", [MS83]). It handles the
// hard case (components of ĝ = Qᵀg on the λ_min eigenspace negligible and
// ‖θ(−λ_min)‖ ≤ R), where the equation has no root, by
//
//	θ = Σ_{λᵢ>λ_min} ĝᵢ/(λᵢ − λ_min)·qᵢ + τ·q_min,   ‖θ‖ = R.
//
// Solve returns an error wrapping [ErrInvalid], and never panics, when
// len(g) or len(dst) ≠ p, A is nil or not p×p, r is not finite and > 0,
// or A or g has a NaN or infinite entry; and one wrapping
// [ErrNoConvergence] if dsyev or the Newton iteration fails (not observed
// in the tests). dst may alias g.
//
// In detail, with ĝ = Qᵀg, ‖A‖ = max|λᵢ| and ε = 2⁻⁵², the eigenvalues
// within tolLambda = 8·p·ε·‖A‖ of λ₁ form the bottom eigenspace J. If
// λ₁ ≤ tolLambda, Solve sets μ₀ = max(0, −λ₁) (μ₀ = 0 when
// |λ₁| ≤ tolLambda), θ̃ = Σ_{i∉J} ĝᵢ/(λᵢ + μ₀)·qᵢ, and takes the hard case
// when ‖θ̃‖ ≤ R and
//
//	‖ĝ_J‖ ≤ 8·p·ε·(‖g‖ + ‖A‖·ρ),   ρ = R if μ₀ > 0, ρ = ‖θ̃‖ if μ₀ = 0.
//
// Both thresholds are the scale of the backward error of the
// eigendecomposition (its residual on θ is O(p·ε·‖A‖·‖θ‖)), so treating
// λ_J as λ₁ and ĝ_J as zero does not change the accuracy class of the
// result. Then HardCase is true, Mu = μ₀, and θ = θ̃ + τ·q₁ with
// τ = ±√(R² − ‖θ̃‖²) (sign of ĝ₁, + for 0) so that ‖θ‖ = R; if μ₀ = 0 (A
// numerically singular and positive semidefinite, g numerically in its
// range) θ = θ̃ is an interior minimizer and Boundary is false. Otherwise
// the secular equation has a root; the iteration stops at
// |‖θ‖ − R| ≤ 2ε·R, or once |‖θ‖ − R| ≤ (p + 8)·ε·R no longer decreases
// (rounding noise), and reports non-convergence rather than accept more
// than 1e-12·R.
//
// Deviation: the eigendecomposition calls LAPACK dsyev through
// lapack64.Syev, the routine behind mat.EigenSym, on workspace owned by
// the Solver, because mat.EigenSym allocates about 2p² float64s per call.
//
// Boundary is true exactly when dst was placed on the sphere (secular
// equation or hard case with μ > 0); Mu is 0 when Boundary is false. The
// multiplier obeys the KKT conditions of the package
// documentation; with the notation of Eq. (1) of Ligett et al. (2017)
// Algorithm 3 (A = Z/n + λI, g = z/n, R = √(1/λ)), Mu is the multiplier of
// the constraint ‖θ‖ ≤ √(1/λ).
//
// [MS83]: https://doi.org/10.1137/0904038
func (s *Solver) Solve(dst []float64, a *mat.SymDense, g []float64, r float64) (Result, error) {
	if err := s.check(dst, a, g, r); err != nil {
		return Result{}, err
	}
	if s.interior(dst, g, r) {
		return Result{}, nil
	}
	s.load(a) // the Cholesky attempt overwrote the copy of A
	return s.sphere(dst, g, r)
}

// check validates the arguments of Interior and Solve and, when they are
// valid, copies the upper triangle of a into s.fact.
func (s *Solver) check(dst []float64, a *mat.SymDense, g []float64, r float64) error {
	p := s.p
	switch {
	case p < 0:
		return fmt.Errorf("%w: solver dimension %d < 0", ErrInvalid, p)
	case a == nil:
		return fmt.Errorf("%w: A is nil", ErrInvalid)
	case a.SymmetricDim() != p:
		n := a.SymmetricDim()
		return fmt.Errorf("%w: A is %d×%d, want %d×%d", ErrInvalid, n, n, p, p)
	case len(g) != p:
		return fmt.Errorf("%w: len(g) = %d, want %d", ErrInvalid, len(g), p)
	case len(dst) != p:
		return fmt.Errorf("%w: len(dst) = %d, want %d", ErrInvalid, len(dst), p)
	case !(r > 0) || math.IsInf(r, 1): // !(r > 0) also rejects NaN
		return fmt.Errorf("%w: R must be finite and > 0 (got %v)", ErrInvalid, r)
	}
	for i, v := range g {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: g[%d] = %v is not finite", ErrInvalid, i, v)
		}
	}
	if i, j, ok := s.load(a); !ok {
		return fmt.Errorf("%w: A[%d,%d] = %v is not finite", ErrInvalid, i, j, a.At(i, j))
	}
	return nil
}

// load copies the upper triangle of a into s.fact and reports the first
// non-finite entry, if any.
func (s *Solver) load(a *mat.SymDense) (int, int, bool) {
	p := s.p
	raw := a.RawSymmetric()
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			var v float64
			if raw.Uplo == blas.Upper {
				v = raw.Data[i*raw.Stride+j]
			} else {
				v = raw.Data[j*raw.Stride+i]
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return i, j, false
			}
			s.fact[i*p+j] = v
		}
	}
	return 0, 0, true
}

// interior is Interior on validated input with A loaded into s.fact.
func (s *Solver) interior(dst, g []float64, r float64) bool {
	p := s.p
	if p == 0 {
		return true
	}
	t, ok := lapack64.Potrf(s.sym())
	if !ok {
		return false
	}
	copy(s.x, g)
	lapack64.Potrs(t, blas64.General{Rows: p, Cols: 1, Stride: 1, Data: s.x})
	// Nrm2 scales, so it does not overflow before ‖x‖ does; a NaN or Inf
	// norm (pivots so small that x overflows) fails the test.
	if n := blas64.Nrm2(blas64.Vector{N: p, Inc: 1, Data: s.x}); !(n <= r) {
		return false
	}
	copy(dst, s.x)
	return true
}

// sphere solves the problem by eigendecomposition, with A loaded into
// s.fact, after the interior test failed.
func (s *Solver) sphere(dst, g []float64, r float64) (Result, error) {
	p := s.p
	if !lapack64.Syev(lapack.EVCompute, s.sym(), s.lam, s.work, len(s.work)) {
		return Result{}, fmt.Errorf("%w: eigendecomposition of A (dsyev) failed", ErrNoConvergence)
	}
	lam, gh, y := s.lam, s.gh, s.y
	l1, lp := lam[0], lam[p-1]
	if math.IsInf(l1, 0) || math.IsInf(lp, 0) || math.IsNaN(l1) || math.IsNaN(lp) {
		return Result{}, fmt.Errorf("%w: eigenvalues of A overflow", ErrInvalid)
	}
	// The columns of s.fact are the eigenvectors: ĝ = Qᵀg.
	q := blas64.General{Rows: p, Cols: p, Stride: p, Data: s.fact}
	blas64.Gemv(blas.Trans, 1, q, vec(g), 0, vec(gh))

	normA := math.Max(math.Abs(l1), math.Abs(lp))
	normG := blas64.Nrm2(vec(gh))
	tolLambda := 8 * float64(p) * eps * normA

	if l1 <= tolLambda {
		// Bottom eigenspace J = {i : λᵢ − λ₁ ≤ tolLambda} = {0, …, nJ−1}.
		nJ := 0
		var normGJ float64
		for nJ < p && lam[nJ]-l1 <= tolLambda {
			normGJ = math.Hypot(normGJ, gh[nJ])
			nJ++
		}
		mu := 0.0
		if l1 < -tolLambda {
			mu = -l1
		}
		for i := range y {
			if i < nJ {
				y[i] = 0
			} else {
				y[i] = gh[i] / (lam[i] + mu) // λᵢ + μ > tolLambda > 0 for i ∉ J
			}
		}
		n := blas64.Nrm2(vec(y))
		// The candidate θ has norm R if μ > 0 and ‖θ̃‖ otherwise; ĝ_J is
		// negligible next to the backward error O(p·ε·(‖g‖ + ‖A‖·‖θ‖)).
		normTheta := n
		if mu > 0 {
			normTheta = r
		}
		if n <= r && normGJ <= 8*float64(p)*eps*(normG+normA*normTheta) {
			res := Result{Mu: mu, HardCase: true}
			if mu > 0 {
				y[0] = math.Copysign(math.Sqrt((r-n)*(r+n)), gh[0])
				res.Boundary = true
			}
			return res, s.back(dst)
		}
	}

	// Secular equation in the shifted multiplier ν = μ + λ₁ ∈ [νmin, ∞),
	// with λᵢ + μ = dᵢ + ν, dᵢ = λᵢ − λ₁ ≥ 0 (d₁ = 0 exactly).
	nuMin := math.Max(l1, 0)
	if n, _ := s.secular(nuMin); n <= r {
		// Root-free cases of the exact diagonalized problem: μ = 0 with
		// ‖A⁻¹g‖ ≤ R (the Cholesky test failed numerically or near a tie),
		// or ĝᵢ = 0 exactly wherever λᵢ = λ₁ < 0.
		res := Result{Mu: nuMin - l1}
		if l1 < 0 {
			y[0] = math.Copysign(math.Sqrt((r-n)*(r+n)), gh[0])
			res.Boundary, res.HardCase = true, true
		}
		return res, s.back(dst)
	}
	// Bracket: ‖θ(ν)‖ ≤ ‖ĝ‖/ν gives φ(hi) ≥ 0; ‖θ(ν)‖ ≥ |ĝᵢ|/(dᵢ + ν) and
	// ‖θ(ν)‖ ≥ ‖ĝ‖/(d_p + ν) give φ(lo) ≤ 0 (safeguards of the kind [MS83]
	// use). Starting at lo, left of the root, the Newton iterates on the
	// concave φ increase monotonically.
	hi := normG / r
	lo := math.Max(nuMin, normG/r-(lp-l1))
	for i, v := range gh {
		lo = math.Max(lo, math.Abs(v)/r-(lam[i]-l1))
	}
	// Stopping rule: ‖θ‖ is evaluated with a relative rounding error of at
	// most about (p/2 + 3)·ε, so |‖θ‖ − R| ≤ 2ε·R may be out of reach.
	// Below tolNorm = (p + 8)·ε the iteration stops as soon as a step no
	// longer reduces |‖θ‖ − R| (rounding noise dominates).
	tolNorm := float64(p+8) * eps * r
	prev := math.Inf(1)
	nu := lo
	for it := 0; ; it++ {
		n, ratio := s.secular(nu)
		res := math.Abs(n - r)
		if res <= 2*eps*r || res <= tolNorm && res >= prev {
			break
		}
		prev = res
		if n > r {
			lo = nu
		} else {
			hi = nu
		}
		// Newton step on φ(ν) = 1/‖θ‖ − 1/R: φ′ = Σ ĝᵢ²/(dᵢ+ν)³ / ‖θ‖³, so
		// −φ/φ′ = (‖θ‖ − R)/R · ‖θ‖²/Σ ĝᵢ²/(dᵢ+ν)³.
		next := nu + (n-r)/r*ratio
		if !(next > lo && next < hi) { // also catches NaN from a pole
			if lo > 0 && hi > 4*lo {
				next = math.Sqrt(lo) * math.Sqrt(hi) // bisect in log scale
			} else {
				next = lo + (hi-lo)/2
			}
		}
		if it == maxNewton || next == nu || next <= lo || next >= hi {
			// Out of steps, or no representable progress: ν is the root to
			// within an ulp unless the residual says otherwise.
			if res > 1e-12*r {
				return Result{}, fmt.Errorf("%w: secular equation after %d steps (‖θ‖/R − 1 = %.3g)",
					ErrNoConvergence, it, n/r-1)
			}
			break
		}
		nu = next
	}
	// s.y holds θ(ν) from the last evaluation, at the final ν; ν ≥ λ₁, so
	// μ = ν − λ₁ ≥ 0 also in floating point.
	return Result{Mu: nu - l1, Boundary: true}, s.back(dst)
}

// secular sets s.y = (Λ + μI)⁻¹ĝ for the shifted multiplier ν = μ + λ₁ and
// returns ‖s.y‖ and the Newton ratio ‖θ‖²/Σ ĝᵢ²/(dᵢ+ν)³. Terms with ĝᵢ = 0
// are 0 (also at a pole); a pole with ĝᵢ ≠ 0 gives +Inf and NaN. The sums
// are scaled by max|yᵢ| so that they do not overflow before ‖θ‖ does.
func (s *Solver) secular(nu float64) (norm, ratio float64) {
	lam, gh, y := s.lam, s.gh, s.y
	l1 := lam[0]
	var m float64
	for i, v := range gh {
		if v == 0 {
			y[i] = 0
			continue
		}
		y[i] = v / ((lam[i] - l1) + nu)
		m = math.Max(m, math.Abs(y[i]))
	}
	if m == 0 || math.IsInf(m, 1) {
		return m, math.NaN()
	}
	var s2, w float64
	for i, v := range y {
		t := v / m
		t *= t
		s2 += t
		if t != 0 {
			w += t / ((lam[i] - l1) + nu)
		}
	}
	return m * math.Sqrt(s2), s2 / w
}

// back sets dst = Q·s.y and checks that it is finite.
func (s *Solver) back(dst []float64) error {
	p := s.p
	q := blas64.General{Rows: p, Cols: p, Stride: p, Data: s.fact}
	blas64.Gemv(blas.NoTrans, 1, q, vec(s.y), 0, vec(dst))
	for _, v := range dst {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: solution overflows", ErrNoConvergence)
		}
	}
	return nil
}

func vec(x []float64) blas64.Vector {
	return blas64.Vector{N: len(x), Inc: 1, Data: x}
}
