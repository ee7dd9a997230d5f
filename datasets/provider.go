package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Provider is a named dataset: the extension point of package datasets.
// The built-in datasets (adult, magic, …) are Providers, and a user's Go
// module adds its own with [Register] before it calls cli.Main:
//
//	func main() {
//		if err := datasets.Register(myData{}); err != nil {
//			log.Fatal(err)
//		}
//		os.Exit(cli.Main())
//	}
//
// A spec then names it in data.datasets like any built-in dataset, and
// [Load], [Names] and `dprepro list` know it.
//
// Read returns the raw table, before any preprocessing: the harness applies
// the spec's preprocessing (data.columns, log1p, one-hot, column_scale,
// intercept, row_norm, target_*) afterwards, the same way for every
// provider. Read must be safe for concurrent use and deterministic in its
// Request (the same request gives the same table), because a run's
// checkpoint identity is built from Source.
//
// Provenance must be honest; [Load] checks it and refuses a Raw that is not
// (errors wrap [ErrProvider]):
//   - Source.Kind [KindReal] only for records read from files, with one
//     FileRecord per file read naming its Path and the SHA-256 of its bytes
//     as stored; Load hashes each Path again and compares.
//   - Anything computed rather than read (a simulation, a generator, a
//     transformed download) is [KindSynthetic], with Source.Generator naming
//     the code and its version ("my-sim/v2") and Source.Params its
//     parameters (seed, n, …). Generator and Params are the checkpoint
//     identity of such data: change them when the data change.
type Provider interface {
	// Name is the registry key, e.g. "adult": letters, digits, '-' and '_'
	// (see [CheckName]).
	Name() string
	// Description says in one line what a record is and what is predicted.
	Description() string
	// Read returns the raw table and its provenance.
	Read(req Request) (*Raw, error)
}

// Request is what the harness tells a [Provider] when it reads: the
// resolved data directory and stand-in policy of the run.
type Request struct {
	// DataDir is the data directory of the run (never empty).
	DataDir string
	// Named reports that the user named DataDir (--data-dir or
	// $DPREPRO_DATA), see [Options.Named].
	Named bool
	// Synthetic is the spec's stand-in policy (never empty; see
	// [Options.Synthetic]). A provider with no stand-in may ignore it.
	Synthetic string
	// Seed seeds anything random the provider draws (a stand-in, a
	// simulation): derive the stream from it, e.g. with core/randx.
	Seed uint64
	// Missing is the spec's missing-value policy ([MissingDrop] when
	// empty, or [MissingLevel]; see [Options.Missing]). A provider whose
	// data has no missing-value marker ignores it; one that reads it must
	// say so in its Source (its identity), as the built-in files do
	// (FileRecord.Missing).
	Missing string
}

// Raw is a dataset as a [Provider] reads it, before preprocessing.
type Raw struct {
	// Table holds the attributes and the target. Required, with at least
	// one record; Attributes, Numeric and Categorical agree (see [Table]),
	// categorical Levels are sorted, numbers are finite.
	Table *Table
	// Task is TaskClassification (Table.Y holds ±1) or TaskRegression.
	Task string
	// Source records where the records came from (see [Provider]).
	Source Source
	// Warnings are notes for the run's manifest and stderr.
	Warnings []string
}

// nameRe is the form of a dataset name: a safe file name and a bare TOML
// key (so that [data.files.NAME] needs no quotes; no '.', which TOML reads
// as a nested table).
var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// maxNameLen bounds a dataset name.
const maxNameLen = 64

// CheckName returns an error unless name can name a dataset: 1 to 64
// letters, digits, '-' and '_', starting with a letter or digit. The names
// of [Register] and of a spec's [data.files.NAME] tables follow it.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("empty dataset name")
	case len(name) > maxNameLen:
		return fmt.Errorf("dataset name %q is longer than %d bytes", name, maxNameLen)
	case !nameRe.MatchString(name):
		return fmt.Errorf("dataset name %q: use letters, digits, '-' and '_', starting with a letter or digit", name)
	}
	return nil
}

// providers is the one registry of datasets: the built-in entries and the
// providers added by [Register]. It is safe for concurrent use.
type providers struct {
	mu     sync.RWMutex
	byName map[string]Provider
}

// registry holds every dataset, the built-in ones from the start.
var registry = newProviders(builtinEntries())

// newProviders returns a registry holding the built-in entries. A broken
// entry list is a bug of this package: it panics.
func newProviders(entries []*Entry) *providers {
	r := &providers{byName: make(map[string]Provider, len(entries))}
	for _, e := range entries {
		if err := r.add(builtin{e}); err != nil {
			panic("datasets: built-in entry: " + err.Error())
		}
	}
	return r
}

// Register adds p to the registry under p.Name(), so that [Load], [Names]
// and the spec check of data.datasets know it. It returns an error for a
// nil provider, a name [CheckName] refuses, an empty or multi-line
// description, or a name already registered (wrapping
// [ErrDuplicateDataset]; built-in names cannot be replaced). Call it from
// main before cli.Main; it is safe for concurrent use.
func Register(p Provider) error {
	if err := registry.add(p); err != nil {
		return fmt.Errorf("datasets: register: %w", err)
	}
	return nil
}

func (r *providers) add(p Provider) error {
	if p == nil {
		return errors.New("nil provider")
	}
	name := p.Name()
	if err := CheckName(name); err != nil {
		return err
	}
	desc := p.Description()
	if strings.TrimSpace(desc) == "" || strings.ContainsAny(desc, "\r\n") {
		return fmt.Errorf("dataset %q: the description must be one non-empty line (got %q)", name, desc)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, dup := r.byName[name]; dup {
		return fmt.Errorf("%w: %q (%s)", ErrDuplicateDataset, name, old.Description())
	}
	r.byName[name] = p
	return nil
}

// remove deletes name (tests only).
func (r *providers) remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byName, name)
}

func (r *providers) get(name string) (Provider, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.byName[name]
	return p, ok
}

// entry returns the Entry of a built-in dataset.
func (r *providers) entry(name string) (*Entry, bool) {
	p, ok := r.get(name)
	if !ok {
		return nil, false
	}
	b, ok := p.(builtin)
	return b.e, ok
}

func (r *providers) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.byName))
	for name := range r.byName {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Names returns the registered dataset names, built-in and added by
// [Register], in sorted order.
func Names() []string { return registry.names() }

// Registered returns the provider registered under name: a built-in
// dataset or one added by [Register].
func Registered(name string) (Provider, bool) { return registry.get(name) }

// provider returns the provider of name or an error wrapping
// ErrUnknownDataset.
func provider(name string) (Provider, error) {
	if p, ok := registry.get(name); ok {
		return p, nil
	}
	return nil, fmt.Errorf("%w %q (registered: %v)", ErrUnknownDataset, name, Names())
}

// trusted marks the providers of this package, whose Raw is built by code
// already checked here (the built-in loaders and user data files): Load
// does not check it again. A type outside the package cannot have the
// unexported method.
type trusted interface{ trusted() }

// builtin is the Provider of a built-in Entry: the real file from the data
// directory, or its labelled synthetic stand-in as Request.Synthetic and
// Request.Named decide (see [Load]).
type builtin struct{ e *Entry }

func (b builtin) Name() string        { return b.e.Name }
func (b builtin) Description() string { return b.e.Description }
func (builtin) trusted()              {}

// Read reads the real file of the entry or, when it is absent and the
// policy allows, draws the stand-in.
func (b builtin) Read(req Request) (*Raw, error) {
	e := b.e
	var t *Table
	var src Source
	reason := ReasonSyntheticAlways
	useReal := req.Synthetic != SyntheticAlways
	if useReal {
		var st FileStatus
		var err error
		t, st, err = readReal(e, req.DataDir, req.Missing)
		switch {
		case err == nil:
			src = Source{Kind: KindReal, Files: t.Files}
		case st.State == StateAbsent:
			if reason, err = absentPolicy(e, req.DataDir, req.Named, req.Synthetic); err != nil {
				return nil, err
			}
			useReal = false
		default:
			return nil, err
		}
	}
	if !useReal {
		t, src = synthesize(e, req.Seed)
		src.Params["reason"] = reason
		if req.Missing == MissingLevel && e.format != nil && e.format.missing != "" {
			// The stand-in draws no missing values: say so, under the
			// policy's name, in its parameters (its identity). Absent
			// under "drop", so that a stand-in's identity is unchanged.
			src.Params["missing"] = fmt.Sprintf("%s: the stand-in has no missing values (no %q level)", MissingLevel, e.format.missing)
		}
	}
	var warnings []string
	for _, f := range src.Files {
		if f.Warning != "" {
			warnings = append(warnings, f.Warning)
		}
	}
	return &Raw{Table: t, Task: e.Task, Source: src, Warnings: warnings}, nil
}

// checkRaw checks what a provider outside this package returned; the
// errors wrap ErrProvider.
func checkRaw(raw *Raw) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrProvider, fmt.Sprintf(format, args...))
	}
	if raw == nil || raw.Table == nil {
		return bad("Read returned no table")
	}
	if raw.Task != TaskClassification && raw.Task != TaskRegression {
		return bad("task %q (want %q or %q)", raw.Task, TaskClassification, TaskRegression)
	}
	if err := raw.Table.validate(raw.Task); err != nil {
		return bad("%v", err)
	}
	src := raw.Source
	switch src.Kind {
	case KindReal:
		if len(src.Files) == 0 {
			return bad("source kind %q with no file records: real data names every file it was read from, with its SHA-256 (else use %q with a generator)", KindReal, KindSynthetic)
		}
		for i, f := range src.Files {
			if f.Path == "" {
				return bad("source file %d (%s): no path", i+1, f.Name)
			}
			got, err := FileSHA256(f.Path)
			if err != nil {
				return bad("source file %d: %v", i+1, err)
			}
			if f.SHA256 != got {
				return bad("source file %s records sha256 %q, but the file's is %s", f.Path, f.SHA256, got)
			}
		}
	case KindSynthetic:
		if src.Generator == "" {
			return bad("source kind %q with no generator: name the code that computed the records and its version (it is the data's identity in checkpoints)", KindSynthetic)
		}
		if len(src.Files) > 0 {
			return bad("source kind %q with file records: data read from files is %q", KindSynthetic, KindReal)
		}
	default:
		return bad("source kind %q (want %q or %q)", src.Kind, KindReal, KindSynthetic)
	}
	return nil
}

// validate checks a table built outside this package: the checks of
// check, as errors, plus finite values, codes within their levels, sorted
// distinct levels and ±1 labels for classification.
func (t *Table) validate(task string) error {
	n := len(t.Y)
	if n == 0 {
		return errors.New("table has no records")
	}
	if len(t.Attributes) != len(t.Numeric)+len(t.Categorical) {
		return fmt.Errorf("table lists %d attributes but has %d numeric and %d categorical columns",
			len(t.Attributes), len(t.Numeric), len(t.Categorical))
	}
	seen := map[string]int{}
	for _, a := range t.Attributes {
		seen[a]++
	}
	for a, k := range seen {
		if k > 1 || a == "" {
			return fmt.Errorf("table attribute %q is empty or listed twice", a)
		}
	}
	for _, c := range t.Numeric {
		if seen[c.Name] != 1 {
			return fmt.Errorf("numeric column %q is not in Attributes", c.Name)
		}
		seen[c.Name] = 0
		if len(c.Values) != n {
			return fmt.Errorf("numeric column %q has %d values, want %d (len(Y))", c.Name, len(c.Values), n)
		}
		for i, v := range c.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("numeric column %q, record %d: non-finite value %v", c.Name, i+1, v)
			}
		}
	}
	for _, c := range t.Categorical {
		if seen[c.Name] != 1 {
			return fmt.Errorf("categorical column %q is not in Attributes, or also numeric", c.Name)
		}
		seen[c.Name] = 0
		if len(c.Codes) != n {
			return fmt.Errorf("categorical column %q has %d codes, want %d (len(Y))", c.Name, len(c.Codes), n)
		}
		if len(c.Levels) == 0 || !slices.IsSorted(c.Levels) || len(slices.Compact(slices.Clone(c.Levels))) != len(c.Levels) {
			return fmt.Errorf("categorical column %q: levels must be distinct and sorted (sort.Strings), at least one", c.Name)
		}
		for i, code := range c.Codes {
			if code < 0 || int(code) >= len(c.Levels) {
				return fmt.Errorf("categorical column %q, record %d: code %d outside its %d levels", c.Name, i+1, code, len(c.Levels))
			}
		}
	}
	for i, y := range t.Y {
		if math.IsNaN(y) || math.IsInf(y, 0) {
			return fmt.Errorf("target, record %d: non-finite value %v", i+1, y)
		}
		if task == TaskClassification && y != 1 && y != -1 {
			return fmt.Errorf("target, record %d: %v; a classification target is +1 or -1", i+1, y)
		}
	}
	return t.validateLabels(task)
}

// validateLabels checks the label counts a provider gave (Table.Labels):
// classification only, each value once with records > 0 and class ±1,
// the records of each class adding up to those of Y.
func (t *Table) validateLabels(task string) error {
	if t.Labels == nil {
		return nil
	}
	if task != TaskClassification {
		return fmt.Errorf("labels: label counts are for classification (task is %s)", task)
	}
	want := classLabels(t.Y)
	got := map[float64]int{}
	values := map[string]bool{}
	for i, l := range t.Labels {
		switch {
		case values[l.Value]:
			return fmt.Errorf("labels[%d]: value %q listed twice", i, l.Value)
		case l.Records < 1:
			return fmt.Errorf("labels[%d] (%q): %d records; want at least 1", i, l.Value, l.Records)
		case l.Class != 1 && l.Class != -1:
			return fmt.Errorf("labels[%d] (%q): class %v; want +1 or -1", i, l.Value, l.Class)
		}
		values[l.Value] = true
		got[l.Class] += l.Records
	}
	for _, w := range want {
		if got[w.Class] != w.Records {
			return fmt.Errorf("labels: %d records of class %s, but Y has %d", got[w.Class], w.Value, w.Records)
		}
	}
	if len(got) > len(want) {
		return fmt.Errorf("labels: a class that Y does not have")
	}
	return nil
}

// FileSHA256 returns the lowercase hex SHA-256 of the bytes of the file at
// path as stored (not decompressed): the digest a [Provider] records in
// FileRecord.SHA256 for a file it read.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
