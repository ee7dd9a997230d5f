package dpci

import (
	"math"
	"testing"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/randx"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

var models = []Params{
	{Model: LR, C: 0.01},
	{Model: SVM, H: 0.5, C: 0.01},
}

// TestHessian_FiniteDifferences checks Eq. 5 against central differences of
// the gradient, the gradient against differences of J, and Eq. 6 against the
// covariance of per-row gradients computed directly.
func TestHessian_FiniteDifferences(t *testing.T) {
	for _, p := range models {
		t.Run(string(p.Model), func(t *testing.T) {
			rng := randx.New(1, "dpci", "fd", string(p.Model))
			X, y := plantedData(rng, 300, []float64{1.5, -1, 0.5, 0})
			rows := mustRows(X, y)
			obj, err := p.objective(nil)
			if err != nil {
				t.Fatal(err)
			}
			theta := []float64{0.7, -0.4, 0.9, 0.2}
			g := obj.Grad(nil, rows, theta)
			gfd := fd.Gradient(nil, func(w []float64) float64 { return obj.Value(rows, w) }, theta, &fd.Settings{Formula: fd.Central, Step: 1e-6})
			for j := range g {
				// Central differences: truncation O(h²·f‴) ≈ 1e-12 plus
				// rounding ε_mach·|J|/h ≈ 1e-10.
				if math.Abs(g[j]-gfd[j]) > 1e-7 {
					t.Errorf("grad[%d] = %v, finite difference %v", j, g[j], gfd[j])
				}
			}
			h, err := Hessian(rows, p, theta)
			if err != nil {
				t.Fatal(err)
			}
			var jac mat.Dense
			jac.ReuseAs(4, 4)
			fd.Jacobian(&jac, func(dst, w []float64) { obj.Grad(dst, rows, w) }, theta, &fd.JacobianSettings{Formula: fd.Central, Step: 1e-6})
			// The Huber f″ jumps at |1 − z| = h: a row within 1e-6 of a
			// kink would break the comparison; with 300 continuous margins
			// that has probability ~1e-3, and this seed has none.
			if e := frobDiff(h, &jac); e > 1e-6 {
				t.Errorf("‖H − FD Jacobian of grad‖_F = %v", e)
			}
			if eig := symmetricEigs(t, h); eig[0] < 2*p.C-1e-12 {
				t.Errorf("min eigenvalue of H = %v < 2c = %v", eig[0], 2*p.C)
			}

			// Eq. 6 at the exact minimizer θ̂: the mean per-row gradient of
			// f + c‖θ‖² is 0, so Σ is their (1/n) covariance, PSD.
			fit, err := FitNonPrivate(rows, p, erm.FitOptions{GradTol: 1e-13})
			if err != nil {
				t.Fatal(err)
			}
			s, err := GradCov(rows, p, fit.W)
			if err != nil {
				t.Fatal(err)
			}
			loss, _ := p.Loss()
			d := 4
			want := mat.NewSymDense(d, nil)
			gi := make([]float64, d)
			for i := 0; i < rows.N(); i++ {
				x := X.RawRowView(i)
				fp := loss.Deriv(y[i] * dot(x, fit.W))
				for j := range gi {
					gi[j] = y[i]*fp*x[j] + 2*p.C*fit.W[j]
				}
				want.SymRankOne(want, 1/float64(rows.N()), mat.NewVecDense(d, gi))
			}
			if e := frobDiff(s, want); e > 1e-12 {
				t.Errorf("‖GradCov − direct covariance‖_F = %v", e)
			}
			if eig := symmetricEigs(t, s); eig[0] < -1e-14 {
				t.Errorf("GradCov at θ̂ has eigenvalue %v < 0", eig[0])
			}
		})
	}
}

// TestSensitivity_Neighbours replaces one row of a small dataset and checks
// ‖M(D) − M(D′)‖_F ≤ Sens for the Hessian (Lemmas 3, 5) and the gradient
// covariance (Lemmas 2, 4), with random and worst-case replacement rows.
func TestSensitivity_Neighbours(t *testing.T) {
	const n, d, trials = 20, 3, 3000
	for _, p := range models {
		t.Run(string(p.Model), func(t *testing.T) {
			rng := randx.New(2, "dpci", "sens", string(p.Model))
			theta := []float64{1.2, -0.8, 0.3}
			sh, _ := SensHessian(p, n)
			ss, _ := SensGradCov(p, n, theta)
			var maxH, maxS float64
			for trial := 0; trial < trials; trial++ {
				X := mat.NewDense(n, d, nil)
				y := make([]float64, n)
				for i := 0; i < n; i++ {
					sphereRow(rng, X.RawRowView(i))
					y[i] = float64(2*rng.IntN(2) - 1)
				}
				X2 := mat.DenseCopyOf(X)
				y2 := append([]float64(nil), y...)
				k := rng.IntN(n)
				x := X2.RawRowView(k)
				switch trial % 3 {
				case 0: // random row on the sphere
					sphereRow(rng, x)
				case 1: // margin 0 (maximal logistic curvature, in the Huber band for h ≥ 1)
					sphereRow(rng, x)
					u := dot(x, theta) / dot(theta, theta)
					for j := range x {
						x[j] -= u * theta[j]
					}
					nx := math.Sqrt(dot(x, x))
					for j := range x {
						x[j] /= nx
					}
				case 2: // x ∥ θ, most negative margin: largest |f′|
					nt := math.Sqrt(dot(theta, theta))
					for j := range x {
						x[j] = -theta[j] / nt
					}
				}
				y2[k] = float64(2*rng.IntN(2) - 1)
				r1, r2 := mustRows(X, y), mustRows(X2, y2)
				h1, _ := Hessian(r1, p, theta)
				h2, _ := Hessian(r2, p, theta)
				s1, _ := GradCov(r1, p, theta)
				s2, _ := GradCov(r2, p, theta)
				maxH = math.Max(maxH, frobDiff(h1, h2))
				maxS = math.Max(maxS, frobDiff(s1, s2))
			}
			if maxH > sh*(1+1e-12) {
				t.Errorf("max ‖ΔH‖_F = %v > Sens = %v", maxH, sh)
			}
			if maxS > ss*(1+1e-12) {
				t.Errorf("max ‖ΔΣ‖_F = %v > Sens = %v", maxS, ss)
			}
			t.Logf("max ‖ΔH‖_F = %.4g (Sens %.4g), max ‖ΔΣ‖_F = %.4g (Sens %.4g)", maxH, sh, maxS, ss)
		})
	}
}

func TestSensitivity_Values(t *testing.T) {
	theta := []float64{3, 4} // ‖θ‖ = 5
	tests := []struct {
		name       string
		p          Params
		wantH      float64
		wantSigma  float64
		wantErr    bool
		sigmaTheta []float64
	}{
		// Lemma 3: 1/(2n); Lemma 2: 2·S(5)²/n.
		{name: "lr", p: Params{Model: LR}, wantH: 1.0 / 200, wantSigma: 2 * sigmoid(5) * sigmoid(5) / 100},
		// Lemma 5: 1/(nh); Lemma 4: 2/n.
		{name: "svm", p: Params{Model: SVM, H: 0.25}, wantH: 1 / (100 * 0.25), wantSigma: 2.0 / 100},
		{name: "svm-no-h", p: Params{Model: SVM}, wantErr: true},
		{name: "unknown", p: Params{Model: "ols"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := SensHessian(tt.p, 100)
			s, err2 := SensGradCov(tt.p, 100, theta)
			if tt.wantErr {
				if err == nil || err2 == nil {
					t.Fatalf("want errors, got %v, %v", err, err2)
				}
				return
			}
			if err != nil || err2 != nil {
				t.Fatal(err, err2)
			}
			if math.Abs(h-tt.wantH) > 1e-15 || math.Abs(s-tt.wantSigma) > 1e-15 {
				t.Errorf("got (%v, %v), want (%v, %v)", h, s, tt.wantH, tt.wantSigma)
			}
		})
	}
}

func TestPrivSPDMat_Properties(t *testing.T) {
	// M = Q·diag(3, 0.5, −1)·Qᵀ with a fixed rotation Q; clamp 2c = 1.
	const c = 0.5
	rng := randx.New(3, "dpci", "spd")
	var q mat.QR
	a := mat.NewDense(3, 3, nil)
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	q.Factorize(a)
	var Q mat.Dense
	q.QTo(&Q)
	var md mat.Dense
	md.Mul(&Q, mat.NewDiagDense(3, []float64{3, 0.5, -1}))
	md.Mul(&md, Q.T())
	m := mat.NewSymDense(3, nil)
	for i := 0; i < 3; i++ {
		for j := i; j < 3; j++ {
			m.SetSym(i, j, (md.At(i, j)+md.At(j, i))/2)
		}
	}
	var want mat.Dense
	want.Mul(&Q, mat.NewDiagDense(3, []float64{3, 1, 1}))
	want.Mul(&want, Q.T())
	for _, priv := range []Privacy{DP, ZCDP} {
		t.Run(string(priv), func(t *testing.T) {
			for trial := 0; trial < 200; trial++ {
				out, err := PrivSPDMat(nil, rng, m, 1, 0.5, c, priv)
				if err != nil {
					t.Fatal(err)
				}
				if !mat.Equal(out, out.T()) {
					t.Fatal("output not symmetric")
				}
				if eig := symmetricEigs(t, out); eig[0] < 2*c*(1-1e-12) {
					t.Fatalf("min eigenvalue %v < 2c = %v", eig[0], 2*c)
				}
			}
			// φ → ∞: DP noise ‖η‖ ~ d²·sens/φ ≈ 1e-13 at φ = 1e14, zCDP
			// noise sens/√(2φ) ≈ 7e-16 per entry at φ = 1e30.
			bigPhi := 1e14
			if priv == ZCDP {
				bigPhi = 1e30
			}
			out, err := PrivSPDMat(nil, rng, m, 1, bigPhi, c, priv)
			if err != nil {
				t.Fatal(err)
			}
			if e := frobDiff(out, &want); e > 1e-12 {
				t.Errorf("‖PrivSPDMat(φ=1e14) − clamp(M)‖_F = %v", e)
			}
		})
	}
	if _, err := PrivSPDMat(nil, rng, m, 1, 1, c, "adp"); err == nil {
		t.Error("unknown privacy: want error")
	}
	if _, err := PrivSPDMat(nil, rng, m, 0, 1, c, DP); err == nil {
		t.Error("zero sensitivity: want error")
	}
}

// TestPrivSPDMat_NoiseScale checks the per-entry noise of Algorithm 2: under
// zCDP the diagonal of M̃ − M is N(0, sens²/(2φ)); under DP the d²-vector η
// has ‖η‖ ~ Gamma(d², φ/sens), so E‖η‖² = d²(d²+1)(sens/φ)² and, by
// symmetry, each diagonal entry has variance (d²+1)(sens/φ)². M = 100·I
// keeps the clamp inactive (noise ≪ 100).
func TestPrivSPDMat_NoiseScale(t *testing.T) {
	const d, R, sens, phi = 3, 4000, 2.0, 0.5
	m := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		m.SetSym(i, i, 100)
	}
	for _, tt := range []struct {
		priv    Privacy
		wantVar float64
		kurt    float64 // E[e⁴]/Var² of the diagonal entry
	}{
		{ZCDP, sens * sens / (2 * phi), 3},
		// DP: diagonal entry = ‖η‖·u₁ with u uniform on S^{k−1}, k = d²;
		// E u₁⁴ = 3/(k(k+2)), E‖η‖⁴ = k(k+1)(k+2)(k+3)/γ⁴, so
		// E e⁴ = 3(k+1)(k+3)/γ⁴ and E e⁴/Var² = 3(k+3)/(k+1).
		{DP, float64(d*d+1) * (sens / phi) * (sens / phi), 3 * float64(d*d+3) / float64(d*d+1)},
	} {
		t.Run(string(tt.priv), func(t *testing.T) {
			rng := randx.New(4, "dpci", "spd-noise", string(tt.priv))
			var ss float64
			for r := 0; r < R; r++ {
				out, err := PrivSPDMat(nil, rng, m, sens, phi, 0.5, tt.priv)
				if err != nil {
					t.Fatal(err)
				}
				e := out.At(0, 0) - 100
				ss += e * e
			}
			// Mean of R i.i.d. e² has sd √((κ − 1)/R)·Var (κ the
			// kurtosis); two checks share the family level: ZCrit(2).
			got := ss / R
			tol := zCrit2 * math.Sqrt((tt.kurt-1)/R) * tt.wantVar
			if math.Abs(got-tt.wantVar) > tol {
				t.Errorf("Var(diag noise) = %v, want %v ± %v", got, tt.wantVar, tol)
			}
		})
	}
}

// TestPrivMatrices_SigmaFloor: Params.SigmaFloor moves only Σ̃'s floor.
// With c = 0.5 every eigenvalue of Σ on this ball data lies below c, and
// at φ = 1e30 (zCDP noise ~1e-16) the releases are their clamps: H̃ = H
// (whose eigenvalues are ≥ 2c already, Eq. 5) whatever the floor, Σ̃ = 2c·I
// by default (the paper's text) and SigmaFloor·c·I otherwise.
func TestPrivMatrices_SigmaFloor(t *testing.T) {
	rng := randx.New(1, "dpci", "sigma-floor")
	X, y := plantedData(rng, 200, []float64{1, -0.5, 0.25})
	rows := mustRows(X, y)
	theta := []float64{0.3, -0.2, 0.1}
	for _, tc := range []struct {
		floor, want float64
	}{{0, 1}, {2, 1}, {1, 0.5}, {0.1, 0.05}} {
		p := Params{Model: LR, C: 0.5, Privacy: ZCDP, Phi1: 1, Phi2: 1e30, Phi3: 1e30, Alpha: 0.05, SigmaFloor: tc.floor}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := p.CovFloor(); got != tc.want {
			t.Errorf("SigmaFloor %v: CovFloor = %v, want %v", tc.floor, got, tc.want)
		}
		h, sigma, err := PrivMatrices(randx.New(2, "dpci", "sigma-floor", "release"), rows, p, theta)
		if err != nil {
			t.Fatal(err)
		}
		hm, err := Hessian(rows, p, theta)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				wantH, wantS := hm.At(i, j), 0.0
				if i == j {
					wantS = tc.want
				}
				if math.Abs(h.At(i, j)-wantH) > 1e-12 || math.Abs(sigma.At(i, j)-wantS) > 1e-12 {
					t.Fatalf("SigmaFloor %v: H̃[%d,%d] = %v (want %v), Σ̃[%d,%d] = %v (want %v)", tc.floor, i, j, h.At(i, j), wantH, i, j, sigma.At(i, j), wantS)
				}
			}
		}
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		p := Params{Model: LR, C: 0.5, Privacy: DP, Phi1: 1, Phi2: 1, Phi3: 1, Alpha: 0.05, SigmaFloor: bad}
		if p.Validate() == nil {
			t.Errorf("SigmaFloor %v: Validate accepted it", bad)
		}
	}
}
