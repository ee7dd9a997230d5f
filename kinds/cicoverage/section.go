package cicoverage

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/runner"
)

// Name is the kind of Wang, Kifer & Lee 2019: bootstrap coverage and
// length of private confidence intervals.
const Name = "ci-coverage"

// Kind is the ci-coverage experiment kind (runner.Kind): the
// [confidence_intervals] table with its defaults, paired by (replicate,
// row_type) (see the Experiment's PairKey); its runs are drawn across runs
// ([coverageKind.AcrossFolder]).
var Kind = coverageKind{runner.KindDef[*Section]{
	KindName: Name,
	Defaults: func() *Section {
		return &Section{ConfidenceIntervals: CISpec{
			Alpha: 0.05, C: 0.001, H: 1, Eps1: 0.5, Eps2: 0.25, Eps3: 0.25, BlockSize: 50,
		}}
	},
	Build: func(spec *experiments.Spec, _ *Section, data runner.DataOptions) (runner.Experiment, error) {
		return New(spec, data)
	},
	Pairs: []string{"replicate", "row_type"},
}}

// coverageKind is the ci-coverage kind's type: a runner.KindDef with the
// hook of the figures across runs (runner.AcrossKind).
type coverageKind struct {
	runner.KindDef[*Section]
}

// Only implements experiments.MethodFilter (`dprepro run --only`): the
// names are methods of confidence_intervals.methods.
func (sec *Section) Only(names []string) error {
	return experiments.FilterMethods(names, experiments.MethodList{Key: "confidence_intervals.methods", Names: &sec.ConfidenceIntervals.Methods})
}

// Section is the ci-coverage kind's part of a spec.
type Section struct {
	ConfidenceIntervals CISpec `toml:"confidence_intervals"`
}

// Spec is a resolved ci-coverage spec: the shared part and the section.
type Spec struct {
	*experiments.Spec
	*Section
}

// ciSpec returns spec with its ci-coverage section.
func ciSpec(spec *experiments.Spec) (*Spec, error) {
	sec, err := runner.SectionOf[*Section](spec, Name)
	if err != nil {
		return nil, err
	}
	return &Spec{spec, sec}, nil
}

// CISpec is the coverage experiment of Wang, Kifer & Lee, "Differentially
// Private Confidence Intervals for Empirical Risk Minimization" (JPC 9(1),
// 2019, arXiv:1804.03794), Section 7: bootstrap coverage and length of the
// private confidence intervals of Algorithms 3 and 5 against the
// variability interval.
type CISpec struct {
	// Methods are names of registered CI methods (cimethods.Names): the
	// built-ins "<privacy>-<perturbation>-<model>" with privacy dp or zcdp,
	// perturbation obj or output, model lr or svm, any method a module
	// registered with cimethods.Register, and the spec's [[methods]] with
	// serves = "ci" (cimethods.External), which may not take a registered
	// name.
	Methods []string `toml:"methods"`
	// Alpha is the CI level 1−α; in (0, 1). Default 0.05.
	Alpha float64 `toml:"alpha"`
	// C is the regularization c (objective c‖θ‖²); > 0. Default 0.001.
	C float64 `toml:"c"`
	// H is the Huber width h of the SVM loss; > 0. Default 1.
	H float64 `toml:"h"`
	// Eps1, Eps2, Eps3 are the DP budgets ε₁ (θ̃), ε₂ (Hessian), ε₃
	// (gradient covariance); > 0. Defaults 0.5, 0.25, 0.25. The zCDP
	// methods use ρᵢ = εᵢ²/2 (Section 7: "we set ρ = ε²/2").
	Eps1 float64 `toml:"eps1"`
	Eps2 float64 `toml:"eps2"`
	Eps3 float64 `toml:"eps3"`
	// N1 is the number of records kept after the seeded permutation; 0
	// keeps all. D1 is the number of features kept (before the constant
	// feature); 0 keeps all.
	N1 int `toml:"n1"`
	D1 int `toml:"d1"`
	// Sweep is the swept parameter, "n", "d", "eps1", "eps2" or "eps3";
	// Values its values (integers >= 1 for n and d, > 0 otherwise).
	Sweep  string    `toml:"sweep"`
	Values []float64 `toml:"values"`
	// Replicates is the number k of bootstrap replicates for coverage (the
	// paper: 1000); >= 1.
	Replicates int `toml:"replicates"`
	// MCSamples is the number m of Monte Carlo samples of Algorithms 3 and
	// 5 (the paper: 10,000); >= 1.
	MCSamples int `toml:"mc_samples"`
	// VIFits is the number of bootstrap private fits of the variability
	// interval (the paper: 10,000); >= 2.
	VIFits int `toml:"vi_fits"`
	// BlockSize is the number of coverage replicates per runner unit (a
	// unit of an ε sweep serves every swept value); >= 1.
	// Default 50. Results do not depend on it.
	BlockSize int `toml:"block_size"`
	// SigmaFloor, when set, floors the eigenvalues of the private gradient
	// covariance Σ̃ at SigmaFloor·c instead of the 2c of the paper's text
	// (Algorithm 2 line 12, as Algorithm 3 line 6 and Algorithm 5 line 5
	// apply it); finite and > 0. It is a labelled calibration variant: 1
	// brings the coverages to the published Tables 2–4 (docs/analysis.md,
	// "coverage above the paper's"). The floor is post-processing of the
	// noisy matrix, so the privacy guarantee is the same. Unset (the
	// default) is the paper's 2c and leaves a spec's identity unchanged;
	// 2 is the same floor written out.
	SigmaFloor *float64 `toml:"sigma_floor,omitempty"`
}

// Sweeps are the parameters the ci-coverage kind can sweep.
var Sweeps = []string{"n", "d", "eps1", "eps2", "eps3"}

// Validate implements experiments.Section.
func (c *Section) Validate(s *experiments.Spec, p *experiments.Problems) {
	if len(s.Data.Datasets) == 0 {
		p.At("data.datasets", "must list at least one dataset")
	}
	c.validateCI(s, p)
}

// validateCI checks the confidence_intervals section and the data options
// the ci-coverage kind relies on.
func (sec *Section) validateCI(s *experiments.Spec, p *experiments.Problems) {
	c := &sec.ConfidenceIntervals
	k := func(name string) string { return "confidence_intervals." + name }
	if s.Data.Intercept {
		p.Add("data.intercept", "data.intercept", "must be false for ci-coverage: the constant feature is appended after the feature subset (Section 7)")
	}
	if !slices.Contains([]string{"l2-max", "l2-clip", "l2-unit"}, s.Data.RowNorm) {
		p.Add("data.row_norm", "data.row_norm", "must be l2-max, l2-clip or l2-unit for ci-coverage (got %q)", s.Data.RowNorm)
	}
	if s.Data.Subsample != 0 {
		p.Add("data.subsample", "data.subsample", "must be 0 for ci-coverage; use confidence_intervals.n1 (got %d)", s.Data.Subsample)
	}
	known := s.WithMethods(p, experiments.ServesCI, cimethods.Names())
	if len(c.Methods) == 0 {
		p.Add(k("methods"), k("methods"), "must list at least one method (known: %s)", strings.Join(known, ", "))
	}
	seen := map[string]bool{}
	for i, m := range c.Methods {
		path := fmt.Sprintf("%s[%d]", k("methods"), i)
		switch {
		case !slices.Contains(known, m):
			p.Add(k("methods"), path, "%s", experiments.Unknown("method", m, known))
		case seen[m]:
			p.Add(k("methods"), path, "duplicate method %q", m)
		}
		seen[m] = true
	}
	if !(c.Alpha > 0 && c.Alpha < 1) {
		p.Add(k("alpha"), k("alpha"), "must be in (0, 1) (got %v)", c.Alpha)
	}
	pos := func(name string, v float64) {
		if !(v > 0) || math.IsInf(v, 1) {
			p.Add(k(name), k(name), "must be finite and > 0 (got %v)", v)
		} else {
			p.Magnitude(k(name), k(name), v)
		}
	}
	pos("c", c.C)
	pos("h", c.H)
	pos("eps1", c.Eps1)
	pos("eps2", c.Eps2)
	pos("eps3", c.Eps3)
	if c.N1 < 0 {
		p.Add(k("n1"), k("n1"), "must be >= 0 (0 keeps all records) (got %d)", c.N1)
	}
	if c.D1 < 0 {
		p.Add(k("d1"), k("d1"), "must be >= 0 (0 keeps all features) (got %d)", c.D1)
	}
	p.OneOf(k("sweep"), c.Sweep, Sweeps...)
	if len(c.Values) == 0 {
		p.Add(k("values"), k("values"), "must not be empty")
	}
	dupValue := experiments.SeenBefore[float64]()
	for i, x := range c.Values {
		path := fmt.Sprintf("%s[%d]", k("values"), i)
		switch {
		case !(x > 0) || math.IsInf(x, 0):
			p.Add(k("values"), path, "must be finite and > 0 (got %v)", x)
		case x > experiments.MaxMagnitude || x < experiments.MinMagnitude:
			p.Magnitude(k("values"), path, x)
		case (c.Sweep == "n" || c.Sweep == "d") && x != math.Trunc(x):
			p.Add(k("values"), path, "must be an integer for sweep %q (got %v)", c.Sweep, x)
		case c.Sweep == "n" && x < 2:
			p.Add(k("values"), path, "must be >= 2 records (got %v)", x)
		}
		if dupValue(x) {
			p.Add(k("values"), path, "duplicate value %v", x)
		}
	}
	if c.Replicates < 1 {
		p.Add(k("replicates"), k("replicates"), "must be >= 1 (got %d)", c.Replicates)
	}
	if c.MCSamples < 1 {
		p.Add(k("mc_samples"), k("mc_samples"), "must be >= 1 (got %d)", c.MCSamples)
	}
	if c.VIFits < 2 {
		p.Add(k("vi_fits"), k("vi_fits"), "must be >= 2 (got %d)", c.VIFits)
	}
	if c.BlockSize < 1 {
		p.Add(k("block_size"), k("block_size"), "must be >= 1 (got %d)", c.BlockSize)
	}
	if c.SigmaFloor != nil {
		pos("sigma_floor", *c.SigmaFloor)
	}
}

// Serves implements experiments.Server: confidence_intervals.methods may
// name external CI methods ([[methods]] with serves = "ci",
// [cimethods.External]).
func (sec *Section) Serves() []string { return []string{experiments.ServesCI} }

// Produces implements experiments.Producer: the rows' datasets are
// data.datasets, their methods confidence_intervals.methods (registered
// or external), and the metrics [Metrics].
func (sec *Section) Produces(s *experiments.Spec) experiments.Produced {
	return experiments.Produced{Datasets: slices.Clone(s.Data.Datasets), Methods: slices.Clone(sec.ConfidenceIntervals.Methods), Metrics: slices.Clone(Metrics)}
}

// Limits implements experiments.Section.
func (sec *Section) Limits(*experiments.Spec) []experiments.Limit {
	c := &sec.ConfidenceIntervals
	const k = "confidence_intervals."
	sweepValues := func(sweep string) []experiments.Count {
		if c.Sweep != sweep {
			return nil
		}
		out := make([]experiments.Count, len(c.Values))
		for i, x := range c.Values {
			out[i] = experiments.Count{Path: fmt.Sprintf("%svalues[%d]", k, i), V: x}
		}
		return out
	}
	return []experiments.Limit{
		{Key: k + "replicates", Max: 1e6, Counts: experiments.Value(k+"replicates", c.Replicates),
			Why: "Wang, Kifer & Lee use k = 1000 (1000× margin); each replicate is a row per method"},
		{Key: k + "mc_samples", Max: 1e7, Counts: experiments.Value(k+"mc_samples", c.MCSamples),
			Why: "the paper uses m = 10,000 (1000× margin); an interval holds m × (d+1) × 8 bytes of draws"},
		{Key: k + "vi_fits", Max: 1e7, Counts: experiments.Value(k+"vi_fits", c.VIFits),
			Why: "the paper uses 10,000 fits (1000× margin); a variability interval holds fits × (d+1) × 8 bytes per variant"},
		{Key: k + "block_size", Max: 1e6, Counts: experiments.Value(k+"block_size", c.BlockSize),
			Why: "the specs use 50; a block larger than the replicate limit is never needed"},
		{Key: k + "values", Max: 1000, Counts: experiments.Length(k+"values", len(c.Values)),
			Why: "the paper sweeps at most 10 values (100× margin); each value keeps its own (sub)dataset in memory"},
		{Key: k + "values", Max: 1e8, Counts: sweepValues("n"),
			Why: "an n sweep's largest paper value is 450,000 records (200× margin; no registered dataset has more than 583,250)"},
		{Key: k + "values", Max: 1e5, Counts: sweepValues("d"),
			Why: "a d sweep's largest paper value is 10 features (10,000× margin; no registered dataset has more than 118)"},
		{Key: k + "n1", Max: 1e8, Counts: experiments.Value(k+"n1", c.N1),
			Why: "no registered dataset has more than 583,250 records"},
		{Key: k + "d1", Max: 1e5, Counts: experiments.Value(k+"d1", c.D1),
			Why: "the paper keeps 10 features; no registered dataset has more than 118"},
	}
}

// ciModels returns the distinct models of the registered methods among
// names (unknown names are skipped: validation reports them).
func ciModels(names []string) []string {
	var out []string
	for _, n := range names {
		if m, err := cimethods.Lookup(n); err == nil && !slices.Contains(out, string(m.Attributes().Model)) {
			out = append(out, string(m.Attributes().Model))
		}
	}
	return out
}

// Workload implements experiments.Section.
func (sec *Section) Workload(s *experiments.Spec) experiments.Workload {
	c := sec.ConfidenceIntervals
	nd := math.Max(1, float64(len(s.Data.Datasets)))
	pos := experiments.Pos
	models := float64(len(ciModels(c.Methods)))
	// An external method's model is in its hello, which validation does
	// not read: count one more model (at most the two dpci knows), an
	// upper bound.
	if slices.ContainsFunc(c.Methods, func(n string) bool {
		m, ok := s.Method(n)
		return ok && m.Serves == experiments.ServesCI && m.External()
	}) {
		models = math.Min(2, models+1)
	}
	blocks := math.Ceil(pos(c.Replicates) / pos(c.BlockSize))
	units := nd * float64(len(c.Values)) * models * (blocks + 1)
	rows := nd * float64(len(c.Values)) * float64(len(c.Methods)) * (pos(c.Replicates) + 1)
	key := "confidence_intervals.replicates"
	if float64(len(c.Values)) > pos(c.Replicates) {
		key = "confidence_intervals.values"
	}
	w := experiments.Workload{Units: units, Rows: rows, UnitKey: key}
	var terms []experiments.MemTerm
	add := func(key string, bytes float64, perUnit bool, format string, args ...any) {
		terms = append(terms, experiments.Term(key, bytes, perUnit, format, args...))
	}
	const csrBytes = experiments.CSRBytes
	var maxN, maxD, retained, transient float64
	for _, name := range s.Data.Datasets {
		dt, N, D := s.DataTerm(name)
		terms = append(terms, dt)
		for _, x := range c.Values {
			n, d := N, D
			if c.N1 > 0 {
				n = float64(c.N1)
			}
			if c.D1 > 0 {
				d = float64(c.D1)
			}
			switch c.Sweep {
			case "n":
				n = math.Max(1, x)
			case "d":
				d = math.Max(1, x)
			}
			// More records or features than the dataset has are refused
			// when the kind loads it.
			n, d = math.Min(n, N), math.Min(d, D)
			dp := d + 1 // the constant feature
			// Kept per value: record → distinct row (4 bytes) and at
			// most n distinct rows with their weights.
			retained += n * (4 + (dp+1)*csrBytes + 32)
			// Built per value: the subset matrix and the distinct-row
			// index, one value at a time.
			transient = math.Max(transient, n*(dp*8+(dp+1)*8+48))
			maxN, maxD = math.Max(maxN, n), math.Max(maxD, dp)
		}
	}
	add("confidence_intervals.values", retained, false, "every swept (sub)dataset: n × (4 + (d+2) × %d + 32) bytes of distinct rows, weights and record index", csrBytes)
	add("confidence_intervals.values", transient, false, "building one swept (sub)dataset: n × ((d+1) × 8 + (d+2) × 8 + 48) bytes")
	// A unit resamples and fits: counts, the replicate's rows, the
	// solver's workspace (8 n floats).
	add("confidence_intervals.values", maxN*(4+(maxD+1)*csrBytes+24+64), true, "a unit's bootstrap replicate and solver workspace, n × ((d+2) × %d + 92) bytes per unit in flight", csrBytes)
	mc := experiments.Pos(c.MCSamples) * maxD * 8
	variants := 0.0
	for _, model := range ciModels(c.Methods) {
		v, obj := 0.0, false
		for _, name := range c.Methods {
			m, err := cimethods.Lookup(name)
			if err != nil || string(m.Attributes().Model) != model {
				continue
			}
			if m.Attributes().Perturbation == string(cimethods.ObjPert) {
				obj = true
			} else {
				v++
			}
		}
		if obj {
			v++
		}
		variants = math.Max(variants, v)
	}
	vi := math.Max(1, variants) * experiments.Pos(c.VIFits) * maxD * 8
	if mc >= vi {
		add("confidence_intervals.mc_samples", mc, true, "m × (d+1) × 8 bytes of Monte Carlo draws per unit in flight (m = %d, d+1 = %.0f)", c.MCSamples, maxD)
	} else {
		add("confidence_intervals.vi_fits", vi, true, "variants × fits × (d+1) × 8 bytes of variability-interval fits per unit in flight (%.0f × %d × %.0f)", math.Max(1, variants), c.VIFits, maxD)
	}

	w.Terms = terms
	return w
}
