package glm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// groupDeviance is the deviance of a model whose fitted probability in
// each group is the group's share of ones (the maximum-likelihood fit of a
// model with one parameter per group): −2 Σ_g [k_g log p_g + (n_g − k_g)
// log(1 − p_g)].
func groupDeviance(n, k []int) float64 {
	var dev float64
	for g := range n {
		p := float64(k[g]) / float64(n[g])
		if k[g] > 0 {
			dev -= 2 * float64(k[g]) * math.Log(p)
		}
		if n[g] > k[g] {
			dev -= 2 * float64(n[g]-k[g]) * math.Log(1-p)
		}
	}
	return dev
}

// factorDesign builds a design of one categorical term ("f") whose levels
// have n[g] records with k[g] ones each, in treatment coding (level 0 the
// reference), plus the extra numeric terms' columns from extra(g, i).
func factorDesign(t *testing.T, n, k []int, extra []string, value func(term, g, i int) float64) *Design {
	t.Helper()
	cols := [][]string{nil}
	for g := 1; g < len(n); g++ {
		cols[0] = append(cols[0], "f="+string(rune('a'+g)))
	}
	for _, e := range extra {
		cols = append(cols, []string{e})
	}
	d, err := NewDesign(append([]string{"f"}, extra...), cols)
	if err != nil {
		t.Fatal(err)
	}
	for g := range n {
		for i := 0; i < n[g]; i++ {
			var c []int32
			var v []float64
			if g > 0 {
				c = append(c, int32(g))
				v = append(v, 1)
			}
			for e := range extra {
				if x := value(e, g, i); x != 0 {
					c = append(c, int32(len(n)+e))
					v = append(v, x)
				}
			}
			y := 0.0
			if i < k[g] {
				y = 1
			}
			if err := d.AddRow(y, c, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	return d
}

// TestFit_GroupClosedForm: a model with one parameter per group fits each
// group's share of ones, so its deviance has a closed form; so has the
// intercept-only model's (one group).
func TestFit_GroupClosedForm(t *testing.T) {
	n, k := []int{100, 80, 40}, []int{30, 50, 5}
	d := factorDesign(t, n, k, nil, nil)
	r, err := Fit(d, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if want := groupDeviance(n, k); math.Abs(r.Deviance-want) > 1e-7 {
		t.Errorf("deviance %.10f, want %.10f", r.Deviance, want)
	}
	if r.Rank != 3 || !r.Converged || len(r.Aliased) != 0 {
		t.Errorf("rank %d converged %v aliased %v", r.Rank, r.Converged, r.Aliased)
	}
	// Coefficients: the reference group's log-odds, and log-odds ratios.
	logit := func(g int) float64 { p := float64(k[g]) / float64(n[g]); return math.Log(p / (1 - p)) }
	if math.Abs(r.Coef[0]-logit(0)) > 1e-6 || math.Abs(r.Coef[1]-(logit(1)-logit(0))) > 1e-6 || math.Abs(r.Coef[2]-(logit(2)-logit(0))) > 1e-6 {
		t.Errorf("coef %v", r.Coef)
	}
	r0, err := Fit(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := groupDeviance([]int{220}, []int{85}); math.Abs(r0.Deviance-want) > 1e-7 || r0.Rank != 1 {
		t.Errorf("intercept only: deviance %.10f rank %d, want %.10f rank 1", r0.Deviance, r0.Rank, want)
	}
	if s := r.Score(2); s != r.Deviance+6 {
		t.Errorf("AIC %v, want deviance + 2·3", s)
	}
}

// TestFit_Aliased: a column that repeats a linear combination of earlier
// columns is aliased (R: coefficient NA), the rank drops by one and the
// deviance is that of the model without it; the earlier columns keep theirs.
func TestFit_Aliased(t *testing.T) {
	n, k := []int{100, 80, 40}, []int{30, 50, 5}
	// "dup" = 2·[f=b] + 3·[f=c] − 1: in the span of the intercept and f.
	d := factorDesign(t, n, k, []string{"dup"}, func(_, g, _ int) float64 { return []float64{-1, 1, 2}[g] })
	r, err := Fit(d, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Rank != 3 || len(r.Aliased) != 1 || r.Aliased[0] != 3 {
		t.Errorf("rank %d aliased %v, want 3 and [3]", r.Rank, r.Aliased)
	}
	if want := groupDeviance(n, k); math.Abs(r.Deviance-want) > 1e-7 {
		t.Errorf("deviance %.10f, want %.10f", r.Deviance, want)
	}
	// The other order: dup first, then f; now a column of f is aliased.
	r2, err := Fit(d, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Rank != 2 || len(r2.Aliased) != 0 {
		t.Errorf("dup alone: rank %d aliased %v", r2.Rank, r2.Aliased)
	}
}

// TestFit_AffineInvariant: with an intercept, rescaling and shifting a
// numeric column leaves the deviance unchanged (the selection does not
// depend on the columns' units) and divides its coefficient by the scale.
func TestFit_AffineInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	xs := make([]float64, 500)
	ys := make([]float64, 500)
	for i := range xs {
		xs[i] = rng.NormFloat64()
		if rng.Float64() < 1/(1+math.Exp(-(0.3+1.2*xs[i]))) {
			ys[i] = 1
		}
	}
	fit := func(a, b float64) Result {
		d, err := NewDesign([]string{"x"}, [][]string{{"x"}})
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range xs {
			if err := d.AddRow(ys[i], []int32{1}, []float64{a*x + b}); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Fit(d, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r1, r2 := fit(1, 0), fit(1000, 5e4)
	if math.Abs(r1.Deviance-r2.Deviance) > 1e-7*r1.Deviance {
		t.Errorf("deviance %.10f vs %.10f", r1.Deviance, r2.Deviance)
	}
	if math.Abs(r1.Coef[1]-1000*r2.Coef[1]) > 1e-6*math.Abs(r1.Coef[1]) {
		t.Errorf("slope %v vs 1000·%v", r1.Coef[1], r2.Coef[1])
	}
}

// TestFit_Separation: separable data push the coefficients to infinity;
// as in R the link's clamping keeps the fit finite, the deviance falls to
// nearly 0, and no error is returned.
func TestFit_Separation(t *testing.T) {
	d, err := NewDesign([]string{"x"}, [][]string{{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := -20; i <= 20; i++ {
		if i == 0 {
			continue
		}
		y := 0.0
		if i > 0 {
			y = 1
		}
		if err := d.AddRow(y, []int32{1}, []float64{float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Fit(d, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if !(r.Deviance < 1e-6) || !(r.Coef[1] > 1) {
		t.Errorf("deviance %v, slope %v: want ≈ 0 and large", r.Deviance, r.Coef[1])
	}
}

// TestBackward_Rules: the rules of R's step on designs whose deviances
// have closed forms. Term "b" (two groups) is worth an LR statistic
// between 2 and log n: AIC keeps it, BIC drops it. A term that repeats an
// earlier column ("dup") is dropped first, with its score unchanged, even
// when another removal would score lower (step's "Df == 0" rule); and
// removing nothing stops the search when no removal lowers the score.
func TestBackward_Rules(t *testing.T) {
	// Two groups of 200: 100 and 122 ones.
	n, k := []int{200, 200}, []int{100, 122}
	lr := groupDeviance([]int{400}, []int{222}) - groupDeviance(n, k)
	if !(lr > 2 && lr < math.Log(400)) {
		t.Fatalf("test design: LR statistic %v is not between 2 and log 400", lr)
	}
	// Terms: f (the groups), dup (= 5·[f=b], aliased), noise (x_i
	// alternating ±1 within each group, in balance with y: no effect).
	d := factorDesign(t, n, k, []string{"dup", "noise"}, func(term, g, i int) float64 {
		if term == 0 {
			return 5 * float64(g)
		}
		return float64(1 - 2*((i/2)%2))
	})
	full, err := Fit(d, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	aic, err := Backward(d, 2)
	if err != nil {
		t.Fatal(err)
	}
	bic, err := Backward(d, math.Log(400))
	if err != nil {
		t.Fatal(err)
	}
	names := func(s Selection) (out []string) {
		for _, st := range s.Steps {
			out = append(out, st.Term)
		}
		return out
	}
	if got := names(aic); len(got) != 2 || got[0] != "dup" || got[1] != "noise" || !aic.Steps[0].Aliased || aic.Steps[1].Aliased {
		t.Errorf("AIC steps %+v, want dup (aliased) then noise", aic.Steps)
	}
	if math.Abs(aic.Steps[0].Score-full.Score(2)) > 1e-9 || aic.Start != full.Score(2) {
		t.Errorf("removing the aliased term changed the score: %v → %v", aic.Start, aic.Steps[0].Score)
	}
	if len(aic.Kept) != 1 || aic.Kept[0] != 0 {
		t.Errorf("AIC kept %v, want [0] (f)", aic.Kept)
	}
	if want := groupDeviance(n, k) + 2*2; math.Abs(aic.Final.Score(2)-want) > 1e-6 {
		t.Errorf("AIC final score %v, want %v", aic.Final.Score(2), want)
	}
	if got := names(bic); len(got) != 3 || got[0] != "dup" || got[2] != "f" || len(bic.Kept) != 0 {
		t.Errorf("BIC steps %v kept %v, want dup, noise, f and nothing kept", got, bic.Kept)
	}
	if want := groupDeviance([]int{400}, []int{222}) + math.Log(400); math.Abs(bic.Final.Score(math.Log(400))-want) > 1e-6 {
		t.Errorf("BIC final score %v, want %v", bic.Final.Score(math.Log(400)), want)
	}
	if !aic.Converged || !bic.Converged {
		t.Errorf("converged: %v %v", aic.Converged, bic.Converged)
	}
}

// TestDesign_Errors: a response other than 0/1, a column out of order or
// range, and a non-finite value are refused; so is a bad penalty.
func TestDesign_Errors(t *testing.T) {
	d, err := NewDesign([]string{"x", "z"}, [][]string{{"x"}, {"z"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		y    float64
		cols []int32
		vals []float64
	}{{0.5, nil, nil}, {1, []int32{2, 1}, []float64{1, 1}}, {1, []int32{3}, []float64{1}}, {1, []int32{0}, []float64{1}}, {0, []int32{1}, []float64{math.NaN()}}} {
		if err := d.AddRow(c.y, c.cols, c.vals); err == nil {
			t.Errorf("AddRow(%v, %v, %v) accepted", c.y, c.cols, c.vals)
		}
	}
	if _, err := Fit(d, nil); err == nil {
		t.Error("Fit with no rows accepted")
	}
	if _, err := Backward(d, math.Inf(1)); err == nil {
		t.Error("Backward with k = +Inf accepted")
	}
	if _, err := NewDesign([]string{"x"}, [][]string{{}}); err == nil {
		t.Error("a term without columns accepted")
	}
}

// TestLogitLink: the fused link returns R's linkinv and mu.eta, clamping
// included, bit for bit.
func TestLogitLink(t *testing.T) {
	for _, eta := range []float64{-800, -30.5, -30, -29.9, -3, -1e-9, 0, 0.7, 12, 30, 30.0001, 700} {
		mu, me := logitLink(eta)
		if mu != logitLinkinv(eta) || me != logitMuEta(eta) {
			t.Errorf("eta %v: (%v, %v), want (%v, %v)", eta, mu, me, logitLinkinv(eta), logitMuEta(eta))
		}
	}
}

// nearSeparated returns a design whose term "x" (values −n … n) puts every
// response 1 above 0 and 0 below, but for the two records at ±1, which
// are swapped: the maximum-likelihood slope is finite but so steep that
// R's IRLS does not meet its convergence rule in 25 iterations (measured:
// n = 20,000 takes more; n = 2,000 converges in 20). Term "z" is noise.
func nearSeparated(t *testing.T, n int) *Design {
	t.Helper()
	d, err := NewDesign([]string{"x", "z"}, [][]string{{"x"}, {"z"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := -n; i <= n; i++ {
		y := 0.0
		if (i > 0) != (i == 1 || i == -1) {
			y = 1
		}
		if err := d.AddRow(y, []int32{1, 2}, []float64{float64(i), float64(i%7) - 3.5}); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// TestFit_NotConverged: a fit that does not meet the convergence rule in
// 25 iterations is returned, not an error, with Converged false (R warns
// "algorithm did not converge" and keeps the fit); a selection that made
// such fits says which and why.
func TestFit_NotConverged(t *testing.T) {
	d := nearSeparated(t, 20000)
	r, err := Fit(d, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if r.Converged || r.Iterations != 25 || r.Breakdown != "" || !(r.Deviance > 0) {
		t.Errorf("converged %v after %d iterations (breakdown %q), deviance %v; want no convergence in 25", r.Converged, r.Iterations, r.Breakdown, r.Deviance)
	}
	sel, err := Backward(d, 2)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Converged || len(sel.Unconverged) == 0 || sel.Unconverged[0] != "the full model: no convergence in 25 iterations" {
		t.Errorf("selection converged %v, unconverged %q", sel.Converged, sel.Unconverged)
	}
	if r2, err := Fit(nearSeparated(t, 2000), []int{0}); err != nil || !r2.Converged {
		t.Errorf("n = 2,000: converged %v (%v); want converged", r2.Converged, err)
	}
}
