// Package cvtune is the "cv-tuning" experiment kind: repeated
// cross-validation of differentially private parameter tuning, as in
// Chaudhuri & Vinterbo (NIPS 2013), Section 5, Figures 1–2.
//
// A replicate unit is one (dataset, α, method, repetition, fold). In round f
// of a repetition, fold f is the test set W, fold (f mod K)+1 the validation
// set V and the other K−2 folds the training set T (1-based, as the paper
// writes it). Each method trains objective-perturbation logistic regression
// (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2) and selects λ from Θ;
// the released model is scored on W by AUC, MSE of the predicted
// probabilities (Brier score) and error rate.
package cvtune

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/metrics"
	"github.com/dprepro/dprepro/core/perturb"
	"github.com/dprepro/dprepro/core/tune"
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
	"github.com/dprepro/dprepro/runner/specdata"
)

// Columns is the rows.csv schema of the kind.
var Columns = []string{
	"experiment", "dataset", "data_source", "method", "alpha", "rep", "fold", "unit",
	"index", "lambda", "auc", "mse", "error_rate", "val_score",
	"n_train", "n_val", "n_test", "d", "fits", "nonconverged_fits",
	"eps_train", "eps_tuning", "delta", "eps_total", "private",
	"eps_prime", "objpert_fallback", "solver_status", "grad_norm", "newton_iter", "status",
}

// Experiment is a loaded cv-tuning spec.
type Experiment struct {
	spec  *Spec
	data  []*datasets.Dataset
	folds map[string][][]int // "dataset/rep" -> fold -> row indices
	units []string
	byKey map[string]unit
}

type unit struct {
	key    string // the unit key (runner.Unit)
	ds     int
	alpha  float64
	method string
	rep    int // 1-based
	fold   int // 1-based
}

// Key implements runner.Unit.
func (u unit) Key() string { return u.key }

// Options configures New.
type Options struct {
	// DataDir is the data directory; empty means the default search
	// (datasets.ResolveDataDir with no flag).
	DataDir string
	// Named reports that the user named DataDir (datasets.DataDir.Named):
	// a file absent from it is then an error unless the spec's
	// data.synthetic is "allow" or "always".
	Named bool
}

// New loads the datasets of spec and lays out the folds and units.
func New(es *experiments.Spec, o Options) (*Experiment, error) {
	spec, err := tuningSpec(es)
	if err != nil {
		return nil, err
	}
	e := &Experiment{spec: spec, folds: map[string][][]int{}, byKey: map[string]unit{}}
	for _, name := range spec.Data.Datasets {
		ds, err := specdata.Load(es, name, o.DataDir, o.Named)
		if err != nil {
			return nil, err
		}
		if ds.Task != "classification" {
			return nil, fmt.Errorf("%s: dataset %s is a %s dataset; cv-tuning needs classification", spec.ID, name, ds.Task)
		}
		n, _ := ds.X.Dims()
		k := len(spec.Tuning.Lambdas)
		if min := spec.CV.Folds * k * 2; n < min {
			return nil, fmt.Errorf("%s: dataset %s has %d rows; %d folds and dataSplit into %d parts need at least %d", spec.ID, name, n, spec.CV.Folds, k, min)
		}
		e.data = append(e.data, ds)
		for rep := 1; rep <= spec.CV.Repetitions; rep++ {
			e.folds[foldKey(name, rep)] = Partition(runner.Stream(es, "cv-partition", name, strconv.Itoa(rep)), n, spec.CV.Folds)
		}
	}
	for di, ds := range e.data {
		for _, a := range spec.Tuning.Alphas {
			for _, m := range spec.Tuning.Methods {
				for rep := 1; rep <= spec.CV.Repetitions; rep++ {
					for f := 1; f <= spec.CV.Folds; f++ {
						u := unit{ds: di, alpha: a, method: m, rep: rep, fold: f}
						key := fmt.Sprintf("%s/alpha=%s/%s/rep=%d/fold=%d", ds.Name, results.FormatFloat(a), m, rep, f)
						e.units = append(e.units, key)
						e.byKey[key] = u
					}
				}
			}
		}
	}
	return e, nil
}

func foldKey(name string, rep int) string { return name + "/" + strconv.Itoa(rep) }

// Partition returns a uniformly random partition of 0..n-1 into k folds whose
// sizes differ by at most one; each fold's indices are sorted.
func Partition(rng *rand.Rand, n, k int) [][]int {
	perm := rng.Perm(n)
	folds := make([][]int, k)
	for j, i := range perm {
		folds[j%k] = append(folds[j%k], i)
	}
	for _, f := range folds {
		slices.Sort(f)
	}
	return folds
}

// choose runs tuning method on p at total privacy alpha: Stability as
// Algorithms 1–2 at α₁ = α₂ = α/2 with the given β, or one of the
// alternatives of Section 5. Both tuning kinds select through it.
func choose[H any](rng *rand.Rand, p tune.Procedure[H], method string, alpha, beta float64) (tune.Choice[H], error) {
	switch method {
	case "stability":
		return tune.Stability(rng, p, alpha/2, alpha/2, beta)
	case "alphaSplit":
		return tune.AlphaSplit(rng, p, alpha)
	case "dataSplit":
		return tune.DataSplit(rng, p, alpha)
	case "random":
		return tune.Random(rng, p, alpha)
	case "control":
		return tune.Control(rng, p, alpha)
	}
	return tune.Choice[H]{}, fmt.Errorf("cvtune: unknown method %q", method)
}

// stopping is a tuning procedure whose Train returns ctx's error once ctx
// is done, so that a unit, which trains up to 2k candidates, stops within
// one candidate's training. It draws nothing.
type stopping[H any] struct {
	tune.Procedure[H]
	ctx context.Context
}

// Train implements tune.Procedure.
func (s stopping[H]) Train(rng *rand.Rand, i int, epsilon float64, part, parts int) (H, error) {
	if err := s.ctx.Err(); err != nil {
		var zero H
		return zero, err
	}
	return s.Procedure.Train(rng, i, epsilon, part, parts)
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

// Units implements runner.Experiment.
func (e *Experiment) Units() []runner.Unit {
	us := make([]runner.Unit, len(e.units))
	for i, k := range e.units {
		u := e.byKey[k]
		u.key = k
		us[i] = u
	}
	return us
}

// Columns implements runner.Experiment.
func (e *Experiment) Columns() []string { return Columns }

// RunUnit implements runner.Experiment.
func (e *Experiment) RunUnit(ctx context.Context, ru runner.Unit, env runner.Env) ([]results.Row, error) {
	u, ok := ru.(unit)
	if !ok {
		return nil, fmt.Errorf("cvtune: unit %q is not of this experiment", ru.Key())
	}
	key := u.key
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ds := e.data[u.ds]
	train, val, test := roles(e.folds[foldKey(ds.Name, u.rep)], u.fold)

	rng := env.RNG()
	p, err := newProcedure(e.spec, ds, train, val, u.method == "dataSplit", rng)
	if err != nil {
		return nil, err
	}
	alpha := u.alpha
	b1, b2 := tune.RampStabilityConstants(minFloat(e.spec.Tuning.Lambdas))
	p.ctx = ctx
	c, err := choose[*model](rng, stopping[*model]{p, ctx}, u.method, alpha, tune.StabilityBeta(b1, b2, len(train), len(val)))
	if err != nil {
		return nil, err
	}

	// Score the released model on the test fold W.
	W := erm.NewRows(ds.X, ds.Y, test)
	margins := W.Margins(nil, c.Model.w)
	yW := W.Y()
	probs := metrics.LogisticProbs(nil, margins)

	r := results.Row{}
	r.Set("experiment", e.spec.ID)
	r.Set("dataset", ds.Name)
	r.Set("data_source", ds.Source.Kind)
	r.Set("method", u.method)
	r.SetFloat("alpha", alpha)
	r.SetInt("rep", u.rep)
	r.SetInt("fold", u.fold)
	r.Set("unit", key)
	r.SetInt("index", c.Index+1)
	r.SetFloat("lambda", e.spec.Tuning.Lambdas[c.Index])
	r.SetFloat("auc", metrics.AUC(margins, yW))
	r.SetFloat("mse", metrics.Brier(probs, yW))
	r.SetFloat("error_rate", metrics.ErrorRate(margins, yW))
	r.SetFloat("val_score", c.Model.q)
	r.SetInt("n_train", len(train))
	r.SetInt("n_val", len(val))
	r.SetInt("n_test", len(test))
	_, d := ds.X.Dims()
	r.SetInt("d", d)
	r.SetInt("fits", c.Fits)
	r.SetInt("nonconverged_fits", p.nonconverged)
	priv := e.privacy(u.method, alpha, c, p)
	r.SetFloat("eps_train", priv.train)
	r.SetFloat("eps_tuning", priv.tuning)
	r.SetFloat("delta", priv.delta)
	r.SetFloat("eps_total", priv.total)
	r.Set("private", strconv.FormatBool(priv.private))
	r.SetFloat("eps_prime", c.Model.plan.EpsilonPrime)
	r.Set("objpert_fallback", strconv.FormatBool(c.Model.plan.Fallback))
	r.Set("solver_status", c.Model.res.Status)
	r.SetFloat("grad_norm", c.Model.res.GradNorm)
	r.SetInt("newton_iter", c.Model.res.Iter)
	status := "ok"
	if p.nonconverged > 0 {
		status = fmt.Sprintf("warning: %d fit(s) did not converge", p.nonconverged)
	}
	r.Set("status", status)
	return []results.Row{r}, nil
}

type privacy struct {
	train, tuning, delta, total float64
	private                     bool
}

// privacy composes what the unit's released output cost. Training charges
// are the ε each fit actually delivered (perturb.ObjPertPlan.EpsilonDelivered,
// which differs from the requested ε only for the labelled dplr2013
// variant).
//
//   - stability: Theorem 2: (α₁ + α₂, δ), α₁ the final fit's ε, α₂ = α/2.
//   - alphaSplit: k fits on T compose sequentially (Σ ε_i), the exponential
//     mechanism costs α on V; T and V are disjoint, so the total is the max
//     (Theorem 5).
//   - dataSplit: fits on disjoint parts of T compose in parallel (max ε_i);
//     total max(that, α) as above.
//   - random: the final fit only; the choice is data-independent.
//   - control: k fits at α on T (Σ ε_i); the selection is not private.
func (e *Experiment) privacy(method string, alpha float64, c tune.Choice[*model], p *procedure) privacy {
	switch method {
	case "stability":
		t := c.Model.plan.EpsilonDelivered
		return privacy{train: t, tuning: alpha / 2, delta: e.spec.Tuning.Delta, total: t + alpha/2, private: true}
	case "alphaSplit":
		t := p.sumDelivered
		return privacy{train: t, tuning: alpha, total: math.Max(t, alpha), private: true}
	case "dataSplit":
		t := p.maxDelivered
		return privacy{train: t, tuning: alpha, total: math.Max(t, alpha), private: true}
	case "random":
		t := c.Model.plan.EpsilonDelivered
		return privacy{train: t, total: t, private: true}
	default: // control: k fits on T compose sequentially; the argmax is not private
		return privacy{train: p.sumDelivered, tuning: math.Inf(1), total: math.Inf(1), private: false}
	}
}

// model is one trained candidate with its validation score.
type model struct {
	w    []float64
	q    float64 // ramp score on V
	errs float64 // error count on V
	plan perturb.ObjPertPlan
	res  erm.Result
}

// procedure is objective-perturbation logistic regression on (T, V): the
// training procedure T = (G, F) of Chaudhuri & Vinterbo's Section 2.
type procedure struct {
	lambdas []float64
	loss    erm.Loss
	variant string
	train   *erm.Rows
	parts   []*erm.Rows
	val     *erm.Rows
	noise   []float64
	margins []float64

	nonconverged int
	sumDelivered float64
	maxDelivered float64

	ctx context.Context // the unit's, for the fits; nil never stops
}

func newProcedure(spec *Spec, ds *datasets.Dataset, train, val []int, split bool, rng *rand.Rand) (*procedure, error) {
	var loss erm.Loss = erm.Logistic{}
	if spec.Tuning.Loss == "huber" {
		loss = erm.Huber{H: spec.Tuning.HuberH}
	}
	p := &procedure{
		lambdas: spec.Tuning.Lambdas,
		loss:    loss,
		variant: spec.Tuning.ObjPert,
		train:   erm.NewRows(ds.X, ds.Y, train),
		val:     erm.NewRows(ds.X, ds.Y, val),
	}
	if split {
		// dataSplit: partition T into k equal parts, drawn first from the
		// unit's stream.
		k := len(spec.Tuning.Lambdas)
		perm := rng.Perm(len(train))
		parts := make([][]int, k)
		for j, i := range perm {
			parts[j%k] = append(parts[j%k], train[i])
		}
		for _, part := range parts {
			slices.Sort(part)
			p.parts = append(p.parts, erm.NewRows(ds.X, ds.Y, part))
		}
	}
	_, d := ds.X.Dims()
	p.noise = make([]float64, d)
	return p, nil
}

func (p *procedure) K() int { return len(p.lambdas) }

func (p *procedure) Train(rng *rand.Rand, i int, epsilon float64, part, parts int) (*model, error) {
	rows := p.train
	if parts > 1 {
		if parts != len(p.parts) {
			return nil, fmt.Errorf("cvtune: %d parts asked, %d prepared", parts, len(p.parts))
		}
		rows = p.parts[part]
	}
	plan, err := perturb.PlanObjPert(perturb.ObjPertOptions{
		Epsilon: epsilon, Lambda: p.lambdas[i], Loss: p.loss, Variant: p.variant,
	}, rows.N())
	if err != nil {
		return nil, err
	}
	if err := plan.DrawNoise(p.noise, rng); err != nil {
		return nil, err
	}
	res, err := plan.Fit(rows, p.noise, erm.FitOptions{Context: p.ctx})
	if err != nil {
		return nil, err
	}
	if res.Status != "converged" {
		p.nonconverged++
	}
	p.sumDelivered += plan.EpsilonDelivered
	p.maxDelivered = math.Max(p.maxDelivered, plan.EpsilonDelivered)
	p.margins = p.val.Margins(p.margins, res.W)
	yV := p.val.Y()
	return &model{
		w:    res.W,
		q:    metrics.RampScore(p.margins, yV),
		errs: float64(metrics.ErrorCount(p.margins, yV)),
		plan: plan,
		res:  res,
	}, nil
}

func (p *procedure) Score(h *model) float64  { return h.q }
func (p *procedure) Errors(h *model) float64 { return h.errs }

// Summary implements runner.Experiment: metrics auc, mse, index and
// error_rate against x = α.
func (e *Experiment) Summary(rows []results.Row) []results.SummaryRow {
	return results.Summarize(rows, results.SummaryOptions{
		Experiment: e.spec.ID, XName: "alpha", XCol: "alpha",
		Metrics:   []string{"auc", "mse", "index", "error_rate"},
		Bootstrap: e.spec.Output.Bootstrap, Level: e.spec.Output.CILevel, Seed: e.spec.Seed,
	})
}

// Figures implements runner.Experiment: Chaudhuri & Vinterbo 2013,
// Figure 1a (AUC), 1b (MSE) and 2 (chosen regularizer index).
func (e *Experiment) Figures() []plots.FigureSpec {
	base := plots.FigureSpec{XLabel: "privacy level α", LogX: true, Methods: e.spec.Tuning.Methods, Jitter: 0.15}
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
func (e *Experiment) Datasets() []results.DatasetInfo {
	var out []results.DatasetInfo
	for _, ds := range e.data {
		out = append(out, specdata.Info(e.spec.Spec, ds))
	}
	return out
}

// Warnings implements runner.Experiment.
func (e *Experiment) Warnings() []string {
	w := specdata.Warnings(e.data)
	if e.spec.Tuning.ObjPert != "cms11" {
		w = append(w, fmt.Sprintf("objective perturbation variant %q: reproduces an older implementation and does not deliver the stated ε; see eps_train in rows.csv", e.spec.Tuning.ObjPert))
	}
	return w
}

// Ledger implements runner.Experiment: for each method and α, the largest
// charge seen over the units.
func (e *Experiment) Ledger(rows []results.Row) []results.LedgerEntry {
	return ledger(&e.spec.Tuning, rows, classifierWords)
}

// ledger is the ledger of both tuning kinds from their rows' eps_train,
// eps_tuning, delta and eps_total columns.
func ledger(t *TuningSpec, rows []results.Row, w ledgerWords) []results.LedgerEntry {
	type agg struct{ train, tuning, delta, total float64 }
	seen := map[string]*agg{}
	for _, r := range rows {
		k := r["method"] + "|" + r["alpha"]
		a := seen[k]
		if a == nil {
			a = &agg{}
			seen[k] = a
		}
		a.train = math.Max(a.train, r.Float("eps_train"))
		a.tuning = math.Max(a.tuning, r.Float("eps_tuning"))
		a.delta = math.Max(a.delta, r.Float("delta"))
		a.total = math.Max(a.total, r.Float("eps_total"))
	}
	var out []results.LedgerEntry
	for _, m := range t.Methods {
		for _, alpha := range t.Alphas {
			a := seen[m+"|"+results.FormatFloat(alpha)]
			if a == nil {
				continue
			}
			out = append(out, ledgerEntry(m, alpha, a.train, a.tuning, a.delta, a.total, w))
		}
	}
	return out
}

// ledgerWords describe a tuned training procedure in the ledger.
type ledgerWords struct {
	fit     string // one private training run, e.g. "objective-perturbation fit"
	param   string // the tuned parameter, e.g. "lambda"
	utility string // what the exponential mechanism ranks
	score   string // what Control maximizes
}

// classifierWords are the ledger words of the cv-tuning kind.
var classifierWords = ledgerWords{
	fit: "objective-perturbation fit", param: "lambda",
	utility: "validation error counts, p_i ∝ exp(-alpha e_i/2)", score: "validation ramp score",
}

func ledgerEntry(method string, alpha, train, tuning, delta, total float64, w ledgerWords) results.LedgerEntry {
	F := func(v float64) results.Float { return results.Float(v) }
	le := results.LedgerEntry{Method: method, Setting: "alpha=" + results.FormatFloat(alpha)}
	charge := func(part, release, data string, eps, delta float64, private bool) {
		le.Components = append(le.Components, results.LedgerCharge{Part: part, Release: release, Data: data, Epsilon: F(eps), Delta: F(delta), Private: private})
	}
	switch method {
	case "stability":
		charge("tuning", "Validate (Algorithm 1): k "+w.fit+"s at alpha/2, not released; noisy argmax with Exp noise", "T,V", tuning, delta, true)
		charge("training", "final release: "+w.fit+" at alpha/2 with fresh noise (Algorithm 2, line 3)", "T", train, 0, true)
		le.Rule = "Theorem 2 of Chaudhuri & Vinterbo 2013: (alpha1 + alpha2, delta)"
	case "alphaSplit":
		charge("training", "k "+w.fit+"s at alpha/k each (sequential composition)", "T", train, 0, true)
		charge("tuning", "exponential mechanism on "+w.utility, "V", tuning, 0, true)
		le.Rule = "Theorem 5: T and V disjoint, parallel composition: max(training, tuning)"
	case "dataSplit":
		charge("training", "k "+w.fit+"s at alpha on disjoint parts of T (parallel composition)", "T", train, 0, true)
		charge("tuning", "exponential mechanism on "+w.utility, "V", tuning, 0, true)
		le.Rule = "Theorem 5: T and V disjoint, parallel composition: max(training, tuning)"
	case "random":
		charge("training", "one "+w.fit+" at alpha for a uniformly chosen "+w.param, "T", train, 0, true)
		le.Rule = "the choice does not look at the data"
	case "control":
		charge("training", "k "+w.fit+"s at alpha each (sequential composition)", "T", train, 0, true)
		charge("tuning", "exact argmax of the "+w.score+" (NOT private)", "V", math.Inf(1), 0, false)
		le.Rule = "not private: reference upper bound"
	}
	le.Total = results.PrivacyGuarantee{Epsilon: F(total), Delta: F(delta), Private: method != "control"}
	return le
}

func minFloat(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}
