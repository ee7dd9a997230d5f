package cicoverage

import (
	"math"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/runner"
)

// The kind orders its units by cost (issue 27).
var _ runner.UnitCoster = (*Experiment)(nil)

// fitPasses is the number of passes over the n × D data matrix that one
// ERM fit is taken to cost in [Experiment.UnitCost]: the L-BFGS
// iterations of a strongly convex fit warm-started at θ₀, each a loss
// and gradient pass. A round figure, not measured per fit: the estimate
// only orders units (issue 27), and docs/runs.md reports how well it
// ranks the measured times.
const fitPasses = 30

// lossOps is what one row's loss and derivative cost in one pass of
// [Experiment.UnitCost], in multiply-adds beside the 2·D of the margin
// and the gradient: the logistic loss an exp per row (and a log per 32
// rows, erm.Rows.LogisticSum), taken as 20; the Huberized hinge a
// comparison and a square, taken as 2. Round figures, like fitPasses.
func lossOps(model dpci.Model) float64 {
	if model == dpci.LR {
		return 20
	}
	return 2
}

// UnitCost implements runner.UnitCoster: the unit's work in
// multiply-adds, estimated from what it does (Wang, Kifer & Lee 2019,
// Section 7 protocol; n records, D = d+1 coefficients, m Monte Carlo
// samples, ℓ = lossOps of the unit's model):
//
//	resample   n·D                       one bootstrap replicate drawn
//	fit        fitPasses·n·(2D + ℓ)      one ERM fit (Algorithm 1's, or Eq. 7's θ̂)
//	matrices   2·n·(D² + ℓ)              Ĥ and Σ̂ of Algorithm 2
//	intervals  m·(D² + D·log₂ m)         Algorithm 3/5's Monte Carlo draws and quantiles
//
//	coverage unit  (hi−lo) · (resample + fits·fit + methods·(matrices + intervals))
//	VI unit        vi_fits · (resample + fits·fit)
//
// where fits is the number of distinct fits a replicate makes for the
// unit's methods: one per perturbation of the paper's methods (the DP
// and zCDP variants share it, cimethods.Share), one per external method.
// The order it gives is checked against measured thread CPU times (the
// manifest's unit_times.scaling.estimates; docs/runs.md, "Scheduling");
// it changes no result.
func (e *Experiment) UnitCost(ru runner.Unit) float64 {
	u, ok := ru.(unit)
	if !ok {
		return 0
	}
	ci := e.spec.ConfidenceIntervals
	pt := e.points[u.pt]
	n, D, l := float64(pt.n), float64(pt.d+1), lossOps(u.model)
	perts := map[string]bool{}
	fits := 0
	for _, i := range u.ms {
		m := e.methods[i]
		if _, ext := m.(*cimethods.External); ext {
			fits++
			continue
		}
		if p := m.Attributes().Perturbation; !perts[p] {
			perts[p] = true
			fits++
		}
	}
	replicate := n*D + float64(fits)*fitPasses*n*(2*D+l)
	if u.vi {
		return float64(ci.VIFits) * replicate
	}
	m := float64(ci.MCSamples)
	interval := 2*n*(D*D+l) + m*(D*D+D*math.Log2(m+1))
	return float64(u.hi-u.lo) * (replicate + float64(len(u.ms))*interval)
}
