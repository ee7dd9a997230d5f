package experiments

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/dprepro/dprepro/datasets"
)

// DataFile is one [data.files.NAME] table of a spec: the user's own data
// file, loaded as dataset NAME when data.datasets names it. Its fields are
// those of datasets.FileOptions (see there for the formats and the npy
// conventions):
//
//	[data.files.mydata]
//	path = "mydata.csv"       # required; relative to the spec file's directory
//	format = "csv"            # "csv", "tsv" or "npy"; default from the extension
//	label = "outcome"         # csv/tsv: the label column's header name;
//	                          # npy: its column index ("-1" = last), or labels = "y.npy"
//	positive = "yes"          # label value read as +1 (others -1); absent: numeric
//	                          # label, kept as a regression target
//	categorical = ["colour"]  # columns one-hot encoded
//	sha256 = "…"              # optional pin of the file's SHA-256
//
// A data file is always read: data.synthetic does not apply to it (there
// is no stand-in), and a missing, unreadable, malformed or re-pinned file
// is an error naming it. The spec's preprocessing (data.columns,
// column_scale, row_norm, intercept, log1p, subsample, target_*) applies
// as to any dataset. NAME may not be the name of a registered dataset. A
// profile that changes a data file restates its whole table
// ([profile.quick.data.files.NAME] replaces [data.files.NAME]).
type DataFile struct {
	Path   string `toml:"path"`
	Format string `toml:"format,omitempty"`
	Label  string `toml:"label,omitempty"`
	// Labels is, for npy only, a separate .npy vector of labels,
	// relative to the spec file's directory like path; exactly one of
	// label and labels is set for npy.
	Labels      string   `toml:"labels,omitempty"`
	Positive    string   `toml:"positive,omitempty"`
	Categorical []string `toml:"categorical,omitempty"`
	SHA256      string   `toml:"sha256,omitempty"`
	// LabelsSHA256 optionally pins the SHA-256 of the labels file.
	LabelsSHA256 string `toml:"labels_sha256,omitempty"`
}

// options returns the datasets.FileOptions of f, relative paths resolved
// against dir.
func (f DataFile) options(dir string) datasets.FileOptions {
	return datasets.FileOptions{
		Path: f.Path, Dir: dir, Format: f.Format, Label: f.Label, Labels: f.Labels,
		Positive: f.Positive, Categorical: f.Categorical, SHA256: f.SHA256, LabelsSHA256: f.LabelsSHA256,
	}
}

// DataFileOptions returns how to read dataset name when the spec declares
// it in data.files: its datasets.FileOptions with Dir the directory of the
// spec file (relative paths are relative to it). ok is false for a name
// data.files does not declare (a registered dataset).
func (s *Spec) DataFileOptions(name string) (opts datasets.FileOptions, ok bool) {
	f, ok := s.Data.Files[name]
	if !ok {
		return datasets.FileOptions{}, false
	}
	dir := ""
	if s.Source != nil {
		dir = filepath.Dir(s.Source.Path)
	}
	return f.options(dir), true
}

// validateDataFiles checks data.datasets against the dataset registry and
// the names data.files declares, and each data.files table.
func (s *Spec) validateDataFiles() []fieldErr {
	var errs []fieldErr
	add := func(key, path, format string, args ...any) {
		errs = append(errs, fieldErr{key: key, path: path, msg: fmt.Sprintf(format, args...)})
	}
	names := make([]string, 0, len(s.Data.Files))
	for name := range s.Data.Files {
		names = append(names, name)
	}
	sort.Strings(names)

	known := datasets.Names()
	for i, d := range s.Data.Datasets {
		if !slices.Contains(known, d) && !hasFile(s, d) {
			also := ""
			if len(names) > 0 {
				also = "; data.files: " + strings.Join(names, ", ")
			}
			add("data.datasets", fmt.Sprintf("data.datasets[%d]", i), "unknown dataset %q (known: %s%s)%s", d, strings.Join(known, ", "), also, Hint(d, append(slices.Clone(known), names...)))
		}
	}

	for _, name := range names {
		key := "data.files." + name
		if err := datasets.CheckName(name); err != nil {
			add(key, key, "%v", err)
			continue
		}
		if p, ok := datasets.Registered(name); ok {
			add(key, key, "the data file %s has the name of the registered dataset %q (%s): a data file may not shadow a dataset; give the table another name",
				key, name, p.Description())
			continue
		}
		if err := s.Data.Files[name].options("").Validate(); err != nil {
			for _, e := range unjoin(err) {
				var fe *datasets.FileOptionError
				if !errors.As(e, &fe) {
					add(key, key, "%v", e)
					continue
				}
				field, _, _ := strings.Cut(fe.Field, "[")
				if field == "format" && s.Data.Files[name].Format == "" {
					field = "path" // the format was to come from the path's extension
				}
				add(key+"."+field, key+"."+fe.Field, "%s", fe.Msg)
			}
		}
		if s.Data.Synthetic == datasets.SyntheticAlways && slices.Contains(s.Data.Datasets, name) {
			add("data.synthetic", "data.synthetic", `"always" runs every dataset on its synthetic stand-in, and the data file %s has none (data.synthetic does not apply to data files): use "auto"`, key)
		}
	}
	return errs
}

// unreadDataFiles returns a warning for each [data.files.NAME] table of the
// file (the base spec's or a profile's) that no data.datasets list names,
// neither the base spec's nor any profile's: the file would never be read,
// most likely a name misspelt in one of the two places.
func unreadDataFiles(base string, lines keyLines, resolved map[string]Spec) []string {
	named, tables := map[string]bool{}, map[string]string{}
	for _, p := range slices.Sorted(maps.Keys(resolved)) { // the base spec ("") first
		s := resolved[p]
		for _, d := range s.Data.Datasets {
			named[d] = true
		}
		for t := range s.Data.Files {
			key := "data.files." + t
			if p != "" && !lines.has(key) {
				key = "profile." + p + "." + key
			}
			if _, seen := tables[t]; !seen {
				tables[t] = key
			}
		}
	}
	var w []string
	for _, t := range slices.Sorted(maps.Keys(tables)) {
		if !named[t] {
			w = append(w, fmt.Sprintf("%s%s: no data.datasets list (the base spec's or a profile's) names %q: the file is never read; add it to data.datasets, or remove the table",
				lineOf(base, lines, tables[t]), tables[t], t))
		}
	}
	return w
}

// Warnings returns the notes of Load on the spec itself, each with the
// file, line and key it concerns: a [data.files] table that no
// data.datasets list names. The command prints them to stderr and the run
// adds them to the manifest's warnings.
func (s *Spec) Warnings() []string { return slices.Clone(s.warnings) }

// hasFile reports whether data.files declares name.
func hasFile(s *Spec, name string) bool {
	_, ok := s.Data.Files[name]
	return ok
}

// unjoin returns the errors joined in err (errors.Join), or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
