package datasets_test

import (
	"fmt"

	"github.com/dprepro/dprepro/datasets"
)

// coin is a Provider that computes its records: a seeded simulation, so
// its provenance is synthetic, with a named, versioned generator.
type coin struct{}

func (coin) Name() string { return "example-coin" }
func (coin) Description() string {
	return "simulated coin flips with one numeric attribute; label: heads"
}

func (coin) Read(req datasets.Request) (*datasets.Raw, error) {
	x := []float64{0.1, 0.9, 0.4, 0.8, 0.2, 0.7}
	y := []float64{-1, 1, -1, 1, -1, 1}
	return &datasets.Raw{
		Table: &datasets.Table{
			Attributes: []string{"bias"},
			Numeric:    []datasets.NumericColumn{{Name: "bias", Values: x}},
			Target:     "heads",
			Y:          y,
		},
		Task:   datasets.TaskClassification,
		Source: datasets.Source{Kind: datasets.KindSynthetic, Generator: "example-coin/v1", Params: map[string]string{"n": "6"}},
	}, nil
}

// ExampleRegister registers a dataset computed by Go code; specs then name
// it in data.datasets, and Load applies the spec's preprocessing to it like
// to any built-in dataset.
func ExampleRegister() {
	if err := datasets.Register(coin{}); err != nil {
		fmt.Println(err)
		return
	}
	ds, err := datasets.Load("example-coin", datasets.Options{Preprocess: datasets.Preprocessing{Intercept: true}})
	if err != nil {
		fmt.Println(err)
		return
	}
	n, d := ds.X.Dims()
	fmt.Println(n, d, ds.Source.Kind, ds.Source.Generator)
	fmt.Println(datasets.Register(coin{}) != nil) // a name is registered once
	// Output:
	// 6 2 synthetic example-coin/v1
	// true
}
