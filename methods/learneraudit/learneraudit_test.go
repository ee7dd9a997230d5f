package learneraudit

import (
	"context"
	"errors"
	"testing"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/methods/learners"
)

// auditShape is the setting of the calibration tests: n = 20 records in
// R², λ = 0.5 (nλ = 10), ε = 1, the Huber hinge with h = 0.5. On the
// adversarial pair (9 pairs at e₁ with labels ±1, the replaced record at
// e₁ with label ±1) the minimizer's first coordinate is ±1/(nλ) = ±0.1,
// inside the loss's linear part (margins below 1 − h = 0.5), so the two
// minimizers lie exactly the sensitivity 2/(nλ) apart (Chaudhuri,
// Monteleoni & Sarwate 2011, Lemma 1, attained): the honest learners'
// true ε on the pair is ε, output perturbation without its factor 2 has
// 2ε, the noise for 4ε gives 4ε.
func auditOptions(releases int) Options {
	return Options{Lambda: 0.5, Level: learners.Level{Epsilon: 1}, Releases: releases, Seed: 26, Workers: 2, Loss: "huber", N: 20, D: 2}
}

// TestRun_HonestConsistent: the built-in objective and output
// perturbation at their real sensitivities are consistent with their
// claim at 2,000 releases per side (a false alarm has probability ≤ 5 %
// by the Clopper–Pearson construction; the seed is fixed). The audit is
// not blind: on the pair where output perturbation's true ε is the claim,
// ε_LB > 0.
func TestRun_HonestConsistent(t *testing.T) {
	huber := erm.Huber{H: 0.5}
	for _, l := range []learners.Learner{learners.OutputPerturbation{Loss: huber}, learners.ObjectivePerturbation{Loss: huber}} {
		r, err := Run(context.Background(), l, auditOptions(2000))
		if err != nil {
			t.Fatal(err)
		}
		if r.Violated || r.Verdict() != "consistent with the claim" {
			t.Errorf("%s: ε_LB = %.3f above its claim ε = %g at its real sensitivity", l.Name(), r.EpsLower, r.Claim.Epsilon)
		}
		if r.Claim.Epsilon != 1 || r.Claim.Delta != 0 {
			t.Errorf("%s: claim %+v, want ε = 1, δ = 0", l.Name(), r.Claim)
		}
		if len(r.Pairs) != 2 || r.Pairs[0].Confidence != 0.975 {
			t.Errorf("%s: pairs %d, per-pair confidence %v: want 2 at 0.975 (Bonferroni for 0.95)", l.Name(), len(r.Pairs), r.Pairs[0].Confidence)
		}
		if l.Name() == "output-perturbation" && !(r.EpsLower > 0) {
			t.Errorf("output-perturbation: ε_LB = 0 on a pair where its true ε is 1: the audit is blind")
		}
		t.Logf("%s: ε_LB = %.3f (claim %g), %d fits, %v", l.Name(), r.EpsLower, r.Claim.Epsilon, r.Fits, r.Wall)
	}
}

// TestRun_BrokenCaught: the broken output perturbations (true ε 2ε and 4ε
// on the adversarial pair) are caught at 2,000 releases per side.
func TestRun_BrokenCaught(t *testing.T) {
	huber := erm.Huber{H: 0.5}
	for _, l := range []learners.Learner{brokenOutPert{"no-factor-2", 2, huber}, brokenOutPert{"noise-for-4eps", 4, huber}} {
		r, err := Run(context.Background(), l, auditOptions(2000))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Violated || r.Verdict() != "claim violated" {
			t.Errorf("%s: ε_LB = %.3f not above its claim ε = %g: the broken learner was not caught", l.Name(), r.EpsLower, r.Claim.Epsilon)
		}
		t.Logf("%s: ε_LB = %.3f (claim %g) on %s", l.Name(), r.EpsLower, r.Claim.Epsilon, r.Pairs[r.Worst].Pair)
	}
}

// TestRun_Deterministic: the same seed replays the same bound whatever the
// number of workers (per-release streams).
func TestRun_Deterministic(t *testing.T) {
	l := brokenOutPert{"noise-for-4eps", 4, erm.Huber{H: 0.5}}
	o := auditOptions(200)
	a, err := Run(context.Background(), l, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Workers = 1
	b, err := Run(context.Background(), l, o)
	if err != nil {
		t.Fatal(err)
	}
	for k := range a.Pairs {
		if a.Pairs[k].Result != b.Pairs[k].Result || a.Pairs[k].What != b.Pairs[k].What {
			t.Errorf("pair %s: 2 workers %+v, 1 worker %+v", a.Pairs[k].Pair, a.Pairs[k].Result, b.Pairs[k].Result)
		}
	}
}

func TestRun_Options(t *testing.T) {
	l := learners.OutputPerturbation{}
	for _, tc := range []struct {
		name string
		edit func(*Options)
	}{
		{"few releases", func(o *Options) { o.Releases = 100 }},
		{"lambda", func(o *Options) { o.Lambda = 0 }},
		{"epsilon", func(o *Options) { o.Level.Epsilon = -1 }},
		{"shape", func(o *Options) { o.N = 2 }},
		{"loss", func(o *Options) { o.Loss = "hinge" }},
	} {
		o := auditOptions(200)
		tc.edit(&o)
		if _, err := Run(context.Background(), l, o); !errors.Is(err, ErrOptions) {
			t.Errorf("%s: err = %v, want ErrOptions", tc.name, err)
		}
	}
	// A non-private learner's release cannot be audited against a claim.
	if _, err := Run(context.Background(), learners.NonPrivate{}, auditOptions(200)); err == nil {
		t.Errorf("non-private: no error")
	}
}

// TestRun_ClaimAboveLevel: the bound is tested against what the fits
// claim, not the level they were handed: a learner that draws the noise
// for 4ε at the level ε and claims 4ε is consistent (its claim is 4), the
// same learner claiming ε is caught (TestRun_BrokenCaught).
func TestRun_ClaimAboveLevel(t *testing.T) {
	l := claimScaled{brokenOutPert{"noise-for-4eps-claims-4eps", 4, erm.Huber{H: 0.5}}, 4}
	r, err := Run(context.Background(), l, auditOptions(2000))
	if err != nil {
		t.Fatal(err)
	}
	if r.Claim.Epsilon != 4 || r.Violated || !(r.EpsLower > 1) {
		t.Errorf("claim %+v, ε_LB = %.3f, violated %v: want the claim 4, consistent, and a bound above the level 1 (the audit sees the 4ε)", r.Claim, r.EpsLower, r.Violated)
	}
}
