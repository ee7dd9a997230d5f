// Package specdata loads the datasets of an experiment spec the same way for
// every experiment kind: the spec's preprocessing, its synthetic-stand-in
// policy, a seeded subsample, and the dataset record of the manifest.
package specdata

import (
	"fmt"

	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
)

// Load loads dataset name with spec's data section from dataDir; named
// reports that the user named the directory (datasets.Options.Named: an
// absent file is then an error unless the spec allows the stand-in). The
// stand-in (if used) is seeded from (spec seed, "synthetic", name), the
// subsample from (spec seed, "subsample", name).
func Load(spec *experiments.Spec, name, dataDir string, named bool) (*datasets.Dataset, error) {
	d := spec.Data
	ds, err := datasets.Load(name, datasets.Options{
		DataDir:   dataDir,
		Named:     named,
		Synthetic: d.Synthetic,
		Seed:      randx.Uint64(uint64(spec.Seed), "synthetic", name),
		Preprocess: datasets.Preprocessing{
			Columns:     d.Columns,
			ColumnScale: d.ColumnScale,
			Intercept:   d.Intercept,
			RowNorm:     d.RowNorm,
			Log1p:       d.Log1p,
			TargetLog1p: d.TargetLog1p,
			TargetScale: d.TargetScale,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: dataset %s: %w", spec.ID, name, err)
	}
	if m := d.Subsample; m > 0 {
		ds = datasets.Subsample(randx.New(uint64(spec.Seed), "subsample", name), ds, m)
	}
	return ds, nil
}

// Info returns the manifest's record of a loaded dataset: provenance (file
// digests or generator and parameters), size and preprocessing.
func Info(spec *experiments.Spec, ds *datasets.Dataset) results.DatasetInfo {
	d := spec.Data
	n, p := ds.X.Dims()
	info := results.DatasetInfo{
		Name: ds.Name, Source: ds.Source.Kind, Generator: ds.Source.Generator, Params: ds.Source.Params,
		Subsample: d.Subsample, N: n, D: p,
		Preproc: fmt.Sprintf("columns=%v column_scale=%s intercept=%t row_norm=%s log1p=%v target_log1p=%t target_scale=%s",
			d.Columns, d.ColumnScale, d.Intercept, d.RowNorm, d.Log1p, d.TargetLog1p, d.TargetScale),
	}
	for _, f := range ds.Source.Files {
		info.Files = append(info.Files, results.FileInfo{Name: f.Name, SHA256: f.SHA256, Verified: f.Verified, Records: f.Records, Dropped: f.Dropped})
	}
	return info
}

// Warnings returns the stderr warnings of the datasets: one for each that
// runs on a synthetic stand-in, and the loader's notes on the real files
// (an unpinned file whose record count is far from the documented one).
func Warnings(data []*datasets.Dataset) []string {
	var w []string
	for _, ds := range data {
		if ds.Source.Kind != datasets.KindReal {
			w = append(w, fmt.Sprintf("dataset %s: the real file is not available; results use a SYNTHETIC stand-in (%s)", ds.Name, ds.Source.Generator))
		}
		for _, dw := range ds.Warnings {
			w = append(w, fmt.Sprintf("dataset %s: %s", ds.Name, dw))
		}
	}
	return w
}
