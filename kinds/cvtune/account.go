package cvtune

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/dprepro/dprepro/comparison"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/params"
	"github.com/dprepro/dprepro/methods/selection"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/runner"
)

// columns are the privacy columns of rows.csv from an Account: eps_train
// and eps_tuning sum the ε of the training and tuning charges (0 when
// there are none), delta_train and delta_tuning their δ, delta and
// eps_total are the Total's, private whether the Total is a privacy
// guarantee.
type columns struct {
	train, tuning, delta, total float64
	trainDelta, tuningDelta     float64
	private                     bool
}

func accountColumns(a selection.Account) (columns, error) {
	var c columns
	for _, ch := range a.Charges {
		g := ch.Guarantee
		if err := g.Validate(); err != nil {
			return c, err
		}
		if g.Notion == privacy.ZCDP {
			return c, fmt.Errorf("cvtune: %s charge is ρ-zCDP; rows.csv records (ε, δ): convert it with Guarantee.ToApprox", ch.Part)
		}
		switch ch.Part {
		case selection.Training:
			c.train += g.Epsilon
			c.trainDelta += g.Delta
		case selection.Tuning:
			c.tuning += g.Epsilon
			c.tuningDelta += g.Delta
		default:
			return c, fmt.Errorf("cvtune: charge of unknown part %q", ch.Part)
		}
	}
	if err := a.Total.Validate(); err != nil {
		return c, err
	}
	if a.Total.Notion == privacy.ZCDP {
		return c, fmt.Errorf("cvtune: total is ρ-zCDP; rows.csv records (ε, δ): convert it with Guarantee.ToApprox")
	}
	c.delta, c.total, c.private = a.Total.Delta, a.Total.Epsilon, a.Total.Private()
	return c, nil
}

// recordSelection records, in a traced run, the selection of a selector
// that is not built in as a declared release (mech.RecordDeclared): one
// per tuning charge of its account, or one of ε = 0 when the account has
// none (a choice that reads no data, as the selector declares), scoped to
// the records it may read (the built-in selectors' release sites record
// themselves). A user's selector that draws through the harness's own
// mechanisms has those releases in the trace as well: its declared charge
// is what the ledger books.
func recordSelection(rng *rand.Rand, s selection.Selector, sel selection.Outcome, records mech.Records) {
	if selection.Builtin(s) {
		return
	}
	mech.Scope(rng, "selection: "+s.Name()+"'s choice of a candidate", records)
	tuning := 0
	for _, ch := range sel.Account.Charges {
		if ch.Part == selection.Tuning {
			mech.RecordDeclared(rng, s.Name(), ch.Guarantee, 1)
			tuning++
		}
	}
	if tuning == 0 {
		mech.RecordDeclared(rng, s.Name(), privacy.EpsDP(0, "declared by the method "+s.Name()+": its choice has no tuning charge"), 1)
	}
}

// armMechanisms returns the mechanisms the arms' selections and fits
// (fit: the mechanisms of one fit, by learner) release, sorted, without
// repeats. A selector that is not built in draws its own noise: it is
// mech.Declared(name), which a secure run's manifest lists among the
// releases it cannot vouch for (the run records its selections so).
func armMechanisms(arms []arm, fit func(arm) []string) []string {
	var ms []string
	for _, a := range arms {
		ms = append(ms, selection.Mechanisms(a.sel)...)
		ms = append(ms, fit(a)...)
	}
	slices.Sort(ms)
	return slices.Compact(ms)
}

// Mechanisms implements runner.Releaser: the mechanisms of the spec's
// methods (selections) and learners (fits).
func (e *Experiment) Mechanisms() []string {
	return armMechanisms(e.arms, func(a arm) []string {
		var ms []string
		for _, l := range a.fits {
			ms = append(ms, learners.Mechanisms(l)...)
		}
		return ms
	})
}

// Mechanisms implements runner.Releaser: the mechanisms of the spec's
// methods and Algorithm 5's noisy counts.
func (e *Hist) Mechanisms() []string {
	return armMechanisms(e.arms, func(arm) []string { return []string{"laplace-histogram"} })
}

// union returns the sorted union of two sorted, disjoint index sets.
func union(a, b []int) []int {
	out := append(append(make([]int, 0, len(a)+len(b)), a...), b...)
	slices.Sort(out)
	return out
}

// comparisonFor returns the runner.Comparer answer of a tuning kind: with
// tuning.baseline, every other method label against it at each dataset
// and α on metrics, paired by (rep, fold), laid out like the kind's
// figures.
func comparisonFor(t *TuningSpec, arms []arm, metrics []comparison.Metric) (comparison.Options, plots.FigureSpec, bool) {
	if t.Baseline == "" {
		return comparison.Options{}, plots.FigureSpec{}, false
	}
	var others, notPrivate []string
	for _, a := range arms {
		if a.label != t.Baseline {
			others = append(others, a.label)
		}
		// An oracle's choice on the test fold, and a selection whose plan
		// is not private (control's exact argmax): from the privacy the
		// method states, not its name.
		plan, err := a.sel.Plan(t.budget(t.Alphas[0]), 1, a.terms)
		if a.grid == experiments.GridOracle || err == nil && !plan.Total.Private() {
			notPrivate = append(notPrivate, a.label)
		}
	}
	o := comparison.Options{
		Baseline: t.Baseline, Methods: others, XCol: "alpha", XName: "alpha",
		Metrics: metrics, PairKey: []string{"rep", "fold"}, NotPrivate: notPrivate,
	}
	return o, plots.FigureSpec{XLabel: "privacy level α", LogX: true, Methods: others, Styles: FigureStyles}, true
}

// Comparison implements runner.Comparer: with tuning.baseline, on AUC
// (higher is better), MSE and error rate (lower is better).
func (e *Experiment) Comparison() (comparison.Options, plots.FigureSpec, bool) {
	return comparisonFor(&e.spec.Tuning, e.arms, []comparison.Metric{{Name: "auc", HigherIsBetter: true}, {Name: "mse"}, {Name: "error_rate"}})
}

// Comparison implements runner.Comparer: with tuning.baseline, on the
// integrated squared error (lower is better; known for the densities
// only) and its estimate.
func (e *Hist) Comparison() (comparison.Options, plots.FigureSpec, bool) {
	return comparisonFor(&e.spec.Tuning, e.arms, []comparison.Metric{{Name: "ise"}, {Name: "ise_estimate"}})
}

// sharedTuning returns t without what the units read one entry of
// (tuning.methods, tuning.learners and tuning.alphas, in their keys) or
// read not at all (tuning.baseline), for SharedHash.
func sharedTuning(t TuningSpec) TuningSpec {
	t.Methods, t.Learners, t.Alphas, t.Baseline = nil, nil, nil, ""
	return t
}

// SharedHash implements runner.UnitReader: the spec without the tuning
// method, learner and α lists and the baseline (nor the methods' files):
// a method, learner or α added, removed or edited recomputes only its own
// units.
func (e *Experiment) SharedHash() string {
	sec := *e.spec.Section
	sec.Tuning = sharedTuning(sec.Tuning)
	return e.spec.Spec.SharedHash(&sec)
}

// UnitInputs implements runner.UnitReader: the unit's selection method
// and learner (experiments.Spec.MethodIdentity: an external learner's
// table and files); its dataset, α, repetition and fold are in its key.
func (e *Experiment) UnitInputs(ru runner.Unit) map[string]string {
	u, ok := ru.(unit)
	if !ok {
		return nil
	}
	a := e.arms[u.arm]
	// With the values of the arm's settings (a grid's: of every variant).
	id := experiments.WithSettings(e.spec.Spec.MethodIdentity(params.Base(a.learner)), params.Canonicals(a.settings)...)
	return map[string]string{
		"method " + a.sel.Name(): a.sel.Name(),
		"learner " + a.learner:   id,
	}
}

// SharedHash implements runner.UnitReader, as Experiment.SharedHash.
func (e *Hist) SharedHash() string {
	sec := *e.spec.HistSection
	sec.Tuning = sharedTuning(sec.Tuning)
	return e.spec.Spec.SharedHash(&sec)
}

// UnitInputs implements runner.UnitReader: the unit's selection method.
func (e *Hist) UnitInputs(ru runner.Unit) map[string]string {
	u, ok := ru.(histUnit)
	if !ok {
		return nil
	}
	name := e.arms[u.arm].sel.Name()
	return map[string]string{"method " + name: name}
}
