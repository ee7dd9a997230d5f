package datasets_test

import (
	"fmt"

	"github.com/dprepro/dprepro/datasets"
)

// ExampleLoad loads the synthetic stand-in for MAGIC (forced with
// Synthetic "always", so the example runs without data files), with an
// intercept appended before l2-max row scaling.
func ExampleLoad() {
	ds, err := datasets.Load("magic", datasets.Options{
		Synthetic:  datasets.SyntheticAlways,
		Seed:       1,
		Preprocess: datasets.Preprocessing{Intercept: true},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	n, d := ds.X.Dims()
	fmt.Println(ds.Source.Kind, ds.Source.Generator)
	fmt.Println(n, d, ds.FeatureNames[0], ds.FeatureNames[d-1])
	// Output:
	// synthetic planted-logistic/v1
	// 19020 11 fLength (intercept)
}

func ExampleNames() {
	for _, name := range datasets.Names() {
		e, _ := datasets.Lookup(name)
		fmt.Println(name, e.Task, e.Records, e.Dim)
	}
	// Output:
	// adult classification 30162 104
	// bank classification 45211 51
	// ipums-br classification 38000 52
	// ipums-us classification 39928 57
	// kddcup99 classification 494021 118
	// magic classification 19020 10
	// twitter regression 583250 77
}
