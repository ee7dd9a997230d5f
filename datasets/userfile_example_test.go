package datasets_test

import (
	"fmt"

	"github.com/dprepro/dprepro/datasets"
)

// ExampleLoadFile loads a small csv file of one's own: label column y,
// "yes" read as +1, colour one-hot encoded, values left unscaled.
func ExampleLoadFile() {
	ds, err := datasets.LoadFile("mine", datasets.FileOptions{
		Path:        "testdata/userfile_ok.csv",
		Label:       "y",
		Positive:    "yes",
		Categorical: []string{"colour"},
	}, datasets.Options{Preprocess: datasets.Preprocessing{ColumnScale: datasets.ScaleNone, RowNorm: datasets.RowNone}})
	if err != nil {
		fmt.Println(err)
		return
	}
	n, d := ds.X.Dims()
	f := ds.Source.Files[0]
	fmt.Println(ds.Task, n, d, ds.FeatureNames)
	fmt.Println(f.Name, f.Records, "kept,", f.Dropped, "dropped")
	fmt.Println(ds.X.RawRowView(0), ds.Y[0])
	// Output:
	// classification 5 5 [age colour=blue colour=green colour=red income]
	// userfile_ok.csv 5 kept, 2 dropped
	// [39 0 0 1 1.5] 1
}
