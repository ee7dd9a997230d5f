package cvtune

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/selection"
	"github.com/dprepro/dprepro/runner"
)

// The kinds of this package.
const (
	// Name is the kind of Chaudhuri & Vinterbo 2013: repeated CV of private
	// parameter tuning.
	Name = "cv-tuning"
	// HistName is Chaudhuri & Vinterbo 2013, Appendix 6.3: repeated CV of
	// private bin-width selection for histogram density estimation.
	HistName = "histogram-tuning"
)

// Kind is the cv-tuning experiment kind: the [cv] and [tuning] tables
// with their defaults, paired by (rep, fold) (see the Experiment's
// PairKey).
var Kind = runner.KindDef[*Section]{
	KindName: Name,
	Defaults: func() *Section { return &Section{CV: defaultCV(), Tuning: defaultTuning()} },
	Build: func(spec *experiments.Spec, _ *Section, data runner.DataOptions) (runner.Experiment, error) {
		return New(spec, data)
	},
	Pairs: []string{"rep", "fold"},
}

// HistKind is the histogram-tuning experiment kind: the [cv], [tuning]
// and [histogram] tables with their defaults, paired by (rep, fold).
var HistKind = runner.KindDef[*HistSection]{
	KindName: HistName,
	Defaults: func() *HistSection { return &HistSection{CV: defaultCV(), Tuning: defaultTuning()} },
	Build: func(spec *experiments.Spec, _ *HistSection, data runner.DataOptions) (runner.Experiment, error) {
		return NewHist(spec, data)
	},
	Pairs: []string{"rep", "fold"},
}

func defaultCV() CVSpec { return CVSpec{Repetitions: 10, Folds: 10} }

func defaultTuning() TuningSpec {
	return TuningSpec{Delta: 0.01, Loss: "logistic", HuberH: 0.5, ObjPert: "cms11"}
}

// Section is the cv-tuning kind's part of a spec.
type Section struct {
	CV     CVSpec     `toml:"cv"`
	Tuning TuningSpec `toml:"tuning"`
}

// HistSection is the histogram-tuning kind's part of a spec: the [cv]
// protocol, [tuning]'s alphas, delta and methods, and [histogram].
type HistSection struct {
	CV        CVSpec        `toml:"cv"`
	Tuning    TuningSpec    `toml:"tuning"`
	Histogram HistogramSpec `toml:"histogram"`
}

// ReadsRaw implements experiments.RawReader: the histogram-tuning kind
// reads its attributes raw and maps them to [0, 1] by the public bounds of
// histogram.attributes (clipping), so its guarantee holds for the raw
// records whatever data.scaling says.
func (h *HistSection) ReadsRaw(*experiments.Spec) bool { return true }

// Spec is a resolved cv-tuning spec: the shared part and the section.
type Spec struct {
	*experiments.Spec
	*Section
}

// HistSpec is a resolved histogram-tuning spec: the shared part and the
// section.
type HistSpec struct {
	*experiments.Spec
	*HistSection
}

// tuningSpec returns spec with its cv-tuning section.
func tuningSpec(spec *experiments.Spec) (*Spec, error) {
	sec, err := runner.SectionOf[*Section](spec, Name)
	if err != nil {
		return nil, err
	}
	return &Spec{spec, sec}, nil
}

// histSpec returns spec with its histogram-tuning section.
func histSpec(spec *experiments.Spec) (*HistSpec, error) {
	sec, err := runner.SectionOf[*HistSection](spec, HistName)
	if err != nil {
		return nil, err
	}
	return &HistSpec{spec, sec}, nil
}

// CVSpec is the repeated cross-validation protocol of Chaudhuri & Vinterbo
// 2013, Section 5: in round i fold i is the test set, fold (i mod K)+1 the
// validation set and the rest the training set.
type CVSpec struct {
	Repetitions int `toml:"repetitions"` // >= 1
	Folds       int `toml:"folds"`       // >= 3
}

// TuningSpec configures private parameter tuning.
type TuningSpec struct {
	// Lambdas is the parameter list Θ (regularization strengths), > 0.
	Lambdas []float64 `toml:"lambdas"`
	// Alphas is the grid of total privacy levels α, > 0.
	Alphas []float64 `toml:"alphas"`
	// Delta is the δ of the stability-based validation (Theorem 1), in (0,1).
	Delta float64 `toml:"delta"`
	// TrainDelta is the δ of the training budget, for learners whose
	// guarantee is (ε, δ)-DP or ρ-zCDP: the selection methods split it
	// as they split α (selection.Budget.TrainDelta), and a ρ-zCDP claim
	// is stated as (ε, δ) at its fit's δ (Bun & Steinke 2016,
	// Proposition 1.3). In [0, 1); 0 (the default) for pure ε-DP
	// learners, the paper's: a learner that declares (ε, δ) or ρ is then
	// refused at load. cv-tuning only.
	TrainDelta float64 `toml:"train_delta,omitzero"`
	// Methods are the tuning methods to compare.
	Methods []string `toml:"methods"`
	// Loss is the training loss: "logistic" or "huber".
	Loss string `toml:"loss"`
	// HuberH is the Huber-hinge parameter h when Loss is "huber".
	HuberH float64 `toml:"huber_h"`
	// ObjPert is the objective-perturbation parametrization: "cms11"
	// (default) or the labelled opt-in "privatelr-1.1-69".
	ObjPert string `toml:"objective_perturbation"`
	// Learners names the private learners the cv-tuning kind tunes, from
	// its learner registry (see `dprepro list` and LearnerNames); each
	// method runs with each learner. Optional: empty means the built-in
	// objective-perturbation learner alone, with the rows laid out as
	// before the key existed; listing learners adds a learner column and
	// labels each row's method "<method>/<learner>".
	Learners []string `toml:"learners"`
	// Baseline, when not empty, names a method label of the run (a
	// tuning.methods entry, or "<method>/<learner>" with tuning.learners)
	// that every other label is compared with, paired by (rep, fold) at
	// each dataset and α: comparison.csv, tables/comparison.md and the
	// figures comparison-<metric> (package comparison). Empty: none.
	Baseline string `toml:"baseline,omitempty"`
}

// HistogramSpec is the histogram case study of Chaudhuri & Vinterbo 2013,
// Appendix 6.3: the bin width of Algorithm 5 chosen privately.
type HistogramSpec struct {
	// Bins are the candidate numbers of bins K (widths h = 1/K); distinct,
	// >= 1.
	Bins []int `toml:"bins"`
	// Densities names synthetic densities on [0, 1] with a known f
	// (HistogramDensities), whose exact ISE is reported.
	Densities []string `toml:"densities"`
	// Records is the number of points drawn from each density; >= 1 when
	// Densities is set.
	Records int `toml:"records"`
	// Attributes are real one-dimensional attributes.
	Attributes []AttributeSpec `toml:"attributes"`
}

// AttributeSpec is one numeric attribute of a dataset of data.datasets
// (read with column_scale = "none", so the raw value), mapped to [0, 1] by
// public bounds: (x − Lo)/(Hi − Lo), values outside clipped to the bounds
// (a data-independent map, so the privacy analysis is unchanged).
type AttributeSpec struct {
	// Dataset names a dataset of data.datasets. Required.
	Dataset string `toml:"dataset"`
	// Column is the numeric column of Dataset, read raw. Required.
	Column string `toml:"column"`
	// Lo and Hi are the public bounds mapped to 0 and 1; finite, with
	// Lo < Hi.
	Lo float64 `toml:"lo"`
	Hi float64 `toml:"hi"`
}

// HistogramDensities are the synthetic densities of the histogram-tuning
// kind: Beta mixtures on [0, 1] (see kinds/cvtune).
var HistogramDensities = []string{"uniform", "beta(2,5)", "bimodal"}

// Validate implements experiments.Section.
func (c *Section) Validate(s *experiments.Spec, p *experiments.Problems) {
	if len(s.Data.Datasets) == 0 {
		p.At("data.datasets", "must list at least one dataset")
	}
	validateCV(&c.CV, &c.Tuning, true, p)
	p.OneOf("tuning.loss", c.Tuning.Loss, "logistic", "huber")
	if c.Tuning.Loss == "huber" && !(c.Tuning.HuberH > 0 && c.Tuning.HuberH < 1) {
		p.At("tuning.huber_h", "must be in (0, 1) (got %v)", c.Tuning.HuberH)
	} else if c.Tuning.Loss == "huber" {
		p.Magnitude("tuning.huber_h", "tuning.huber_h", c.Tuning.HuberH)
	}
	p.OneOf("tuning.objective_perturbation", c.Tuning.ObjPert, "cms11", "privatelr-1.1-69")
	known := s.WithMethods(p, experiments.ServesLearner, learners.Names())
	if c.Tuning.Learners != nil && len(c.Tuning.Learners) == 0 {
		p.At("tuning.learners", "must list at least one learner when set (known: %s); leave the key out for the built-in learner alone", strings.Join(known, ", "))
	}
	p.Names("tuning.learners", c.Tuning.Learners, known, false, "learner")
	validateBaseline(&c.Tuning, c.Produces(s), p)
}

// validateBaseline checks tuning.baseline against the run's method
// labels.
func validateBaseline(t *TuningSpec, labels experiments.Produced, p *experiments.Problems) {
	// A variant's exact label ("alphaSplit/dp-gd[steps=20]") is known
	// only when the learner's parameters are (New checks it).
	if t.Baseline == "" {
		return
	}
	if why := labels.CheckMethod(t.Baseline); why != "" {
		p.At("tuning.baseline", "%s (the baseline is one of the run's method labels)", why)
	}
}

// Serves implements experiments.Server: tuning.learners may name external
// learners ([[methods]] with serves = "learner").
func (c *Section) Serves() []string { return []string{experiments.ServesLearner} }

// Produces implements experiments.Producer: the rows' datasets are
// data.datasets; their method labels one per tuning.methods entry, or one
// "<method>/<learner>" per method and tuning.learners entry (registered,
// a Go module's or external) when that key is set, as New labels them
// (Varied: those of learners that run as variants, whose rows carry
// "<method>/<learner>[param=value,…]"); the metrics are [Metrics].
func (c *Section) Produces(s *experiments.Spec) experiments.Produced {
	explicit := len(c.Tuning.Learners) > 0
	learners := c.Tuning.Learners
	if !explicit {
		learners = []string{""} // the built-in learner, unnamed in the label
	}
	varied := s.VariedMethods(experiments.ServesLearner)
	out := experiments.Produced{Datasets: slices.Clone(s.Data.Datasets), Metrics: slices.Clone(Metrics)}
	for _, m := range c.Tuning.Methods {
		for _, l := range learners {
			if explicit && slices.Contains(varied, l) {
				out.Varied = append(out.Varied, armLabel(m, l, explicit))
			} else {
				out.Methods = append(out.Methods, armLabel(m, l, explicit))
			}
		}
	}
	return out
}

// Produces implements experiments.Producer: the rows' datasets are the
// histogram's sources (histogram.densities, then "<dataset>:<column>" per
// histogram.attributes entry, as NewHist names them); their methods
// tuning.methods; the metrics [HistMetrics] (ise only for the densities,
// whose f is known).
func (c *HistSection) Produces(*experiments.Spec) experiments.Produced {
	sources := slices.Clone(c.Histogram.Densities)
	for _, a := range c.Histogram.Attributes {
		sources = append(sources, sourceName(a))
	}
	return experiments.Produced{Datasets: sources, Methods: slices.Clone(c.Tuning.Methods), Metrics: slices.Clone(HistMetrics)}
}

// Validate implements experiments.Section.
func (c *HistSection) Validate(s *experiments.Spec, p *experiments.Problems) {
	if len(s.Data.Datasets) == 0 && len(c.Histogram.Densities) == 0 {
		p.At("data.datasets", "must list at least one dataset")
	}
	c.validateHistogram(s, p)
	validateCV(&c.CV, &c.Tuning, false, p)
	if len(c.Tuning.Learners) > 0 {
		p.At("tuning.learners", "the histogram-tuning kind has one learner, Algorithm 5 of Chaudhuri & Vinterbo 2013; remove the key")
	}
	validateBaseline(&c.Tuning, experiments.Produced{Methods: c.Tuning.Methods}, p)
}

// budget returns the selection budget of α: α, tuning.delta and
// tuning.train_delta.
func (t *TuningSpec) budget(alpha float64) selection.Budget {
	return selection.Budget{Alpha: alpha, Delta: t.Delta, TrainDelta: t.TrainDelta}
}

// validateCV checks the [cv] protocol and [tuning]'s grids and methods
// (lambdas too when lambdas is set: the cv-tuning kind).
func validateCV(cv *CVSpec, t *TuningSpec, lambdas bool, p *experiments.Problems) {
	if cv.Repetitions < 1 {
		p.At("cv.repetitions", "must be >= 1 (got %d)", cv.Repetitions)
	}
	if cv.Folds < 3 {
		p.At("cv.folds", "must be >= 3: one test, one validation and at least one training fold (got %d)", cv.Folds)
	}
	if lambdas {
		p.Grid("tuning.lambdas", t.Lambdas, experiments.Positive, "finite and > 0")
	}
	p.Grid("tuning.alphas", t.Alphas, experiments.Positive, "finite and > 0")
	if !(t.Delta > 0 && t.Delta < 1) {
		p.At("tuning.delta", "must be in (0, 1) (got %v)", t.Delta)
	}
	if !(t.TrainDelta >= 0 && t.TrainDelta < 1) {
		p.At("tuning.train_delta", "must be in [0, 1) (got %v)", t.TrainDelta)
	}
	if !lambdas && t.TrainDelta != 0 {
		p.At("tuning.train_delta", "the histogram's Algorithm 5 is pure ε-DP: remove the key")
	}
	p.Names("tuning.methods", t.Methods, selection.Names(), true, "method")
}

// validateHistogram checks the histogram section.
func (c *HistSection) validateHistogram(s *experiments.Spec, p *experiments.Problems) {
	h := &c.Histogram
	if len(h.Bins) == 0 {
		p.Add("histogram.bins", "histogram.bins", "must list at least one number of bins")
	}
	dupBins := experiments.SeenBefore[int]()
	for i, b := range h.Bins {
		path := fmt.Sprintf("histogram.bins[%d]", i)
		if b < 1 {
			p.Add("histogram.bins", path, "must be >= 1 (got %d)", b)
		}
		if dupBins(b) {
			p.Add("histogram.bins", path, "duplicate value %d", b)
		}
	}
	if len(h.Densities) == 0 && len(h.Attributes) == 0 {
		p.Add("histogram.densities", "histogram.densities", "the histogram kind needs densities or attributes")
	}
	dupDens := experiments.SeenBefore[string]()
	for i, d := range h.Densities {
		path := fmt.Sprintf("histogram.densities[%d]", i)
		if !slices.Contains(HistogramDensities, d) {
			p.Add("histogram.densities", path, "%s", experiments.Unknown("density", d, HistogramDensities))
		}
		if dupDens(d) {
			p.Add("histogram.densities", path, "duplicate density %q", d)
		}
	}
	if len(h.Densities) > 0 && h.Records < 1 {
		p.Add("histogram.records", "histogram.records", "must be >= 1 with densities (got %d)", h.Records)
	}
	for i, a := range h.Attributes {
		path := fmt.Sprintf("histogram.attributes[%d]", i)
		if !slices.Contains(s.Data.Datasets, a.Dataset) {
			p.Add("histogram.attributes", path+".dataset", "%q is not in data.datasets %v", a.Dataset, s.Data.Datasets)
		}
		if a.Column == "" {
			p.Add("histogram.attributes", path+".column", "required")
		}
		if !(a.Lo < a.Hi) || math.IsInf(a.Lo, 0) || math.IsInf(a.Hi, 0) {
			p.Add("histogram.attributes", path, "public bounds must be finite with lo < hi (got [%v, %v])", a.Lo, a.Hi)
		} else {
			p.Magnitude("histogram.attributes", path+".lo", a.Lo)
			p.Magnitude("histogram.attributes", path+".hi", a.Hi)
		}
	}
	if len(h.Attributes) > 0 && (s.Data.ColumnScale != "none" || s.Data.RowNorm != "none") {
		p.Add("data.column_scale", "data.column_scale", `attributes are read raw: set column_scale = "none" and row_norm = "none" (got %q, %q)`, s.Data.ColumnScale, s.Data.RowNorm)
	}
}

// cvLimits are the bounds of the [cv] protocol and [tuning]'s alphas.
func cvLimits(cv *CVSpec, t *TuningSpec) []experiments.Limit {
	return []experiments.Limit{
		{Key: "cv.repetitions", Max: 1e4, Counts: experiments.Value("cv.repetitions", cv.Repetitions),
			Why: "Chaudhuri & Vinterbo repeat 10 times (1000× margin); each repetition keeps a fold assignment of 8 bytes per record"},
		{Key: "cv.folds", Max: 1e5, Counts: experiments.Value("cv.folds", cv.Folds),
			Why: "the paper uses 10 folds (10,000× margin); every fold needs at least 2 records (2k with dataSplit)"},
		{Key: "tuning.alphas", Max: 1e4, Counts: experiments.Length("tuning.alphas", len(t.Alphas)),
			Why: "the specs use 6 values (1600× margin)"},
	}
}

// Limits implements experiments.Section.
func (c *Section) Limits(*experiments.Spec) []experiments.Limit {
	l := cvLimits(&c.CV, &c.Tuning)
	return append(l[:2:2], experiments.Limit{Key: "tuning.lambdas", Max: 1e4, Counts: experiments.Length("tuning.lambdas", len(c.Tuning.Lambdas)),
		Why: "the paper's grid has 10 values (1000× margin); a unit fits up to 2 models per value"}, l[2])
}

// Limits implements experiments.Section.
func (c *HistSection) Limits(*experiments.Spec) []experiments.Limit {
	h := &c.Histogram
	return append(cvLimits(&c.CV, &c.Tuning),
		experiments.Limit{Key: "histogram.bins", Max: 1e4, Counts: experiments.Length("histogram.bins", len(h.Bins)),
			Why: "the spec compares 7 bin counts (1400× margin); a unit keeps one histogram per count"},
		experiments.Limit{Key: "histogram.bins", Max: 1e7, Counts: experiments.Each("histogram.bins", h.Bins),
			Why: "the largest paper bin count is 256 (40,000× margin); a histogram holds 8–24 bytes per bin"},
		experiments.Limit{Key: "histogram.records", Max: 1e8, Counts: experiments.Value("histogram.records", h.Records),
			Why: "the spec draws 20,000 points per density (5000× margin); 8 bytes per point plus 8 per point and repetition for the folds"},
		experiments.Limit{Key: "histogram.attributes", Max: 1000, Counts: experiments.Length("histogram.attributes", len(h.Attributes)),
			Why: "the spec reads 2 attributes (500× margin)"},
	)
}

// cvUnits returns the units of a tuning run over sources data sources and
// the key of the largest factor.
func cvUnits(sources float64, cv *CVSpec, t *TuningSpec) (float64, string) {
	units := sources * float64(len(t.Alphas)) * float64(len(t.Methods)) * experiments.Pos(cv.Repetitions) * experiments.Pos(cv.Folds)
	key, best := "cv.repetitions", experiments.Pos(cv.Repetitions)
	if v := experiments.Pos(cv.Folds); v > best {
		key, best = "cv.folds", v
	}
	if v := float64(len(t.Alphas)); v > best {
		key = "tuning.alphas"
	}
	return units, key
}

// Workload implements experiments.Section.
func (c *Section) Workload(s *experiments.Spec) experiments.Workload {
	units, key := cvUnits(math.Max(1, float64(len(s.Data.Datasets))), &c.CV, &c.Tuning)
	units *= math.Max(1, float64(len(c.Tuning.Learners))) // each method runs with each learner
	w := experiments.Workload{Units: units, Rows: units, UnitKey: key}
	k := float64(len(c.Tuning.Lambdas))
	for _, name := range s.Data.Datasets {
		dt, n, d := s.DataTerm(name)
		w.Terms = append(w.Terms, dt,
			experiments.Term("cv.repetitions", experiments.Pos(c.CV.Repetitions)*n*8, false, "dataset %s: repetitions × n × 8 bytes of fold assignments", name),
			// Training, validation and test rows (and dataSplit's parts),
			// the solver's workspace (8 n floats) and the k models.
			experiments.Term("data.datasets", 2*n*(d*experiments.CSRBytes+24)+64*n+2*k*d*8, true, "dataset %s: a unit's rows (2 n × (d × %d + 24) bytes), solver workspace and models per unit in flight", name, experiments.CSRBytes).Of(name))
	}
	return w
}

// Workload implements experiments.Section.
func (c *HistSection) Workload(s *experiments.Spec) experiments.Workload {
	h := &c.Histogram
	units, key := cvUnits(float64(len(h.Densities)+len(h.Attributes)), &c.CV, &c.Tuning)
	w := experiments.Workload{Units: units, Rows: units, UnitKey: key}
	add := func(t experiments.MemTerm) { w.Terms = append(w.Terms, t) }
	var maxN float64
	for range h.Densities {
		add(experiments.Term("histogram.records", experiments.Pos(h.Records)*8, false, "records × 8 bytes per density"))
		maxN = math.Max(maxN, experiments.Pos(h.Records))
	}
	loaded := map[string]bool{}
	for _, a := range h.Attributes {
		dt, n, _ := s.DataTerm(a.Dataset)
		if !loaded[a.Dataset] {
			add(dt)
			loaded[a.Dataset] = true
		}
		add(experiments.Term("histogram.attributes", n*8, false, "attribute %s:%s: n × 8 bytes", a.Dataset, a.Column))
		maxN = math.Max(maxN, n)
	}
	sources := float64(len(h.Densities) + len(h.Attributes))
	add(experiments.Term("cv.repetitions", sources*experiments.Pos(c.CV.Repetitions)*maxN*8, false, "sources × repetitions × n × 8 bytes of fold assignments"))
	var sum, most float64
	for _, b := range h.Bins {
		sum += math.Max(1, float64(b))
		most = math.Max(most, float64(b))
	}
	add(experiments.Term("histogram.bins", sum*8+most*16+maxN*8, true, "Σ bins × 8 bytes of candidate histograms, 16 bytes per bin of the largest, and the unit's n × 8 bytes of points, per unit in flight"))
	return w
}

// Only implements experiments.MethodFilter (`dprepro run --only`): the
// names may be selection methods (tuning.methods) and learners
// (tuning.learners; the default learner when the spec lists none).
func (c *Section) Only(names []string) error {
	return onlyMethods(&c.Tuning, names)
}

// Only implements experiments.MethodFilter: the names are selection
// methods (tuning.methods).
func (c *HistSection) Only(names []string) error {
	return experiments.FilterMethods(names, experiments.MethodList{Key: "tuning.methods", Names: &c.Tuning.Methods})
}

func onlyMethods(t *TuningSpec, names []string) error {
	if b, _, _ := strings.Cut(t.Baseline, "/"); b != "" && len(names) > 0 && !slices.Contains(names, b) {
		names = append(slices.Clone(names), b) // the baseline's method is kept
	}
	lists := []experiments.MethodList{{Key: "tuning.methods", Names: &t.Methods}}
	if len(t.Learners) > 0 {
		lists = append(lists, experiments.MethodList{Key: "tuning.learners", Names: &t.Learners})
	} else {
		// The one learner of a spec without tuning.learners is always
		// kept; naming it is not an error.
		names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == learners.Default })
		if len(names) == 0 {
			return nil
		}
	}
	return experiments.FilterMethods(names, lists...)
}
