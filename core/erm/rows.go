package erm

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// ErrNotFinite reports a NaN or infinite value in a design matrix, label,
// weight, objective parameter or initial point.
var ErrNotFinite = errors.New("erm: value is NaN or infinite")

// ErrBadWeights reports per-row weights that are negative or sum to zero.
var ErrBadWeights = errors.New("erm: weights must be >= 0 with a positive sum")

// denseColumnFraction is the fraction of nonzero rows from which a column is
// stored column-major for the margin and gradient passes. Measured on
// Adult-shaped data (n = 24,000, 15 nonzeros per row), moving only the
// always-present columns (intercept, continuous features) helps; moving
// frequent one-hot levels (20–60 % nonzero) as well was slower than leaving
// them in the CSR, whose cost is dominated by per-row overhead.
const denseColumnFraction = 0.9

// Rows is a compressed-sparse-row (CSR) copy of selected rows of a dense
// design matrix X, with their labels (or regression targets) y and optional
// per-row weights ω. Only nonzero entries of X are stored, in increasing
// column order within each row.
//
// The objective of [Fit] averages over rows with weights: (1/N)·Σᵢ ωᵢ·ℓᵢ with
// N = [Rows.SumWeights] = Σᵢ ωᵢ (= [Rows.N] when unweighted), so integer
// weights are equivalent to duplicating rows (bootstrap by multiplicity).
//
// Internally, columns with at least 90 % nonzeros (intercept, continuous
// features) are also kept column-major, so that the passes of the solver run
// over them with vectorized kernels; the CSR part used by those passes then
// holds only the remaining sparse columns.
//
// A Rows is immutable and safe for concurrent use.
type Rows struct {
	n, d   int
	rowPtr []int // full CSR: row i is col[rowPtr[i]:rowPtr[i+1]]
	col    []int
	val    []float64
	// dcols are the densely stored columns (ascending); column dcols[k] is
	// dm[k*n:(k+1)*n]. sPtr/sCol/sVal are the CSR of the other columns.
	dcols []int
	dm    []float64
	sPtr  []int
	sCol  []int
	sVal  []float64

	// csr, when set, holds this Rows' full CSR: stored row i is row
	// keep[i] of csr (a Rows made by Resample, which does not copy the
	// CSR: only the Hessian and Row read it); rowPtr, col and val are
	// then nil and nnz counts the entries. Nil: rowPtr, col and val are
	// this Rows' own.
	csr *Rows
	nnz int
	// rowSS holds each row's ‖xᵢ‖₂² (NaN or +Inf for a row with an
	// invalid value), for the row norms of a resample; like the CSR, a
	// Rows made by Resample reads it from csr.
	rowSS []float64
	// colNNZ holds each column's count of nonzeros, for a Rows made by
	// NewRows (nil otherwise): [Rows.Subset] needs no count of its own
	// for a column that every row or no row has.
	colNNZ []int

	y      []float64
	weight []float64 // nil = all 1
	keep   []int32   // the kept rows of the parent (Resample), also its scratch
	// resampled marks storage allocated by Resample, which a later
	// Resample into the same dst may reuse.
	resampled bool
	sumW      float64
	maxNorm   float64 // max over rows of ‖xᵢ‖₂
	dataErr   error   // first invalid value of X or y
	err       error   // dataErr, else the first invalid weight; reported by solvers
	gram      *gramCache
}

// gramCache holds XᵀΩX, computed on first use. Fit uses it for the Hessian
// at w = 0, where every ℓ″(0) is the same, so a cold start on a Rows that is
// fitted many times (a training fold, for many λ, ε and noise draws) saves
// one Hessian build.
//
// It also holds, for unweighted rows, the logistic loss pass at w = 0
// ([Rows.logisticZero]), which a cold start of Fit would otherwise repeat
// on every fit.
type gramCache struct {
	once sync.Once
	h    []float64 // row-major d×d, both triangles

	zeroOnce sync.Once
	zeroLoss float64   // Σᵢ ℓ(0) as logisticPass sums it
	zeroGrad []float64 // Σᵢ yᵢ·ℓ′(0)·xᵢ as mulTransAdd sums it
}

// NewRows returns a CSR copy of the rows idx of X with labels y[idx[k]]; idx
// nil selects all rows in order. Repeated indices are allowed (they are
// copied twice). y has one entry per row of X.
//
// NewRows panics if len(y) ≠ rows of X, X has no columns, or an index is out
// of range. NaN or infinite entries do not panic: they are recorded and
// reported by [Rows.Err] and by the solvers.
func NewRows(X *mat.Dense, y []float64, idx []int) *Rows {
	r, c := X.Dims()
	if len(y) != r {
		panic(fmt.Sprintf("erm: NewRows: len(y) = %d, X has %d rows", len(y), r))
	}
	if c == 0 {
		panic("erm: NewRows: X has no columns")
	}
	n := r
	if idx != nil {
		n = len(idx)
	}
	rowOf := func(k int) int {
		if idx == nil {
			return k
		}
		i := idx[k]
		if i < 0 || i >= r {
			panic(fmt.Sprintf("erm: NewRows: idx[%d] = %d out of range [0, %d)", k, i, r))
		}
		return i
	}
	colNNZ := make([]int, c)
	nnz := 0
	for k := 0; k < n; k++ {
		for j, v := range X.RawRowView(rowOf(k)) {
			if v != 0 {
				colNNZ[j]++
				nnz++
			}
		}
	}
	rows := &Rows{
		n:      n,
		d:      c,
		rowSS:  make([]float64, n),
		rowPtr: make([]int, n+1),
		col:    make([]int, 0, nnz),
		val:    make([]float64, 0, nnz),
		y:      make([]float64, n),
		sumW:   float64(n),
		gram:   new(gramCache),
		colNNZ: colNNZ,
	}
	slot := make([]int, c) // position in dcols, or −1
	sparseNNZ := 0
	for j, cnt := range colNNZ {
		slot[j] = -1
		if float64(cnt) >= denseColumnFraction*float64(n) {
			slot[j] = len(rows.dcols)
			rows.dcols = append(rows.dcols, j)
		} else {
			sparseNNZ += cnt
		}
	}
	rows.dm = make([]float64, len(rows.dcols)*n)
	rows.sPtr = make([]int, n+1)
	rows.sCol = make([]int, 0, sparseNNZ)
	rows.sVal = make([]float64, 0, sparseNNZ)
	for k := 0; k < n; k++ {
		i := rowOf(k)
		var ss float64
		for j, v := range X.RawRowView(i) {
			if v == 0 {
				continue
			}
			rows.col = append(rows.col, j)
			rows.val = append(rows.val, v)
			ss += v * v
			if s := slot[j]; s >= 0 {
				rows.dm[s*n+k] = v
			} else {
				rows.sCol = append(rows.sCol, j)
				rows.sVal = append(rows.sVal, v)
			}
		}
		rows.rowPtr[k+1] = len(rows.col)
		rows.sPtr[k+1] = len(rows.sCol)
		rows.rowSS[k] = ss
		rows.y[k] = y[i]
		if !isFinite(y[i]) || !isFinite(ss) {
			// A NaN or ±Inf entry makes ss NaN or +Inf; so does overflow of a
			// finite row, which the solvers cannot handle either.
			if rows.dataErr == nil {
				rows.dataErr = fmt.Errorf("erm: row %d (X row %d): %w", k, i, ErrNotFinite)
				rows.err = rows.dataErr
			}
			continue
		}
		rows.maxNorm = math.Max(rows.maxNorm, math.Sqrt(ss))
	}
	return rows
}

// WithWeights returns a Rows sharing r's data with per-row weights w (copied;
// nil removes weights). Weights must be finite and ≥ 0 with a positive sum;
// otherwise the returned Rows reports [ErrBadWeights] or [ErrNotFinite]
// through [Rows.Err]. WithWeights panics if w is non-nil and len(w) ≠ r.N().
func (r *Rows) WithWeights(w []float64) *Rows {
	out := *r
	out.gram = new(gramCache)
	out.err = r.dataErr
	if w == nil {
		out.weight = nil
		out.sumW = float64(r.n)
		return &out
	}
	if len(w) != r.n {
		panic(fmt.Sprintf("erm: WithWeights: len(w) = %d, want %d", len(w), r.n))
	}
	out.weight = append([]float64(nil), w...)
	var s float64
	for i, v := range w {
		switch {
		case !isFinite(v):
			if out.err == nil {
				out.err = fmt.Errorf("erm: weight %d = %v: %w", i, v, ErrNotFinite)
			}
		case v < 0:
			if out.err == nil {
				out.err = fmt.Errorf("erm: weight %d = %v: %w", i, v, ErrBadWeights)
			}
		default:
			s += v
		}
	}
	if !(s > 0) && out.err == nil {
		out.err = fmt.Errorf("erm: weights sum to %v: %w", s, ErrBadWeights)
	}
	out.sumW = s
	return &out
}

// Resample returns a bootstrap replicate of r given by multiplicities:
// a Rows holding, in their order, only the rows i with counts[i] > 0, each
// with weight counts[i]·ωᵢ (ωᵢ = 1 when r is unweighted). Every weighted
// quantity of the solvers (objective, gradient, Hessian) is the same as for
// r.WithWeights(counts) up to rounding, but the ≈ 37 % of rows that a
// bootstrap replicate of n draws leaves out (e⁻¹ of them) are not stored, so
// each pass over the replicate reads ≈ 63 % of the data and meets no zero
// weight. The copy costs one pass over the kept nonzeros. The column layout
// (which columns are stored densely) is r's.
//
// The result is stored in dst, whose storage is reused (nil allocates) when
// an earlier Resample allocated it and r does not share it: a loop over
// replicates allocates little once dst has grown. dst's previous contents
// must no longer be in use, and dst must not be r. A dst that is a copy of
// r, or shares r's arrays (r.WithWeights), gets fresh storage.
//
// A negative count makes the returned Rows report [ErrBadWeights] through
// [Rows.Err] (as do counts that are all zero); an error of r (data or
// weights) is kept.
// Resample panics if len(counts) ≠ r.N() or dst == r.
func (r *Rows) Resample(dst *Rows, counts []int32) *Rows {
	if len(counts) != r.n {
		panic(fmt.Sprintf("erm: Resample: len(counts) = %d, want %d", len(counts), r.n))
	}
	if dst == r {
		panic("erm: Resample: dst is the receiver")
	}
	if dst == nil {
		dst = new(Rows)
	}
	if !dst.resampled || sharesStorage(dst, r) {
		// Reuse only storage that an earlier Resample allocated and that
		// r does not also use (dst may be a copy of r, or r.WithWeights).
		*dst = Rows{}
	}
	out := Rows{d: r.d, dcols: r.dcols, gram: new(gramCache), dataErr: r.dataErr, err: r.err, resampled: true}
	// The full CSR is not copied: out reads it, and the rows' squared
	// norms, from the Rows that holds r's (through out.keep).
	csr := r
	if r.csr != nil {
		csr = r.csr
	}
	out.csr = csr
	// The kept rows, then one tight gather loop per array.
	keep := resize(dst.keep, r.n)[:0]
	for i, c := range counts {
		if c > 0 {
			keep = append(keep, int32(i))
		} else if c < 0 && out.err == nil {
			out.err = fmt.Errorf("erm: count %d = %d: %w", i, c, ErrBadWeights)
		}
	}
	k := len(keep)
	out.n = k
	out.sPtr = resize(dst.sPtr, k+1)
	out.sPtr[0] = 0
	nnz, snnz := 0, 0
	var maxSS float64
	for t, i := range keep {
		nnz += csr.rowLen(r.csrRow(int(i)))
		snnz += r.sPtr[i+1] - r.sPtr[i]
		out.sPtr[t+1] = snnz
		ss := csr.rowSS[r.csrRow(int(i))]
		if ss > maxSS { // false for NaN: rows with invalid values are left out, as in NewRows
			maxSS = ss
		}
	}
	out.nnz = nnz
	out.maxNorm = math.Sqrt(maxSS)
	// out.keep maps out's rows to csr's: keep itself (r's rows) when r
	// holds its own CSR, else composed with r's map.
	out.keep = keep
	if r.csr != nil {
		out.keep = make([]int32, k)
		for t, i := range keep {
			out.keep[t] = r.keep[i]
		}
	}
	out.sCol = resize(dst.sCol, snnz)
	out.sVal = resize(dst.sVal, snnz)
	if snnz > 0 {
		for t, i := range keep {
			lo, hi := r.sPtr[i], r.sPtr[i+1]
			p := out.sPtr[t]
			copy(out.sCol[p:p+hi-lo], r.sCol[lo:hi])
			copy(out.sVal[p:p+hi-lo], r.sVal[lo:hi])
		}
	}
	out.y = resize(dst.y, k)
	out.weight = resize(dst.weight, k)
	for t, i := range keep {
		out.y[t] = r.y[i]
		out.weight[t] = float64(counts[i])
	}
	if r.weight != nil {
		for t, i := range keep {
			out.weight[t] *= r.weight[i]
		}
	}
	for t, w := range out.weight {
		if !isFinite(w) && out.err == nil {
			out.err = fmt.Errorf("erm: weight of row %d = %v: %w", keep[t], w, ErrNotFinite)
		}
		out.sumW += w
	}
	out.dm = resize(dst.dm, len(r.dcols)*k)
	for kk := range r.dcols {
		src := r.dm[kk*r.n : (kk+1)*r.n]
		dcol := out.dm[kk*k : (kk+1)*k]
		for t, i := range keep {
			dcol[t] = src[i]
		}
	}
	if !(out.sumW > 0) && out.err == nil {
		out.err = fmt.Errorf("erm: counts sum to %v: %w", out.sumW, ErrBadWeights)
	}
	*dst = out
	return dst
}

// Subset returns the rows idx of r (repeated indices allowed) as
// NewRows(X, y, idx) returns them when r is NewRows(X, y, nil), bit for
// bit: the same rows, labels, column-major columns (chosen by the subset's
// own column counts), row norms and first invalid row, hence the same
// numbers from every pass and fit. It reads the rows from r's CSR instead
// of scanning X again — a training fold of a one-hot design such as
// Adult's 105 columns with about 14 nonzeros per row is built from its
// nonzeros alone, and a column column-major in both r and the subset is
// gathered from r's — and does not copy the full CSR: the subset reads it,
// and the rows' squared norms, from r (as a Rows made by Resample does).
//
// Subset panics if r is weighted, does not hold its own CSR (a Rows made
// by Resample or Subset) or an index is out of range.
func (r *Rows) Subset(idx []int) *Rows {
	if r.weight != nil || r.csr != nil {
		panic("erm: Subset: r is weighted or does not hold its own CSR")
	}
	n := len(idx)
	colNNZ := make([]int, r.d)
	nnz := 0
	// A column that every row of r has (or none) has n nonzeros in the
	// subset (or none): when every column is such (standardized data, which
	// have no zeros), the counts need no pass over the subset's nonzeros.
	allOrNone := r.colNNZ != nil
	for _, c := range r.colNNZ {
		if c != 0 && c != r.n {
			allOrNone = false
			break
		}
	}
	for k, i := range idx {
		if i < 0 || i >= r.n {
			panic(fmt.Sprintf("erm: Subset: idx[%d] = %d out of range [0, %d)", k, i, r.n))
		}
		if allOrNone {
			continue
		}
		cols := r.col[r.rowPtr[i]:r.rowPtr[i+1]]
		for _, j := range cols {
			colNNZ[j]++
		}
		nnz += len(cols)
	}
	if allOrNone {
		for j, c := range r.colNNZ {
			if c != 0 {
				colNNZ[j] = n
				nnz += n
			}
		}
	}
	out := &Rows{
		n:    n,
		d:    r.d,
		csr:  r,
		nnz:  nnz,
		keep: make([]int32, n),
		y:    make([]float64, n),
		sumW: float64(n),
		gram: new(gramCache),
		sPtr: make([]int, n+1),
	}
	// The column-major columns as NewRows chooses them, from the subset's
	// counts.
	slot := make([]int, r.d)
	sparseNNZ := 0
	for j, cnt := range colNNZ {
		slot[j] = -1
		if float64(cnt) >= denseColumnFraction*float64(len(idx)) {
			slot[j] = len(out.dcols)
			out.dcols = append(out.dcols, j)
		} else {
			sparseNNZ += cnt
		}
	}
	out.dm = make([]float64, len(out.dcols)*n)
	out.sCol = make([]int, 0, sparseNNZ)
	out.sVal = make([]float64, 0, sparseNNZ)
	// A column dense in both r and the subset is gathered from r's
	// column-major column (which holds the row's CSR value, or 0 where the
	// row has none: the same numbers as filling it from the CSR), one
	// sequential write per row instead of a strided write per nonzero; the
	// row loop below then skips it. The other columns are read from the CSR.
	parentSlot := make([]int, r.d)
	for j := range parentSlot {
		parentSlot[j] = -1
	}
	for kp, j := range r.dcols {
		parentSlot[j] = kp
	}
	fromCSR := false
	for j, s := range slot {
		if s >= 0 && parentSlot[j] >= 0 {
			src := r.dm[parentSlot[j]*r.n : (parentSlot[j]+1)*r.n]
			dst := out.dm[s*n : (s+1)*n]
			for k, i := range idx {
				dst[k] = src[i]
			}
			slot[j] = -2 // gathered
		} else if colNNZ[j] > 0 {
			fromCSR = true
		}
	}
	for k, i := range idx {
		out.keep[k] = int32(i)
		if fromCSR {
			lo, hi := r.rowPtr[i], r.rowPtr[i+1]
			cols, vals := r.col[lo:hi], r.val[lo:hi]
			for p, j := range cols {
				switch s := slot[j]; {
				case s >= 0:
					out.dm[s*n+k] = vals[p]
				case s == -1:
					out.sCol = append(out.sCol, j)
					out.sVal = append(out.sVal, vals[p])
				}
			}
		}
		out.sPtr[k+1] = len(out.sCol)
		out.y[k] = r.y[i]
		// r.rowSS[i] is NewRows's ss of the row, summed in the same order.
		if ss := r.rowSS[i]; !isFinite(r.y[i]) || !isFinite(ss) {
			if out.dataErr == nil {
				out.dataErr = fmt.Errorf("erm: row %d (X row %d): %w", k, i, ErrNotFinite)
				out.err = out.dataErr
			}
		} else {
			out.maxNorm = math.Max(out.maxNorm, math.Sqrt(ss))
		}
	}
	return out
}

// resize returns s with length k, reallocated only when its capacity is
// short.
func resize[T any](s []T, k int) []T {
	if cap(s) < k {
		return make([]T, k)
	}
	return s[:k]
}

// N returns the number of stored rows (not the weighted count; see
// [Rows.SumWeights]).
func (r *Rows) N() int { return r.n }

// D returns the number of columns (features).
func (r *Rows) D() int { return r.d }

// NNZ returns the number of stored (nonzero) entries.
func (r *Rows) NNZ() int {
	if r.csr != nil {
		return r.nnz
	}
	return len(r.val)
}

// csrRow returns the row of the Rows holding r's CSR (r.csr, or r) that
// is r's stored row i.
func (r *Rows) csrRow(i int) int {
	if r.csr != nil {
		return int(r.keep[i])
	}
	return i
}

// rowLen returns the number of nonzeros of r's own CSR row i.
func (r *Rows) rowLen(i int) int { return r.rowPtr[i+1] - r.rowPtr[i] }

// rowNZ returns the column indices and values of the nonzeros of stored
// row i, from the CSR that holds them (shared; not to be modified).
func (r *Rows) rowNZ(i int) ([]int, []float64) {
	if r.csr != nil {
		i, r = int(r.keep[i]), r.csr
	}
	lo, hi := r.rowPtr[i], r.rowPtr[i+1]
	return r.col[lo:hi], r.val[lo:hi]
}

// SumWeights returns N = Σᵢ ωᵢ, the effective sample size used in the 1/N of
// the objective; it equals float64(r.N()) when r has no weights.
func (r *Rows) SumWeights() float64 { return r.sumW }

// Weighted reports whether r carries per-row weights.
func (r *Rows) Weighted() bool { return r.weight != nil }

// Weight returns ωᵢ (1 when r has no weights).
func (r *Rows) Weight(i int) float64 {
	if r.weight == nil {
		return 1
	}
	return r.weight[i]
}

// Y returns the labels (targets), one per stored row. The slice is shared
// and must not be modified.
func (r *Rows) Y() []float64 { return r.y }

// Row returns the column indices and values of the nonzeros of row i. The
// slices are shared and must not be modified.
func (r *Rows) Row(i int) (cols []int, vals []float64) { return r.rowNZ(i) }

// MaxRowNorm returns maxᵢ ‖xᵢ‖₂ over the stored rows (ignoring weights and
// rows with non-finite values). Objective and output perturbation require
// it to be ≤ 1.
func (r *Rows) MaxRowNorm() float64 { return r.maxNorm }

// Err returns the first invalid value recorded when r was built: a NaN or
// infinite entry, label or weight, or weights that are negative or sum to
// zero. The solvers return it (wrapped) before doing any work.
func (r *Rows) Err() error { return r.err }

// Margins sets dst[i] = xᵢᵀw for every stored row and returns dst (allocated
// when nil). Labels and weights are not applied. It panics if len(w) ≠ D()
// or a non-nil dst has length ≠ N().
func (r *Rows) Margins(dst, w []float64) []float64 {
	dst = r.nDst(dst, "Margins")
	r.checkD(w, "Margins", "w")
	r.margins(dst, w, nil)
	return dst
}

// MulTrans sets dst = Σᵢ ωᵢ·vᵢ·xᵢ (that is, XᵀΩv with Ω = diag(ω)) and
// returns dst (allocated when nil). It panics if len(v) ≠ N() or a non-nil
// dst has length ≠ D().
func (r *Rows) MulTrans(dst, v []float64) []float64 {
	if len(v) != r.n {
		panic(fmt.Sprintf("erm: MulTrans: len(v) = %d, want %d", len(v), r.n))
	}
	if dst == nil {
		dst = make([]float64, r.d)
	}
	r.checkD(dst, "MulTrans", "dst")
	clear(dst)
	if r.weight == nil {
		r.mulTransAdd(dst, v)
		return dst
	}
	c := make([]float64, r.n)
	for i, vi := range v {
		c[i] = r.weight[i] * vi
	}
	r.mulTransAdd(dst, c)
	return dst
}

// block is the number of rows processed together by the column-major
// kernels, so that the row segment they update stays in L1 cache while all
// dense columns pass over it (8 KiB per column segment); measured 2–3×
// faster than whole-column passes at n = 24,000.
const block = 1024

// blockPool holds the margin buffers of [Rows.LossSum] and
// [Rows.LogisticSum] (one block each). A local array would live on the heap
// anyway (the margins pass hands it to gonum's assembly, which the compiler
// must assume keeps it), and allocating and zeroing 8 KiB per call was most
// of the cost of evaluating the loss on a small dataset (the privacy audit's
// doubling test: 47 of its 61 CPU s). Contents never outlive a call.
var blockPool = sync.Pool{New: func() any { return new([block]float64) }}

// margins sets dst[i] = xᵢᵀw, times y[i] when y is non-nil. The product
// with y is taken block by block, while the block is still in L1 cache
// (the same one rounding per row as a separate pass).
func (r *Rows) margins(dst, w, y []float64) {
	n := r.n
	dst = dst[:n]
	if y != nil {
		y = y[:n]
	}
	for lo := 0; lo < n; lo += block {
		hi := min(lo+block, n)
		seg := dst[lo:hi]
		r.marginsBlock(seg, w, lo)
		if y != nil {
			ys := y[lo:hi]
			ys = ys[:len(seg)]
			for i, v := range ys {
				seg[i] *= v
			}
		}
	}
}

// marginsBlock sets seg[k] = x_{lo+k}ᵀw for the rows lo … lo+len(seg)−1:
// the dense columns in ascending order (one vectorized pass each over the
// segment, which stays in L1 cache), then the row's sparse columns. Each
// row's value is the same sum in the same order whatever the blocking, so
// [Rows.Margins] and [Rows.LossSum] agree bit for bit.
func (r *Rows) marginsBlock(seg, w []float64, lo int) {
	n := r.n
	hi := lo + len(seg)
	if d := len(r.dcols); useAVX2 && d <= maxKernelCols && len(seg) > 0 && d > 0 {
		// The same sums in one pass (marginsAVX2): the nonzero weights
		// and their columns' offsets.
		var ws [maxKernelCols]float64
		var offs [maxKernelCols]int
		c := 0
		for k, j := range r.dcols {
			if wj := w[j]; wj != 0 {
				ws[c], offs[c] = wj, k*n+lo
				c++
			}
		}
		_ = r.dm[(d-1)*n+hi-1] // every column's rows are in range
		marginsAVX2(&seg[0], len(seg), &r.dm[0], &offs[0], &ws[0], c)
	} else {
		clear(seg)
		for k, j := range r.dcols {
			if wj := w[j]; wj != 0 {
				floats.AddScaled(seg, wj, r.dm[k*n+lo:k*n+hi])
			}
		}
	}
	if len(r.sCol) == 0 {
		return
	}
	for i := range seg {
		lo, hi := r.sPtr[lo+i], r.sPtr[lo+i+1]
		cols := r.sCol[lo:hi]
		vals := r.sVal[lo:hi]
		vals = vals[:len(cols)]
		// Two accumulators halve the floating-point add latency chain,
		// which bounds this loop on short rows.
		var s0, s1 float64
		k := 0
		for ; k+1 < len(cols); k += 2 {
			s0 += vals[k] * w[cols[k]]
			s1 += vals[k+1] * w[cols[k+1]]
		}
		if k < len(cols) {
			s0 += vals[k] * w[cols[k]]
		}
		seg[i] += s0 + s1
	}
}

// LossSum returns Σᵢ ωᵢ·ℓ(yᵢ·xᵢᵀw) over the stored rows (ω all 1 when r
// has no weights: the plain sum, not divided by N) in one streaming pass:
// the margins of a block of rows go to a pooled buffer and are consumed
// there, so nothing of length N is written or allocated. The margins and
// the order of the sum are those of [Rows.Margins] followed by a loop over
// i adding ωᵢ·ℓ(yᵢ·mᵢ) (ℓ(yᵢ·mᵢ) without weights), so the result is
// bit-identical to it. It panics if len(w) ≠ D().
//
// It is the loss evaluation of a fixed hypothesis (an excess-risk query of
// an accuracy-first search, which only changes θ between calls); the
// solver's pass ([Fit]) also needs ℓ′ and ℓ″ per row and keeps its own.
func (r *Rows) LossSum(loss Loss, w []float64) float64 {
	r.checkD(w, "LossSum", "w")
	bp := blockPool.Get().(*[block]float64)
	defer blockPool.Put(bp)
	buf := bp[:]
	var s float64
	n := r.n
	y := r.y[:n]
	_, logistic := loss.(Logistic)
	for lo := 0; lo < n; lo += block {
		seg := buf[:min(block, n-lo)]
		r.marginsBlock(seg, w, lo)
		ys := y[lo : lo+len(seg)]
		switch {
		case r.weight != nil:
			ws := r.weight[lo : lo+len(seg)]
			for i, m := range seg {
				s += ws[i] * loss.Value(ys[i]*m)
			}
		case logistic:
			// Logistic.Value inlined: no interface call per row.
			for i, m := range seg {
				s += Logistic{}.Value(ys[i] * m)
			}
		default:
			for i, m := range seg {
				s += loss.Value(ys[i] * m)
			}
		}
	}
	return s
}

// LogisticSum returns Σᵢ ℓ(yᵢ·xᵢᵀw) for the logistic loss in one
// streaming pass, like [Rows.LossSum] (ωᵢ·ℓ with weights, where it is
// LossSum itself), but with the logs summed as [Fit]'s loss pass sums them:
// ℓ(z) = max(−z, 0) + log(1 + e), e = exp(−|z|) ∈ [0, 1], and the factors
// (1 + e) ∈ [1, 2] of each block of 32 rows multiplied together (< 2³², no
// overflow) and logged once: one log per 32 rows instead of one log1p per
// row, which is most of the cost of an evaluation.
//
// Error: it is not bit-identical to LossSum. Per row, e has a relative
// error below 1e-15 (expNeg), which moves log(1 + e) by less than 5e-16;
// rounding 1 + e and the 31 products of a block move each row's share of
// the block's log by less than 2.5e-16, and the rounding of the log itself
// (of a value ≤ 32·ln 2) by less than 1e-16 per row: less than 1e-15 per
// row in all, so the mean loss moves by less than 1e-15, beside the
// rounding of the running sums (up to N·2⁻⁵³·Σ ℓ, as in LossSum's
// sequential sum).
func (r *Rows) LogisticSum(w []float64) float64 {
	if r.weight != nil {
		return r.LossSum(Logistic{}, w)
	}
	r.checkD(w, "LogisticSum", "w")
	bp := blockPool.Get().(*[block]float64)
	defer blockPool.Put(bp)
	buf := bp[:]
	var hinge, logs float64
	prod, cnt := 1.0, 0
	n := r.n
	y := r.y[:n]
	for lo := 0; lo < n; lo += block {
		seg := buf[:min(block, n-lo)]
		r.marginsBlock(seg, w, lo)
		ys := y[lo : lo+len(seg)]
		for i, m := range seg {
			z := ys[i] * m
			if z < 0 {
				hinge -= z
			}
			prod *= 1 + expNeg(math.Abs(z))
			cnt++
			if cnt == 32 {
				logs += math.Log(prod)
				prod, cnt = 1, 0
			}
		}
	}
	return hinge + logs + math.Log(prod)
}

// mulTransAdd adds Σᵢ cᵢ·xᵢ to dst (no weights: callers fold them into c).
func (r *Rows) mulTransAdd(dst, c []float64) {
	n := r.n
	c = c[:n]
	for lo := 0; lo < n; lo += block {
		hi := min(lo+block, n)
		r.addColumnDots(dst, r.dcols, c[lo:hi], lo, 0, len(r.dcols))
	}
	r.mulTransAddSparse(dst, c)
}

// mulTransAddSparse adds Σᵢ cᵢ·xᵢ over the sparse columns to dst: the
// second part of mulTransAdd.
func (r *Rows) mulTransAddSparse(dst, c []float64) {
	if len(r.sCol) == 0 {
		return
	}
	c = c[:r.n]
	for i, ci := range c {
		if ci == 0 {
			continue
		}
		lo, hi := r.sPtr[i], r.sPtr[i+1]
		cols := r.sCol[lo:hi]
		vals := r.sVal[lo:hi]
		vals = vals[:len(cols)]
		for k, j := range cols {
			dst[j] += ci * vals[k]
		}
	}
}

// addOuterUpper adds Σᵢ sᵢ·xᵢxᵢᵀ to the upper triangle of the row-major d×d
// matrix h. When every column is stored densely it computes each entry as a
// vectorized dot product of columns, using scratch (length n; allocated when
// nil). Otherwise it runs over the full CSR, touching only pairs of nonzeros
// of each row (Σᵢ nnzᵢ(nnzᵢ+1)/2 multiply-adds) and skipping rows with
// sᵢ = 0; on one-hot data this beats splitting off the dense columns, whose
// cross terms with the sparse ones would cost as much as the scatter.
func (r *Rows) addOuterUpper(h, s, scratch []float64) {
	d, n := r.d, r.n
	h = h[:d*d]
	s = s[:n]
	if len(r.dcols) == d {
		if scratch == nil {
			scratch = make([]float64, n)
		}
		for lo := 0; lo < n; lo += block {
			hi := min(lo+block, n)
			u := scratch[lo:hi]
			sb := s[lo:hi]
			for a := 0; a < d; a++ {
				ca := r.dm[a*n+lo : a*n+hi]
				ca = ca[:len(u)]
				for i := range u {
					u[i] = sb[i] * ca[i]
				}
				r.addColumnDots(h[a*d:(a+1)*d], nil, u, lo, a, d)
			}
		}
		return
	}
	for i, si := range s {
		if si != 0 {
			r.addOuterRow(h, i, si)
		}
	}
}

// addOuterUpperPair is addOuterUpper(h1, s1, nil) and addOuterUpper(h2,
// s2, nil) in one pass over the CSR rows (used when some column is sparse):
// each entry of h1 and h2 receives the same products in the same row order
// as in its own pass, so both are bit-identical to two calls, while the
// row's index pairs are walked once. A row whose weight is 0 in one of
// them adds nothing to that one, as addOuterUpper skips it.
func (r *Rows) addOuterUpperPair(h1, h2, s1, s2 []float64) {
	d, n := r.d, r.n
	h1, h2 = h1[:d*d], h2[:d*d]
	s1, s2 = s1[:n], s2[:n]
	for i, a1 := range s1 {
		a2 := s2[i]
		if a1 == 0 || a2 == 0 {
			if a1 != 0 {
				r.addOuterRow(h1, i, a1)
			} else if a2 != 0 {
				r.addOuterRow(h2, i, a2)
			}
			continue
		}
		cols, vals := r.rowNZ(i)
		vals = vals[:len(cols)]
		for a, ja := range cols {
			t1, t2 := a1*vals[a], a2*vals[a]
			r1, r2 := h1[ja*d:ja*d+d], h2[ja*d:ja*d+d]
			cb := cols[a:]
			vb := vals[a:]
			vb = vb[:len(cb)]
			for k, jb := range cb {
				r1[jb] += t1 * vb[k]
				r2[jb] += t2 * vb[k]
			}
		}
	}
}

// addOuterRow adds si·xᵢxᵢᵀ (upper triangle) to h, as one row of the CSR
// loop of addOuterUpper.
func (r *Rows) addOuterRow(h []float64, i int, si float64) {
	d := r.d
	cols, vals := r.rowNZ(i)
	vals = vals[:len(cols)]
	for a, ja := range cols {
		t := si * vals[a]
		hr := h[ja*d : ja*d+d]
		cb := cols[a:]
		vb := vals[a:]
		vb = vb[:len(cb)]
		for k, jb := range cb {
			hr[jb] += t * vb[k]
		}
	}
}

// logisticZero sets m to the margins at w = 0 (as margins(m, 0, y) sets
// them: +0·yᵢ, i.e. ±0), g1 and g2 to yᵢ·ℓ′(0) and ℓ″(0) of the logistic
// loss, and returns Σᵢ ℓ(0) and the data part Σᵢ yᵢ·ℓ′(0)·xᵢ of the
// gradient (shared, not to be modified): the state [Fit] computes at a cold
// start, bit for bit. The sum and the gradient are computed once per Rows
// by the same functions Fit uses (logisticPass, mulTransAdd) on the same
// inputs; m, g1 and g2 are filled directly with the values logisticPass
// gives at z = ±0, all exact (e = expNeg(0) = 1, r = 1/2, ℓ′ = −1/2 for
// either sign of zero, ℓ″ = 1/4). It panics if r is weighted (the
// logistic pass of weighted rows sums differently).
func (r *Rows) logisticZero(m, g1, g2 []float64) (float64, []float64) {
	if r.weight != nil {
		panic("erm: logisticZero: weighted rows")
	}
	n := r.n
	m, g1, g2 = m[:n], g1[:n], g2[:n]
	y := r.y[:n]
	for i, yi := range y {
		m[i] = 0 * yi
		g1[i] = yi * -0.5
		g2[i] = 0.25
	}
	c := r.gram
	c.zeroOnce.Do(func() {
		z, h1, h2 := make([]float64, n), make([]float64, n), make([]float64, n)
		r.margins(z, make([]float64, r.d), r.y)
		c.zeroLoss = logisticPass(nil, z, 0, nil, r.y, h1, h2)
		c.zeroGrad = make([]float64, r.d)
		r.mulTransAdd(c.zeroGrad, h1)
	})
	return c.zeroLoss, c.zeroGrad
}

// gramMatrix returns XᵀΩX (row-major, both triangles), computing it once.
// The result is shared and must not be modified.
func (r *Rows) gramMatrix() []float64 {
	r.gram.once.Do(func() {
		d := r.d
		s := make([]float64, r.n)
		for i := range s {
			s[i] = r.Weight(i)
		}
		h := make([]float64, d*d)
		r.addOuterUpper(h, s, nil)
		for i := 0; i < d; i++ {
			for j := i + 1; j < d; j++ {
				h[j*d+i] = h[i*d+j]
			}
		}
		r.gram.h = h
	})
	return r.gram.h
}

func (r *Rows) nDst(dst []float64, op string) []float64 {
	if dst == nil {
		return make([]float64, r.n)
	}
	if len(dst) != r.n {
		panic(fmt.Sprintf("erm: %s: len(dst) = %d, want %d", op, len(dst), r.n))
	}
	return dst
}

func (r *Rows) checkD(v []float64, op, name string) {
	if len(v) != r.d {
		panic(fmt.Sprintf("erm: %s: len(%s) = %d, want %d", op, name, len(v), r.d))
	}
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// sharesStorage reports whether a and b hold a backing array in common
// (compared by the first element of each array's full capacity; Rows never
// holds a sub-slice that starts elsewhere).
func sharesStorage(a, b *Rows) bool {
	same := func(x, y []float64) bool {
		return cap(x) > 0 && cap(y) > 0 && &x[:1][0] == &y[:1][0]
	}
	sameInt := func(x, y []int) bool {
		return cap(x) > 0 && cap(y) > 0 && &x[:1][0] == &y[:1][0]
	}
	sameInt32 := func(x, y []int32) bool {
		return cap(x) > 0 && cap(y) > 0 && &x[:1][0] == &y[:1][0]
	}
	return same(a.val, b.val) || same(a.sVal, b.sVal) || same(a.y, b.y) || same(a.weight, b.weight) ||
		same(a.dm, b.dm) || same(a.rowSS, b.rowSS) || sameInt(a.rowPtr, b.rowPtr) || sameInt(a.sPtr, b.sPtr) ||
		sameInt(a.col, b.col) || sameInt(a.sCol, b.sCol) || sameInt32(a.keep, b.keep)
}
