package datasets

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Synthetic modes for [Options.Synthetic] (a spec's data.synthetic).
const (
	// SyntheticAuto loads the real file if present. An absent file gives
	// the synthetic stand-in only when no data directory was named
	// (Options.Named false: the newcomer's first run); from a named
	// directory it is an error.
	SyntheticAuto = "auto"
	// SyntheticAllow loads the real file if present, else the synthetic
	// stand-in, even from a named directory: the spec allows the stand-in
	// explicitly (for data nobody may have, such as the IPUMS extracts).
	SyntheticAllow = "allow"
	// SyntheticNever loads the real file; a missing file is an error.
	SyntheticNever = "never"
	// SyntheticAlways loads the synthetic stand-in without looking at the
	// data directory.
	SyntheticAlways = "always"
)

// ReasonSyntheticAlways is the reason a stand-in records
// (Source.Params["reason"]) when Options.Synthetic is SyntheticAlways,
// said in the terms of the spec key that sets it: the stand-in was asked
// for, whether or not the real file is in the data directory.
const ReasonSyntheticAlways = `the spec asks for the stand-in (data.synthetic = "always"), whether or not the real file is available`

// SyntheticModes lists the accepted values of [Options.Synthetic].
var SyntheticModes = []string{SyntheticAuto, SyntheticAllow, SyntheticNever, SyntheticAlways}

// checkSynthetic validates a synthetic mode.
func checkSynthetic(mode string) error {
	if !slices.Contains(SyntheticModes, mode) {
		return fmt.Errorf("synthetic: unknown value %q (want %s)", mode, oneOf(SyntheticModes))
	}
	return nil
}

// Missing-value policies for [Options.Missing] (a spec's data.missing):
// what becomes of a record of a built-in file holding the format's
// missing-value marker (adult.data: "?").
const (
	// MissingDrop drops every record holding the marker (the default).
	MissingDrop = "drop"
	// MissingLevel keeps a marker in a categorical field as a level of
	// that column (its literal text, "?", one-hot encoded like any other
	// level); a record with the marker in a numeric field or the label is
	// still dropped and counted. On adult.data it keeps all 32,561
	// records (2,399 of them with a "?" level); see docs/data.md for
	// the columns it adds and the "98 predictors" of Chaudhuri &
	// Vinterbo (2013), Section 5, that motivate it.
	MissingLevel = "level"
)

// MissingPolicies lists the accepted values of [Options.Missing].
var MissingPolicies = []string{MissingDrop, MissingLevel}

// checkMissing validates a missing-value policy ("" means MissingDrop).
func checkMissing(policy string) error {
	if policy != "" && !slices.Contains(MissingPolicies, policy) {
		return fmt.Errorf("missing: unknown value %q (want %s)", policy, oneOf(MissingPolicies))
	}
	return nil
}

// Source kinds for [Source.Kind].
const (
	KindReal      = "real"
	KindSynthetic = "synthetic"
)

// Source says where a dataset's records came from. A synthetic stand-in is
// never labelled as real.
type Source struct {
	// Kind is KindReal or KindSynthetic.
	Kind string
	// Files records, for real data, each file read.
	Files []FileRecord
	// Generator names the synthetic generator and its version, e.g.
	// "planted-logistic/v1"; empty for real data.
	Generator string
	// Params records the synthetic generator's parameters (n, d, positive
	// rate, seed, stand_in_for, reason, …); for a user's data file how it
	// was found ("path", "path_as_written", "format"; see
	// [NewFileProvider]); nil for the registry's real files.
	Params map[string]string
}

// FileRecord records one real file as read.
type FileRecord struct {
	// Name is the registry file name, e.g. "adult.data"; for a user's data
	// file its base name.
	Name string
	// Path is the path read, e.g. "/data/adult.data.gz" (absolute for a
	// user's data file).
	Path string
	// SHA256 is the hex SHA-256 of the decompressed content as read.
	SHA256 string
	// Verified reports that SHA256 equals the registry's pinned digest (for
	// a user's data file: its sha256 pin). It is false only for a file with
	// no pinned checksum (a mismatch is an error).
	Verified bool
	// Records is the number of records kept.
	Records int
	// Dropped is the number of records dropped as incomplete (adult: '?';
	// a user's file: an empty or '?' field, a NaN in a .npy array).
	Dropped int
	// Missing is, for a built-in file whose format has a missing-value
	// marker (adult.data), the policy applied ([MissingDrop] or
	// [MissingLevel]); empty for any other file.
	Missing string
	// Read is, when Missing is set, the number of records read (Records
	// plus Dropped); zero otherwise.
	Read int
	// MissingLevel is, under [MissingLevel], the number of kept records
	// that hold the marker as a level of at least one categorical column.
	MissingLevel int
	// Warning, for a file with no pinned checksum, says that its record
	// count is more than 10 % away from the documented one (see
	// [FileStatus.Warning]); empty otherwise.
	Warning string
}

// String summarises the source in one line. A synthetic source starts with
// "SYNTHETIC" so that it cannot be mistaken for real data in logs.
func (s Source) String() string {
	if s.Kind == KindReal {
		parts := make([]string, len(s.Files))
		for i, f := range s.Files {
			v := "verified"
			if !f.Verified {
				v = "present, not pinned: NOT verified"
			}
			parts[i] = fmt.Sprintf("%s (%s, sha256 %s, %s)", f.Name, f.Path, f.SHA256, v)
		}
		return "real: " + strings.Join(parts, "; ")
	}
	keys := make([]string, 0, len(s.Params))
	for k := range s.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	kv := make([]string, len(keys))
	for i, k := range keys {
		kv[i] = k + "=" + s.Params[k]
	}
	return fmt.Sprintf("SYNTHETIC stand-in, not real data: %s (%s)", s.Generator, strings.Join(kv, ", "))
}

// Dataset is a design matrix and target ready for the experiments.
type Dataset struct {
	// Name is the registry name.
	Name string
	// X is the n×d design matrix after preprocessing.
	X *mat.Dense
	// Y holds ±1 labels (classification) or the real target (regression),
	// after any target preprocessing.
	Y []float64
	// FeatureNames names the d columns of X ("age", "workclass=Private",
	// "log1p(src_bytes)", "(intercept)").
	FeatureNames []string
	// Task is TaskClassification or TaskRegression.
	Task string
	// Source says whether the records are real or synthetic, and from where.
	Source Source
	// Preprocess is the preprocessing applied, with defaults filled in.
	Preprocess Preprocessing
	// Public describes the bounds of the rows and what was clipped when
	// Preprocess.Scaling is "public"; nil under data-dependent scaling.
	// Its counts are those of the records before any subsample.
	Public *PublicInfo
	// Selection records the predictor selection (Preprocess.Select), a
	// non-private step that read every record's label; nil when none ran.
	// Preprocess.Columns then lists the attributes it kept.
	Selection *SelectionInfo
	// Warnings are notes for the run's manifest and stderr about the real
	// file, e.g. an unpinned file whose record count is far from the
	// documented one ("ipums-us.txt: 1,000 records, documented 39,928"),
	// a label value that differs from a data file's positive one only by
	// case or surrounding space, or a categorical attribute with about one
	// level per record (see describe.go).
	Warnings []string
	// Labels lists, for classification, each label value with its count
	// (records read, before any subsample) and the class it became, sorted
	// by value; a table built without label text (a synthetic stand-in, a
	// Go provider's table that gives none) lists the classes "+1" and "-1".
	// Nil for regression.
	Labels []LabelCount
}

// Options configures [Load].
type Options struct {
	// DataDir is the directory holding the real files; empty means the
	// directory [ResolveDataDir] gives with no flag ($DPREPRO_DATA, which
	// counts as named, else the user cache).
	DataDir string
	// Named reports that the user named DataDir (--data-dir or
	// $DPREPRO_DATA; [DataDir.Named]). With SyntheticAuto an absent file
	// in a named directory is an error, not a reason to use the stand-in.
	Named bool
	// Synthetic is SyntheticAuto (the default when empty), SyntheticAllow,
	// SyntheticNever or SyntheticAlways.
	Synthetic string
	// Seed seeds the synthetic stand-in; the generator's stream is derived
	// from (Seed, dataset name) by SHA-256 into a ChaCha8 seed. Unused for
	// real data. Zero is a valid seed.
	Seed uint64
	// Preprocess turns the raw table into the design matrix; the zero value
	// gives the defaults documented on [Preprocessing].
	Preprocess Preprocessing
	// Missing is what becomes of a record holding its file's missing-value
	// marker: [MissingDrop] (the default when empty) or [MissingLevel].
	// Only the built-in formats with a marker (adult) use it; the others,
	// the synthetic stand-ins (which have no missing values) and a user's
	// data file ([LoadFile], which drops such records) ignore it.
	Missing string
	// Admit, when set, is called with the dataset's [Shape] once its
	// records are read and before its design matrix (N × D float64
	// values, and the intercept) is allocated; an error from it stops the
	// load and is returned as it is. A run checks its memory estimate
	// here with the real n and d (experiments.Spec.SetDataShape), so that
	// a categorical identifier that would make d ≈ n is refused before
	// the n × n matrix exists.
	Admit func(Shape) error
}

// Load returns the named dataset, preprocessed: a built-in one or one added
// by [Register] (its [Provider] reads the raw table, Load applies
// Options.Preprocess the same way for both).
//
// For a built-in dataset the real file is read from Options.DataDir (NAME or NAME.gz) and its
// SHA-256 checked against the registry. A file that is there but bad (a
// checksum mismatch, a corrupt .gz, something that is not a regular file, a
// broken link, an unreadable or malformed file) is an error naming the
// path, never a reason to fall back to synthetic data; the classification
// is that of [Inspect]. When the file is absent, Options.Synthetic and
// Options.Named decide:
//
//	synthetic  directory named   directory not named
//	auto       error             stand-in
//	allow      stand-in          stand-in
//	never      error             error
//	always     stand-in (the directory is not looked at)
//
// The error wraps ErrNotFound and names the file, the directory and the
// `dprepro data fetch` command that fills it (for the IPUMS extracts, how
// to obtain them). The stand-in goes through the same preprocessing, has
// Source.Kind "synthetic" and records why in Source.Params["reason"].
//
// What a provider outside this package returns is checked before use
// (errors wrap [ErrProvider]; see [Provider] for the provenance rules).
//
// Load is safe for concurrent use; each call reads its own copy.
func Load(name string, opts Options) (*Dataset, error) {
	p, err := provider(name)
	if err != nil {
		return nil, fmt.Errorf("datasets: load: %w", err)
	}
	return load(p, opts)
}

// load reads p with opts, checks what a provider outside this package
// returned, and applies the preprocessing.
func load(p Provider, opts Options) (*Dataset, error) {
	name := p.Name()
	if opts.Synthetic == "" {
		opts.Synthetic = SyntheticAuto
	}
	if err := errors.Join(checkSynthetic(opts.Synthetic), checkMissing(opts.Missing), opts.Preprocess.Validate()); err != nil {
		return nil, fmt.Errorf("datasets: load %s: %w", name, err)
	}
	dir, named := opts.DataDir, opts.Named
	if dir == "" {
		d := ResolveDataDir("", os.Getenv)
		dir, named = d.Path, named || d.Named
	}
	raw, err := p.Read(Request{DataDir: dir, Named: named, Synthetic: opts.Synthetic, Seed: opts.Seed, Missing: opts.Missing})
	if err == nil {
		if _, ok := p.(trusted); !ok {
			err = checkRaw(raw)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("datasets: load %s: %w", name, err)
	}
	pp := opts.Preprocess.WithDefaults()
	if opts.Admit != nil {
		if err := opts.Admit(pp.shape(raw.Table)); err != nil {
			return nil, err
		}
	}
	sel, err := opts.Preprocess.selectAttributes(raw.Table, raw.Task)
	if err != nil {
		return nil, fmt.Errorf("datasets: load %s: %w", name, err)
	}
	if sel != nil {
		opts.Preprocess.Columns = sel.Kept
	}
	x, y, names, pub, err := opts.Preprocess.encode(raw.Table, raw.Task)
	if err != nil {
		var oe *OverflowError
		if errors.As(err, &oe) && len(raw.Source.Files) > 0 {
			oe.File = raw.Source.Files[0].Path
		}
		var me *UndeclaredMissingLevelError
		if errors.As(err, &me) {
			me.Dataset = name
		}
		return nil, fmt.Errorf("datasets: load %s: %w", name, err)
	}
	warnings := slices.Clone(raw.Warnings)
	if pp.Scaling != ScalingPublic {
		warnings = append(warnings, pp.wideCategorical(raw.Table)...)
	}
	if sel != nil {
		dropped := "none"
		if len(sel.Dropped) > 0 {
			dropped = strings.Join(sel.Dropped, ", ")
		}
		of := ""
		if raw.Source.Kind != KindReal {
			of = " of the SYNTHETIC stand-in" // its selection is not the real data's
		}
		warnings = append(warnings, fmt.Sprintf("predictors chosen by %s on all %d records%s and their labels, before any split: NOT private (kept %d of %d attributes; dropped %s)",
			sel.Method, sel.Records, of, len(sel.Kept), len(sel.Candidates), dropped))
		if n := len(sel.Unconverged); n > 0 {
			// R warns "glm.fit: algorithm did not converge" and goes on.
			warnings = append(warnings, fmt.Sprintf("%d fits of the predictor selection did not converge, their deviances are the last iterates' (first: %s)", n, sel.Unconverged[0]))
		}
	}
	var labels []LabelCount
	if raw.Task == TaskClassification {
		labels = raw.Table.Labels
		if labels == nil {
			labels = classLabels(raw.Table.Y)
		}
	}
	return &Dataset{
		Name:         name,
		X:            x,
		Y:            y,
		FeatureNames: names,
		Task:         raw.Task,
		Source:       raw.Source,
		Preprocess:   opts.Preprocess.WithDefaults(),
		Public:       pub,
		Selection:    sel,
		Warnings:     warnings,
		Labels:       slices.Clone(labels),
	}, nil
}
