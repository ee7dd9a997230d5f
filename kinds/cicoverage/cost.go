package cicoverage

import (
	"math"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/runner"
)

// The kind orders its units by cost (issue 27).
var _ runner.UnitCoster = (*Experiment)(nil)

// fitPasses is the number of passes over the r × D rows that one ERM
// fit is taken to cost in [Experiment.UnitCost]: the fits start at θ₀
// (erm.FitOptions.Init), the optimum of the whole sample, and a
// bootstrap replicate's optimum is close to it, so a few L-BFGS
// iterations, each a loss and gradient pass. A round figure, set after
// comparing the estimates with the measured times of one paper-profile
// run of wkl-table3-adult (30 overstated the variability-interval units
// twentyfold against the coverage units); docs/runs.md reports how well
// the estimate ranks the measured times.
const fitPasses = 3

// normOps is what one standard normal draw from a ChaCha8 stream costs
// in [Experiment.UnitCost], in multiply-adds (the Monte Carlo samples of
// Algorithms 3 and 5 draw D each). A round figure.
const normOps = 20

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

// rngOps is what one bootstrap draw of a record costs in
// [Experiment.UnitCost], in multiply-adds: a bounded random integer from
// the unit's ChaCha8 stream and a count (resampler.draw). A round figure.
const rngOps = 10

// binomialOps is what one step of the inversion of a binomial draw
// (multinomialCounts, about √(n·p) steps from the mode) costs in
// [Experiment.UnitCost], in multiply-adds. A round figure.
const binomialOps = 4

// UnitCost implements runner.UnitCoster: the unit's work in
// multiply-adds, estimated from what it does (Wang, Kifer & Lee 2019,
// Section 7 protocol; n records, of which r distinct rows — the fits run
// over those, see [sample] —, D = d+1 coefficients, m Monte Carlo
// samples, ℓ = lossOps of the unit's model):
//
//	resample   rngOps·n + r·D            one bootstrap replicate drawn and weighted
//	           (binomialOps·r·√(n/r) + r·D when its counts are drawn as a
//	           multinomial: n ≥ multinomialRatio·r, no method reading records)
//	fit        fitPasses·r·(2D + ℓ)      one ERM fit (Algorithm 1's, or Eq. 7's θ̂)
//	matrices   2·r·(D² + ℓ)              Ĥ and Σ̂ of Algorithm 2
//	intervals  m·(normOps·D + D² + D·log₂ m)  Algorithm 3/5's Monte Carlo draws and quantiles
//
//	coverage unit  (hi−lo) · (resample + fits·fit + methods·(E·matrices + P·intervals))
//	VI unit        vi_fits · (resample + fits·fit)
//
// where P is the number of points a coverage unit serves (the values of an
// ε sweep share each replicate, see runCI; one point otherwise), E the
// distinct ε₁ among them (the exact matrices are computed at each ε₁'s θ̃;
// in an ε₂ or ε₃ sweep once for all points), and fits the number of
// distinct fits a replicate makes for the unit's methods: one per
// perturbation of the paper's methods (the DP and zCDP variants share it,
// cimethods.Share) — E for objective perturbation (Algorithm 1 at each
// ε₁), one for output perturbation (its non-private θ̂ serves every ε₁) —
// and one per external method and point of a coverage unit (E per
// external method in a VI unit serving E values of ε₁, an ε₁ sweep).
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
	r := float64(pt.data.base.N())
	perts := map[string]bool{}
	E := max(1, len(u.eps1s)) // the ε₁ values a replicate is fitted at
	P := float64(max(1, len(u.group)))
	fits := 0.0
	for _, i := range u.ms {
		m := e.methods[i]
		if _, ext := m.(*cimethods.External); ext {
			if u.vi {
				fits += float64(E)
			} else {
				fits += P // it shares nothing across the points
			}
			continue
		}
		switch p := m.Attributes().Perturbation; {
		case perts[p]:
		case p == "output":
			perts[p] = true
			fits++
		default:
			perts[p] = true
			fits += float64(E)
		}
	}
	draws := rngOps * n
	if !e.usesRecords(u.ms) && multinomialRatio*r <= n {
		// The counts are drawn as their multinomial (resampler.draw): one
		// binomial per distinct row, O(√(n/r)) each by inversion.
		draws = binomialOps * r * math.Sqrt(n/r)
	}
	replicate := draws + r*D + fits*fitPasses*r*(2*D+l)
	if u.vi {
		return float64(ci.VIFits) * replicate
	}
	m := float64(ci.MCSamples)
	matrices := 2 * r * (D*D + l)
	interval := m * (normOps*D + D*D + D*math.Log2(m+1))
	return float64(u.hi-u.lo) * (replicate + float64(len(u.ms))*(float64(E)*matrices+P*interval))
}
