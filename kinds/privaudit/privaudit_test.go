package privaudit

import (
	"context"
	"github.com/dprepro/dprepro/runner"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/dprepro/dprepro/core/audit"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/stattest"
)

// mustCatch are the broken variants the audit must flag at every ε of the
// quick profile (see largeEpsOnly): each kind of bug the audit is built to catch (half the
// noise scale, sensitivity off by 2, AboveThreshold without threshold noise,
// noise reduction's keep probability unsquared or per-level scale one level
// off, CMS11's Δ dropped) on the
// mechanisms whose claim is tight enough for the bug to exceed it.
//
// PrivSPDMat is not among them since its pairs come from the real Hessian
// and gradient covariance: the worst pair found attains ‖M(D) − M(D′)‖_F =
// 0.71·S (Hessian) and 0.60·S (covariance) — Lemmas 2–5 bound two rank-one
// terms by the triangle inequality — so half the noise is a true loss of
// at most 1.41ε, which a projection of the 9-dimensional noise cannot show
// at the quick profile's draws; TestExactLoss_PrivSPDMat checks those
// sensitivities exactly instead.
var mustCatch = map[string][]string{
	"laplace":               {HalfNoise, Sensitivity2},
	"laplace-secure":        {HalfNoise, Sensitivity2},
	"spherical-laplace":     {HalfNoise, Sensitivity2},
	"exponential":           {HalfNoise, Sensitivity2},
	"report-noisy-max":      {HalfNoise, Sensitivity2},
	"randomized-response":   {HalfNoise},
	"outpert-cms11-huber":   {HalfNoise},
	"objpert-cms11-huber":   {HalfNoise},
	"objpert-wkl-svm":       {HalfNoise},
	"outpert-wkl-dp":        {HalfNoise},
	"noise-reduction":       {HalfNoise, Sensitivity2},
	"above-threshold":       {HalfNoise, Sensitivity2, NoThresholdNoise},
	"stability-validation":  {HalfNoise, Sensitivity2},
	"histogram":             {HalfNoise},
	"noise-reduction-level": {HalfNoise, Sensitivity2, KeepUnsquared, ScaleNextLevel},
	"noise-reduction-step":  {HalfNoise, Sensitivity2, KeepUnsquared, ScaleNextLevel},
	"objpert-cms11-delta":   {NoDelta},
	"doubling-test":         {HalfNoise},
}

// largeEpsOnly are the mustCatch pairs required at the largest ε of the
// quick profile only: at ε = 0.5 their bound clears the claim by 0.05 ± 0.02
// (over 9 seeds; smallest 0.024), so a seed other than the committed one
// misses them with probability about 1 %, far above FamilyAlpha, while at
// ε = 1 the margin is 0.31 ± 0.03.
var largeEpsOnly = map[string]bool{
	"objpert-cms11-huber/" + HalfNoise: true,
	"objpert-wkl-svm/" + HalfNoise:     true,
	"outpert-cms11-huber/" + HalfNoise: true,
}

// TestAuditQuick runs the quick profile of experiments/audit.toml with each
// lower bound at confidence 1 − FamilyAlpha/units (Bonferroni), so that a
// correct mechanism is flagged, for any seed, with probability at most
// stattest.FamilyAlpha overall: every correct mechanism must pass, and
// every broken variant of mustCatch must be caught.
func TestAuditQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quick audit")
	}
	spec, err := experiments.Load(filepath.Join("..", "..", "experiments", "audit.toml"), "quick", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.Section.(*Section).Audit.Confidence = 1 - stattest.FamilyAlpha/float64(len(e.Units()))
	caught := map[string][]float64{} // mechanism/variant → the ε where caught
	for _, key := range unitKeys(e) {
		rows, err := runner.RunKey(context.Background(), e, key)
		if err != nil {
			t.Fatal(err)
		}
		r := rows[0]
		switch r["verdict"] {
		case Violation:
			t.Errorf("%s: correct mechanism flagged: lower bound %s > claimed %s (event %s)", key, r["eps_lower"], r["claimed_eps"], r["event"])
		case Caught:
			eps, err := strconv.ParseFloat(r["epsilon"], 64)
			if err != nil {
				t.Fatal(err)
			}
			caught[r["mechanism"]+"/"+r["variant"]] = append(caught[r["mechanism"]+"/"+r["variant"]], eps)
		}
	}
	for m, vs := range mustCatch {
		if !slices.Contains(spec.Section.(*Section).Audit.Mechanisms, m) {
			t.Errorf("%s is not in the quick audit", m)
		}
		for _, v := range vs {
			want := spec.Section.(*Section).Audit.Epsilons
			if largeEpsOnly[m+"/"+v] {
				want = []float64{slices.Max(want)}
			}
			for _, eps := range want {
				if !slices.Contains(caught[m+"/"+v], eps) {
					t.Errorf("%s %s: not caught at ε = %v (caught at %v)", m, v, eps, caught[m+"/"+v])
				}
			}
		}
	}
}

// TestTargetsListed checks that every mechanism is listed once and every
// listed one has a target, and that the claims are what the mechanisms
// state.
func TestTargetsListed(t *testing.T) {
	ts := targets()
	if len(ts) != len(Mechanisms) {
		t.Errorf("%d targets, %d names", len(ts), len(Mechanisms))
	}
	for _, m := range Mechanisms {
		tg, ok := ts[m]
		if !ok {
			t.Errorf("%s has no target", m)
			continue
		}
		c := tg.claim(1, 1e-5)
		switch {
		case tg.zcdp:
			if c.Delta != 1e-5 || c.Epsilon < 5.29 || c.Epsilon > 5.31 {
				t.Errorf("%s: zCDP claim at ρ = 1/2: %+v", m, c)
			}
		case tg.approx:
			if c != (audit.Claim{Epsilon: 1, Delta: 1e-5}) {
				t.Errorf("%s: claim %+v", m, c)
			}
		default:
			if c.Epsilon != 1 || c.Delta != 0 {
				t.Errorf("%s: claim %+v", m, c)
			}
		}
	}
}
