// Package rrcount is the "rr-proportion" experiment kind, and the template
// for a new kind: copy examples/kind-example, rename the package and the
// kind, and replace the experiment. It estimates a population proportion
// from records released by randomized response ([Warner 1965]), at each ε
// of a grid, and sets the error against its closed form.
//
// # The experiment
//
// A synthetic population of n binary records, k = round(p·n) of them 1
// (rr.p rounded to a multiple of 1/n: the true proportion is p = k/n), is
// released record by record through ε-DP randomized response (mech.RandomizedResponse: each record reports its
// true bit with probability e^ε/(1+e^ε), the flipped bit otherwise). From
// the fraction λ̂ of 1s reported, Warner's estimator
//
//	q  = 1/(1 + e^epsilon)              the flip probability
//	p̂  = (λ̂ − q)/(1 − 2q)               mech.RRDebias; 1 − 2q = tanh(ε/2)
//	σ  = √(q(1−q)/n)/(1 − 2q)           its standard deviation
//	   = 1/(2·√n·sinh(ε/2))
//
// is unbiased (E[λ̂] = q + p(1 − 2q)), so σ is also its RMSE; for a
// normal error E|p̂ − p| = σ·√(2/π). Each ε runs rr.replicates independent
// releases (units); the figure draws the mean |p̂ − p| against ε beside
// σ·√(2/π).
//
// Deviation: Warner samples n respondents with replacement from a larger
// population, which adds p(1−p)/n to the variance. Here the n records are
// the whole data set and only the mechanism is random (the setting of
// differential privacy), so the error is the privacy's alone.
//
// Privacy: each record is released once, under ε-DP with respect to
// changing its bit (Nguyen 2019, Proposition 3.2; [Dwork & Roth 2014],
// Section 3.2). The releases touch disjoint records, so the n reports
// together are ε-DP for the population (parallel composition; adjacency:
// one record's bit changes). Estimating p from them is post-processing.
// The replicates are simulated re-runs of one release, not composed.
//
// # What a kind needs
//
// The minimum, all in this package (section.go, rrcount.go):
//
//   - a section type implementing experiments.Section ([Section]): the
//     spec's tables with explicit toml tags, Validate (every problem with
//     its key, through experiments.Problems), Limits and Workload;
//   - a runner.KindDef ([Kind]): the kind's name, its section's defaults
//     and a constructor, registered with runner.RegisterKind before
//     cli.Main (main.go);
//   - a runner.Experiment ([Experiment]): Spec, Units (keys that depend on
//     the spec alone: they name the unit in the checkpoint and seed its
//     streams), RunUnit (runner.Begin first; every random draw from the
//     env's streams, env.RNG, never a global source; safe to call
//     concurrently for distinct units), Columns, Summary
//     (results.Summarize), Figures (plots.FigureSpec), Datasets (nil
//     when no data is read), Ledger (one results.LedgerEntry per released
//     setting, its guarantee a core/privacy value, its Method the rows'
//     method: the figure's legend takes the privacy notion from it) and
//     Warnings.
//
// Rows are results.Row maps whose columns Columns lists (rows.csv refuses
// any other); results.Summarize groups them by their dataset,
// data_source and method columns, which every kind therefore sets.
//
// Optional hooks, each an interface the runner looks for:
//
//   - runner.Pairer, through KindDef.Pairs: the rows.csv columns that pair
//     rows across methods, so that claims comparing two methods use paired
//     differences;
//   - runner.Releaser: the mechanisms the releases use, for the
//     manifest's list of releases without a floating-point-safe
//     construction in a run with secure noise ([Experiment.Mechanisms]
//     implements it);
//   - runner.AcrossRuns and runner.AcrossKind: figures drawn across the
//     runs of several specs (a kind embeds KindDef in its own type to add
//     AcrossKind);
//   - runner.Auditor: a kind whose runs are empirical privacy audits, run
//     by `dprepro audit`;
//   - runner.RowWarner, runner.FigureMarker, runner.Tabler, runner.Opener
//     and runner.Versioner (warnings and figure marks only the rows show,
//     tables laid out like a paper's, resources held while units run,
//     external methods' versions), and experiments.Producer on the
//     section (the summary's names, so that claims naming anything else
//     are refused at load).
//
// [Warner 1965]: https://doi.org/10.1080/01621459.1965.10480775
// [Dwork & Roth 2014]: https://doi.org/10.1561/0400000042
package rrcount

import (
	"context"
	"fmt"
	"math"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// Dataset is the name of the synthetic population in the rows' dataset
// column, and Method the rows' method.
const (
	Dataset = "synthetic-population"
	Method  = "randomized-response"
)

// Columns is the rows.csv schema, in order: the harness's identifying
// columns (experiment, dataset, data_source, method, the x column epsilon,
// rep and unit), then the kind's own. proportion is the population's true
// p = k/n; estimate is p̂; abs_error is |p̂ − p|; sd_theory is σ and
// mae_theory σ·√(2/π) (package doc); status is "ok", or "outside [0, 1]"
// for an estimate outside the unit interval (not clamped: clamping would
// bias it).
var Columns = []string{
	"experiment", "dataset", "data_source", "method", "epsilon", "rep", "unit",
	"n", "proportion", "estimate", "abs_error", "sd_theory", "mae_theory", "status",
}

// Metrics are the summarized columns, against x = ε.
var Metrics = []string{"estimate", "abs_error", "sd_theory", "mae_theory"}

// SD returns σ, the standard deviation (and RMSE) of Warner's estimator
// from n records released by randomized response at epsilon:
//
//	σ = √(q(1−q)/n)/(1 − 2q) = 1/(2·√n·sinh(epsilon/2)),  q = 1/(1 + e^epsilon)
//
// whatever the population's proportion (each record's report is a coin of
// variance q(1−q)). sinh keeps full precision at small ε; at ε beyond
// ~1420 it overflows and σ is 0, as it is to float64 precision.
func SD(n int, epsilon float64) float64 {
	return 1 / (2 * math.Sqrt(float64(n)) * math.Sinh(epsilon/2))
}

// Experiment is a loaded rr-proportion spec: the runner.Experiment of the
// kind. It is safe for concurrent use (RunUnit reads it only).
type Experiment struct {
	spec  *experiments.Spec
	rr    Params
	units []runner.Unit
}

// unit is one release of the population at one ε: the kind's own unit
// type, handed back to RunUnit as Units returned it.
type unit struct {
	key string  // "eps=<ε>/rep=<r>"
	eps float64 // ε
	rep int     // 1-based replicate
}

// Key implements runner.Unit.
func (u unit) Key() string { return u.key }

// New lays out the units of spec, whose section is sec: one per (ε,
// replicate), keyed "eps=<ε>/rep=<r>".
func New(spec *experiments.Spec, sec *Section) (*Experiment, error) {
	e := &Experiment{spec: spec, rr: sec.RR}
	for _, eps := range sec.RR.Epsilons {
		for rep := 1; rep <= sec.RR.Replicates; rep++ {
			key := fmt.Sprintf("eps=%s/rep=%d", results.FormatFloat(eps), rep)
			e.units = append(e.units, unit{key: key, eps: eps, rep: rep})
		}
	}
	return e, nil
}

// Spec implements runner.Experiment.
func (e *Experiment) Spec() *experiments.Spec { return e.spec }

// Units implements runner.Experiment: ε-major, then replicates.
func (e *Experiment) Units() []runner.Unit { return e.units }

// Columns implements runner.Experiment.
func (e *Experiment) Columns() []string { return Columns }

// RunUnit implements runner.Experiment: one release of the population at
// the unit's ε, and its row. Every draw comes from the unit's stream
// env.RNG("noise"), so the row replays bit for bit (and a run with
// --secure-noise draws from crypto/rand through the same generator).
func (e *Experiment) RunUnit(ctx context.Context, ru runner.Unit, env runner.Env) ([]results.Row, error) {
	u, err := runner.Begin[unit](ctx, ru)
	if err != nil {
		return nil, err
	}
	n, k := e.rr.N, e.rr.Ones()
	rng := env.RNG("noise")
	// In a traced run (--trace-privacy) each record's report is one
	// release of the trace; Scope labels them all: what they are and the
	// records each touches (one, never the same twice: N = 1).
	mech.Scope(rng, fmt.Sprintf("randomized response of each record's bit at ε=%v", u.eps),
		mech.Records{Dataset: Dataset, Part: "one record per release, each record once", N: 1})
	reported := 0 // reports of 1
	for i := range n {
		if i%(1<<16) == 0 { // a long unit stops soon after an interrupt
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		// Records 0..k−1 hold a 1: the order does not matter, as every
		// record is released independently.
		bit, err := mech.RandomizedResponse(rng, i < k, u.eps)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u.key, err)
		}
		if bit {
			reported++
		}
	}
	truth := float64(k) / float64(n)
	est := mech.RRDebias(float64(reported)/float64(n), u.eps)
	sd := SD(n, u.eps)
	status := "ok"
	if est < 0 || est > 1 {
		status = "outside [0, 1]"
	}
	r := results.Row{}
	r.Set("experiment", e.spec.ID)
	r.Set("dataset", Dataset)
	r.Set("data_source", "synthetic")
	r.Set("method", Method)
	r.SetFloat("epsilon", u.eps)
	r.SetInt("rep", u.rep)
	r.Set("unit", u.key)
	r.SetInt("n", n)
	r.SetFloat("proportion", truth)
	r.SetFloat("estimate", est)
	r.SetFloat("abs_error", math.Abs(est-truth))
	r.SetFloat("sd_theory", sd)
	r.SetFloat("mae_theory", sd*math.Sqrt(2/math.Pi))
	r.Set("status", status)
	return []results.Row{r}, nil
}

// Summary implements runner.Experiment: the mean of each of [Metrics] over
// the replicates at each ε, with its bootstrap CI (output.bootstrap,
// output.ci_level).
func (e *Experiment) Summary(rows []results.Row) []results.SummaryRow {
	return results.Summarize(rows, results.SummaryOptions{
		Experiment: e.spec.ID, XName: "epsilon", XCol: "epsilon", Metrics: Metrics,
		Bootstrap: e.spec.Output.Bootstrap, Level: e.spec.Output.CILevel, Seed: e.spec.Seed,
	})
}

// Figures implements runner.Experiment: the mean absolute error against ε
// (log scales), beside its closed form σ·√(2/π). The runner fills the
// caption's profile and CI level, and labels the method with its privacy
// notion from the ledger.
func (e *Experiment) Figures() []plots.FigureSpec {
	return []plots.FigureSpec{{
		Name:  "abs-error",
		Title: fmt.Sprintf("Randomized response (Warner 1965): error of the estimated proportion, n = %d records, p = %s", e.rr.N, results.FormatFloat(float64(e.rr.Ones())/float64(e.rr.N))),
		Caption: plots.Caption{
			Replicates: fmt.Sprintf("%d releases per point", e.rr.Replicates),
			Note:       "theory: σ·√(2/π) is the mean |error| of a normal error of sd σ = 1/(2·√n·sinh(ε/2)), the estimator's RMSE",
		},
		Metrics:      []string{"abs_error", "mae_theory"},
		MetricLabels: map[string]string{"abs_error": "simulated mean |estimate − p|", "mae_theory": "theory σ·√(2/π)"},
		Methods:      []string{Method},
		XLabel:       "ε",
		YLabel:       "|estimate − p|",
		LogX:         true,
		LogY:         true,
	}}
}

// Datasets implements runner.Experiment: none, as no data is read (the
// population is made from the spec: see Warnings).
func (e *Experiment) Datasets() []results.DatasetInfo { return nil }

// Warnings implements runner.Experiment: the population is synthetic.
func (e *Experiment) Warnings() []string {
	return []string{fmt.Sprintf("the population is synthetic: %d records, %d of them 1 (rr.n, rr.p), made from the spec; no real data is read", e.rr.N, e.rr.Ones())}
}

// Guarantee returns the privacy guarantee of one release of the
// population at epsilon: ε-DP (package doc, "Privacy").
func Guarantee(epsilon float64) privacy.Guarantee {
	return privacy.EpsDP(epsilon, "the n reports of one release: each record's bit reported once by randomized response")
}

// Ledger implements runner.Experiment: one entry per ε, charged
// [Guarantee] (the rows are not needed: the charge depends on the spec
// alone).
func (e *Experiment) Ledger([]results.Row) []results.LedgerEntry {
	var out []results.LedgerEntry
	for _, eps := range e.rr.Epsilons {
		g := Guarantee(eps)
		out = append(out, results.LedgerEntry{
			Method:  Method,
			Setting: "epsilon=" + results.FormatFloat(eps),
			Components: []results.LedgerCharge{results.NewCharge("release",
				fmt.Sprintf("randomized response of each record's bit (keep probability e^ε/(1+e^ε) = %.6g)", mech.RRKeepProb(eps)),
				fmt.Sprintf("all %d records, each released once", e.rr.N), g)},
			Total: results.NewTotal(g),
			Rule: "parallel composition over records: each record is released once under ε-DP and the releases touch disjoint records, " +
				"so the release is ε-DP (one record's bit changes); each replicate is a simulated re-run of the release, not composed",
		})
	}
	return out
}

// Mechanisms implements runner.Releaser (optional): the releases are
// mech.RandomizedResponse's, which has no floating-point-safe
// construction (its manifest under --secure-noise says so).
func (e *Experiment) Mechanisms() []string { return []string{"randomized-response"} }
