package erm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// testDesigns returns small designs exercising both storage paths: a sparse
// random one (CSR only), an Adult-like one (dense intercept and continuous
// columns plus one-hot CSR) and a dense one (column-major only).
func testDesigns(rng *rand.Rand) map[string]*Rows {
	out := map[string]*Rows{}
	X, y := sparseRandom(rng, 300, 12, 0.3)
	out["sparse"] = NewRows(X, y, nil)
	X, y = adultShape(rng, 400)
	out["adult"] = NewRows(X, y, nil)
	X, y = magicShape(rng, 350)
	out["dense"] = NewRows(X, y, nil)
	// The storage paths these designs are meant to exercise.
	for name, want := range map[string]int{"sparse": 0, "adult": 7, "dense": 11} {
		if got := len(out[name].dcols); got != want {
			panic(fmt.Sprintf("testDesigns: %s has %d column-major columns, want %d", name, got, want))
		}
	}
	return out
}

func randVec(rng *rand.Rand, d int, scale float64) []float64 {
	v := make([]float64, d)
	for j := range v {
		v[j] = scale * rng.NormFloat64()
	}
	return v
}

// denseOf rebuilds the design of rows as a dense matrix from Row.
func denseOf(r *Rows) *mat.Dense {
	X := mat.NewDense(r.N(), r.D(), nil)
	for i := 0; i < r.N(); i++ {
		cols, vals := r.Row(i)
		for k, j := range cols {
			X.Set(i, j, vals[k])
		}
	}
	return X
}

func TestNewRows_Subset(t *testing.T) {
	t.Parallel()
	X := mat.NewDense(4, 3, []float64{
		1, 0, 2,
		0, 0, 0,
		0, 3, 0,
		0.6, 0.8, 0,
	})
	y := []float64{1, -1, 1, -1}
	idx := []int{3, 0, 3, 1}
	r := NewRows(X, y, idx)
	if r.N() != 4 || r.D() != 3 || r.NNZ() != 6 {
		t.Fatalf("N, D, NNZ = %d, %d, %d; want 4, 3, 6", r.N(), r.D(), r.NNZ())
	}
	for k, i := range idx {
		got := denseOf(r).RawRowView(k)
		if !floats.Equal(got, X.RawRowView(i)) || r.Y()[k] != y[i] {
			t.Errorf("row %d = %v (y %v), want X row %d = %v (y %v)", k, got, r.Y()[k], i, X.RawRowView(i), y[i])
		}
	}
	// Row norms: √5, 0, 3, 1 → the maximum over idx {3, 0, 1} is √5.
	if got := r.MaxRowNorm(); math.Abs(got-math.Sqrt(5)) > 1e-15 {
		t.Errorf("MaxRowNorm = %v, want √5", got)
	}
	if r.Err() != nil || r.Weighted() || r.SumWeights() != 4 {
		t.Errorf("Err, Weighted, SumWeights = %v, %v, %v", r.Err(), r.Weighted(), r.SumWeights())
	}
}

func TestNewRows_Invalid(t *testing.T) {
	t.Parallel()
	X := mat.NewDense(2, 2, []float64{1, 0, math.NaN(), 1})
	if err := NewRows(X, []float64{1, 1}, nil).Err(); !errors.Is(err, ErrNotFinite) {
		t.Errorf("NaN in X: Err() = %v, want ErrNotFinite", err)
	}
	if err := NewRows(X, []float64{1, math.Inf(1)}, []int{0}).Err(); err != nil {
		t.Errorf("row 0 only: Err() = %v, want nil", err)
	}
	good := NewRows(mat.NewDense(2, 1, []float64{1, 1}), []float64{1, -1}, nil)
	for _, tc := range []struct {
		name string
		w    []float64
		want error
	}{
		{"negative", []float64{1, -1}, ErrBadWeights},
		{"zero sum", []float64{0, 0}, ErrBadWeights},
		{"NaN", []float64{math.NaN(), 1}, ErrNotFinite},
	} {
		if err := good.WithWeights(tc.w).Err(); !errors.Is(err, tc.want) {
			t.Errorf("%s weights: Err() = %v, want %v", tc.name, err, tc.want)
		}
	}
	if r := good.WithWeights([]float64{1, 2}).WithWeights(nil); r.SumWeights() != 2 || r.Weighted() {
		t.Errorf("WithWeights(nil) should restore unit weights")
	}
	if err := good.WithWeights([]float64{-1, 2}).WithWeights([]float64{1, 2}).Err(); err != nil {
		t.Errorf("valid weights after invalid ones: Err() = %v", err)
	}
	for name, f := range map[string]func(){
		"len(y)":  func() { NewRows(mat.NewDense(2, 1, nil), []float64{1}, nil) },
		"idx":     func() { NewRows(mat.NewDense(2, 1, nil), []float64{1, 1}, []int{2}) },
		"weights": func() { good.WithWeights([]float64{1}) },
		"margins": func() { good.Margins(nil, []float64{1, 2}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestRows_Kernels compares Margins and MulTrans with dense products.
func TestRows_Kernels(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for name, r := range testDesigns(rng) {
		X := denseOf(r)
		n, d := r.N(), r.D()
		w := randVec(rng, d, 1)
		var want mat.VecDense
		want.MulVec(X, mat.NewVecDense(d, w))
		if got := r.Margins(nil, w); !floats.EqualApprox(got, want.RawVector().Data, 1e-13) {
			t.Errorf("%s: Margins differs from X·w", name)
		}
		omega := make([]float64, n)
		for i := range omega {
			omega[i] = float64(rng.IntN(4))
		}
		v := randVec(rng, n, 1)
		ov := make([]float64, n)
		floats.MulTo(ov, omega, v)
		var wantT mat.VecDense
		wantT.MulVec(X.T(), mat.NewVecDense(n, ov))
		if got := r.WithWeights(omega).MulTrans(nil, v); !floats.EqualApprox(got, wantT.RawVector().Data, 1e-12) {
			t.Errorf("%s: weighted MulTrans differs from Xᵀ·Ω·v", name)
		}
	}
}

// TestObjective_Derivatives checks Grad against finite differences of Value,
// Hessian (sparse accumulation) against a dense brute-force sum of outer
// products, and HessVec against Hessian·v, for every storage path, with
// weights, a linear term and extra regularization.
func TestObjective_Derivatives(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for name, r := range testDesigns(rng) {
		n, d := r.N(), r.D()
		omega := make([]float64, n)
		for i := range omega {
			omega[i] = 0.5 + rng.Float64()
		}
		rw := r.WithWeights(omega)
		X := denseOf(r)
		for _, loss := range []Loss{Logistic{}, Huber{H: 0.5}, testLoss{}} {
			obj := Objective{Loss: loss, Lambda: 0.01, Linear: randVec(rng, d, 0.05), ExtraL2: 0.002}
			w := randVec(rng, d, 3)

			// Gradient: central differences with step 1e-6 (error ≈ 1e-10);
			// Huber's ℓ″ jumps, so points may straddle a kink: tolerance 1e-6.
			g := obj.Grad(nil, rw, w)
			gfd := fd.Gradient(nil, func(x []float64) float64 { return obj.Value(rw, x) }, w,
				&fd.Settings{Formula: fd.Central, Step: 1e-6})
			if !floats.EqualApprox(g, gfd, 1e-6) {
				t.Errorf("%s/%s: Grad = %v, finite differences %v", name, loss.Name(), g, gfd)
			}

			// Hessian: brute force over all d×d entries of every row.
			m := make([]float64, n)
			rw.margins(m, w, rw.y)
			want := mat.NewSymDense(d, nil)
			for i := 0; i < n; i++ {
				want.SymRankOne(want, omega[i]*loss.Deriv2(m[i])/rw.SumWeights(), X.RowView(i))
			}
			for j := 0; j < d; j++ {
				want.SetSym(j, j, want.At(j, j)+obj.Lambda+obj.ExtraL2)
			}
			got := obj.Hessian(nil, rw, w)
			if !mat.EqualApprox(got, want, 1e-13) {
				t.Errorf("%s/%s: sparse Hessian differs from brute force", name, loss.Name())
			}

			v := randVec(rng, d, 1)
			var hv mat.VecDense
			hv.MulVec(want, mat.NewVecDense(d, v))
			if got := obj.HessVec(nil, rw, w, v); !floats.EqualApprox(got, hv.RawVector().Data, 1e-13) {
				t.Errorf("%s/%s: HessVec differs from Hessian·v", name, loss.Name())
			}
		}
	}
}

// TestRows_Resample checks that the compacted replicate has the value,
// gradient and Hessian of the same counts given as weights (zeros
// included), on every storage path, with and without parent weights, and
// that reusing dst across replicates of different sizes is safe.
func TestRows_Resample(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	var dst Rows
	for name, rows := range testDesigns(rng) {
		for _, parentW := range []bool{false, true} {
			base := rows
			var pw []float64
			if parentW {
				pw = make([]float64, rows.N())
				for i := range pw {
					pw[i] = 0.5 + rng.Float64()
				}
				base = rows.WithWeights(pw)
			}
			for rep := 0; rep < 3; rep++ {
				counts := make([]int32, rows.N())
				for i := 0; i < rows.N(); i++ {
					counts[rng.IntN(rows.N())]++
				}
				w := make([]float64, rows.N())
				kept := 0
				for i, c := range counts {
					w[i] = float64(c)
					if pw != nil {
						w[i] *= pw[i]
					}
					if c > 0 {
						kept++
					}
				}
				want := rows.WithWeights(w)
				got := base.Resample(&dst, counts)
				if got != &dst || got.N() != kept || got.Err() != nil {
					t.Fatalf("%s: Resample: N = %d (want %d), err %v", name, got.N(), kept, got.Err())
				}
				if math.Abs(got.SumWeights()-want.SumWeights()) > 1e-9*want.SumWeights() {
					t.Errorf("%s: Σω = %v, want %v", name, got.SumWeights(), want.SumWeights())
				}
				if got.MaxRowNorm() > rows.MaxRowNorm() {
					t.Errorf("%s: max row norm %v above the parent's %v", name, got.MaxRowNorm(), rows.MaxRowNorm())
				}
				wv := randVec(rng, rows.D(), 0.5)
				for _, loss := range []Loss{Logistic{}, Huber{H: 0.5}} {
					obj := Objective{Loss: loss, Lambda: 0.01}
					if a, b := obj.Value(got, wv), obj.Value(want, wv); math.Abs(a-b) > 1e-12*(1+math.Abs(b)) {
						t.Errorf("%s %s: value %v, want %v", name, loss.Name(), a, b)
					}
					if a, b := obj.Grad(nil, got, wv), obj.Grad(nil, want, wv); !floats.EqualApprox(a, b, 1e-12) {
						t.Errorf("%s %s: gradient %v, want %v", name, loss.Name(), a, b)
					}
					if a, b := obj.Hessian(nil, got, wv), obj.Hessian(nil, want, wv); !mat.EqualApprox(a, b, 1e-12) {
						t.Errorf("%s %s: Hessian differs", name, loss.Name())
					}
				}
			}
		}
	}
	X := mat.NewDense(2, 2, []float64{1, 0, 0, 1})
	rows := NewRows(X, []float64{1, -1}, nil)
	if err := rows.Resample(nil, []int32{-1, 2}).Err(); !errors.Is(err, ErrBadWeights) {
		t.Errorf("negative count: err = %v, want ErrBadWeights", err)
	}
	if err := rows.Resample(nil, []int32{0, 0}).Err(); !errors.Is(err, ErrBadWeights) {
		t.Errorf("zero counts: err = %v, want ErrBadWeights", err)
	}
	// A bad weight of the parent stays an error of the replicate.
	if err := rows.WithWeights([]float64{2, -1}).Resample(nil, []int32{1, 1}).Err(); !errors.Is(err, ErrBadWeights) {
		t.Errorf("negative parent weight: err = %v, want ErrBadWeights", err)
	}
}

// TestRows_ResampleRows checks the rows of a replicate, which reads its
// full CSR from the parent's instead of copying it: each stored row, the
// number of nonzeros and the largest row norm (bit for bit) are those of
// the kept rows, also for a replicate of a replicate, whose Hessian is
// that of the composed counts as weights, bit for bit.
func TestRows_ResampleRows(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(23, 24))
	for name, rows := range testDesigns(rng) {
		draw := func(n int) []int32 {
			c := make([]int32, n)
			for i := 0; i < n; i++ {
				c[rng.IntN(n)]++
			}
			return c
		}
		c1 := draw(rows.N())
		r1 := rows.Resample(nil, c1)
		c2 := draw(r1.N())
		r2 := r1.Resample(nil, c2)
		// The parent's rows each replicate keeps, in order, and their
		// composed weights.
		var k1 []int
		for i, c := range c1 {
			if c > 0 {
				k1 = append(k1, i)
			}
		}
		var k2 []int
		w2 := make([]float64, rows.N())
		for t2, c := range c2 {
			if c > 0 {
				k2 = append(k2, k1[t2])
				w2[k1[t2]] = float64(c1[k1[t2]]) * float64(c)
			}
		}
		for _, rc := range []struct {
			name string
			r    *Rows
			keep []int
		}{{"replicate", r1, k1}, {"replicate of a replicate", r2, k2}} {
			if rc.r.N() != len(rc.keep) {
				t.Fatalf("%s %s: %d rows, want %d", name, rc.name, rc.r.N(), len(rc.keep))
			}
			nnz := 0
			var maxNorm float64
			for ti, i := range rc.keep {
				gc, gv := rc.r.Row(ti)
				wc, wv := rows.Row(i)
				if !slices.Equal(gc, wc) || !slices.Equal(gv, wv) {
					t.Errorf("%s %s: row %d = %v %v, want the parent's row %d %v %v", name, rc.name, ti, gc, gv, i, wc, wv)
				}
				nnz += len(wc)
				var ss float64
				for _, v := range wv {
					ss += v * v
				}
				maxNorm = math.Max(maxNorm, math.Sqrt(ss))
			}
			if rc.r.NNZ() != nnz {
				t.Errorf("%s %s: NNZ %d, want %d", name, rc.name, rc.r.NNZ(), nnz)
			}
			if rc.r.MaxRowNorm() != maxNorm {
				t.Errorf("%s %s: max row norm %v, want %v", name, rc.name, rc.r.MaxRowNorm(), maxNorm)
			}
		}
		wv := randVec(rng, rows.D(), 0.5)
		obj := Objective{Loss: Logistic{}, Lambda: 0.01}
		want := rows.WithWeights(w2)
		if a, b := obj.Hessian(nil, r2, wv), obj.Hessian(nil, want, wv); !mat.EqualApprox(a, b, 1e-12) {
			t.Errorf("%s: Hessian of the replicate of a replicate differs from the composed weights'", name)
		}
	}
}

// TestRows_ResampleAliasing resamples into a dst that shares the parent's
// storage (a copy of it, and its WithWeights view): the parent must be left
// as it was and the replicate must be right.
func TestRows_ResampleAliasing(t *testing.T) {
	X := mat.NewDense(4, 3, []float64{1, 0.5, 0, 0, 1, 0.25, 1, 0, 0.75, 0.5, 0.5, 0.5})
	y := []float64{1, -1, 1, -1}
	counts := []int32{0, 3, 1, 0}
	w := []float64{0, 3, 1, 0}
	theta := []float64{0.3, -0.2, 0.1}
	obj := Objective{Loss: Logistic{}, Lambda: 0.01}
	for name, dst := range map[string]func(r *Rows) *Rows{
		"copy":        func(r *Rows) *Rows { c := *r; return &c },
		"WithWeights": func(r *Rows) *Rows { return r.WithWeights(nil) },
	} {
		base := NewRows(X, y, nil)
		before := obj.Value(base, theta)
		got := base.Resample(dst(base), counts)
		if v := obj.Value(base, theta); v != before {
			t.Errorf("%s: the parent changed: objective %v, was %v", name, v, before)
		}
		if a, b := obj.Value(got, theta), obj.Value(NewRows(X, y, nil).WithWeights(w), theta); math.Abs(a-b) > 1e-12 {
			t.Errorf("%s: replicate objective %v, want %v", name, a, b)
		}
	}
}

// TestRows_LossSum checks that the one-pass loss sum is bit-identical to
// Margins followed by a loop over the rows (the evaluation it replaced in
// package accfirst), for every storage path, several blocks of rows with a
// partial last one, the inlined logistic loss and a generic one, with and
// without weights.
func TestRows_LossSum(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	designs := testDesigns(rng)
	X, y := adultShape(rng, 2*block+517)
	designs["adult-blocks"] = NewRows(X, y, nil)
	X, y = magicShape(rng, 3*block+1)
	designs["dense-blocks"] = NewRows(X, y, nil)
	for name, r := range designs {
		n := r.N()
		omega := make([]float64, n)
		for i := range omega {
			omega[i] = float64(rng.IntN(4)) / 3
		}
		for _, loss := range []Loss{Logistic{}, Huber{H: 0.5}} {
			for _, weighted := range []bool{false, true} {
				rr := r
				if weighted {
					rr = r.WithWeights(omega)
				}
				w := randVec(rng, r.D(), 3)
				m := rr.Margins(nil, w)
				var want float64
				for i, v := range m {
					if weighted {
						want += omega[i] * loss.Value(rr.Y()[i]*v)
					} else {
						want += loss.Value(rr.Y()[i] * v)
					}
				}
				if got := rr.LossSum(loss, w); got != want {
					t.Errorf("%s, %s, weighted %v: LossSum = %v, want %v (Margins and a loop)", name, loss.Name(), weighted, got, want)
				}
			}
		}
	}
}

// TestRows_LogisticSum checks the one-log-per-32-rows logistic sum against
// a compensated (Neumaier) sum of max(−z, 0) + log1p(e^{−|z|}): they may
// differ by the documented 1e-15 per row plus the rounding of LogisticSum's
// sequential sums, N·2⁻⁵³·Σ ℓ. Margins up to ±40 reach the e < 2⁻⁵³ rows
// where 1 + e rounds to 1. With weights it is LossSum exactly.
func TestRows_LogisticSum(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	designs := testDesigns(rng)
	X, y := adultShape(rng, 2*block+517)
	designs["adult-blocks"] = NewRows(X, y, nil)
	for name, r := range designs {
		for _, scale := range []float64{0.1, 3, 40} {
			w := randVec(rng, r.D(), scale)
			m := r.Margins(nil, w)
			var ref, comp, abs float64 // Neumaier: ref + comp
			for i, v := range m {
				z := r.Y()[i] * v
				term := math.Max(-z, 0) + math.Log1p(math.Exp(-math.Abs(z)))
				abs += term
				s := ref + term
				if math.Abs(ref) >= math.Abs(term) {
					comp += (ref - s) + term
				} else {
					comp += (term - s) + ref
				}
				ref = s
			}
			ref += comp
			n := float64(r.N())
			tol := 1e-15*n + n*0x1p-53*abs
			if got := r.LogisticSum(w); math.Abs(got-ref) > tol {
				t.Errorf("%s, scale %v: LogisticSum = %v, want %v ± %.3g", name, scale, got, ref, tol)
			}
		}
		omega := make([]float64, r.N())
		for i := range omega {
			omega[i] = float64(rng.IntN(3))
		}
		rw := r.WithWeights(omega)
		w := randVec(rng, r.D(), 1)
		if got, want := rw.LogisticSum(w), rw.LossSum(Logistic{}, w); got != want {
			t.Errorf("%s weighted: LogisticSum = %v, want LossSum's %v", name, got, want)
		}
	}
}

// TestRows_SubsetIsNewRows checks Subset against NewRows on the same rows
// of X: every stored array bit for bit (the column-major columns chosen by
// the subset's own counts, including a subset in which a column becomes
// dense that is not in the whole), the rows, norms, first invalid row, and
// fits and Hessians with the same bits.
func TestRows_SubsetIsNewRows(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 32))
	type design struct {
		X *mat.Dense
		y []float64
	}
	designs := map[string]design{}
	X, y := sparseRandom(rng, 300, 12, 0.3)
	designs["sparse"] = design{X, y}
	X, y = adultShape(rng, 400)
	designs["adult"] = design{X, y}
	X, y = magicShape(rng, 350)
	designs["dense"] = design{X, y}
	// Every column in every row or in none (standardized data with a
	// constant column): Subset takes its counts from the whole's.
	X, y = magicShape(rng, 200)
	for i := 0; i < 200; i++ {
		X.Set(i, 3, 0)
	}
	designs["all or none"] = design{X, y}
	// A row with a NaN (row 5) and one with an infinite label (row 9).
	X, y = sparseRandom(rng, 60, 5, 0.5)
	X.Set(5, 2, math.NaN())
	y[9] = math.Inf(1)
	designs["invalid"] = design{X, y}
	for name, ds := range designs {
		n, _ := ds.X.Dims()
		full := NewRows(ds.X, ds.y, nil)
		idxs := map[string][]int{"empty": {}, "all": nil}
		// With repeats, in random order.
		r := make([]int, n)
		for k := range r {
			r[k] = rng.IntN(n)
		}
		idxs["repeats"] = r
		// The rows holding column 0's nonzeros, then a few others: column 0
		// is dense in this subset whatever it is in the whole.
		var nz []int
		for i := 0; i < n; i++ {
			if ds.X.At(i, 0) != 0 {
				nz = append(nz, i)
			}
		}
		idxs["column 0 dense"] = append(nz, 0, 1)
		for iname, idx := range idxs {
			if iname == "all" {
				idx = make([]int, n)
				for k := range idx {
					idx[k] = k
				}
			}
			got, want := full.Subset(idx), NewRows(ds.X, ds.y, idx)
			at := name + "/" + iname
			if iname == "column 0 dense" && !slices.Contains(got.dcols, 0) {
				t.Fatalf("%s: column 0 not column-major in the subset: dcols %v", at, got.dcols)
			}
			if got.n != want.n || got.d != want.d || got.sumW != want.sumW ||
				math.Float64bits(got.maxNorm) != math.Float64bits(want.maxNorm) ||
				!slices.Equal(got.dcols, want.dcols) || !equalBits(got.dm, want.dm) ||
				!slices.Equal(got.sPtr, want.sPtr) || !slices.Equal(got.sCol, want.sCol) || !equalBits(got.sVal, want.sVal) ||
				!equalBits(got.y, want.y) || got.weight != nil || got.NNZ() != want.NNZ() {
				t.Fatalf("%s: Subset differs from NewRows: dcols %v / %v, n %d / %d, NNZ %d / %d, max norm %v / %v",
					at, got.dcols, want.dcols, got.n, want.n, got.NNZ(), want.NNZ(), got.maxNorm, want.maxNorm)
			}
			if fmt.Sprint(got.Err()) != fmt.Sprint(want.Err()) {
				t.Fatalf("%s: error %v, want %v", at, got.Err(), want.Err())
			}
			for i := 0; i < got.n; i++ {
				gc, gv := got.Row(i)
				wc, wv := want.Row(i)
				if !slices.Equal(gc, wc) || !equalBits(gv, wv) {
					t.Fatalf("%s: row %d = %v %v, want %v %v", at, i, gc, gv, wc, wv)
				}
			}
			if got.Err() != nil || got.n == 0 {
				continue
			}
			obj := Objective{Loss: Logistic{}, Lambda: 0.01}
			wv := randVec(rng, got.d, 0.5)
			if a, b := obj.Hessian(nil, got, wv), obj.Hessian(nil, want, wv); !mat.Equal(a, b) {
				t.Errorf("%s: Hessians differ", at)
			}
			for _, init := range [][]float64{nil, wv} {
				a, errA := Fit(got, obj, FitOptions{Init: init})
				b, errB := Fit(want, obj, FitOptions{Init: init})
				if errA != nil || errB != nil || !equalBits(a.W, b.W) || a.Iter != b.Iter {
					t.Errorf("%s: fit from %v: %v (%v) vs %v (%v)", at, init, a.W, errA, b.W, errB)
				}
			}
		}
	}
}
