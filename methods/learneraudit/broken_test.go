package learneraudit

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/perturb"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/learners"
)

// brokenOutPert is output perturbation (Chaudhuri, Monteleoni & Sarwate
// 2011, Algorithm 1, through core/perturb) broken on purpose: it returns
// ε-DP for the level ε but draws its noise at the rate
// p(b) ∝ exp(−rateMul·(nλε/2)·‖b‖₂). rateMul = 2 is the sensitivity
// 1/(nλ) in place of 2/(nλ) (the factor 2 of Lemma 1 dropped); rateMul = 4
// is the noise for 4ε. Its true ε on a pair whose minimizers lie Δ′ apart
// is rateMul·ε·Δ′/(2/(nλ)).
type brokenOutPert struct {
	name    string
	rateMul float64
	loss    erm.Loss
}

func (b brokenOutPert) Name() string { return b.name }

func (b brokenOutPert) Fit(ctx context.Context, rng *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	rows := train.ERM()
	plan, err := perturb.PlanOutPert(perturb.OutPertOptions{Epsilon: level.Epsilon, Lambda: lambda, Loss: b.loss}, rows.N())
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	plan.NoiseGamma *= b.rateMul // the broken line
	noise := make([]float64, rows.D())
	if err := plan.DrawNoise(noise, rng); err != nil {
		return nil, privacy.Guarantee{}, err
	}
	res, err := plan.Fit(rows, noise, erm.FitOptions{Context: ctx})
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	return weights(res.W), privacy.EpsDP(level.Epsilon, fmt.Sprintf("%s (broken on purpose)", b.name)), nil
}

type weights []float64

func (w weights) Margins(dst []float64, d *learners.Data) []float64 {
	if len(dst) != d.N() {
		dst = nil
	}
	return d.ERM().Margins(dst, w)
}

// claimScaled is a learner whose claim is mul times its inner learner's:
// with brokenOutPert's noise for 4ε and mul = 4 it spends and claims 4ε
// at the level ε — an honest claim above its level.
type claimScaled struct {
	learners.Learner
	mul float64
}

func (c claimScaled) Fit(ctx context.Context, rng *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	m, g, err := c.Learner.Fit(ctx, rng, train, lambda, level)
	g.Epsilon *= c.mul
	return m, g, err
}
