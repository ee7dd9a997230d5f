package erm

import (
	"context"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Solver status values reported in [Result.Status].
const (
	// StatusConverged means ‖∇J(W)‖₂ ≤ GradTol.
	StatusConverged = "converged"
	// StatusMaxIter means MaxIter Newton steps were taken without reaching
	// GradTol; W is the last iterate.
	StatusMaxIter = "max-iter"
	// StatusLineSearchFailed means no step along the Newton direction
	// decreased J measurably: either the gradient is at the float64 noise
	// floor above GradTol (GradNorm tells how far), or the Hessian could not
	// be factorized even after adding a diagonal shift. W is the best iterate.
	StatusLineSearchFailed = "line-search-failed"
)

// FitOptions configures [Fit]. The zero value gives the defaults.
type FitOptions struct {
	// Init is the starting point (warm start), copied; nil means zeros.
	// Otherwise length D() and finite.
	Init []float64
	// GradTol is the absolute tolerance on ‖∇J(w)‖₂. Zero means 1e-10;
	// otherwise finite and > 0. By (Lambda+ExtraL2)-strong convexity the
	// returned W is within GradTol/(Lambda+ExtraL2) of the exact minimizer in
	// L2 norm.
	GradTol float64
	// MaxIter bounds the number of Newton steps. Zero means 100; otherwise
	// > 0.
	MaxIter int
	// Work holds reusable buffers; nil borrows a Workspace from a
	// package-level pool for the duration of the call (so that repeated
	// fits by callers that pass none do not allocate ≈ 8·n float64 values
	// each). A Workspace must not be used by two goroutines at once.
	Work *Workspace
	// Context, when not nil, is checked before every Newton step: once it
	// is done, Fit returns its error (wrapped) and no Result, so that a
	// long fit stops promptly. The check draws nothing and changes no
	// arithmetic. Nil never stops.
	Context context.Context
	// Factor, when not nil, is a factored Hessian at a point near Init
	// ([NewFactor]; of dimension D()); the first Newton step uses it as a
	// chord step instead of building and factorizing the Hessian at Init.
	// It is kept for the following steps on the rule of any reused factor
	// (see [Fit]) and replaced by a fresh Hessian as soon as it gives a
	// partial step or less than a tenfold gradient reduction. The
	// convergence test is unchanged: only the iterates differ, by the
	// solver's tolerance. Nil builds the Hessian at Init.
	Factor *Factor
}

// Result is the outcome of [Fit].
type Result struct {
	W        []float64 // final iterate (freshly allocated)
	Iter     int       // Newton steps taken (with fresh or reused Hessian)
	Hessians int       // Hessian builds and factorizations (≤ Iter + 1)
	GradNorm float64   // ‖∇J(W)‖₂
	Value    float64   // J(W)
	Status   string    // StatusConverged, StatusMaxIter or StatusLineSearchFailed
}

// Workspace holds the buffers of [Fit] so that repeated fits do not allocate
// (about 8·n + d² + 6·d float64 values, and 3·n + 2·d for the start of
// the last warm-started fit). The zero value is ready to use; it
// adapts to the sizes of each call. Not safe for concurrent use.
type Workspace struct {
	m, mt, q         []float64 // margins yᵢxᵢᵀw, trial margins, yᵢxᵢᵀp
	g1, g2, g1t, g2t []float64 // ωᵢyᵢℓ′ and ωᵢℓ″ at m and at mt
	scratch          []float64 // column-major Hessian kernel
	grad, p, w, wOld []float64
	spec             []float64 // data gradient at the first trial point (firstTrial)
	hess             []float64
	sym              *mat.SymDense
	pv, gv           *mat.VecDense
	chol             mat.Cholesky
	d                int

	// The loss pass at the start point of the last fit that started away
	// from 0 (see startHit): its Rows (by its cache, held so that the
	// address cannot be reused), loss, start point, margins, derivatives
	// and data gradient.
	startRows         *gramCache
	pendRows          *gramCache // the Rows of a start noted, not yet kept
	startLoss         Loss
	startSum          float64
	startW, startGrad []float64
	startM, startG1   []float64
	startG2           []float64
}

// startStore notes the start of a fit (the loss sum, the data part of the
// gradient in ws.grad, the point w, when the loss is [Logistic] or [Huber]:
// comparable values) and reports whether the fit should keep it: then,
// once its first step is taken, the fit calls startKeep, which moves the
// start's margins and derivatives (by then in the trial buffers) into the
// store without copying them, for startHit.
func (ws *Workspace) startStore(rows *Rows, loss Loss, w []float64, sum float64) bool {
	ws.startRows = nil
	switch loss.(type) {
	case Logistic, Huber:
	default:
		return false
	}
	ws.pendRows, ws.startLoss, ws.startSum = rows.gram, loss, sum
	ws.startW = append(ws.startW[:0], w...)
	ws.startGrad = append(ws.startGrad[:0], ws.grad...)
	return true
}

// startKeep exchanges the trial buffers, which hold the start's margins and
// derivatives after the first step of a fit, with the store's (spare
// buffers of length n), and makes the start noted by startStore available.
func (ws *Workspace) startKeep(n int) {
	ws.mt, ws.startM = resize(ws.startM, n), ws.mt
	ws.g1t, ws.startG1 = resize(ws.startG1, n), ws.g1t
	ws.g2t, ws.startG2 = resize(ws.startG2, n), ws.g2t
	ws.startRows, ws.pendRows = ws.pendRows, nil
}

// startHit reports whether the stored start (startStore) is that of a fit
// on the same Rows with the same loss at the same point (bit for bit), as
// for the two fits of a bootstrap replicate that cicoverage runs from the
// same warm start (objective perturbation and the non-private θ̂): then the
// margins and derivatives are swapped into ws.m, ws.g1 and ws.g2 and the store is
// emptied (the fit overwrites those buffers), and the caller takes the loss
// sum and the data gradient from startSum and startGrad. Every value is the
// one the pass would compute: the pass is a function of the rows, the loss
// and the point. A Rows is identified by its cache (new for every
// [NewRows], [Rows.WithWeights] and [Rows.Resample], and held here so that
// its address is not reused while stored).
func (ws *Workspace) startHit(rows *Rows, loss Loss, w []float64) bool {
	if ws.startRows == nil || ws.startRows != rows.gram || len(ws.startM) != rows.n {
		return false
	}
	switch loss.(type) {
	case Logistic, Huber:
	default:
		return false
	}
	if loss != ws.startLoss {
		return false
	}
	for j, v := range w {
		if math.Float64bits(v) != math.Float64bits(ws.startW[j]) {
			return false
		}
	}
	n := rows.n
	ws.m, ws.startM = ws.startM[:n:n], ws.m
	ws.g1, ws.startG1 = ws.startG1[:n:n], ws.g1
	ws.g2, ws.startG2 = ws.startG2[:n:n], ws.g2
	ws.startRows = nil
	return true
}

// workspacePool lends Workspaces to calls of [Fit] without
// FitOptions.Work. sync.Pool is safe for concurrent use and drops idle
// entries at garbage collection, so it holds no memory for long.
var workspacePool = sync.Pool{New: func() any { return new(Workspace) }}

func (ws *Workspace) reset(n, d int) {
	grow := func(s []float64, k int) []float64 {
		if cap(s) < k {
			return make([]float64, k)
		}
		return s[:k]
	}
	ws.m = grow(ws.m, n)
	ws.mt = grow(ws.mt, n)
	ws.q = grow(ws.q, n)
	ws.g1 = grow(ws.g1, n)
	ws.g2 = grow(ws.g2, n)
	ws.g1t = grow(ws.g1t, n)
	ws.g2t = grow(ws.g2t, n)
	ws.scratch = grow(ws.scratch, n)
	if ws.d != d || ws.sym == nil {
		ws.d = d
		ws.grad = make([]float64, d)
		ws.p = make([]float64, d)
		ws.w = make([]float64, d)
		ws.wOld = make([]float64, d)
		ws.spec = make([]float64, d)
		ws.hess = make([]float64, d*d)
		ws.sym = mat.NewSymDense(d, ws.hess)
		ws.pv = mat.NewVecDense(d, ws.p)
		ws.gv = mat.NewVecDense(d, ws.grad)
		ws.chol.Reset()
	}
}

// Line-search and Hessian-reuse constants.
const (
	armijoC1     = 1e-4 // sufficient-decrease constant of the Armijo rule
	maxBacktrack = 60   // 0.5⁶⁰ ≈ 1e-18: far below any useful step
	// roundTol scales the level (relative to 1+|J|) below which a change of J
	// cannot be resolved: J sums n terms, whose rounding error grows like
	// √n·ε_mach ≈ 2e-14 for n = 24,000. Below it the Armijo test compares
	// noise, so a full Newton step with such a small predicted decrease is
	// accepted if J does not rise by more than the noise (see Fit).
	roundTol = 1e-12
	// reuseRatio: after a full step (t = 1) that reduced ‖∇J‖ by at least
	// this factor, the next step reuses the current Cholesky factor instead
	// of rebuilding the Hessian (see Fit).
	reuseRatio = 0.1
)

// Fit minimizes the objective J of obj over rows (see [Objective]) by a
// damped Newton method and returns the minimizer.
//
// Each iteration solves H·p = −∇J with a Cholesky factor of
// H = (Lambda+ExtraL2)·I + (1/N)·Σᵢ ωᵢ·ℓ″(mᵢ)·xᵢxᵢᵀ (upper triangle built over
// the nonzero pairs of each row, then mirrored) and searches along p with
// Armijo backtracking (constant 1e-4, quadratic interpolation safeguarded to
// [0.1, 0.5] of the previous step). Trial points reuse the margins
// mᵢ + t·yᵢxᵢᵀp, so a trial costs one pass over the n loss values. Iteration
// stops when ‖∇J‖₂ ≤ GradTol (StatusConverged), after MaxIter steps
// (StatusMaxIter), or when no step makes measurable progress
// (StatusLineSearchFailed). These outcomes are not errors.
//
// Two devices cut the number of Hessian builds, which dominate the cost on
// sparse data (Σᵢ nnzᵢ²/2 multiply-adds each, against O(nnz) for a gradient):
//   - At w = 0 every margin is 0, so H = λI + ℓ″(0)·XᵀΩX/N; XᵀΩX is computed
//     once per Rows and cached, so a cold start skips one build.
//   - At w = 0 with the unweighted logistic loss, the loss pass and the
//     data part of the gradient are the same for every fit on a Rows;
//     they are computed once and cached with XᵀΩX.
//   - After a full step that reduced ‖∇J‖ at least tenfold, the next step
//     reuses the factor (a chord step of Shamanskii's modified Newton
//     method). Any SPD matrix gives a descent direction, so the line search
//     keeps global convergence; the factor is rebuilt as soon as a reused
//     one yields a partial step or less than a tenfold reduction.
//   - With FitOptions.Factor, the first step is such a chord step with a
//     factor shared by many fits (the full-data Hessian at θ̂ for the
//     bootstrap fits started at θ̂), so a fit that the chord contracts well
//     builds no Hessian at all. The chord converges linearly with the rate
//     ‖I − F⁻¹·∇²J‖ (F the factored matrix), small when F is close to
//     ∇²J near the minimizer (the chord method; C. T. Kelley 1995,
//     "Iterative Methods for Linear and Nonlinear Equations", SIAM
//     Frontiers in Applied Mathematics 16, Chapter 5 — section number not
//     checked against the book). The tenfold-reduction rule above is the
//     refresh test.
//
// Numerics: margins as large as |m| ~ 10³ (objective perturbation at small ε
// with small λ gives ‖w‖ ~ 100) are handled without overflow, since the losses
// are evaluated through exp(−|m|). When the predicted decrease −∇Jᵀp falls
// below the float64 resolution of J (≈ 1e-12·(1+|J|)), the full step is taken
// if J does not rise above that noise level, and undone if it does not reduce
// ‖∇J‖ (then StatusLineSearchFailed). If the Cholesky factorization fails
// (only possible when Lambda is tiny relative to the data curvature), a
// diagonal shift 10ᵏ·(Lambda+ExtraL2), k = 1…8, is added.
//
// Fit returns an error, and no Result, only for invalid input (see
// [Objective.Validate] and [FitOptions]) and when opts.Context is done: it
// does not support [Hinge] (not differentiable), [Ramp] (not convex) or
// [Squared] (use [FitRidge]).
func Fit(rows *Rows, obj Objective, opts FitOptions) (Result, error) {
	if err := obj.Validate(rows); err != nil {
		return Result{}, fmt.Errorf("erm: fit: %w", err)
	}
	n, d := rows.n, rows.d
	tol := opts.GradTol
	if tol == 0 {
		tol = 1e-10
	}
	if !(tol > 0) || math.IsInf(tol, 1) {
		return Result{}, fmt.Errorf("erm: fit: gradient tolerance must be finite and > 0 (got %v)", opts.GradTol)
	}
	maxIter := opts.MaxIter
	if maxIter == 0 {
		maxIter = 100
	}
	if maxIter < 0 {
		return Result{}, fmt.Errorf("erm: fit: max iterations must be > 0 (got %d)", opts.MaxIter)
	}
	ws := opts.Work
	if ws == nil {
		// Every buffer of a Workspace is written before it is read (reset
		// only resizes), so a pooled one gives bit-identical results.
		ws = workspacePool.Get().(*Workspace)
		defer workspacePool.Put(ws)
	}
	if opts.Factor != nil && opts.Factor.d != d {
		return Result{}, fmt.Errorf("erm: fit: factor of dimension %d, want %d", opts.Factor.d, d)
	}
	ws.reset(n, d)
	w := ws.w
	clear(w)
	atZero := true
	if opts.Init != nil {
		if len(opts.Init) != d {
			return Result{}, fmt.Errorf("erm: fit: len(init) = %d, want %d", len(opts.Init), d)
		}
		for j, v := range opts.Init {
			if !isFinite(v) {
				return Result{}, fmt.Errorf("erm: fit: init[%d] = %v: %w", j, v, ErrNotFinite)
			}
			if v != 0 {
				atZero = false
			}
		}
		copy(w, opts.Init)
	}

	lam := obj.Lambda + obj.ExtraL2
	invN := 1 / rows.sumW
	lin := obj.Linear
	penalty := func(w []float64) float64 {
		v := 0.5 * lam * floats.Dot(w, w)
		if lin != nil {
			v += floats.Dot(lin, w)
		}
		return v
	}
	gradient := func() float64 {
		g := ws.grad
		clear(g)
		rows.mulTransAdd(g, ws.g1)
		obj.addPenaltyGrad(g, w, invN)
		return floats.Norm(g, 2)
	}

	_, logistic := obj.Loss.(Logistic)
	plainLogistic := logistic && rows.weight == nil
	weightedLogistic := logistic && rows.weight != nil
	var f, gnorm float64
	keepStart := false // keep the start for the next fit (startStore)
	if atZero && plainLogistic {
		// A cold start: the loss pass and the data gradient at w = 0 are
		// cached per Rows (the same numbers, bit for bit).
		loss0, grad0 := rows.logisticZero(ws.m, ws.g1, ws.g2)
		f = penalty(w) + invN*loss0
		copy(ws.grad, grad0)
		obj.addPenaltyGrad(ws.grad, w, invN)
		gnorm = floats.Norm(ws.grad, 2)
	} else if ws.startHit(rows, obj.Loss, w) {
		// The start of the previous fit on this Rows (see startHit).
		f = penalty(w) + invN*ws.startSum
		copy(ws.grad, ws.startGrad)
		obj.addPenaltyGrad(ws.grad, w, invN)
		gnorm = floats.Norm(ws.grad, 2)
	} else {
		rows.margins(ws.m, w, rows.y)
		sum := evalLoss(obj.Loss, ws.m, rows.y, rows.weight, ws.g1, ws.g2)
		f = penalty(w) + invN*sum
		g := ws.grad
		clear(g)
		rows.mulTransAdd(g, ws.g1)
		keepStart = ws.startStore(rows, obj.Loss, w, sum)
		obj.addPenaltyGrad(g, w, invN)
		gnorm = floats.Norm(g, 2)
	}
	res := Result{Status: StatusMaxIter}
	reuse := false // the current factor may be reused for the next step
	chord := opts.Factor
	for {
		if gnorm <= tol {
			res.Status = StatusConverged
			break
		}
		if res.Iter >= maxIter {
			break
		}
		if opts.Context != nil {
			if err := opts.Context.Err(); err != nil {
				return Result{}, fmt.Errorf("erm: fit: %w", err)
			}
		}
		fresh := !reuse
		if fresh && chord != nil {
			// The shared factor, once, as a reused one.
			ws.chol.Clone(&chord.chol)
			chord = nil
			fresh = false
		}
		if fresh {
			if !ws.factorize(rows, obj.Loss, lam, invN, atZero && res.Iter == 0) {
				res.Status = StatusLineSearchFailed
				break
			}
			res.Hessians++
		}
		if !ws.solve() {
			res.Status = StatusLineSearchFailed
			break
		}
		p := ws.p
		slope := floats.Dot(ws.grad, p) // φ′(0) < 0 for an SPD factor
		if !(slope < 0) {
			if fresh {
				res.Status = StatusLineSearchFailed
				break
			}
			reuse = false
			continue
		}
		fused := plainLogistic && fuseFirstTrial
		if !fused {
			rows.margins(ws.q, p, rows.y)
		}
		ww, wp, pp := floats.Dot(w, w), floats.Dot(w, p), floats.Dot(p, p)
		var lw, lp float64
		if lin != nil {
			lw, lp = floats.Dot(lin, w), floats.Dot(lin, p)
		}
		noise := roundTol * (1 + math.Abs(f))
		tiny := -slope <= noise
		t := 1.0
		accepted := false
		var lossT float64
		k := 0
		for ; k < maxBacktrack; k++ {
			if fused && k == 0 {
				lossT = invN * ws.firstTrial(rows, p, t, ws.spec)
			} else if plainLogistic {
				lossT = invN * logisticPass(ws.mt, ws.m, t, ws.q, rows.y, ws.g1t, ws.g2t)
			} else if weightedLogistic {
				lossT = invN * weightedPass(ws.mt, ws.m, t, ws.q, rows.y, rows.weight, ws.g1t, ws.g2t)
			} else {
				floats.AddScaledTo(ws.mt, ws.m, t, ws.q)
				lossT = invN * evalLoss(obj.Loss, ws.mt, rows.y, rows.weight, ws.g1t, ws.g2t)
			}
			ft := 0.5*lam*(ww+t*(2*wp+t*pp)) + lw + t*lp + lossT
			if ft <= f+armijoC1*t*slope || (tiny && k == 0 && ft <= f+noise) {
				accepted = true
				break
			}
			// Minimizer of the quadratic through φ(0), φ′(0) and φ(t),
			// kept in [0.1t, 0.5t]; a NaN or +Inf φ(t) gives 0.1t.
			tn := -slope * t * t / (2 * (ft - f - slope*t))
			if !(tn >= 0.1*t) {
				tn = 0.1 * t
			}
			t = math.Min(tn, 0.5*t)
		}
		if !accepted {
			if !fresh {
				// A reused factor may give a poor direction: retry with a
				// fresh Hessian before giving up.
				reuse = false
				continue
			}
			res.Status = StatusLineSearchFailed
			break
		}
		// Take the step w ← w + t·p; the trial buffers become current.
		oldF, oldGnorm := f, gnorm
		copy(ws.wOld, w)
		floats.AddScaled(w, t, p)
		ws.swapTrial()
		res.Iter++
		f = penalty(w) + lossT
		if fused && k == 0 {
			// firstTrial left the data gradient at the accepted point.
			copy(ws.grad, ws.spec)
			obj.addPenaltyGrad(ws.grad, w, invN)
			gnorm = floats.Norm(ws.grad, 2)
		} else {
			gnorm = gradient()
		}
		if tiny && gnorm >= oldGnorm && gnorm > tol {
			// A step below the resolution of J that did not reduce the
			// gradient. Undo it (the trial buffers still hold the previous
			// point); retry with a fresh Hessian if the factor was reused,
			// else we are at the float64 floor: stop.
			copy(w, ws.wOld)
			ws.swapTrial()
			res.Iter--
			f = oldF
			gnorm = gradient()
			if !fresh {
				reuse = false
				continue
			}
			res.Status = StatusLineSearchFailed
			break
		}
		reuse = t == 1 && gnorm <= reuseRatio*oldGnorm
		if keepStart {
			// The trial buffers hold the start: keep them.
			ws.startKeep(n)
			keepStart = false
		}
	}
	res.W = append([]float64(nil), w...)
	res.GradNorm = gnorm
	res.Value = f
	return res, nil
}

// factorize builds the Hessian at the current margins (or, when atZero,
// from the cached Gram matrix with the common curvature ℓ″(0)) and factorizes
// it, adding a diagonal shift if needed. It reports false if that fails.
func (ws *Workspace) factorize(rows *Rows, loss Loss, lam, invN float64, atZero bool) bool {
	d := rows.d
	build := func(lam float64) {
		if !atZero {
			buildHessian(ws.hess, rows, ws.g2, ws.scratch, lam, invN)
			return
		}
		c := loss.Deriv2(0) * invN
		for k, v := range rows.gramMatrix() {
			ws.hess[k] = c * v
		}
		for j := 0; j < d; j++ {
			ws.hess[j*d+j] += lam
		}
	}
	build(lam)
	ok := ws.chol.Factorize(ws.sym)
	for k := 1; !ok && k <= 8; k++ {
		build(lam * (1 + math.Pow(10, float64(k))))
		ok = ws.chol.Factorize(ws.sym)
	}
	return ok
}

// swapTrial exchanges the current and trial margin and derivative buffers.
func (ws *Workspace) swapTrial() {
	ws.m, ws.mt = ws.mt, ws.m
	ws.g1, ws.g1t = ws.g1t, ws.g1
	ws.g2, ws.g2t = ws.g2t, ws.g2
}

// solve sets ws.p = −F⁻¹·ws.grad for the current factor F.
func (ws *Workspace) solve() bool {
	if err := ws.chol.SolveVecTo(ws.pv, ws.gv); err != nil {
		// A near-singular factor is reported with a usable solution
		// (mat.Condition); any other error means no direction.
		if _, cond := err.(mat.Condition); !cond {
			return false
		}
	}
	floats.Scale(-1, ws.p)
	return true
}

// maxIntWeight is the largest integer row weight whose logistic loss
// weightedLogisticPass accumulates as a product of factors (bootstrap
// multiplicities above it, probability < 1e-13 per row, take the log1p
// path).
const maxIntWeight = 16

// evalLoss returns Σᵢ ωᵢ·ℓ(mᵢ) and sets g1ᵢ = ωᵢ·yᵢ·ℓ′(mᵢ) and g2ᵢ = ωᵢ·ℓ″(mᵢ)
// (ω nil means all 1). The logistic loss is evaluated by logisticPass (ω nil)
// or weightedLogisticPass (through weightedPass), the Huber loss by an
// inlined loop.
func evalLoss(loss Loss, m, y, omega, g1, g2 []float64) float64 {
	n := len(m)
	y, g1, g2 = y[:n], g1[:n], g2[:n]
	var s float64
	switch l := loss.(type) {
	case Logistic:
		if omega == nil {
			return logisticPass(nil, m, 0, nil, y, g1, g2)
		}
		return weightedPass(nil, m, 0, nil, y, omega, g1, g2)
	case Huber:
		h := l.H
		c2 := 1 / (2 * h)
		for i, z := range m {
			var v, d1, d2 float64
			switch {
			case z > 1+h:
			case z < 1-h:
				v, d1 = 1-z, -1
			default:
				u := 1 + h - z
				v, d1, d2 = u*u/(4*h), -u*c2, c2
			}
			if omega != nil {
				o := omega[i]
				v *= o
				d1 *= o
				d2 *= o
			}
			s += v
			g1[i] = y[i] * d1
			g2[i] = d2
		}
	default:
		for i, z := range m {
			o := 1.0
			if omega != nil {
				o = omega[i]
			}
			s += o * l.Value(z)
			g1[i] = o * y[i] * l.Deriv(z)
			g2[i] = o * l.Deriv2(z)
		}
	}
	return s
}

// logisticPass is evalLoss for the unweighted logistic loss at the margins
// zᵢ = mᵢ + t·qᵢ (q nil: zᵢ = mᵢ): it returns Σᵢ ℓ(zᵢ) and sets g1ᵢ =
// yᵢ·ℓ′(zᵢ), g2ᵢ = ℓ″(zᵢ) and, when q is not nil, dstᵢ = zᵢ. Its
// floating-point operations are exactly those of floats.AddScaledTo(dst, m,
// t, q) (one product and one sum per row) followed by evalLoss's general
// logistic loop with ω = nil, so its results are bit-identical to theirs:
// the same e = expNeg(|z|), r = 1/(1 + e), ℓ′ = −e·r (z ≥ 0) or −r (z < 0),
// ℓ″ = (e·r)·r, hinge terms added in row order and the factors (1 + e)
// multiplied in blocks of 32 rows i ∈ [32k, 32k + 32), each block's product
// logged once. (ℓ(z) = max(−z, 0) + log(1 + e) with e = exp(−|z|); a
// block's product of factors (1 + e) ∈ (1, 2] cannot overflow (< 2³²), and
// one log per block instead of one log1p per row costs an absolute error
// of a few ε_mach per block, the order of rounding 1 + e itself.) Only the control flow differs: the trial margins are formed
// in the same pass (one pass over n fewer per line-search trial), no
// weight test per row, a loop per block of 32 instead of a counter, e·r
// computed once, a branch-free choice on the sign of z, and expNeg inlined
// by hand (its call was a tenth of the pass).
func logisticPass(dst, m []float64, t float64, q, y, g1, g2 []float64) float64 {
	s := logisticSums{prod: 1}
	logisticRange(dst, m, t, q, y, g1, g2, &s)
	return s.total()
}

// logisticSums holds the running sums of logisticPass between calls of
// logisticRange: the hinge terms, the logs of the finished 32-row blocks and
// the product of the factors (1 + e) of the unfinished block.
type logisticSums struct{ hinge, logs, prod float64 }

// total returns hinge + logs + log(prod), the loss sum of logisticPass.
func (s *logisticSums) total() float64 { return s.hinge + s.logs + math.Log(s.prod) }

// logisticRange is the loop of logisticPass over the rows of m (and of dst,
// q, y, g1, g2, indexed alike), continuing the sums in s (a zero hinge and
// logs and a prod of 1 to start). Called on consecutive ranges whose
// lengths, all but the last, are multiples of 32, it performs the
// operations of one call of logisticPass on their union in the same order
// (the 32-row blocks fall alike; prod is 1 between ranges), so s.total() is
// bit-identical to it.
func logisticRange(dst, m []float64, t float64, q, y, g1, g2 []float64, s *logisticSums) {
	n := len(m)
	y, g1, g2 = y[:n], g1[:n], g2[:n]
	if q != nil {
		dst, q = dst[:n], q[:n]
	}
	hinge, logs, prod := s.hinge, s.logs, s.prod
	for lo := 0; lo < n; lo += 32 {
		hi := min(lo+32, n)
		prod = 1
		mb, yb, g1b, g2b := m[lo:hi], y[lo:hi], g1[lo:hi], g2[lo:hi]
		yb, g1b, g2b = yb[:len(mb)], g1b[:len(mb)], g2b[:len(mb)]
		if q != nil {
			// The trial margins m + t·q, rounded as AddScaledTo rounds
			// them (t·qᵢ, then the sum; no fused multiply-add on amd64).
			db, qb := dst[lo:hi], q[lo:hi]
			db, qb = db[:len(mb)], qb[:len(mb)]
			for i, v := range mb {
				db[i] = v + t*qb[i]
			}
			mb = db
		}
		hinge, prod = logisticRows(mb, yb, g1b, g2b, hinge, prod)
		if hi-lo == 32 {
			logs += math.Log(prod)
			prod = 1
		}
	}
	s.hinge, s.logs, s.prod = hinge, logs, prod
}

// logisticRows sets g1ᵢ = yᵢ·ℓ′(zᵢ) and g2ᵢ = ℓ″(zᵢ) for the margins z (one
// 32-row block of logisticRange at most) and returns the hinge sum and the
// product of the factors 1 + e continued over its rows in order. With
// AVX2 (useAVX2) the rows up to a multiple of 4 go through
// logisticRowsAVX2, four lanes performing the operations of
// logisticRowsGo in the same order, and the rest through logisticRowsGo:
// the same values bit for bit (TestLogisticRows_AVX2SameBits).
func logisticRows(z, y, g1, g2 []float64, hinge, prod float64) (float64, float64) {
	n := len(z)
	y, g1, g2 = y[:n], g1[:n], g2[:n]
	if k := n &^ 3; useAVX2 && k > 0 {
		hinge, prod = logisticRowsAVX2(&z[0], &y[0], &g1[0], &g2[0], k, hinge, prod)
		z, y, g1, g2 = z[k:], y[k:], g1[k:], g2[k:]
	}
	return logisticRowsGo(z, y, g1, g2, hinge, prod)
}

// logisticRowsGo is the row loop of logisticRange in Go: the per-row
// values of weightedRowsGo without weights (e = expNeg(|z|), r = 1/(1 + e),
// g1ᵢ = yᵢ·ℓ′ with ℓ′ = −e·r (z ≥ 0) or −r (z < 0), g2ᵢ = (e·r)·r), then
// hinge += max(−z, 0) and prod *= 1 + e in row order. z holds at most 32
// rows (one block of logisticRange).
func logisticRowsGo(z, y, g1, g2 []float64, hinge, prod float64) (float64, float64) {
	var eb, hb [32]float64
	e, hz := eb[:len(z)], hb[:len(z)]
	weightedRowsGo(z, y, nil, g1, g2, e, hz)
	for i, e := range e {
		hinge += hz[i]
		prod *= 1 + e
	}
	return hinge, prod
}

// firstTrial is the first line-search trial of a Newton step of Fit for the
// unweighted logistic loss, fused into one pass over the rows block by
// block (block rows at a time, so that each block's q, m, trial margins
// and derivatives stay in L1/L2 cache between the three kernels instead of
// being streamed from memory by three passes over n). For each block it
// sets q = yᵢ·xᵢᵀp (as margins(q, p, y)), runs logisticRange at the trial
// margins mt = m + t·q (setting g1t, g2t), and adds the block's part of
// Σᵢ g1tᵢ·xᵢ over the dense columns to spec; after the blocks it adds the
// sparse part. It returns the loss sum at mt.
//
// Every value is the one the unfused sequence gives, bit for bit: margins
// are per row; logisticRange over consecutive blocks (block is a multiple
// of 32) is logisticPass over n; and spec, cleared first, receives the
// same Dot per block and column in the same order, then the same sparse
// updates, as mulTransAdd(clear(g), g1t) — so when the step is accepted at
// this trial, spec is the data part of the gradient at the new point and
// Fit need not make another pass. (If it is rejected, spec is unused: one
// Dot per dense column and block of wasted work.)
func (ws *Workspace) firstTrial(r *Rows, p []float64, t float64, spec []float64) float64 {
	n := r.n
	y := r.y[:n]
	q, m, mt, g1, g2 := ws.q[:n], ws.m[:n], ws.mt[:n], ws.g1t[:n], ws.g2t[:n]
	clear(spec)
	sums := logisticSums{prod: 1}
	for lo := 0; lo < n; lo += block {
		hi := min(lo+block, n)
		seg := q[lo:hi]
		r.marginsBlock(seg, p, lo)
		ys := y[lo:hi]
		ys = ys[:len(seg)]
		for i, v := range ys {
			seg[i] *= v
		}
		logisticRange(mt[lo:hi], m[lo:hi], t, seg, ys, g1[lo:hi], g2[lo:hi], &sums)
		r.addColumnDots(spec, r.dcols, g1[lo:hi], lo, 0, len(r.dcols))
	}
	if len(r.sCol) > 0 {
		r.mulTransAddSparse(spec, g1)
	}
	return sums.total()
}

// fuseFirstTrial makes Fit take the first line-search trial of each Newton
// step of an unweighted logistic fit through firstTrial. It is a variable
// only so that a test can run Fit with the unfused sequence (margins of p,
// logisticPass, then the gradient pass) and compare the two Results bit for
// bit; nothing else assigns it.
var fuseFirstTrial = true

// weightedPass is the weighted logistic pass of evalLoss and Fit:
// weightedLogisticPass. It is a variable only so that a test can run Fit
// with the unfused reference (floats.AddScaledTo followed by the weighted
// logistic loop evalLoss had before weightedLogisticPass) and compare the
// two Results bit for bit; nothing else assigns it.
var weightedPass = weightedLogisticPass

// weightedLogisticPass is evalLoss for the logistic loss with row weights ω
// (not nil) at the margins zᵢ = mᵢ + t·qᵢ (q nil: zᵢ = mᵢ): it returns
// Σᵢ ωᵢ·ℓ(zᵢ) and sets g1ᵢ = ωᵢ·yᵢ·ℓ′(zᵢ), g2ᵢ = ωᵢ·ℓ″(zᵢ) and, when q is not
// nil, dstᵢ = zᵢ (for every row, zero weight or not).
//
// ℓ(z) = max(−z, 0) + log(1 + e) with e = exp(−|z|) ∈ [0, 1], so no z
// overflows. Rows of weight 0 are skipped (g1ᵢ = g2ᵢ = 0; a replicate made
// by [Rows.WithWeights] leaves about 37 % of its rows at 0, one made by
// [Rows.Resample] none). A row with a small integer weight ω ≤ maxIntWeight
// (a bootstrap multiplicity) multiplies its factor (1 + e) ∈ (1, 2] ω times
// into a running product, in row order, flushed to a log as soon as it
// exceeds 2⁸³⁰ (so it stays below 2^(830+maxIntWeight): no overflow), and
// adds ω·max(−z, 0) to the hinge sum; any other weight adds
// ω·(max(−z, 0) + log1p(e)) directly to the sum s. The result is
//
//	s + (hinge + logs + log(product))
//
// Its floating-point operations are exactly those of floats.AddScaledTo(dst,
// m, t, q) (t·qᵢ, then the sum) followed by the weighted logistic loop that
// evalLoss held before this pass (kept verbatim in pass_test.go as
// refWeightedLogisticLoop), in the same order, so its results are
// bit-identical to theirs: the same e = expNeg(|z|), r = 1/(1 + e),
// ℓ′ = −e·r (z ≥ 0) or −r (z < 0), ℓ″ = (e·r)·r, g1ᵢ = yᵢ·(ℓ′·ωᵢ),
// g2ᵢ = ℓ″·ωᵢ. As in logisticPass only the control flow differs: rows go
// in chunks of weightedChunk, each chunk's trial margins formed first, then
// its per-row values e, max(−z, 0), g1ᵢ and g2ᵢ (weightedRows: with AVX2
// four rows at a time), then its sums in row order; e·r is computed once,
// the sign of z selects hz and ℓ′ without a branch, the running product for
// a weight k ≤ 3 is picked by masks among its values after one, two and
// three factors (no loop), and expNeg is inlined by hand (in a CPU profile
// of kinds/cicoverage's BenchmarkVIFits, expNeg took 13 % of the time
// against 38 % for the whole weighted evalLoss). The explicit
// float64 conversion of t·qᵢ forbids a fused multiply-add, which
// AddScaledTo (assembly on amd64) does not use; the other expressions are
// those of the reference, which the compiler treats alike (on amd64 with
// the default GOAMD64=v1 it fuses nothing). A NaN margin of nonzero weight
// (never formed by Fit from finite data) gives a NaN sum, g1ᵢ and g2ᵢ here
// as in the reference; the sign and payload of those NaNs are not
// specified by Go and are not compared.
func weightedLogisticPass(dst, m []float64, t float64, q, y, omega, g1, g2 []float64) float64 {
	n := len(m)
	y, omega, g1, g2 = y[:n], omega[:n], g1[:n], g2[:n]
	if q != nil {
		dst, q = dst[:n], q[:n]
	}
	var s, hinge, logs float64
	wprod := 1.0
	// Rows go in chunks: their trial margins, then their per-row values
	// (e, hz, g1, g2: weightedRows), then the sums in row order.
	var eb, hb [weightedChunk]float64
	for lo := 0; lo < n; lo += weightedChunk {
		hi := min(lo+weightedChunk, n)
		z := m[lo:hi]
		if q != nil {
			db, qb := dst[lo:hi], q[lo:hi]
			db, qb = db[:len(z)], qb[:len(z)]
			for i, v := range z {
				db[i] = v + float64(t*qb[i])
			}
			z = db
		}
		ob := omega[lo:hi]
		ob = ob[:len(z)]
		e, hzs := eb[:len(z)], hb[:len(z)]
		weightedRows(z, y[lo:hi], ob, g1[lo:hi], g2[lo:hi], e, hzs)
		for i, o := range ob {
			if o == 0 {
				continue
			}
			e, hz := e[i], hzs[i]
			if k := int(o); float64(k) == o && k > 0 && k <= maxIntWeight {
				// wprod·fᵏ, multiplied one factor at a time as the reference
				// does. For k ≤ 3 (97 % of nonzero bootstrap multiplicities) the
				// products with one, two and three factors are all formed and
				// one is picked by masks, so that the unpredictable k costs
				// no mispredicted loop exit; the extra products cannot
				// overflow (wprod ≤ 2⁸³⁰ here, f ≤ 2).
				f := 1 + e
				p1 := wprod * f
				p2 := p1 * f
				p3 := p2 * f
				if k <= 3 {
					ge2 := uint64(int64(1-k) >> 63) // all ones iff k ≥ 2
					ge3 := uint64(int64(2-k) >> 63) // all ones iff k = 3
					b := math.Float64bits(p1)&^ge2 | math.Float64bits(p2)&ge2
					wprod = math.Float64frombits(b&^ge3 | math.Float64bits(p3)&ge3)
				} else {
					wprod = p3
					for k -= 3; k > 0; k-- {
						wprod *= f
					}
				}
				hinge += o * hz
				if wprod > 0x1p830 {
					logs += math.Log(wprod)
					wprod = 1
				}
			} else {
				s += o * (hz + math.Log1p(e))
			}
		}
	}
	return s + (hinge + logs + math.Log(wprod))
}

// weightedChunk is the number of rows weightedLogisticPass takes at a time
// (its per-row values live in arrays of this length on the stack).
const weightedChunk = 64

// weightedRows sets, for the rows of z, e = expNeg(|z|), hz = max(−z, 0)
// (+0 for z ≥ 0, chosen on the sign bit), g1 = y·(ℓ′·ω) and g2 = (e·r·r)·ω
// with r = 1/(1 + e) and ℓ′ = −r (sign bit of z set) or −e·r, and g1 = g2 =
// +0 where ω = 0. With AVX2 (useAVX2) the rows up to a multiple of 4 go
// through weightedRowsAVX2 and the rest through weightedRowsGo: the same
// values bit for bit.
func weightedRows(z, y, omega, g1, g2, e, hz []float64) {
	n := len(z)
	y, omega, g1, g2, e, hz = y[:n], omega[:n], g1[:n], g2[:n], e[:n], hz[:n]
	if k := n &^ 3; useAVX2 && k > 0 {
		weightedRowsAVX2(&z[0], &y[0], &omega[0], &g1[0], &g2[0], &e[0], &hz[0], k)
		z, y, omega, g1, g2, e, hz = z[k:], y[k:], omega[k:], g1[k:], g2[k:], e[k:], hz[k:]
	}
	weightedRowsGo(z, y, omega, g1, g2, e, hz)
}

// weightedRowsGo is weightedRows in Go, the reference of the kernels; a
// nil omega means no weights (g1 = y·ℓ′, g2 = e·r·r: the values with ω = 1,
// whose products are exact), for logisticRowsGo.
func weightedRowsGo(z, y, omega, g1, g2, e, hz []float64) {
	y, g1, g2, e, hz = y[:len(z)], g1[:len(z)], g2[:len(z)], e[:len(z)], hz[:len(z)]
	if omega != nil {
		omega = omega[:len(z)]
	}
	for i, z := range z {
		x := math.Abs(z)
		var ei float64
		if x <= 708 {
			// expNeg(x), inlined: see there.
			const (
				log2e = 1.4426950408889634
				ln2Hi = 6.93147180369123816490e-01
				ln2Lo = 1.90821492927058770002e-10
			)
			k := math.Floor(x*log2e + 0.5)
			r := (k*ln2Hi - x) + k*ln2Lo
			r2 := r * r
			r4 := r2 * r2
			p01 := 1 + r
			p23 := 1.0/2 + r*(1.0/6)
			p45 := 1.0/24 + r*(1.0/120)
			p67 := 1.0/720 + r*(1.0/5040)
			p89 := 1.0/40320 + r*(1.0/362880)
			pab := 1.0/3628800 + r*(1.0/39916800)
			const pc = 1.0 / 479001600
			p := p01 + r2*p23 + r4*(p45+r2*p67) + r4*r4*(p89+r2*pab+r4*pc)
			ei = math.Float64frombits(math.Float64bits(p) - uint64(k)<<52)
		} else {
			ei = expNeg(x) // 0, or NaN for NaN
		}
		r := 1 / (1 + ei)
		er := ei * r
		// Branch-free select, as in logisticPass: for z < 0, hz = −z and
		// ℓ′ = −r, else hz = +0 and ℓ′ = −e·r (both agree at z = −0).
		neg := uint64(int64(math.Float64bits(z)) >> 63)
		e[i] = ei
		hz[i] = math.Float64frombits(math.Float64bits(-z) & neg)
		d1 := math.Float64frombits(math.Float64bits(-r)&neg | math.Float64bits(-er)&^neg)
		if omega == nil {
			g1[i] = y[i] * d1
			g2[i] = er * r
			continue
		}
		o := omega[i]
		if o == 0 {
			g1[i], g2[i] = 0, 0
			continue
		}
		g1[i] = y[i] * (d1 * o)
		g2[i] = (er * r) * o
	}
}

// expNeg returns exp(−x) for x ≥ 0 (NaN for NaN), with relative error below
// 1e-15 (tested against math.Exp), and 0 for x > 708 where exp(−x) is
// subnormal (absolute error < 3e-308). It is about twice as fast as math.Exp
// on the development machine because the degree-12 Taylor polynomial of the
// reduced argument is evaluated in Estrin form (short dependency chains) and
// the scaling by 2⁻ᵏ is a direct exponent subtraction. The loss pass of Fit
// evaluates one exponential per row per trial point, which made math.Exp
// the largest single cost of a Newton step with a reused Hessian.
// logisticPass and weightedLogisticPass hold inlined copies of this body
// (the compiler does not inline it): a change here must be made there too —
// TestInlinedExpNeg_BitIdentical compares both with loops that call expNeg,
// bit for bit, over expNeg's whole domain.
func expNeg(x float64) float64 {
	if !(x <= 708) {
		if x > 708 {
			return 0
		}
		return x // NaN
	}
	const (
		log2e = 1.4426950408889634
		ln2Hi = 6.93147180369123816490e-01 // ln 2 split for an exact k·ln2Hi
		ln2Lo = 1.90821492927058770002e-10
	)
	k := math.Floor(x*log2e + 0.5) // 0 ≤ k ≤ 1021
	r := (k*ln2Hi - x) + k*ln2Lo   // −x + k·ln 2 ∈ [−ln2/2, ln2/2]
	r2 := r * r
	r4 := r2 * r2
	// Σ_{j≤12} rʲ/j!, grouped in pairs (Estrin); truncation error
	// |r|¹³/13! < 2e-16 for |r| ≤ ln2/2.
	p01 := 1 + r
	p23 := 1.0/2 + r*(1.0/6)
	p45 := 1.0/24 + r*(1.0/120)
	p67 := 1.0/720 + r*(1.0/5040)
	p89 := 1.0/40320 + r*(1.0/362880)
	pab := 1.0/3628800 + r*(1.0/39916800)
	const pc = 1.0 / 479001600
	p := p01 + r2*p23 + r4*(p45+r2*p67) + r4*r4*(p89+r2*pab+r4*pc)
	// p ∈ [0.70, 1.42] has a biased exponent of 1022 or 1023; subtracting
	// k ≤ 1021 keeps it ≥ 1: the result is a normal number.
	return math.Float64frombits(math.Float64bits(p) - uint64(k)<<52)
}
