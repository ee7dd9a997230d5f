package cli

// Tests of issue 23, section 4 ("Data the user brings is described, not
// guessed"), run by the real binary: the memory estimate from the measured
// n and d of every dataset, the label mapping in the manifest, and the
// warnings and refusals of data and spec values.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
)

// filesSpec returns a cv-tuning spec over the data files names (each
// NAME.csv beside the spec, the data guide's columns), with extra lines added
// to its [data] table.
func filesSpec(names []string, data string, categorical ...string) string {
	s := fmt.Sprintf("schema = 1\nid = \"files\"\nkind = \"cv-tuning\"\nseed = 1\n\n[data]\ndatasets = [%s]\n%s\n", quoteJoin(names), data)
	cat := append([]string{"colour"}, categorical...)
	for _, n := range names {
		s += fmt.Sprintf("[data.files.%s]\npath = %q\nlabel = \"outcome\"\npositive = \"yes\"\ncategorical = [%s]\n\n", n, n+".csv", quoteJoin(cat))
	}
	return s + "[cv]\nrepetitions = 1\nfolds = 3\n\n[tuning]\nlambdas = [0.01, 1.0]\nalphas = [1.0, 5.0]\nmethods = [\"stability\", \"control\"]\n\n[output]\nbootstrap = 200\n"
}

func quoteJoin(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// budgetEnv is a newcomer's environment with a memory budget of b
// ($DPREPRO_MEMORY_BUDGET), so that what the estimate refuses does not
// depend on the machine's memory.
func budgetEnv(t *testing.T, b string) []string {
	return append(cleanEnv(t), "DPREPRO_MEMORY_BUDGET="+b)
}

// TestDataShape_SmallFilesFit: the cases, which the old 600,000 ×
// 128 guess for every data file refused in 24 GiB (a 300-row CSV at
// --workers 3, two 569-row files at 2 workers, three files at 1 worker),
// run in a budget of 2 GiB, where that guess (about 9.9 GiB per file and
// unit in flight) would refuse each of them: the estimate uses the files'
// measured n and d.
func TestDataShape_SmallFilesFit(t *testing.T) {
	bin := sharedBinary(t)
	cases := []struct {
		rows    int
		files   []string
		workers string
	}{
		{300, []string{"a"}, "3"},
		{569, []string{"a", "b"}, "2"},
		{569, []string{"a", "b", "c"}, "1"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d files at %s workers", len(c.files), c.workers), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for i, n := range c.files {
				writeMyData(t, filepath.Join(dir, n+".csv"), c.rows, uint64(i+1))
			}
			spec := filepath.Join(dir, "files.toml")
			writeT(t, spec, []byte(filesSpec(c.files, "")))
			out := t.TempDir()
			r := runProc(t, budgetEnv(t, "2GiB"), bin, "run", spec, "--out", out, "--workers", c.workers)
			if r.code != 0 || strings.Contains(r.stderr, "estimated memory") {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			_, _, m := readRun(t, filepath.Join(out, "files", "quick-seed1"))
			for i, d := range m.Datasets {
				// age, income, colour=blue|green|red, the intercept.
				if d.Name != c.files[i] || d.N != c.rows || d.D != 6 {
					t.Errorf("manifest dataset %d: %s n %d d %d", i, d.Name, d.N, d.D)
				}
			}
		})
	}
}

// writeIDData writes n records of the data guide's columns with an "id"
// column of one distinct value per record first.
func writeIDData(t *testing.T, path string, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), 23))
	var b strings.Builder
	b.WriteString("id,age,colour,income,outcome\n")
	for i := range n {
		out := "no"
		if rng.IntN(2) == 0 {
			out = "yes"
		}
		fmt.Fprintf(&b, "r%05d,%d,%s,%.3f,%s\n", i, 20+rng.IntN(50), []string{"red", "green", "blue"}[rng.IntN(3)], rng.Float64()*5, out)
	}
	writeT(t, path, []byte(b.String()))
}

// TestDataShape_IdentifierColumn: an identifier listed in categorical
// makes d ≈ n. In a budget its measured shape does not fit, the run is
// refused (exit 2) before any unit, naming the dataset, its n and d and
// the attribute with its level count, at the spec's data.datasets line;
// where it fits it runs with a warning that names the attribute and its
// level count, in stderr and the manifest, and the manifest's d counts
// every level.
func TestDataShape_IdentifierColumn(t *testing.T) {
	bin := sharedBinary(t)
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeIDData(t, filepath.Join(dir, "ids.csv"), 3000)
		spec := filepath.Join(dir, "files.toml")
		writeT(t, spec, []byte(filesSpec([]string{"ids"}, "", "id")))
		out := t.TempDir()
		r := runProc(t, budgetEnv(t, "1GiB"), bin, "run", spec, "--out", out, "--workers", "2")
		for _, want := range []string{
			"files.toml:7: data.datasets[0]: estimated memory ",
			"exceeds the memory budget 1.00 GiB",
			"dataset ids has n = 3000, d = 3005 after one-hot encoding (id: 3000 levels, colour: 3 levels)",
			`the categorical attribute "id" has a level for about every record (an identifier?): leave it out with data.columns, or do not list it as categorical`,
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q", want)
			}
		}
		if r.code != 2 || strings.Contains(r.stderr, "units (0 already done)") || strings.Contains(r.stderr, "lower data.datasets") {
			t.Errorf("exit %d (want 2, before any unit)\n%s", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "files", "quick-seed1", "rows.csv")); err == nil {
			t.Error("rows.csv written")
		}
	})
	t.Run("warned", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeIDData(t, filepath.Join(dir, "ids.csv"), 120)
		spec := filepath.Join(dir, "files.toml")
		writeT(t, spec, []byte(filesSpec([]string{"ids"}, "", "id")))
		out := t.TempDir()
		r := runProc(t, budgetEnv(t, "2GiB"), bin, "run", spec, "--out", out, "--workers", "2")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		want := `dataset ids: categorical attribute "id" has 120 levels in 120 records (one level per record)`
		if !strings.Contains(r.stderr, "dprepro: files: WARNING: "+want) {
			t.Errorf("stderr lacks the warning %q:\n%s", want, r.stderr)
		}
		_, _, m := readRun(t, filepath.Join(out, "files", "quick-seed1"))
		if !slices.ContainsFunc(m.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
			t.Errorf("manifest warnings %q", m.Warnings)
		}
		// age, income, 120 id levels, 3 colours, the intercept.
		if d := m.Datasets[0]; d.N != 120 || d.D != 126 {
			t.Errorf("manifest n %d d %d, want 120 and 126", d.N, d.D)
		}
	})
}

// TestDataFile_LabelMapping: the manifest lists each label value with its
// count and the class it became; a value that differs from positive only
// by case is a warning naming both spellings and their counts (stderr and
// the manifest).
func TestDataFile_LabelMapping(t *testing.T) {
	bin := sharedBinary(t)
	dir := t.TempDir()
	csv := filepath.Join(dir, "mydata.csv")
	writeMyData(t, csv, 60, 1)
	// Every fifth "yes" written "Yes".
	lines := strings.Split(string(mustRead(t, csv)), "\n")
	counts := map[string]int{}
	k := 0
	for i, l := range lines[1:] {
		if l == "" || strings.Contains(l, "?") {
			continue
		}
		v := l[strings.LastIndex(l, ",")+1:]
		if v == "yes" {
			if k%5 == 0 {
				v = "Yes"
				lines[i+1] = strings.TrimSuffix(l, "yes") + v
			}
			k++
		}
		counts[v]++
	}
	writeT(t, csv, []byte(strings.Join(lines, "\n")))
	spec := filepath.Join(dir, "my-data.toml")
	writeT(t, spec, []byte(readmeSpec(t)))
	out := t.TempDir()
	r := runProc(t, cleanEnv(t), bin, "run", spec, "--out", out, "--workers", "2")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	want := fmt.Sprintf(`dataset mydata: label "outcome": value "Yes" (%d records) differs from positive = "yes" (%d records) only by case: its records were read as −1, not +1`, counts["Yes"], counts["yes"])
	if !strings.Contains(r.stderr, "dprepro: my-data: WARNING: "+want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	_, _, m := readRun(t, filepath.Join(out, "my-data", "quick-seed1"))
	if !slices.Contains(m.Warnings, want) {
		t.Errorf("manifest warnings %q", m.Warnings)
	}
	wantLabels := []results.LabelInfo{{Value: "Yes", Records: counts["Yes"], Class: "-1"}, {Value: "no", Records: counts["no"], Class: "-1"}, {Value: "yes", Records: counts["yes"], Class: "+1"}}
	if got := m.Datasets[0].Labels; !slices.Equal(got, wantLabels) || counts["Yes"] == 0 {
		t.Errorf("manifest labels %+v, want %+v", got, wantLabels)
	}
}

// TestDataFile_ScalingOverflow: three values of 1e308 under zscore (their
// sum is +Inf) are refused when the data load, before any unit, naming the
// file, the column and the scaling, at the spec's data.column_scale line
// (exit 2); before, every unit ran and failed on NaN.
func TestDataFile_ScalingOverflow(t *testing.T) {
	bin := sharedBinary(t)
	dir := t.TempDir()
	csv := filepath.Join(dir, "mydata.csv")
	writeMyData(t, csv, 60, 1)
	lines := strings.Split(string(mustRead(t, csv)), "\n")
	for i := 1; i <= 3; i++ { // income of the first three records
		f := strings.Split(lines[i], ",")
		f[2] = "1e308"
		lines[i] = strings.Join(f, ",")
	}
	writeT(t, csv, []byte(strings.Join(lines, "\n")))
	src := strings.Replace(readmeSpec(t), `datasets = ["mydata"]`, "datasets = [\"mydata\"]\ncolumn_scale = \"zscore\"", 1)
	spec := filepath.Join(dir, "my-data.toml")
	writeT(t, spec, []byte(src))
	out := t.TempDir()
	r := runProc(t, cleanEnv(t), bin, "run", spec, "--out", out)
	want := `my-data.toml:9: data.column_scale: dataset mydata: ` + csv + `: column "income": column_scale = "zscore" overflows float64: the sum of its values is +Inf (largest |value| 1e+308)`
	if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "units (0 already done)") {
		t.Errorf("exit %d, stderr\n%s\nwant exit 2 before any unit and %q", r.code, r.stderr, want)
	}
}

// TestRun_ParameterMagnitude: a parameter no figure or computation can
// bear (α = 1e300) is refused at load with file:line: key (exit 2), before
// any data is read or unit run; before, every unit ran and the figure then
// failed on an infinite point.
func TestRun_ParameterMagnitude(t *testing.T) {
	bin := sharedBinary(t)
	dir := t.TempDir()
	writeMyData(t, filepath.Join(dir, "mydata.csv"), 60, 1)
	spec := filepath.Join(dir, "my-data.toml")
	writeT(t, spec, []byte(strings.Replace(readmeSpec(t), "alphas = [1.0, 5.0]", "alphas = [1.0, 1e300]", 1)))
	r := runProc(t, cleanEnv(t), bin, "run", spec, "--out", t.TempDir())
	want := "my-data.toml:23: tuning.alphas[1]: must be at most 1e+100 in magnitude (got 1e+300)"
	if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "units") || strings.Contains(r.stderr, "data: ") {
		t.Errorf("exit %d, stderr\n%s\nwant exit 2 at load and %q", r.code, r.stderr, want)
	}
}

// TestDataFile_SubsampleAndUnreadTable: a subsample not below n keeps
// every record with a warning, and the manifest records no subsample; a
// [data.files] table no data.datasets list names is a warning with its
// file, line and key (stderr and the manifest).
func TestDataFile_SubsampleAndUnreadTable(t *testing.T) {
	bin := sharedBinary(t)
	dir := t.TempDir()
	writeMyData(t, filepath.Join(dir, "mydata.csv"), 60, 1)
	src := strings.Replace(readmeSpec(t), `datasets = ["mydata"]`, "datasets = [\"mydata\"]\nsubsample = 1000", 1)
	src = strings.Replace(src, "[cv]", "[data.files.mydata2]\npath = \"mydata2.csv\"\nlabel = \"outcome\"\n\n[cv]", 1)
	spec := filepath.Join(dir, "my-data.toml")
	writeT(t, spec, []byte(src))
	out := t.TempDir()
	r := runProc(t, cleanEnv(t), bin, "run", spec, "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	wants := []string{
		`my-data.toml:18: data.files.mydata2: no data.datasets list (the base spec's or a profile's) names "mydata2": the file is never read; add it to data.datasets, or remove the table`,
		"dataset mydata: data.subsample = 1000 is not below the dataset's 60 records: all 60 are used, none drawn",
	}
	_, _, m := readRun(t, filepath.Join(out, "my-data", "quick-seed1"))
	for _, w := range wants {
		if !strings.Contains(r.stderr, "dprepro: my-data: WARNING: "+w) || !slices.Contains(m.Warnings, w) {
			t.Errorf("warning %q: stderr\n%s\nmanifest %q", w, r.stderr, m.Warnings)
		}
	}
	if d := m.Datasets[0]; d.N != 60 || d.Subsample != 0 {
		t.Errorf("manifest n %d subsample %d, want 60 and 0", d.N, d.Subsample)
	}
}

// TestMemoryBudgetEnv: a $DPREPRO_MEMORY_BUDGET that is not a size is
// refused naming the variable (exit 2); one that is sets the budget the
// messages state.
func TestMemoryBudgetEnv(t *testing.T) {
	bin := sharedBinary(t)
	spec := writeSpec(t, tinySpec)
	r := runProc(t, budgetEnv(t, "lots"), bin, "run", spec, "--out", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, `dprepro: $DPREPRO_MEMORY_BUDGET: "lots" is not a memory size`) {
		t.Errorf("exit %d, stderr\n%s", r.code, r.stderr)
	}
	r = runProc(t, budgetEnv(t, "10MiB"), bin, "run", spec, "--out", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "exceeds the memory budget 10.0 MiB (from $DPREPRO_MEMORY_BUDGET)") {
		t.Errorf("10 MiB: exit %d, stderr\n%s", r.code, r.stderr)
	}
	// The case: the built-in mechanisms spec at 60 MiB, where the
	// fixed 64 MiB of every run is over the budget by itself. No spec key
	// is blamed and no change to the spec is advised: the budget must
	// grow, to the estimate at least.
	out := t.TempDir()
	r = runProc(t, budgetEnv(t, "60MiB"), bin, "run", "mechanisms", "--profile", "quick", "--out", out)
	const fixed = "dprepro: mechanisms.toml: estimated memory 67.8 MiB with 1 worker exceeds the memory budget 60.0 MiB (from $DPREPRO_MEMORY_BUDGET); " +
		"64.0 MiB of it is fixed (the Go runtime, the binary's data and the figure renderer, whatever the spec), above the budget by itself: " +
		"no change to the spec can bring the estimate under it; raise $DPREPRO_MEMORY_BUDGET to at least 67.8 MiB\n"
	if r.code != 2 || r.stderr != fixed {
		t.Errorf("60 MiB: exit %d, stderr\n%s\nwant\n%s", r.code, r.stderr, fixed)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("60 MiB: refused, yet %s holds %d entries", out, len(entries))
	}
	// At 66 MiB fewer ε could fit: the key is named, with how far to
	// lower it, and the larger budget beside it.
	r = runProc(t, budgetEnv(t, "66MiB"), bin, "run", "mechanisms", "--profile", "quick", "--out", t.TempDir())
	if r.code != 2 || !strings.HasPrefix(r.stderr, "dprepro: mechanisms.toml:29: mechanisms.epsilons: estimated memory 67.8 MiB") ||
		!strings.Contains(r.stderr, ", with 1 more term that mechanisms.epsilons drives (3.81 MiB in all): lower mechanisms.epsilons, until those terms are below 1.99 MiB together; or raise $DPREPRO_MEMORY_BUDGET to at least 67.8 MiB, as 64.0 MiB of it is fixed") {
		t.Errorf("66 MiB: exit %d, stderr\n%s", r.code, r.stderr)
	}
	for in, want := range map[string]int64{"512": 512, "1.5GiB": 3 << 29, "64 MiB": 64 << 20, "2TiB": 2 << 40} {
		if got, ok := parseSize(in); !ok || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"0", "-1GiB", "1e30TiB", "GiB", "1 GB", "NaN"} {
		if _, ok := parseSize(in); ok {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

// wideProvider is a Go provider whose table has an identifier as a
// categorical attribute: n records, n levels.
type wideProvider struct{ n int }

func (p wideProvider) Name() string { return fmt.Sprintf("cli-test-wide%d", p.n) }
func (p wideProvider) Description() string {
	return "a computed test dataset with an identifier attribute"
}
func (p wideProvider) Read(req datasets.Request) (*datasets.Raw, error) {
	x, y := make([]float64, p.n), make([]float64, p.n)
	levels, codes := make([]string, p.n), make([]int32, p.n)
	for i := range p.n {
		x[i], y[i] = float64(i%7), float64(1-2*(i%2))
		levels[i], codes[i] = fmt.Sprintf("r%06d", i), int32(i)
	}
	return &datasets.Raw{
		Table: &datasets.Table{
			Attributes:  []string{"id", "x"},
			Numeric:     []datasets.NumericColumn{{Name: "x", Values: x}},
			Categorical: []datasets.CategoricalColumn{{Name: "id", Levels: levels, Codes: codes}},
			Target:      "y", Y: y,
		},
		Task:   datasets.TaskClassification,
		Source: datasets.Source{Kind: datasets.KindSynthetic, Generator: "cli-test-wide/v1", Params: map[string]string{"n": fmt.Sprint(p.n)}},
	}, nil
}

// TestDataShape_GoProvider: a Go provider's dataset is estimated with its
// measured n and d like a data file: a small one runs at 3 workers in a
// 2 GiB budget, one whose identifier makes d ≈ n is refused naming its
// shape before its matrix is built. In process (a provider is registered
// by the module's main), with the budget set for the test.
func TestDataShape_GoProvider(t *testing.T) {
	old := experiments.MemoryBudget
	experiments.MemoryBudget = 2 << 30
	t.Cleanup(func() { experiments.MemoryBudget = old })
	for _, p := range []wideProvider{{60}, {20000}} {
		if _, ok := datasets.Registered(p.Name()); !ok {
			if err := datasets.Register(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	src := readmeSpec(t)
	src, _, _ = strings.Cut(src, "[data.files.mydata]")
	src += "[cv]\nrepetitions = 1\nfolds = 3\n\n[tuning]\nlambdas = [0.01, 1.0]\nalphas = [1.0]\nmethods = [\"control\"]\n\n[output]\nbootstrap = 100\n"
	small := strings.Replace(src, `datasets = ["mydata"]`, `datasets = ["cli-test-wide60"]`, 1)
	code, _, stderr := dprepro(t, "run", writeSpec(t, small), "--out", t.TempDir(), "--workers", "3")
	if code != 0 || !strings.Contains(stderr, `categorical attribute "id" has 60 levels in 60 records`) {
		t.Errorf("60 records: exit %d\n%s", code, stderr)
	}
	wide := strings.Replace(src, `datasets = ["mydata"]`, `datasets = ["cli-test-wide20000"]`, 1)
	code, _, stderr = dprepro(t, "run", writeSpec(t, wide), "--out", t.TempDir(), "--workers", "3")
	if code != 2 || !strings.Contains(stderr, "spec.toml:8: data.datasets[0]: estimated memory") ||
		!strings.Contains(stderr, "dataset cli-test-wide20000 has n = 20000, d = 20001 after one-hot encoding (id: 20000 levels)") {
		t.Errorf("20,000 records: exit %d\n%s", code, stderr)
	}
}
