// Package glm fits the binomial generalized linear model with the logit
// link by iteratively reweighted least squares (IRLS) the way R's
// glm(family = binomial) does, and selects model terms by backward
// elimination under an information criterion the way R's step() does when
// it is given a fitted model and nothing else.
//
// It exists for one non-private preprocessing step of Chaudhuri & Vinterbo,
// "A Stability-based Validation Procedure for Differentially Private
// Machine Learning" (NIPS 2013), Section 5: on Adult "we selected 52
// predictors using the step procedure for a model computed by glm with
// family binomial and logit link function". That selection reads every
// record and its label; nothing here is differentially private, and the
// caller must say so wherever it is used (datasets: data.select).
//
// # What is R's, and what is not
//
// [Fit] follows R's glm.fit (R 4.x, src/library/stats/R/glm.R) with
// prior weights 1: the start μ = (y + ½)/2, the working response and
// weights, the convergence rule |dev − dev_old|/(|dev| + 0.1) < ε with
// ε = 1e-8 and at most 25 iterations, and the logit link's clamping
// (|η| > 30 gives μ at DBL_EPSILON from 0 or 1 and dμ/dη = DBL_EPSILON, as
// R's C_logit_linkinv and C_logit_mu_eta do). Deviation: R solves each
// weighted least-squares step by a pivoted Householder QR of the n × p
// matrix; Fit solves the normal equations XᵀWX β = XᵀWz by a Cholesky
// factorization, accumulated over each row's nonzeros (indicator columns
// are sparse), and finds the aliased columns once per model by a pivoted
// Cholesky factorization of XᵀX in column order (a column whose residual
// diagonal is below 1e-9 of its own diagonal is aliased, the later column
// of a linear dependency, as R's limited pivoting chooses it). The
// deviances agree with R's to about 1e-6 relative; a criterion difference
// between two candidate models smaller than that could be decided
// differently. When separation drives fitted probabilities to 0 or 1, the
// working weights of those rows fall to about DBL_EPSILON and the normal
// equations can become numerically singular; R's QR then pivots the
// negligible columns out of that iteration, while Fit stops at the last
// iterate and reports it (Result.Breakdown, Converged false) — both leave
// a deviance near its limit, not the same digits.
//
// [Backward] follows R's step(fit, k = k) without a scope: direction
// "both" with no scope runs backward only. Each step refits the model
// without each of its terms (R's drop1.glm refits from glm.fit's own start;
// so does Backward) and scores a model by deviance + k·rank (extractAIC of
// a binomial glm with 0/1 responses); a term whose removal leaves the rank
// unchanged (wholly aliased) is dropped first, whatever its score, as
// step's "Df == 0" rule does; otherwise the lowest score wins, ties to
// "keep everything" and then to the earlier term, and the search stops
// when no removal lowers the score by 1e-7 or more. k = 2 is AIC, k =
// log(n) is BIC.
package glm

import (
	"errors"
	"fmt"
	"math"
)

// Design is a model matrix in compressed sparse rows: column 0 is the
// intercept (1 in every row, stored implicitly), and every other column
// belongs to one term (an attribute: a numeric column, or the indicators of
// a categorical one). Build it with [NewDesign] and [Design.AddRow].
type Design struct {
	// Terms names the terms, in model-formula order.
	Terms []string
	// ColTerm gives the term index of each column; ColTerm[0] = −1 (the
	// intercept, never dropped).
	ColTerm []int
	// ColNames names each column ("(Intercept)", "age", "workclass=Private").
	ColNames []string

	start []int     // row i's nonzeros are idx/val[start[i]:start[i+1]]
	idx   []int32   // column index, ascending within a row, never 0
	val   []float64 // value
	y     []float64 // response, 0 or 1
}

// NewDesign returns an empty design with the given terms; columns lists,
// per term, the names of its columns (one for a numeric term, one per
// non-reference level for a categorical term).
func NewDesign(terms []string, columns [][]string) (*Design, error) {
	if len(terms) != len(columns) {
		return nil, fmt.Errorf("glm: %d terms but %d column lists", len(terms), len(columns))
	}
	d := &Design{Terms: terms, ColTerm: []int{-1}, ColNames: []string{"(Intercept)"}, start: []int{0}}
	for t, cols := range columns {
		if len(cols) == 0 {
			return nil, fmt.Errorf("glm: term %q has no columns", terms[t])
		}
		for _, c := range cols {
			d.ColTerm = append(d.ColTerm, t)
			d.ColNames = append(d.ColNames, c)
		}
	}
	return d, nil
}

// AddRow appends a record with response y (0 or 1) and its nonzero
// entries: cols (indices ≥ 1, ascending) and vals.
func (d *Design) AddRow(y float64, cols []int32, vals []float64) error {
	if y != 0 && y != 1 {
		return fmt.Errorf("glm: response %v of row %d is not 0 or 1", y, len(d.y)+1)
	}
	prev := int32(0)
	for k, c := range cols {
		if c <= prev || int(c) >= len(d.ColTerm) {
			return fmt.Errorf("glm: row %d: column index %d out of order or range", len(d.y)+1, c)
		}
		if v := vals[k]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("glm: row %d, column %s: value %v is not finite", len(d.y)+1, d.ColNames[c], v)
		}
		prev = c
	}
	d.idx = append(d.idx, cols...)
	d.val = append(d.val, vals...)
	d.start = append(d.start, len(d.idx))
	d.y = append(d.y, y)
	return nil
}

// N returns the number of rows.
func (d *Design) N() int { return len(d.y) }

// P returns the number of columns, the intercept included.
func (d *Design) P() int { return len(d.ColTerm) }

// Result is a fitted model.
type Result struct {
	// Terms lists the term indices in the model.
	Terms []int
	// Deviance is −2 times the log-likelihood (a binomial model with 0/1
	// responses has a saturated log-likelihood of 0).
	Deviance float64
	// Rank is the number of estimable coefficients, the intercept
	// included (R's fit$rank).
	Rank int
	// Aliased lists the model's columns whose coefficient R reports as NA:
	// each is a linear combination of earlier columns.
	Aliased []int
	// Coef holds a coefficient per design column (0 for a column not in
	// the model or aliased), on the design's scale.
	Coef []float64
	// Iterations is the number of IRLS iterations; Converged says whether
	// the convergence rule was met within 25 (R warns when it is not and
	// keeps the last fit; so does Fit).
	Iterations int
	Converged  bool
	// Breakdown, when not empty, says why the iterations stopped early:
	// the weighted least-squares system became singular (separation);
	// the fit is the last iterate and Converged is false.
	Breakdown string
}

// Score returns the information criterion deviance + k·rank (R's
// extractAIC for a binomial glm with 0/1 responses: AIC at k = 2, BIC at
// k = log n).
func (r Result) Score(k float64) float64 { return r.Deviance + k*float64(r.Rank) }

const (
	glmEpsilon = 1e-8 // glm.control()$epsilon
	glmMaxit   = 25   // glm.control()$maxit
	thresh     = 30.0 // THRESH and MTHRESH of R's family.c
	dblEps     = 0x1p-52
	aliasTol   = 1e-9 // residual diagonal relative to the column's own, pivoted Cholesky
)

// logitLink returns logitLinkinv(eta) and logitMuEta(eta) with one
// exponential (the same values as the two functions).
func logitLink(eta float64) (mu, muEta float64) {
	if eta < -thresh || eta > thresh {
		return logitLinkinv(eta), dblEps
	}
	e := math.Exp(eta)
	return e / (1 + e), e / ((1 + e) * (1 + e))
}

// logitLinkinv is R's C_logit_linkinv: μ = e^η/(1 + e^η) with η clamped
// so that μ stays DBL_EPSILON-ish away from 0 and 1.
func logitLinkinv(eta float64) float64 {
	var t float64
	switch {
	case eta < -thresh:
		t = dblEps
	case eta > thresh:
		t = 1 / dblEps
	default:
		t = math.Exp(eta)
	}
	return t / (1 + t)
}

// logitMuEta is R's C_logit_mu_eta: dμ/dη = e^η/(1 + e^η)², DBL_EPSILON
// beyond |η| > 30.
func logitMuEta(eta float64) float64 {
	if eta > thresh || eta < -thresh {
		return dblEps
	}
	e := math.Exp(eta)
	return e / ((1 + e) * (1 + e))
}

// devResid is the binomial unit deviance of R's C_binomial_dev_resids for
// a 0/1 response: −2 log μ for y = 1, −2 log(1 − μ) for y = 0.
func devResid(y, mu float64) float64 {
	if y == 1 {
		return -2 * math.Log(mu)
	}
	return -2 * math.Log(1-mu)
}

// Fit fits the model with the given terms (indices into d.Terms, in any
// order; the intercept is always in) by R's IRLS. An error is returned only
// when the fit breaks down (a non-finite deviance or a singular system
// after removing the aliased columns); non-convergence within 25
// iterations is reported in Result.Converged, as R warns and goes on.
func Fit(d *Design, terms []int) (Result, error) {
	if d.N() == 0 {
		return Result{}, errors.New("glm: no rows")
	}
	inTerm := make([]bool, len(d.Terms))
	for _, t := range terms {
		if t < 0 || t >= len(d.Terms) {
			return Result{}, fmt.Errorf("glm: term index %d out of range", t)
		}
		inTerm[t] = true
	}
	var model []int // model columns, ascending
	for j, t := range d.ColTerm {
		if t < 0 || inTerm[t] {
			model = append(model, j)
		}
	}
	active, aliased := d.estimable(model)
	pos := make([]int, d.P()) // column → position among active, −1 if not
	for j := range pos {
		pos[j] = -1
	}
	for k, j := range active {
		pos[j] = k
	}
	p := len(active)
	n := d.N()

	// The model's rows, compacted to the active columns (positions).
	start := make([]int, n+1)
	var ks []int32
	var vs []float64
	var rowK []int
	var rowV []float64
	for i := range n {
		rowK, rowV = d.activeRow(i, pos, rowK[:0], rowV[:0])
		for a, k := range rowK {
			ks = append(ks, int32(k))
			vs = append(vs, rowV[a])
		}
		start[i+1] = len(ks)
	}

	eta := make([]float64, n)
	mu := make([]float64, n)
	muEta := make([]float64, n)
	var devOld float64
	for i, y := range d.y {
		// glm.fit: mustart = (y + 0.5)/2 (binomial()$initialize with
		// prior weights 1), eta = linkfun(mustart), mu = linkinv(eta).
		m := (y + 0.5) / 2
		eta[i] = math.Log(m / (1 - m))
		mu[i], muEta[i] = logitLink(eta[i])
		devOld += devResid(y, mu[i])
	}
	xtwx := make([]float64, p*p)
	xtwz := make([]float64, p)
	beta := make([]float64, p)
	next := make([]float64, p)
	res := Result{Terms: append([]int(nil), terms...), Rank: p, Aliased: aliased}
	for iter := 1; iter <= glmMaxit; iter++ {
		clear(xtwx)
		clear(xtwz)
		for i, y := range d.y {
			me := muEta[i]
			z := eta[i] + (y-mu[i])/me
			w := me * me / (mu[i] * (1 - mu[i]))
			rk, rv := ks[start[i]:start[i+1]], vs[start[i]:start[i+1]]
			for a, ka := range rk {
				wa := w * rv[a]
				xtwz[ka] += wa * z
				r := xtwx[int(ka)*p:]
				for b := a; b < len(rk); b++ {
					r[rk[b]] += wa * rv[b]
				}
			}
		}
		if err := cholSolve(xtwx, xtwz, next, p); err != nil {
			if iter == 1 {
				return Result{}, fmt.Errorf("glm: iteration 1: %w", err)
			}
			// The weights have made the system singular: fitted
			// probabilities at 0 or 1 (separation) leave some columns
			// with weights of DBL_EPSILON. Keep the last iterate and
			// report no convergence (see the package comment).
			res.Breakdown = fmt.Sprintf("iteration %d: %v; the fit stops at iteration %d", iter, err, iter-1)
			break
		}
		copy(beta, next)
		var dev float64
		for i, y := range d.y {
			rk, rv := ks[start[i]:start[i+1]], vs[start[i]:start[i+1]]
			var e float64
			for a, ka := range rk {
				e += beta[ka] * rv[a]
			}
			eta[i] = e
			mu[i], muEta[i] = logitLink(e)
			dev += devResid(y, mu[i])
		}
		if math.IsNaN(dev) || math.IsInf(dev, 0) {
			return Result{}, fmt.Errorf("glm: iteration %d: deviance is not finite", iter)
		}
		res.Iterations = iter
		res.Deviance = dev
		if math.Abs(dev-devOld)/(math.Abs(dev)+0.1) < glmEpsilon {
			res.Converged = true
			break
		}
		devOld = dev
	}
	res.Coef = make([]float64, d.P())
	for k, j := range active {
		res.Coef[j] = beta[k]
	}
	return res, nil
}

// activeRow appends row i's entries in active columns (positions from pos;
// the intercept at position 0 first) to ks, vs.
func (d *Design) activeRow(i int, pos []int, ks []int, vs []float64) ([]int, []float64) {
	ks = append(ks, 0)
	vs = append(vs, 1)
	for k := d.start[i]; k < d.start[i+1]; k++ {
		if q := pos[d.idx[k]]; q >= 0 {
			ks = append(ks, q)
			vs = append(vs, d.val[k])
		}
	}
	return ks, vs
}

// estimable splits the model's columns into those with an estimable
// coefficient and the aliased ones, by a Cholesky factorization of XᵀX over
// the model columns in order, skipping a column whose residual diagonal
// falls below aliasTol of its own diagonal (it lies in the span of the
// columns before it). An exact dependency among 0/1 indicators leaves a
// residual at rounding level (about 1e-15 relative); aliasTol is far above
// that and far below any real column's residual.
func (d *Design) estimable(model []int) (active, aliased []int) {
	m := len(model)
	pos := make([]int, d.P())
	for j := range pos {
		pos[j] = -1
	}
	for k, j := range model {
		pos[j] = k
	}
	g := make([]float64, m*m) // upper triangle of XᵀX over model columns
	var ks []int
	var vs []float64
	for i := range d.y {
		ks, vs = d.activeRow(i, pos, ks[:0], vs[:0])
		for a, ka := range ks {
			r := g[ka*m:]
			for b := a; b < len(ks); b++ {
				r[ks[b]] += vs[a] * vs[b]
			}
		}
	}
	// Column-by-column Cholesky (left-looking) over the kept columns.
	l := make([]float64, m*m) // l[k*m+j]: row j of column k of L, for kept k
	var kept []int
	for c := 0; c < m; c++ {
		diag := g[c*m+c]
		s := diag
		for _, k := range kept {
			s -= l[k*m+c] * l[k*m+c]
		}
		if !(s > aliasTol*diag) {
			aliased = append(aliased, model[c])
			continue
		}
		s = math.Sqrt(s)
		l[c*m+c] = s
		for e := c + 1; e < m; e++ {
			v := g[c*m+e]
			for _, k := range kept {
				v -= l[k*m+c] * l[k*m+e]
			}
			l[c*m+e] = v / s
		}
		kept = append(kept, c)
		active = append(active, model[c])
	}
	return active, aliased
}

// cholSolve solves A x = b for the symmetric positive definite A whose
// upper triangle is in a (p × p, row-major); a is overwritten.
func cholSolve(a, b, x []float64, p int) error {
	// In-place upper Cholesky: A = UᵀU.
	for j := 0; j < p; j++ {
		s := a[j*p+j]
		for k := 0; k < j; k++ {
			s -= a[k*p+j] * a[k*p+j]
		}
		if !(s > 0) {
			return fmt.Errorf("weighted least-squares system not positive definite at column %d", j)
		}
		s = math.Sqrt(s)
		a[j*p+j] = s
		for e := j + 1; e < p; e++ {
			v := a[j*p+e]
			for k := 0; k < j; k++ {
				v -= a[k*p+j] * a[k*p+e]
			}
			a[j*p+e] = v / s
		}
	}
	// Uᵀ y = b, then U x = y.
	for j := 0; j < p; j++ {
		v := b[j]
		for k := 0; k < j; k++ {
			v -= a[k*p+j] * x[k]
		}
		x[j] = v / a[j*p+j]
	}
	for j := p - 1; j >= 0; j-- {
		v := x[j]
		for k := j + 1; k < p; k++ {
			v -= a[j*p+k] * x[k]
		}
		x[j] = v / a[j*p+j]
	}
	return nil
}

// Step is one removal of a backward elimination.
type Step struct {
	// Term names the term removed.
	Term string
	// Score is the criterion of the model after the removal; Deviance and
	// Rank are that model's.
	Score    float64
	Deviance float64
	Rank     int
	// Aliased is true when the term was removed because removing it left
	// the rank unchanged (step's "Df == 0" rule), whatever its score.
	Aliased bool
}

// Selection is the outcome of a backward elimination.
type Selection struct {
	// K is the criterion's penalty per estimable coefficient (2: AIC,
	// log n: BIC).
	K float64
	// Start is the full model's score, Steps the removals in order.
	Start float64
	Steps []Step
	// Kept lists the term indices of the final model, in design order;
	// Final is that model.
	Kept  []int
	Final Result
	// Converged is true when every fit met the convergence rule;
	// Unconverged describes each fit that did not (which model, and why).
	Converged   bool
	Unconverged []string
}

// unconverged describes a fit that did not converge: what stopped it.
func unconverged(model string, r Result) string {
	if r.Breakdown != "" {
		return model + ": " + r.Breakdown
	}
	return fmt.Sprintf("%s: no convergence in %d iterations", model, r.Iterations)
}

// Backward runs R's step(fit, k = k) backward elimination from the model
// with every term of d (see the package comment for the rules).
func Backward(d *Design, k float64) (Selection, error) {
	if !(k > 0) || math.IsInf(k, 0) {
		return Selection{}, fmt.Errorf("glm: criterion penalty k = %v must be finite and > 0", k)
	}
	cur := make([]int, len(d.Terms))
	for t := range cur {
		cur[t] = t
	}
	fit, err := Fit(d, cur)
	if err != nil {
		return Selection{}, err
	}
	sel := Selection{K: k, Start: fit.Score(k), Converged: fit.Converged}
	if !fit.Converged {
		sel.Unconverged = append(sel.Unconverged, unconverged("the full model", fit))
	}
	for len(cur) > 0 {
		score := fit.Score(k)
		type cand struct {
			at  int
			res Result
		}
		var cands []cand
		for at := range cur {
			without := append(append([]int(nil), cur[:at]...), cur[at+1:]...)
			r, err := Fit(d, without)
			if err != nil {
				return Selection{}, fmt.Errorf("glm: without %s: %w", d.Terms[cur[at]], err)
			}
			cands = append(cands, cand{at, r})
			if !r.Converged {
				sel.Converged = false
				sel.Unconverged = append(sel.Unconverged, unconverged(fmt.Sprintf("without %s (of %d terms)", d.Terms[cur[at]], len(cur)), r))
			}
		}
		// step: "if (any(aod$Df == 0)) change <- rev(rownames(aod)[zdf])[1L]":
		// the last term whose removal leaves the rank unchanged.
		chosen, zeroDf := -1, false
		for c := len(cands) - 1; c >= 0; c-- {
			if cands[c].res.Rank == fit.Rank {
				chosen, zeroDf = c, true
				break
			}
		}
		if chosen < 0 {
			// order(aod$AIC): the stable order puts "<none>" first, so a
			// removal must score strictly lower to be chosen.
			best := score
			for c := range cands {
				if s := cands[c].res.Score(k); s < best {
					best, chosen = s, c
				}
			}
			if chosen < 0 {
				break
			}
		}
		next := cands[chosen]
		// step: "if (bAIC >= AIC + 1e-07) break".
		if next.res.Score(k) >= score+1e-7 {
			break
		}
		term := cur[next.at]
		sel.Steps = append(sel.Steps, Step{Term: d.Terms[term], Score: next.res.Score(k), Deviance: next.res.Deviance, Rank: next.res.Rank, Aliased: zeroDf})
		cur = append(cur[:next.at:next.at], cur[next.at+1:]...)
		fit = next.res
	}
	sel.Kept = cur
	sel.Final = fit
	return sel, nil
}
