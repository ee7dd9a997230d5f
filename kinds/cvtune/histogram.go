package cvtune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/dprepro/dprepro/core/histogram"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/tune"
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/selection"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
	"github.com/dprepro/dprepro/runner/specdata"
)

// HistColumns is the rows.csv schema of the histogram-tuning kind.
var HistColumns = []string{
	"experiment", "dataset", "data_source", "method", "alpha", "rep", "fold", "unit",
	"index", "bins", "bin_width", "ise", "ise_estimate", "val_score",
	"n_train", "n_val", "n_test", "fits", "eps_train", "eps_tuning", "delta", "eps_total", "private",
	"beta", "status",
}

// sourceName is the dataset column of the rows of attribute a:
// "<dataset>:<column>".
func sourceName(a AttributeSpec) string { return a.Dataset + ":" + a.Column }

// HistMetrics are the summarized metrics of the histogram-tuning kind.
var HistMetrics = []string{"ise", "ise_estimate", "bin_width", "index"}

// histTerms are the ledger words of the histogram-tuning kind.
var histTerms = selection.Terms{
	Fit: "Algorithm 5 histogram", Param: "bin width",
	Utility: "the validation score scaled to sensitivity 1, -q(f,V)·m·h_min/2", Score: "validation score q (Eq. 6)",
}

// Hist is the "histogram-tuning" experiment kind: the histogram case study
// of Chaudhuri & Vinterbo 2013, Appendix 6.3, run as its classifier study
// is (Section 5): repeated K-fold CV, in round f fold f the test set W,
// fold (f mod K)+1 the validation set V and the rest the training set T;
// each method — a [selection.Selector] from the same registry as the cv-tuning
// kind's — chooses the number of bins of Algorithm 5
// ([histogram.Procedure]) and the released estimate is scored on W.
//
// Algorithm 5 is this kind's one learner: it reaches the selectors through
// [selection.Candidates] as the cv-tuning kind's learners do, but is not a registry
// entry, and a spec that sets tuning.learners is refused.
//
// A source is a synthetic density with a known f ([histogram.Densities];
// the exact ISE ∫(f̂ − f)² is reported) or a real numeric attribute mapped
// to [0, 1] by public bounds (only the test-fold estimate is available).
// ise_estimate = −q(f̂, W) = ISE − ∫f² up to sampling error on W, for both.
//
// Stability runs Algorithms 1–2 at α₁ = α₂ = α/2 with (β₁, β₂) of Theorem 6
// at the training α₁ and h_min; NewHist refuses a spec whose training folds
// are smaller than Theorem 6 requires at the smallest α, for every method
// that asks for β ([selection.StabilityUser]).
//
// Accounting: Algorithm 5 delivers exactly the ε it is handed (Laplace
// noise of scale 2/ε on counts whose replace-one sensitivity is 2), so a
// unit is charged its method's [Selector.Plan] — the paper's figures, e.g.
// alphaSplit's k runs at α/k compose to α (Theorem 5) rather than to a
// floating-point sum of k terms α/k — after checking that the Account
// composed from what the runs delivered agrees with the plan to a relative
// 1e-9 (a disagreement fails the unit). The cv-tuning kind charges the
// delivered Account itself, because its learners may deliver another ε
// than they are handed (the privatelr-1.1-69 variant of objective perturbation).
type Hist struct {
	spec    *HistSpec
	data    []*datasets.Dataset // real datasets, for provenance
	sources []*histSource
	arms    []arm // one per method; label = method name
	units   []string
	byKey   map[string]histUnit
}

type histSource struct {
	name    string
	kind    string // datasets.KindReal or KindSynthetic
	x       []float64
	f       histogram.Density // nil for a real attribute
	folds   [][][]int         // repetition → fold → indices
	clipped int               // points clipped to the public bounds
	info    results.DatasetInfo
	key     string // the spec key that asks for the source, for messages
	path    string // the key path as shown, e.g. "histogram.attributes[1]"
}

type histUnit struct {
	key       string // the unit key (runner.Unit)
	src       int
	alpha     float64
	arm       int
	rep, fold int // 1-based
}

// Key implements runner.Unit.
func (u histUnit) Key() string { return u.key }

func (u histUnit) withKey(k string) histUnit { u.key = k; return u }

// NewHist loads the sources of spec, lays out folds and units, and checks
// Theorem 6's sample-size requirement. The spec's tuning.methods must name
// registered selectors.
func NewHist(es *experiments.Spec, o Options) (*Hist, error) {
	spec, err := histSpec(es)
	if err != nil {
		return nil, err
	}
	if len(spec.Tuning.Learners) > 0 {
		return nil, es.Errorf("tuning.learners", "the histogram-tuning kind has one learner, Algorithm 5 of Chaudhuri & Vinterbo 2013; remove the key")
	}
	sels, err := resolveSelectors(es, &spec.Tuning)
	if err != nil {
		return nil, err
	}
	h := spec.Histogram
	e := &Hist{spec: spec, byKey: map[string]histUnit{}}
	for _, s := range sels {
		e.arms = append(e.arms, arm{label: s.Name(), sel: s, terms: histTerms})
	}
	for i, name := range h.Densities {
		path := fmt.Sprintf("histogram.densities[%d]", i)
		f, ok := histogram.Densities[name]
		if !ok {
			return nil, es.ErrorAt("histogram.densities", path, errors.New(experiments.Unknown("density", name, HistogramDensities)))
		}
		rng := runner.Stream(es, "histogram-tuning", "density", name)
		x := make([]float64, h.Records)
		for i := range x {
			x[i] = f.Rand(rng)
		}
		params := map[string]string{"weights": fmt.Sprint(f.W), "a": fmt.Sprint(f.A), "b": fmt.Sprint(f.B), "records": strconv.Itoa(h.Records)}
		e.sources = append(e.sources, &histSource{name: name, kind: datasets.KindSynthetic, x: x, f: f, key: "histogram.records", path: "histogram.records",
			info: results.DatasetInfo{Name: name, Source: datasets.KindSynthetic, Generator: "beta-mixture", Params: params, N: h.Records, D: 1, Preproc: "none: drawn on [0, 1]", Scaling: experiments.StatementPublic}})
	}
	loaded := map[string]*datasets.Dataset{}
	for i, a := range h.Attributes {
		path := fmt.Sprintf("histogram.attributes[%d]", i)
		ds := loaded[a.Dataset]
		if ds == nil {
			var err error
			if ds, err = specdata.Load(es, a.Dataset, o.DataDir, o.Named); err != nil {
				return nil, err
			}
			loaded[a.Dataset] = ds
			e.data = append(e.data, ds)
		}
		col := slices.Index(ds.FeatureNames, a.Column)
		if col < 0 {
			return nil, es.ErrorAt("histogram.attributes", path+".column", fmt.Errorf("dataset %s has no numeric column %q (columns: %v)", a.Dataset, a.Column, ds.FeatureNames))
		}
		n, _ := ds.X.Dims()
		s := &histSource{name: sourceName(a), kind: ds.Source.Kind, x: make([]float64, n), key: "histogram.attributes", path: path}
		for i := range s.x {
			v := (ds.X.At(i, col) - a.Lo) / (a.Hi - a.Lo)
			if v < 0 || v > 1 {
				s.clipped++
				v = math.Min(1, math.Max(0, v))
			}
			s.x[i] = v
		}
		s.info = specdata.Info(es, ds)
		s.info.Name = s.name
		s.info.D = 1
		s.info.Preproc += fmt.Sprintf("; column %s mapped to [0, 1] by public bounds [%v, %v], %d values clipped", a.Column, a.Lo, a.Hi, s.clipped)
		e.sources = append(e.sources, s)
	}
	k := len(h.Bins)
	hmin := 1 / float64(slices.Max(h.Bins))
	for si, s := range e.sources {
		n := len(s.x)
		if min, why := minRecords(spec.CV.Folds, k, e.arms); n < min {
			return nil, es.ErrorAt(s.key, s.path, fmt.Errorf("source %s has %d points; %s", s.name, n, why))
		}
		for _, a := range e.arms {
			su, ok := a.sel.(selection.StabilityUser)
			if !ok {
				continue
			}
			// The smallest training set: n minus the two largest folds.
			nTrain := n - 2*((n+spec.CV.Folds-1)/spec.CV.Folds)
			amin := slices.Min(spec.Tuning.Alphas)
			alpha1 := su.StabilityLevel(spec.Tuning.budget(amin))
			if _, _, err := histogram.StabilityConstants(hmin, k, nTrain, alpha1, spec.Tuning.Delta); err != nil {
				return nil, es.ErrorAt(s.key, s.path, fmt.Errorf("source %s, method %s, alpha = %v (training at %v): %w", s.name, a.sel.Name(), amin, alpha1, err))
			}
		}
		for rep := 1; rep <= spec.CV.Repetitions; rep++ {
			s.folds = append(s.folds, tune.Partition(runner.Stream(es, "cv-partition", s.name, strconv.Itoa(rep)), n, spec.CV.Folds))
		}
		for _, a := range spec.Tuning.Alphas {
			for ai, arm := range e.arms {
				for rep := 1; rep <= spec.CV.Repetitions; rep++ {
					for f := 1; f <= spec.CV.Folds; f++ {
						key := fmt.Sprintf("%s/alpha=%s/%s/rep=%d/fold=%d", s.name, results.FormatFloat(a), arm.label, rep, f)
						e.units = append(e.units, key)
						e.byKey[key] = histUnit{src: si, alpha: a, arm: ai, rep: rep, fold: f}
					}
				}
			}
		}
	}
	return e, nil
}

// Spec implements runner.Experiment.
func (e *Hist) Spec() *experiments.Spec { return e.spec.Spec }

// Units implements runner.Experiment.
func (e *Hist) Units() []runner.Unit { return runner.UnitsOf(e.units, e.byKey, histUnit.withKey) }

// Columns implements runner.Experiment.
func (e *Hist) Columns() []string { return HistColumns }

func values(x []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for i, j := range idx {
		out[i] = x[j]
	}
	return out
}

// RunUnit implements runner.Experiment.
func (e *Hist) RunUnit(ctx context.Context, ru runner.Unit, env runner.Env) ([]results.Row, error) {
	u, err := runner.Begin[histUnit](ctx, ru)
	if err != nil {
		return nil, err
	}
	key := u.key
	s := e.sources[u.src]
	trainIdx, valIdx, testIdx := roles(s.folds[u.rep-1], u.fold)
	train, val, test := values(s.x, trainIdx), values(s.x, valIdx), values(s.x, testIdx)
	bins := e.spec.Histogram.Bins
	p, err := histogram.NewProcedure(train, val, bins)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	rng := env.RNG()
	alpha := u.alpha
	a := e.arms[u.arm]
	c := &histCandidates{ctx: ctx, p: p, nTrain: len(train), nVal: len(val), beta: math.NaN(), source: s.name, trainIdx: trainIdx, valIdx: valIdx}
	b := e.spec.Tuning.budget(alpha)
	sel, err := a.sel.Select(ctx, rng, c, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	recordSelection(rng, a.sel, sel, mech.Records{Dataset: s.name, Part: "T,V", Index: slices.Concat(trainIdx, valIdx), N: len(trainIdx) + len(valIdx)})
	est, ok := sel.Fit.Model.(histogram.Estimate)
	if !ok || sel.Index < 0 || sel.Index >= p.K() || sel.Fit.Index != sel.Index {
		return nil, fmt.Errorf("%s: selector %s released candidate %d (fit of %d, model %T) of %d", key, a.sel.Name(), sel.Index, sel.Fit.Index, sel.Fit.Model, p.K())
	}
	// What the release cost: the method's plan, checked against what the
	// runs delivered (see Hist).
	plan, err := a.sel.Plan(b, p.K(), histTerms)
	if err != nil {
		return nil, fmt.Errorf("%s: selector %s: plan: %w", key, a.sel.Name(), err)
	}
	if err := agree(plan, sel.Account); err != nil {
		return nil, fmt.Errorf("%s: selector %s: %w", key, a.sel.Name(), err)
	}
	priv, err := accountColumns(plan)
	if err != nil {
		return nil, fmt.Errorf("%s: selector %s: %w", key, a.sel.Name(), err)
	}

	r := results.Row{}
	r.Set("experiment", e.spec.ID)
	r.Set("dataset", s.name)
	r.Set("data_source", s.kind)
	r.Set("method", a.label)
	r.SetFloat("alpha", alpha)
	r.SetInt("rep", u.rep)
	r.SetInt("fold", u.fold)
	r.Set("unit", key)
	r.SetInt("index", sel.Index+1)
	r.SetInt("bins", bins[sel.Index])
	r.SetFloat("bin_width", 1/float64(bins[sel.Index]))
	ise := math.NaN()
	if s.f != nil {
		ise = histogram.ISE(est, s.f)
	}
	r.SetFloat("ise", ise)
	r.SetFloat("ise_estimate", -histogram.Score(est, test))
	r.SetFloat("val_score", sel.Fit.Score)
	r.SetInt("n_train", len(train))
	r.SetInt("n_val", len(val))
	r.SetInt("n_test", len(test))
	r.SetInt("fits", sel.Fits)
	r.SetFloat("eps_train", priv.train)
	r.SetFloat("eps_tuning", priv.tuning)
	r.SetFloat("delta", priv.delta)
	r.SetFloat("eps_total", priv.total)
	r.Set("private", strconv.FormatBool(priv.private))
	r.SetFloat("beta", c.beta)
	r.Set("status", "ok")
	return []results.Row{r}, nil
}

// Summary implements runner.Experiment: ise (synthetic sources only),
// ise_estimate, bin_width and index against x = α.
func (e *Hist) Summary(rows []results.Row) []results.SummaryRow {
	all := results.Summarize(rows, results.SummaryOptions{
		Experiment: e.spec.ID, XName: "alpha", XCol: "alpha", Metrics: HistMetrics,
		Bootstrap: e.spec.Output.Bootstrap, Level: e.spec.Output.CILevel, Seed: e.spec.Seed,
	})
	// A real attribute has no exact ISE: drop its empty ise cells rather
	// than draw empty panels.
	return slices.DeleteFunc(all, func(r results.SummaryRow) bool { return r.Metric == "ise" && r.N == 0 })
}

// Figures implements runner.Experiment, as the classifier study's: the
// exact ISE (synthetic densities), the test-fold ISE estimate and the chosen
// bin width against α, one panel per source.
func (e *Hist) Figures() []plots.FigureSpec {
	base := plots.FigureSpec{XLabel: "privacy level α", LogX: true, Methods: labels(e.arms), Styles: FigureStyles,
		Jitter: 0.15, Caption: foldsCaption(e.spec.CV)}
	mk := func(name, title, metric, ylabel string, logY bool) plots.FigureSpec {
		f := base
		f.Name, f.Title, f.Metric, f.YLabel, f.LogY = name, title, metric, ylabel, logY
		return f
	}
	figs := []plots.FigureSpec{
		mk("ise-estimate", "Histogram: test-fold ISE estimate −q(f̂, W) = ISE − ∫f²", "ise_estimate", "ISE − ∫f² (lower is better)", false),
		mk("bin-width", "Histogram: chosen bin width", "bin_width", "bin width h", true),
	}
	if len(e.spec.Histogram.Densities) > 0 {
		figs = append([]plots.FigureSpec{mk("ise", "Histogram: exact ISE ∫(f̂ − f)² on known densities", "ise", "ISE (lower is better)", true)}, figs...)
	}
	return figs
}

// Datasets implements runner.Experiment.
func (e *Hist) Datasets() []results.DatasetInfo {
	var out []results.DatasetInfo
	for _, s := range e.sources {
		out = append(out, s.info)
	}
	return out
}

// Warnings implements runner.Experiment.
func (e *Hist) Warnings() []string {
	w := specdata.Warnings(e.data)
	for _, s := range e.sources {
		if s.clipped > 0 {
			w = append(w, fmt.Sprintf("source %s: %d of %d values lie outside the public bounds and were clipped", s.name, s.clipped, len(s.x)))
		}
	}
	return w
}

// Ledger implements runner.Experiment, as [Experiment.Ledger] does.
func (e *Hist) Ledger(rows []results.Row) []results.LedgerEntry {
	return ledger(&e.spec.Tuning, e.arms, len(e.spec.Histogram.Bins), rows)
}

// histCandidates are the candidate bin counts of one histogram unit:
// Algorithm 5 of Chaudhuri & Vinterbo 2013 on (T, V) through
// histogram.Procedure. Each run is pure ε-DP at the ε it is handed.
type histCandidates struct {
	ctx          context.Context // the unit's: Train returns its error once it is done
	p            *histogram.Procedure
	nTrain, nVal int
	parts        int     // set by Split
	source       string  // the source's name, for the scope of a release (mech.Scope)
	trainIdx     []int   // T's points, in the order of the procedure's T
	valIdx       []int   // V's points
	beta         float64 // β handed out by StabilityBeta; NaN if none
}

func (c *histCandidates) K() int                 { return c.p.K() }
func (c *histCandidates) Terms() selection.Terms { return histTerms }

// Split records the number of parts: histogram.Procedure cuts T into
// contiguous parts itself (T is already a uniformly random fold union, in
// index order), drawing nothing.
func (c *histCandidates) Split(_ *rand.Rand, parts int) error {
	if parts < 1 || parts > c.nTrain {
		return fmt.Errorf("cvtune: cannot split %d training points into %d parts", c.nTrain, parts)
	}
	c.parts = parts
	return nil
}

// Train runs Algorithm 5 for candidate i, after checking ctx, so that a
// unit, which trains up to 2k candidates, stops within one run.
func (c *histCandidates) Train(rng *rand.Rand, i int, level learners.Level, part, parts int) (selection.Fit, error) {
	if err := c.ctx.Err(); err != nil {
		return selection.Fit{}, err
	}
	if parts > 1 && parts != c.parts {
		return selection.Fit{}, fmt.Errorf("cvtune: part %d of %d asked, %d prepared by Split", part, parts, c.parts)
	}
	records := mech.Records{Dataset: c.source, Part: "T", Index: c.trainIdx, N: len(c.trainIdx)}
	if parts > 1 {
		lo, hi := histogram.PartRange(len(c.trainIdx), part, parts)
		records = mech.Records{Dataset: c.source, Part: fmt.Sprintf("T part %d/%d", part+1, parts), Index: c.trainIdx[lo:hi], N: hi - lo}
	}
	mech.Scope(rng, fmt.Sprintf("training: Algorithm 5 histogram of candidate %d at %v", i+1, level), records)
	est, err := c.p.Train(rng, i, level.Epsilon, part, parts)
	if err != nil {
		return selection.Fit{}, err
	}
	g := privacy.EpsDP(level.Epsilon, fmt.Sprintf("one Algorithm 5 histogram with %d bins (replace-one adjacency)", est.Bins()))
	return selection.Fit{Index: i, Level: level, Guarantee: g, Score: c.p.Score(est), Errors: c.p.Errors(est), Model: est}, nil
}

// SelectionRecords implements selection's scoper: V, or T and V.
func (c *histCandidates) SelectionRecords(withT bool) mech.Records {
	if withT {
		return mech.Records{Dataset: c.source, Part: "T,V", Index: union(c.trainIdx, c.valIdx), N: len(c.trainIdx) + len(c.valIdx)}
	}
	return mech.Records{Dataset: c.source, Part: "V", Index: c.valIdx, N: len(c.valIdx)}
}

func (c *histCandidates) StabilityBeta(alpha1, delta float64) (float64, error) {
	b1, b2, err := histogram.StabilityConstants(c.p.HMin(), c.p.K(), c.nTrain, alpha1, delta)
	if err != nil {
		return 0, err
	}
	c.beta = tune.StabilityBeta(b1, b2, c.nTrain, c.nVal)
	return c.beta, nil
}

// agree returns an error unless the accounts have the same charges (part,
// data, notion) and totals with ε and δ equal to a relative 1e-9.
func agree(plan, delivered selection.Account) error {
	near := func(a, b float64) bool {
		return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
	}
	same := func(p, d privacy.Guarantee) bool {
		return p.Notion == d.Notion && near(p.Epsilon, d.Epsilon) && near(p.Delta, d.Delta) && near(p.Rho, d.Rho)
	}
	if len(plan.Charges) != len(delivered.Charges) {
		return fmt.Errorf("plan has %d charges, the run %d", len(plan.Charges), len(delivered.Charges))
	}
	for i, p := range plan.Charges {
		d := delivered.Charges[i]
		if p.Part != d.Part || p.Data != d.Data || !same(p.Guarantee, d.Guarantee) {
			return fmt.Errorf("%s charge: plan %v on %s, the runs delivered %v on %s", p.Part, p.Guarantee, p.Data, d.Guarantee, d.Data)
		}
	}
	if !same(plan.Total, delivered.Total) {
		return fmt.Errorf("total: plan %v, the runs delivered %v", plan.Total, delivered.Total)
	}
	return nil
}
