package privaudit

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/runner"
)

// Name is the empirical privacy audit: Clopper–Pearson lower bounds on ε of
// every mechanism of the harness, from outputs on neighbouring datasets
// (core/audit).
const Name = "privacy-audit"

// Kind is the privacy-audit experiment kind (runner.Kind, and
// runner.Auditor for `dprepro audit`): its table with its defaults.
var Kind = auditKind{runner.KindDef[*Section]{
	KindName: Name,
	Defaults: func() *Section { return &Section{Audit: AuditSpec{Delta: 1e-5, Confidence: 0.95}} },
	Build: func(spec *experiments.Spec, _ *Section, _ runner.DataOptions) (runner.Experiment, error) {
		return New(spec)
	},
}}

// auditKind is the privacy-audit kind's type: a runner.KindDef with the
// audit hook ([auditKind.PrepareAudit]).
type auditKind struct {
	runner.KindDef[*Section]
}

// Section is the privacy-audit kind's part of a spec.
type Section struct {
	Audit AuditSpec `toml:"audit"`
}

// Spec is a resolved privacy-audit spec: the shared part and the section.
type Spec struct {
	*experiments.Spec
	*Section
}

// auditSpec returns spec with its privacy-audit section.
func auditSpec(spec *experiments.Spec) (*Spec, error) {
	sec, err := runner.SectionOf[*Section](spec, Name)
	if err != nil {
		return nil, err
	}
	return &Spec{spec, sec}, nil
}

// AuditSpec is the privacy-audit kind: each audited mechanism, at each
// privacy parameter and in each variant (the correct one and deliberately
// broken ones), run on a pair of neighbouring inputs; a Clopper–Pearson
// lower bound on ε is set against the claimed ε.
type AuditSpec struct {
	// Mechanisms are names from Mechanisms. Required.
	Mechanisms []string `toml:"mechanisms"`
	// Epsilons is the grid of privacy parameters (ε; for zCDP mechanisms
	// ρ = ε²/2); finite and > 0.
	Epsilons []float64 `toml:"epsilons"`
	// Variants are the deliberately broken variants audited besides the
	// correct mechanism, from Variants; each runs where the mechanism
	// supports it. May be empty.
	Variants []string `toml:"variants"`
	// Draws is the number of measurement draws per side of a mechanism
	// that costs one noise draw; FitDraws of one that fits a model per
	// release. The selection stage draws a quarter as many. >= 400 each.
	Draws    int `toml:"draws"`
	FitDraws int `toml:"fit_draws"`
	// Delta is the δ at which zCDP claims are converted to (ε, δ) and the
	// δ of the (ε, δ) Gaussian mechanism; in (0, 1). Default 1e-5.
	Delta float64 `toml:"delta"`
	// Confidence is the level of each lower bound; in (0, 1). Default 0.95.
	Confidence float64 `toml:"confidence"`
}

// Validate implements experiments.Section.
func (sec *Section) Validate(s *experiments.Spec, p *experiments.Problems) {
	sec.validateAudit(s, p)
}

// Produces implements experiments.Producer: the rows' dataset column holds
// the mechanism (audit.mechanisms), their method column the variant
// ([Correct], then audit.variants, each where the mechanism supports it),
// and the metrics are [Metrics].
func (sec *Section) Produces(*experiments.Spec) experiments.Produced {
	return experiments.Produced{Datasets: slices.Clone(sec.Audit.Mechanisms), Methods: append([]string{Correct}, sec.Audit.Variants...), Metrics: slices.Clone(Metrics)}
}

// validateAudit checks the audit section.
func (sec *Section) validateAudit(s *experiments.Spec, p *experiments.Problems) {
	a := &sec.Audit
	names := func(key string, xs, known []string, required bool) {
		if required && len(xs) == 0 {
			p.Add(key, key, "must list at least one name (known: %s)", strings.Join(known, ", "))
		}
		dup := experiments.SeenBefore[string]()
		for i, name := range xs {
			path := fmt.Sprintf("%s[%d]", key, i)
			if known != nil && !slices.Contains(known, name) {
				p.Add(key, path, "%s", experiments.Unknown("name", name, known))
			}
			if dup(name) {
				p.Add(key, path, "duplicate name %q", name)
			}
		}
	}
	names("audit.mechanisms", a.Mechanisms, Mechanisms, true)
	names("audit.variants", a.Variants, Variants, false)
	if len(a.Epsilons) == 0 {
		p.Add("audit.epsilons", "audit.epsilons", "must not be empty")
	}
	dupEps := experiments.SeenBefore[float64]()
	for i, x := range a.Epsilons {
		path := fmt.Sprintf("audit.epsilons[%d]", i)
		if !(x > 0) || math.IsInf(x, 1) {
			p.Add("audit.epsilons", path, "must be finite and > 0 (got %v)", x)
		} else {
			p.Magnitude("audit.epsilons", path, x)
		}
		if dupEps(x) {
			p.Add("audit.epsilons", path, "duplicate value %v", x)
		}
	}
	if a.Draws < 400 {
		p.Add("audit.draws", "audit.draws", "must be >= 400 (got %d)", a.Draws)
	}
	if a.FitDraws < 400 {
		p.Add("audit.fit_draws", "audit.fit_draws", "must be >= 400 (got %d)", a.FitDraws)
	}
	if !(a.Delta > 0 && a.Delta < 1) {
		p.Add("audit.delta", "audit.delta", "must be in (0, 1) (got %v)", a.Delta)
	}
	if !(a.Confidence > 0 && a.Confidence < 1) {
		p.Add("audit.confidence", "audit.confidence", "must be in (0, 1) (got %v)", a.Confidence)
	}
}

// Limits implements experiments.Section.
func (sec *Section) Limits(*experiments.Spec) []experiments.Limit {
	a := &sec.Audit
	return []experiments.Limit{
		{Key: "audit.draws", Max: 1e8, Counts: experiments.Value("audit.draws", a.Draws),
			Why: "the thorough audit draws 1,000,000 per side (100× margin); a unit stores up to 320 bytes per draw"},
		{Key: "audit.fit_draws", Max: 1e7, Counts: experiments.Value("audit.fit_draws", a.FitDraws),
			Why: "the thorough audit fits 100,000 models per side (100× margin); each draw is a model fit"},
		{Key: "audit.epsilons", Max: 1000, Counts: experiments.Length("audit.epsilons", len(a.Epsilons)),
			Why: "the audit uses 4 values (250× margin)"},
	}
}

// Workload implements experiments.Section.
func (sec *Section) Workload(*experiments.Spec) experiments.Workload {
	a := sec.Audit
	units := float64(len(a.Mechanisms)) * float64(1+len(a.Variants)) * float64(len(a.Epsilons))
	return experiments.Workload{Units: units, Rows: units, UnitKey: "audit.epsilons", Terms: []experiments.MemTerm{
		// Per draw: 2 sides × (1 + 1/4 selection) × stats × 8 bytes of
		// statistics, and the selection's sorted copies; the largest
		// drawsMul × stats of any target is 10 (above-threshold: 10 × 1),
		// which gives 320 bytes; a fitting target (2 statistics) 52, times
		// its drawsMul (objpert-cms11-delta: 5), 260.
		experiments.Term("audit.draws", experiments.Pos(a.Draws)*320, true, "draws × 320 bytes of released statistics per unit in flight (the largest target draws 10× as many)"),
		experiments.Term("audit.fit_draws", experiments.Pos(a.FitDraws)*260, true, "fit_draws × 260 bytes of released statistics per unit in flight (the largest fitting target draws 5× as many)"),
	}}
}

// Only implements experiments.MethodFilter (`dprepro run --only`): the
// names are mechanisms of audit.mechanisms (`dprepro audit NAME…` does
// the same for the audit command).
func (sec *Section) Only(names []string) error {
	return experiments.FilterMethods(names, experiments.MethodList{Key: "audit.mechanisms", Names: &sec.Audit.Mechanisms})
}
