// Package pypkg_test tests the Python package dprepro (python/dprepro)
// from Go, so that CI runs it: the package is pip-installed offline into a
// fresh virtual environment, a worker written with it runs through the
// real binary, and the run is loaded with dprepro.results.load, with
// pandas and without, and checked against the run's files; the package's
// Python unit tests (python/tests, unittest) run against the installed
// copy.
package pypkg_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dprepro/dprepro/internal/pyenv"
	"github.com/dprepro/dprepro/internal/testdeps"
	"github.com/dprepro/dprepro/results"
)

// readmeWorker returns the ten-line learner of python/README.md (the
// python block after the comment that names this test), written with the
// package: a private centroid classifier w = (1/n) Σ yᵢxᵢ plus Laplace
// noise of scale 2√d/(nε) per coordinate (the README says why that is
// ε-DP). Running the README's block keeps the README's example working.
func readmeWorker(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- worker.py: python/package_test.go runs this block"
	s := string(b)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("README.md lacks %q", marker)
	}
	s = s[i:]
	start := strings.Index(s, "```python\n")
	if start < 0 {
		t.Fatal("README.md: no python block after the marker")
	}
	s = s[start+len("```python\n"):]
	end := strings.Index(s, "```")
	if end < 0 {
		t.Fatal("README.md: the python block is not closed")
	}
	return s[:end]
}

const spec = `schema = 1
id = "pkg-test"
title = "A worker written with the dprepro Python package"
kind = "learner-comparison"
seed = 7

[[methods]]
name = "py-centroid"
serves = "learner"
command = [%q, "worker.py"]
files = ["worker.py"]

[methods.params]
temperature = [1.0, 4.0]

[data]
datasets = ["mydata"]

[data.files.mydata]
path = "mydata.csv"
label = "outcome"
positive = "yes"

[cv]
repetitions = 1
folds = 3

[comparison]
learners = ["output-perturbation", "py-centroid"]
reference = "non-private"
epsilons = [0.5, 2.0]
lambda = 0.01

[output]
bootstrap = 100

[[claims]]
id = "centroid-vs-output"
source = "this test"
statement = "the centroid classifier's AUC exceeds output perturbation's at epsilon = 2"
rule = "greater"
metric = "auc"
method = "py-centroid[temperature=1]"
dataset = "mydata"
x = [2.0]
than = "output-perturbation"
`

// check is the Python run by the test: the run loaded with pandas and
// without (pandas made unimportable), as JSON for the test to compare.
const check = `import json, sys
mode, run_dir = sys.argv[1], sys.argv[2]
if mode == "nopandas":
    sys.modules["pandas"] = None
from dprepro import results
run = results.load(run_dir)
def col(t, name):
    c = t[name]
    return c.tolist() if hasattr(c, "tolist") else list(c)
def finite(v):
    return v if v == v and abs(v) != float("inf") else None
out = {"type": type(run.rows).__module__ + "." + type(run.rows).__name__,
       "rows": {k: [finite(v) for v in col(run.rows, k)] for k in ("auc", "mse", "epsilon")},
       "method": col(run.rows, "method"),
       "summary_mean": [finite(v) for v in col(run.summary, "mean")],
       "verdicts": col(run.claims, "verdict"),
       "ledger": [[m, s, finite(e)] for m, s, e in zip(col(run.ledger, "method"), col(run.ledger, "setting"), col(run.ledger, "total_epsilon"))]}
print(json.dumps(out))
`

// need runs python with args and ends the test as for a missing Debian
// package (a skip, or a failure under CI) when it fails.
func need(t *testing.T, python, pkg string, args ...string) {
	t.Helper()
	if out, err := exec.Command(python, args...).CombinedOutput(); err != nil {
		testdeps.Missing(t, fmt.Sprintf("%s %s: %v: %s; install Debian's %s (apt-get install %s)",
			python, strings.Join(args, " "), err, lastLine(string(out)), pkg, pkg))
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// run runs a command in dir and returns its standard output and error
// together, failing the test when it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, stderr := output(t, dir, env, name, args...)
	return out + stderr
}

// output runs a command in dir and returns its standard output and
// error, failing the test when it fails.
func output(t *testing.T, dir string, env []string, name string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

// copySource copies the package's source (pyproject.toml, README.md,
// dprepro/, tests/) to dst: pip builds in the folder it installs from, and
// the repository's must stay clean.
func copySource(t *testing.T, dst string) {
	t.Helper()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if d.IsDir() && (base == "build" || base == "__pycache__" || strings.HasSuffix(base, ".egg-info")) {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, p), 0o755)
		}
		if strings.HasSuffix(base, ".go") {
			return nil
		}
		b, err := os.ReadFile(p) // read here, so go test's cache sees the package's files
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, p), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPackage_InstallRunLoad installs the package offline into a fresh
// venv, runs a worker written with it through the real binary and loads
// the run with dprepro.results.
func TestPackage_InstallRunLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("creates a venv, builds the binary and runs a spec")
	}
	path := pyenv.Require(t) // a python3 with numpy, first on PATH
	python := filepath.Join(strings.SplitN(path, string(os.PathListSeparator), 2)[0], "python3")
	need(t, python, "python3-venv", "-c", "import venv, ensurepip")
	need(t, python, "python3-setuptools", "-c", "import setuptools")
	need(t, python, "python3-pandas", "-c", "import pandas")

	tmp := t.TempDir()
	src, venv := filepath.Join(tmp, "src"), filepath.Join(tmp, "venv")
	copySource(t, src)

	// 1. Offline install: a venv that sees Debian's numpy, setuptools and
	// pandas, pip with no index (it never looks at the network).
	start := time.Now()
	run(t, tmp, nil, python, "-m", "venv", "--system-site-packages", venv)
	vpy := filepath.Join(venv, "bin", "python")
	pipEnv := []string{"PIP_CONFIG_FILE=" + os.DevNull, "PIP_NO_INDEX=1", "PIP_DISABLE_PIP_VERSION_CHECK=1"}
	run(t, tmp, pipEnv, vpy, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-deps", "--quiet", src)
	t.Logf("venv and pip install: %v", time.Since(start).Round(time.Millisecond))
	where := strings.TrimSpace(run(t, tmp, nil, vpy, "-c", "import dprepro.worker, dprepro.results; print(dprepro.__file__)"))
	if !strings.HasPrefix(where, venv+string(os.PathSeparator)) {
		t.Fatalf("dprepro imports from %s, not from the venv %s", where, venv)
	}

	// 2. A worker written with the package, run by the real binary on a
	// small data file of the user's ([data.files]).
	work := filepath.Join(tmp, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "worker.py"), readmeWorker(t))
	writeFile(t, filepath.Join(work, "spec.toml"), fmt.Sprintf(spec, vpy))
	writeFile(t, filepath.Join(work, "mydata.csv"), dataCSV(300))
	bin := filepath.Join(tmp, "dprepro")
	run(t, "..", nil, "go", "build", "-o", bin, "./cmd/dprepro")
	start = time.Now()
	run(t, work, []string{"DPREPRO_DATA=", "XDG_CACHE_HOME=" + tmp}, bin, "run", "spec.toml", "--out", filepath.Join(tmp, "out"))
	t.Logf("run: %v", time.Since(start).Round(time.Millisecond))
	runDir := filepath.Join(tmp, "out", "pkg-test", "quick-seed7")

	// 3. The package's unit tests, against the installed copy and this run.
	ut := run(t, tmp, []string{"DPREPRO_RUN_DIR=" + runDir, "DPREPRO_REQUIRE_PANDAS=1", "DPREPRO_EXPECT_INSTALLED=" + venv},
		vpy, "-m", "unittest", "discover", "-v", "-s", filepath.Join(src, "tests"), "-t", filepath.Join(src, "tests"))
	if strings.Contains(ut, "skipped") {
		t.Errorf("a Python unit test was skipped:\n%s", ut)
	}

	// 4. results.load against the run's files as Go reads them.
	rows := readCSV(t, filepath.Join(runDir, "rows.csv"))
	summary := readCSV(t, filepath.Join(runDir, "summary.csv"))
	claims := readCSV(t, filepath.Join(runDir, "claims.csv"))
	mb, err := os.ReadFile(filepath.Join(runDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m results.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tmp, "check.py"), check)
	for mode, wantType := range map[string]string{"pandas": "pandas.core.frame.DataFrame", "nopandas": "builtins.dict"} {
		var got struct {
			Type        string
			Rows        map[string][]*float64
			Method      []string
			SummaryMean []*float64 `json:"summary_mean"`
			Verdicts    []string
			Ledger      [][3]any
		}
		out, stderr := output(t, tmp, nil, vpy, filepath.Join(tmp, "check.py"), mode, runDir)
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s: %v\n%s%s", mode, err, out, stderr)
		}
		if got.Type != wantType {
			t.Errorf("%s: tables are %s, want %s", mode, got.Type, wantType)
		}
		if !slices.Equal(got.Method, column(rows, "method")) {
			t.Errorf("%s: the method column differs from rows.csv's", mode)
		}
		for _, c := range []string{"auc", "mse", "epsilon"} {
			equalFloats(t, mode+" rows."+c, got.Rows[c], column(rows, c))
		}
		equalFloats(t, mode+" summary.mean", got.SummaryMean, column(summary, "mean"))
		if !slices.Equal(got.Verdicts, column(claims, "verdict")) || len(got.Verdicts) != 1 {
			t.Errorf("%s: verdicts %q, claims.csv has %q", mode, got.Verdicts, column(claims, "verdict"))
		}
		var want [][3]any
		for _, e := range m.Ledger {
			var eps any // JSON null for a non-finite ε (the reference's +Inf)
			if v := float64(e.Total.Epsilon); !math.IsInf(v, 0) && !math.IsNaN(v) {
				eps = v
			}
			for range e.Components {
				want = append(want, [3]any{e.Method, e.Setting, eps})
			}
		}
		if fmt.Sprint(got.Ledger) != fmt.Sprint(want) {
			t.Errorf("%s: ledger %v, the manifest's %v", mode, got.Ledger, want)
		}
	}

	// The run is what the spec asked: both temperature variants, each
	// with its own rows, booked as declared by the method.
	methods := column(rows, "method")
	for _, v := range []string{"py-centroid[temperature=1]", "py-centroid[temperature=4]"} {
		if n := count(methods, v); n != 6 { // 3 folds × 2 ε
			t.Errorf("%d rows of %s, want 6", n, v)
		}
	}
	declared := 0
	for _, e := range m.Ledger {
		for _, c := range e.Components {
			if strings.HasPrefix(c.DeclaredBy, "py-centroid[temperature=") && c.DeclaredBy == e.Method {
				declared++
			}
		}
	}
	if declared != 4 { // 2 variants × 2 ε
		t.Errorf("%d ledger charges declared by py-centroid, want 4", declared)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dataCSV is n records of three Gaussian attributes and a label "yes"
// with probability σ(a − b/2), from a fixed seed.
func dataCSV(n int) string {
	rng := rand.New(rand.NewPCG(26, 3))
	var b strings.Builder
	b.WriteString("a,b,c,outcome\n")
	for i := 0; i < n; i++ {
		a, bb, c := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		label := "no"
		if rng.Float64() < 1/(1+math.Exp(-(a-bb/2))) {
			label = "yes"
		}
		fmt.Fprintf(&b, "%.4f,%.4f,%.4f,%s\n", a, bb, c, label)
	}
	return b.String()
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("%s: %v (%d records)", path, err, len(recs))
	}
	return recs
}

func column(recs [][]string, name string) []string {
	j := slices.Index(recs[0], name)
	if j < 0 {
		return nil
	}
	out := make([]string, 0, len(recs)-1)
	for _, r := range recs[1:] {
		out = append(out, r[j])
	}
	return out
}

// equalFloats checks the values Python loaded (nil for a non-finite one)
// against the file's strings, exactly: both parse the same shortest
// round-trip decimal.
func equalFloats(t *testing.T, what string, got []*float64, want []string) {
	t.Helper()
	if len(got) != len(want) || len(want) == 0 {
		t.Errorf("%s: %d values, the file has %d", what, len(got), len(want))
		return
	}
	for i, w := range want {
		v, err := strconv.ParseFloat(w, 64)
		if w == "" {
			v, err = math.NaN(), nil
		}
		if err != nil {
			t.Fatalf("%s[%d] = %q: %v", what, i, w, err)
		}
		finite := !math.IsNaN(v) && !math.IsInf(v, 0)
		if (got[i] == nil) == finite || (finite && *got[i] != v) {
			t.Errorf("%s[%d]: loaded %v, the file says %q", what, i, deref(got[i]), w)
			return
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func count(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}
