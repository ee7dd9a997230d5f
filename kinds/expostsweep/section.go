package expostsweep

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/generators"
	"github.com/dprepro/dprepro/runner"
)

// Name is the kind of Ligett et al. 2017: the ex-post privacy loss of
// accuracy-first searches.
const Name = "expost-sweep"

// Kind is the expost-sweep experiment kind (runner.Kind): the
// [accuracy_first] table with its defaults, paired by trial (see the
// Experiment's PairKey); its runs are drawn across runs
// ([sweepKind.AcrossFolder]).
var Kind = sweepKind{runner.KindDef[*Section]{
	KindName: Name,
	Defaults: func() *Section {
		return &Section{AccuracyFirst: AccuracyFirstSpec{
			Generator: "output", Calibration: "authors-code",
			Lambda: 0.005, Gamma: 0.1, Steps: 1000, EpsMaxFactor: 4,
		}}
	},
	Build: func(spec *experiments.Spec, _ *Section, data runner.DataOptions) (runner.Experiment, error) {
		return New(spec, data)
	},
	Pairs: []string{"trial"},
}}

// sweepKind is the expost-sweep kind's type: a runner.KindDef with the
// hook of the figures across runs (runner.AcrossKind).
type sweepKind struct {
	runner.KindDef[*Section]
}

// Only implements experiments.MethodFilter (`dprepro run --only`): the
// names are methods of accuracy_first.methods.
func (sec *Section) Only(names []string) error {
	return experiments.FilterMethods(names, experiments.MethodList{Key: "accuracy_first.methods", Names: &sec.AccuracyFirst.Methods})
}

// Section is the expost-sweep kind's part of a spec.
type Section struct {
	AccuracyFirst AccuracyFirstSpec `toml:"accuracy_first"`
}

// Spec is a resolved expost-sweep spec: the shared part and the section.
type Spec struct {
	*experiments.Spec
	*Section
}

// expostSpec returns spec with its expost-sweep section.
func expostSpec(spec *experiments.Spec) (*Spec, error) {
	sec, err := runner.SectionOf[*Section](spec, Name)
	if err != nil {
		return nil, err
	}
	return &Spec{spec, sec}, nil
}

// AccuracyFirstSpec is the ex-post privacy sweep of Ligett, Neel, Roth,
// Waggoner & Wu, "Accuracy First" (NeurIPS 2017), Section 4 and Appendix B.
type AccuracyFirstSpec struct {
	// Task is "ridge" (Section 3.1) or "logistic" (Section 3.2).
	Task string `toml:"task"`
	// Generator is the private ERM method that noise reduction and the
	// doubling method drive: "covariance" (ridge only; Algorithm 3),
	// "output" (Algorithm 5), another registered generator, or the name of
	// a [[methods]] table with serves = "hypothesis" (an external
	// generator, [generators.External]).
	Generator string `toml:"generator"`
	// GridGenerator names the generator whose utility theorem gives E, the
	// scale of the ε grid (ε_max = EpsMaxFactor·E, Appendix B.1) and the
	// theory_eps column of the searches. Empty means Generator, which must
	// then have a theorem (an external generator has none: name a
	// registered one, e.g. "output", to run it on the grid the built-in
	// would use).
	GridGenerator string `toml:"grid_generator,omitempty"`
	// Calibration of the accuracy tests: "authors-code" or "paper".
	Calibration string `toml:"calibration"`
	// Lambda is the regularization λ; Gamma the failure probability γ.
	Lambda float64 `toml:"lambda"`
	Gamma  float64 `toml:"gamma"`
	// Steps is the number T of noise-reduction levels.
	Steps int `toml:"steps"`
	// Alphas is the grid of requested excess risks α.
	Alphas []float64 `toml:"alphas"`
	// Trials is the number of independent trials per (method, α).
	Trials int `toml:"trials"`
	// Methods: "noise-reduction", "doubling", "theory" (the generator's
	// utility theorem inverted), and any of them with a generator suffix
	// ("theory-output": Theorem A.9 for ridge; "doubling-py-gen": the
	// doubling method driving the generator py-gen), which runs the method
	// with that generator on the same ε grid and tests.
	Methods []string `toml:"methods"`
	// EpsMin is the most private level ε_min; 0 means 1/n.
	EpsMin float64 `toml:"eps_min"`
	// EpsMaxFactor sets ε_max = EpsMaxFactor·E, E the theory ε for α.
	EpsMaxFactor float64 `toml:"eps_max_factor"`
}

// Validate implements experiments.Section.
func (c *Section) Validate(s *experiments.Spec, p *experiments.Problems) {
	if len(s.Data.Datasets) == 0 {
		p.At("data.datasets", "must list at least one dataset")
	}
	c.validateExPost(s, p)
}

// validateExPost checks the accuracy_first section.
func (c *Section) validateExPost(s *experiments.Spec, p *experiments.Problems) {
	a := &c.AccuracyFirst
	k := func(name string) string { return "accuracy_first." + name }
	// Task, generators (the registry and the spec's external generators)
	// and methods: the checks New makes too, with an external generator's
	// tasks taken on trust until its worker's hello states them.
	resolveNames(a, specGenerators(s, p), func(key, path, msg string) { p.Add(key, path, "%s", msg) })
	p.OneOf(k("calibration"), a.Calibration, "authors-code", "paper")
	if !(a.Lambda > 0) || math.IsInf(a.Lambda, 1) {
		p.Add(k("lambda"), k("lambda"), "must be finite and > 0 (got %v)", a.Lambda)
	} else {
		p.Magnitude(k("lambda"), k("lambda"), a.Lambda)
	}
	if !(a.Gamma > 0 && a.Gamma < 1) {
		p.Add(k("gamma"), k("gamma"), "must be in (0, 1) (got %v)", a.Gamma)
	}
	if a.Steps < 2 {
		p.Add(k("steps"), k("steps"), "must be >= 2 (got %d)", a.Steps)
	}
	if a.Trials < 1 {
		p.Add(k("trials"), k("trials"), "must be >= 1 (got %d)", a.Trials)
	}
	if len(a.Alphas) == 0 {
		p.Add(k("alphas"), k("alphas"), "must not be empty")
	}
	dupAlpha := experiments.SeenBefore[float64]()
	for i, x := range a.Alphas {
		if !(x > 0) || math.IsInf(x, 0) {
			p.Add(k("alphas"), fmt.Sprintf("%s[%d]", k("alphas"), i), "must be finite and > 0 (got %v)", x)
		} else {
			p.Magnitude(k("alphas"), fmt.Sprintf("%s[%d]", k("alphas"), i), x)
		}
		if dupAlpha(x) {
			p.Add(k("alphas"), fmt.Sprintf("%s[%d]", k("alphas"), i), "duplicate value %v", x)
		}
	}
	if len(a.Methods) == 0 {
		p.Add(k("methods"), k("methods"), "must list at least one method (known: %s)", strings.Join(methodNames(genLookup{}), ", "))
	}
	dup := experiments.SeenBefore[string]()
	for i, m := range a.Methods {
		if dup(m) {
			p.Add(k("methods"), fmt.Sprintf("%s[%d]", k("methods"), i), "duplicate method %q", m)
		}
	}
	if !(a.EpsMin >= 0) || math.IsInf(a.EpsMin, 1) {
		p.Add(k("eps_min"), k("eps_min"), "must be finite and >= 0 (0 means 1/n) (got %v)", a.EpsMin)
	} else {
		p.Magnitude(k("eps_min"), k("eps_min"), a.EpsMin)
	}
	if !(a.EpsMaxFactor > 0) || math.IsInf(a.EpsMaxFactor, 1) {
		p.Add(k("eps_max_factor"), k("eps_max_factor"), "must be finite and > 0 (got %v)", a.EpsMaxFactor)
	} else {
		p.Magnitude(k("eps_max_factor"), k("eps_max_factor"), a.EpsMaxFactor)
	}
}

// Serves implements experiments.Server: accuracy_first.generator (and a
// method's generator suffix) may name an external hypothesis generator
// ([[methods]] with serves = "hypothesis").
func (c *Section) Serves() []string { return []string{experiments.ServesHypothesis} }

// Produces implements experiments.Producer: the rows' datasets are
// data.datasets, their methods accuracy_first.methods as written (a
// generator suffix included, e.g. "theory-output" or "doubling-py-gen"),
// and the metrics [Metrics].
func (c *Section) Produces(s *experiments.Spec) experiments.Produced {
	return experiments.Produced{Datasets: slices.Clone(s.Data.Datasets), Methods: slices.Clone(c.AccuracyFirst.Methods), Metrics: slices.Clone(Metrics)}
}

// specGenerators returns the generators spec may name, with a placeholder
// for each external one (its worker is not started to validate a spec),
// and reports to p a [[methods]] table that shadows a registered
// generator.
func specGenerators(s *experiments.Spec, p *experiments.Problems) genLookup {
	registered := generators.Names()
	gl := genLookup{ext: map[string]accfirst.Generator{}}
	for _, name := range s.WithMethods(p, experiments.ServesHypothesis, registered)[len(registered):] {
		gl.ext[name] = pendingGenerator(name)
		gl.order = append(gl.order, name)
	}
	return gl
}

// pendingGenerator stands for an external generator while a spec is
// validated (its worker not started): it accepts every task, which New
// checks against the hello (generators.NewExternal), and has no utility
// theorem.
type pendingGenerator string

func (p pendingGenerator) Name() string           { return string(p) }
func (p pendingGenerator) Tasks() []accfirst.Task { return accfirst.KnownTasks() }
func (p pendingGenerator) Sequence(context.Context, *rand.Rand, accfirst.Setting, []float64) (expost.Sequence, error) {
	return nil, fmt.Errorf("expostsweep: external generator %s was not started", string(p))
}
func (p pendingGenerator) Independent(context.Context, *rand.Rand, accfirst.Setting, float64) (expost.Hypothesis, privacy.Guarantee, error) {
	return nil, privacy.Guarantee{}, fmt.Errorf("expostsweep: external generator %s was not started", string(p))
}

// Limits implements experiments.Section.
func (c *Section) Limits(*experiments.Spec) []experiments.Limit {
	a := &c.AccuracyFirst
	return []experiments.Limit{
		{Key: "accuracy_first.steps", Max: 1e6, Counts: experiments.Value("accuracy_first.steps", a.Steps),
			Why: "Ligett et al. use T = 1000 (1000× margin); a noise-reduction unit holds about 60 bytes per level and chain, and drawing a chain takes about 36 ns per level (0.04 s at the limit, when it cannot be interrupted)"},
		{Key: "accuracy_first.trials", Max: 1e5, Counts: experiments.Value("accuracy_first.trials", a.Trials),
			Why: "the paper profile runs 80 trials (1250× margin); each trial of each method and α is a unit with a row"},
		{Key: "accuracy_first.alphas", Max: 1e4, Counts: experiments.Length("accuracy_first.alphas", len(a.Alphas)),
			Why: "the paper's grid has 40 values (250× margin)"},
	}
}

// Workload implements experiments.Section.
func (c *Section) Workload(s *experiments.Spec) experiments.Workload {
	a := &c.AccuracyFirst
	nd := math.Max(1, float64(len(s.Data.Datasets)))
	units := nd * float64(len(a.Methods)) * float64(len(a.Alphas)) * experiments.Pos(a.Trials)
	key := "accuracy_first.trials"
	if float64(len(a.Alphas)) > experiments.Pos(a.Trials) {
		key = "accuracy_first.alphas"
	}
	w := experiments.Workload{Units: units, Rows: units, UnitKey: key}
	add := func(key string, bytes float64, perUnit bool, format string, args ...any) {
		w.Terms = append(w.Terms, experiments.Term(key, bytes, perUnit, format, args...))
	}
	const csrBytes = experiments.CSRBytes
	T := experiments.Pos(a.Steps)
	// The generator's noise-reduction footprint (accfirst.MemoryEstimator;
	// covariance perturbation's for a generator that states none, or one
	// the registry does not know: the spec did not validate).
	g, _ := generators.Lookup(a.Generator)
	task := accfirst.Task(a.Task)
	var perUnit, coords float64
	chains := 1
	for _, name := range s.Data.Datasets {
		dt, n, p := s.DataTerm(name)
		w.Terms = append(w.Terms, dt)
		if a.Task == "logistic" {
			add("data.datasets", n*(p*csrBytes+24)+p*p*8, false, "dataset %s: the logistic problem's rows, n × (d × %d + 24) bytes", name, csrBytes)
		} else {
			add("data.datasets", 6*p*p*8, false, "dataset %s: the ridge problem's statistics, 6 d² × 8 bytes", name)
		}
		w.Terms[len(w.Terms)-1].Dataset = name
		fp := accfirst.FootprintOf(g, task, p)
		coords = math.Max(coords, fp.Coordinates)
		chains = max(chains, fp.Chains)
		if a.Task == "logistic" {
			perUnit = math.Max(perUnit, n*8) // the margins of an exact excess risk
		}
	}
	if slices.ContainsFunc(a.Methods, func(name string) bool { b, _, _ := splitMethod(name); return methods[b].sequence }) {
		perLevel := 60 * float64(chains) // per level: the ε grid's share and a chain's events
		add("accuracy_first.steps", T*perLevel, true,
			"T × %.0f bytes of ε grid and noise-reduction chain%s per unit in flight (T = %.0f)", perLevel, map[bool]string{true: "s", false: ""}[chains > 1], T)
		adds := math.Min(T-1, 64) // Σ(1 − (ε_s/ε_{s+1})²) ≤ 2 ln(ε_T/ε_1) ≈ 46 for ε_1 = 1/n
		add("data.datasets", coords*(1+adds)*24, true,
			"%.0f noise-reduction coordinates × (1 + min(T−1, 64)) events × 24 bytes per unit in flight", coords)
	}
	add("data.datasets", perUnit+coords*64, true, "a unit's hypotheses and excess-risk buffers")
	return w
}
