package specdata

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
)

const fileSpec = `schema = 1
id = "t"
kind = "cv-tuning"
seed = 7

[data]
datasets = ["mine"]
subsample = SUB

[data.files.mine]
path = "sub/mine.tsv"
label = "y"
positive = "a"
categorical = ["c"]

[cv]
repetitions = 1
folds = 3

[tuning]
lambdas = [0.1, 1.0]
alphas = [1.0]
methods = ["control"]
`

const mineTSV = "x\tc\ty\n1\tu\ta\n2\tv\tb\n3\tu\t?\n4\tw\ta\n5\tv\tb\n"

// spec writes the spec and its data file (under sub/, relative to the
// spec) into a fresh directory and parses it.
func spec(t *testing.T, subsample, data string) (*experiments.Spec, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "sub", "mine.tsv")
	if data != "" {
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "t.toml")
	if err := os.WriteFile(path, []byte(strings.Replace(fileSpec, "SUB", subsample, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := experiments.Load(path, "", stubKinds{})
	if err != nil {
		t.Fatal(err)
	}
	return s, file
}

// TestLoad_DataFile: a data.files dataset loads through the datasets
// package with the spec's preprocessing and subsample, and its manifest
// record and checkpoint identity carry the file's digest.
func TestLoad_DataFile(t *testing.T) {
	t.Parallel()
	s, file := spec(t, "0", mineTSV)
	ds, err := Load(s, "mine", t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	// x, c=u, c=v, c=w, the intercept; 4 records (one '?').
	n, d := ds.X.Dims()
	if n != 4 || d != 5 || ds.Task != datasets.TaskClassification || !slices.Equal(ds.Y, []float64{1, -1, 1, -1}) {
		t.Errorf("loaded %d×%d %s %v", n, d, ds.Task, ds.Y)
	}
	info := Info(s, ds)
	sum, _ := datasets.FileSHA256(file)
	if info.Source != "real" || info.N != 4 || info.D != 5 || len(info.Files) != 1 || info.Files[0].SHA256 != sum ||
		info.Files[0].Dropped != 1 || info.Params["path"] != file || info.Params["path_as_written"] != "sub/mine.tsv" {
		t.Errorf("info %+v", info)
	}
	if w := Warnings([]*datasets.Dataset{ds}); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	id := results.DataIdentities([]results.DatasetInfo{info})
	if len(id) != 1 || !strings.Contains(id[0].Source, "mine.tsv sha256 "+sum) {
		t.Errorf("identity %+v", id)
	}

	// Other content at the same path: another identity.
	if err := os.WriteFile(file, []byte(strings.Replace(mineTSV, "5\tv", "6\tv", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ds2, err := Load(s, "mine", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if id2 := results.DataIdentities([]results.DatasetInfo{Info(s, ds2)}); id2[0] == id[0] {
		t.Errorf("identity unchanged after the file changed: %+v", id2)
	}
}

// TestLoad_DataFileSubsample: data.subsample applies to a data file as to
// any dataset.
func TestLoad_DataFileSubsample(t *testing.T) {
	t.Parallel()
	s, _ := spec(t, "3", mineTSV)
	ds, err := Load(s, "mine", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := ds.X.Dims(); n != 3 || ds.Source.Params["subsample"] != "3" || Info(s, ds).Subsample != 3 {
		t.Errorf("n = %d, params %v", n, ds.Source.Params)
	}
}

// TestAvailable_DataFile: the pre-run check finds a missing data file
// without reading anything, and never offers a stand-in.
func TestAvailable_DataFile(t *testing.T) {
	t.Parallel()
	s, file := spec(t, "0", "")
	standIn, err := Available(s, "mine", datasets.DataDir{Path: t.TempDir()})
	if standIn || !errors.Is(err, datasets.ErrNotFound) || !strings.Contains(err.Error(), file) {
		t.Errorf("missing: %v %v", standIn, err)
	}
	if _, err := Load(s, "mine", "", false); !errors.Is(err, datasets.ErrNotFound) {
		t.Errorf("Load: %v", err)
	}
	if err := os.WriteFile(file, []byte(mineTSV), 0o644); err != nil {
		t.Fatal(err)
	}
	if standIn, err := Available(s, "mine", datasets.DataDir{Path: t.TempDir()}); standIn || err != nil {
		t.Errorf("present: %v %v", standIn, err)
	}
}

// stubKinds knows one kind, cv-tuning, whose section takes its tables
// without checking them: these tests need only the shared part of a spec.
type stubKinds struct{}

type stubSection struct {
	CV     map[string]any `toml:"cv"`
	Tuning map[string]any `toml:"tuning"`
}

func (stubSection) Validate(*experiments.Spec, *experiments.Problems) {}
func (stubSection) Limits(*experiments.Spec) []experiments.Limit      { return nil }
func (stubSection) Workload(s *experiments.Spec) experiments.Workload {
	var w experiments.Workload
	for _, name := range s.Data.Datasets {
		t, _, _ := s.DataTerm(name)
		w.Terms = append(w.Terms, t)
	}
	return w
}

func (stubKinds) Section(kind string) (experiments.Section, bool) {
	return &stubSection{}, kind == "cv-tuning"
}
func (stubKinds) Names() []string { return []string{"cv-tuning"} }

// TestLoad_PublicScaling: a data file under scaling = "public" is scaled
// by the ranges and levels the spec declares for it, records outside are
// clipped, and the manifest record says so; the default says that ε holds
// for the scaled rows only.
func TestLoad_PublicScaling(t *testing.T) {
	t.Parallel()
	s, _ := spec(t, "0", mineTSV)
	if got := Info(s, mustLoad(t, s)); got.Scaling != experiments.StatementDataDependent || got.Public != nil {
		t.Errorf("data-dependent: scaling %q, public %+v", got.Scaling, got.Public)
	}
	dir := filepath.Dir(filepath.Dir(mustFile(t, s)))
	src := strings.Replace(strings.Replace(fileSpec, "SUB", "0", 1), "[data.files.mine]",
		"scaling = \"public\"\n\n[data.bounds.mine]\nx = [0, 4]\n\n[data.levels.mine]\nc = [\"v\", \"u\"]\n\n[data.files.mine]", 1)
	path := filepath.Join(dir, "public.toml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := experiments.Load(path, "", stubKinds{})
	if err != nil {
		t.Fatal(err)
	}
	ds := mustLoad(t, ps)
	// x, c=u, c=v, the intercept: the declared levels (w is not one).
	if !slices.Equal(ds.FeatureNames, []string{"x", "c=u", "c=v", datasets.InterceptName}) {
		t.Errorf("features %v", ds.FeatureNames)
	}
	info := Info(ps, ds)
	p := info.Public
	if info.Scaling != experiments.StatementPublic || p == nil {
		t.Fatalf("public: scaling %q, public %+v", info.Scaling, p)
	}
	// Records x = 1, 2, 4, 5 (3 has a '?'): x = 5 clipped to 4; c = w
	// (record 4) outside the declared levels.
	if p.Records != 4 || p.ClippedValues != 1 || p.OutOfDomain != 1 || p.ClippedRecords != 2 || p.ClippedRows != 0 {
		t.Errorf("counts %+v", *p)
	}
	if !slices.Equal(p.Ranges, []string{"x [0, 4] (declared in the spec)"}) || !slices.Equal(p.Levels, []string{"c: 2 levels (declared in the spec)"}) {
		t.Errorf("declared domain %q, %q", p.Ranges, p.Levels)
	}
	if !strings.HasSuffix(info.Preproc, "scaling=public row_norm_bound=0") {
		t.Errorf("preprocessing %q", info.Preproc)
	}
	// No declared range for x: the run cannot start, at the dataset.
	ps.Data.Bounds = nil
	if _, err := Load(ps, "mine", "", false); err == nil || !strings.Contains(err.Error(), "none for bounds.x") {
		t.Errorf("without a range for x: %v", err)
	}
}

func mustLoad(t *testing.T, s *experiments.Spec) *datasets.Dataset {
	t.Helper()
	ds, err := Load(s, "mine", "", false)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// mustFile returns the path of the spec's data file mine.
func mustFile(t *testing.T, s *experiments.Spec) string {
	t.Helper()
	f, ok := s.DataFileOptions("mine")
	if !ok {
		t.Fatal("no data file mine")
	}
	return filepath.Join(f.Dir, f.Path)
}

// TestLoad_MeasuredShape: once the records are read the spec knows the
// dataset's n and d (the memory estimate's data term uses them), and a
// spec that cannot fit is refused before the design matrix is built, with
// CheckResources' error as it is (at its key, not at the data file).
func TestLoad_MeasuredShape(t *testing.T) {
	s, _ := spec(t, "0", mineTSV)
	if _, n, d := s.DataTerm("mine"); n != 0 || d != 0 {
		t.Errorf("before reading: n = %v, d = %v, want no guess", n, d)
	}
	mustLoad(t, s)
	// 4 records; x, c=u, c=v, c=w and the intercept.
	if _, n, d := s.DataTerm("mine"); n != 4 || d != 5 {
		t.Errorf("after reading: n = %v, d = %v, want 4 and 5", n, d)
	}
	old := experiments.MemoryBudget
	experiments.MemoryBudget = 1 << 20 // below the runtime's 64 MiB
	t.Cleanup(func() { experiments.MemoryBudget = old })
	_, err := Load(s, "mine", "", false)
	var se *experiments.SpecError
	if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "t.toml:") || !strings.Contains(err.Error(), "exceeds the memory budget 1.00 MiB") ||
		strings.Contains(err.Error(), "data.files.mine") {
		t.Errorf("over the budget: %v", err)
	}
}

// TestLoad_Described: the manifest record lists each label value with its
// count and class; a subsample not below n keeps every record, says so in
// a warning and records no subsample; a scaling that overflows is refused
// at the spec's data.column_scale, naming the file and column.
func TestLoad_Described(t *testing.T) {
	t.Parallel()
	s, file := spec(t, "10", mineTSV)
	ds := mustLoad(t, s)
	info := Info(s, ds)
	want := []results.LabelInfo{{Value: "a", Records: 2, Class: "+1"}, {Value: "b", Records: 2, Class: "-1"}}
	if !slices.Equal(info.Labels, want) {
		t.Errorf("labels %+v, want %+v", info.Labels, want)
	}
	if n, _ := ds.X.Dims(); n != 4 || info.Subsample != 0 {
		t.Errorf("subsample 10 of 4 records: n = %d, manifest subsample %d", n, info.Subsample)
	}
	if w := Warnings([]*datasets.Dataset{ds}); !slices.Equal(w, []string{"dataset mine: data.subsample = 10 is not below the dataset's 4 records: all 4 are used, none drawn"}) {
		t.Errorf("warnings %q", w)
	}
	// A subsample of exactly n draws nothing either.
	s4, _ := spec(t, "4", mineTSV)
	ds4 := mustLoad(t, s4)
	if info := Info(s4, ds4); info.Subsample != 0 || len(ds4.Warnings) != 1 {
		t.Errorf("subsample 4 of 4 records: manifest subsample %d, warnings %q", info.Subsample, ds4.Warnings)
	}

	dir := filepath.Dir(filepath.Dir(file))
	big := "x\tc\ty\n1e308\tu\ta\n1e308\tv\tb\n1e308\tu\ta\n1\tv\tb\n"
	if err := os.WriteFile(file, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(strings.Replace(fileSpec, "SUB", "0", 1), "subsample = 0", "subsample = 0\ncolumn_scale = \"zscore\"", 1)
	path := filepath.Join(dir, "z.toml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	zs, err := experiments.Load(path, "", stubKinds{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(zs, "mine", "", false)
	var se *experiments.SpecError
	var oe *datasets.OverflowError
	if !errors.As(err, &se) || se.Where != "z.toml:9" || se.Path != "data.column_scale" || !errors.As(err, &oe) ||
		!strings.Contains(err.Error(), "dataset mine: "+file+`: column "x": column_scale = "zscore" overflows float64`) {
		t.Errorf("zscore overflow: %v", err)
	}
}
