package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Synthetic modes for [Options.Synthetic].
const (
	// SyntheticAuto loads the real file if present, else the synthetic
	// stand-in (Source.Kind "synthetic", with the reason in Source.Params).
	SyntheticAuto = "auto"
	// SyntheticNever loads the real file; a missing file is an error.
	SyntheticNever = "never"
	// SyntheticAlways loads the synthetic stand-in even if the file exists.
	SyntheticAlways = "always"
)

// Source kinds for [Source.Kind].
const (
	KindReal      = "real"
	KindSynthetic = "synthetic"
)

// EnvDataDir names the environment variable that [DefaultDataDir] reads.
const EnvDataDir = "DPREPRO_DATA"

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
	// rate, seed, stand_in_for, reason, …); nil for real data.
	Params map[string]string
}

// FileRecord records one real file as read.
type FileRecord struct {
	// Name is the registry file name, e.g. "adult.data".
	Name string
	// Path is the path read, e.g. "/data/adult.data.gz".
	Path string
	// SHA256 is the hex SHA-256 of the decompressed content as read.
	SHA256 string
	// Verified reports that SHA256 equals the registry's pinned digest. It is
	// false only for a file with no pinned checksum (a mismatch is an error).
	Verified bool
	// Records is the number of records kept.
	Records int
	// Dropped is the number of records dropped as incomplete (adult: '?').
	Dropped int
}

// String summarises the source in one line. A synthetic source starts with
// "SYNTHETIC" so that it cannot be mistaken for real data in logs.
func (s Source) String() string {
	if s.Kind == KindReal {
		parts := make([]string, len(s.Files))
		for i, f := range s.Files {
			v := "verified"
			if !f.Verified {
				v = "NOT verified (no pinned checksum)"
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
}

// Options configures [Load].
type Options struct {
	// DataDir is the directory holding the real files; empty means
	// [DefaultDataDir].
	DataDir string
	// Synthetic is SyntheticAuto (the default when empty), SyntheticNever
	// or SyntheticAlways.
	Synthetic string
	// Seed seeds the synthetic stand-in; the generator's stream is derived
	// from (Seed, dataset name) by SHA-256 into a ChaCha8 seed. Unused for
	// real data. Zero is a valid seed.
	Seed uint64
	// Preprocess turns the raw table into the design matrix; the zero value
	// gives the defaults documented on [Preprocessing].
	Preprocess Preprocessing
}

// Load returns the named dataset, preprocessed.
//
// The real file is read from Options.DataDir (NAME or NAME.gz) and its
// SHA-256 checked against the registry; a present but corrupt or malformed
// file is an error, never a reason to fall back to synthetic data. When the
// file is absent, Options.Synthetic decides between an error wrapping
// ErrNotFound ("never") and the synthetic stand-in ("auto", "always"). The
// stand-in goes through the same preprocessing and has Source.Kind
// "synthetic".
//
// Load is safe for concurrent use; each call reads its own copy.
func Load(name string, opts Options) (*Dataset, error) {
	e, err := lookup(name)
	if err != nil {
		return nil, fmt.Errorf("datasets: load: %w", err)
	}
	if opts.Synthetic == "" {
		opts.Synthetic = SyntheticAuto
	}
	var errs []error
	if !slices.Contains([]string{SyntheticAuto, SyntheticNever, SyntheticAlways}, opts.Synthetic) {
		errs = append(errs, fmt.Errorf("synthetic: unknown value %q (want %s)", opts.Synthetic,
			oneOf([]string{SyntheticAuto, SyntheticNever, SyntheticAlways})))
	}
	if err := opts.Preprocess.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("datasets: load %s: %w", name, err)
	}
	dir := opts.DataDir
	if dir == "" {
		dir = DefaultDataDir()
	}

	var t *Table
	var src Source
	reason := "Options.Synthetic = \"always\""
	useReal := opts.Synthetic != SyntheticAlways
	if useReal {
		_, _, lerr := locate(dir, e.Files[0].Name)
		switch {
		case lerr == nil:
		case errors.Is(lerr, ErrNotFound) && opts.Synthetic == SyntheticAuto:
			useReal = false
			reason = "real file absent: " + lerr.Error()
		case errors.Is(lerr, ErrNotFound) && e.Files[0].Manual != "":
			return nil, fmt.Errorf("datasets: load %s: %w; %s", name, lerr, e.Files[0].Manual)
		default:
			return nil, fmt.Errorf("datasets: load %s: %w", name, lerr)
		}
	}
	if useReal {
		t, err = readTable(e, dir)
		if err != nil {
			return nil, fmt.Errorf("datasets: load %s: %w", name, err)
		}
		src = Source{Kind: KindReal, Files: t.Files}
	} else {
		t, src = synthesize(e, opts.Seed)
		src.Params["reason"] = reason
	}

	x, y, names, err := opts.Preprocess.apply(t, e.Task)
	if err != nil {
		return nil, fmt.Errorf("datasets: load %s: %w", name, err)
	}
	return &Dataset{
		Name:         e.Name,
		X:            x,
		Y:            y,
		FeatureNames: names,
		Task:         e.Task,
		Source:       src,
		Preprocess:   opts.Preprocess.WithDefaults(),
	}, nil
}

// DefaultDataDir returns $DPREPRO_DATA if set and non-empty, else
// os.UserCacheDir()/dprepro/data, else (no cache directory, e.g. $HOME
// unset) os.TempDir()/dprepro/data. The --data-dir flag is handled by the
// caller.
func DefaultDataDir() string {
	if d := os.Getenv(EnvDataDir); d != "" {
		return d
	}
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "dprepro", "data")
	}
	return filepath.Join(os.TempDir(), "dprepro", "data")
}
