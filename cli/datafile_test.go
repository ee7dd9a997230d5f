package cli

// Tests of issue 14: a user's own data file named in a spec
// ([data.files.NAME]), run by the real binary with the data guide's spec (docs/data.md), and
// a dataset a Go module registers (datasets.Register), run in process.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
)

// readmeSpec returns the spec of the "Your own data file" section of
// docs/data.md (the data guide, which the README links): the first
// ```toml block after its heading.
func readmeSpec(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "data.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Your own data file\n")
	if !ok {
		t.Fatal(`docs/data.md has no "## Your own data file" section`)
	}
	_, block, ok := strings.Cut(sec, "```toml\n")
	if !ok {
		t.Fatal("docs/data.md: no toml block in the data-file section")
	}
	spec, _, ok := strings.Cut(block, "```")
	if !ok {
		t.Fatal("docs/data.md: unterminated toml block")
	}
	return spec
}

// writeMyData writes the data guide's mydata.csv: n seeded records (age,
// colour, income, outcome) and one with a missing income ("?"), which is
// dropped. It returns the file's SHA-256.
func writeMyData(t *testing.T, path string, n int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 14))
	colours := []string{"red", "green", "blue"}
	var b strings.Builder
	b.WriteString("age,colour,income,outcome\n")
	for i := range n {
		age, income := 20+rng.IntN(50), rng.Float64()*5
		out := "no"
		if float64(age)/70+income/5+rng.NormFloat64()*0.3 > 1 {
			out = "yes"
		}
		fmt.Fprintf(&b, "%d,%s,%.3f,%s\n", age, colours[rng.IntN(3)], income, out)
		if i == n/2 {
			b.WriteString("41,red,?,no\n")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// TestDataFile_README runs the data guide's data-file spec (docs/data.md) with the binary: the
// manifest records the file's path, SHA-256, n, d and the dropped record;
// after the file's content changes, the next run starts over instead of
// resuming, and says why.
func TestDataFile_README(t *testing.T) {
	bin := sharedBinary(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "my-data.toml")
	if err := os.WriteFile(spec, []byte(readmeSpec(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "mydata.csv")
	sum1 := writeMyData(t, csv, 60, 1)
	out := t.TempDir()
	env := cleanEnv(t)
	// Run from another directory: the path is relative to the spec.
	r := runProc(t, env, bin, "run", spec, "--out", out, "--workers", "2")
	if r.code != 0 {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	run := filepath.Join(out, "my-data", "quick-seed1")
	_, _, m := readRun(t, run)
	if len(m.Datasets) != 1 {
		t.Fatalf("manifest datasets %+v", m.Datasets)
	}
	d := m.Datasets[0]
	// d: age, income, colour=blue|green|red, the intercept.
	if d.Name != "mydata" || d.Source != "real" || d.N != 60 || d.D != 6 ||
		d.Params["path"] != csv || d.Params["path_as_written"] != "mydata.csv" || d.Params["format"] != "csv" {
		t.Errorf("manifest dataset %+v", d)
	}
	if len(d.Files) != 1 || d.Files[0].Name != "mydata.csv" || d.Files[0].SHA256 != sum1 ||
		d.Files[0].Records != 60 || d.Files[0].Dropped != 1 || d.Files[0].Verified {
		t.Errorf("manifest files %+v, want mydata.csv sha256 %s, 60 records, 1 dropped, not pinned", d.Files, sum1)
	}
	if strings.Contains(r.stderr, "SYNTHETIC") {
		t.Errorf("a data file run mentions a stand-in:\n%s", r.stderr)
	}
	// The example has the quick profile `dprepro run` runs by default.
	if strings.Contains(r.stderr, "no quick profile") {
		t.Errorf("the data guide's example has no quick profile:\n%s", r.stderr)
	}

	// Another file's content under the same name: a new run identity.
	sum2 := writeMyData(t, csv, 60, 2)
	r = runProc(t, env, bin, "run", spec, "--out", out, "--workers", "2")
	if r.code != 0 {
		t.Fatalf("second run: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "data: mydata changed from real mydata.csv sha256 "+sum1) {
		t.Errorf("stderr does not say the file changed:\n%s", r.stderr)
	}
	_, _, m2 := readRun(t, run)
	if m2.Units.Resumed != 0 || m2.Units.Computed != m2.Units.Total || m2.Datasets[0].Files[0].SHA256 != sum2 {
		t.Errorf("after the swap: units %+v, sha256 %s (want %s, nothing resumed)", m2.Units, m2.Datasets[0].Files[0].SHA256, sum2)
	}
}

// TestDataFile_READMEFewRows: the data guide's example runs stability and
// control in 3 folds, which need 2 records in every fold: a 10-record file
// runs (both profiles), whatever dataSplit would need; 5 records are
// refused (exit 2) at the dataset with the minimum its folds need, without
// a word about dataSplit, which the spec does not run.
func TestDataFile_READMEFewRows(t *testing.T) {
	bin := sharedBinary(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "my-data.toml")
	if err := os.WriteFile(spec, []byte(readmeSpec(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "mydata.csv")
	env := cleanEnv(t)
	// 10 records kept (the 11th has a "?"), both labels among them.
	writeMyData(t, csv, 10, 1)
	for _, profile := range []string{"quick", "paper"} {
		r := runProc(t, env, bin, "run", spec, "--profile", profile, "--out", t.TempDir())
		if r.code != 0 {
			t.Errorf("10 records, %s profile: exit %d\n%s", profile, r.code, r.stderr)
		}
	}
	writeMyData(t, csv, 5, 1)
	r := runProc(t, env, bin, "run", spec, "--out", t.TempDir())
	const want = "dprepro: my-data.toml:10: data.files.mydata: 5 rows; 3 folds need at least 6 (2 in every fold: each is in turn the test, the validation and a training fold)\n"
	if r.code != 2 || !strings.HasSuffix(r.stderr, want) || strings.Contains(r.stderr, "dataSplit") {
		t.Errorf("5 records: exit %d, stderr\n%s\nwant it to end with\n%s", r.code, r.stderr, want)
	}
}

// TestDataFile_Errors: a data file that is missing, malformed or not the
// pinned one stops `dprepro run` with exit 2 and a message naming it; no
// stand-in is used.
func TestDataFile_Errors(t *testing.T) {
	bin := sharedBinary(t)
	pin := strings.Repeat("ab", 32)
	tests := []struct {
		name  string
		setup func(t *testing.T, csv string)
		spec  func(string) string
		want  string
	}{
		{"missing", func(*testing.T, string) {}, nil, "data file not found: %CSV% (path = \"mydata.csv\"); a data file has no synthetic stand-in"},
		{"malformed", func(t *testing.T, csv string) {
			writeT(t, csv, []byte("age,colour,income,outcome\n39,red,1.5,yes\n4O,red,2,no\n"))
		}, nil, "%CSV%:3: field 1 (age): bad number \"4O\""},
		{"pin mismatch", func(t *testing.T, csv string) { writeMyData(t, csv, 60, 1) },
			func(s string) string { return strings.Replace(s, `# sha256 = "…"`, `sha256 = "`+pin+`"`, 1) },
			"checksum mismatch for mydata.csv (path_sha256 pin)"},
		{"synthetic always", func(t *testing.T, csv string) { writeMyData(t, csv, 60, 1) },
			func(s string) string {
				return strings.Replace(s, "[data.files.mydata]", "synthetic = \"always\"\n[data.files.mydata]", 1)
			},
			`data.synthetic: "always" runs every dataset on its synthetic stand-in, and the data file data.files.mydata has none`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := readmeSpec(t)
			if tt.spec != nil {
				src = tt.spec(src)
			}
			spec := filepath.Join(dir, "my-data.toml")
			writeT(t, spec, []byte(src))
			csv := filepath.Join(dir, "mydata.csv")
			tt.setup(t, csv)
			out := t.TempDir()
			r := runProc(t, cleanEnv(t), bin, "run", spec, "--out", out)
			want := strings.ReplaceAll(tt.want, "%CSV%", csv)
			if r.code != 2 || !strings.Contains(r.stderr, want) {
				t.Errorf("exit %d, stderr\n%s\nwant exit 2 and %q", r.code, r.stderr, want)
			}
			if _, err := os.Stat(filepath.Join(out, "my-data", "quick-seed1", "manifest.json")); err == nil {
				t.Error("a manifest was written")
			}
		})
	}
}

// goData is a dataset computed by Go code, registered as a user's module
// would register it before cli.Main.
type goData struct{}

func (goData) Name() string        { return "cli-test-go" }
func (goData) Description() string { return "a computed test dataset: y = sign(x1 + x2 - 1)" }
func (goData) Read(req datasets.Request) (*datasets.Raw, error) {
	rng := rand.New(rand.NewPCG(req.Seed, 7))
	n := 60
	x1, x2, y := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		x1[i], x2[i] = rng.Float64(), rng.Float64()
		y[i] = -1
		if x1[i]+x2[i]+0.2*rng.NormFloat64() > 1 {
			y[i] = 1
		}
	}
	return &datasets.Raw{
		Table: &datasets.Table{
			Attributes: []string{"x1", "x2"},
			Numeric:    []datasets.NumericColumn{{Name: "x1", Values: x1}, {Name: "x2", Values: x2}},
			Target:     "y", Y: y,
		},
		Task: datasets.TaskClassification,
		Source: datasets.Source{Kind: datasets.KindSynthetic, Generator: "cli-test-go/v1",
			Params: map[string]string{"n": strconv.Itoa(n), "seed": strconv.FormatUint(req.Seed, 10)}},
	}, nil
}

// TestDataGoProvider: a dataset registered with datasets.Register is
// listed by `dprepro list`, runs by name like a built-in one (the run's
// manifest records its generator), and `data verify` says it has no files.
// The registration stays for the rest of this test binary (the registry
// has no removal); no other test lists every dataset.
func TestDataGoProvider(t *testing.T) {
	if _, ok := datasets.Registered("cli-test-go"); !ok {
		if err := datasets.Register(goData{}); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := dprepro(t, "list", "--specs", t.TempDir(), "--data-dir", t.TempDir())
	if line := lineOf(stdout, "cli-test-go"); code != 0 || !strings.Contains(line, "Go provider: a computed test dataset") {
		t.Errorf("list: exit %d, line %q\n%s", code, line, stderr)
	}
	code, _, stderr = dprepro(t, "data", "verify", "cli-test-go")
	if code != 2 || !strings.Contains(stderr, `dataset "cli-test-go" comes from a Go provider: it has no files to verify`) {
		t.Errorf("data verify: exit %d, %s", code, stderr)
	}

	src := readmeSpec(t)
	src = strings.Replace(src, `datasets = ["mydata"]`, `datasets = ["cli-test-go"]`, 1)
	src, _, _ = strings.Cut(src, "[data.files.mydata]")
	src += "[cv]\nrepetitions = 1\nfolds = 3\n\n[tuning]\nlambdas = [0.01, 1.0]\nalphas = [1.0]\nmethods = [\"control\"]\n\n[output]\nbootstrap = 100\n"
	out := t.TempDir()
	code, _, stderr = dprepro(t, "run", writeSpec(t, src), "--out", out, "--workers", "2")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	_, _, m := readRun(t, filepath.Join(out, "my-data", "quick-seed1"))
	d := m.Datasets[0]
	if d.Name != "cli-test-go" || d.Source != "synthetic" || d.Generator != "cli-test-go/v1" || d.N != 60 || d.D != 3 {
		t.Errorf("manifest dataset %+v", d)
	}
	if !strings.Contains(stderr, "dataset cli-test-go: SYNTHETIC data computed by its provider (cli-test-go/v1)") ||
		strings.Contains(stderr, "stand-in") {
		t.Errorf("stderr:\n%s", stderr)
	}
}
