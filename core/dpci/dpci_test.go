package dpci

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/internal/stattest"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestEpsilonPrime(t *testing.T) {
	tests := []struct {
		name              string
		epsilon, n, c, tc float64
		want              float64
		wantErr           bool
	}{
		// ε′ = ε − log(1 + t/(2nc)): log(1 + 0.25/(2·1000·0.01)) = log(1.0125).
		{name: "lr", epsilon: 1, n: 1000, c: 0.01, tc: 0.25, want: 1 - math.Log(1.0125)},
		// SVM h = 0.5: t = 1; log(1 + 1/(2·100·0.1)) = log(1.05).
		{name: "svm", epsilon: 0.1, n: 100, c: 0.1, tc: 1, want: 0.1 - math.Log(1.05)},
		// c below t/(2n(e^ε − 1)) = 0.25/(2·100·(e^0.01 − 1)) ≈ 0.1244.
		{name: "too-small-c", epsilon: 0.01, n: 100, c: 0.1, tc: 0.25, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EpsilonPrime(tt.epsilon, tt.n, tt.c, tt.tc)
			if tt.wantErr {
				if !errors.Is(err, ErrEpsilonPrime) {
					t.Fatalf("err = %v, want ErrEpsilonPrime", err)
				}
				for _, s := range []string{"n = 100", "c = 0.1", "t = 0.25", "epsilon = 0.01"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not name %q", err, s)
					}
				}
				return
			}
			if err != nil || math.Abs(got-tt.want) > 1e-15 {
				t.Errorf("EpsilonPrime = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	// The same error from ObjPertFit.
	rng := randx.New(5, "dpci", "eps-prime")
	X, y := plantedData(rng, 100, []float64{1, 0})
	_, _, err := ObjPertFit(rng, mustRows(X, y), Params{Model: LR, C: 0.1, Phi1: 0.01})
	if !errors.Is(err, ErrEpsilonPrime) {
		t.Errorf("ObjPertFit err = %v, want ErrEpsilonPrime", err)
	}
}

// TestObjPertFit_BetaNorm recovers β from the stationarity condition of
// Algorithm 1, β = −n·∇L_n(θ̃) with L_n the unperturbed objective, and
// checks ‖β‖₂ ~ Gamma(d, rate ε′/2) (Eq. 3) with a DKW bound.
func TestObjPertFit_BetaNorm(t *testing.T) {
	const n, d, R = 200, 3, 1500
	rng := randx.New(6, "dpci", "beta")
	X, y := plantedData(rng, n, []float64{1, -1, 0.5})
	rows := mustRows(X, y)
	for _, p := range models {
		t.Run(string(p.Model), func(t *testing.T) {
			p.Phi1 = 1
			p.C = 0.05
			p.Fit = erm.FitOptions{GradTol: 1e-12}
			obj, _ := p.objective(nil)
			norms := make([]float64, R)
			var ep float64
			for r := range norms {
				res, e, err := ObjPertFit(rng, rows, p)
				if err != nil {
					t.Fatal(err)
				}
				ep = e
				g := obj.Grad(nil, rows, res.W)
				// Fit error: ‖∇J‖ ≤ 1e-12 shifts ‖β‖ by ≤ n·1e-12.
				norms[r] = n * math.Sqrt(dot(g, g))
			}
			want, _ := EpsilonPrime(1, n, p.C, p.T())
			if ep != want {
				t.Errorf("ε′ = %v, want %v", ep, want)
			}
			gam := distuv.Gamma{Alpha: d, Beta: ep / 2, Src: rng}
			if ks, crit := stattest.KS(norms, gam.CDF), stattest.DKWCrit(R, 1); ks > crit {
				t.Errorf("KS distance of ‖β‖ to Gamma(%d, %v) = %v > %v", d, ep/2, ks, crit)
			}
		})
	}
}

// TestOutPertNoise_Scale checks the noise of Algorithm 4: under DP ‖β‖ ~
// Gamma(d, rate n·φ·c) (Eq. 3); under zCDP every coordinate is
// N(0, 1/(2φ(nc)²)). DKW bounds on the pooled draws.
func TestOutPertNoise_Scale(t *testing.T) {
	const d, R, n, c, phi = 4, 2000, 500.0, 0.02, 0.7
	rng := randx.New(7, "dpci", "outpert")
	zero := make([]float64, d)
	// DP
	norms := make([]float64, R)
	for r := range norms {
		b, err := OutPertNoise(nil, rng, zero, n, c, phi, DP)
		if err != nil {
			t.Fatal(err)
		}
		norms[r] = math.Sqrt(dot(b, b))
	}
	gam := distuv.Gamma{Alpha: d, Beta: n * phi * c, Src: rng}
	if ks, crit := stattest.KS(norms, gam.CDF), stattest.DKWCrit(R, 2); ks > crit {
		t.Errorf("DP: KS of ‖β‖ to Gamma = %v > %v", ks, crit)
	}
	// zCDP: one coordinate per draw keeps the sample i.i.d.
	first := make([]float64, R)
	for r := range first {
		b, err := OutPertNoise(nil, rng, zero, n, c, phi, ZCDP)
		if err != nil {
			t.Fatal(err)
		}
		first[r] = b[r%d]
	}
	norm := distuv.Normal{Mu: 0, Sigma: 1 / (n * c * math.Sqrt(2*phi)), Src: rng}
	if ks, crit := stattest.KS(first, norm.CDF), stattest.DKWCrit(R, 2); ks > crit {
		t.Errorf("zCDP: KS of β_j to normal = %v > %v", ks, crit)
	}
	if _, err := OutPertNoise(nil, rng, zero, n, c, phi, "adp"); err == nil {
		t.Error("unknown privacy: want error")
	}
	if _, err := OutPertNoise(nil, rng, zero, n, 0, phi, DP); err == nil {
		t.Error("c = 0: want error")
	}
}

// TestOutPertFit_SharesThetaHat: θ̃ − θ̂ is exactly the noise of
// OutPertNoise from the same stream, and θ̂ is the non-private fit.
func TestOutPertFit_SharesThetaHat(t *testing.T) {
	X, y := plantedData(randx.New(8, "data"), 300, []float64{1, -1})
	rows := mustRows(X, y)
	p := Params{Model: LR, C: 0.01, Privacy: ZCDP, Phi1: 0.5}
	theta, hat, err := OutPertFit(randx.New(8, "noise"), rows, p)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := OutPertNoise(nil, randx.New(8, "noise"), hat.W, 300, p.C, p.Phi1, ZCDP)
	for j := range theta {
		if theta[j] != want[j] {
			t.Errorf("theta[%d] = %v, want %v", j, theta[j], want[j])
		}
	}
}

func TestGuarantee_Theorems(t *testing.T) {
	p := Params{Phi1: 0.5, Phi2: 0.2, Phi3: 0.3}
	tests := []struct {
		name string
		got  Guarantee
		want Guarantee
	}{
		{"thm2/dp", ObjPertGuarantee(withPriv(p, DP)), Guarantee{Privacy: DP, Epsilon: 1.0}},
		{"thm2/zcdp", ObjPertGuarantee(withPriv(p, ZCDP)), Guarantee{Privacy: ZCDP, Rho: 0.125 + 0.5}},
		{"thm4/dp", OutPertGuarantee(withPriv(p, DP)), Guarantee{Privacy: DP, Epsilon: 1.0}},
		{"thm4/zcdp", OutPertGuarantee(withPriv(p, ZCDP)), Guarantee{Privacy: ZCDP, Rho: 1.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.got
			if g.Privacy != tt.want.Privacy || math.Abs(g.Epsilon-tt.want.Epsilon) > 1e-15 || math.Abs(g.Rho-tt.want.Rho) > 1e-15 {
				t.Errorf("got %+v, want %+v", g, tt.want)
			}
			if g.Phi1 != 0.5 || g.Phi2 != 0.2 || g.Phi3 != 0.3 || g.Source == "" {
				t.Errorf("budgets or source not recorded: %+v", g)
			}
		})
	}
}

func withPriv(p Params, priv Privacy) Params { p.Privacy = priv; return p }

// TestParts_ComposeToTheorems checks that the parts of Algorithms 3 and 5,
// composed sequentially, give Theorems 2 and 4 ([ObjPertGuarantee],
// [OutPertGuarantee]) exactly, in the notion of p.Privacy, and that an
// unknown privacy gives invalid parts rather than a default.
func TestParts_ComposeToTheorems(t *testing.T) {
	p := Params{Phi1: 0.5, Phi2: 0.2, Phi3: 0.3}
	tests := []struct {
		name   string
		parts  [3]privacy.Guarantee
		theory Guarantee
		notion privacy.Notion
	}{
		{"thm2/dp", ObjPertParts(withPriv(p, DP)), ObjPertGuarantee(withPriv(p, DP)), privacy.Pure},
		{"thm2/zcdp", ObjPertParts(withPriv(p, ZCDP)), ObjPertGuarantee(withPriv(p, ZCDP)), privacy.ZCDP},
		{"thm4/dp", OutPertParts(withPriv(p, DP)), OutPertGuarantee(withPriv(p, DP)), privacy.Pure},
		{"thm4/zcdp", OutPertParts(withPriv(p, ZCDP)), OutPertGuarantee(withPriv(p, ZCDP)), privacy.ZCDP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := privacy.Compose(privacy.Sequential, "interval", tt.parts[:]...)
			if err != nil {
				t.Fatal(err)
			}
			if g.Notion != tt.notion || g.Epsilon != tt.theory.Epsilon || g.Rho != tt.theory.Rho {
				t.Errorf("composed %+v, want %s with ε = %v, ρ = %v", g, tt.notion, tt.theory.Epsilon, tt.theory.Rho)
			}
			for i, part := range tt.parts {
				if part.Covers == "" {
					t.Errorf("part %d covers nothing", i)
				}
			}
		})
	}
	for _, parts := range [][3]privacy.Guarantee{ObjPertParts(withPriv(p, "rdp")), OutPertParts(withPriv(p, "rdp"))} {
		if _, err := privacy.Compose(privacy.Sequential, "", parts[:]...); err == nil {
			t.Errorf("unknown privacy: parts %+v compose without error", parts)
		}
	}
}

func TestParams_Validate(t *testing.T) {
	good := Params{Model: SVM, H: 0.5, C: 0.1, Privacy: DP, Phi1: 1, Phi2: 1, Phi3: 1, Alpha: 0.05}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		mod  func(*Params)
	}{
		{"model", func(p *Params) { p.Model = "ols" }},
		{"h", func(p *Params) { p.H = 0 }},
		{"c", func(p *Params) { p.C = math.NaN() }},
		{"privacy", func(p *Params) { p.Privacy = "adp" }},
		{"phi2", func(p *Params) { p.Phi2 = 0 }},
		{"phi3", func(p *Params) { p.Phi3 = math.Inf(1) }},
		{"alpha", func(p *Params) { p.Alpha = 1 }},
		{"m", func(p *Params) { p.M = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := good
			tt.mod(&p)
			if err := p.Validate(); err == nil {
				t.Error("want error")
			}
		})
	}
}

func TestCheckRows(t *testing.T) {
	X := mat.NewDense(2, 2, []float64{0.6, 0.8, 0.1, 0})
	if err := CheckRows(mustRows(X, []float64{1, -1})); err != nil {
		t.Errorf("valid rows: %v", err)
	}
	if err := CheckRows(mustRows(X, []float64{1, 0})); err == nil {
		t.Error("label 0: want error")
	}
	X.Set(0, 0, 0.7)
	if err := CheckRows(mustRows(X, []float64{1, -1})); err == nil {
		t.Error("row norm > 1: want error")
	}
}

// TestAlgorithms_Smoke runs Algorithms 3 and 5 end to end for both models
// and privacy definitions and checks structural properties: θ̃ inside its
// interval, H̃ and Σ̃ with eigenvalues ≥ 2c, the recorded guarantee, and a
// wider interval at smaller α (same seed, so the same draws).
func TestAlgorithms_Smoke(t *testing.T) {
	X, y := plantedData(randx.New(9, "data"), 5000, []float64{2, -1, 0.5})
	rows := mustRows(X, y)
	for _, model := range models {
		for _, priv := range []Privacy{DP, ZCDP} {
			for _, alg := range []string{"obj", "out"} {
				name := string(model.Model) + "/" + string(priv) + "/" + alg
				t.Run(name, func(t *testing.T) {
					p := model
					p.Privacy, p.Phi1, p.Phi2, p.Phi3, p.M = priv, 1, 0.5, 0.5, 2000
					run := func(alpha float64) Result {
						p.Alpha = alpha
						rng := randx.New(9, name)
						var res Result
						var err error
						if alg == "obj" {
							res, err = ObjectivePerturbation(context.Background(), rng, rows, p)
						} else {
							res, err = OutputPerturbation(context.Background(), rng, rows, p)
						}
						if err != nil {
							t.Fatal(err)
						}
						return res
					}
					res, narrow := run(0.05), run(0.2)
					if res.Status != erm.StatusConverged {
						t.Errorf("status %s", res.Status)
					}
					for j, v := range res.Theta {
						if !res.CI.Covers(j, v) {
							t.Errorf("θ̃[%d] = %v outside [%v, %v]", j, v, res.CI.Lo[j], res.CI.Hi[j])
						}
						if !(narrow.CI.Hi[j]-narrow.CI.Lo[j] < res.CI.Hi[j]-res.CI.Lo[j]) {
							t.Errorf("coordinate %d: α = 0.2 interval not narrower than α = 0.05", j)
						}
					}
					for _, m := range []*mat.SymDense{res.H, res.Sigma} {
						if eig := symmetricEigs(t, m); eig[0] < 2*p.C*(1-1e-12) {
							t.Errorf("eigenvalue %v < 2c", eig[0])
						}
					}
					want := ObjPertGuarantee(p)
					if alg == "out" {
						want = OutPertGuarantee(p)
						if res.ThetaHat == nil {
							t.Error("ThetaHat not returned")
						}
					}
					if res.Guarantee != want {
						t.Errorf("guarantee %+v, want %+v", res.Guarantee, want)
					}
				})
			}
		}
	}
}

// TestOutputPerturbation_NoNoiseLimit: with budgets so large that every
// noise term is below 1e-14, Algorithm 5 (zCDP) reduces to the non-private
// sandwich interval at θ̂ (the clamp at 2c = 0.002 is inactive here: the
// smallest eigenvalues of H and Σ are ≈ 0.026 and 0.023).
func TestOutputPerturbation_NoNoiseLimit(t *testing.T) {
	X, y := plantedData(randx.New(12, "data"), 5000, []float64{1, -1, 0.5})
	rows := mustRows(X, y)
	p := Params{Model: LR, C: 1e-3, Privacy: ZCDP, Phi1: 1e36, Phi2: 1e36, Phi3: 1e36, Alpha: 0.1}
	res, err := OutputPerturbation(context.Background(), randx.New(12, "noise"), rows, p)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := Hessian(rows, p, res.ThetaHat)
	s, _ := GradCov(rows, p, res.ThetaHat)
	want, err := GaussianCI(res.ThetaHat, h, s, 5000, 0, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	for j := range want.Lo {
		if math.Abs(res.CI.Lo[j]-want.Lo[j]) > 1e-9 || math.Abs(res.CI.Hi[j]-want.Hi[j]) > 1e-9 {
			t.Errorf("coordinate %d: [%v, %v], want [%v, %v]", j, res.CI.Lo[j], res.CI.Hi[j], want.Lo[j], want.Hi[j])
		}
	}
	if e := frobDiff(res.H, h); e > 1e-12 {
		t.Errorf("‖H̃ − H‖_F = %v", e)
	}
}

// TestReleasesRejectWeightedRows: the whole-algorithm entry points release
// under Theorems 2 and 4, which assume one unweighted row per person.
func TestReleasesRejectWeightedRows(t *testing.T) {
	rng := randx.New(5, "dpci", "weighted")
	X, y := plantedData(rng, 200, []float64{1, -1})
	w := make([]float64, 200)
	for i := range w {
		w[i] = 1
	}
	w[0] = 2
	rows := erm.NewRows(X, y, nil).WithWeights(w)
	p := Params{Model: LR, C: 0.01, Privacy: DP, Phi1: 1, Phi2: 1, Phi3: 1, Alpha: 0.05, M: 50}
	if _, err := ObjectivePerturbation(context.Background(), rng, rows, p); err == nil {
		t.Error("ObjectivePerturbation accepted weighted rows")
	}
	if _, err := OutputPerturbation(context.Background(), rng, rows, p); err == nil {
		t.Error("OutputPerturbation accepted weighted rows")
	}
}

// TestHessianFactor_SameTheta runs Algorithm 1 on 20 bootstrap replicates
// (integer weights) warm-started at the full-data θ̂, with and without the
// full-data factor of HessianFactor, from the same noise stream: the same
// β, so the same objective, and both fits reach ‖∇J‖ ≤ GradTol; by
// 2c-strong convexity the two θ̃ differ by at most 2·GradTol/(2c).
func TestHessianFactor_SameTheta(t *testing.T) {
	X, y := plantedData(randx.New(27, "data"), 400, []float64{1, -1, 0.5})
	rows := mustRows(X, y)
	const tol = 1e-10
	for _, p := range models {
		t.Run(string(p.Model), func(t *testing.T) {
			p.Phi1 = 1
			hat, err := FitNonPrivate(rows, p, erm.FitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := HessianFactor(rows, p, hat.W)
			if err != nil {
				t.Fatal(err)
			}
			boot := randx.New(27, "boot", string(p.Model))
			for k := 0; k < 20; k++ {
				w := make([]float64, rows.N())
				for range w {
					w[boot.IntN(len(w))]++
				}
				wr := rows.WithWeights(w)
				var got [2][]float64
				for j, fac := range []*erm.Factor{nil, f} {
					q := p
					q.Fit = erm.FitOptions{Init: hat.W, GradTol: tol, Factor: fac}
					res, _, err := ObjPertFit(randx.New(27, "noise", fmt.Sprint(k)), wr, q)
					if err != nil {
						t.Fatal(err)
					}
					if res.Status != erm.StatusConverged {
						t.Fatalf("fit %d (factor %v): %s", k, fac != nil, res.Status)
					}
					got[j] = res.W
				}
				var d2 float64
				for j := range got[0] {
					d2 += (got[0][j] - got[1][j]) * (got[0][j] - got[1][j])
				}
				if d := math.Sqrt(d2); d > 2*tol/(2*p.C) {
					t.Errorf("fit %d: θ̃ with and without the factor differ by %g > %g", k, d, 2*tol/(2*p.C))
				}
			}
		})
	}
	if _, err := HessianFactor(rows, Params{Model: LR}, make([]float64, 3)); err == nil {
		t.Error("c = 0: no error")
	}
	if _, err := HessianFactor(rows, Params{Model: LR, C: 0.01}, make([]float64, 2)); err == nil {
		t.Error("theta of the wrong length: no error")
	}
}
