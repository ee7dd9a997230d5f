package perturb

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/erm"
)

func relClose(got, want, tol float64) bool {
	if want == 0 {
		return math.Abs(got) <= tol
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

// TestPlanObjPert checks the plans against values computed by hand (and
// re-evaluated with 40-digit decimal arithmetic, Python decimal module).
func TestPlanObjPert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts ObjPertOptions
		n    int
		want ObjPertPlan
	}{
		{
			// Logistic c = 1/4, n = 1000, λ = 0.01, ε = 1:
			// q = c/(nλ) = 0.25/10 = 0.025;
			// ε′ = 1 − log(1 + 2q + q²) = 1 − 2·log(1.025) = 1 − 0.0493852251807430
			//    = 0.950614774819257 > 0 → Δ = 0, γ = ε′/2 = 0.475307387409628.
			name: "cms11/logistic",
			opts: ObjPertOptions{Epsilon: 1, Lambda: 0.01},
			n:    1000,
			want: ObjPertPlan{Variant: VariantCMS11, Curvature: 0.25, EpsilonPrime: 0.950614774819257,
				NoiseGamma: 0.475307387409628, EffectiveLambda: 0.01, EpsilonDelivered: 1},
		},
		{
			// n = 100, λ = 0.01, ε = 0.1: q = 0.25/(100·0.01) = 0.25;
			// ε − 2·log(1.25) = 0.1 − 0.446287102628420 = −0.346287 ≤ 0 → fallback:
			// Δ = c/(n(e^{ε/4} − 1)) − λ = 0.25/(100·0.0253151205244289) − 0.01
			//   = 0.0987552082790807 − 0.01 = 0.0887552082790807,
			// ε′ = ε/2 = 0.05, γ = ε′/2 = 0.025.
			name: "cms11/fallback",
			opts: ObjPertOptions{Epsilon: 0.1, Lambda: 0.01, Loss: erm.Logistic{}, Variant: VariantCMS11},
			n:    100,
			want: ObjPertPlan{Variant: VariantCMS11, Curvature: 0.25, EpsilonPrime: 0.05, Fallback: true,
				Delta: 0.0887552082790807, NoiseGamma: 0.025, EffectiveLambda: 0.01, EpsilonDelivered: 0.1},
		},
		{
			// Huber H = 0.5: c = 1/(2H) = 1; n = 1000, λ = 0.1, ε = 0.5:
			// q = 1/100; ε′ = 0.5 − 2·log(1.01) = 0.5 − 0.0199006617063362
			//    = 0.480099338293664, γ = 0.240049669146832.
			name: "cms11/huber",
			opts: ObjPertOptions{Epsilon: 0.5, Lambda: 0.1, Loss: erm.Huber{H: 0.5}},
			n:    1000,
			want: ObjPertPlan{Variant: VariantCMS11, Curvature: 1, EpsilonPrime: 0.480099338293664,
				NoiseGamma: 0.240049669146832, EffectiveLambda: 0.1, EpsilonDelivered: 0.5},
		},
		{
			// Huber H = 0.5 (c = 1), n = 50, λ = 0.01, ε = 0.5: q = 1/0.5 = 2,
			// ε − 2·log 3 < 0 → Δ = 1/(50·(e^{0.125} − 1)) − 0.01
			//   = 1/(50·0.133148453066826) − 0.01 = 0.150208279100037 − 0.01
			//   = 0.140208279100037; ε′ = 0.25, γ = 0.125.
			name: "cms11/huber-fallback",
			opts: ObjPertOptions{Epsilon: 0.5, Lambda: 0.01, Loss: erm.Huber{H: 0.5}},
			n:    50,
			want: ObjPertPlan{Variant: VariantCMS11, Curvature: 1, EpsilonPrime: 0.25, Fallback: true,
				Delta: 0.140208279100037, NoiseGamma: 0.125, EffectiveLambda: 0.01, EpsilonDelivered: 0.5},
		},
		{
			// privatelr-1.1-69, n = 1000, λ = 0.01, ε = 1: ε′ = ε − 2·log(1 + c/(nλ))
			// with the requested λ = 0.950614774819257 (as cms11); noise
			// γ = ε′; λ_eff = 2λ = 0.02; delivered
			// 2ε′ + 2·log(1 + 0.25/(1000·0.02)) = 1.901229549638514 + 2·log(1.0125)
			// = 1.901229549638514 + 0.024845039997114 = 1.926074589635628
			// (≤ ε + ε′ = 1.950614774819257).
			name: "privatelr-1.1-69",
			opts: ObjPertOptions{Epsilon: 1, Lambda: 0.01, Variant: VariantPrivateLR1169},
			n:    1000,
			want: ObjPertPlan{Variant: VariantPrivateLR1169, Curvature: 0.25, EpsilonPrime: 0.950614774819257,
				NoiseGamma: 0.950614774819257, EffectiveLambda: 0.02, EpsilonDelivered: 1.926074589635628},
		},
		{
			// privatelr-1.1-69 fallback, n = 100, λ = 0.01, ε = 0.1: penalty
			// 2·log(1.25) > ε → output perturbation with noise
			// (1/(ελn))·R: γ = ελn = 0.1·0.01·100 = 0.1; exactly ε-DP for the
			// regularizer λ‖w‖² (sensitivity 2/(n·2λ) = 1 = ε/γ·…: γ·2/(n·2λ)
			// = 0.1·1 = ε).
			name: "privatelr-1.1-69/fallback",
			opts: ObjPertOptions{Epsilon: 0.1, Lambda: 0.01, Variant: VariantPrivateLR1169},
			n:    100,
			want: ObjPertPlan{Variant: VariantPrivateLR1169, Curvature: 0.25, EpsilonPrime: 0.1, Fallback: true,
				OutputPerturbation: true, NoiseGamma: 0.1, EffectiveLambda: 0.02, EpsilonDelivered: 0.1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PlanObjPert(tc.opts, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			w := tc.want
			if got.Variant != w.Variant || got.N != tc.n || got.Fallback != w.Fallback ||
				got.OutputPerturbation != w.OutputPerturbation || got.Loss == nil {
				t.Errorf("got %+v, want %+v", got, w)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"Curvature", got.Curvature, w.Curvature},
				{"EpsilonPrime", got.EpsilonPrime, w.EpsilonPrime},
				{"Delta", got.Delta, w.Delta},
				{"NoiseGamma", got.NoiseGamma, w.NoiseGamma},
				{"EffectiveLambda", got.EffectiveLambda, w.EffectiveLambda},
				{"EpsilonDelivered", got.EpsilonDelivered, w.EpsilonDelivered},
			} {
				// The literals carry 15 significant digits.
				if !relClose(f.got, f.want, 1e-14) {
					t.Errorf("%s = %.17g, want %.17g", f.name, f.got, f.want)
				}
			}
		})
	}
}

// TestPlanObjPert_Delivered checks, over a grid, the privacy accounting of
// CMS11's proof: noise cost 2γ plus curvature cost
// 2·log(1 + c/(n(EffectiveLambda + Delta))) equals EpsilonDelivered (cms11:
// exactly ε in both branches), and that privatelr-1.1-69 delivers at most ε + ε′,
// more than ε exactly when ε′ > 2·log((1 + q)/(1 + q/2)), q = c/(nλ).
func TestPlanObjPert_Delivered(t *testing.T) {
	t.Parallel()
	for _, eps := range []float64{0.01, 0.1, 0.5, 1, 3} {
		for _, lambda := range []float64{1e-5, 1e-3, 0.1, 1} {
			for _, n := range []int{10, 1000, 24000} {
				for _, variant := range []string{VariantCMS11, VariantPrivateLR1169} {
					p, err := PlanObjPert(ObjPertOptions{Epsilon: eps, Lambda: lambda, Variant: variant}, n)
					if err != nil {
						t.Fatal(err)
					}
					if p.OutputPerturbation {
						// Output fallback: γ·(L2 sensitivity 2/(n·EffectiveLambda)).
						if got := p.NoiseGamma * 2 / (float64(n) * p.EffectiveLambda); !relClose(got, eps, 1e-13) {
							t.Errorf("%s ε=%g λ=%g n=%d: output fallback spends %g", variant, eps, lambda, n, got)
						}
						continue
					}
					spent := 2*p.NoiseGamma + 2*math.Log1p(p.Curvature/(float64(n)*(p.EffectiveLambda+p.Delta)))
					if !relClose(spent, p.EpsilonDelivered, 1e-12) {
						t.Errorf("%s ε=%g λ=%g n=%d: accounting %g, EpsilonDelivered %g", variant, eps, lambda, n, spent, p.EpsilonDelivered)
					}
					if variant == VariantCMS11 && !relClose(p.EpsilonDelivered, eps, 1e-12) {
						t.Errorf("cms11 ε=%g λ=%g n=%d: delivers %g", eps, lambda, n, p.EpsilonDelivered)
					}
					if variant == VariantPrivateLR1169 {
						q := 0.25 / (float64(n) * lambda)
						above := p.EpsilonPrime > 2*math.Log((1+q)/(1+q/2))
						if p.EpsilonDelivered > eps+p.EpsilonPrime || (p.EpsilonDelivered > eps) != above {
							t.Errorf("privatelr-1.1-69 ε=%g λ=%g n=%d: delivers %g (ε′ = %g)", eps, lambda, n, p.EpsilonDelivered, p.EpsilonPrime)
						}
					}
					if p.Fallback != (p.Delta > 0) {
						t.Errorf("%s ε=%g λ=%g n=%d: Fallback %v with Δ = %g", variant, eps, lambda, n, p.Fallback, p.Delta)
					}
				}
			}
		}
	}
}

func TestPlanOutPert(t *testing.T) {
	t.Parallel()
	// n = 1000, λ = 0.01, ε = 1: sensitivity 2/(nλ) = 0.2, γ = nλε/2 = 5.
	p, err := PlanOutPert(OutPertOptions{Epsilon: 1, Lambda: 0.01}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !relClose(p.L2Sensitivity, 0.2, 1e-15) || !relClose(p.NoiseGamma, 5, 1e-15) || p.EpsilonDelivered != 1 {
		t.Errorf("plan %+v, want sensitivity 0.2, γ 5, ε 1", p)
	}
	if _, ok := p.Loss.(erm.Logistic); !ok {
		t.Errorf("default loss %T, want erm.Logistic", p.Loss)
	}
}

func TestPlan_Errors(t *testing.T) {
	t.Parallel()
	obj := []struct {
		name    string
		opts    ObjPertOptions
		n       int
		wantErr error
	}{
		{name: "epsilon zero", opts: ObjPertOptions{Lambda: 1}, n: 10},
		{name: "epsilon negative", opts: ObjPertOptions{Epsilon: -1, Lambda: 1}, n: 10},
		{name: "epsilon NaN", opts: ObjPertOptions{Epsilon: math.NaN(), Lambda: 1}, n: 10},
		{name: "epsilon Inf", opts: ObjPertOptions{Epsilon: math.Inf(1), Lambda: 1}, n: 10},
		{name: "lambda zero", opts: ObjPertOptions{Epsilon: 1}, n: 10},
		{name: "lambda NaN", opts: ObjPertOptions{Epsilon: 1, Lambda: math.NaN()}, n: 10},
		{name: "n zero", opts: ObjPertOptions{Epsilon: 1, Lambda: 1}, n: 0},
		{name: "variant", opts: ObjPertOptions{Epsilon: 1, Lambda: 1, Variant: "dplr"}, n: 10},
		{name: "hinge", opts: ObjPertOptions{Epsilon: 1, Lambda: 1, Loss: erm.Hinge{}}, n: 10, wantErr: ErrUnsupportedLoss},
		{name: "ramp", opts: ObjPertOptions{Epsilon: 1, Lambda: 1, Loss: erm.Ramp{}}, n: 10, wantErr: ErrUnsupportedLoss},
		{name: "squared", opts: ObjPertOptions{Epsilon: 1, Lambda: 1, Loss: erm.Squared{}}, n: 10, wantErr: ErrUnsupportedLoss},
		{name: "huber h=0", opts: ObjPertOptions{Epsilon: 1, Lambda: 1, Loss: erm.Huber{}}, n: 10, wantErr: ErrUnsupportedLoss},
		{name: "privatelr-1.1-69 huber", opts: ObjPertOptions{Epsilon: 1, Lambda: 1, Loss: erm.Huber{H: 0.5}, Variant: VariantPrivateLR1169}, n: 10, wantErr: ErrUnsupportedLoss},
	}
	for _, tc := range obj {
		t.Run("obj/"+tc.name, func(t *testing.T) {
			_, err := PlanObjPert(tc.opts, tc.n)
			if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
	out := []struct {
		name string
		opts OutPertOptions
		n    int
	}{
		{"epsilon zero", OutPertOptions{Lambda: 1}, 10},
		{"lambda negative", OutPertOptions{Epsilon: 1, Lambda: -1}, 10},
		{"n negative", OutPertOptions{Epsilon: 1, Lambda: 1}, -1},
		{"hinge", OutPertOptions{Epsilon: 1, Lambda: 1, Loss: erm.Hinge{}}, 10},
		{"squared", OutPertOptions{Epsilon: 1, Lambda: 1, Loss: erm.Squared{}}, 10},
	}
	for _, tc := range out {
		t.Run("out/"+tc.name, func(t *testing.T) {
			if _, err := PlanOutPert(tc.opts, tc.n); err == nil {
				t.Error("no error")
			}
		})
	}
}

// unitBallData returns n+1 rows (the last one is the replacement row of the
// neighbouring datasets) with an intercept-like first column, ‖xᵢ‖₂ ≤ 1, and
// ±1 labels from a logistic model.
func unitBallData(rng *rand.Rand, n, d int) (*mat.Dense, []float64) {
	X := mat.NewDense(n+1, d, nil)
	y := make([]float64, n+1)
	for i := 0; i <= n; i++ {
		row := X.RawRowView(i)
		for j := range row {
			row[j] = rng.NormFloat64()
		}
		row[0] = 1
		// Radius uniform in (0, 1]: many rows well inside the ball, some on it.
		floats.Scale(math.Sqrt(rng.Float64())/floats.Norm(row, 2), row)
		z := 4 * (row[1] - row[2] + 0.5*row[0])
		y[i] = -1
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	return X, y
}

// trainer is a (G, F) pair under test: a plan's DrawNoise and Fit.
type trainer struct {
	name   string
	lambda float64
	draw   func(b []float64, rng *rand.Rand) error
	fit    func(rows *erm.Rows, b []float64, opts erm.FitOptions) (erm.Result, error)
}

func trainers(t *testing.T, n int) []trainer {
	t.Helper()
	var out []trainer
	for _, tc := range []struct {
		name string
		opts ObjPertOptions
	}{
		// n = 40, λ = 0.05: q = 0.25/2 = 0.125, 2·log(1.125) = 0.236, so
		// ε = 1 is the main branch and ε = 0.1 the fallback.
		{"obj/cms11", ObjPertOptions{Epsilon: 1, Lambda: 0.05}},
		{"obj/cms11-fallback", ObjPertOptions{Epsilon: 0.1, Lambda: 0.05}},
		{"obj/cms11-huber", ObjPertOptions{Epsilon: 1, Lambda: 0.05, Loss: erm.Huber{H: 0.5}}},
		{"obj/privatelr-1.1-69", ObjPertOptions{Epsilon: 1, Lambda: 0.05, Variant: VariantPrivateLR1169}},
		{"obj/privatelr-1.1-69-fallback", ObjPertOptions{Epsilon: 0.1, Lambda: 0.05, Variant: VariantPrivateLR1169}},
	} {
		p, err := PlanObjPert(tc.opts, n)
		if err != nil {
			t.Fatal(err)
		}
		if want := tc.name == "obj/cms11-fallback" || tc.name == "obj/privatelr-1.1-69-fallback"; p.Fallback != want {
			t.Fatalf("%s: Fallback = %v, test expects %v", tc.name, p.Fallback, want)
		}
		out = append(out, trainer{tc.name, tc.opts.Lambda, p.DrawNoise, p.Fit})
	}
	for _, loss := range []erm.Loss{erm.Logistic{}, erm.Huber{H: 0.5}} {
		p, err := PlanOutPert(OutPertOptions{Epsilon: 1, Lambda: 0.05, Loss: loss}, n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, trainer{"out/" + loss.Name(), 0.05, p.DrawNoise, p.Fit})
	}
	return out
}

// TestTrainingStability checks the training stability of [CV13] Theorem 4
// (proof in the supplementary material, Section 6.5): for neighbouring
// training sets T, T′ (one row replaced) and the same noise R,
// ‖F(T, R) − F(T′, R)‖₂ ≤ 2/(λn), for objective and output perturbation.
// The bound is deterministic; the fits are exact up to the solver
// tolerance, so the check allows 2·GradTol/λ on top (GradTol = 1e-12).
//
// [CV13]: https://proceedings.neurips.cc/paper/2013
func TestTrainingStability(t *testing.T) {
	t.Parallel()
	const n, d, gradTol = 40, 4, 1e-12
	rng := rand.New(rand.NewPCG(2013, 4))
	X, y := unitBallData(rng, n, d)
	base := make([]int, n)
	for i := range base {
		base[i] = i
	}
	T := erm.NewRows(X, y, base)
	fitOpts := erm.FitOptions{GradTol: gradTol}
	neighbours := 100
	if testing.Short() {
		neighbours = 20
	}
	for _, tr := range trainers(t, n) {
		bound := 2/(tr.lambda*n) + 2*gradTol/tr.lambda
		var worst float64
		for k := 0; k < neighbours; k++ {
			b := make([]float64, d)
			if err := tr.draw(b, rng); err != nil {
				t.Fatal(err)
			}
			// Replace row k mod n by a fresh row (the extra row n, or a
			// re-drawn one with a flipped label for more variety).
			idx := append([]int(nil), base...)
			idx[k%n] = n
			yy := append([]float64(nil), y...)
			if k%2 == 1 {
				yy[n] = -yy[n]
			}
			Tp := erm.NewRows(X, yy, idx)
			a, err := tr.fit(T, b, fitOpts)
			if err != nil {
				t.Fatal(err)
			}
			c, err := tr.fit(Tp, b, fitOpts)
			if err != nil {
				t.Fatal(err)
			}
			if a.Status != erm.StatusConverged || c.Status != erm.StatusConverged {
				t.Fatalf("%s: status %s, %s", tr.name, a.Status, c.Status)
			}
			dist := floats.Distance(a.W, c.W, 2)
			worst = math.Max(worst, dist)
			if dist > bound {
				t.Errorf("%s: neighbour %d: ‖F(T,R) − F(T′,R)‖ = %g > 2/(λn) = %g", tr.name, k, dist, 2/(tr.lambda*n))
			}
		}
		t.Logf("%s: max distance %.4g = %.2f × 2/(λn)", tr.name, worst, worst/(2/(tr.lambda*n)))
	}
}

// TestFit_ZeroNoise checks that with b = 0 each F is the non-private
// erm.Fit of its documented objective (bit-identical: same solver, same
// inputs).
func TestFit_ZeroNoise(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	X, y := unitBallData(rng, 60, 5)
	rows := erm.NewRows(X, y, nil)
	zero := make([]float64, 5)
	for _, tc := range []struct {
		opts ObjPertOptions
		want erm.Objective
	}{
		{ObjPertOptions{Epsilon: 2, Lambda: 0.1}, erm.Objective{Loss: erm.Logistic{}, Lambda: 0.1}},
		{ObjPertOptions{Epsilon: 2, Lambda: 0.1, Variant: VariantPrivateLR1169}, erm.Objective{Loss: erm.Logistic{}, Lambda: 0.2}},
		{ObjPertOptions{Epsilon: 2, Lambda: 0.1, Loss: erm.Huber{H: 0.5}}, erm.Objective{Loss: erm.Huber{H: 0.5}, Lambda: 0.1}},
	} {
		p, err := PlanObjPert(tc.opts, rows.N())
		if err != nil {
			t.Fatal(err)
		}
		if p.Fallback {
			t.Fatalf("%+v: unexpected fallback", tc.opts)
		}
		got, err := p.Fit(rows, zero, erm.FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := erm.Fit(rows, tc.want, erm.FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !floats.Equal(got.W, want.W) {
			t.Errorf("%+v: zero-noise fit %v, non-private %v", tc.opts, got.W, want.W)
		}
	}
	// Fallback: the non-private fit with the extra regularization Δ.
	p, err := PlanObjPert(ObjPertOptions{Epsilon: 0.01, Lambda: 0.01}, rows.N())
	if err != nil || !p.Fallback {
		t.Fatalf("fallback plan: %+v, %v", p, err)
	}
	got, err := p.Fit(rows, zero, erm.FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := erm.Fit(rows, erm.Objective{Loss: erm.Logistic{}, Lambda: 0.01, ExtraL2: p.Delta}, erm.FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !floats.Equal(got.W, want.W) {
		t.Errorf("fallback zero-noise fit %v, want %v", got.W, want.W)
	}
	// Output perturbation.
	op, err := PlanOutPert(OutPertOptions{Epsilon: 1, Lambda: 0.1}, rows.N())
	if err != nil {
		t.Fatal(err)
	}
	got, err = op.Fit(rows, zero, erm.FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err = erm.Fit(rows, erm.Objective{Loss: erm.Logistic{}, Lambda: 0.1}, erm.FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !floats.Equal(got.W, want.W) {
		t.Errorf("output perturbation zero-noise fit %v, want %v", got.W, want.W)
	}
}

// TestFit_Optimality checks the objective-perturbation solution against the
// first-order condition of CMS11 Algorithm 2, written out here from the
// dense data (independent of erm's objective code):
//
//	(λ + Δ)·w + b/n + (1/n)·Σᵢ ℓ′(yᵢxᵢᵀw)·yᵢ·xᵢ = 0
//
// and the output-perturbation release against w* + b.
func TestFit_Optimality(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	const n, d = 80, 6
	X, y := unitBallData(rng, n, d)
	X = X.Slice(0, n, 0, d).(*mat.Dense)
	y = y[:n]
	rows := erm.NewRows(X, y, nil)
	// n = 80, λ = 0.01: q = c/(nλ) = 0.3125, 2·log(1 + q) = 0.544, so
	// ε = 0.05 takes the cms11 fallback (Δ > 0) and ε = 2 the main branch.
	for _, opts := range []ObjPertOptions{
		{Epsilon: 2, Lambda: 0.01},
		{Epsilon: 0.05, Lambda: 0.01},
		{Epsilon: 2, Lambda: 0.01, Variant: VariantPrivateLR1169},
	} {
		p, err := PlanObjPert(opts, n)
		if err != nil {
			t.Fatal(err)
		}
		if p.OutputPerturbation || p.Fallback != (opts.Epsilon == 0.05) {
			t.Fatalf("%+v: unexpected branch %+v", opts, p)
		}
		b := make([]float64, d)
		if err := p.DrawNoise(b, rng); err != nil {
			t.Fatal(err)
		}
		res, err := p.Fit(rows, b, erm.FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		g := make([]float64, d)
		for j := range g {
			g[j] = (p.EffectiveLambda+p.Delta)*res.W[j] + b[j]/n
		}
		for i := 0; i < n; i++ {
			x := X.RawRowView(i)
			c := erm.Logistic{}.Deriv(y[i]*floats.Dot(x, res.W)) * y[i] / n
			floats.AddScaled(g, c, x)
		}
		// ‖∇J‖ ≤ GradTol = 1e-10 by the solver; recomputation rounding is
		// far smaller.
		if norm := floats.Norm(g, 2); norm > 1e-9 {
			t.Errorf("%+v: first-order condition residual %g (‖b‖ = %g)", opts, norm, floats.Norm(b, 2))
		}
	}
	op, err := PlanOutPert(OutPertOptions{Epsilon: 1, Lambda: 0.01}, n)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]float64, d)
	if err := op.DrawNoise(b, rng); err != nil {
		t.Fatal(err)
	}
	res, err := op.Fit(rows, b, erm.FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := erm.Fit(rows, erm.Objective{Loss: erm.Logistic{}, Lambda: 0.01}, erm.FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !floats.Equal(res.W, op.Release(nil, ws.W, b)) {
		t.Errorf("output perturbation W = %v, want w* + b = %v", res.W, op.Release(nil, ws.W, b))
	}
}

// TestDrawNoise_Scale checks the calibration of the noise: for
// p(b) ∝ exp(−γ‖b‖₂) in d dimensions, ‖b‖ ~ Gamma(shape d, rate γ), with
// mean d/γ and standard deviation √d/γ. The mean of R draws is within
// z·√d/(γ√R) of d/γ except with probability ≤ 1e-5 for z = 4.42 (normal
// approximation; the Gamma(dR) sum is nearly normal at dR ≥ 10⁵).
func TestDrawNoise_Scale(t *testing.T) {
	t.Parallel()
	const d, R, z = 5, 20000, 4.42
	rng := rand.New(rand.NewPCG(9, 10))
	var plans []struct {
		name  string
		gamma float64
		draw  func([]float64, *rand.Rand) error
	}
	for _, opts := range []ObjPertOptions{
		{Epsilon: 1, Lambda: 0.01},
		{Epsilon: 0.1, Lambda: 0.01},
		{Epsilon: 1, Lambda: 0.01, Variant: VariantPrivateLR1169},
	} {
		p, err := PlanObjPert(opts, 1000)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, struct {
			name  string
			gamma float64
			draw  func([]float64, *rand.Rand) error
		}{"obj/" + p.Variant, p.NoiseGamma, p.DrawNoise})
	}
	op, err := PlanOutPert(OutPertOptions{Epsilon: 1, Lambda: 0.01}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	plans = append(plans, struct {
		name  string
		gamma float64
		draw  func([]float64, *rand.Rand) error
	}{"out", op.NoiseGamma, op.DrawNoise})
	b := make([]float64, d)
	for _, p := range plans {
		var sum float64
		for k := 0; k < R; k++ {
			if err := p.draw(b, rng); err != nil {
				t.Fatal(err)
			}
			sum += floats.Norm(b, 2)
		}
		mean, want := sum/R, d/p.gamma
		tol := z * math.Sqrt(d) / (p.gamma * math.Sqrt(R))
		if math.Abs(mean-want) > tol {
			t.Errorf("%s: mean ‖b‖ = %g, want d/γ = %g ± %g", p.name, mean, want, tol)
		}
	}
	if err := op.DrawNoise(nil, rng); err == nil {
		t.Error("empty dst: no error")
	}
}

func TestFit_InputValidation(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	X, y := unitBallData(rng, 20, 3)
	good := erm.NewRows(X, y, nil) // 21 rows
	n := good.N()
	big := mat.DenseCopyOf(X)
	big.Set(4, 1, 2) // ‖x₄‖ > 1
	yBin := append([]float64(nil), y...)
	yBin[7] = 0 // a {0, 1} label
	obj, err := PlanObjPert(ObjPertOptions{Epsilon: 1, Lambda: 0.1}, n)
	if err != nil {
		t.Fatal(err)
	}
	out, err := PlanOutPert(OutPertOptions{Epsilon: 1, Lambda: 0.1}, n)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]float64, 3)
	ones := make([]float64, n)
	floats.AddConst(1, ones)
	tests := []struct {
		name    string
		rows    *erm.Rows
		b       []float64
		wantErr error
	}{
		{name: "row norm", rows: erm.NewRows(big, y, nil), b: b, wantErr: ErrRowNorm},
		{name: "label", rows: erm.NewRows(X, yBin, nil), b: b, wantErr: ErrLabel},
		{name: "weighted", rows: good.WithWeights(make([]float64, n)), b: b},
		{name: "unit weights", rows: good.WithWeights(ones), b: b, wantErr: ErrWeighted},
		{name: "wrong n", rows: erm.NewRows(X, y, []int{0, 1, 2}), b: b},
		{name: "nil rows", b: b},
		{name: "len(b)", rows: good, b: []float64{0, 0}},
		{name: "nil b", rows: good},
		{name: "NaN b", rows: good, b: []float64{0, math.NaN(), 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, fit := range []func(*erm.Rows, []float64, erm.FitOptions) (erm.Result, error){obj.Fit, out.Fit} {
				_, err := fit(tc.rows, tc.b, erm.FitOptions{})
				if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
					t.Errorf("error %v, want %v", err, tc.wantErr)
				}
			}
		})
	}
	// The convenience functions check the data before drawing noise.
	if _, _, err := ObjectivePerturbation(rng, erm.NewRows(big, y, nil), ObjPertOptions{Epsilon: 1, Lambda: 0.1}, erm.FitOptions{}); !errors.Is(err, ErrRowNorm) {
		t.Errorf("ObjectivePerturbation: error %v, want ErrRowNorm", err)
	}
	if _, _, err := OutputPerturbation(rng, erm.NewRows(X, yBin, nil), OutPertOptions{Epsilon: 1, Lambda: 0.1}, erm.FitOptions{}); !errors.Is(err, ErrLabel) {
		t.Errorf("OutputPerturbation: error %v, want ErrLabel", err)
	}
	if _, _, err := ObjectivePerturbation(rng, nil, ObjPertOptions{Epsilon: 1, Lambda: 0.1}, erm.FitOptions{}); err == nil {
		t.Error("ObjectivePerturbation(nil rows): no error")
	}
}
