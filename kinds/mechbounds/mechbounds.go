// Package mechbounds is the "mechanism-bounds" experiment kind: the
// randomized-response, Laplace, exponential and Gaussian mechanisms of
// Nguyen's 2019 differential-privacy review (Sections 3.1–3.4) run many
// times at each ε, with the empirical probability of an error beyond the
// review's threshold set against the bound it states:
//
//	randomized response  #flipped bits of k ≥ j          Corollary 3.4 (summed over i ≥ j)
//	Laplace              ‖noise‖∞ ≥ (κ/ε)·ln(k/δ)        Corollary 3.8, bound δ
//	exponential          s* − s(M) ≥ (2κ/ε)(ln|Y| + t)   Corollary 3.13, bound e^(−t)
//	Gaussian             ‖noise‖∞ ≥ σ·√(2 ln(2k/δ))      standard tail (the review's is "todo"), bound δ
//
// with κ = 1. Each tail level (δ, or e^(−t)) is a line; rows also carry
// the exact tail of our mechanism where it has a closed form, so a reader
// sees each bound hold and how loose it is. A cell whose empirical tail
// exceeds the bound by more than its sampling error (ZCrit binomial
// standard errors) is marked "bound-violated"; the package's tests fail on
// one.
package mechbounds

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/statcrit"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// Columns is the rows.csv schema of the kind.
var Columns = []string{
	"experiment", "dataset", "data_source", "method", "mechanism", "epsilon", "level", "rep", "unit",
	"threshold", "tail", "bound", "exact", "draws", "k", "sigma", "status",
}

// Metrics are the summarized metrics, against x = ε.
var Metrics = []string{"tail", "bound", "exact"}

// Experiment is a loaded mechanism-bounds spec.
type Experiment struct {
	spec  *Spec
	units []string
	byKey map[string]unit
}

type unit struct {
	key  string // the unit key (runner.Unit)
	mech string
	eps  float64
	rep  int // 1-based
}

// Key implements runner.Unit.
func (u unit) Key() string { return u.key }

func (u unit) withKey(k string) unit { u.key = k; return u }

// New lays out the units of spec.
func New(es *experiments.Spec) (*Experiment, error) {
	spec, err := mechSpec(es)
	if err != nil {
		return nil, err
	}
	e := &Experiment{spec: spec, byKey: map[string]unit{}}
	m := spec.Mechanisms
	for _, name := range m.Mechanisms {
		for _, eps := range m.Epsilons {
			for rep := 1; rep <= m.Replicates; rep++ {
				key := fmt.Sprintf("%s/eps=%s/rep=%d", name, results.FormatFloat(eps), rep)
				e.units = append(e.units, key)
				e.byKey[key] = unit{mech: name, eps: eps, rep: rep}
			}
		}
	}
	return e, nil
}

// Spec implements runner.Experiment.
func (e *Experiment) Spec() *experiments.Spec { return e.spec.Spec }

// Units implements runner.Experiment.
func (e *Experiment) Units() []runner.Unit { return runner.UnitsOf(e.units, e.byKey, unit.withKey) }

// Columns implements runner.Experiment.
func (e *Experiment) Columns() []string { return Columns }

// cell is one tail level of one (mechanism, ε): the event threshold, the
// stated bound and the exact tail (NaN where unknown).
type cell struct {
	level, threshold, bound, exact float64
}

// mechanism is one mechanism under test: its error statistic for one draw
// (number of flipped bits, ‖noise‖∞ or utility gap) and the review's
// thresholds. Draw must take all its randomness from rng.
type mechanism struct {
	Name  string
	Draw  func(rng *rand.Rand, eps float64) (float64, error)
	Cells func(eps float64, levels []float64) []cell
	// Sigma is the Gaussian σ at ε (NaN for the others), for the rows.
	Sigma func(eps float64) float64
	// Guarantee is the privacy guarantee of one output at ε, for the
	// ledger.
	Guarantee func(eps float64) privacy.Guarantee
	// Unproven, if set, returns a note when the guarantee is not proven at
	// ε (the mechanism runs for its accuracy alone), else "".
	Unproven func(eps float64) string
}

// mechanisms returns the mechanisms of the kind for the spec's parameters
// (k, |Y|, the Gaussian δ), each drawing through package mech.
func mechanisms(p MechanismsSpec) map[string]mechanism {
	k := p.Dim
	nan := func(float64) float64 { return math.NaN() }
	scores := make([]float64, p.Candidates)
	for i := range scores {
		scores[i] = -float64(i) // counts: sensitivity 1, one optimum (|Y_X| = 1)
	}
	sigma := func(eps float64) float64 { return mech.GaussianSigmaProp315(eps, p.GaussianDelta, 1) }
	linf := func(noise func() float64) float64 {
		var m float64
		for range k {
			m = math.Max(m, math.Abs(noise()))
		}
		return m
	}
	pure := func(what string) func(float64) privacy.Guarantee {
		return func(eps float64) privacy.Guarantee { return privacy.EpsDP(eps, what) }
	}
	return map[string]mechanism{
		"randomized-response": {
			Name: "randomized-response", Sigma: nan, Guarantee: pure("one randomized-response output of k bits (Nguyen 2019, Section 3.1)"),
			Draw: func(rng *rand.Rand, eps float64) (float64, error) {
				flips := 0
				for range k {
					got, err := mech.RandomizedResponse(rng, false, eps)
					if err != nil {
						return 0, err
					}
					if got {
						flips++
					}
				}
				return float64(flips), nil
			},
			Cells: func(eps float64, levels []float64) []cell {
				var out []cell
				for _, l := range levels {
					j, b := mech.RRFlipTail(k, eps, l)
					// p = q: the summed bound is the exact binomial tail.
					out = append(out, cell{level: l, threshold: float64(j), bound: b, exact: b})
				}
				return out
			},
		},
		"laplace": {
			Name: "laplace", Sigma: nan, Guarantee: pure("one Laplace output, κ/ε noise per coordinate (Nguyen 2019, Section 3.2)"),
			Draw: func(rng *rand.Rand, eps float64) (float64, error) {
				b := 1 / eps
				v := linf(func() float64 { return mech.LaplaceNoise(rng, b) })
				mech.Record(rng, mech.Release{Mechanism: "laplace-raw", Scale: b, Sensitivity: 1, Dim: k,
					Guarantee: privacy.EpsDP(eps, "one Laplace output of k coordinates, κ/ε noise each, κ = 1 (Nguyen 2019, Section 3.2)")})
				return v, nil
			},
			Cells: func(eps float64, levels []float64) []cell {
				var out []cell
				for _, l := range levels {
					thr, exact := mech.LaplaceLinfThreshold(k, eps, 1, l)
					out = append(out, cell{level: l, threshold: thr, bound: l, exact: exact})
				}
				return out
			},
		},
		"exponential": {
			Name: "exponential", Sigma: nan, Guarantee: pure("one exponential-mechanism choice (Nguyen 2019, Section 3.3)"),
			Draw: func(rng *rand.Rand, eps float64) (float64, error) {
				i, err := mech.Exponential(rng, scores, eps, 1)
				return scores[0] - scores[i], err
			},
			Cells: func(eps float64, levels []float64) []cell {
				var out []cell
				for _, l := range levels {
					thr := mech.ExponentialGapThreshold(len(scores), eps, 1, -math.Log(l))
					out = append(out, cell{level: l, threshold: thr, bound: l, exact: exponentialTail(scores, eps, thr)})
				}
				return out
			},
		},
		"gaussian": {
			Name: "gaussian", Sigma: sigma,
			Guarantee: func(eps float64) privacy.Guarantee {
				return privacy.EpsDeltaDP(eps, p.GaussianDelta, "one Gaussian output, σ of Proposition 3.15 (Nguyen 2019, Section 3.4)")
			},
			Unproven: func(eps float64) string {
				if eps < 1 {
					return ""
				}
				return "σ of Proposition 3.15 at ε ≥ 1, where its (ε, δ) guarantee is not proven (Dwork & Roth Theorem A.1 needs ε < 1); only its accuracy is measured"
			},
			Draw: func(rng *rand.Rand, eps float64) (float64, error) {
				s := sigma(eps)
				v := linf(func() float64 { return mech.GaussianNoise(rng, s) })
				mech.Record(rng, mech.Release{Mechanism: "gaussian-raw", Scale: s, Sensitivity: 1, Dim: k,
					Guarantee: privacy.EpsDeltaDP(eps, p.GaussianDelta, "one Gaussian output of k coordinates, σ of Proposition 3.15 with Δ₂ = 1 (Nguyen 2019, Section 3.4)")})
				return v, nil
			},
			Cells: func(eps float64, levels []float64) []cell {
				var out []cell
				for _, l := range levels {
					thr, exact := mech.GaussianLinfThreshold(k, sigma(eps), l)
					out = append(out, cell{level: l, threshold: thr, bound: l, exact: exact})
				}
				return out
			},
		},
	}
}

// exponentialTail returns the exact P(s* − s(M) ≥ thr) of the exponential
// mechanism at ε with sensitivity 1 (mech.ExponentialProbs).
func exponentialTail(scores []float64, eps, thr float64) float64 {
	p, err := mech.ExponentialProbs(nil, scores, eps, 1)
	if err != nil {
		return math.NaN()
	}
	var s float64
	for i, v := range p {
		if scores[0]-scores[i] >= thr {
			s += v
		}
	}
	return s
}

// holds reports whether an empirical tail of count exceedances in draws is
// consistent with the bound: count/draws ≤ bound + z·√(bound(1−bound)/draws)
// with z = statcrit.ZCrit(checks) (the normal approximation of the binomial;
// a bound of 0 allows no exceedance).
func holds(count, draws int, bound float64, checks int) bool {
	se := math.Sqrt(bound * (1 - bound) / float64(draws))
	return float64(count)/float64(draws) <= bound+statcrit.ZCrit(checks)*se
}

// run draws n outputs of m at eps and returns the exceedance count of each
// cell. It returns ctx's error once ctx is done, checked about every 2¹⁶
// noise draws or candidate weights (an output costs cost of them); the
// check draws nothing.
func run(ctx context.Context, rng *rand.Rand, m mechanism, eps float64, cells []cell, n, cost int) ([]int, error) {
	counts := make([]int, len(cells))
	stride := max(1, (1<<16)/max(1, cost))
	for i := range n {
		if i%stride == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v, err := m.Draw(rng, eps)
		if err != nil {
			return nil, err
		}
		for c, cl := range cells {
			if v >= cl.threshold {
				counts[c]++
			}
		}
	}
	return counts, nil
}

// RunUnit implements runner.Experiment.
func (e *Experiment) RunUnit(ctx context.Context, ru runner.Unit, env runner.Env) ([]results.Row, error) {
	u, err := runner.Begin[unit](ctx, ru)
	if err != nil {
		return nil, err
	}
	key := u.key
	p := e.spec.Mechanisms
	m := mechanisms(p)[u.mech]
	cells := m.Cells(u.eps, p.Levels)
	cost := p.Dim
	if u.mech == "exponential" {
		cost = p.Candidates
	}
	rng := env.RNG()
	// Each draw is a simulated release on fixed input (no data set).
	mech.Scope(rng, fmt.Sprintf("simulated outputs of %s at ε=%v", u.mech, u.eps), mech.Records{Dataset: "fixed input", Part: "all", N: 1})
	counts, err := run(ctx, rng, m, u.eps, cells, p.Draws, cost)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	checks := len(p.Mechanisms) * len(p.Epsilons) * len(p.Levels) * p.Replicates
	var out []results.Row
	for c, cl := range cells {
		r := results.Row{}
		r.Set("experiment", e.spec.ID)
		r.Set("dataset", u.mech)
		r.Set("data_source", "simulated")
		r.Set("method", levelLabel(cl.level))
		r.Set("mechanism", u.mech)
		r.SetFloat("epsilon", u.eps)
		r.SetFloat("level", cl.level)
		r.SetInt("rep", u.rep)
		r.Set("unit", key)
		r.SetFloat("threshold", cl.threshold)
		r.SetFloat("tail", float64(counts[c])/float64(p.Draws))
		r.SetFloat("bound", cl.bound)
		r.SetFloat("exact", cl.exact)
		r.SetInt("draws", p.Draws)
		r.SetInt("k", p.Dim)
		r.SetFloat("sigma", m.Sigma(u.eps))
		status := "ok"
		if !holds(counts[c], p.Draws, cl.bound, checks) {
			status = "bound-violated"
		}
		r.Set("status", status)
		out = append(out, r)
	}
	return out, nil
}

func levelLabel(level float64) string { return "level " + strconv.FormatFloat(level, 'g', -1, 64) }

// Summary implements runner.Experiment: tail, bound and exact against
// x = ε, one "method" per tail level.
func (e *Experiment) Summary(rows []results.Row) []results.SummaryRow {
	return results.Summarize(rows, results.SummaryOptions{
		Experiment: e.spec.ID, XName: "epsilon", XCol: "epsilon", Metrics: Metrics,
		Bootstrap: e.spec.Output.Bootstrap, Level: e.spec.Output.CILevel, Seed: e.spec.Seed,
	})
}

// Figures implements runner.Experiment: one panel per mechanism, the
// empirical tail (bootstrap CI over replicates) and the stated bound per
// level, log scales.
func (e *Experiment) Figures() []plots.FigureSpec {
	var methods []string
	for _, l := range e.spec.Mechanisms.Levels {
		methods = append(methods, levelLabel(l))
	}
	return []plots.FigureSpec{{
		Name: "tails", Title: "Nguyen 2019, Sections 3.1–3.4: empirical error tail vs the stated bound (randomized response: flipped bits; Laplace, Gaussian: ‖noise‖∞; exponential: utility gap)",
		Caption: plots.Caption{Replicates: fmt.Sprintf("%d replicates of %d draws per point", e.spec.Mechanisms.Replicates, e.spec.Mechanisms.Draws),
			Bars: fmt.Sprintf("%g%% bootstrap CI of the mean tail over the replicates (the bound has none)", 100*e.spec.Output.CILevel)},
		Metrics: []string{"tail", "bound"}, MetricLabels: map[string]string{"tail": "empirical tail", "bound": "stated bound"},
		Methods: methods, Styles: levelStyles(methods), XLabel: "ε", YLabel: "P(error ≥ threshold)",
		LogX: true, LogY: true, Columns: 2, Width: 4.5, Height: 3.4,
		// The panels are the mechanisms: each panel's title says its
		// notion (from the ledger, filled by the runner).
		NotionsByPanel: true,
	}}
}

// levelStyles gives each tail level its palette style, in the spec's
// order of levels.
func levelStyles(levels []string) map[string]plots.Style {
	out := make(map[string]plots.Style, len(levels))
	for i, l := range levels {
		out[l] = plots.PaletteStyle(i)
	}
	return out
}

// Datasets implements runner.Experiment: no data.
func (e *Experiment) Datasets() []results.DatasetInfo { return nil }

// Warnings implements runner.Experiment: each mechanism whose guarantee
// is not proven at the spec's largest ε (its Unproven note).
func (e *Experiment) Warnings() []string {
	var w []string
	ms := mechanisms(e.spec.Mechanisms)
	epsMax := slices.Max(e.spec.Mechanisms.Epsilons)
	for _, name := range e.spec.Mechanisms.Mechanisms {
		if m := ms[name]; m.Unproven != nil {
			if note := m.Unproven(epsMax); note != "" {
				w = append(w, name+": "+note)
			}
		}
	}
	return w
}

// Ledger implements runner.Experiment: one release per draw at each ε,
// each charged the mechanism's Guarantee.
func (e *Experiment) Ledger([]results.Row) []results.LedgerEntry {
	var out []results.LedgerEntry
	ms := mechanisms(e.spec.Mechanisms)
	for _, name := range e.spec.Mechanisms.Mechanisms {
		for _, eps := range e.spec.Mechanisms.Epsilons {
			g := ms[name].Guarantee(eps)
			le := results.LedgerEntry{Method: name, Setting: "epsilon=" + results.FormatFloat(eps),
				Components: []results.LedgerCharge{results.NewCharge("release", "one output of the mechanism (each draw is a separate simulated release on fixed data)", "simulated", g)},
				Total:      results.NewTotal(g),
				Rule:       "per draw; the experiment measures accuracy, not a composed release"}
			out = append(out, le)
		}
	}
	return out
}

// releaseNames maps the spec's mechanism names to the names their release
// sites record (mech.Release.Mechanism).
var releaseNames = map[string]string{
	"randomized-response": "randomized-response",
	"laplace":             "laplace-raw",
	"exponential":         "exponential-mechanism",
	"gaussian":            "gaussian-raw",
}

// Mechanisms implements runner.Releaser: the releases of the spec's
// mechanisms (Nguyen 2019, Sections 3.1–3.4), each draw one simulated
// release.
func (e *Experiment) Mechanisms() []string {
	var out []string
	for _, m := range e.spec.Mechanisms.Mechanisms {
		if r, ok := releaseNames[m]; ok && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}
