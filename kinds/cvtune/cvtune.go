package cvtune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/metrics"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/tune"
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/params"
	"github.com/dprepro/dprepro/methods/selection"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
	"github.com/dprepro/dprepro/runner/specdata"
)

// Columns is the rows.csv schema of the cv-tuning kind for a spec without
// tuning.learners; with it, [LearnerColumns].
var Columns = []string{
	"experiment", "dataset", "data_source", "method", "alpha", "rep", "fold", "unit",
	"index", "lambda", "auc", "mse", "error_rate", "val_score",
	"n_train", "n_val", "n_test", "d", "fits", "nonconverged_fits",
	"eps_train", "eps_tuning", "delta", "eps_total", "private",
	"eps_prime", "objpert_fallback", "solver_status", "grad_norm", "newton_iter", "status",
}

// LearnerColumns is the rows.csv schema of the cv-tuning kind for a spec
// that lists tuning.learners: Columns with "learner" after "method" and
// "delta_train", "delta_tuning" (the δ of the training and tuning charges,
// which a learner's (ε, δ) guarantees make nonzero) after "eps_tuning".
// The method column then holds the label "<method>/<learner>", so that
// summaries and figures keep the learners apart.
var LearnerColumns = func() []string {
	c := slices.Insert(slices.Clone(Columns), slices.Index(Columns, "method")+1, "learner")
	return slices.Insert(c, slices.Index(c, "eps_tuning")+1, "delta_train", "delta_tuning")
}()

// Experiment is a loaded cv-tuning spec.
type Experiment struct {
	spec          *Spec
	data          []*datasets.Dataset
	all           []*learners.Data   // per dataset, every row: the folds and parts are its Subsets
	folds         map[string][][]int // "dataset/rep" -> fold -> row indices
	arms          []arm
	explicit      bool // the spec lists tuning.learners
	grids         bool // an arm selects among a learner's variants (rows get a setting column)
	units         []string
	byKey         map[string]unit
	external.Runs // the spec's external methods: runner.Opener and Versioner
}

// arm is one (method, learner) pair of a spec: a learner of
// tuning.learners or one variant of it (methods/params), or — with its
// [[methods]] table's grid — all its variants, selected among per fold.
type arm struct {
	label    string // the rows' method label: the method, or "<method>/<learner>"
	sel      selection.Selector
	learner  string             // the learner label: a name, a variant's "name[k=v]" or a grid's "name[grid=private]"
	fits     []learners.Learner // configured for the spec: the learner, or a grid's variants
	settings []params.Setting   // the settings of fits
	grid     string             // experiments.GridVariants (one learner), GridPrivate or GridOracle
	terms    selection.Terms
}

type unit struct {
	key   string // the unit key (runner.Unit)
	ds    int
	alpha float64
	arm   int
	rep   int // 1-based
	fold  int // 1-based
}

// Key implements runner.Unit.
func (u unit) Key() string { return u.key }

func (u unit) withKey(k string) unit { u.key = k; return u }

// Options configures New: where the datasets are read from.
type Options = runner.DataOptions

// classifierTerms are the ledger words of the cv-tuning kind for learner
// name.
func classifierTerms(name string) selection.Terms {
	return selection.Terms{
		Fit: name + " fit", Param: "lambda",
		Utility: "validation error counts, p_i ∝ exp(-alpha e_i/2)", Score: "validation ramp score",
	}
}

// resolveSelectors returns the spec's tuning.methods from the selector
// registry; an unknown name is an error at tuning.methods[i].
func resolveSelectors(spec *experiments.Spec, t *TuningSpec) ([]selection.Selector, error) {
	var out []selection.Selector
	var errs []error
	for i, m := range t.Methods {
		s, err := selection.Lookup(m)
		if err == nil && slices.Contains(t.Methods[:i], m) {
			err = fmt.Errorf("method %q listed twice", m)
		}
		if err != nil {
			errs = append(errs, spec.ErrorAt("tuning.methods", fmt.Sprintf("tuning.methods[%d]", i), err))
			continue
		}
		out = append(out, s)
	}
	if len(out) == 0 && len(errs) == 0 {
		errs = append(errs, spec.Errorf("tuning.methods", "no method (known: %s)", strings.Join(selection.Names(), ", ")))
	}
	return out, errors.Join(errs...)
}

// resolveLearners returns the spec's tuning.learners (default: the
// built-in) through [learners.Lookup], configured for the spec; the
// spec's external learners are served by ext.
func resolveLearners(spec *Spec, ext *external.Set) ([]learners.Variants, error) {
	names := spec.Tuning.Learners
	explicit := len(names) > 0
	if !explicit {
		names = []string{learners.Default}
	}
	cfg := spec.Tuning.learnerConfig(spec.Data.RowNorm)
	var out []learners.Variants
	var errs []error
	for i, name := range names {
		path := fmt.Sprintf("tuning.learners[%d]", i)
		if !explicit {
			path = "tuning.learners (default)"
		}
		v, err := learners.LookupVariants(spec.Spec, ext, name, cfg)
		var l learners.Learner
		if err == nil {
			l = v.Learners[0]
		}
		if err == nil && slices.Contains(names[:i], name) {
			err = fmt.Errorf("learner %q listed twice", name)
		}
		if err == nil {
			// Refused at load, not unit by unit: a learner whose notion
			// needs a δ, with a pure training budget.
			err = learners.CheckNotion(l, spec.Tuning.TrainDelta, "tuning.train_delta")
		}
		var se *experiments.SpecError
		switch {
		case errors.As(err, &se):
			// Already at its key (an external learner's methods[i].command).
			errs = append(errs, err)
			continue
		case err != nil:
			errs = append(errs, spec.ErrorAt("tuning.learners", path, err))
			continue
		}
		out = append(out, v)
	}
	return out, errors.Join(errs...)
}

// learnerConfig is the cv-tuning spec's configuration of its learners:
// tuning.loss, tuning.huber_h and tuning.objective_perturbation, and the
// spec's data.row_norm rowNorm.
func (t *TuningSpec) learnerConfig(rowNorm string) learners.Config {
	return learners.Config{Table: "tuning", Loss: t.Loss, HuberH: t.HuberH, ObjPert: t.ObjPert, RowNorm: rowNorm}
}

// New loads the datasets of spec and lays out the folds and units. The
// spec's tuning.methods and tuning.learners must name registered
// selectors and learners; a method that runs Algorithm 1
// ([selection.StabilityUser]) needs learners with stability constants
// ([learners.StableLearner]).
func New(es *experiments.Spec, o Options) (*Experiment, error) {
	spec, err := tuningSpec(es)
	if err != nil {
		return nil, err
	}
	ext := external.NewSet(es)
	built := false
	defer func() {
		if !built { // end the workers the handshakes started
			ext.Close()
		}
	}()
	sels, err1 := resolveSelectors(es, &spec.Tuning)
	ls, err2 := resolveLearners(spec, ext)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	e := &Experiment{spec: spec, Runs: external.Runs{Methods: ext}, folds: map[string][][]int{}, byKey: map[string]unit{}, explicit: len(spec.Tuning.Learners) > 0}
	for _, v := range ls {
		// Variants need the learner column to tell them apart.
		e.explicit = e.explicit || len(v.Learners) > 1
	}
	for i, s := range sels {
		for _, v := range ls {
			if _, ok := s.(selection.StabilityUser); ok {
				if _, ok := v.Learners[0].(learners.StableLearner); !ok {
					return nil, es.ErrorAt("tuning.methods", fmt.Sprintf("tuning.methods[%d]", i),
						fmt.Errorf("method %q needs the stability constants of Definition 2 (Chaudhuri & Vinterbo 2013), which learner %q does not have", s.Name(), v.Name))
				}
			}
			if v.Grid != experiments.GridVariants {
				e.arms = append(e.arms, arm{label: armLabel(s.Name(), v.Label(), e.explicit), sel: s, learner: v.Label(),
					fits: v.Learners, settings: v.Settings, grid: v.Grid, terms: classifierTerms(v.Label())})
				e.grids = true
				continue
			}
			for j, l := range v.Learners {
				e.arms = append(e.arms, arm{label: armLabel(s.Name(), l.Name(), e.explicit), sel: s, learner: l.Name(),
					fits: []learners.Learner{l}, settings: v.Settings[j : j+1], grid: v.Grid, terms: classifierTerms(l.Name())})
			}
		}
	}
	for _, name := range spec.Data.Datasets {
		ds, err := specdata.Load(es, name, o.DataDir, o.Named)
		if err != nil {
			return nil, err
		}
		if ds.Task != "classification" {
			return nil, specdata.At(es, name, fmt.Errorf("a %s dataset; cv-tuning needs classification", ds.Task))
		}
		n, _ := ds.X.Dims()
		k := len(spec.Tuning.Lambdas)
		if min, why := minRecords(spec.CV.Folds, k, e.arms); n < min {
			return nil, specdata.At(es, name, fmt.Errorf("%d rows; %s", n, why))
		}
		if err := e.checkStability(n); err != nil {
			return nil, specdata.At(es, name, err)
		}
		e.data = append(e.data, ds)
		e.all = append(e.all, learners.NewData(ds.X, ds.Y, nil))
		for rep := 1; rep <= spec.CV.Repetitions; rep++ {
			e.folds[foldKey(name, rep)] = tune.Partition(runner.Stream(es, "cv-partition", name, strconv.Itoa(rep)), n, spec.CV.Folds)
		}
	}
	for di, ds := range e.data {
		for _, a := range spec.Tuning.Alphas {
			for ai, arm := range e.arms {
				for rep := 1; rep <= spec.CV.Repetitions; rep++ {
					for f := 1; f <= spec.CV.Folds; f++ {
						u := unit{ds: di, alpha: a, arm: ai, rep: rep, fold: f}
						key := unitKey(ds.Name, a, arm.label, rep, f)
						e.units = append(e.units, key)
						e.byKey[key] = u
					}
				}
			}
		}
	}
	if b := spec.Tuning.Baseline; b != "" && !slices.Contains(labels(e.arms), b) {
		// Validated against the labels the spec names; a learner's
		// variants (methods/params) label their arms by setting.
		return nil, es.ErrorAt("tuning.baseline", "tuning.baseline", fmt.Errorf("%s (a learner with variants labels each setting, or its grid, on its own)", experiments.Unknown("method", b, labels(e.arms))))
	}
	// A claim naming a variant names one the learners declared.
	if err := es.CheckVariantClaims(labels(e.arms)); err != nil {
		return nil, err
	}
	built = true
	return e, nil
}

func foldKey(name string, rep int) string { return name + "/" + strconv.Itoa(rep) }

// unitKey is the key of the unit of dataset ds, α alpha, arm label label,
// repetition rep and fold f.
func unitKey(ds string, alpha float64, label string, rep, f int) string {
	return fmt.Sprintf("%s/alpha=%s/%s/rep=%d/fold=%d", ds, results.FormatFloat(alpha), label, rep, f)
}

// minRecords returns the fewest records a dataset (or a histogram
// source) needs for the folds and for the selection methods arms run,
// and a message saying what needs them. Every fold needs 2 records: each
// fold is in turn the test set W, the validation set V and part of the
// training set T (roles), and a test fold of one record has no AUC. A
// method that trains on parts of T ([selection.Splitter], e.g. dataSplit into k
// parts) needs 2·parts records in every fold, so that each part of the
// K−2 training folds holds at least 2(K−2). Methods that train on all of
// T (stability, alphaSplit, random, control) need nothing more here;
// stability's own need is checked against the learner's constants
// (checkStability, and Theorem 6's n for histograms).
func minRecords(folds, k int, arms []arm) (int, string) {
	min, why := 2*folds, fmt.Sprintf("%d folds need at least %d (2 in every fold: each is in turn the test, the validation and a training fold)", folds, 2*folds)
	for _, a := range arms {
		sp, ok := a.sel.(selection.Splitter)
		if !ok {
			continue
		}
		candidates := k
		if a.grid == experiments.GridPrivate {
			candidates = k * len(a.fits) // λ × variants
		}
		parts := sp.SplitParts(candidates)
		if m := folds * parts * 2; m > min {
			min, why = m, fmt.Sprintf("%d folds and %s into %d parts need at least %d", folds, a.sel.Name(), parts, m)
		}
	}
	return min, why
}

// checkStability checks, for a dataset of n records, that the learner of
// every arm whose method runs Algorithm 1 ([selection.StabilityUser]) has its
// stability constants on the smallest training set the folds make (n
// minus the two largest folds) at the training level of the smallest α,
// so that a learner whose constants need more records than the folds
// leave is refused at load, not in every unit.
func (e *Experiment) checkStability(n int) error {
	t := e.spec.Tuning
	nTrain := n - 2*((n+e.spec.CV.Folds-1)/e.spec.CV.Folds)
	amin := slices.Min(t.Alphas)
	for _, a := range e.arms {
		su, ok := a.sel.(selection.StabilityUser)
		if !ok {
			continue
		}
		for _, l := range a.fits {
			sl, ok := l.(learners.StableLearner)
			if !ok {
				return fmt.Errorf("method %s needs the stability constants of Definition 2 (Chaudhuri & Vinterbo 2013), which learner %s does not have", a.sel.Name(), l.Name())
			}
			alpha1 := su.StabilityLevel(t.budget(amin))
			// At load: no unit's context yet; the worker's call timeout bounds it.
			if _, _, err := sl.StabilityConstants(context.Background(), t.Lambdas, nTrain, alpha1, t.Delta); err != nil {
				return fmt.Errorf("method %s, learner %s, alpha = %v (training at %v on the smallest training set, %d rows): %w", a.sel.Name(), l.Name(), amin, alpha1, nTrain, err)
			}
		}
	}
	return nil
}

// roles returns the training, validation and test rows of round f
// (1-based) of Section 5's protocol: fold f is the test set W, fold
// (f mod K)+1 the validation set V, the other K−2 folds the training set T
// (sorted).
func roles(folds [][]int, f int) (train, val, test []int) {
	K := len(folds)
	test = folds[f-1]
	val = folds[f%K]
	for j, fold := range folds {
		if j != f-1 && j != f%K {
			train = append(train, fold...)
		}
	}
	slices.Sort(train)
	return train, val, test
}

// Spec implements runner.Experiment.
func (e *Experiment) Spec() *experiments.Spec { return e.spec.Spec }

// ScratchScope implements runner.ScratchScoper: the unit's dataset,
// repetition and fold, whose training set T (and its parts) an external
// learner's fits read from scratch files; they go once the fold's last
// unit of the run (every method, learner and α) has run.
func (e *Experiment) ScratchScope(ru runner.Unit) string {
	u, _ := ru.(unit)
	return fmt.Sprintf("%d/rep=%d/fold=%d", u.ds, u.rep, u.fold)
}

// Units implements runner.Experiment.
func (e *Experiment) Units() []runner.Unit { return runner.UnitsOf(e.units, e.byKey, unit.withKey) }

// Columns implements runner.Experiment: [Columns], or [LearnerColumns]
// when the spec lists tuning.learners, then a "diag_<name>" column for
// each diagnostic a learner declares (learners.Diagnoser), filled from
// the released fit of that learner's rows.
func (e *Experiment) Columns() []string {
	if !e.explicit {
		if e.deltaColumns() {
			// A training δ: say where it went, as LearnerColumns do.
			return slices.Insert(slices.Clone(Columns), slices.Index(Columns, "eps_tuning")+1, "delta_train", "delta_tuning")
		}
		return Columns
	}
	var ls []learners.Learner
	for _, a := range e.arms {
		ls = append(ls, a.fits...)
	}
	cols := LearnerColumns
	if e.grids {
		cols = slices.Insert(slices.Clone(cols), slices.Index(cols, "lambda")+1, "setting")
	}
	return slices.Concat(cols, learners.DiagnosticColumns(ls...))
}

// deltaColumns reports whether the rows have delta_train and
// delta_tuning: with tuning.learners (LearnerColumns), or with a training
// δ (tuning.train_delta), whose charges the ledger reads from them.
func (e *Experiment) deltaColumns() bool { return e.explicit || e.spec.Tuning.TrainDelta > 0 }

// RunUnit implements runner.Experiment.
func (e *Experiment) RunUnit(ctx context.Context, ru runner.Unit, env runner.Env) ([]results.Row, error) {
	u, err := runner.Begin[unit](ctx, ru)
	if err != nil {
		return nil, err
	}
	ds := e.data[u.ds]
	a := e.arms[u.arm]
	if a.grid != experiments.GridOracle {
		r, err := e.selectRow(ctx, u, a, 0, a.fits, env.RNG())
		if err != nil {
			return nil, err
		}
		return []results.Row{r}, nil
	}
	// The oracle: each variant selected as its own arm would be (from the
	// stream of the unit it would have), then the one with the highest
	// test AUC released.
	var rows []results.Row
	for j, l := range a.fits {
		rng := env.RNGAt(unitKey(ds.Name, u.alpha, armLabel(a.sel.Name(), l.Name(), e.explicit), u.rep, u.fold))
		r, err := e.selectRow(ctx, u, a, j, a.fits[j:j+1], rng)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return []results.Row{e.oracleRow(a, rows)}, nil
}

// oracleRow is the row of an oracle arm ("<method>/<learner>[grid=oracle]")
// from its variants' rows of one unit (learners.OracleRow): fits,
// nonconverged_fits and fit_seconds count every variant's (each was
// selected and fit, to be chosen among).
func (e *Experiment) oracleRow(a arm, rows []results.Row) results.Row {
	return learners.OracleRow(rows, a.label, a.learner, a.settings, "fits", "nonconverged_fits", "fit_seconds")
}

// selectRow runs arm a's selection method on unit u's folds over the
// candidates λ × fits (one learner: the λ grid; a private grid: every
// variant at every λ), drawing from rng, and returns the row of the
// released model scored on the test fold W. fits are a.fits[first:].
func (e *Experiment) selectRow(ctx context.Context, u unit, a arm, first int, fits []learners.Learner, rng *rand.Rand) (results.Row, error) {
	key := u.key
	ds := e.data[u.ds]
	train, val, test := roles(e.folds[foldKey(ds.Name, u.rep)], u.fold)
	c := &classifierCandidates{
		ctx: ctx, learners: fits, lambdas: e.spec.Tuning.Lambdas, terms: a.terms, ds: ds, trainIdx: train, valIdx: val,
		train: e.all[u.ds].Subset(train), val: e.all[u.ds].Subset(val), beta: math.NaN(), all: e.all[u.ds],
	}
	// The parts of T a splitting method trains on are this unit's alone:
	// their scratch files (an external learner's) go when it ends.
	c.partScope = "parts/" + key
	defer e.ReleaseScratch(c.partScope)
	alpha := u.alpha
	sel, err := a.sel.Select(ctx, rng, c, e.spec.Tuning.budget(alpha))
	if err != nil {
		return nil, err
	}
	recordSelection(rng, a.sel, sel, mech.Records{Dataset: ds.Name, Part: "T,V", Index: slices.Concat(train, val), N: len(train) + len(val)})
	model, ok := sel.Fit.Model.(learners.Model)
	if !ok || sel.Index < 0 || sel.Index >= c.K() || sel.Fit.Index != sel.Index {
		return nil, fmt.Errorf("cvtune: %s: selector %s released candidate %d (fit of %d, model %T) of %d", key, a.sel.Name(), sel.Index, sel.Fit.Index, sel.Fit.Model, c.K())
	}
	priv, err := accountColumns(sel.Account)
	if err != nil {
		return nil, fmt.Errorf("%s: selector %s: %w", key, a.sel.Name(), err)
	}
	li, vi := c.candidate(sel.Index)

	// Score the released model on the test fold W.
	W := e.all[u.ds].Subset(test)
	margins := model.Margins(nil, W)
	yW := W.Y()
	probs := metrics.LogisticProbs(nil, margins)

	r := results.Row{}
	r.Set("experiment", e.spec.ID)
	r.Set("dataset", ds.Name)
	r.Set("data_source", ds.Source.Kind)
	r.Set("method", a.label)
	if e.explicit {
		r.Set("learner", fits[vi].Name())
		if a.grid == experiments.GridPrivate {
			r.Set("learner", a.learner)
		}
	}
	if e.grids {
		r.Set("setting", a.settings[first+vi].Label)
	}
	r.SetFloat("alpha", alpha)
	r.SetInt("rep", u.rep)
	r.SetInt("fold", u.fold)
	r.Set("unit", key)
	r.SetInt("index", li+1)
	r.SetFloat("lambda", e.spec.Tuning.Lambdas[li])
	r.SetFloat("auc", metrics.AUC(margins, yW))
	r.SetFloat("mse", metrics.Brier(probs, yW))
	r.SetFloat("error_rate", metrics.ErrorRate(margins, yW))
	r.SetFloat("val_score", sel.Fit.Score)
	r.SetInt("n_train", len(train))
	r.SetInt("n_val", len(val))
	r.SetInt("n_test", len(test))
	_, d := ds.X.Dims()
	r.SetInt("d", d)
	r.SetInt("fits", sel.Fits)
	r.SetInt("nonconverged_fits", c.nonconverged)
	r.SetFloat("eps_train", priv.train)
	r.SetFloat("eps_tuning", priv.tuning)
	if e.deltaColumns() {
		r.SetFloat("delta_train", priv.trainDelta)
		r.SetFloat("delta_tuning", priv.tuningDelta)
	}
	r.SetFloat("delta", priv.delta)
	r.SetFloat("eps_total", priv.total)
	r.Set("private", strconv.FormatBool(priv.private))
	if rep, ok := model.(learners.Reporter); ok {
		fr := rep.Report()
		r.SetFloat("eps_prime", fr.EpsPrime)
		r.Set("objpert_fallback", strconv.FormatBool(fr.Fallback))
		r.Set("solver_status", fr.Solver)
		r.SetFloat("grad_norm", fr.GradNorm)
		r.SetInt("newton_iter", fr.Iter)
	} else {
		r.SetFloat("eps_prime", math.NaN())
		r.Set("objpert_fallback", "false")
		r.SetFloat("grad_norm", math.NaN())
	}
	r.Set("status", c.status())
	learners.SetDiagnostics(model, r.SetFloat) // the released fit's
	r.SetFloat("fit_seconds", c.fitSeconds)    // to timings.csv, not rows.csv (runner.Timer)
	return r, nil
}

// classifierCandidates are the candidates λ ∈ Θ of one cv-tuning unit,
// trained by a Learner on (T, V): the training procedure T = (G, F) of
// Chaudhuri & Vinterbo's Section 2. The validation score is the mean
// negated ramp loss on V, the errors the error count on V (sensitivity 1).
type classifierCandidates struct {
	ctx      context.Context    // the unit's: Train returns its error once it is done
	learners []learners.Learner // the variants: candidate i is learners[i/len(lambdas)] at lambdas[i%len(lambdas)]
	lambdas  []float64
	terms    selection.Terms
	ds       *datasets.Dataset
	all      *learners.Data // every row of ds: T, V and the parts are its Subsets
	trainIdx []int
	valIdx   []int // V's rows, for the scope of a selection (mech.Scope)
	train    *learners.Data
	parts    []*learners.Data
	val      *learners.Data
	margins  []float64

	partScope    string // the scratch scope of the parts of T (Split): the unit's own
	nonconverged int
	fitSeconds   float64 // wall-clock seconds of the unit's fits (timings.csv)
	fits         int     // training runs
	over         int     // fits whose guarantee is over their level
	overNote     string  // CheckLevel's note on the first of them
	under        int     // fits whose guarantee is below their level
	underNote    string  // CheckLevel's note on the first of them
	beta         float64 // β handed out by StabilityBeta; NaN if none
}

// status is the row's status ([learners.RowStatus]): "ok", or "warning: " and what
// went wrong (fits that did not converge; fits whose guarantee is over or
// below their level, see [learners.CheckLevel]).
func (c *classifierCandidates) status() string {
	var parts []string
	if c.nonconverged > 0 {
		parts = append(parts, fmt.Sprintf("%d fit(s) did not converge", c.nonconverged))
	}
	if c.over > 0 {
		parts = append(parts, fmt.Sprintf("%s (%d of %d fits over their level)", c.overNote, c.over, c.fits))
	}
	if c.under > 0 {
		parts = append(parts, fmt.Sprintf("%s (%d of %d fits below their level)", c.underNote, c.under, c.fits))
	}
	return learners.RowStatus(parts...)
}

// K is the number of candidates: every λ of every variant.
func (c *classifierCandidates) K() int { return len(c.lambdas) * len(c.learners) }

// candidate returns the λ index and the variant of candidate i: λ varies
// fastest, so that a single learner's candidates are the λ grid.
func (c *classifierCandidates) candidate(i int) (lambda, variant int) {
	return i % len(c.lambdas), i / len(c.lambdas)
}
func (c *classifierCandidates) Terms() selection.Terms { return c.terms }

// Split draws a uniformly random partition of T into parts parts (each
// sorted) from rng.
func (c *classifierCandidates) Split(rng *rand.Rand, parts int) error {
	if parts < 1 || parts > len(c.trainIdx) {
		return fmt.Errorf("cvtune: cannot split %d training rows into %d parts", len(c.trainIdx), parts)
	}
	perm := rng.Perm(len(c.trainIdx))
	idx := make([][]int, parts)
	for j, i := range perm {
		idx[j%parts] = append(idx[j%parts], c.trainIdx[i])
	}
	c.parts = c.parts[:0]
	for _, part := range idx {
		slices.Sort(part)
		c.parts = append(c.parts, c.all.Subset(part))
	}
	return nil
}

// Train fits candidate i with the learner, after checking ctx, so that a
// unit, which trains up to 2k candidates, stops within one fit.
func (c *classifierCandidates) Train(rng *rand.Rand, i int, level learners.Level, part, parts int) (selection.Fit, error) {
	if err := c.ctx.Err(); err != nil {
		return selection.Fit{}, err
	}
	if i < 0 || i >= c.K() {
		return selection.Fit{}, fmt.Errorf("cvtune: candidate %d of %d", i, c.K())
	}
	li, vi := c.candidate(i)
	learner, lambda := c.learners[vi], c.lambdas[li]
	rows, records := c.train, mech.Records{Dataset: c.ds.Name, Part: "T", Index: c.trainIdx, N: len(c.trainIdx)}
	fitCtx := c.ctx
	if parts > 1 {
		fitCtx = runner.WithScratchScope(c.ctx, c.partScope)
		if parts != len(c.parts) || part < 0 || part >= parts {
			return selection.Fit{}, fmt.Errorf("cvtune: part %d of %d asked, %d prepared by Split", part, parts, len(c.parts))
		}
		rows = c.parts[part]
		records = mech.Records{Dataset: c.ds.Name, Part: fmt.Sprintf("T part %d/%d", part+1, parts), Index: rows.Index(), N: rows.N()}
	}
	mech.Scope(rng, fmt.Sprintf("training: %s of candidate %d (lambda=%v) at %v", learner.Name(), i+1, lambda, level), records)
	start := time.Now()
	m, g, err := learner.Fit(fitCtx, rng, rows, lambda, level)
	c.fitSeconds += time.Since(start).Seconds()
	if err != nil {
		return selection.Fit{}, fmt.Errorf("learner %s: %w", learner.Name(), err)
	}
	if m == nil {
		return selection.Fit{}, fmt.Errorf("cvtune: learner %s returned no model", learner.Name())
	}
	if err := g.Validate(); err != nil {
		return selection.Fit{}, fmt.Errorf("cvtune: learner %s: %w", learner.Name(), err)
	}
	learners.RecordDeclared(rng, learner, g, rows.D())
	check, err := learners.CheckLevel(learner.Name(), g, level)
	if err != nil {
		return selection.Fit{}, err
	}
	if check.Over {
		if c.over == 0 {
			c.overNote = check.Note
		}
		c.over++
	}
	if check.Under && !check.Over {
		if c.under == 0 {
			c.underNote = check.Note
		}
		c.under++
	}
	c.fits++
	if rep, ok := m.(learners.Reporter); ok && !rep.Report().Converged {
		c.nonconverged++
	}
	c.margins = m.Margins(c.margins, c.val)
	yV := c.val.Y()
	return selection.Fit{
		Index: i, Level: level, Guarantee: check.Booked, Model: m,
		Score:  metrics.RampScore(c.margins, yV),
		Errors: float64(metrics.ErrorCount(c.margins, yV)),
	}, nil
}

// SelectionRecords implements selection's scoper: V, or T and V for a selection
// whose privacy rests on both (Algorithm 1's β = max(β₁/n, β₂/m)).
func (c *classifierCandidates) SelectionRecords(withT bool) mech.Records {
	if withT {
		return mech.Records{Dataset: c.ds.Name, Part: "T,V", Index: union(c.trainIdx, c.valIdx), N: len(c.trainIdx) + len(c.valIdx)}
	}
	return mech.Records{Dataset: c.ds.Name, Part: "V", Index: c.valIdx, N: len(c.valIdx)}
}

func (c *classifierCandidates) StabilityBeta(alpha1, delta float64) (float64, error) {
	// Every candidate (λ, variant) must be stable: β is the largest of
	// the variants' (Definition 2 holds with a larger β).
	c.beta = 0
	for _, l := range c.learners {
		s, ok := l.(learners.StableLearner)
		if !ok {
			return 0, fmt.Errorf("cvtune: learner %s has no stability constants (Definition 2 of Chaudhuri & Vinterbo 2013)", l.Name())
		}
		b1, b2, err := s.StabilityConstants(c.ctx, c.lambdas, c.train.N(), alpha1, delta)
		if err != nil {
			return 0, err
		}
		c.beta = math.Max(c.beta, tune.StabilityBeta(b1, b2, c.train.N(), c.val.N()))
	}
	return c.beta, nil
}

// Metrics are the summarized metrics of the cv-tuning kind, against
// x = α.
var Metrics = []string{"auc", "mse", "index", "error_rate"}

// armLabel returns the method column of the rows of selection method
// under learner: "<method>/<learner>" when the spec lists tuning.learners
// (explicit), else the method's name.
func armLabel(method, learner string, explicit bool) string {
	if explicit {
		return method + "/" + learner
	}
	return method
}

// Summary implements runner.Experiment: metrics auc, mse, index and
// error_rate ([Metrics]) against x = α.
func (e *Experiment) Summary(rows []results.Row) []results.SummaryRow {
	return results.Summarize(rows, results.SummaryOptions{
		Experiment: e.spec.ID, XName: "alpha", XCol: "alpha",
		Metrics:   Metrics,
		Bootstrap: e.spec.Output.Bootstrap, Level: e.spec.Output.CILevel, Seed: e.spec.Seed,
	})
}

// labels returns the rows' method labels of arms, in order.
func labels(arms []arm) []string {
	out := make([]string, len(arms))
	for i, a := range arms {
		out[i] = a.label
	}
	return out
}

// FigureStyles are the colour and marker of each selection method of
// Chaudhuri & Vinterbo 2013 in every figure of the paper's specs (the
// classifier's and the histogram's): stability red rings, alphaSplit
// green squares, dataSplit blue triangles, random orange plusses, control
// purple dots. A "<method>/<learner>" label keeps its method's colour.
var FigureStyles = map[string]plots.Style{
	selection.Stability{}.Name():  {Color: plots.PaletteColor(1), Shape: plots.PaletteShape(0)},
	selection.AlphaSplit{}.Name(): {Color: plots.PaletteColor(2), Shape: plots.PaletteShape(1)},
	selection.DataSplit{}.Name():  {Color: plots.PaletteColor(0), Shape: plots.PaletteShape(2)},
	selection.Random{}.Name():     {Color: plots.PaletteColor(3), Shape: plots.PaletteShape(3)},
	selection.Control{}.Name():    {Color: plots.PaletteColor(4), Shape: plots.PaletteShape(4)},
}

// foldsCaption says what a point of a cross-validated figure is a mean
// over.
func foldsCaption(cv CVSpec) plots.Caption {
	return plots.Caption{Replicates: fmt.Sprintf("%d × %d-fold CV: n = %d test folds per point", cv.Repetitions, cv.Folds, cv.Repetitions*cv.Folds)}
}

// Figures implements runner.Experiment: Chaudhuri & Vinterbo 2013,
// Figure 1a (AUC), 1b (MSE) and 2 (chosen regularizer index).
func (e *Experiment) Figures() []plots.FigureSpec {
	base := plots.FigureSpec{XLabel: "privacy level α", LogX: true, Methods: labels(e.arms), Styles: FigureStyles,
		Jitter: 0.15, Caption: foldsCaption(e.spec.CV)}
	mk := func(name, title, metric, ylabel string) plots.FigureSpec {
		f := base
		f.Name, f.Title, f.Metric, f.YLabel = name, title, metric, ylabel
		return f
	}
	return []plots.FigureSpec{
		mk("fig1a-auc", "Figure 1a: test AUC", "auc", "AUC"),
		mk("fig1b-mse", "Figure 1b: test MSE", "mse", "MSE (Brier)"),
		mk("fig2-index", "Figure 2: chosen regularizer index", "index", "index of λ in Θ"),
	}
}

// Datasets implements runner.Experiment.
func (e *Experiment) Datasets() []results.DatasetInfo { return specdata.Infos(e.spec.Spec, e.data) }

// learnerNames returns the names of the learners the spec runs:
// tuning.learners, or the default.
func (e *Experiment) learnerNames() []string {
	if len(e.spec.Tuning.Learners) == 0 {
		return []string{learners.Default}
	}
	return e.spec.Tuning.Learners
}

// Warnings implements runner.Experiment: the datasets' notes, a
// [[methods]] learner table no learner list names, and the learners'
// notes ([learners.Warner]).
func (e *Experiment) Warnings() []string {
	w := specdata.Warnings(e.data)
	w = append(w, learners.UnusedTables(e.spec.Spec, e.learnerNames(), "tuning.learners")...)
	seen := map[string]bool{}
	for _, a := range e.arms {
		for _, l := range a.fits {
			name := l.Name()
			if seen[name] {
				continue
			}
			seen[name] = true
			if lw, ok := l.(learners.Warner); ok {
				w = append(w, lw.Warnings()...)
			}
		}
	}
	return w
}

// RowWarnings implements runner.RowWarner: for each method label whose
// rows report fits over or below their level (a learner that returned
// more, or less, than the level it was handed, see [learners.Learner]), how many
// rows, the first such note and what was booked ([learners.LevelWarnings]).
func (e *Experiment) RowWarnings(rows []results.Row) []string {
	return learners.LevelWarnings(rows, labels(e.arms), "eps_*, delta_* and the ledger book what the learner returned",
		"eps_*, delta_* and the ledger book the level, which is what the protocol spends")
}

// FigureMarks implements runner.FigureMarker: the points (dataset,
// method label, α) whose rows report fits over their level
// ([learners.OverLevelMarks]), which the figures ring.
func (e *Experiment) FigureMarks(rows []results.Row) ([]plots.Mark, string) {
	return learners.OverLevelMarks(rows, "alpha"), learners.OverLevelLabel
}

// Ledger implements runner.Experiment: for each method (label) and α, the
// largest charge seen over the units.
func (e *Experiment) Ledger(rows []results.Row) []results.LedgerEntry {
	return ledger(&e.spec.Tuning, e.arms, len(e.spec.Tuning.Lambdas), rows)
}

// ledger is the ledger of both tuning kinds. For each arm and α it takes
// the structure of the charges — part, data, what each covers, the
// composition rule — from the selector's Plan, and their values from the
// rows, which were written from the Accounts the selectors returned (the
// largest value over the units): a charge's ε is the largest eps_train or
// eps_tuning of its part (an infinite one is not private), its δ the
// largest delta_train or delta_tuning where the rows have those columns
// (else the plan's); the total is the largest eps_total and delta,
// private only if every row is. Where the rows report fits whose
// guarantee differs from their level ([learners.LevelNotes]), the training charge
// says so in Claimed (the learner's claim beside what is booked); a
// learner or selector that is not built in is named in DeclaredBy
// ([learners.DeclaredBy], [selection.DeclaredBy]).
func ledger(t *TuningSpec, arms []arm, k int, rows []results.Row) []results.LedgerEntry {
	cells := results.GroupLedger(rows, func(r results.Row) string { return r["method"] + "|" + r["alpha"] },
		[]string{"eps_train", "eps_tuning", "delta", "eps_total", "delta_train", "delta_tuning"}, learners.LevelNotes)
	var out []results.LedgerEntry
	for _, arm := range arms {
		for _, alpha := range t.Alphas {
			a := cells.Get(arm.label + "|" + results.FormatFloat(alpha))
			if a == nil {
				continue
			}
			le := results.LedgerEntry{Method: arm.label, Setting: "alpha=" + results.FormatFloat(alpha)}
			candidates := k
			if arm.grid == experiments.GridPrivate {
				candidates = k * len(arm.fits) // λ × variants
			}
			plan, err := arm.sel.Plan(t.budget(alpha), candidates, arm.terms)
			if err != nil {
				le.Rule = "selector " + arm.sel.Name() + ": plan: " + err.Error()
			}
			for _, c := range plan.Charges {
				eps, delta := c.Guarantee.Epsilon, math.NaN()
				switch c.Part {
				case selection.Training:
					eps, delta = a.Max("eps_train"), a.MaxPresent("delta_train")
				case selection.Tuning:
					eps, delta = a.Max("eps_tuning"), a.MaxPresent("delta_tuning")
				}
				if math.IsNaN(delta) {
					delta = c.Guarantee.Delta
				}
				g := booked(eps, delta, c.Guarantee.Private() && !math.IsInf(eps, 1))
				// Whose word the fits' guarantee is goes in the charge's
				// DeclaredBy (below), not in what it covers.
				ch := results.NewCharge(string(c.Part), c.Guarantee.Covers, c.Data, g)
				var declared []string
				if c.Part == selection.Training {
					for _, l := range arm.fits {
						if d := learners.DeclaredBy(l); d != "" && !slices.Contains(declared, d) {
							declared = append(declared, d)
						}
					}
					var claims []string
					for _, l := range arm.fits {
						if n, ok := l.(learners.Notioner); ok && n.Notion() == privacy.ZCDP {
							claims = append(claims, "ρ-zCDP claims, each stated as (ε, δ) at the δ of its fit's level (tuning.train_delta as the method splits it; Bun & Steinke 2016, Proposition 1.3) and composed as (ε, δ)")
							break
						}
					}
					for _, l := range arm.fits {
						if w := learners.AccountedBy(l); w != "" {
							claims = append(claims, w)
							break
						}
					}
					claims = append(claims, a.LevelClaims("rows", trimCount)...)
					ch.Claimed = strings.Join(claims, "; ")
				}
				if d := selection.DeclaredBy(arm.sel); d != "" {
					declared = append(declared, d)
				}
				ch.DeclaredBy = strings.Join(declared, ", ")
				le.Components = append(le.Components, ch)
			}
			if err == nil {
				le.Rule = plan.Rule
			}
			switch arm.grid {
			case experiments.GridPrivate:
				le.Rule = fmt.Sprintf("the candidates are every λ of tuning.lambdas for each of %d variants (%s): %d in all, selected as one grid. ", len(arm.fits), strings.Join(params.Labels(arm.settings), "; "), candidates) + le.Rule
			case experiments.GridOracle:
				le.Rule = fmt.Sprintf("not private: each row releases the one of %d variants (%s), each selected by %s as its own arm would be, with the highest test AUC, a choice that reads the test fold. ", len(arm.fits), strings.Join(params.Labels(arm.settings), "; "), arm.sel.Name()) + le.Rule
			}
			le.Total = results.NewTotal(booked(a.Max("eps_total"), a.Max("delta"), a.Private))
			out = append(out, le)
		}
	}
	return out
}

// trimCount drops the fit count a row's level note ends with ("… (3 of 3
// fits over their level)"): the ledger counts rows instead.
func trimCount(note string) string {
	if i := strings.LastIndex(note, " ("); i >= 0 && strings.HasSuffix(note, ")") && strings.Contains(note[i:], " fits ") {
		return note[:i]
	}
	return note
}

// booked is the guarantee the ledger books for values read from the rows:
// (ε, δ)-DP, pure when δ = 0, or not private (the values kept as the
// rows have them). The rows of the tuning kinds carry no ρ: accountColumns
// refuses zCDP.
func booked(eps, delta float64, private bool) privacy.Guarantee {
	notion := privacy.Pure
	switch {
	case !private:
		notion = privacy.None
	case delta > 0:
		notion = privacy.Approx
	}
	return privacy.Guarantee{Notion: notion, Epsilon: eps, Delta: delta}
}

// PairKey implements runner.Pairer: the columns that identify a replicate
// of the rows, the repetition and fold, at one dataset and α; the paper's
// claims comparing two methods are decided on differences paired by them
// (every method sees the same folds).
func (e *Experiment) PairKey() []string { return Kind.PairKey() }

// PairKey implements runner.Pairer, as Experiment.PairKey.
func (e *Hist) PairKey() []string { return HistKind.PairKey() }

// TimingColumns implements runner.Timer: the wall-clock seconds of each
// unit's fits (every candidate the selection trained, and the released
// one), by unit, for cost–accuracy plots; timings.csv, never rows.csv.
func (e *Experiment) TimingColumns() (keys, measured []string) {
	keys = []string{"unit", "dataset", "method", "alpha", "rep", "fold", "fits"}
	if e.explicit {
		keys = slices.Insert(keys, 3, "learner")
	}
	return keys, []string{"fit_seconds"}
}
