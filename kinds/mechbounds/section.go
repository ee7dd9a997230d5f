package mechbounds

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/runner"
)

// Name is Nguyen 2019, Sections 3.1–3.4: empirical error tails of the basic
// mechanisms against the review's accuracy bounds.
const Name = "mechanism-bounds"

// Kind is the mechanism-bounds experiment kind: its table with its
// defaults.
var Kind = runner.KindDef[*Section]{
	KindName: Name,
	Defaults: func() *Section {
		return &Section{Mechanisms: MechanismsSpec{Dim: 10, Candidates: 100, GaussianDelta: 1e-5}}
	},
	Build: func(spec *experiments.Spec, _ *Section, _ runner.DataOptions) (runner.Experiment, error) {
		return New(spec)
	},
}

// Section is the mechanism-bounds kind's part of a spec.
type Section struct {
	Mechanisms MechanismsSpec `toml:"mechanisms"`
}

// Spec is a resolved mechanism-bounds spec: the shared part and the section.
type Spec struct {
	*experiments.Spec
	*Section
}

// mechSpec returns spec with its mechanism-bounds section.
func mechSpec(spec *experiments.Spec) (*Spec, error) {
	sec, err := runner.SectionOf[*Section](spec, Name)
	if err != nil {
		return nil, err
	}
	return &Spec{spec, sec}, nil
}

// MechanismsSpec is the mechanism-bounds kind: each mechanism of Nguyen's
// 2019 review (Sections 3.1–3.4) run many times at each ε, and the
// empirical probability of an error beyond the review's threshold compared
// with the bound.
type MechanismsSpec struct {
	// Mechanisms are names from MechanismNames.
	Mechanisms []string `toml:"mechanisms"`
	// Epsilons is the ε grid; finite and > 0.
	Epsilons []float64 `toml:"epsilons"`
	// Levels are the tail probabilities at which the thresholds are set
	// (δ, or e^(−t) for the exponential mechanism); in (0, 1).
	Levels []float64 `toml:"levels"`
	// Dim is k: the bits of randomized response, the coordinates of the
	// Laplace and Gaussian mechanisms; >= 1. Default 10.
	Dim int `toml:"dim"`
	// Candidates is |Y| of the exponential mechanism (scores −0, −1, …,
	// −(|Y|−1), sensitivity 1); >= 2. Default 100.
	Candidates int `toml:"candidates"`
	// GaussianDelta is the δ of the Gaussian mechanism's σ (Proposition
	// 3.15); in (0, 1). Default 1e-5.
	GaussianDelta float64 `toml:"gaussian_delta"`
	// Replicates and Draws: each (mechanism, ε) runs Replicates units of
	// Draws outputs each; the summary's CI is over the replicates.
	Replicates int `toml:"replicates"` // >= 2
	Draws      int `toml:"draws"`      // >= 1
}

// MechanismNames are the mechanisms of the mechanism-bounds kind.
var MechanismNames = []string{"randomized-response", "laplace", "exponential", "gaussian"}

// Validate implements experiments.Section.
func (sec *Section) Validate(s *experiments.Spec, p *experiments.Problems) {
	sec.validateMechanisms(s, p)
}

// Produces implements experiments.Producer: the rows' dataset column holds
// the mechanism (mechanisms.mechanisms), their method column the tail
// level ("level 0.01", one per mechanisms.levels entry), and the metrics
// are [Metrics].
func (sec *Section) Produces(*experiments.Spec) experiments.Produced {
	var levels []string
	for _, l := range sec.Mechanisms.Levels {
		levels = append(levels, levelLabel(l))
	}
	return experiments.Produced{Datasets: slices.Clone(sec.Mechanisms.Mechanisms), Methods: levels, Metrics: slices.Clone(Metrics)}
}

// validateMechanisms checks the mechanisms section.
func (sec *Section) validateMechanisms(s *experiments.Spec, p *experiments.Problems) {
	m := &sec.Mechanisms
	if len(m.Mechanisms) == 0 {
		p.Add("mechanisms.mechanisms", "mechanisms.mechanisms", "must list at least one mechanism (known: %s)", strings.Join(MechanismNames, ", "))
	}
	dupMech := experiments.SeenBefore[string]()
	for i, name := range m.Mechanisms {
		path := fmt.Sprintf("mechanisms.mechanisms[%d]", i)
		if !slices.Contains(MechanismNames, name) {
			p.Add("mechanisms.mechanisms", path, "%s", experiments.Unknown("mechanism", name, MechanismNames))
		}
		if dupMech(name) {
			p.Add("mechanisms.mechanisms", path, "duplicate mechanism %q", name)
		}
	}
	grid := func(key string, xs []float64, ok func(float64) bool, want string) {
		if len(xs) == 0 {
			p.Add(key, key, "must not be empty")
		}
		dup := experiments.SeenBefore[float64]()
		for i, x := range xs {
			path := fmt.Sprintf("%s[%d]", key, i)
			if !ok(x) {
				p.Add(key, path, "must be %s (got %v)", want, x)
			} else if key == "mechanisms.epsilons" {
				p.Magnitude(key, path, x)
			}
			if dup(x) {
				p.Add(key, path, "duplicate value %v", x)
			}
		}
	}
	grid("mechanisms.epsilons", m.Epsilons, func(x float64) bool { return x > 0 && !math.IsInf(x, 1) }, "finite and > 0")
	grid("mechanisms.levels", m.Levels, func(x float64) bool { return x > 0 && x < 1 }, "in (0, 1)")
	if m.Dim < 1 {
		p.Add("mechanisms.dim", "mechanisms.dim", "must be >= 1 (got %d)", m.Dim)
	}
	if m.Candidates < 2 {
		p.Add("mechanisms.candidates", "mechanisms.candidates", "must be >= 2 (got %d)", m.Candidates)
	}
	if !(m.GaussianDelta > 0 && m.GaussianDelta < 1) {
		p.Add("mechanisms.gaussian_delta", "mechanisms.gaussian_delta", "must be in (0, 1) (got %v)", m.GaussianDelta)
	}
	if m.Replicates < 2 {
		p.Add("mechanisms.replicates", "mechanisms.replicates", "must be >= 2 (got %d)", m.Replicates)
	}
	if m.Draws < 1 {
		p.Add("mechanisms.draws", "mechanisms.draws", "must be >= 1 (got %d)", m.Draws)
	}
}

// Limits implements experiments.Section.
func (sec *Section) Limits(*experiments.Spec) []experiments.Limit {
	m := &sec.Mechanisms
	work := sec.work()
	return []experiments.Limit{
		{Key: "mechanisms.dim", Max: 1e6, Counts: experiments.Value("mechanisms.dim", m.Dim),
			Why: "Nguyen's examples use k = 10 (100,000× margin); every output draws k noise values", Work: work},
		{Key: "mechanisms.candidates", Max: 1e6, Counts: experiments.Value("mechanisms.candidates", m.Candidates),
			Why: "the spec uses |Y| = 100 (10,000× margin); every exponential-mechanism draw weighs all candidates (8 bytes and one exp each)", Work: work},
		{Key: "mechanisms.replicates", Max: 1e5, Counts: experiments.Value("mechanisms.replicates", m.Replicates),
			Why: "the spec uses 20 replicates (5000× margin); each is a unit"},
		{Key: "mechanisms.draws", Max: 1e9, Counts: experiments.Value("mechanisms.draws", m.Draws),
			Why: "the spec draws 10,000 outputs per unit (100,000× margin); draws are counted, not stored", Work: work},
		{Key: "mechanisms.epsilons", Max: 1000, Counts: experiments.Length("mechanisms.epsilons", len(m.Epsilons)),
			Why: "the spec uses 6 values (160× margin)"},
		{Key: "mechanisms.levels", Max: 1000, Counts: experiments.Length("mechanisms.levels", len(m.Levels)),
			Why: "the spec uses 4 levels (250× margin)"},
	}
}

// work estimates the noise draws of a run.
func (sec *Section) work() string {
	m := sec.Mechanisms
	perOutput := math.Max(float64(m.Dim), float64(m.Candidates))
	total := float64(len(m.Mechanisms)) * float64(len(m.Epsilons)) * float64(m.Replicates) * float64(m.Draws) * perOutput
	return fmt.Sprintf("estimated work %.3g noise draws or candidate weights: mechanisms × epsilons × replicates × draws × max(dim, candidates)", total)
}

// Workload implements experiments.Section.
func (sec *Section) Workload(*experiments.Spec) experiments.Workload {
	m := sec.Mechanisms
	pos := experiments.Pos
	units := float64(len(m.Mechanisms)) * float64(len(m.Epsilons)) * pos(m.Replicates)
	key := "mechanisms.replicates"
	if float64(len(m.Epsilons)) > pos(m.Replicates) {
		key = "mechanisms.epsilons"
	}
	return experiments.Workload{Units: units, Rows: units * float64(len(m.Levels)), UnitKey: key,
		Terms: []experiments.MemTerm{experiments.Term("mechanisms.candidates", pos(m.Candidates)*16, true, "candidates × 16 bytes of scores and weights per unit in flight")}}
}

// Only implements experiments.MethodFilter (`dprepro run --only`): the
// names are mechanisms of mechanisms.mechanisms.
func (sec *Section) Only(names []string) error {
	return experiments.FilterMethods(names, experiments.MethodList{Key: "mechanisms.mechanisms", Names: &sec.Mechanisms.Mechanisms})
}
