package erm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// checkOptimal recomputes ∇J at res.W with Objective.Grad (independently of
// the solver's own bookkeeping) and checks convergence.
func checkOptimal(t *testing.T, rows *Rows, obj Objective, res Result, tol float64) {
	t.Helper()
	if res.Status != StatusConverged {
		t.Fatalf("status %s after %d iterations, gradient norm %g", res.Status, res.Iter, res.GradNorm)
	}
	g := floats.Norm(obj.Grad(nil, rows, res.W), 2)
	if g > tol {
		t.Errorf("recomputed ‖∇J(W)‖ = %g > %g (solver reported %g)", g, tol, res.GradNorm)
	}
	if v := obj.Value(rows, res.W); !closeTo(res.Value, v, 1e-13) {
		t.Errorf("Result.Value = %v, Objective.Value(W) = %v", res.Value, v)
	}
}

// referenceFit minimizes J by a textbook dense Newton method written
// directly against the dense design matrix (mat.Dense products, a d×d
// Hessian summed over every entry, an LU solve, and backtracking on J), so
// that it shares no code with Fit's CSR/column-major kernels, Gram start,
// reused factors or fused loss pass. (gonum/optimize would be the natural
// reference, but it imports gonum/stat/distmv, which needs
// golang.org/x/tools, a module absent from go.sum.) It returns the
// minimizer and its gradient norm.
func referenceFit(t *testing.T, X *mat.Dense, y, omega []float64, obj Objective) ([]float64, float64) {
	t.Helper()
	n, d := X.Dims()
	var sumW float64
	for i := 0; i < n; i++ {
		sumW += omega[i]
	}
	lam := obj.Lambda + obj.ExtraL2
	value := func(w []float64) float64 {
		var z mat.VecDense
		z.MulVec(X, mat.NewVecDense(d, w))
		v := 0.5 * lam * floats.Dot(w, w)
		if obj.Linear != nil {
			v += floats.Dot(obj.Linear, w)
		}
		for i := 0; i < n; i++ {
			v += omega[i] * obj.Loss.Value(y[i]*z.AtVec(i)) / sumW
		}
		return v
	}
	grad := func(w []float64) (*mat.VecDense, *mat.Dense) {
		var z mat.VecDense
		z.MulVec(X, mat.NewVecDense(d, w))
		g := mat.NewVecDense(d, nil)
		H := mat.NewDense(d, d, nil)
		for i := 0; i < n; i++ {
			m := y[i] * z.AtVec(i)
			g.AddScaledVec(g, omega[i]*y[i]*obj.Loss.Deriv(m)/sumW, X.RowView(i))
			c := omega[i] * obj.Loss.Deriv2(m) / sumW
			for a := 0; a < d; a++ {
				for b := 0; b < d; b++ {
					H.Set(a, b, H.At(a, b)+c*X.At(i, a)*X.At(i, b))
				}
			}
		}
		for a := 0; a < d; a++ {
			g.SetVec(a, g.AtVec(a)+lam*w[a])
			if obj.Linear != nil {
				g.SetVec(a, g.AtVec(a)+obj.Linear[a])
			}
			H.Set(a, a, H.At(a, a)+lam)
		}
		return g, H
	}
	w := make([]float64, d)
	for iter := 0; iter < 200; iter++ {
		g, H := grad(w)
		if mat.Norm(g, 2) <= 1e-13 {
			break
		}
		var p mat.VecDense
		if err := p.SolveVec(H, g); err != nil {
			t.Fatalf("reference Newton: %v", err)
		}
		f0 := value(w)
		step := 1.0
		trial := make([]float64, d)
		for k := 0; k < 60; k++ {
			for j := range trial {
				trial[j] = w[j] - step*p.AtVec(j)
			}
			if value(trial) <= f0 {
				break
			}
			step /= 2
		}
		if floats.Equal(trial, w) {
			break
		}
		w, trial = trial, w
	}
	g, _ := grad(w)
	return w, mat.Norm(g, 2)
}

// TestFit_MatchesReference compares Fit with an independent dense Newton
// solver (referenceFit) on small problems covering every storage path,
// losses with fast and generic loss passes, weights, a linear term and
// extra regularization. By (Lambda+ExtraL2)-strong convexity any w satisfies
// ‖w − w*‖ ≤ ‖∇J(w)‖/(Lambda+ExtraL2), so the two answers must agree within
// (‖∇J(w_Fit)‖ + ‖∇J(w_ref)‖)/(Lambda+ExtraL2); that is the tolerance.
func TestFit_MatchesReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	for name, r := range testDesigns(rng) {
		X := denseOf(r)
		for _, tc := range []struct {
			name   string
			loss   Loss
			lambda float64
			lin    float64
			extra  float64
			weight bool
		}{
			{"logistic", Logistic{}, 0.01, 0, 0, false},
			{"logistic/perturbed", Logistic{}, 0.003, 0.05, 0.001, false},
			{"logistic/weighted", Logistic{}, 0.01, 0, 0, true},
			{"huber", Huber{H: 0.5}, 0.01, 0.02, 0, false},
			{"generic", testLoss{}, 0.05, 0, 0, true},
		} {
			rows := r
			omega := make([]float64, r.N())
			for i := range omega {
				omega[i] = 1
				if tc.weight {
					omega[i] = float64(rng.IntN(3))
				}
			}
			if tc.weight {
				rows = r.WithWeights(omega)
			}
			var lin []float64
			if tc.lin > 0 {
				lin = randVec(rng, r.D(), tc.lin/math.Sqrt(float64(r.D())))
			}
			obj := Objective{Loss: tc.loss, Lambda: tc.lambda, Linear: lin, ExtraL2: tc.extra}
			res, err := Fit(rows, obj, FitOptions{})
			if err != nil {
				t.Fatalf("%s/%s: %v", name, tc.name, err)
			}
			checkOptimal(t, rows, obj, res, 1e-10)

			ref, gRef := referenceFit(t, X, r.Y(), omega, obj)
			gFit := floats.Norm(obj.Grad(nil, rows, res.W), 2)
			tol := (gRef+gFit)/(obj.Lambda+obj.ExtraL2) + 1e-12
			if dist := floats.Distance(res.W, ref, 2); dist > tol {
				t.Errorf("%s/%s: ‖w_Fit − w_ref‖ = %g > %g (reference gradient %g)", name, tc.name, dist, tol, gRef)
			}
		}
	}
}

// TestFit_LargeNorm covers the objective-perturbation regime of small ε and
// small λ: ‖Linear‖ = 0.1 with λ = 1e-3 pushes ‖w‖ to about
// ‖Linear‖/λ = 100 and margins to ±100, where a naive log(1 + exp(−z))
// overflows.
func TestFit_LargeNorm(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	for name, r := range testDesigns(rng) {
		for _, lambda := range []float64{1e-3, 1e-5} {
			obj := Objective{Loss: Logistic{}, Lambda: lambda, Linear: randVec(rng, r.D(), 0.1/math.Sqrt(float64(r.D())))}
			res, err := Fit(r, obj, FitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkOptimal(t, r, obj, res, 1e-10)
			if norm := floats.Norm(res.W, 2); !(norm > 10) {
				t.Errorf("%s λ=%g: ‖w‖ = %g, expected the large-norm regime", name, lambda, norm)
			}
		}
	}
}

// TestFit_AdultShape fits the benchmark's Adult-shaped problem (n = 24,000,
// d = 105, 15 nonzeros per row) and Magic-shaped problem to the default
// tolerance, with an independent gradient check.
func TestFit_AdultShape(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size problems")
	}
	t.Parallel()
	rng := rand.New(rand.NewPCG(2013, 1))
	Xa, ya := adultShape(rng, 24000)
	Xm, ym := magicShape(rng, 15000)
	for name, r := range map[string]*Rows{"adult": NewRows(Xa, ya, nil), "magic": NewRows(Xm, ym, nil)} {
		for _, lambda := range []float64{1e-2, 1e-4} {
			obj := Objective{Loss: Logistic{}, Lambda: lambda}
			res, err := Fit(r, obj, FitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkOptimal(t, r, obj, res, 1e-10)
			t.Logf("%s λ=%g: %d iterations, %d Hessians, ‖∇J‖ = %.1e", name, lambda, res.Iter, res.Hessians, res.GradNorm)
		}
	}
}

// TestFit_WarmStart checks that a warm start from a neighbouring λ reaches
// the same optimum (within the strong-convexity bound 2·GradTol/λ) with less
// work than a cold start, counting work as Iter + 2·Hessians (on the
// benchmark shapes a Hessian build costs about two Newton steps; with reused
// factors, a warm start can take more, cheaper steps).
func TestFit_WarmStart(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 14))
	for name, r := range testDesigns(rng) {
		obj := Objective{Loss: Logistic{}, Lambda: 1e-3}
		cold, err := Fit(r, obj, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		prev, err := Fit(r, Objective{Loss: Logistic{}, Lambda: 1.2e-3}, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		warm, err := Fit(r, obj, FitOptions{Init: prev.W})
		if err != nil {
			t.Fatal(err)
		}
		checkOptimal(t, r, obj, warm, 1e-10)
		if d := floats.Distance(cold.W, warm.W, 2); d > 2e-10/obj.Lambda {
			t.Errorf("%s: warm and cold optima differ by %g", name, d)
		}
		if warm.Hessians > cold.Hessians || warm.Iter+2*warm.Hessians >= cold.Iter+2*cold.Hessians {
			t.Errorf("%s: warm start took %d iterations (%d Hessians), cold %d (%d)", name, warm.Iter, warm.Hessians, cold.Iter, cold.Hessians)
		}
		// Restarting at the optimum takes no step at all.
		again, err := Fit(r, obj, FitOptions{Init: warm.W})
		if err != nil || again.Iter != 0 || again.Status != StatusConverged {
			t.Errorf("%s: restart at optimum: %d iterations, %s, %v", name, again.Iter, again.Status, err)
		}
	}
}

// TestFit_WeightsEqualDuplication checks that integer weights give the same
// fit as physically repeating the rows (bootstrap by multiplicity). Both
// problems are the same function, so the optima agree to
// 2·GradTol/λ = 2e-11 with GradTol = 1e-12.
func TestFit_WeightsEqualDuplication(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(15, 16))
	X, y := adultShape(rng, 300)
	omega := make([]float64, 300)
	var idx []int
	for i := range omega {
		omega[i] = float64(rng.IntN(4)) // 0 to 3 copies
		for k := 0; k < int(omega[i]); k++ {
			idx = append(idx, i)
		}
	}
	weighted := NewRows(X, y, nil).WithWeights(omega)
	dup := NewRows(X, y, idx)
	if weighted.SumWeights() != float64(dup.N()) {
		t.Fatalf("Σω = %v, duplicated rows %d", weighted.SumWeights(), dup.N())
	}
	for _, loss := range []Loss{Logistic{}, Huber{H: 0.5}} {
		obj := Objective{Loss: loss, Lambda: 0.1, Linear: randVec(rng, X.RawMatrix().Cols, 0.01)}
		opts := FitOptions{GradTol: 1e-12}
		a, err := Fit(weighted, obj, opts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Fit(dup, obj, opts)
		if err != nil {
			t.Fatal(err)
		}
		if d := floats.Distance(a.W, b.W, 2); d > 1e-10 {
			t.Errorf("%s: weighted and duplicated fits differ by %g", loss.Name(), d)
		}
	}
}

func TestFit_Errors(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(17, 18))
	X, y := sparseRandom(rng, 50, 4, 0.5)
	rows := NewRows(X, y, nil)
	Xbad := mat.DenseCopyOf(X)
	Xbad.Set(3, 1, math.Inf(-1))
	ok := Objective{Loss: Logistic{}, Lambda: 0.1}
	tests := []struct {
		name    string
		rows    *Rows
		obj     Objective
		opts    FitOptions
		wantErr error
	}{
		{name: "lambda zero", obj: Objective{Loss: Logistic{}}},
		{name: "lambda negative", obj: Objective{Loss: Logistic{}, Lambda: -1}},
		{name: "lambda NaN", obj: Objective{Loss: Logistic{}, Lambda: math.NaN()}},
		{name: "lambda Inf", obj: Objective{Loss: Logistic{}, Lambda: math.Inf(1)}},
		{name: "extra negative", obj: Objective{Loss: Logistic{}, Lambda: 1, ExtraL2: -1}},
		{name: "linear length", obj: Objective{Loss: Logistic{}, Lambda: 1, Linear: []float64{1}}},
		{name: "linear NaN", obj: Objective{Loss: Logistic{}, Lambda: 1, Linear: []float64{0, math.NaN(), 0, 0}}, wantErr: ErrNotFinite},
		{name: "nil loss", obj: Objective{Lambda: 1}},
		{name: "hinge", obj: Objective{Loss: Hinge{}, Lambda: 1}, wantErr: ErrUnsupportedLoss},
		{name: "ramp", obj: Objective{Loss: Ramp{}, Lambda: 1}, wantErr: ErrUnsupportedLoss},
		{name: "squared", obj: Objective{Loss: Squared{}, Lambda: 1}, wantErr: ErrUnsupportedLoss},
		{name: "huber h=0", obj: Objective{Loss: Huber{}, Lambda: 1}, wantErr: ErrUnsupportedLoss},
		{name: "infinite X", rows: NewRows(Xbad, y, nil), obj: ok, wantErr: ErrNotFinite},
		{name: "bad weights", rows: rows.WithWeights(make([]float64, 50)), obj: ok, wantErr: ErrBadWeights},
		{name: "init length", obj: ok, opts: FitOptions{Init: []float64{1}}},
		{name: "init NaN", obj: ok, opts: FitOptions{Init: []float64{0, 0, math.NaN(), 0}}, wantErr: ErrNotFinite},
		{name: "tol negative", obj: ok, opts: FitOptions{GradTol: -1}},
		{name: "max iter negative", obj: ok, opts: FitOptions{MaxIter: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.rows
			if r == nil {
				r = rows
			}
			_, err := Fit(r, tc.obj, tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
	if _, err := Fit(nil, ok, FitOptions{}); err == nil {
		t.Error("nil rows: no error")
	}
}

// TestFit_Status checks that stopping early is a status, not an error.
func TestFit_Status(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(19, 20))
	X, y := adultShape(rng, 500)
	rows := NewRows(X, y, nil)
	res, err := Fit(rows, Objective{Loss: Logistic{}, Lambda: 1e-4}, FitOptions{MaxIter: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusMaxIter || res.Iter != 1 || !(res.GradNorm > 1e-10) {
		t.Errorf("MaxIter 1: status %s, %d iterations, gradient %g", res.Status, res.Iter, res.GradNorm)
	}
	// A tolerance below the float64 floor ends in line-search-failed with a
	// gradient at the floor, not in an error or a NaN.
	res, err = Fit(rows, Objective{Loss: Logistic{}, Lambda: 1e-4}, FitOptions{GradTol: 1e-30})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status == StatusConverged && res.GradNorm > 1e-30 || !(res.GradNorm < 1e-12) {
		t.Errorf("GradTol 1e-30: status %s, gradient %g", res.Status, res.GradNorm)
	}
}

// TestFit_Workspace checks that a reused workspace gives bit-identical
// results across problems of different sizes.
func TestFit_Workspace(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	ws := new(Workspace)
	designs := testDesigns(rng)
	for _, name := range []string{"sparse", "adult", "dense", "sparse"} {
		r := designs[name]
		obj := Objective{Loss: Logistic{}, Lambda: 1e-3}
		a, err := Fit(r, obj, FitOptions{Work: ws})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Fit(r, obj, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !floats.Equal(a.W, b.W) || a.Iter != b.Iter {
			t.Errorf("%s: workspace changed the result", name)
		}
	}
}

// TestFit_Context checks that a done context stops a fit before its first
// step with the context's error, that a live one changes nothing (the
// result is bit-identical to a fit without it), and that a fit cancelled
// while it runs returns within a step.
func TestFit_Context(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for name, r := range testDesigns(rng) {
		obj := Objective{Loss: Logistic{}, Lambda: 1e-3}
		plain, err := Fit(r, obj, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		live, err := Fit(r, obj, FitOptions{Context: context.Background()})
		if err != nil {
			t.Fatal(err)
		}
		if live.Iter != plain.Iter || live.Value != plain.Value || !floats.Equal(live.W, plain.W) {
			t.Errorf("%s: a live context changed the fit", name)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Fit(r, obj, FitOptions{Context: ctx}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled context: err = %v, want context.Canceled", name, err)
		}
	}
}
