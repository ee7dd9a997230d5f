package erm

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// bootstrapWeights returns the multiplicities of n draws with replacement
// from n rows.
func bootstrapWeights(rng *rand.Rand, n int) []float64 {
	w := make([]float64, n)
	for range n {
		w[rng.IntN(n)]++
	}
	return w
}

// TestFit_FactorSameMinimizer fits 40 bootstrap weightings of each test
// design, with and without FitOptions.Factor (the full-data Hessian at the
// full-data minimizer θ̂, every fit started at θ̂), for the plain objective
// and with a linear term (objective perturbation). Both fits must converge
// to ‖∇J‖ ≤ GradTol, so by λ-strong convexity each is within GradTol/λ of
// the exact minimizer and the two within 2·GradTol/λ. The factor must also
// be used: over the 40 fits, fewer Hessians are built than without it.
func TestFit_FactorSameMinimizer(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 1))
	const tol = 1e-10
	for name, r := range testDesigns(rng) {
		for _, lin := range []float64{0, 0.05} {
			base := Objective{Loss: Logistic{}, Lambda: 1e-2}
			hat, err := Fit(r, base, FitOptions{})
			if err != nil || hat.Status != StatusConverged {
				t.Fatalf("%s: θ̂: %v %s", name, err, hat.Status)
			}
			f, err := NewFactor(r, base, hat.W)
			if err != nil {
				t.Fatal(err)
			}
			var hWith, hWithout int
			for k := 0; k < 40; k++ {
				wr := r.WithWeights(bootstrapWeights(rng, r.N()))
				obj := base
				if lin != 0 {
					obj.Linear = randVec(rng, r.D(), lin)
				}
				plain, err := Fit(wr, obj, FitOptions{Init: hat.W, GradTol: tol})
				if err != nil {
					t.Fatal(err)
				}
				chord, err := Fit(wr, obj, FitOptions{Init: hat.W, GradTol: tol, Factor: f})
				if err != nil {
					t.Fatal(err)
				}
				checkOptimal(t, wr, obj, plain, tol)
				checkOptimal(t, wr, obj, chord, tol)
				if d := floats.Distance(plain.W, chord.W, 2); d > 2*tol/obj.Lambda {
					t.Errorf("%s, linear %v, fit %d: minimizers differ by %g > %g", name, lin, k, d, 2*tol/obj.Lambda)
				}
				hWith += chord.Hessians
				hWithout += plain.Hessians
			}
			if hWith >= hWithout {
				t.Errorf("%s, linear %v: %d Hessians with the factor, %d without", name, lin, hWith, hWithout)
			}
		}
	}
}

// TestFit_FactorPoor gives Fit a factor far from the Hessian of the
// problem (λ a thousand times larger, at a point far from the start): the
// chord step contracts poorly, the fit falls back to fresh Hessians and
// still converges to the minimizer of the fit without a factor.
func TestFit_FactorPoor(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 2))
	for name, r := range testDesigns(rng) {
		obj := Objective{Loss: Logistic{}, Lambda: 1e-3}
		f, err := NewFactor(r, Objective{Loss: Logistic{}, Lambda: 1}, randVec(rng, r.D(), 5))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := Fit(r, obj, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		poor, err := Fit(r, obj, FitOptions{Factor: f})
		if err != nil {
			t.Fatal(err)
		}
		checkOptimal(t, r, obj, poor, 1e-10)
		if poor.Hessians == 0 {
			t.Errorf("%s: a poor factor built no Hessian (%d iterations)", name, poor.Iter)
		}
		if d := floats.Distance(plain.W, poor.W, 2); d > 2e-10/obj.Lambda {
			t.Errorf("%s: minimizers differ by %g", name, d)
		}
	}
}

// TestFit_FactorFailures checks the failure paths with a factor: a factor
// of the wrong dimension and NewFactor's invalid input are errors; MaxIter
// and a cancelled context are reported as without one.
func TestFit_FactorFailures(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 3))
	ds := testDesigns(rng)
	r, other := ds["dense"], ds["sparse"]
	obj := Objective{Loss: Logistic{}, Lambda: 1e-3}
	fOther, err := NewFactor(other, obj, make([]float64, other.D()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Fit(r, obj, FitOptions{Factor: fOther}); err == nil {
		t.Errorf("a factor of dimension %d for d = %d: no error", fOther.D(), r.D())
	}
	if _, err := NewFactor(r, obj, make([]float64, r.D()+1)); err == nil {
		t.Error("NewFactor with a w of the wrong length: no error")
	}
	bad := make([]float64, r.D())
	bad[0] = 1 / bad[1] // +Inf
	if _, err := NewFactor(r, obj, bad); !errors.Is(err, ErrNotFinite) {
		t.Errorf("NewFactor at a non-finite w: %v, want ErrNotFinite", err)
	}
	if _, err := NewFactor(r, Objective{Loss: Hinge{}, Lambda: 1}, make([]float64, r.D())); err == nil {
		t.Error("NewFactor for the hinge loss: no error")
	}
	f, err := NewFactor(r, obj, make([]float64, r.D()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(r, obj, FitOptions{Factor: f, MaxIter: 1})
	if err != nil || res.Status != StatusMaxIter || res.Iter != 1 {
		t.Errorf("MaxIter 1 with a factor: %s after %d iterations, %v", res.Status, res.Iter, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fit(r, obj, FitOptions{Factor: f, Context: ctx}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context with a factor: %v", err)
	}
}

// TestFit_StartReuseBitIdentical runs, with one Workspace, pairs of fits
// from the same start on the same Rows (the second takes its start from
// the first: Workspace.startHit) — the objective-perturbation fit and the
// non-private fit of a bootstrap replicate, logistic and Huber, with and
// without a Factor — and checks each second fit bit for bit against the
// same fit in a fresh Workspace. A fit on other Rows, with another loss or
// from another point in between must not take the stored start.
func TestFit_StartReuseBitIdentical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 4))
	same := func(a, b Result) bool {
		if a.Iter != b.Iter || a.Hessians != b.Hessians || a.Status != b.Status ||
			a.Value != b.Value || a.GradNorm != b.GradNorm {
			return false
		}
		for j := range a.W {
			if a.W[j] != b.W[j] {
				return false
			}
		}
		return true
	}
	for name, r := range testDesigns(rng) {
		for _, loss := range []Loss{Logistic{}, Huber{H: 0.5}} {
			base := Objective{Loss: loss, Lambda: 1e-2}
			hat, err := Fit(r, base, FitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := NewFactor(r, base, hat.W)
			if err != nil {
				t.Fatal(err)
			}
			ws := new(Workspace)
			hits := 0
			for k := 0; k < 6; k++ {
				counts := make([]int32, r.N())
				for range counts {
					counts[rng.IntN(r.N())]++
				}
				var rep Rows
				wr := r.Resample(&rep, counts)
				pert := base
				pert.Linear = randVec(rng, r.D(), 0.05)
				var fac *Factor
				if k%2 == 1 {
					fac = f
				}
				objs := []Objective{pert, base}
				if k == 4 {
					// Another Rows in between: no hit for the second.
					if _, err := Fit(r, base, FitOptions{Init: hat.W, Work: ws}); err != nil {
						t.Fatal(err)
					}
					objs = []Objective{base}
				}
				for i, obj := range objs {
					got, err := Fit(wr, obj, FitOptions{Init: hat.W, Work: ws, Factor: fac})
					if err != nil {
						t.Fatal(err)
					}
					want, err := Fit(wr, obj, FitOptions{Init: hat.W, Work: new(Workspace), Factor: fac})
					if err != nil {
						t.Fatal(err)
					}
					if !same(got, want) {
						t.Errorf("%s, %T, replicate %d, fit %d: %+v, fresh workspace %+v", name, loss, k, i, got, want)
					}
					switch {
					case ws.startRows == nil: // the start was taken (and emptied)
						hits++
						if i != 1 {
							t.Errorf("%s, %T, replicate %d: fit %d took a stored start", name, loss, k, i)
						}
					case i == 1:
						t.Errorf("%s, %T, replicate %d: the second fit did not take the stored start", name, loss, k)
					}
				}
				// Another start point after a stored one: computed afresh.
				other := append([]float64(nil), hat.W...)
				other[0] += 1e-3
				got, err := Fit(wr, base, FitOptions{Init: other, Work: ws})
				if err != nil {
					t.Fatal(err)
				}
				want, err := Fit(wr, base, FitOptions{Init: other, Work: new(Workspace)})
				if err != nil || !same(got, want) {
					t.Errorf("%s, %T, replicate %d, other start: %+v, fresh %+v (%v)", name, loss, k, got, want, err)
				}
			}
			if hits == 0 {
				t.Errorf("%s: no fit took a stored start", name)
			}
		}
	}
}
