package experiments_test

import (
	. "github.com/dprepro/dprepro/experiments"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
)

// fileSpec is goodSpec with a data file declared and named; the line
// numbers of the cases below count from 1 at `schema = 1`.
const fileSpec = `schema = 1
id = "t"
kind = "cv-tuning"
seed = 7

[data]
datasets = ["magic", "mine"]

[data.files.mine]
path = "data/mine.csv"
label = "y"
positive = "yes"
categorical = ["colour"]
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"

[cv]
repetitions = 3
folds = 10

[tuning]
lambdas = [0.1, 1.0]
alphas = [0.5, 1.0]
methods = ["stability", "control"]

[profile.quick.cv]
repetitions = 1
`

// TestParse_DataFiles: a declared data file is a dataset of the spec; its
// paths resolve against the spec file's directory.
func TestParse_DataFiles(t *testing.T) {
	t.Parallel()
	s, err := Parse(filepath.Join("specs", "t.toml"), []byte(fileSpec), "quick", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := s.DataFileOptions("mine")
	if !ok || f.Path != "data/mine.csv" || f.Dir != "specs" || f.Label != "y" || f.Positive != "yes" ||
		len(f.Categorical) != 1 || f.SHA256 != strings.Repeat("0", 64) {
		t.Errorf("DataFileOptions(mine) = %+v, %v", f, ok)
	}
	if _, ok := s.DataFileOptions("magic"); ok {
		t.Error("DataFileOptions(magic): a registered dataset is not a data file")
	}
	// The table is part of the resolved spec (and so of its hash) …
	c, _ := s.Canonical()
	if !strings.Contains(string(c), "[data.files.mine]") {
		t.Errorf("canonical spec lacks the data file:\n%s", c)
	}
	// … and a spec without one encodes as before (hashes of existing
	// runs unchanged).
	g, err := Parse("good.toml", []byte(goodSpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := g.Canonical(); strings.Contains(string(c), "files") {
		t.Errorf("a spec without data files encodes a files key:\n%s", c)
	}
}

// TestParse_DataFileErrors: each problem of a data.files table is refused
// at load with the file, the line and the key.
func TestParse_DataFileErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, old, new string
		want           string
	}{
		{"undeclared dataset", `datasets = ["magic", "mine"]`, `datasets = ["magic", "mine", "other"]`,
			`bad.toml:7: data.datasets[2]: unknown dataset "other" (known: adult, bank,`},
		{"undeclared dataset lists the files", `datasets = ["magic", "mine"]`, `datasets = ["magic", "mine", "other"]`,
			`; data.files: mine)`},
		{"no path", `path = "data/mine.csv"`, ``, `bad.toml:9: data.files.mine.path: required`},
		{"unknown format", `path = "data/mine.csv"`, "path = \"data/mine.csv\"\nformat = \"xlsx\"", `bad.toml:11: data.files.mine.format: unknown format "xlsx"`},
		{"format from an unknown extension", `path = "data/mine.csv"`, `path = "data/mine.parquet"`, `bad.toml:10: data.files.mine.format: cannot tell the format from the name "data/mine.parquet"`},
		{"csv without label", `label = "y"`, ``, `bad.toml:9: data.files.mine.label: required: the header name of the label column`},
		{"npy label not an index", `path = "data/mine.csv"`, `path = "data/mine.npy"`, `bad.toml:11: data.files.mine.label: for npy, a column index ("0" the first, "-1" the last) (got "y")`},
		{"duplicate categorical", `categorical = ["colour"]`, `categorical = ["colour", "colour"]`, `bad.toml:13: data.files.mine.categorical[1]: duplicate column "colour"`},
		{"bad pin", `sha256 = "0000000000000000000000000000000000000000000000000000000000000000"`, `sha256 = "abc"`, `bad.toml:14: data.files.mine.sha256: must be 64 hex digits`},
		{"unknown key", `positive = "yes"`, "positive = \"yes\"\nlable = \"y\"", `bad.toml:13: data.files.mine.lable: unknown key`},
		{"shadows a dataset", "[data.files.mine]", "[data.files.adult]",
			`bad.toml:9: data.files.adult: the data file data.files.adult has the name of the registered dataset "adult" (UCI Adult`},
		{"unsafe name", "[data.files.mine]", `[data.files."my data"]`, `bad.toml:9: data.files.my data: dataset name "my data": use letters, digits`},
		{"synthetic always", "[data.files.mine]", "synthetic = \"always\"\n[data.files.mine]",
			`bad.toml:9: data.synthetic: "always" runs every dataset on its synthetic stand-in, and the data file data.files.mine has none`},
		// A profile's table replaces the base one whole.
		{"profile override", "[profile.quick.cv]", "[profile.quick.data.files.mine]\npath = \"data/mine.csv\"\nlabel = \"y\"\nformat = \"xlsx\"\n[profile.quick.cv]",
			`bad.toml:28: data.files.mine.format (profile quick): unknown format "xlsx"`},
		{"profile override is whole", "[profile.quick.cv]", "[profile.quick.data.files.mine]\nlabel = \"y\"\n[profile.quick.cv]",
			`data.files.mine.path (profile quick): required`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(fileSpec, c.old) {
				t.Fatalf("test case: %q not in the spec", c.old)
			}
			src := strings.Replace(fileSpec, c.old, c.new, 1)
			_, err := Parse("dir/bad.toml", []byte(src), "", testKinds)
			if err == nil {
				t.Fatalf("no error; want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\ndoes not contain\n%s", err, c.want)
			}
		})
	}
}

// goProvider is a dataset a Go module registers.
type goProvider struct{}

func (goProvider) Name() string        { return "experiments-test-go" }
func (goProvider) Description() string { return "a registered Go provider" }
func (goProvider) Read(datasets.Request) (*datasets.Raw, error) {
	return nil, nil // never read: the spec check only needs the name
}

// TestParse_RegisteredProvider: a dataset registered with datasets.Register
// is a valid data.datasets name, with nothing else to set; data.files may
// not take its name.
func TestParse_RegisteredProvider(t *testing.T) {
	if err := datasets.Register(goProvider{}); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(goodSpec, `datasets = ["magic"]`, `datasets = ["experiments-test-go"]`, 1)
	if _, err := Parse("good.toml", []byte(src), "", testKinds); err != nil {
		t.Errorf("a registered provider's name: %v", err)
	}
	src = strings.Replace(fileSpec, "[data.files.mine]", "[data.files.experiments-test-go]", 1)
	if _, err := Parse("bad.toml", []byte(src), "", testKinds); err == nil || !strings.Contains(err.Error(), `registered dataset "experiments-test-go" (a registered Go provider)`) {
		t.Errorf("shadowing a registered provider: %v", err)
	}
}
