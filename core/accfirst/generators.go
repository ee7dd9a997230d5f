package accfirst

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/noisered"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/trs"
)

// errStale reports a hypothesis of a sequence used after the sequence
// advanced (its noisy statistics are gone).
var errStale = errors.New("accfirst: hypothesis used after its sequence advanced")

// projectBall scales θ onto the ball ‖θ‖ ≤ m when it is larger (Algorithm
// 5's "rescale the norm for bounded sensitivity"; the box writes the test
// as ‖θᵗ‖ ≤ M, reversed — scaling a short vector up to norm M would not
// bound anything). It returns the norm before scaling.
func projectBall(theta []float64, m float64) float64 {
	nrm := floats.Norm(theta, 2)
	if nrm > m {
		floats.Scale(m/nrm, theta)
	}
	return nrm
}

// outHyp is an output-perturbation hypothesis θ* + noise. Its exact
// excess risk is computed once: the search's test and the result row both
// ask for the accepted hypothesis's.
type outHyp struct {
	pr    Problem
	theta []float64
	seq   *outSeq // nil for an independent draw
	gen   int

	excess float64
	known  bool // excess holds e(θ)
}

// live reports errStale once the hypothesis's sequence has advanced (its
// θ buffer then holds a later hypothesis).
func (h *outHyp) live() error {
	if h.seq != nil && h.seq.gen != h.gen {
		return errStale
	}
	return nil
}

func (h *outHyp) Bounds() (lo, hi float64) {
	if h.live() != nil {
		return math.Inf(-1), math.Inf(1) // Excess reports the misuse
	}
	if l, ok := h.pr.(*Logistic); ok && h.seq != nil {
		return l.bounds(h.theta, &h.seq.scratch)
	}
	return h.pr.Bounds(h.theta)
}

func (h *outHyp) Excess() (float64, error) {
	if err := h.live(); err != nil {
		return 0, err
	}
	if !h.known {
		h.excess, h.known = h.pr.Excess(h.theta), true
	}
	return h.excess, nil
}

func (h *outHyp) Theta() ([]float64, error) {
	if err := h.live(); err != nil {
		return nil, err
	}
	return h.theta, nil
}

// outSeq is OutputNR's hypothesis sequence. It allocates nothing per
// level but a share of a block of hypotheses: θᵗ is built in one buffer
// (a hypothesis is stale once the sequence advances, like CovNR's) and
// the bounds' scratch is reused.
type outSeq struct {
	pr      Problem
	chain   *noisered.Chain
	proj    bool
	theta   []float64
	gen     int
	hyps    []outHyp // unused hypotheses of the current block
	scratch boundsBuf
}

// hypBlock is the number of hypotheses outSeq allocates at once.
const hypBlock = 64

// OutputNR returns the hypothesis sequence of output perturbation with
// noise reduction, Ligett et al. 2017 Algorithm 5: {θᵗ} =
// NR(θ*, Δ, {ε₁ … ε_T}) with Δ = pr.OutputSensitivity() (Lemma A.10 for
// logistic, Lemma A.8 for ridge), each θᵗ scaled onto the ball of radius
// pr.Radius() when larger, so that the query sensitivity of Claims A.5 /
// A.12 holds. The noise of all levels is drawn from rng up front (cheaply,
// see noisered); the hypotheses are materialized one by one, and a
// hypothesis must not be used after the next one is drawn (its Theta and
// Excess then fail). The sequence's Guarantee is εₜ-DP for the prefix
// θ¹…θᵗ (Theorem 2.7; the rescaling is post-processing).
func OutputNR(rng *rand.Rand, pr Problem, eps []float64) (expost.Sequence, error) {
	c, err := noisered.New(rng, pr.ThetaStar(), pr.OutputSensitivity(), eps)
	if err != nil {
		return nil, err
	}
	return &outSeq{pr: pr, chain: c, proj: true, theta: make([]float64, len(pr.ThetaStar()))}, nil
}

func (s *outSeq) Next() (expost.Hypothesis, bool, error) {
	if !s.chain.Next() {
		return nil, false, nil
	}
	s.gen++
	copy(s.theta, s.chain.Value())
	if s.proj {
		projectBall(s.theta, s.pr.Radius())
	}
	if len(s.hyps) == 0 {
		s.hyps = make([]outHyp, min(hypBlock, s.chain.Len()))
	}
	h := &s.hyps[0]
	s.hyps = s.hyps[1:]
	*h = outHyp{pr: s.pr, theta: s.theta, seq: s, gen: s.gen}
	return h, true, nil
}
func (s *outSeq) Guarantee() privacy.Guarantee {
	return privacy.EpsDP(s.chain.Epsilon(), "the output-perturbation prefix θ¹…θᵗ of OutputNR (Ligett et al. 2017, Algorithm 5; Theorem 2.7 with Lemma A.8/A.10)")
}
func (s *outSeq) Len() int { return s.chain.Len() }

// OutputPert returns output perturbation as an independent ε-private
// generator: θ* + b with bⱼ ~ Lap(Δ/ε) i.i.d., Δ = pr.OutputSensitivity()
// (Theorem 3.3 for logistic, Theorem A.9 for ridge). With project, θ is
// scaled onto the ball of radius pr.Radius() when larger (Remark A.3; used
// by the doubling method so that its test's sensitivity holds); the
// theory approach runs the theorem's mechanism as stated, without it. Each
// release is ε-DP (the Laplace mechanism; the scaling is post-processing).
func OutputPert(pr Problem, project bool) expost.Independent {
	return func(rng *rand.Rand, eps float64) (expost.Hypothesis, privacy.Guarantee, error) {
		if !(eps > 0) || math.IsInf(eps, 1) {
			return nil, privacy.Guarantee{}, fmt.Errorf("accfirst: output perturbation ε must be finite and > 0 (got %v)", eps)
		}
		scale := pr.OutputSensitivity() / eps
		theta := append([]float64(nil), pr.ThetaStar()...)
		for j := range theta {
			theta[j] = mech.AddLaplace(rng, theta[j], scale)
		}
		mech.Record(rng, mech.Release{Mechanism: "output-perturbation-laplace", Scale: scale, Sensitivity: pr.OutputSensitivity(), Dim: len(theta),
			Guarantee: privacy.EpsDP(eps, "one output-perturbation hypothesis (Ligett et al. 2017, Theorem 3.3 / A.9)")})
		if project {
			projectBall(theta, pr.Radius())
		}
		return &outHyp{pr: pr, theta: theta}, privacy.EpsDP(eps, "one output-perturbation hypothesis θ* + Lap(Δ/ε) (Ligett et al. 2017, Theorem 3.3 / A.9)"), nil
	}
}

// CovMode selects how a covariance-perturbation hypothesis is computed
// from the noisy statistics (Z, z).
type CovMode string

const (
	// CovExact is Algorithm 3 / Theorem 3.1: θ = argmin over ‖θ‖ ≤ 1/√λ of
	// (1/2n)(θᵀZθ − 2zᵀθ) + (λ/2)‖θ‖². The noisy quadratic may be
	// indefinite; the trust-region subproblem is solved exactly (package
	// trs). θᵀZθ depends only on the symmetric part (Z + Zᵀ)/2.
	CovExact CovMode = "exact"
	// CovSolveScale is the authors' code: solve (Z + nλI)θ = z
	// (unconstrained, Z as drawn, not symmetrized; LU), then scale θ onto
	// the ball of radius 1/√λ when larger.
	CovSolveScale CovMode = "solve-scale"
)

// quadEntry returns entry (i, j) of the quadratic form of Eq. (1) for the
// noisy row-major p×p statistic z: (zᵢⱼ + zⱼᵢ)/(2n) + λ·[i = j], the
// symmetric part (θᵀZθ sees no other).
func (r *Ridge) quadEntry(z []float64, i, j int) float64 {
	v := (z[i*r.p+j] + z[j*r.p+i]) * (1 / float64(r.n)) / 2
	if i == j {
		v += r.lambda
	}
	return v
}

// covSeq is CovNR's hypothesis sequence (Algorithm 3).
type covSeq struct {
	r      *Ridge
	mode   CovMode
	zc, bc *noisered.Chain
	a      *mat.SymDense // (Z + Zᵀ)/(2n) + λI, CovExact
	g      []float64     // z/n
	solver *trs.Solver
	gen    int
}

// CovNR returns the hypothesis sequence of covariance perturbation with
// noise reduction, Ligett et al. 2017 Algorithm 3: {Zᵗ} = NR(XᵀX, 2,
// {εₜ/2}) over all p² entries and {zᵗ} = NR(Xᵀy, 2, {εₜ/2}) (Lemma A.6:
// ℓ₁ sensitivity 2 each), so releasing the prefix up to t is εₜ-private by
// Theorem 2.7 and composition (the sequence's Guarantee). Hypothesis t is
// computed (per mode) only when a test needs it.
func CovNR(rng *rand.Rand, r *Ridge, eps []float64, mode CovMode) (expost.Sequence, error) {
	if mode != CovExact && mode != CovSolveScale {
		return nil, fmt.Errorf("accfirst: unknown covariance mode %q", mode)
	}
	half := make([]float64, len(eps))
	for i, e := range eps {
		half[i] = e / 2
	}
	p := r.p
	zc, err := noisered.New(rng, r.xtxFull, 2, half)
	if err != nil {
		return nil, err
	}
	bc, err := noisered.New(rng, r.xty, 2, half)
	if err != nil {
		return nil, err
	}
	s := &covSeq{r: r, mode: mode, zc: zc, bc: bc, g: make([]float64, p)}
	if mode == CovExact {
		s.a = mat.NewSymDense(p, nil)
		s.solver = trs.NewSolver(p)
	}
	return s, nil
}

func (s *covSeq) Next() (expost.Hypothesis, bool, error) {
	okZ, okB := s.zc.Next(), s.bc.Next()
	if !okZ || !okB {
		return nil, false, nil
	}
	s.gen++
	r := s.r
	invN := 1 / float64(r.n)
	floats.ScaleTo(s.g, invN, s.bc.Value())
	if s.mode == CovExact {
		z := s.zc.Value()
		p := r.p
		for _, k := range s.zc.Changed() {
			i, j := k/p, k%p
			s.a.SetSym(i, j, r.quadEntry(z, i, j))
		}
	}
	return &covHyp{r: r, mode: s.mode, seq: s, gen: s.gen, a: s.a, z: s.zc.Value(), g: s.g, solver: s.solver}, true, nil
}
func (s *covSeq) Guarantee() privacy.Guarantee {
	return privacy.EpsDP(2*s.zc.Epsilon(), "the covariance-perturbation prefix (Z¹, z¹)…(Zᵗ, zᵗ) of CovNR (Ligett et al. 2017, Algorithm 3; Theorem 2.7 with Lemma A.6, εₜ/2 each)")
}
func (s *covSeq) Len() int { return s.zc.Len() }

// CovPert returns covariance perturbation (Theorem 3.1) as an independent
// ε-private generator: Z = XᵀX + B, z = Xᵀy + b with every entry of B and b
// drawn i.i.d. from Lap(4/ε), then θ per mode. Each release is ε-DP
// (Lemma A.6: (Z, z) has ℓ₁ sensitivity 4; θ is post-processing).
func CovPert(r *Ridge, mode CovMode) expost.Independent {
	return func(rng *rand.Rand, eps float64) (expost.Hypothesis, privacy.Guarantee, error) {
		if !(eps > 0) || math.IsInf(eps, 1) {
			return nil, privacy.Guarantee{}, fmt.Errorf("accfirst: covariance perturbation ε must be finite and > 0 (got %v)", eps)
		}
		if mode != CovExact && mode != CovSolveScale {
			return nil, privacy.Guarantee{}, fmt.Errorf("accfirst: unknown covariance mode %q", mode)
		}
		p := r.p
		scale := 4 / eps
		z := append([]float64(nil), r.xtxFull...)
		for k := range z {
			z[k] = mech.AddLaplace(rng, z[k], scale)
		}
		g := make([]float64, p)
		invN := 1 / float64(r.n)
		for j := range g {
			g[j] = mech.AddLaplace(rng, r.xty[j], scale) * invN
		}
		mech.Record(rng, mech.Release{Mechanism: "covariance-perturbation", Scale: scale, Sensitivity: 4, Dim: len(z) + p,
			Guarantee: privacy.EpsDP(eps, "one covariance-perturbation hypothesis (Z, z) (Ligett et al. 2017, Theorem 3.1, Lemma A.6)")})
		h := &covHyp{r: r, mode: mode, z: z, g: g}
		if mode == CovExact {
			h.a = mat.NewSymDense(p, nil)
			for i := 0; i < p; i++ {
				for j := i; j < p; j++ {
					h.a.SetSym(i, j, r.quadEntry(z, i, j))
				}
			}
			h.solver = trs.NewSolver(p)
		}
		return h, privacy.EpsDP(eps, "one covariance-perturbation hypothesis from (XᵀX + B, Xᵀy + b), Lap(4/ε) entries (Ligett et al. 2017, Theorem 3.1)"), nil
	}
}

// covHyp is one covariance-perturbation hypothesis, computed lazily.
type covHyp struct {
	r      *Ridge
	mode   CovMode
	seq    *covSeq // nil for an independent draw
	gen    int
	a      *mat.SymDense
	z      []float64 // noisy XᵀX, row-major p×p
	g      []float64 // noisy Xᵀy / n
	solver *trs.Solver

	theta    []float64
	boundary bool // CovExact: the interior test failed; θ lies on the sphere
}

func (h *covHyp) live() error {
	if h.seq != nil && h.seq.gen != h.gen {
		return errStale
	}
	return nil
}

// Bounds implements expost.Hypothesis. CovSolveScale and interior CovExact
// solutions are exact (O(p³/3) Cholesky, O(p²) risk). A CovExact solution
// on the sphere ‖θ‖ = 1/√λ gets the lower bound ½λ_min(H)(R − ‖θ*‖)² −
// ‖g‖(R + ‖θ*‖) without solving the trust-region subproblem; most very
// private hypotheses are settled by it.
func (h *covHyp) Bounds() (lo, hi float64) {
	if h.theta == nil {
		if h.live() != nil {
			return math.Inf(-1), math.Inf(1) // Excess reports the misuse
		}
		if h.mode == CovSolveScale {
			if err := h.build(); err != nil {
				return math.Inf(-1), math.Inf(1)
			}
		} else if !h.boundary {
			t := make([]float64, h.r.p)
			// Interior is false when A is not positive definite or
			// ‖A⁻¹g‖ > R; either way the minimizer lies on the sphere,
			// except for a numerically singular PSD A with ‖A⁺g‖ < R — a
			// null set under the continuous Laplace noise.
			if h.solver.Interior(t, h.a, h.g, h.r.Radius()) {
				h.theta = t
			} else {
				h.boundary = true
			}
		}
	}
	if h.theta != nil {
		e := h.r.Excess(h.theta)
		return e, e
	}
	return h.r.sphereLowerBound(h.r.Radius()), math.Inf(1)
}

func (h *covHyp) build() error {
	if h.theta != nil {
		return nil
	}
	if err := h.live(); err != nil {
		return err
	}
	p, r := h.r.p, h.r
	t := make([]float64, p)
	switch h.mode {
	case CovExact:
		if _, err := h.solver.Solve(t, h.a, h.g, r.Radius()); err != nil {
			return err
		}
	default:
		// (Z + nλI)θ = z, i.e. (Z/n + λI)θ = z/n, by LU with partial
		// pivoting (LAPACK getrf/getrs; no condition estimate, which the
		// authors' numpy.linalg.solve does not make either).
		m := make([]float64, p*p)
		invN := 1 / float64(r.n)
		for k, v := range h.z {
			m[k] = v * invN
		}
		for i := 0; i < p; i++ {
			m[i*p+i] += r.lambda
		}
		a := blas64.General{Rows: p, Cols: p, Stride: p, Data: m}
		ipiv := make([]int, p)
		copy(t, h.g)
		if !lapack64.Getrf(a, ipiv) {
			return errors.New("accfirst: the noisy normal equations are exactly singular")
		}
		lapack64.Getrs(blas.NoTrans, a, blas64.General{Rows: p, Cols: 1, Stride: 1, Data: t}, ipiv)
		if floats.HasNaN(t) || hasInf(t) {
			return errors.New("accfirst: solving the noisy normal equations gave a non-finite θ")
		}
		projectBall(t, r.Radius())
	}
	h.theta = t
	return nil
}

func (h *covHyp) Excess() (float64, error) {
	if err := h.build(); err != nil {
		return 0, err
	}
	return h.r.Excess(h.theta), nil
}

func (h *covHyp) Theta() ([]float64, error) {
	if err := h.build(); err != nil {
		return nil, err
	}
	return h.theta, nil
}

func hasInf(x []float64) bool {
	for _, v := range x {
		if math.IsInf(v, 0) {
			return true
		}
	}
	return false
}
