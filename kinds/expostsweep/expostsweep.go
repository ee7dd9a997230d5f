// Package expostsweep is the "expost-sweep" experiment kind: the ex-post
// privacy loss of accuracy-first private ERM, as in Ligett, Neel, Roth,
// Waggoner & Wu, "Accuracy First: Selecting a Differential Privacy Level
// for Accuracy-Constrained ERM" (NeurIPS 2017), Section 4 and Appendix B,
// Figures 1–4.
//
// A replicate unit is one (dataset, method, α, trial). For each requested
// excess risk α it runs
//
//   - noise-reduction: the generator's noise-reduction sequence (CovNR,
//     Algorithm 3, or OutputNR, Algorithm 5, for the built-ins) over the
//     geometric grid ε_min … ε_max of T levels, tested by
//     InteractiveAboveThreshold (Algorithm 2); ex-post loss ε_A + εₜ
//     (Lemma 2.8);
//   - doubling: independent hypotheses at ε_min·2^k until the doubling
//     test accepts (Algorithm 4); loss k·ε_test + Σ εⱼ (Theorem A.2);
//   - theory: one run of the generator at the ε E that its utility theorem
//     needs for expected excess risk α (Theorem 3.1 for covariance
//     perturbation, 3.3 for logistic output perturbation);
//     theory-<generator>: the same with another registered generator, e.g.
//     theory-output, Theorem A.9, ridge output perturbation.
//
// ε_min = 1/n and ε_max = 4E as in Appendix B.1. The data are fixed for a
// run (one seeded subsample); the trials differ in their noise only.
//
// # Generators
//
// The private ERM method that the searches drive (accuracy_first.generator)
// is a [generators.Generator] looked up in the registry of package
// methods/generators: "covariance" and "output" are built in, and
// [generators.Register] adds others. A spec may also name a [[methods]]
// table with serves = "hypothesis": a [generators.External], a program
// speaking the worker protocol, whose guarantees the ledger reports as
// declared by the method.
// A generator declares its tasks and returns every release's privacy
// guarantee as a value; every privacy column of the rows and every charge
// of the ledger is computed from those values, never from a name. Each
// value is checked against the level the method asked for (an
// independent release's ε, the grid's εₜ for the accepted noise-reduction
// prefix, the theory ε): a claim above it is booked as claimed, one below
// it at the level — the search's ex-post accounting charges each release
// the level it was handed — and both are flagged in the row's status
// ("generator NAME returned ε=… for a level of ε=…", "…, below its level
// of …"), the manifest's warnings and stderr ([Experiment.RowWarnings]);
// the ledger shows the claim beside the booking. A generator that is not
// built in (external, or registered by a user's module) is labelled
// "declared by the method" ([generators.DeclaredBy]).
//
// The ε grid's scale E comes from a utility theorem
// (accuracy_first.grid_generator, default the spec's generator). A method
// with a generator suffix ("noise-reduction-output", "doubling-py-gen",
// "theory-output") runs with that generator on the same grid and tests,
// so that two generators can be compared in one run.
package expostsweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/floats"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/methods/generators"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
	"github.com/dprepro/dprepro/runner/specdata"
)

// Columns is the rows.csv schema of the kind. success_rate and
// accurate_rate are per-trial indicators (1/0) whose means are the rates.
var Columns = []string{
	"experiment", "dataset", "data_source", "task", "generator", "calibration", "method",
	"alpha", "trial", "unit",
	"success_rate", "accurate_rate", "stop", "levels", "tested", "exact_evals",
	"hypothesis_eps", "test_eps", "expost_eps", "expost_risk_factor",
	"test_eps_single", "expost_eps_single",
	"excess_risk", "excess_L", "norm", "norm_bound",
	"theory_eps", "eps_min", "eps_max", "query_sensitivity", "n", "p", "status",
}

// Metrics are the summarized metrics, against x = α.
var Metrics = []string{
	"expost_eps", "expost_risk_factor", "test_eps", "hypothesis_eps", "excess_risk",
	"success_rate", "norm", "accurate_rate", "expost_eps_single", "test_eps_single", "stop",
}

// Experiment is a loaded expost-sweep spec.
type Experiment struct {
	spec          *Spec
	cal           expost.Calibration
	gen           accfirst.Generator       // accuracy_first.generator
	grid          accfirst.TheoryGenerator // grid_generator (default: gen), whose theorem gives E
	methods       map[string]resolved      // accuracy_first.methods, bound to their generators
	external.Runs                          // the spec's external generators: runner.Opener and Versioner
	data          []*datasets.Dataset
	probs         []accfirst.Problem
	sets          []accfirst.Setting // per dataset
	units         []string
	byKey         map[string]unit
}

type unit struct {
	key    string // the unit key (runner.Unit)
	ds     int
	method string
	alpha  float64
	trial  int // 1-based
}

// Key implements runner.Unit.
func (u unit) Key() string { return u.key }

func (u unit) withKey(k string) unit { u.key = k; return u }

// Options configures New: where the datasets are read from.
type Options = runner.DataOptions

// New checks the spec's task, generator and methods against the kind and
// the generator registry, loads the datasets of spec, fits θ* on each and
// lays out the units. An unknown generator or method, or a generator that
// does not support the task, is an error naming the spec key and the known
// names.
func New(es *experiments.Spec, o Options) (*Experiment, error) {
	spec, err := expostSpec(es)
	if err != nil {
		return nil, err
	}
	af := spec.AccuracyFirst
	e := &Experiment{spec: spec, cal: expost.Calibration(af.Calibration), byKey: map[string]unit{}}
	if err := e.cal.Validate(); err != nil {
		return nil, es.ErrorAt("accuracy_first.calibration", "accuracy_first.calibration", err)
	}
	e.Methods = external.NewSet(es)
	built := false
	defer func() {
		if !built { // end the workers the handshakes started
			e.Methods.Close()
		}
	}()
	gl, err := startGenerators(es, &spec.AccuracyFirst, e.Methods)
	if err != nil {
		return nil, err
	}
	var errs []error
	e.gen, e.grid, e.methods = resolveNames(&spec.AccuracyFirst, gl, func(key, path, msg string) {
		errs = append(errs, es.ErrorAt(key, path, errors.New(msg)))
	})
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	task := accfirst.Task(af.Task)
	for _, name := range spec.Data.Datasets {
		ds, err := specdata.Load(es, name, o.DataDir, o.Named)
		if err != nil {
			return nil, err
		}
		var pr accfirst.Problem
		switch task {
		case accfirst.TaskRidge:
			if ds.Task != datasets.TaskRegression {
				return nil, specdata.At(es, name, fmt.Errorf("a %s dataset; task \"ridge\" needs regression", ds.Task))
			}
			risk := accfirst.RiskPaper
			if e.cal == expost.AuthorsCode {
				risk = accfirst.RiskAuthorsCode
			}
			pr, err = accfirst.NewRidge(ds.X, ds.Y, af.Lambda, risk)
		case accfirst.TaskLogistic:
			if ds.Task != datasets.TaskClassification {
				return nil, specdata.At(es, name, fmt.Errorf("a %s dataset; task \"logistic\" needs classification", ds.Task))
			}
			pr, err = accfirst.NewLogistic(ds.X, ds.Y, af.Lambda)
		default:
			return nil, es.Errorf("accuracy_first.task", "%s", experiments.Unknown("task", af.Task, taskNames()))
		}
		if err != nil {
			return nil, specdata.At(es, name, err)
		}
		set := accfirst.Setting{Task: task, Problem: pr, Calibration: e.cal}
		epsMin := af.EpsMin
		if epsMin == 0 {
			epsMin = 1 / float64(pr.N())
		}
		aMax := maxFloat(af.Alphas)
		eMax, err := e.grid.TheoryEpsilon(set, aMax, af.Gamma)
		if err != nil {
			return nil, es.ErrorAt("accuracy_first.generator", "accuracy_first.generator", fmt.Errorf("dataset %s: %w", name, err))
		}
		if !(epsMin < af.EpsMaxFactor*eMax) {
			key := "accuracy_first.eps_max_factor" // ε_min = 1/n: only ε_max can move
			if af.EpsMin != 0 {
				key = "accuracy_first.eps_min"
			}
			return nil, es.Errorf(key, "dataset %s: ε_min = %v is not below ε_max = %v·E = %v at the largest α = %v",
				name, epsMin, af.EpsMaxFactor, af.EpsMaxFactor*eMax, aMax)
		}
		// The grid of the smallest α reaches the largest ε_max: one that
		// overflows float64 would fail every unit of that α after the
		// others ran.
		aMin := slices.Min(af.Alphas)
		if eTop, err := e.grid.TheoryEpsilon(set, aMin, af.Gamma); err == nil && math.IsInf(af.EpsMaxFactor*eTop, 0) {
			return nil, es.Errorf("accuracy_first.eps_max_factor", "dataset %s: ε_max = %v·E = %v at the smallest α = %v: E overflows float64 (λ = %v); raise accuracy_first.lambda or the smallest α",
				name, af.EpsMaxFactor, af.EpsMaxFactor*eTop, aMin, af.Lambda)
		}
		for _, g := range gl.ext {
			if x, ok := g.(*generators.External); ok {
				x.Bind(pr, fmt.Sprintf("dataset%d", len(e.data)), ds.X, ds.Y)
			}
		}
		e.data = append(e.data, ds)
		e.probs = append(e.probs, pr)
		e.sets = append(e.sets, set)
	}
	for di, ds := range e.data {
		for _, m := range af.Methods {
			for _, a := range af.Alphas {
				for t := 1; t <= af.Trials; t++ {
					key := fmt.Sprintf("%s/%s/alpha=%s/trial=%d", ds.Name, m, results.FormatFloat(a), t)
					e.units = append(e.units, key)
					e.byKey[key] = unit{ds: di, method: m, alpha: a, trial: t}
				}
			}
		}
	}
	built = true
	return e, nil
}

// startGenerators returns the generators spec may name, starting the
// worker of every external generator it names (accuracy_first.generator,
// grid_generator, a method's suffix) to check its handshake; those it does
// not name stay placeholders.
func startGenerators(es *experiments.Spec, af *AccuracyFirstSpec, set *external.Set) (genLookup, error) {
	named := []string{af.Generator, af.GridGenerator}
	for _, m := range af.Methods {
		if _, g, ok := splitMethod(m); ok && g != "" {
			named = append(named, g)
		}
	}
	gl := genLookup{ext: map[string]accfirst.Generator{}}
	for _, name := range es.MethodNames(experiments.ServesHypothesis) {
		if _, registered := generators.Lookup(name); registered {
			continue // refused by the spec's validation
		}
		gl.order = append(gl.order, name)
		if !slices.Contains(named, name) {
			gl.ext[name] = pendingGenerator(name)
			continue
		}
		g, err := generators.NewExternal(context.Background(), set, name)
		if err != nil {
			var f *external.Fault
			if errors.As(err, &f) {
				return gl, err // the pool's error names the spec's line
			}
			key := fmt.Sprintf("methods[%d].command", es.MethodIndex(name))
			return gl, es.ErrorAt(key, key, err)
		}
		gl.ext[name] = g
	}
	return gl, nil
}

// Spec implements runner.Experiment.
func (e *Experiment) Spec() *experiments.Spec { return e.spec.Spec }

// Units implements runner.Experiment.
func (e *Experiment) Units() []runner.Unit { return runner.UnitsOf(e.units, e.byKey, unit.withKey) }

// Columns implements runner.Experiment.
func (e *Experiment) Columns() []string { return Columns }

// RunUnit implements runner.Experiment.
func (e *Experiment) RunUnit(ctx context.Context, ru runner.Unit, env runner.Env) ([]results.Row, error) {
	u, err := runner.Begin[unit](ctx, ru)
	if err != nil {
		return nil, err
	}
	key := u.key
	af := e.spec.AccuracyFirst
	ds, pr, set := e.data[u.ds], e.probs[u.ds], e.sets[u.ds]
	m, ok := e.methods[u.method]
	if !ok {
		return nil, fmt.Errorf("expostsweep: unit %q: unknown method %q", key, u.method)
	}
	gen := m.gen
	t := &trial{
		alpha: u.alpha, gamma: af.Gamma, steps: af.Steps,
		epsMin: af.EpsMin, cal: e.cal, set: set, gen: gen,
		genRNG: env.RNG("generate"), testRNG: env.RNG("test"),
		data: mech.Records{Dataset: ds.Name, Part: "all", N: pr.N()},
	}
	E, err := e.grid.TheoryEpsilon(set, u.alpha, af.Gamma)
	if err != nil {
		return nil, err
	}
	t.e = E
	if t.epsMin == 0 {
		t.epsMin = 1 / float64(pr.N())
	}
	t.epsMax = af.EpsMaxFactor * E
	t.delta = pr.QuerySensitivity(e.cal)

	res, err := m.run(ctx, t)
	if err != nil {
		return nil, err
	}
	out := res.out
	// The privacy columns, all from the outcome's guarantees: generating,
	// testing (single, and as the calibration reports it: both adaptive
	// methods' test losses are doubled under authors-code; a failure's
	// +Inf stays +Inf) and their sequential compositions.
	testReported := e.cal.ReportedTest(out.Test)
	single, err := out.Guarantee()
	if err != nil {
		return nil, err
	}
	total, err := privacy.Compose(privacy.Sequential, "the outcome as the calibration reports it", out.Generation, testReported)
	if err != nil {
		return nil, err
	}
	if total.Delta != 0 || total.Notion == privacy.ZCDP {
		return nil, fmt.Errorf("expostsweep: unit %q: guarantee %v: the rows carry ε only (pure or ex-post ε-DP)", key, total)
	}

	// The released hypothesis: the accepted one, or θ* on failure (⊥).
	theta := pr.ThetaStar()
	excess := 0.0
	status := "ok"
	if out.Hypothesis != nil {
		var err error
		if theta, err = out.Hypothesis.Theta(); err != nil {
			return nil, err
		}
		if excess, err = out.Hypothesis.Excess(); err != nil {
			return nil, err
		}
	} else {
		status = "failed: no hypothesis accepted; output θ* with infinite ex-post loss"
	}
	if notes := t.claims.notes(); len(notes) > 0 {
		// The generator claimed other than the level it was asked for.
		w := "warning: " + strings.Join(notes, "; ")
		if status == "ok" {
			status = w
		} else {
			status += "; " + w
		}
	}
	excessL := excess
	if ridge, ok := pr.(*accfirst.Ridge); ok {
		excessL = ridge.ExcessL(theta)
	}

	r := results.Row{}
	r.Set("experiment", e.spec.ID)
	r.Set("dataset", ds.Name)
	r.Set("data_source", ds.Source.Kind)
	r.Set("task", af.Task)
	r.Set("generator", af.Generator)
	r.Set("calibration", af.Calibration)
	r.Set("method", u.method)
	r.SetFloat("alpha", u.alpha)
	r.SetInt("trial", u.trial)
	r.Set("unit", key)
	r.SetInt("success_rate", b2i(out.Success))
	r.SetInt("accurate_rate", b2i(excess <= u.alpha))
	r.SetInt("stop", out.Stop)
	r.SetInt("levels", res.levels)
	r.SetInt("tested", out.Tested)
	r.SetInt("exact_evals", out.Exact)
	r.SetFloat("hypothesis_eps", out.Generation.Epsilon)
	r.SetFloat("test_eps", testReported.Epsilon)
	r.SetFloat("expost_eps", total.Epsilon)
	r.SetFloat("expost_risk_factor", math.Exp(total.Epsilon))
	r.SetFloat("test_eps_single", out.Test.Epsilon)
	r.SetFloat("expost_eps_single", single.Epsilon)
	r.SetFloat("excess_risk", excess)
	r.SetFloat("excess_L", excessL)
	r.SetFloat("norm", floats.Norm(theta, 2))
	r.SetFloat("norm_bound", pr.Radius())
	r.SetFloat("theory_eps", res.theoryEps)
	r.SetFloat("eps_min", t.epsMin)
	r.SetFloat("eps_max", t.epsMax)
	r.SetFloat("query_sensitivity", t.delta)
	r.SetInt("n", pr.N())
	r.SetInt("p", pr.P())
	r.Set("status", status)
	return []results.Row{r}, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Summary implements runner.Experiment. The privacy metrics of a failed
// trial are infinite (Theorems 3.2, 3.4, A.2: ℰ(⊥) = ∞); their means are
// taken over the successful trials and success_rate reports the rest.
func (e *Experiment) Summary(rows []results.Row) []results.SummaryRow {
	finite := make([]results.Row, len(rows))
	for i, r := range rows {
		c := r
		if r["success_rate"] == "0" {
			c = results.Row{}
			for k, v := range r {
				c[k] = v
			}
			for _, m := range []string{"expost_eps", "expost_risk_factor", "test_eps", "hypothesis_eps", "expost_eps_single", "test_eps_single"} {
				c.SetFloat(m, math.NaN())
			}
		}
		finite[i] = c
	}
	return withRiskFactorOfMean(results.Summarize(finite, results.SummaryOptions{
		Experiment: e.spec.ID, XName: "alpha", XCol: "alpha", Metrics: slices.DeleteFunc(slices.Clone(Metrics), func(m string) bool { return m == "expost_risk_factor" }),
		Bootstrap: e.spec.Output.Bootstrap, Level: e.spec.Output.CILevel, Seed: e.spec.Seed,
	}))
}

// withRiskFactorOfMean inserts after each expost_eps row (where Metrics
// puts it) the summary's expost_risk_factor, the paper's statistic: e
// raised to the mean ex-post loss of the cell, e^(mean ε), with its CI the
// image of expost_eps's CI under exp (exp is monotone) and sd not reported
// (NaN). It is derived, not bootstrapped again. Section 4 of Ligett et al.
// 2017 quotes "the privacy risk factor e^ε" of the losses its Figures 1–2
// plot, which are means over trials (e^ε ≈ 10.0 for noise reduction at
// α = 0.05 is e to the plotted mean ε); the mean of the per-trial e^ε
// (rows.csv's expost_risk_factor, the risk factor of each outcome,
// Definition 2.3) is larger by Jensen's inequality.
func withRiskFactorOfMean(sum []results.SummaryRow) []results.SummaryRow {
	out := make([]results.SummaryRow, 0, len(sum)+len(sum)/(len(Metrics)-1))
	for _, s := range sum {
		out = append(out, s)
		if s.Metric == "expost_eps" {
			s.Metric = "expost_risk_factor"
			s.Mean, s.SD, s.CILow, s.CIHigh = math.Exp(s.Mean), math.NaN(), math.Exp(s.CILow), math.Exp(s.CIHigh)
			out = append(out, s)
		}
	}
	return out
}

// Datasets implements runner.Experiment.
func (e *Experiment) Datasets() []results.DatasetInfo { return specdata.Infos(e.spec.Spec, e.data) }

// Warnings implements runner.Experiment.
func (e *Experiment) Warnings() []string {
	w := specdata.Warnings(e.data)
	if e.cal == expost.AuthorsCode {
		w = append(w, "calibration authors-code: expost_eps and test_eps count the test loss twice, as the authors' plotting code and the paper's figures do (expost_eps_single is the code's single count); "+
			"the code's query sensitivities are not the paper's proven ones, so these ε are nominal — the paper calibration gives the proven guarantee")
	}
	return w
}

// Ledger implements runner.Experiment: for each method and α the largest
// ex-post loss seen over the trials (the guarantee is per outcome,
// Definition 2.3; the ledger reports the worst realized one), as the
// calibration reports it. The charges are the rows' values, which RunUnit
// computed from the generators' and tests' guarantees; a testing charge
// appears when a test was charged (the theory approach tests nothing).
//
// Where the rows report releases whose claimed guarantee differs from the
// level the method asked for (levelNotes), the generating charge says so
// in Claimed beside what it books; a generator that is not built in is
// named in DeclaredBy ([generators.DeclaredBy]).
func (e *Experiment) Ledger(rows []results.Row) []results.LedgerEntry {
	cells := results.GroupLedger(rows, func(r results.Row) string {
		return r["dataset"] + "|" + r["method"] + "|" + r["alpha"]
	}, []string{"hypothesis_eps", "test_eps", "expost_eps"}, levelNotes)
	var out []results.LedgerEntry
	F := func(v float64) results.Float { return results.Float(v) }
	for _, k := range cells.Keys() {
		parts := strings.SplitN(k, "|", 3)
		name, alpha := parts[1], parts[2]
		a := cells.Get(k)
		le := results.LedgerEntry{Method: name, Setting: "dataset=" + parts[0] + " alpha=" + alpha}
		m, ok := e.methods[name]
		if !ok {
			// Not a method of this experiment: nothing to account it by.
			le.Rule = fmt.Sprintf("unknown method %q: no privacy accounting", name)
			le.Total = results.PrivacyGuarantee{Epsilon: F(math.Inf(1))}
			out = append(out, le)
			continue
		}
		charge := func(part, release string, eps float64) {
			le.Components = append(le.Components, results.NewCharge(part, release, "D", privacy.Guarantee{Notion: m.notion, Epsilon: eps}))
		}
		charge("generating", m.generating, a.Max("hypothesis_eps"))
		gen := &le.Components[0]
		gen.DeclaredBy = generators.DeclaredBy(m.gen)
		gen.Claimed = strings.Join(a.LevelClaims("trials", trimCount), "; ")
		test := a.Max("test_eps")
		if test != 0 {
			charge("testing", m.testing, test)
		}
		le.Rule = m.rule
		if e.cal == expost.AuthorsCode && test != 0 {
			le.Rule += "; authors-code calibration: the code's query sensitivities and its reporting (test loss counted twice) — nominal, not the paper's proven constants"
		}
		le.Total = results.NewTotal(privacy.Guarantee{Notion: m.notion, Epsilon: a.Max("expost_eps")})
		out = append(out, le)
	}
	return out
}

// trimCount drops the release count a row's note ends with ("… (3 of 5
// releases below their level)"): the ledger counts trials.
func trimCount(note string) string {
	if i := strings.LastIndex(note, " ("); i >= 0 && strings.Contains(note[i:], " releases ") {
		return note[:i]
	}
	return note
}

// RowWarnings implements runner.RowWarner: for each method of
// accuracy_first.methods whose rows report releases of its generator that
// claimed more, or less, than the level they were asked for, how many
// rows, the first such note and what was booked. The ledger books the
// larger of claim and level: a claim below it at the level, which is what
// the search's ex-post accounting charges (Lemma 2.8, Theorem A.2).
func (e *Experiment) RowWarnings(rows []results.Row) []string {
	cells := results.GroupLedger(rows, func(r results.Row) string { return r["method"] }, nil, levelNotes)
	var w []string
	for _, m := range e.spec.AccuracyFirst.Methods {
		t := cells.Get(m)
		if t == nil {
			continue
		}
		if t.Over > 0 {
			w = append(w, fmt.Sprintf("method %s: %d of %d trials have releases over their level, e.g. %s; hypothesis_eps, expost_eps and the ledger book what the generator returned", m, t.Over, t.Rows, t.OverNote))
		}
		if t.Under > 0 {
			w = append(w, fmt.Sprintf("method %s: %d of %d trials have releases below their level, e.g. %s; hypothesis_eps, expost_eps and the ledger book the level, which is what the search spends", m, t.Under, t.Rows, t.UnderNote))
		}
	}
	return w
}

// FigureMarks implements runner.FigureMarker: the points (dataset,
// method, α) whose rows report a release of the generator over the level
// it was asked for, which the figures ring.
func (e *Experiment) FigureMarks(rows []results.Row) ([]plots.Mark, string) {
	var out []plots.Mark
	seen := map[plots.Mark]bool{}
	for _, r := range rows {
		if over, _ := levelNotes(r["status"]); over == "" {
			continue
		}
		m := plots.Mark{Dataset: r["dataset"], Method: r["method"], X: r.Float("alpha")}
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out, "releases over their privacy level (booked as returned)"
}

func maxFloat(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

// PairKey implements runner.Pairer: the columns that identify a replicate
// of the expost-sweep rows: the trial, at one dataset and x;
// the paper's claims comparing two methods are decided on differences
// paired by them.
func (e *Experiment) PairKey() []string { return Kind.PairKey() }

// SharedHash implements runner.UnitReader: the spec without
// accuracy_first.methods, alphas and trials (each unit's own method, α
// and trial are in its key) nor the [[methods]] tables (the external
// generators: UnitInputs), so that a method, an α or trials added, or
// one method's generator edited, computes only the units they concern
// and resumes every other unit. Everything else a unit reads — the task,
// the generators named by accuracy_first.generator and grid_generator,
// the calibration, λ, γ, the steps and the ε grid's bounds, the data —
// stays in it: a change there recomputes every unit.
func (e *Experiment) SharedHash() string {
	sec := *e.spec.Section
	sec.AccuracyFirst.Methods, sec.AccuracyFirst.Alphas, sec.AccuracyFirst.Trials = nil, nil, 0
	return e.spec.Spec.SharedHash(&sec)
}

// UnitInputs implements runner.UnitReader: the unit's method with the
// identity of its generator, and that of the grid generator whose
// theorem scales every unit's ε grid (experiments.Spec.MethodIdentity: an
// external generator's table and files, a registered one's name).
func (e *Experiment) UnitInputs(ru runner.Unit) map[string]string {
	u, ok := ru.(unit)
	if !ok {
		return nil
	}
	in := map[string]string{"grid generator": e.generatorIdentity(e.grid)}
	if m, ok := e.methods[u.method]; ok && m.gen != nil {
		in["method "+u.method] = "generator " + e.generatorIdentity(m.gen)
	}
	return in
}

// generatorIdentity is what identifies generator g for the units that
// call it: experiments.Spec.MethodIdentity (an external generator's table
// and files, a registered one's name) and, for an external one, the
// values of its parameters ([methods.params]), which MethodIdentity
// leaves out.
func (e *Experiment) generatorIdentity(g interface{ Name() string }) string {
	return experiments.WithSettings(e.spec.Spec.MethodIdentity(g.Name()), external.SettingOf(g))
}
