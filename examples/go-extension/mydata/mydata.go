// Package mydata is a dataset written in Go for dprepro: a simulated
// credit-scoring population whose records are computed, not read, so its
// provenance is "synthetic" with a named, versioned generator and its
// parameters — the honest label for data a program makes up.
//
// Each record has four numeric attributes (income, debt ratio, years at the
// address, number of open accounts) and one categorical attribute (region,
// five levels); the label is +1 (repaid) or −1 (defaulted), drawn from a
// logistic model in the attributes. The population is the same for a given
// Request.Seed (the harness derives it from the spec's seed and the dataset
// name), so a run replays bit for bit.
package mydata

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/datasets"
)

// Records is the number of records the provider simulates.
const Records = 20_000

// Generator names the simulation and its version: change the version when
// the numbers it produces change (it is part of a run's identity).
const Generator = "example-credit-sim/v1"

// Credit is the dataset provider; register it with datasets.Register.
type Credit struct{}

// Name implements datasets.Provider.
func (Credit) Name() string { return "credit-sim" }

// Description implements datasets.Provider.
func (Credit) Description() string {
	return fmt.Sprintf("simulated credit applicants (%d records, 4 numeric + 1 categorical attribute), label: repaid (+1) or defaulted (-1); synthetic, from %s", Records, Generator)
}

var regions = []string{"east", "north", "south", "west", "centre"}

// Read implements datasets.Provider: it simulates the population from
// req.Seed.
func (Credit) Read(req datasets.Request) (*datasets.Raw, error) {
	rng := randx.New(req.Seed, Generator)
	income := make([]float64, Records)
	debt := make([]float64, Records)
	years := make([]float64, Records)
	accounts := make([]float64, Records)
	codes := make([]int, Records)
	y := make([]float64, Records)
	// Region effects on the log-odds, in the order of the sorted levels
	// (centre, east, north, south, west).
	effect := []float64{0.3, 0.1, -0.2, 0.0, -0.4}
	for i := range y {
		income[i] = math.Exp(10.5 + 0.5*rng.NormFloat64()) // log-normal, median ≈ 36,000
		debt[i] = math.Min(1, rng.ExpFloat64()*0.3)
		years[i] = math.Floor(rng.ExpFloat64() * 6)
		accounts[i] = math.Floor(rng.Float64() * 12)
		codes[i] = rng.IntN(len(regions))
		logit := 0.8*(math.Log(income[i])-10.5) - 3*debt[i] + 0.08*years[i] - 0.05*accounts[i] + effect[codes[i]] + 0.9
		if rng.Float64() < 1/(1+math.Exp(-logit)) {
			y[i] = 1
		} else {
			y[i] = -1
		}
	}
	levels := []string{"centre", "east", "north", "south", "west"} // sorted
	// codes index regions; map them to the sorted levels.
	toSorted := map[string]int{}
	for i, l := range levels {
		toSorted[l] = i
	}
	sorted := make([]int32, Records)
	for i, c := range codes {
		sorted[i] = int32(toSorted[regions[c]])
	}
	t := &datasets.Table{
		Attributes: []string{"income", "debt_ratio", "years_at_address", "open_accounts", "region"},
		Numeric: []datasets.NumericColumn{
			{Name: "income", Values: income},
			{Name: "debt_ratio", Values: debt},
			{Name: "years_at_address", Values: years},
			{Name: "open_accounts", Values: accounts},
		},
		Categorical: []datasets.CategoricalColumn{{Name: "region", Levels: levels, Codes: sorted}},
		Target:      "repaid",
		Y:           y,
	}
	return &datasets.Raw{
		Table: t,
		Task:  datasets.TaskClassification,
		Source: datasets.Source{
			Kind:      datasets.KindSynthetic,
			Generator: Generator,
			Params:    map[string]string{"n": strconv.Itoa(Records), "seed": strconv.FormatUint(req.Seed, 10)},
		},
	}, nil
}
