package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// builtinEntry returns the Entry of a built-in dataset, or nil.
func builtinEntry(name string) *Entry {
	e, _ := registry.entry(name)
	return e
}

// simProvider is a Go provider that computes its records: y = sign of a
// fixed linear score, n records drawn deterministically from the seed.
type simProvider struct {
	name string
	n    int
	// edit, when set, spoils the Raw it returns (for the honesty checks).
	edit func(*Raw)
}

func (p simProvider) Name() string        { return p.name }
func (p simProvider) Description() string { return "test simulation: y = sign(x1 - x2)" }

func (p simProvider) Read(req Request) (*Raw, error) {
	x1, x2, y := make([]float64, p.n), make([]float64, p.n), make([]float64, p.n)
	for i := range p.n {
		// A fixed sequence (no randomness needed to test the plumbing).
		x1[i], x2[i] = float64(i%7), float64((i*3)%5)
		y[i] = 1
		if x1[i] < x2[i] {
			y[i] = -1
		}
	}
	raw := &Raw{
		Table: &Table{
			Attributes: []string{"x1", "x2"},
			Numeric:    []NumericColumn{{Name: "x1", Values: x1}, {Name: "x2", Values: x2}},
			Target:     "y",
			Y:          y,
		},
		Task: TaskClassification,
		Source: Source{Kind: KindSynthetic, Generator: "test-sim/v1",
			Params: map[string]string{"n": strconv.Itoa(p.n), "seed": strconv.FormatUint(req.Seed, 10)}},
	}
	if p.edit != nil {
		p.edit(raw)
	}
	return raw, nil
}

// register adds p to the package registry for the test's duration.
func register(t *testing.T, p Provider) {
	t.Helper()
	if err := Register(p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { registry.remove(p.Name()) })
}

// TestRegister_LoadsByName: a registered Go provider is loaded by name like
// a built-in dataset, with the harness's preprocessing and its own
// (honest) provenance; the file-only functions say it has no files.
// Not parallel: it changes the package registry (TestNames reads it).
func TestRegister_LoadsByName(t *testing.T) {
	register(t, simProvider{name: "test-sim", n: 20})
	if !slices.Contains(Names(), "test-sim") {
		t.Errorf("Names() = %q lacks test-sim", Names())
	}
	if p, ok := Registered("test-sim"); !ok || p.Description() != "test simulation: y = sign(x1 - x2)" {
		t.Errorf("Registered: %v %v", p, ok)
	}
	if _, ok := Lookup("test-sim"); ok {
		t.Error("Lookup found an Entry for a Go provider")
	}
	ds, err := Load("test-sim", Options{Seed: 9, Preprocess: Preprocessing{Intercept: true}})
	if err != nil {
		t.Fatal(err)
	}
	n, d := ds.X.Dims()
	if n != 20 || d != 3 || !slices.Equal(ds.FeatureNames, []string{"x1", "x2", InterceptName}) || ds.Task != TaskClassification {
		t.Errorf("loaded %d×%d %q %s", n, d, ds.FeatureNames, ds.Task)
	}
	// maxabs columns, intercept, l2-max rows: every row norm ≤ 1.
	for i := range n {
		row := ds.X.RawRowView(i)
		s := 0.0
		for _, v := range row {
			s += v * v
		}
		if s > 1+1e-12 {
			t.Fatalf("row %d has squared norm %v > 1", i, s)
		}
	}
	if ds.Source.Kind != KindSynthetic || ds.Source.Generator != "test-sim/v1" || ds.Source.Params["seed"] != "9" {
		t.Errorf("source %+v", ds.Source)
	}
	if _, err := Inspect("test-sim", t.TempDir()); !errors.Is(err, ErrNoFiles) {
		t.Errorf("Inspect: %v, want ErrNoFiles", err)
	}
	if standIn, err := Available("test-sim", DataDir{Path: t.TempDir()}, ""); standIn || err != nil {
		t.Errorf("Available: %v %v", standIn, err)
	}
	if err := Fetch(t.Context(), nil, "test-sim", t.TempDir(), nil); !errors.Is(err, ErrNoFiles) {
		t.Errorf("Fetch: %v, want ErrNoFiles", err)
	}
}

// TestRegister_Errors: bad names, descriptions and duplicates are refused.
func TestRegister_Errors(t *testing.T) {
	t.Parallel()
	r := newProviders(builtinEntries())
	long := strings.Repeat("a", 65)
	tests := []struct {
		name string
		p    Provider
		is   error
		want string
	}{
		{"nil", nil, nil, "nil provider"},
		{"empty name", simProvider{}, nil, "empty dataset name"},
		{"dot", simProvider{name: "my.data"}, nil, `dataset name "my.data": use letters, digits`},
		{"slash", simProvider{name: "../x"}, nil, "use letters, digits"},
		{"space", simProvider{name: "my data"}, nil, "use letters, digits"},
		{"too long", simProvider{name: long}, nil, "longer than 64 bytes"},
		{"built-in name", simProvider{name: "adult"}, ErrDuplicateDataset, `"adult" (UCI Adult`},
		{"no description", describedAs{simProvider{name: "x"}, ""}, nil, "the description must be one non-empty line"},
		{"two lines", describedAs{simProvider{name: "x"}, "a\nb"}, nil, "the description must be one non-empty line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := r.add(tt.p)
			if err == nil || !strings.Contains(err.Error(), tt.want) || tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("add: %v, want %q", err, tt.want)
			}
		})
	}
	if err := r.add(simProvider{name: "twice"}); err != nil {
		t.Fatal(err)
	}
	if err := r.add(simProvider{name: "twice"}); !errors.Is(err, ErrDuplicateDataset) {
		t.Errorf("second add: %v", err)
	}
}

type describedAs struct {
	simProvider
	desc string
}

func (d describedAs) Description() string { return d.desc }

// fileReader is a Go provider that reads a file and claims real data, with
// the digest it is given.
type fileReader struct {
	path, sum string
}

func (fileReader) Name() string        { return "test-reader" }
func (fileReader) Description() string { return "reads one file" }
func (p fileReader) Read(Request) (*Raw, error) {
	raw, _ := simProvider{n: 4}.Read(Request{})
	raw.Source = Source{Kind: KindReal, Files: []FileRecord{{Name: filepath.Base(p.path), Path: p.path, SHA256: p.sum, Records: 4}}}
	return raw, nil
}

// TestLoad_ProviderHonesty: what a Go provider returns is checked before
// use: real data must name each file with its true SHA-256, computed data
// must name its generator, tables must be consistent.
func TestLoad_ProviderHonesty(t *testing.T) {
	file := filepath.Join(t.TempDir(), "d.bin")
	if err := os.WriteFile(file, []byte("some bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha(t, file)
	tests := []struct {
		name string
		p    Provider
		want string // "" = loads
	}{
		{"real, true digest", fileReader{file, sum}, ""},
		{"real, wrong digest", fileReader{file, strings.Repeat("0", 64)}, "records sha256 \"" + strings.Repeat("0", 64) + "\", but the file's is " + sum},
		{"real, file gone", fileReader{file + ".gone", sum}, "no such file"},
		{"real without files", simProvider{name: "p", n: 4, edit: func(r *Raw) { r.Source = Source{Kind: KindReal} }}, `source kind "real" with no file records`},
		{"computed without generator", simProvider{name: "p", n: 4, edit: func(r *Raw) { r.Source.Generator = "" }}, "with no generator"},
		{"computed with files", simProvider{name: "p", n: 4, edit: func(r *Raw) { r.Source.Files = []FileRecord{{Name: "x"}} }}, "with file records"},
		{"unknown kind", simProvider{name: "p", n: 4, edit: func(r *Raw) { r.Source.Kind = "mine" }}, `source kind "mine"`},
		{"no table", simProvider{name: "p", n: 4, edit: func(r *Raw) { r.Table = nil }}, "Read returned no table"},
		{"bad task", simProvider{name: "p", n: 4, edit: func(r *Raw) { r.Task = "ranking" }}, `task "ranking"`},
		{"label not ±1", simProvider{name: "p", n: 4, edit: func(r *Raw) { r.Table.Y[2] = 0 }}, "target, record 3: 0; a classification target is +1 or -1"},
		{"short column", simProvider{name: "p", n: 4, edit: func(r *Raw) { r.Table.Numeric[1].Values = r.Table.Numeric[1].Values[:3] }}, `numeric column "x2" has 3 values, want 4`},
		{"attribute missing", simProvider{name: "p", n: 4, edit: func(r *Raw) { r.Table.Attributes = []string{"x1", "x3"} }}, `numeric column "x2" is not in Attributes`},
		{"unsorted levels", simProvider{name: "p", n: 4, edit: func(r *Raw) {
			r.Table.Attributes = append(r.Table.Attributes, "c")
			r.Table.Categorical = []CategoricalColumn{{Name: "c", Levels: []string{"b", "a"}, Codes: []int32{0, 1, 0, 1}}}
		}}, "levels must be distinct and sorted"},
		{"code out of range", simProvider{name: "p", n: 4, edit: func(r *Raw) {
			r.Table.Attributes = append(r.Table.Attributes, "c")
			r.Table.Categorical = []CategoricalColumn{{Name: "c", Levels: []string{"a"}, Codes: []int32{0, 1, 0, 0}}}
		}}, "code 1 outside its 1 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, err := load(tt.p, Options{})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if ds.Source.Kind != KindReal || ds.Source.Files[0].SHA256 != sum {
					t.Errorf("source %+v", ds.Source)
				}
				return
			}
			if !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrProvider with %q", err, tt.want)
			}
		})
	}
}
