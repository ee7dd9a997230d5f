// Package specdata loads the datasets of an experiment spec the same way for
// every experiment kind: the spec's preprocessing, its synthetic-stand-in
// policy, a seeded subsample, and the dataset record of the manifest.
package specdata

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
//
// A name the spec declares in data.files is the user's data file
// (datasets.LoadFile: read from its path, never a stand-in); any other
// name is a registered dataset (datasets.Load). Both get the same
// preprocessing and subsample.
//
// Once the records are read and before the design matrix is built, the
// dataset's measured shape goes to the spec (Spec.SetDataShape) and the
// spec's memory estimate with one worker is checked again
// (Spec.CheckResources): a spec that cannot fit with its real data is
// refused (the *experiments.SpecError of CheckResources) before the
// matrix is allocated. A subsample of at least the dataset's records
// keeps them all, with a warning (Dataset.Warnings).
func Load(spec *experiments.Spec, name, dataDir string, named bool) (*datasets.Dataset, error) {
	d := spec.Data
	opts := datasets.Options{
		DataDir:   dataDir,
		Named:     named,
		Synthetic: d.Synthetic,
		Missing:   d.Missing,
		Seed:      randx.Uint64(uint64(spec.Seed), "synthetic", name),
		Preprocess: datasets.Preprocessing{
			Columns:     d.Columns,
			ColumnScale: d.ColumnScale,
			Intercept:   d.Intercept,
			RowNorm:     d.RowNorm,
			Log1p:       d.Log1p,
			TargetLog1p: d.TargetLog1p,
			TargetScale: d.TargetScale,
			Scaling:     d.Scaling,
			Select:      d.Select,
			Coding:      d.Coding,
		},
	}
	if spec.Data.Scaling == datasets.ScalingPublic {
		opts.Preprocess.Domain = spec.Domain(name)
		opts.Preprocess.RowNormBound = d.RowNormBound
	}
	opts.Admit = func(sh datasets.Shape) error {
		spec.SetDataShape(name, sh)
		return spec.CheckResources(1)
	}
	var ds *datasets.Dataset
	var err error
	if f, ok := spec.DataFileOptions(name); ok {
		ds, err = datasets.LoadFile(name, f, opts)
	} else {
		ds, err = datasets.Load(name, opts)
	}
	if err != nil {
		return nil, At(spec, name, err)
	}
	if m := d.Subsample; m > 0 {
		if n, _ := ds.X.Dims(); m >= n {
			ds.Warnings = append(ds.Warnings, fmt.Sprintf("data.subsample = %d is not below the dataset's %d records: all %d are used, none drawn", m, n, n))
		}
		ds = datasets.Subsample(randx.New(uint64(spec.Seed), "subsample", name), ds, m)
	}
	return ds, nil
}

// Available reports, before any run and without reading data, whether
// dataset name of spec would load from dir: for a data file, that each of
// its files is a regular file (datasets.CheckFile); for a registered
// dataset, datasets.Available (standIn: it would run on its stand-in). An
// error is at the dataset's key (see At).
func Available(spec *experiments.Spec, name string, dir datasets.DataDir) (standIn bool, err error) {
	if f, ok := spec.DataFileOptions(name); ok {
		return false, At(spec, name, datasets.CheckFile(name, f))
	}
	standIn, err = datasets.Available(name, dir, spec.Data.Synthetic)
	return standIn, At(spec, name, err)
}

// At returns err, an error of dataset name of spec, at the spec key that
// names it (an *experiments.SpecError, nil for nil): for a data file, its
// table [data.files.NAME], or the field whose file is at fault
// (datasets.FileFieldError: data.files.NAME.path or .labels); for a
// registered dataset, its entry data.datasets[i].
func At(spec *experiments.Spec, name string, err error) error {
	if err == nil {
		return nil
	}
	var se *experiments.SpecError
	if errors.As(err, &se) {
		return err // at its key already (CheckResources)
	}
	var oe *datasets.OverflowError
	if errors.As(err, &oe) {
		// The scaling at fault is a key of the spec's data section.
		return spec.ErrorAt("data."+oe.Step, "data."+oe.Step, fmt.Errorf("dataset %s: %w", name, oe))
	}
	if _, ok := spec.DataFileOptions(name); ok {
		key := "data.files." + name
		var fe *datasets.FileFieldError
		if errors.As(err, &fe) && fe.Name == name {
			key += "." + fe.Field
			err = fe.Err // the key names the data file
		}
		return spec.ErrorAt(key, key, err)
	}
	path := "data.datasets"
	if i := slices.Index(spec.Data.Datasets, name); i >= 0 {
		path = fmt.Sprintf("data.datasets[%d]", i)
	}
	return spec.ErrorAt("data.datasets", path, fmt.Errorf("dataset %s: %w", name, err))
}

// Info returns the manifest's record of a loaded dataset: provenance (file
// digests or generator and parameters), size and preprocessing. For a data
// file, Files holds each file read (base name, SHA-256, whether its pin
// was verified, records kept and dropped) and Params its absolute path and
// the path as written in the spec ("path", "path_as_written", "format";
// for npy labels "labels_path", …); the checkpoint identity
// (results.DataIdentities) is built from the digests, so a file whose
// content changes starts the run over. Labels lists, for classification,
// each label value with its count and the class it became
// (Dataset.Labels); Subsample is 0 when the subsample kept every record.
func Info(spec *experiments.Spec, ds *datasets.Dataset) results.DatasetInfo {
	d := spec.Data
	n, p := ds.X.Dims()
	sub := d.Subsample
	if ds.Source.Params["subsample"] != strconv.Itoa(sub) {
		sub = 0 // not drawn (datasets.Subsample records one it draws): data.subsample ≥ n, a warning says so
	}
	info := results.DatasetInfo{
		Name: ds.Name, Source: ds.Source.Kind, Generator: ds.Source.Generator, Params: ds.Source.Params,
		Subsample: sub, N: n, D: p,
		Preproc: fmt.Sprintf("columns=%v column_scale=%s intercept=%t row_norm=%s log1p=%v target_log1p=%t target_scale=%s",
			d.Columns, d.ColumnScale, d.Intercept, d.RowNorm, d.Log1p, d.TargetLog1p, d.TargetScale),
	}
	if d.Coding != "" {
		info.Preproc += " coding=" + d.Coding
	}
	if s := ds.Selection; s != nil {
		info.Preproc += " select=" + s.Method
		info.Selection = selection(s, ds.Source.Kind != datasets.KindReal)
	}
	for _, f := range ds.Source.Files {
		info.Files = append(info.Files, results.FileInfo{Name: f.Name, SHA256: f.SHA256, Verified: f.Verified, Records: f.Records, Dropped: f.Dropped,
			Missing: f.Missing, Read: f.Read, MissingLevel: f.MissingLevel})
	}
	for _, l := range ds.Labels {
		info.Labels = append(info.Labels, results.LabelInfo{Value: l.Value, Records: l.Records, Class: fmt.Sprintf("%+g", l.Class)})
	}
	info.Scaling = spec.ScalingStatement()
	if p := ds.Public; p != nil {
		info.Preproc += fmt.Sprintf(" scaling=public row_norm_bound=%v", d.RowNormBound)
		info.Public = publicBounds(ds)
	}
	return info
}

// selection is the manifest's record of a dataset's predictor selection
// (standIn: made on a synthetic stand-in's records, which the statement
// says).
func selection(s *datasets.SelectionInfo, standIn bool) *results.Selection {
	of := ""
	if standIn {
		of = " of the SYNTHETIC stand-in"
	}
	r := &results.Selection{
		Method: s.Method, Criterion: s.Criterion, K: s.K, Records: s.Records,
		Statement:  fmt.Sprintf("NOT private: %s selection fitted to all %d records%s and their labels before the experiment", s.Criterion, s.Records, of),
		Candidates: s.Candidates, Kept: s.Kept, Dropped: s.Dropped, Start: s.Start,
		Deviance: s.Deviance, Rank: s.Rank, Columns: s.Columns, Aliased: s.Aliased, Converged: s.Converged, Unconverged: s.Unconverged,
	}
	for _, st := range s.Steps {
		r.Steps = append(r.Steps, results.SelectionStep{Dropped: st.Attribute, Criterion: st.Criterion, Deviance: st.Deviance, Rank: st.Rank, Aliased: st.Aliased})
	}
	return r
}

// publicBounds is the manifest's record of the public scaling of ds: each
// attribute used (in file order) with its declared range or number of
// levels and their source, and what clipping changed.
func publicBounds(ds *datasets.Dataset) *results.PublicBounds {
	p, dom := ds.Public, ds.Preprocess.Domain
	b := &results.PublicBounds{
		RowBound: p.RowBound, ImpliedRowBound: p.ImpliedRowBound, Records: p.Records,
		ClippedValues: p.ClippedValues, OutOfDomain: p.OutOfDomain, ClippedRows: p.ClippedRows, ClippedRecords: p.ClippedRecords,
	}
	source := func(a string) string {
		if s := dom.Sources[a]; s != "" {
			return " (" + s + ")"
		}
		return ""
	}
	seen := map[string]bool{}
	for _, f := range ds.FeatureNames {
		a, _, _ := strings.Cut(f, "=")
		if in, ok := strings.CutPrefix(a, "log1p("); ok {
			a = strings.TrimSuffix(in, ")")
		}
		if seen[a] || a == datasets.InterceptName {
			continue
		}
		seen[a] = true
		if r, ok := dom.Ranges[a]; ok {
			b.Ranges = append(b.Ranges, fmt.Sprintf("%s [%v, %v]%s", a, r.Lo, r.Hi, source(a)))
		} else if l, ok := dom.Levels[a]; ok {
			b.Levels = append(b.Levels, fmt.Sprintf("%s: %d levels%s", a, len(l), source(a)))
		}
	}
	return b
}

// Infos returns the provenance of the datasets a spec's experiment uses,
// in order ([Info] of each): the Datasets method of a kind that loads
// its data with [Load].
func Infos(spec *experiments.Spec, data []*datasets.Dataset) []results.DatasetInfo {
	var out []results.DatasetInfo // nil for none, as the manifest has always written it
	for _, ds := range data {
		out = append(out, Info(spec, ds))
	}
	return out
}

// Warnings returns the stderr warnings of the datasets: one for each that
// runs on a synthetic stand-in (because the spec asks for it, or because
// the real file is not available) or on data a Go provider computed, and the
// loader's notes on the real files (an unpinned file whose record count is
// far from the documented one).
func Warnings(data []*datasets.Dataset) []string {
	var w []string
	for _, ds := range data {
		switch {
		case ds.Source.Kind == datasets.KindReal:
		case ds.Source.Params["reason"] == datasets.ReasonSyntheticAlways:
			w = append(w, fmt.Sprintf("dataset %s: results use a SYNTHETIC stand-in (%s), as the spec asks (data.synthetic = \"always\"), not the real file, whether or not it is available", ds.Name, ds.Source.Generator))
		case ds.Source.Params["stand_in_for"] != "":
			w = append(w, fmt.Sprintf("dataset %s: the real file is not available; results use a SYNTHETIC stand-in (%s)", ds.Name, ds.Source.Generator))
		default:
			w = append(w, fmt.Sprintf("dataset %s: SYNTHETIC data computed by its provider (%s), not read from a file", ds.Name, ds.Source.Generator))
		}
		for _, dw := range ds.Warnings {
			w = append(w, fmt.Sprintf("dataset %s: %s", ds.Name, dw))
		}
	}
	return w
}
