package rrcount

import (
	"fmt"
	"math"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/runner"
)

// Name is the kind's name: the value of a spec's kind key.
const Name = "rr-proportion"

// Kind is the rr-proportion experiment kind, to register with
// runner.RegisterKind before cli.Main. runner.KindDef makes a runner.Kind
// of its three parts: the name, the section with its defaults (a new value
// on every call: the spec's [rr] table is decoded over it) and the
// constructor of a loaded, validated spec. Pairs, left empty here, would
// make the kind a runner.Pairer (see the package doc).
var Kind = runner.KindDef[*Section]{
	KindName: Name,
	Defaults: func() *Section {
		return &Section{RR: Params{N: 1000, P: 0.5, Replicates: 20}}
	},
	Build: func(spec *experiments.Spec, sec *Section, _ runner.DataOptions) (runner.Experiment, error) {
		return New(spec, sec)
	},
}

// Section is the kind's part of a spec: its tables, each with an explicit
// toml tag (experiments.Section). Load decodes the file over the defaults
// of [Kind], applies the chosen profile, refuses keys no field took, then
// calls Validate.
type Section struct {
	RR Params `toml:"rr"`
}

// Params is the [rr] table: a synthetic population of N binary records,
// round(P·N) of them 1, each released once by randomized response at
// every ε of Epsilons, Replicates times.
type Params struct {
	// Epsilons is the ε grid: each ε is a separate release of the whole
	// population (an x of the figure). Required; finite, > 0, distinct.
	Epsilons []float64 `toml:"epsilons"`
	// N is the number of records (respondents); >= 1. Default 1000.
	N int `toml:"n"`
	// P is the population's proportion of 1s: the population holds
	// exactly round(P·N) of them, so its true proportion is
	// round(P·N)/N; in [0, 1]. Default 0.5.
	P float64 `toml:"p"`
	// Replicates is the number of independent releases of the population
	// at each ε (units); >= 2, so that the summary has a CI. Default 20.
	Replicates int `toml:"replicates"`
}

// Ones returns the number of records that hold a 1: round(P·N).
func (p Params) Ones() int { return int(math.Round(p.P * float64(p.N))) }

// Validate implements experiments.Section: every problem is reported to
// pr with the key at fault, so that the command prints
// "rr.toml:LINE: rr.n: must be >= 1 (got 0)" for each, all at once. The
// shared part of the spec is at hand too (s): the kind reads no data, so
// a data.datasets list would be ignored, and is refused instead.
func (sec *Section) Validate(s *experiments.Spec, pr *experiments.Problems) {
	if len(s.Data.Datasets) > 0 {
		pr.At("data.datasets", "the %s kind reads no data (its population is synthetic: [rr] n and p); remove the list", Name)
	}
	r := sec.RR
	// Grid: non-empty, each value finite and > 0 and within the
	// harness's magnitudes, none repeated.
	pr.Grid("rr.epsilons", r.Epsilons, experiments.Positive, "finite and > 0")
	if r.N < 1 {
		pr.At("rr.n", "must be >= 1 (got %d)", r.N)
	}
	if !(r.P >= 0 && r.P <= 1) { // written so that NaN fails too
		pr.At("rr.p", "must be in [0, 1] (got %v)", r.P)
	}
	if r.Replicates < 2 {
		pr.At("rr.replicates", "must be >= 2 (got %d): the summary's CI is over the replicates", r.Replicates)
	}
}

// Limits implements experiments.Section: the upper bounds of the
// section's counts, checked when the spec loads, so that a typo (n = 1e12)
// is refused before any unit runs rather than after hours.
func (sec *Section) Limits(*experiments.Spec) []experiments.Limit {
	r := sec.RR
	work := fmt.Sprintf("estimated work %.3g randomized-response draws: epsilons × replicates × n",
		float64(len(r.Epsilons))*float64(r.Replicates)*float64(r.N))
	return []experiments.Limit{
		{Key: "rr.n", Max: 1e9, Counts: experiments.Value("rr.n", r.N),
			Why: "the paper profile uses 10,000 records (100,000× margin); every record is one draw per unit", Work: work},
		{Key: "rr.replicates", Max: 1e5, Counts: experiments.Value("rr.replicates", r.Replicates),
			Why: "the paper profile uses 200 replicates (500× margin); each is a unit per ε", Work: work},
		{Key: "rr.epsilons", Max: 1000, Counts: experiments.Length("rr.epsilons", len(r.Epsilons)),
			Why: "the spec uses 6 values (160× margin); each is a unit per replicate"},
	}
}

// Workload implements experiments.Section: a unit per (ε, replicate), a
// row per unit, and no memory of the kind's own (the reports are counted
// as they are drawn, never stored).
func (sec *Section) Workload(*experiments.Spec) experiments.Workload {
	r := sec.RR
	units := float64(len(r.Epsilons)) * experiments.Pos(r.Replicates)
	key := "rr.replicates"
	if float64(len(r.Epsilons)) > experiments.Pos(r.Replicates) {
		key = "rr.epsilons"
	}
	return experiments.Workload{Units: units, Rows: units, UnitKey: key}
}
