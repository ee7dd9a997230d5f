package trs

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Tolerances. Solve is backward stable with error O(p·ε) ≈ 2e-14 relative
// at p = 77 (package documentation, Accuracy); the tests allow 1e-10
// relative (KKT residual) and 1e-12 (norm on the boundary), which leaves
// four orders of magnitude of margin.
const (
	kktTol  = 1e-10 // relative KKT residual, PSD defect and objective gaps
	normTol = 1e-12 // relative |‖θ‖ − R| on the boundary
)

// randOrthogonal returns a Haar-ish random p×p orthogonal matrix: the Q
// factor of a Gaussian matrix.
func randOrthogonal(rng *rand.Rand, p int) *mat.Dense {
	b := mat.NewDense(p, p, nil)
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(b)
	var q mat.Dense
	qr.QTo(&q)
	return &q
}

// symFromEigen returns Q·diag(lambda)·Qᵀ, symmetrized exactly.
func symFromEigen(q *mat.Dense, lambda []float64) *mat.SymDense {
	p := len(lambda)
	a := mat.NewSymDense(p, nil)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			var v float64
			for k, l := range lambda {
				v += q.At(i, k) * l * q.At(j, k)
			}
			a.SetSym(i, j, v)
		}
	}
	return a
}

// randProblem draws A with eigenvalues uniform on [lo, hi] (random
// eigenvectors) and g with i.i.d. N(0, 1) entries.
func randProblem(rng *rand.Rand, p int, lo, hi float64) (*mat.SymDense, []float64) {
	lambda := make([]float64, p)
	for i := range lambda {
		lambda[i] = lo + (hi-lo)*rng.Float64()
	}
	g := make([]float64, p)
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	return symFromEigen(randOrthogonal(rng, p), lambda), g
}

// objective returns q(θ) = ½θᵀAθ − gᵀθ.
func objective(a *mat.SymDense, g, theta []float64) float64 {
	x := mat.NewVecDense(len(theta), theta)
	return 0.5*mat.Inner(x, a, x) - floats.Dot(g, theta)
}

// spectrum returns the spectral norm of A and its smallest eigenvalue.
func spectrum(t *testing.T, a *mat.SymDense) (norm, min float64) {
	t.Helper()
	var e mat.EigenSym
	if !e.Factorize(a, false) {
		t.Fatal("test eigendecomposition failed")
	}
	v := e.Values(nil)
	return math.Max(math.Abs(v[0]), math.Abs(v[len(v)-1])), v[0]
}

// checkKKT asserts the optimality conditions of the package documentation:
// (A + μI)θ = g, μ ≥ 0, A + μI ⪰ 0, μ(R − ‖θ‖) = 0, ‖θ‖ ≤ R, and the
// consistency of Result with θ.
func checkKKT(t *testing.T, a *mat.SymDense, g []float64, r float64, theta []float64, res Result) {
	t.Helper()
	p := len(g)
	nA, lmin := spectrum(t, a)
	nTheta := floats.Norm(theta, 2)
	nG := floats.Norm(g, 2)
	// Scale of the terms of (A + μI)θ − g.
	scale := nA*nTheta + res.Mu*nTheta + nG
	resid := mat.NewVecDense(p, nil)
	resid.MulVec(a, mat.NewVecDense(p, theta))
	for i := range g {
		resid.SetVec(i, resid.AtVec(i)+res.Mu*theta[i]-g[i])
	}
	rel := 0.0 // g = 0 and θ = 0 give a zero residual and scale
	if n := mat.Norm(resid, 2); n != 0 {
		rel = n / scale
	}
	if !(rel <= kktTol) {
		t.Errorf("stationarity: ‖(A+μI)θ − g‖/scale = %.3g > %g", rel, kktTol)
	}
	if !(res.Mu >= 0) {
		t.Errorf("μ = %v < 0", res.Mu)
	}
	if d := lmin + res.Mu; !(d >= -kktTol*nA) {
		t.Errorf("λmin(A + μI) = %.3g < −%g·‖A‖", d, kktTol)
	}
	if !(nTheta <= r*(1+normTol)) {
		t.Errorf("‖θ‖ = %v > R = %v", nTheta, r)
	}
	if res.Boundary {
		if d := math.Abs(nTheta-r) / r; !(d <= normTol) {
			t.Errorf("Boundary but |‖θ‖ − R|/R = %.3g", d)
		}
	} else if res.Mu != 0 {
		t.Errorf("interior solution with μ = %v ≠ 0", res.Mu)
	}
	// Complementarity μ(R − ‖θ‖) = 0, relative to μR.
	if c := res.Mu * math.Abs(r-nTheta); !(c <= normTol*res.Mu*r) {
		t.Errorf("complementarity: μ·|R − ‖θ‖| = %.3g", c)
	}
}

func TestSolve_KKT(t *testing.T) {
	t.Parallel()
	// Eigenvalue ranges: positive definite, indefinite, negative definite,
	// and positive definite with condition number up to 1e8.
	kinds := []struct {
		name   string
		lo, hi float64
	}{
		{"posdef", 0.1, 2},
		{"indefinite", -1, 1},
		{"negdef", -2, -0.1},
		{"illcond", 1e-8, 1},
	}
	radii := []float64{0.05, 1, 100}
	const reps = 5
	for _, p := range []int{2, 5, 38, 77} {
		for _, k := range kinds {
			for _, r := range radii {
				t.Run(fmt.Sprintf("p=%d/%s/R=%g", p, k.name, r), func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(uint64(p), uint64(1000*r)))
					s := NewSolver(p)
					theta := make([]float64, p)
					dst2 := make([]float64, p)
					for rep := 0; rep < reps; rep++ {
						a, g := randProblem(rng, p, k.lo, k.hi)
						res, err := s.Solve(theta, a, g, r)
						if err != nil {
							t.Fatalf("rep %d: %v", rep, err)
						}
						checkKKT(t, a, g, r, theta, res)
						// Interior agrees with Boundary away from ties and
						// numerically singular matrices (none drawn here:
						// eigenvalues are ≥ 1e-8 away from 0 for posdef kinds).
						if in := s.Interior(dst2, a, g, r); in == res.Boundary {
							t.Errorf("rep %d: Interior = %v but Boundary = %v", rep, in, res.Boundary)
						}
						if res.HardCase {
							t.Errorf("rep %d: hard case on a random g", rep)
						}
					}
				})
			}
		}
	}
}

// TestSolve_KKTScales stresses the thresholds of Solve: eigenvalue spectra
// with exact ties, low rank, tight clusters at λ_min and 20 orders of
// magnitude; g with exact, rounding-level or no components on the bottom
// eigenspace; and A, g and R each scaled over 10⁻⁸…10⁸ (R 10⁻⁶…10⁶). The
// KKT residual is relative to ‖A‖‖θ‖ + μ‖θ‖ + ‖g‖, so it is scale-free.
func TestSolve_KKTScales(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(99, 1))
	const trials = 1500
	for trial := 0; trial < trials; trial++ {
		p := []int{1, 2, 3, 5, 10, 38}[rng.IntN(6)]
		spectrum := rng.IntN(6)
		scaleA := math.Pow(10, float64(rng.IntN(17)-8))
		lambda := make([]float64, p)
		for i := range lambda {
			switch spectrum {
			case 0: // generic
				lambda[i] = rng.NormFloat64()
			case 1: // integer eigenvalues with ties
				lambda[i] = float64(rng.IntN(5) - 2)
			case 2: // positive semidefinite, rank p/3
				if i < p/3 {
					lambda[i] = rng.Float64()
				}
			case 3: // cluster of width 1e-12 at the minimum
				lambda[i] = -1 + 1e-12*rng.Float64()
				if i > p/2 {
					lambda[i] = rng.NormFloat64()
				}
			case 4: // log-normal magnitudes, random signs
				lambda[i] = math.Exp(10 * rng.NormFloat64())
				if rng.IntN(2) == 0 {
					lambda[i] = -lambda[i]
				}
			case 5: // negative semidefinite
				lambda[i] = -math.Abs(rng.NormFloat64())
			}
			lambda[i] *= scaleA
		}
		q := mat.NewDense(p, p, nil)
		if rng.IntN(3) == 0 {
			for i := 0; i < p; i++ {
				q.Set(i, i, 1)
			}
		} else {
			q = randOrthogonal(rng, p)
		}
		a := symFromEigen(q, lambda)
		lmin := floats.Min(lambda)
		gKind := rng.IntN(4)
		ghat := make([]float64, p)
		for i := range ghat {
			ghat[i] = rng.NormFloat64()
			switch {
			case gKind == 1 && lambda[i] == lmin: // exact hard case
				ghat[i] = 0
			case gKind == 2 && lambda[i] <= lmin+1e-11*scaleA: // nearly hard
				ghat[i] *= 1e-13
			case gKind == 3:
				ghat[i] = 0
			}
		}
		g := make([]float64, p)
		mat.NewVecDense(p, g).MulVec(q, mat.NewVecDense(p, ghat))
		floats.Scale(math.Pow(10, float64(rng.IntN(17)-8)), g)
		r := math.Pow(10, float64(rng.IntN(13)-6))

		s := NewSolver(p)
		theta := make([]float64, p)
		res, err := s.Solve(theta, a, g, r)
		if err != nil {
			t.Fatalf("trial %d (spectrum %d, g kind %d, p %d): %v", trial, spectrum, gKind, p, err)
		}
		checkKKT(t, a, g, r, theta, res)
		if t.Failed() {
			t.Fatalf("trial %d (spectrum %d, g kind %d, p %d, R %g) failed", trial, spectrum, gKind, p, r)
		}
	}
}

func TestSolve_InteriorEqualsInverse(t *testing.T) {
	t.Parallel()
	for _, p := range []int{2, 5, 38, 77} {
		rng := rand.New(rand.NewChaCha8([32]byte{'i', 'n', 't', byte(p)}))
		a, g := randProblem(rng, p, 0.5, 2) // condition number ≤ 4
		var want mat.VecDense
		if err := want.SolveVec(a, mat.NewVecDense(p, g)); err != nil {
			t.Fatal(err)
		}
		r := 2 * mat.Norm(&want, 2)
		s := NewSolver(p)
		got := make([]float64, p)
		res, err := s.Solve(got, a, g, r)
		if err != nil {
			t.Fatal(err)
		}
		if res.Boundary || res.Mu != 0 || res.HardCase {
			t.Errorf("p=%d: Result = %+v, want interior", p, res)
		}
		// cond(A) ≤ 4, so both solves agree to a few hundred ulps.
		if d := floats.Distance(got, want.RawVector().Data, 2) / mat.Norm(&want, 2); !(d <= 1e-13) {
			t.Errorf("p=%d: Solve differs from A⁻¹g by %.3g (relative)", p, d)
		}
		in := make([]float64, p)
		if !s.Interior(in, a, g, r) {
			t.Errorf("p=%d: Interior = false for an interior problem", p)
		}
		if !floats.Equal(in, got) {
			t.Errorf("p=%d: Interior and Solve differ", p)
		}
		// Shrinking R below ‖A⁻¹g‖ moves the minimizer to the sphere.
		if s.Interior(in, a, g, r/4) {
			t.Errorf("p=%d: Interior = true with R < ‖A⁻¹g‖", p)
		}
		res, err = s.Solve(got, a, g, r/4)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Boundary || !(res.Mu > 0) {
			t.Errorf("p=%d: R < ‖A⁻¹g‖ gave %+v", p, res)
		}
	}
}

// bruteForce2D returns the minimum of q over a fine parametrization of the
// circle ‖θ‖ = R, a square grid over the disc and, when A ≻ 0 and it lies
// in the disc, the stationary point A⁻¹g (from mat.Cholesky). The global
// minimizer is the stationary point or lies on the circle, so the grid
// over the disc is a cross-check only.
func bruteForce2D(a *mat.SymDense, g []float64, r float64) float64 {
	best := math.Inf(1)
	var chol mat.Cholesky
	if chol.Factorize(a) {
		var x mat.VecDense
		if err := chol.SolveVecTo(&x, mat.NewVecDense(2, g)); err == nil && mat.Norm(&x, 2) <= r {
			best = objective(a, g, x.RawVector().Data)
		}
	}
	a00, a01, a11 := a.At(0, 0), a.At(0, 1), a.At(1, 1)
	q := func(x, y float64) float64 { // objective in closed form, no allocation
		return 0.5*(a00*x*x+2*a01*x*y+a11*y*y) - g[0]*x - g[1]*y
	}
	const nCircle = 1 << 16
	for k := 0; k < nCircle; k++ {
		t := 2 * math.Pi * float64(k) / nCircle
		best = math.Min(best, q(r*math.Cos(t), r*math.Sin(t)))
	}
	const nGrid = 400
	for i := -nGrid; i <= nGrid; i++ {
		for j := -nGrid; j <= nGrid; j++ {
			x, y := r*float64(i)/nGrid, r*float64(j)/nGrid
			if math.Hypot(x, y) <= r {
				best = math.Min(best, q(x, y))
			}
		}
	}
	return best
}

// Brute-force tolerance. On the circle, d²q/dt² is bounded by
// C = (3‖A‖R + ‖g‖)·R, so the grid minimum with spacing h = 2π/2¹⁶ exceeds
// the true minimum by at most C·h²/8 ≈ 1.2e-9·C; an interior minimum is
// the stationary point, which bruteForce2D includes. The one-sided check q(θ) ≤ brute + kktTol·C needs no such
// allowance because every sampled point is feasible.
func checkAgainstBrute(t *testing.T, a *mat.SymDense, g []float64, r float64, theta []float64, brute float64) {
	t.Helper()
	nA, _ := spectrum(t, a)
	c := (3*nA*r + floats.Norm(g, 2)) * r
	q := objective(a, g, theta)
	if !(q <= brute+kktTol*c) {
		t.Errorf("q(θ) = %.15g > brute-force minimum %.15g", q, brute)
	}
	if !(brute <= q+2e-9*c) {
		t.Errorf("brute-force minimum %.15g far above q(θ) = %.15g", brute, q)
	}
}

func TestSolve_GlobalOptimality2D(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2017))
	kinds := [][2]float64{{0.1, 2}, {-1, 1}, {-2, -0.1}, {-1, -1}, {0, 1}}
	for ki, k := range kinds {
		for _, r := range []float64{0.1, 1, 10} {
			a, g := randProblem(rng, 2, k[0], k[1])
			s := NewSolver(2)
			theta := make([]float64, 2)
			res, err := s.Solve(theta, a, g, r)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("kind=%d/R=%g", ki, r), func(t *testing.T) {
				checkKKT(t, a, g, r, theta, res)
				checkAgainstBrute(t, a, g, r, theta, bruteForce2D(a, g, r))
			})
		}
	}
}

// projGrad runs projected gradient descent on q over the ball from x0 with
// step 1/L, L = ‖A‖, and returns q at the last iterate.
func projGrad(a *mat.SymDense, g []float64, r, l float64, x0 []float64, iters int) float64 {
	p := len(g)
	x := mat.NewVecDense(p, append([]float64(nil), x0...))
	grad := mat.NewVecDense(p, nil)
	for it := 0; it < iters; it++ {
		grad.MulVec(a, x)
		for i := 0; i < p; i++ {
			x.SetVec(i, x.AtVec(i)-(grad.AtVec(i)-g[i])/l)
		}
		if n := mat.Norm(x, 2); n > r {
			x.ScaleVec(r/n, x)
		}
	}
	return objective(a, g, x.RawVector().Data)
}

func TestSolve_GlobalOptimalityPGD(t *testing.T) {
	t.Parallel()
	const (
		p        = 5
		restarts = 40
		iters    = 3000
	)
	rng := rand.New(rand.NewPCG(5, 2017))
	kinds := [][2]float64{{0.1, 2}, {-1, 1}, {-2, -0.1}, {-1, 0.05}}
	for ki, k := range kinds {
		for _, r := range []float64{0.1, 1, 10} {
			a, g := randProblem(rng, p, k[0], k[1])
			s := NewSolver(p)
			theta := make([]float64, p)
			res, err := s.Solve(theta, a, g, r)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("kind=%d/R=%g", ki, r), func(t *testing.T) {
				checkKKT(t, a, g, r, theta, res)
				nA, _ := spectrum(t, a)
				c := (nA*r + floats.Norm(g, 2)) * r // scale of q on the ball
				q := objective(a, g, theta)
				best := math.Inf(1)
				x0 := make([]float64, p)
				for k := 0; k < restarts; k++ {
					for i := range x0 {
						x0[i] = rng.NormFloat64()
					}
					floats.Scale(r*rng.Float64()/floats.Norm(x0, 2), x0)
					v := projGrad(a, g, r, nA, x0, iters)
					// Every PGD iterate is feasible: the one-sided bound
					// needs only rounding slack.
					if !(q <= v+kktTol*c) {
						t.Errorf("restart %d: PGD found q = %.15g < q(θ) = %.15g", k, v, q)
					}
					best = math.Min(best, v)
				}
				// Sanity check of the reference: the TRS has at most one
				// non-global local minimizer (Martínez 1994), so 40 restarts
				// of PGD reach the global value. PGD converges linearly, with
				// rate ≤ 1 − (gap)/‖A‖; 3000 steps leave far less than 1e-6.
				if !(best <= q+1e-6*c) {
					t.Errorf("best PGD value %.15g above q(θ) = %.15g", best, q)
				}
			})
		}
	}
}

func TestSolve_HardCase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		p      int
		lambda []float64 // eigenvalues; the hard-case direction is index 0
		ghat   []float64 // Qᵀg; ghat[i] = 0 on the λ_min eigenspace
		r      float64
		rotate bool
	}{
		{"2D/diagonal", 2, []float64{-1, 2}, []float64{0, 0.5}, 1, false},
		{"2D/rotated", 2, []float64{-1, 2}, []float64{0, 0.5}, 1, true},
		{"2D/zero-g", 2, []float64{-1, 2}, []float64{0, 0}, 3, true},
		{"5D/rotated", 5, []float64{-2, 1, 3, 0.5, -0.5}, []float64{0, 0.3, -0.2, 0.1, 0.05}, 2, true},
		{"5D/double-min", 5, []float64{-2, -2, 3, 0.5, -0.5}, []float64{0, 0, -0.2, 0.1, 0.05}, 2, true},
		{"5D/negdef", 5, []float64{-3, -1, -2, -0.5, -1.5}, []float64{0, 0.1, 0.2, -0.1, 0.05}, 1, true},
		{"38D/rotated", 38, nil, nil, 1.5, true},
	}
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(7, uint64(ti)))
			p, lambda, ghat := tc.p, tc.lambda, tc.ghat
			if lambda == nil {
				lambda = make([]float64, p)
				ghat = make([]float64, p)
				lambda[0] = -1
				for i := 1; i < p; i++ {
					lambda[i] = -0.9 + 2*rng.Float64()
					ghat[i] = 0.02 * rng.NormFloat64()
				}
			}
			q := mat.NewDense(p, p, nil)
			for i := 0; i < p; i++ {
				q.Set(i, i, 1)
			}
			if tc.rotate {
				q = randOrthogonal(rng, p)
			}
			a := symFromEigen(q, lambda)
			g := make([]float64, p)
			mat.NewVecDense(p, g).MulVec(q, mat.NewVecDense(p, ghat))

			// Closed form: μ = −λ_min, θ̃ = Σ_{λᵢ>λ_min} ĝᵢ/(λᵢ − λ_min) qᵢ,
			// and on the sphere q(θ) = −½gᵀθ̃ − ½μR² (gᵀq_min = 0).
			lmin := floats.Min(lambda)
			var tn2 float64
			thetaTilde := make([]float64, p)
			for i, l := range lambda {
				if l > lmin {
					c := ghat[i] / (l - lmin)
					tn2 += c * c
					for j := 0; j < p; j++ {
						thetaTilde[j] += c * q.At(j, i)
					}
				}
			}
			if tn2 >= tc.r*tc.r {
				t.Fatalf("bad test case: ‖θ̃‖ = %v ≥ R", math.Sqrt(tn2))
			}
			wantQ := -0.5*floats.Dot(g, thetaTilde) - 0.5*(-lmin)*tc.r*tc.r

			s := NewSolver(p)
			theta := make([]float64, p)
			res, err := s.Solve(theta, a, g, tc.r)
			if err != nil {
				t.Fatal(err)
			}
			if !res.HardCase || !res.Boundary {
				t.Errorf("Result = %+v, want HardCase and Boundary", res)
			}
			// μ = −λ_min up to the eigenvalue error O(p·ε·‖A‖).
			if d := math.Abs(res.Mu + lmin); !(d <= 1e-12) {
				t.Errorf("μ = %v, want %v", res.Mu, -lmin)
			}
			checkKKT(t, a, g, tc.r, theta, res)
			nA, _ := spectrum(t, a)
			c := (nA*tc.r + floats.Norm(g, 2)) * tc.r
			if got := objective(a, g, theta); !(math.Abs(got-wantQ) <= kktTol*c) {
				t.Errorf("q(θ) = %.15g, want %.15g", got, wantQ)
			}
			if p == 2 {
				checkAgainstBrute(t, a, g, tc.r, theta, bruteForce2D(a, g, tc.r))
			}
			if s.Interior(make([]float64, p), a, g, tc.r) {
				t.Error("Interior = true in the hard case")
			}
		})
	}
}

// TestSolve_NearHardCase perturbs a hard case by ĝ₁ = δ well above the
// hard-case threshold, so that the secular equation has a root within
// O(δ) of the pole, and checks convergence and continuity of the value.
func TestSolve_NearHardCase(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 13))
	const p = 5
	lambda := []float64{-2, 1, 3, 0.5, -0.5}
	q := randOrthogonal(rng, p)
	a := symFromEigen(q, lambda)
	s := NewSolver(p)
	theta := make([]float64, p)
	for _, tc := range []struct {
		delta, r float64
	}{
		{1e-10, 2}, {1e-6, 2}, {1e-3, 2},
		// ‖θ̃‖ = 0.28 for ĝ = (δ, 0.3, −0.2, 0.1, 0.05); R close to it makes
		// the root ν* ≈ δ/√(R² − ‖θ̃‖²) large relative to δ/R (slow regime).
		{1e-9, 0.2803}, {1e-12, 0.2803},
	} {
		ghat := []float64{tc.delta, 0.3, -0.2, 0.1, 0.05}
		g := make([]float64, p)
		mat.NewVecDense(p, g).MulVec(q, mat.NewVecDense(p, ghat))
		res, err := s.Solve(theta, a, g, tc.r)
		if err != nil {
			t.Fatalf("δ=%g R=%g: %v", tc.delta, tc.r, err)
		}
		checkKKT(t, a, g, tc.r, theta, res)
		if !res.Boundary || !(res.Mu >= 2) {
			t.Errorf("δ=%g R=%g: Result = %+v, want boundary with μ ≥ −λ_min", tc.delta, tc.r, res)
		}
	}
}

// TestSolve_Singular covers positive semidefinite A with a zero eigenvalue
// and g in the range (interior minimizer, μ = 0), and g with a component in
// the null space (boundary).
func TestSolve_Singular(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(17, 19))
	const p = 5
	q := randOrthogonal(rng, p)
	a := symFromEigen(q, []float64{0, 1, 2, 3, 4})
	s := NewSolver(p)
	theta := make([]float64, p)
	for _, tc := range []struct {
		name     string
		ghat     []float64
		r        float64
		boundary bool
	}{
		{"range/interior", []float64{0, 1, 1, 1, 1}, 10, false},
		{"range/boundary", []float64{0, 1, 1, 1, 1}, 0.5, true},
		{"nullspace", []float64{0.1, 1, 1, 1, 1}, 10, true},
	} {
		g := make([]float64, p)
		mat.NewVecDense(p, g).MulVec(q, mat.NewVecDense(p, tc.ghat))
		res, err := s.Solve(theta, a, g, tc.r)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkKKT(t, a, g, tc.r, theta, res)
		if res.Boundary != tc.boundary {
			t.Errorf("%s: Boundary = %v, want %v", tc.name, res.Boundary, tc.boundary)
		}
	}
}

func TestSolve_Aliasing(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(23, 29))
	const p = 7
	for _, lo := range []float64{0.5, -1} {
		a, g := randProblem(rng, p, lo, 1)
		s := NewSolver(p)
		want := make([]float64, p)
		wantRes, err := s.Solve(want, a, g, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		got := append([]float64(nil), g...)
		res, err := s.Solve(got, a, got, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		if res != wantRes || !floats.Equal(got, want) {
			t.Errorf("dst aliasing g changed the result")
		}
	}
}

func TestSolve_Deterministic(t *testing.T) {
	t.Parallel()
	// The same Solver gives bit-identical results on repeated calls
	// (workspace reuse leaves no state behind).
	rng := rand.New(rand.NewPCG(31, 37))
	const p = 38
	a, g := randProblem(rng, p, -1, 1)
	s := NewSolver(p)
	first := make([]float64, p)
	res1, err := s.Solve(first, a, g, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	b, h := randProblem(rng, p, 0.1, 1)
	if _, err := s.Solve(make([]float64, p), b, h, 100); err != nil {
		t.Fatal(err)
	}
	again := make([]float64, p)
	res2, err := s.Solve(again, a, g, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if res1 != res2 || !floats.Equal(first, again) {
		t.Error("repeated Solve differs")
	}
}

func TestSolve_BadInput(t *testing.T) {
	t.Parallel()
	const p = 3
	good := func() (*mat.SymDense, []float64, []float64) {
		return mat.NewSymDense(p, []float64{2, 0, 0, 0, -1, 0, 0, 0, 1}), []float64{1, 2, 3}, make([]float64, p)
	}
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name   string
		solver *Solver
		mutate func(a **mat.SymDense, g, dst *[]float64, r *float64)
	}{
		{"nil A", nil, func(a **mat.SymDense, _, _ *[]float64, _ *float64) { *a = nil }},
		{"empty A", nil, func(a **mat.SymDense, _, _ *[]float64, _ *float64) { *a = &mat.SymDense{} }},
		{"A 2x2", nil, func(a **mat.SymDense, _, _ *[]float64, _ *float64) { *a = mat.NewSymDense(2, nil) }},
		{"A 4x4", nil, func(a **mat.SymDense, _, _ *[]float64, _ *float64) { *a = mat.NewSymDense(4, nil) }},
		{"short g", nil, func(_ **mat.SymDense, g, _ *[]float64, _ *float64) { *g = (*g)[:2] }},
		{"long g", nil, func(_ **mat.SymDense, g, _ *[]float64, _ *float64) { *g = append(*g, 1) }},
		{"nil g", nil, func(_ **mat.SymDense, g, _ *[]float64, _ *float64) { *g = nil }},
		{"short dst", nil, func(_ **mat.SymDense, _, dst *[]float64, _ *float64) { *dst = (*dst)[:2] }},
		{"nil dst", nil, func(_ **mat.SymDense, _, dst *[]float64, _ *float64) { *dst = nil }},
		{"R = 0", nil, func(_ **mat.SymDense, _, _ *[]float64, r *float64) { *r = 0 }},
		{"R < 0", nil, func(_ **mat.SymDense, _, _ *[]float64, r *float64) { *r = -1 }},
		{"R NaN", nil, func(_ **mat.SymDense, _, _ *[]float64, r *float64) { *r = nan }},
		{"R +Inf", nil, func(_ **mat.SymDense, _, _ *[]float64, r *float64) { *r = inf }},
		{"g NaN", nil, func(_ **mat.SymDense, g, _ *[]float64, _ *float64) { (*g)[1] = nan }},
		{"g -Inf", nil, func(_ **mat.SymDense, g, _ *[]float64, _ *float64) { (*g)[2] = -inf }},
		{"A NaN diagonal", nil, func(a **mat.SymDense, _, _ *[]float64, _ *float64) { (*a).SetSym(1, 1, nan) }},
		{"A Inf off-diagonal", nil, func(a **mat.SymDense, _, _ *[]float64, _ *float64) { (*a).SetSym(0, 2, inf) }},
		{"negative dimension", NewSolver(-1), func(_ **mat.SymDense, _, _ *[]float64, _ *float64) {}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, g, dst := good()
			r := 1.0
			tc.mutate(&a, &g, &dst, &r)
			s := tc.solver
			if s == nil {
				s = NewSolver(p)
			}
			_, err := s.Solve(dst, a, g, r)
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Solve error = %v, want ErrInvalid", err)
			}
			if s.Interior(dst, a, g, r) {
				t.Error("Interior = true on invalid input")
			}
		})
	}
}

func TestSolve_Empty(t *testing.T) {
	t.Parallel()
	s := NewSolver(0)
	res, err := s.Solve(nil, &mat.SymDense{}, nil, 1)
	if err != nil || res != (Result{}) {
		t.Errorf("p = 0: got %+v, %v", res, err)
	}
}

func TestSolve_NoAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count only")
	}
	rng := rand.New(rand.NewPCG(41, 43))
	const p = 38
	ind, g := randProblem(rng, p, -1, 1)
	pd, h := randProblem(rng, p, 0.5, 1)
	s := NewSolver(p)
	dst := make([]float64, p)
	if n := testing.AllocsPerRun(20, func() { _, _ = s.Solve(dst, ind, g, 0.5) }); n != 0 {
		t.Errorf("Solve (indefinite) allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(20, func() { _ = s.Interior(dst, pd, h, 100) }); n != 0 {
		t.Errorf("Interior allocates %v times per call", n)
	}
}

func benchmarkSolve(b *testing.B, p int, lo, hi, r float64) {
	rng := rand.New(rand.NewPCG(uint64(p), 47))
	a, g := randProblem(rng, p, lo, hi)
	s := NewSolver(p)
	dst := make([]float64, p)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Solve(dst, a, g, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSolve(b *testing.B) {
	for _, p := range []int{38, 77} {
		b.Run(fmt.Sprintf("p=%d/indefinite", p), func(b *testing.B) { benchmarkSolve(b, p, -1, 1, 1) })
	}
}

func BenchmarkInterior(b *testing.B) {
	const p = 77
	rng := rand.New(rand.NewPCG(p, 53))
	a, g := randProblem(rng, p, 0.5, 2)
	s := NewSolver(p)
	dst := make([]float64, p)
	b.ReportAllocs()
	for b.Loop() {
		if !s.Interior(dst, a, g, 1e3) {
			b.Fatal("not interior")
		}
	}
}
