package learnercmp

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learneraudit"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/runner"
)

// Name is the kind of this package: private learners compared on the same
// repeated cross-validation folds across a privacy grid.
const Name = "learner-comparison"

// Kind is the learner-comparison experiment kind: the [cv] and
// [comparison] tables with their defaults, paired by (repetition, fold)
// (see the Experiment's PairKey).
var Kind = runner.KindDef[*Section]{
	KindName: Name,
	Defaults: func() *Section {
		return &Section{
			CV: CVSpec{Repetitions: 10, Folds: 10},
			Comparison: ComparisonSpec{
				Reference: learners.NonPrivate{}.Name(), Loss: "logistic", HuberH: 0.5, ObjPert: "cms11",
			},
		}
	},
	Build: func(spec *experiments.Spec, _ *Section, data runner.DataOptions) (runner.Experiment, error) {
		return New(spec, data)
	},
	Pairs: []string{"repetition", "fold"},
}

// Section is the learner-comparison kind's part of a spec.
type Section struct {
	CV         CVSpec         `toml:"cv"`
	Comparison ComparisonSpec `toml:"comparison"`
}

// Spec is a resolved learner-comparison spec: the shared part and the
// section.
type Spec struct {
	*experiments.Spec
	*Section
}

// cmpSpec returns spec with its learner-comparison section.
func cmpSpec(spec *experiments.Spec) (*Spec, error) {
	sec, err := runner.SectionOf[*Section](spec, Name)
	if err != nil {
		return nil, err
	}
	return &Spec{spec, sec}, nil
}

// CVSpec is the repeated K-fold cross-validation protocol: in round f of a
// repetition, fold f is the test set and the other K−1 folds the training
// set (no validation fold: nothing is tuned).
type CVSpec struct {
	// Repetitions is the number of independent partitions; >= 1. Default 10.
	Repetitions int `toml:"repetitions"`
	// Folds is K; >= 2. Default 10.
	Folds int `toml:"folds"`
}

// ComparisonSpec is what is compared: learners from the learner registry
// (learners.Lookup) across a grid of ε, each at a fixed λ, beside a
// non-private reference.
type ComparisonSpec struct {
	// Learners names the private learners compared (see `dprepro list`);
	// required, no duplicates. Each is fit at every ε of Epsilons.
	Learners []string `toml:"learners"`
	// Reference names the learner drawn as the reference line, fit once
	// per (dataset, repetition, fold) and handed ε = +Inf; default
	// "non-private" (the exact fit, booked as not private). Empty means no
	// reference. It must not be one of Learners, and it must be a
	// registered learner: an external one ([[methods]]) cannot be handed
	// ε = +Inf (JSON has no infinity).
	Reference string `toml:"reference"`
	// Baseline, when not empty, names one of Learners that every other
	// learner is compared with, paired by (repetition, fold) at each
	// dataset and ε: comparison.csv, tables/comparison.md and the
	// figures comparison-<metric> (package comparison: t intervals,
	// Holm-adjusted paired t-tests, win/tie/loss). Empty: no comparison.
	Baseline string `toml:"baseline,omitempty"`
	// Epsilons is the privacy grid: the ε each learner is handed; finite
	// and > 0, no duplicates.
	Epsilons []float64 `toml:"epsilons"`
	// Delta is the δ each learner is handed; in [0, 1). Default 0 (pure
	// ε-DP). A learner that returns a ρ-zCDP guarantee needs Delta > 0:
	// its rows state (ε, δ) through Bun & Steinke's Proposition 1.3 at it.
	Delta float64 `toml:"delta"`
	// Lambda is the regularization parameter λ of every learner without
	// an entry in Lambdas; finite and > 0, or 0 (unset) when Lambdas
	// gives every learner and the reference its own.
	Lambda float64 `toml:"lambda"`
	// Lambdas gives a learner (or the reference) its own λ, by name, e.g.
	// [comparison.lambdas] output-perturbation = 0.05; finite and > 0.
	Lambdas map[string]float64 `toml:"lambdas,omitempty"`
	// Loss is the training loss of the built-in learners: "logistic"
	// (default) or "huber".
	Loss string `toml:"loss"`
	// HuberH is the Huber-hinge parameter h when Loss is "huber"; in
	// (0, 1). Default 0.5.
	HuberH float64 `toml:"huber_h"`
	// ObjPert is the objective-perturbation parametrization: "cms11"
	// (default) or the labelled opt-in "privatelr-1.1-69".
	ObjPert string `toml:"objective_perturbation"`
	// Audit, when set ([comparison.audit]), audits learners of the
	// comparison empirically as part of the run (methods/learneraudit):
	// their ε_LB beside the ε they claim, in audit.csv, the manifest, the
	// ledger and the report. Absent (nil) means no audit, and a spec
	// without it writes what it wrote before the key existed.
	Audit *AuditSpec `toml:"audit,omitempty"`
}

// AuditSpec is [comparison.audit]: the learners of the comparison to
// audit as part of the run, each by `dprepro audit --learner`'s
// black-box distinguishing experiment (methods/learneraudit: an
// adversarial and a searched neighbouring pair, Releases releases per
// side of each, a one-sided Clopper–Pearson lower bound ε_LB on the
// learner's ε, "claim violated" when ε_LB exceeds the ε the fits
// returned), on base rows drawn from the spec's first dataset as that
// command draws them: the same seed, releases and confidence give the
// same bound.
type AuditSpec struct {
	// Learners names the learners of comparison.learners to audit (each
	// variant of a learner with parameter variants is audited on its
	// own; an oracle, not private, cannot be); default none, no
	// duplicates.
	Learners []string `toml:"learners"`
	// Releases is the number of releases per side and pair; >= 200.
	// Zero means 2000.
	Releases int `toml:"releases,omitempty"`
	// Epsilon is the level ε handed to every audited fit, one of
	// comparison.epsilons; zero means the one closest to 1 (in log
	// scale).
	Epsilon float64 `toml:"epsilon,omitempty"`
	// Confidence is the confidence of ε_LB, in (0, 1); zero means 0.95.
	Confidence float64 `toml:"confidence,omitempty"`
}

// DefaultAuditReleases is AuditSpec.Releases's default.
const DefaultAuditReleases = 2000

// resolved returns a's choices with their defaults for the grid eps.
func (a *AuditSpec) resolved(eps []float64) (releases int, epsilon, confidence float64) {
	releases, epsilon, confidence = a.Releases, a.Epsilon, a.Confidence
	if releases == 0 {
		releases = DefaultAuditReleases
	}
	if epsilon == 0 {
		epsilon = learneraudit.DefaultEpsilon(eps)
	}
	if confidence == 0 {
		confidence = 0.95
	}
	return releases, epsilon, confidence
}

// learnerConfig is the configuration the spec gives the learners it names:
// comparison.loss, comparison.huber_h and comparison.objective_perturbation,
// and the spec's data.row_norm rowNorm.
func (c *ComparisonSpec) learnerConfig(rowNorm string) learners.Config {
	return learners.Config{Table: "comparison", Loss: c.Loss, HuberH: c.HuberH, ObjPert: c.ObjPert, RowNorm: rowNorm}
}

// lambda returns the λ of learner name: its Lambdas entry, else Lambda.
func (c *ComparisonSpec) lambda(name string) float64 {
	if v, ok := c.Lambdas[name]; ok {
		return v
	}
	return c.Lambda
}

// fitted returns the learners fit by a run: Learners, then the reference.
func (c *ComparisonSpec) fitted() []string {
	names := slices.Clone(c.Learners)
	if c.Reference != "" {
		names = append(names, c.Reference)
	}
	return names
}

// Serves implements experiments.Server: comparison.learners may name
// external learners ([[methods]] with serves = "learner");
// comparison.reference may not (see ComparisonSpec.Reference).
func (sec *Section) Serves() []string { return []string{experiments.ServesLearner} }

// Produces implements experiments.Producer: the rows' datasets are
// data.datasets, their methods comparison.learners and then
// comparison.reference (its rows at x = +Inf) — in Varied those that run
// as variants, whose rows carry "<learner>[param=value,…]" — and the
// metrics [Metrics].
func (sec *Section) Produces(s *experiments.Spec) experiments.Produced {
	varied := s.VariedMethods(experiments.ServesLearner)
	out := experiments.Produced{Datasets: slices.Clone(s.Data.Datasets), Metrics: slices.Clone(Metrics)}
	for _, l := range sec.Comparison.fitted() {
		if slices.Contains(varied, l) {
			out.Varied = append(out.Varied, l)
		} else {
			out.Methods = append(out.Methods, l)
		}
	}
	return out
}

// Validate implements experiments.Section.
func (sec *Section) Validate(s *experiments.Spec, p *experiments.Problems) {
	c := &sec.Comparison
	if len(s.Data.Datasets) == 0 {
		p.At("data.datasets", "must list at least one dataset")
	}
	if sec.CV.Repetitions < 1 {
		p.At("cv.repetitions", "must be >= 1 (got %d)", sec.CV.Repetitions)
	}
	if sec.CV.Folds < 2 {
		p.At("cv.folds", "must be >= 2: one test fold and at least one training fold (got %d)", sec.CV.Folds)
	}
	registered := learners.Names()
	known := s.WithMethods(p, experiments.ServesLearner, registered)
	p.Names("comparison.learners", c.Learners, known, true, "learner")
	if c.Reference != "" {
		switch {
		case slices.Contains(registered, c.Reference):
		case slices.Contains(known, c.Reference):
			// The reference is handed ε = +Inf, which a worker call cannot
			// carry (JSON has no infinity): it would fail every unit.
			p.At("comparison.reference", "learner %q is an external method ([[methods]]): the reference is fit at ε = +Inf, which the worker protocol cannot send (JSON has no infinity); name a registered learner (%s), list %q in comparison.learners, or set reference = \"\"", c.Reference, strings.Join(registered, ", "), c.Reference)
		default:
			p.At("comparison.reference", "unknown learner %q (known: %s); empty means no reference", c.Reference, strings.Join(registered, ", "))
		}
		if slices.Contains(c.Learners, c.Reference) {
			p.At("comparison.reference", "learner %q is also in comparison.learners; list it once", c.Reference)
		}
	}
	if c.Baseline != "" && !slices.Contains(c.Learners, c.Baseline) {
		p.At("comparison.baseline", "%s", experiments.Unknown("learner", c.Baseline, c.Learners)+" (the baseline is one of comparison.learners)")
	}
	p.Grid("comparison.epsilons", c.Epsilons, experiments.Positive, "finite and > 0")
	if !(c.Delta >= 0 && c.Delta < 1) {
		p.At("comparison.delta", "must be in [0, 1) (got %v)", c.Delta)
	}
	if c.Lambda != 0 && !experiments.Positive(c.Lambda) {
		p.At("comparison.lambda", "must be finite and > 0 (got %v)", c.Lambda)
	} else {
		p.Magnitude("comparison.lambda", "comparison.lambda", c.Lambda)
	}
	fitted := c.fitted()
	for _, name := range fitted {
		if _, ok := c.Lambdas[name]; !ok && c.Lambda == 0 {
			p.At("comparison.lambda", "required: learner %q has no λ (set comparison.lambda, or comparison.lambdas.%s)", name, name)
			break
		}
	}
	names := make([]string, 0, len(c.Lambdas))
	for name := range c.Lambdas {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		path := "comparison.lambdas." + name
		if !slices.Contains(fitted, name) {
			p.Add("comparison.lambdas", path, "%q is not in comparison.learners or comparison.reference", name)
		}
		if v := c.Lambdas[name]; !experiments.Positive(v) {
			p.Add("comparison.lambdas", path, "must be finite and > 0 (got %v)", v)
		} else {
			p.Magnitude("comparison.lambdas", path, v)
		}
	}
	p.OneOf("comparison.loss", c.Loss, "logistic", "huber")
	if c.Loss == "huber" && !(c.HuberH > 0 && c.HuberH < 1) {
		p.At("comparison.huber_h", "must be in (0, 1) (got %v)", c.HuberH)
	} else if c.Loss == "huber" {
		p.Magnitude("comparison.huber_h", "comparison.huber_h", c.HuberH)
	}
	p.OneOf("comparison.objective_perturbation", c.ObjPert, "cms11", "privatelr-1.1-69")
	if a := c.Audit; a != nil {
		for i, name := range a.Learners {
			if !slices.Contains(c.Learners, name) {
				p.Add("comparison.audit.learners", fmt.Sprintf("comparison.audit.learners[%d]", i), "%s", experiments.Unknown("learner", name, c.Learners)+" (the audited learners are some of comparison.learners)")
			}
		}
		p.Names("comparison.audit.learners", a.Learners, nil, false, "learner")
		if a.Releases != 0 && a.Releases < 200 {
			p.At("comparison.audit.releases", "must be >= 200 per side: half choose the distinguisher's threshold, half measure it (got %d)", a.Releases)
		}
		if a.Epsilon != 0 && !slices.Contains(c.Epsilons, a.Epsilon) {
			p.At("comparison.audit.epsilon", "must be one of comparison.epsilons (got %v; the grid: %v): the audit stands beside that ε's ledger entry", a.Epsilon, c.Epsilons)
		}
		if a.Confidence != 0 && !(a.Confidence > 0 && a.Confidence < 1) {
			p.At("comparison.audit.confidence", "must be in (0, 1) (got %v)", a.Confidence)
		}
	}
}

// Limits implements experiments.Section.
func (sec *Section) Limits(*experiments.Spec) []experiments.Limit {
	c := &sec.Comparison
	return []experiments.Limit{
		{Key: "cv.repetitions", Max: 1e4, Counts: experiments.Value("cv.repetitions", sec.CV.Repetitions),
			Why: "the spec repeats 10 times (1000× margin); each repetition keeps a fold assignment of 8 bytes per record"},
		{Key: "cv.folds", Max: 1e5, Counts: experiments.Value("cv.folds", sec.CV.Folds),
			Why: "the spec uses 10 folds (10,000× margin); every fold needs at least 2 records"},
		{Key: "comparison.learners", Max: 1000, Counts: experiments.Length("comparison.learners", len(c.Learners)),
			Why: "the spec compares 2 learners (500× margin); a unit fits each at every ε"},
		{Key: "comparison.epsilons", Max: 1e4, Counts: experiments.Length("comparison.epsilons", len(c.Epsilons)),
			Why: "the spec uses 7 values (1400× margin); a unit fits every learner at each"},
	}
}

// fitsPerUnit is the number of fits (and rows) of one (dataset,
// repetition, fold): every learner at every ε, and the reference.
func (c *ComparisonSpec) fitsPerUnit() float64 {
	n := float64(len(c.Learners)) * float64(len(c.Epsilons))
	if c.Reference != "" {
		n++
	}
	return math.Max(1, n)
}

// Workload implements experiments.Section.
func (sec *Section) Workload(s *experiments.Spec) experiments.Workload {
	pos := experiments.Pos
	folds := math.Max(1, float64(len(s.Data.Datasets))) * pos(sec.CV.Repetitions) * pos(sec.CV.Folds)
	key := "cv.repetitions"
	if pos(sec.CV.Folds) > pos(sec.CV.Repetitions) {
		key = "cv.folds"
	}
	// A unit per fit: (dataset, repetition, fold, learner, ε), and the
	// reference's; one row each.
	fits := folds * sec.Comparison.fitsPerUnit()
	w := experiments.Workload{Units: fits, Rows: fits, UnitKey: key}
	if a := sec.Comparison.Audit; a != nil {
		// An audit unit per audited learner (its rows go to audit.csv).
		w.Units += float64(len(a.Learners))
	}
	for _, name := range s.Data.Datasets {
		dt, n, d := s.DataTerm(name)
		w.Terms = append(w.Terms, dt,
			experiments.Term("cv.repetitions", pos(sec.CV.Repetitions)*n*8, false, "dataset %s: repetitions × n × 8 bytes of fold assignments", name),
			// The unit's training and test rows, the solver's workspace
			// (8 n floats) and one model at a time.
			experiments.Term("data.datasets", n*(d*experiments.CSRBytes+24)+64*n+d*8, true, "dataset %s: a unit's rows (n × (d × %d + 24) bytes), solver workspace and a model per unit in flight", name, experiments.CSRBytes).Of(name))
	}
	return w
}

// Only implements experiments.MethodFilter (`dprepro run --only`): the
// names are learners of comparison.learners; the reference
// (comparison.reference) is always fit.
func (c *Section) Only(names []string) error {
	names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == c.Comparison.Reference })
	if b := c.Comparison.Baseline; b != "" && len(names) > 0 && !slices.Contains(names, b) {
		// The baseline is what the others are compared with: kept.
		names = append(names, b)
	}
	if len(names) == 0 {
		return nil
	}
	if err := experiments.FilterMethods(names, experiments.MethodList{Key: "comparison.learners", Names: &c.Comparison.Learners}); err != nil {
		return err
	}
	if a := c.Comparison.Audit; a != nil {
		// Only the audits of the learners that still run.
		a.Learners = slices.DeleteFunc(slices.Clone(a.Learners), func(n string) bool { return !slices.Contains(c.Comparison.Learners, n) })
	}
	return nil
}

// LearnerSetting implements learneraudit.Source: learner name (one of
// comparison.learners) as the kind runs it — comparison.loss, huber_h,
// objective_perturbation and data.row_norm, its λ, the ε grid and δ — on
// training sets of (K−1)/K of a dataset's rows.
func (sec *Section) LearnerSetting(s *experiments.Spec, name string) (learneraudit.Setting, error) {
	c := &sec.Comparison
	if !slices.Contains(c.Learners, name) {
		return learneraudit.Setting{}, s.ErrorAt("comparison.learners", "comparison.learners",
			fmt.Errorf("the spec does not compare learner %q (comparison.learners: %s)", name, strings.Join(c.Learners, ", ")))
	}
	from := "comparison.lambda"
	if _, ok := c.Lambdas[name]; ok {
		from = "comparison.lambdas." + name
	}
	return learneraudit.Setting{
		Config: c.learnerConfig(s.Data.RowNorm), Lambda: c.lambda(name),
		Epsilons: slices.Clone(c.Epsilons), Delta: c.Delta,
		TrainShare: float64(sec.CV.Folds-1) / float64(sec.CV.Folds),
		Choice: fmt.Sprintf("λ = %g, the one the spec fits %s with (%s); training sets of %d of the %d folds of cv.folds, as every fit of the run",
			c.lambda(name), name, from, sec.CV.Folds-1, sec.CV.Folds),
	}, nil
}
