// Package learnercmp is the "learner-comparison" experiment kind: private
// learners fit on the same repeated cross-validation folds across a grid
// of ε, with test AUC, error rate and MSE (Brier score) against ε and the
// non-private fit as the reference — the accuracy-against-privacy figure
// of most differentially private learning papers (e.g. the experiments of
// Chaudhuri, Monteleoni & Sarwate 2011, JMLR 12, which compare their
// Algorithm 1, output perturbation, with Algorithm 2, objective
// perturbation, and the non-private fit).
//
// # Protocol
//
// A replicate unit is one fit: (dataset, repetition, fold, learner, ε),
// and (dataset, repetition, fold, reference). Each repetition
// partitions the dataset into K folds (tune.Partition, drawn from
// runner.Stream(spec, "cv-partition", dataset, repetition): the same
// folds for every learner and ε, and the same as a cv-tuning spec with the
// same seed would draw). In round f, fold f is the test set and the other
// K−1 folds the training set; nothing is tuned, so there is no validation
// fold. Every learner of comparison.learners is fit on the training set
// at every ε of comparison.epsilons (δ = comparison.delta) and its fixed
// λ (comparison.lambdas.<learner>, else comparison.lambda), and the
// reference learner (comparison.reference, default "non-private") once
// per fold, at ε = +Inf; each released model is scored on the test fold.
// The fits of a fold share its rows (a small cache of the folds in
// flight). A fit that fails fails its own unit only, and a unit records
// what it read of the spec (runner.UnitReader: its learner and λ), so an
// edited or added learner or ε recomputes only its own units.
//
// Learners come from the one learner registry of the harness, through
// learners.Lookup, configured by comparison.loss, comparison.huber_h
// and comparison.objective_perturbation (learners.Config).
//
// # Randomness
//
// The fit of learner L at ε on fold F draws from the stream keyed by (F,
// L, ε) only (env.RNGAt(F, L, ε); the reference from (F, L,
// "reference")), as when a unit was a whole fold: its noise does not
// depend on the other learners, the grid, or the worker count, and the
// row's key column (its unit's key) names the stream.
//
// # Privacy accounting
//
// Each fit returns its guarantee as a value, checked against the level
// it was handed (ε of the grid, δ = comparison.delta) by
// learners.CheckLevel, as the cv-tuning kind checks its fits: one over the
// level is booked as returned and flagged in the row's status ("learner
// NAME returned … for a level of …") and the manifest's warnings
// ([Experiment.RowWarnings]); one below it is flagged alike ("learner
// NAME returned … below its level of …") and booked at the level, which
// is what the protocol spends; one that cannot be compared with a level
// (not private, ex-post) fails the unit; a ρ-zCDP guarantee is compared
// as the (ε, δ) it implies at comparison.delta. The reference, handed
// ε = +Inf, has no level to check. The rows record the guarantee
// (notion, epsilon_spent, delta_spent, rho_spent, private), and the
// ledger (see [Experiment.Ledger]) states, for each (learner, ε), the
// guarantee of one released model. No composition across units is
// claimed: the models of the repetitions and folds are separate releases
// on overlapping training sets.
package learnercmp

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dprepro/dprepro/comparison"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/metrics"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/tune"
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/params"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
	"github.com/dprepro/dprepro/runner/specdata"
)

// Columns is the rows.csv schema of the kind: one row per fit. method is
// the summary's label (the learner's name); epsilon and delta are the
// level the learner was handed (+Inf and 0 for the reference);
// notion, rho_spent and private the guarantee it returned, epsilon_spent
// and delta_spent what is booked for it (its ε and δ, or the level's where
// it claims less, learners.CheckLevel; ε = +Inf when not private; a ρ-zCDP
// guarantee is stated as (ε, δ) at comparison.delta); solver_status, grad_norm and newton_iter
// its fit report (empty when the model has none); key the fit's stream:
// "<unit>/<learner>/epsilon=<ε>" or "<unit>/<learner>/reference".
var Columns = []string{
	"experiment", "dataset", "data_source", "method", "learner", "repetition", "fold",
	"epsilon", "delta", "lambda", "n_train", "n_test", "d",
	"auc", "error_rate", "mse",
	"notion", "epsilon_spent", "delta_spent", "rho_spent", "private",
	"solver_status", "grad_norm", "newton_iter", "status", "key",
}

// Metrics are the summarized metrics, against x = ε.
var Metrics = []string{"auc", "error_rate", "mse"}

// Experiment is a loaded learner-comparison spec.
type Experiment struct {
	spec          *Spec
	data          []*datasets.Dataset
	all           []*learners.Data   // per dataset, every row: the folds are its Subsets
	folds         map[string][][]int // "dataset/rep" -> fold -> row indices
	arms          []arm              // comparison.learners, configured, their variants expanded
	baseline      string             // the label of comparison.baseline's arm ("": none)
	ref           learners.Learner   // the reference, or nil
	units         []string
	byKey         map[string]unit
	cache         *foldCache // the training and test rows of the folds in flight
	external.Runs            // the spec's external learners: runner.Opener and Versioner
}

// arm is one curve of the comparison: a learner of comparison.learners,
// one variant of it (methods/params: "dp-gd[steps=50]"), or the oracle
// over its variants ("dp-gd[grid=oracle]").
type arm struct {
	label    string             // the rows' method and learner label
	name     string             // its name in comparison.learners (its λ)
	fits     []learners.Learner // the learner; an oracle's: every variant
	settings []params.Setting   // the settings of fits
	oracle   bool               // the variant best on the test fold is released (not private)
}

type unit struct {
	key     string // the unit key (runner.Unit): "<fold>/<learner>/epsilon=<ε>" or "<fold>/<reference>/reference", its row's key
	fold    string // the fold's key "<dataset>/rep=R/fold=F", the scope of the learner's streams
	ds      int
	rep     int     // 1-based
	fold1   int     // 1-based fold index
	learner int     // index in e.arms, or -1 for the reference
	eps     float64 // the ε of the fit (the reference: +Inf)
	audit   bool    // an audit unit of [comparison.audit] (fold: "audit/<label>")
}

// Key implements runner.Unit.
func (u unit) Key() string { return u.key }

func (u unit) withKey(k string) unit { u.key = k; return u }

// New resolves the learners of spec, loads its datasets and lays out the
// folds and units.
func New(es *experiments.Spec, o runner.DataOptions) (*Experiment, error) {
	spec, err := cmpSpec(es)
	if err != nil {
		return nil, err
	}
	c := &spec.Comparison
	e := &Experiment{spec: spec, folds: map[string][][]int{}, byKey: map[string]unit{}, cache: newFoldCache(), Runs: external.Runs{Methods: external.NewSet(es)}}
	built := false
	defer func() {
		if !built { // end the workers the handshakes started
			e.Methods.Close()
		}
	}()
	cfg := c.learnerConfig(spec.Data.RowNorm)
	for i, name := range c.Learners {
		v, err := learners.LookupVariants(es, e.Methods, name, cfg)
		if err != nil {
			var se *experiments.SpecError
			if errors.As(err, &se) {
				return nil, err // already at its key (methods[i].command, methods[i].params)
			}
			return nil, es.ErrorAt("comparison.learners", fmt.Sprintf("comparison.learners[%d]", i), err)
		}
		if err := learners.CheckNotion(v.Learners[0], c.Delta, "comparison.delta"); err != nil {
			return nil, es.ErrorAt("comparison.learners", fmt.Sprintf("comparison.learners[%d]", i), err)
		}
		switch v.Grid {
		case experiments.GridPrivate:
			k := fmt.Sprintf("methods[%d].grid", es.MethodIndex(name))
			return nil, es.ErrorAt(k, k, fmt.Errorf(`learner-comparison tunes nothing, so it cannot select among %s's variants privately: use grid = "variants" (each its own curve) or "oracle" (the best on the test fold, not private), or a cv-tuning spec, whose selection methods choose among λ × variants`, name))
		case experiments.GridOracle:
			e.arms = append(e.arms, arm{label: v.Label(), name: name, fits: v.Learners, settings: v.Settings, oracle: true})
		default:
			for j, l := range v.Learners {
				e.arms = append(e.arms, arm{label: l.Name(), name: name, fits: []learners.Learner{l}, settings: v.Settings[j : j+1]})
			}
		}
		if b := c.Baseline; b == name && (len(v.Learners) > 1 && v.Grid == experiments.GridVariants) {
			return nil, es.ErrorAt("comparison.baseline", "comparison.baseline", fmt.Errorf("learner %s runs as %d variants (methods[%d].params lists values): a baseline is one curve; give it one value per parameter, or grid = \"oracle\"", name, len(v.Learners), es.MethodIndex(name)))
		}
	}
	for _, a := range e.arms {
		if c.Baseline != "" && a.name == c.Baseline {
			e.baseline = a.label // an oracle's label is not its name
		}
	}
	if c.Reference != "" {
		// A registered learner only (Validate): the reference is handed
		// ε = +Inf, which no worker call can carry.
		if e.ref, err = learners.Lookup(nil, c.Reference, cfg); err != nil {
			return nil, es.ErrorAt("comparison.reference", "comparison.reference", err)
		}
	}
	for _, name := range spec.Data.Datasets {
		ds, err := specdata.Load(es, name, o.DataDir, o.Named)
		if err != nil {
			return nil, err
		}
		if ds.Task != "classification" {
			return nil, specdata.At(es, name, fmt.Errorf("a %s dataset; learner-comparison needs classification", ds.Task))
		}
		n, _ := ds.X.Dims()
		if min := 2 * spec.CV.Folds; n < min {
			return nil, specdata.At(es, name, fmt.Errorf("%d rows; %d folds need at least %d", n, spec.CV.Folds, min))
		}
		e.data = append(e.data, ds)
		e.all = append(e.all, learners.NewData(ds.X, ds.Y, nil))
		for rep := 1; rep <= spec.CV.Repetitions; rep++ {
			e.folds[foldKey(name, rep)] = tune.Partition(runner.Stream(es, "cv-partition", name, strconv.Itoa(rep)), n, spec.CV.Folds)
		}
	}
	if err := e.layoutAudits(); err != nil {
		return nil, err
	}
	// One unit per (dataset, repetition, fold, learner, ε), the
	// reference's last: each fit is a unit of its own, so that a learner
	// that fails fails its own cells only, and a learner or an ε added,
	// edited or removed leaves the other units as they are (UnitInputs).
	for di, ds := range e.data {
		for rep := 1; rep <= spec.CV.Repetitions; rep++ {
			for f := 1; f <= spec.CV.Folds; f++ {
				fold := fmt.Sprintf("%s/rep=%d/fold=%d", ds.Name, rep, f)
				add := func(li int, name, stream string, eps float64) {
					key := fold + "/" + name + "/" + stream
					e.units = append(e.units, key)
					e.byKey[key] = unit{fold: fold, ds: di, rep: rep, fold1: f, learner: li, eps: eps}
				}
				for ai, a := range e.arms {
					for _, eps := range c.Epsilons {
						add(ai, a.label, "epsilon="+results.FormatFloat(eps), eps)
					}
				}
				if e.ref != nil {
					add(-1, e.ref.Name(), "reference", math.Inf(1))
				}
			}
		}
	}
	// A claim naming a variant names one the hellos declared.
	if err := es.CheckVariantClaims(e.labels()); err != nil {
		return nil, err
	}
	built = true
	return e, nil
}

func foldKey(name string, rep int) string { return name + "/" + strconv.Itoa(rep) }

// split returns the training rows (all folds but fold f, sorted) and the
// test rows (fold f) of round f (1-based).
func split(folds [][]int, f int) (train, test []int) {
	for j, fold := range folds {
		if j != f-1 {
			train = append(train, fold...)
		}
	}
	slices.Sort(train)
	return train, folds[f-1]
}

// Spec implements runner.Experiment.
func (e *Experiment) Spec() *experiments.Spec { return e.spec.Spec }

// Units implements runner.Experiment.
func (e *Experiment) Units() []runner.Unit { return runner.UnitsOf(e.units, e.byKey, unit.withKey) }

// Comparison implements runner.Comparer: with comparison.baseline, every
// other learner against it at each dataset and ε, on AUC (higher is
// better), error rate and MSE (lower is better), paired by (repetition,
// fold); the figures are laid out like the kind's (ε on a log axis).
func (e *Experiment) Comparison() (comparison.Options, plots.FigureSpec, bool) {
	if e.baseline == "" {
		return comparison.Options{}, plots.FigureSpec{}, false
	}
	var others, notPrivate []string
	for _, a := range e.arms {
		if a.label != e.baseline {
			others = append(others, a.label)
		}
		if a.oracle {
			notPrivate = append(notPrivate, a.label)
		}
	}
	o := comparison.Options{
		Baseline: e.baseline, Methods: others, XCol: "epsilon", XName: "epsilon",
		Metrics: []comparison.Metric{{Name: "auc", HigherIsBetter: true}, {Name: "error_rate"}, {Name: "mse"}},
		PairKey: e.PairKey(), NotPrivate: notPrivate,
	}
	// Each learner drawn as in the accuracy figures: its fixed style, else
	// the palette's at its place in comparison.learners.
	return o, plots.FigureSpec{XLabel: "privacy level ε", LogX: true, Methods: others, Styles: e.styles()}, true
}

// SharedHash implements runner.UnitReader: the spec without
// comparison.learners, reference, epsilons, lambda, lambdas and baseline
// (and the methods' files), which are the units' own inputs or read by
// no unit.
func (e *Experiment) SharedHash() string {
	sec := *e.spec.Section
	c := &sec.Comparison
	c.Learners, c.Reference, c.Epsilons, c.Lambda, c.Lambdas, c.Baseline = nil, "", nil, 0, nil, ""
	c.Audit = nil // the audit units' own inputs (UnitInputs)
	return e.spec.Spec.SharedHash(&sec)
}

// UnitInputs implements runner.UnitReader: the unit's learner (its
// identity, experiments.Spec.MethodIdentity: an external one's table and
// files) with its λ; its ε is in its key.
func (e *Experiment) UnitInputs(ru runner.Unit) map[string]string {
	u, ok := ru.(unit)
	if !ok {
		return nil
	}
	if u.audit {
		return e.auditInputs(u)
	}
	if u.learner < 0 {
		name := e.ref.Name()
		return map[string]string{"learner " + name: e.spec.Spec.MethodIdentity(name) + " lambda=" + results.FormatFloat(e.spec.Comparison.lambda(name))}
	}
	a := e.arms[u.learner]
	// With the values of the unit's setting (an oracle's: of every variant).
	id := experiments.WithSettings(e.spec.Spec.MethodIdentity(a.name)+" lambda="+results.FormatFloat(e.spec.Comparison.lambda(a.name)), params.Canonicals(a.settings)...)
	return map[string]string{"learner " + a.label: id}
}

// ScratchScope implements runner.ScratchScoper: the unit's fold, whose
// training rows an external learner's fits of every ε read from one
// scratch file; it goes once the fold's last unit has run.
func (e *Experiment) ScratchScope(ru runner.Unit) string {
	u, _ := ru.(unit)
	return u.fold
}

// TimingColumns implements runner.Timer: the wall-clock seconds of each
// fit, by (dataset, learner, ε, repetition, fold), for cost–accuracy
// plots; timings.csv, never rows.csv.
func (e *Experiment) TimingColumns() (keys, measured []string) {
	return []string{"key", "dataset", "learner", "epsilon", "repetition", "fold"}, []string{"fit_seconds"}
}

// Columns implements runner.Experiment: [Columns], then a
// "diag_<name>" column for each diagnostic a learner declares
// (learners.Diagnoser), filled in that learner's rows.
func (e *Experiment) Columns() []string {
	cols := Columns
	if slices.ContainsFunc(e.arms, func(a arm) bool { return a.oracle }) {
		cols = slices.Insert(slices.Clone(Columns), slices.Index(Columns, "lambda")+1, "setting")
	}
	return slices.Concat(cols, learners.DiagnosticColumns(e.fitted()...))
}

// RunUnit implements runner.Experiment: the unit's learner at its ε (or
// the reference), on the unit's training folds, scored on its test fold;
// its draws come from streams keyed by the fold, the learner and the ε
// (Env.RNGAt), as when one unit fitted every learner at every ε. A fit
// that does not converge, or returns a guarantee over its level, is a row
// with a warning status; a learner error (e.g. rows outside the unit ball
// for a learner that needs ‖x‖ ≤ 1), an invalid guarantee or one that
// cannot be checked against the level fails the unit.
func (e *Experiment) RunUnit(ctx context.Context, ru runner.Unit, env runner.Env) ([]results.Row, error) {
	u, err := runner.Begin[unit](ctx, ru)
	if err != nil {
		return nil, err
	}
	if u.audit {
		return e.runAudit(ctx, u)
	}
	ds := e.data[u.ds]
	fd := e.cache.get(u.fold, func(d *foldData) {
		d.trainIdx, d.testIdx = split(e.folds[foldKey(ds.Name, u.rep)], u.fold1)
		d.train, d.test = e.all[u.ds].Subset(d.trainIdx), e.all[u.ds].Subset(d.testIdx)
	})
	trainIdx, train, test := fd.trainIdx, fd.train, fd.test
	c := &e.spec.Comparison
	var rows []results.Row
	fit := func(l learners.Learner, name string, level learners.Level, stream string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := u.fold + "/" + l.Name() + "/" + stream
		lambda := c.lambda(name)
		// Keyed by the fold, as when one unit fitted every learner of it.
		rng := env.RNGAt(u.fold, l.Name(), stream)
		// The fit touches the training folds only (a traced run checks
		// them against the test fold; draws nothing).
		mech.Scope(rng, "training: the model of "+l.Name()+" at "+stream, mech.Records{Dataset: ds.Name, Part: "T", Index: trainIdx, N: len(trainIdx)})
		start := time.Now()
		m, g, err := l.Fit(ctx, rng, train, lambda, level)
		secs := time.Since(start).Seconds()
		if err != nil {
			return fmt.Errorf("%s: learner %s: %w", key, l.Name(), err)
		}
		if m == nil {
			return fmt.Errorf("%s: learner %s returned no model", key, l.Name())
		}
		learners.RecordDeclared(rng, l, g, train.D())
		r, err := e.row(ds, u, l.Name(), level, lambda, g, m, train, test)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err) // row names the learner
		}
		r.Set("key", key)
		learners.SetDiagnostics(m, r.SetFloat)
		r.SetFloat("fit_seconds", secs) // to timings.csv, not rows.csv (runner.Timer)
		rows = append(rows, r)
		return nil
	}
	if u.learner < 0 {
		if err := fit(e.ref, e.ref.Name(), learners.Level{Epsilon: math.Inf(1)}, "reference"); err != nil {
			return nil, err
		}
		return rows, nil
	}
	a := e.arms[u.learner]
	stream := "epsilon=" + results.FormatFloat(u.eps)
	for _, l := range a.fits {
		if err := fit(l, a.name, learners.Level{Epsilon: u.eps, Delta: c.Delta}, stream); err != nil {
			return nil, err
		}
	}
	if a.oracle {
		return []results.Row{oracleRow(a, rows, u.fold+"/"+a.label+"/"+stream)}, nil
	}
	return rows, nil
}

// oracleRow is the row of an oracle arm ("name[grid=oracle]") from the
// rows of its variants' fits on one fold and ε (learners.OracleRow, its
// fit_seconds summed), keyed key, its notion none: the release, not the
// variant's fit.
func oracleRow(a arm, rows []results.Row, key string) results.Row {
	r := learners.OracleRow(rows, a.label, a.label, a.settings, "fit_seconds")
	r.Set("key", key)
	r.Set("notion", string(privacy.None))
	return r
}

// row scores model m on test and records the level it was fit at and the
// guarantee g it returned. A fit at a finite level (every fit but the
// reference's, which is handed ε = +Inf: no level) is checked against it
// with learners.CheckLevel, as cv-tuning checks its fits: a guarantee over
// the level is booked as returned, one below it at the level, and both
// are flagged in the status (and by RowWarnings in the manifest and on
// stderr); one that cannot be compared with a level
// (not private, ex-post) is an error. A ρ-zCDP guarantee is checked as
// the (ε, δ) it implies at comparison.delta, the δ of the level. Errors
// name the learner.
func (e *Experiment) row(ds *datasets.Dataset, u unit, learner string, level learners.Level, lambda float64, g privacy.Guarantee, m learners.Model, train, test *learners.Data) (results.Row, error) {
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("learner %s: %w", learner, err)
	}
	stated := g
	if g.Notion == privacy.ZCDP {
		delta := e.spec.Comparison.Delta
		if !(delta > 0) {
			return nil, fmt.Errorf("learner %s: returned a ρ-zCDP guarantee (ρ = %v); set comparison.delta > 0 to state it as (ε, δ)", learner, g.Rho)
		}
		stated = g.ToApprox(delta) // Bun & Steinke 2016, Proposition 1.3
	}
	var warnings []string
	booked := stated
	if !math.IsInf(level.Epsilon, 1) {
		check, err := learners.CheckLevel(learner, stated, level)
		if err != nil {
			return nil, err
		}
		if check.Note != "" {
			warnings = append(warnings, check.Note)
		}
		booked = check.Booked
	}
	margins := m.Margins(nil, test)
	y := test.Y()
	r := results.Row{}
	r.Set("experiment", e.spec.ID)
	r.Set("dataset", ds.Name)
	r.Set("data_source", ds.Source.Kind)
	r.Set("method", learner)
	r.Set("learner", learner)
	r.SetInt("repetition", u.rep)
	r.SetInt("fold", u.fold1)
	r.SetFloat("epsilon", level.Epsilon)
	r.SetFloat("delta", level.Delta)
	r.SetFloat("lambda", lambda)
	r.SetInt("n_train", train.N())
	r.SetInt("n_test", test.N())
	r.SetInt("d", train.D())
	r.SetFloat("auc", metrics.AUC(margins, y))
	r.SetFloat("error_rate", metrics.ErrorRate(margins, y))
	r.SetFloat("mse", metrics.Brier(metrics.LogisticProbs(nil, margins), y))
	r.Set("notion", string(g.Notion))
	r.SetFloat("epsilon_spent", booked.Epsilon)
	r.SetFloat("delta_spent", booked.Delta)
	r.SetFloat("rho_spent", g.Rho)
	r.Set("private", strconv.FormatBool(g.Private()))
	var status []string
	if rep, ok := m.(learners.Reporter); ok {
		fr := rep.Report()
		r.Set("solver_status", fr.Solver)
		r.SetFloat("grad_norm", fr.GradNorm)
		r.SetInt("newton_iter", fr.Iter)
		if !fr.Converged {
			status = append(status, "the fit did not converge ("+fr.Solver+")")
		}
	}
	r.Set("status", learners.RowStatus(append(status, warnings...)...))
	return r, nil
}

// RowWarnings implements runner.RowWarner: for each learner of
// comparison.learners whose rows report a fit over or below its level (a
// guarantee above or below the ε or δ it was handed, see row), how many
// rows, the first such note and what was booked (learners.LevelWarnings);
// and for each learner whose method declared an ε below what the harness
// computed for its declared mechanism, how many fits
// (learners.DeclaredBelowWarnings).
func (e *Experiment) RowWarnings(rows []results.Row) []string {
	w := learners.LevelWarnings(rows, e.labels(), "epsilon_spent, delta_spent and the ledger book what the learner returned",
		"epsilon_spent, delta_spent and the ledger book the level, which is what the protocol spends")
	return append(w, learners.DeclaredBelowWarnings(rows, e.labels(), "epsilon_spent")...)
}

// FigureMarks implements runner.FigureMarker: the points (dataset,
// learner, ε) whose rows report a fit over its level
// (learners.OverLevelMarks), which the figures ring.
func (e *Experiment) FigureMarks(rows []results.Row) ([]plots.Mark, string) {
	return learners.OverLevelMarks(rows, "epsilon"), learners.OverLevelLabel
}

// fitted returns the learners a run fits: comparison.learners, then the
// reference.
func (e *Experiment) fitted() []learners.Learner {
	var ls []learners.Learner
	for _, a := range e.arms {
		ls = append(ls, a.fits...)
	}
	if e.ref != nil {
		ls = append(ls, e.ref)
	}
	return ls
}

// Summary implements runner.Experiment: the mean of auc, error_rate and
// mse over the units of each (dataset, learner, ε) with the unbiased sd
// and the percentile-bootstrap CI of the mean (output.bootstrap
// resamples, level output.ci_level); the reference at x = +Inf.
func (e *Experiment) Summary(rows []results.Row) []results.SummaryRow {
	return results.Summarize(rows, results.SummaryOptions{
		Experiment: e.spec.ID, XName: "epsilon", XCol: "epsilon", Metrics: Metrics,
		Bootstrap: e.spec.Output.Bootstrap, Level: e.spec.Output.CILevel, Seed: e.spec.Seed,
	})
}

// Figures implements runner.Experiment: per dataset, "accuracy-<dataset>"
// with three panels — test AUC, error rate and MSE against ε on a log
// axis, one line per learner with its bootstrap CI as error bars, the
// reference as a horizontal line. A dataset run on its synthetic stand-in
// is labelled so in every panel.
func (e *Experiment) Figures() []plots.FigureSpec {
	var out []plots.FigureSpec
	ref := ""
	if e.ref != nil {
		ref = e.ref.Name()
	}
	cv := e.spec.CV
	for _, ds := range e.data {
		out = append(out, plots.FigureSpec{
			Name:    "accuracy-" + ds.Name,
			Title:   ds.Name + ": private learners against ε",
			Caption: plots.Caption{Replicates: fmt.Sprintf("%d × %d-fold CV: n = %d test folds per point", cv.Repetitions, cv.Folds, cv.Repetitions*cv.Folds)},
			XLabel:  "privacy level ε", LogX: true, Jitter: 0.12,
			Methods: e.labels(), Styles: e.styles(), Reference: ref, Datasets: []string{ds.Name},
			MetricPanels: []plots.MetricPanel{{Metric: "auc", Label: "test AUC"}, {Metric: "error_rate", Label: "test error rate"}, {Metric: "mse", Label: "test MSE (Brier)"}},
		})
	}
	return out
}

// labels returns the arms' labels, in order: the curves of the figures.
func (e *Experiment) labels() []string {
	out := make([]string, len(e.arms))
	for i, a := range e.arms {
		out[i] = a.label
	}
	return out
}

// styles returns the style of every arm: a built-in learner's fixed one
// (learnerStyles), else a palette colour no other learner of the spec
// has, in the order of comparison.learners; the variants of one learner
// (methods/params) share its colour and differ in marker and line.
func (e *Experiment) styles() map[string]plots.Style {
	used := map[color.Color]bool{}
	for _, a := range e.arms {
		if st, ok := learnerStyles[a.name]; ok {
			used[st.Color] = true
		}
	}
	base := map[string]plots.Style{}
	next := 0
	styles := map[string]plots.Style{}
	variant := map[string]int{}
	for _, a := range e.arms {
		st, ok := base[a.name]
		if !ok {
			if st, ok = learnerStyles[a.name]; !ok {
				for used[plots.PaletteColor(next)] && next < 64 {
					next++
				}
				st = plots.PaletteStyle(next)
				used[st.Color] = true
			}
			base[a.name] = st
		}
		if j := variant[a.name]; j > 0 {
			st.Shape, st.Dashes = plots.PaletteShape(j+4), plots.VariantDashes(j)
		}
		if a.oracle {
			st.Dashes = plots.VariantDashes(2) // dotted: not a private curve
		}
		variant[a.name]++
		styles[a.label] = st
	}
	return styles
}

// learnerStyles fix the colour and marker of the built-in learners in
// every figure of the kind.
var learnerStyles = map[string]plots.Style{
	learners.ObjectivePerturbation{}.Name(): {Color: plots.PaletteColor(1), Shape: plots.PaletteShape(0)},
	learners.OutputPerturbation{}.Name():    {Color: plots.PaletteColor(2), Shape: plots.PaletteShape(1)},
}

// Datasets implements runner.Experiment.
func (e *Experiment) Datasets() []results.DatasetInfo { return specdata.Infos(e.spec.Spec, e.data) }

// Warnings implements runner.Experiment: the datasets' notes and those of
// the learners (learners.Warner).
func (e *Experiment) Warnings() []string {
	w := specdata.Warnings(e.data)
	w = append(w, learners.UnusedTables(e.spec.Spec, e.spec.Comparison.Learners, "comparison.learners")...)
	for _, l := range e.fitted() {
		if lw, ok := l.(learners.Warner); ok {
			w = append(w, lw.Warnings()...)
		}
	}
	return w
}

// Ledger implements runner.Experiment: one entry per (learner, ε), and
// one for the reference, stating the guarantee of one released model —
// a model fit on the training folds of one (dataset, repetition, fold).
// Its charge and total are the guarantee the learner returned, the
// largest over the units (ε and δ separately; private only if every fit
// was): the fits of one cell are separate releases of one procedure on
// overlapping training sets, so no parallel composition applies across
// folds or repetitions. The composition rule says what releasing all of a
// dataset's models of the cell together would cost: their sequential
// composition (privacy.Compose), the largest over the datasets. The
// charge states its notion (what is booked: pure ε, (ε, δ) or none), the
// learner's claim beside it where that differs (Claimed: fits below or
// over their level, or a ρ-zCDP claim with its ρ, which Rho also holds),
// and in DeclaredBy a learner that is not built in (learners.DeclaredBy).
func (e *Experiment) Ledger(rows []results.Row) []results.LedgerEntry {
	key := func(r results.Row) string { return r["method"] + "|" + r["epsilon"] }
	cells := results.GroupLedger(rows, key, []string{"epsilon_spent", "delta_spent"}, learners.LevelNotes)
	// What the shared cells do not hold: each cell's guarantees per
	// dataset (to compose them) and the largest ρ of its ρ-zCDP claims.
	type zc struct {
		rho  float64
		zcdp bool
		// Of an accounted learner's fits (learners.Accounted): those
		// whose method declared an ε beside its mechanism, the largest
		// such ε, and how many declared less than the harness computed.
		declared, below int
		declMax         float64
		// The row of the accounted fit with the largest computed ε (nil
		// for none): its declared mechanism and both accountants' ε.
		acc results.Row
	}
	perData := map[string]map[string][]privacy.Guarantee{}
	zcdp := map[string]*zc{}
	var datasets []string
	for _, r := range rows {
		k := key(r)
		if perData[k] == nil {
			perData[k], zcdp[k] = map[string][]privacy.Guarantee{}, &zc{}
		}
		if privacy.Notion(r["notion"]) == privacy.ZCDP {
			z := zcdp[k]
			z.zcdp, z.rho = true, math.Max(z.rho, r.Float("rho_spent"))
		}
		if c := r.Float("diag_" + learners.AccountedEpsilon); !math.IsNaN(c) {
			if z := zcdp[k]; z.acc == nil || c > z.acc.Float("diag_"+learners.AccountedEpsilon) {
				z.acc = r
			}
		}
		if d := r.Float("diag_" + learners.DeclaredEpsilon); !math.IsNaN(d) {
			z := zcdp[k]
			z.declared++
			z.declMax = math.Max(z.declMax, d)
			if d < r.Float("diag_"+learners.AccountedEpsilon)*(1-1e-9) {
				z.below++
			}
		}
		perData[k][r["dataset"]] = append(perData[k][r["dataset"]], rowGuarantee(r))
		if !slices.Contains(datasets, r["dataset"]) {
			datasets = append(datasets, r["dataset"])
		}
	}
	// Every fitted learner whose guarantee is its own word: served by a
	// worker or registered by a user's module (comparison.learners and the
	// reference).
	declared := map[string]bool{}
	for _, a := range e.arms {
		for _, l := range a.fits {
			if learners.DeclaredBy(l) != "" {
				declared[a.label] = true
			}
		}
	}
	if e.ref != nil && learners.DeclaredBy(e.ref) != "" {
		declared[e.ref.Name()] = true
	}
	// Every learner whose guarantees the harness computes from the
	// mechanism its fits declare.
	accounted := map[string]string{}
	for _, a := range e.arms {
		for _, l := range a.fits {
			if w := learners.AccountedBy(l); w != "" {
				accounted[a.label] = w
			}
		}
	}
	cv := e.spec.CV
	data := fmt.Sprintf("T: the %d training folds of one (repetition, fold) of %d × %d-fold CV", cv.Folds-1, cv.Repetitions, cv.Folds)
	entry := func(learner, setting, epsKey string, lambda float64) (results.LedgerEntry, bool) {
		k := learner + "|" + epsKey
		c := cells.Get(k)
		if c == nil {
			return results.LedgerEntry{}, false
		}
		eps, delta, z := c.Max("epsilon_spent"), c.Max("delta_spent"), zcdp[k]
		release := fmt.Sprintf("the model of one %s fit at λ = %s", learner, results.FormatFloat(lambda))
		switch {
		case accounted[learner] != "":
			// The mechanism is the method's word, its ε the harness's.
			release += " (guarantee computed by the harness from the mechanism the method declares)"
		case declared[learner]:
			// The ledger says whose word the guarantee is.
			release += " (guarantee declared by the method)"
		}
		le := results.LedgerEntry{Method: learner, Setting: setting}
		// The notion of what is booked: (ε, δ) when δ > 0, pure ε
		// otherwise, none when a fit was not private.
		notion := privacy.Pure
		switch {
		case !c.Private:
			notion = privacy.None
		case delta > 0:
			notion = privacy.Approx
		}
		ch := results.LedgerCharge{
			Part: "training", Release: release, Data: data, Notion: string(notion),
			Epsilon: results.Float(eps), Delta: results.Float(delta), Private: c.Private,
		}
		if declared[learner] {
			ch.DeclaredBy = learner
		}
		var claims []string
		if z.zcdp {
			// The claim's ρ beside the (ε, δ) it was checked and booked as
			// (Bun & Steinke 2016, Proposition 1.3, at comparison.delta).
			rho := results.Float(z.rho)
			ch.Rho = &rho
			claims = append(claims, fmt.Sprintf("ρ-zCDP with ρ = %v (the largest of the fits), stated as (ε, δ) at comparison.delta = %v (Bun & Steinke 2016, Proposition 1.3)", z.rho, e.spec.Comparison.Delta))
		}
		if w := accounted[learner]; w != "" {
			claims = append(claims, w)
			if r := z.acc; r != nil {
				d := func(n string) string { return results.FormatFloat(r.Float("diag_" + n)) }
				claims = append(claims, fmt.Sprintf("the largest: σ = %s, q = %s, T = %s at δ = %s gives ε = %s (PLD accountant %s; RDP accountant %s at order %s)",
					d(learners.MechNoiseMultiplier), d(learners.MechSamplingRate), d(learners.MechSteps), d(learners.AccountedDelta),
					d(learners.AccountedEpsilon), d(learners.PLDEpsilon), d(learners.RDPEpsilon), d(learners.RDPOrder)))
			}
			switch {
			case z.declared == 0:
				claims = append(claims, "the method declared no ε beside its mechanism")
			case z.below > 0:
				claims = append(claims, fmt.Sprintf("the method declared ε up to %v, below what the harness computed in %d of %d fits: the computed ε is the fits' guarantee", z.declMax, z.below, c.Rows))
			default:
				claims = append(claims, fmt.Sprintf("the method declared ε up to %v, never below what the harness computed", z.declMax))
			}
		}
		claims = append(claims, c.LevelClaims("fits", nil)...)
		ch.Claimed = strings.Join(claims, "; ")
		le.Components = []results.LedgerCharge{ch}
		le.Total = results.PrivacyGuarantee{Notion: string(notion), Epsilon: results.Float(eps), Delta: results.Float(delta), Private: c.Private}
		all := privacy.Guarantee{Notion: privacy.Pure}
		var n int
		for _, name := range datasets {
			gs := perData[k][name]
			seq, err := privacy.Compose(privacy.Sequential, "all models of "+name, gs...)
			if err != nil {
				le.Rule = "composing the fits' guarantees: " + err.Error()
				return le, true
			}
			if !seq.Private() || seq.Epsilon > all.Epsilon {
				all, n = seq, len(gs)
			}
		}
		le.Rule = fmt.Sprintf("none across fits: each of the %d fits is a separate release on overlapping training sets (no parallel composition across folds or repetitions); the total is the guarantee of one released model. Releasing all %d models of a dataset together would cost their sequential composition: %s", c.Rows, n, all)
		return le, true
	}
	var out []results.LedgerEntry
	comp := &e.spec.Comparison
	for _, a := range e.arms {
		for _, eps := range comp.Epsilons {
			le, ok := entry(a.label, "epsilon="+results.FormatFloat(eps), results.FormatFloat(eps), comp.lambda(a.name))
			if !ok {
				continue
			}
			if a.oracle {
				le.Rule = fmt.Sprintf("not private: each row releases the one of %d variants (%s) with the highest test AUC, a choice that reads the test fold; every variant's fit is private at the level, the choice is not. ", len(a.fits), strings.Join(params.Labels(a.settings), "; ")) + le.Rule
			}
			out = append(out, le)
		}
	}
	if e.ref != nil {
		if le, ok := entry(e.ref.Name(), "reference (no ε asked)", results.FormatFloat(math.Inf(1)), comp.lambda(e.ref.Name())); ok {
			out = append(out, le)
		}
	}
	return out
}

// rowGuarantee is the guarantee a row records, as (ε, δ) (a ρ-zCDP
// guarantee was stated at comparison.delta when the row was written).
func rowGuarantee(r results.Row) privacy.Guarantee {
	if r["private"] != "true" {
		return privacy.NonPrivate("")
	}
	eps, delta := r.Float("epsilon_spent"), r.Float("delta_spent")
	if privacy.Notion(r["notion"]) == privacy.ExPost {
		return privacy.ExPostEps(eps, "")
	}
	if delta > 0 {
		return privacy.EpsDeltaDP(eps, delta, "")
	}
	return privacy.EpsDP(eps, "")
}

// PairKey implements runner.Pairer: the columns that identify a replicate
// of the learner-comparison rows: the repetition and fold, at one dataset and x;
// the paper's claims comparing two methods are decided on differences
// paired by them.
func (e *Experiment) PairKey() []string { return Kind.PairKey() }

// Mechanisms implements runner.Releaser: the mechanisms the fits of
// comparison.learners and the reference release (mech.Release.Mechanism),
// declared from the spec's learners: "objective-perturbation" (Chaudhuri,
// Monteleoni & Sarwate 2011, Algorithm 2, either variant and its
// fallback), "output-perturbation" (their Algorithm 1), none for the
// non-private reference (learners.Mechanisms). A learner that is not
// built in (a worker's, a user's module's) draws noise the harness does
// not see: it is listed as mech.Declared(NAME), "declared-by:NAME", as a
// traced run records its fits, and the manifest's list of releases
// without a floating-point-safe construction keeps it (mech.Unhardened),
// unless the learner declares its own with a Mechanisms() []string method.
func (e *Experiment) Mechanisms() []string {
	var out []string
	for _, l := range e.fitted() {
		out = append(out, learners.Mechanisms(l)...)
	}
	return out
}
