package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
)

// missingSpec is tinySpec on adult.
var missingSpec = strings.Replace(tinySpec, `datasets = ["magic"]`, `datasets = ["adult"]`, 1)

// TestMissing_BadValue: data.missing = "keep" is a spec error (exit 2)
// naming the file, the line and the key.
func TestMissing_BadValue(t *testing.T) {
	src := strings.Replace(missingSpec, "[data]\n", "[data]\nmissing = \"keep\"\n", 1)
	spec := writeSpec(t, src)
	code, _, stderr := dprepro(t, "run", spec, "--out", t.TempDir(), "--workers", "1")
	const want = `spec.toml:8: data.missing: must be one of drop, level (got "keep")`
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr\n%s\nwant exit 2 and %q", code, stderr, want)
	}
}

// TestMissing_NoResumeAcross: a "drop" run, then a "level" run into the
// same folder: the second resumes nothing, says that data.missing
// changed, and its manifest records the policy and the counts. On the
// real adult.data ($DPREPRO_DATA) the counts are those of
// datasets.TestRealData_AdultMissing (32,561 read; 2,399 dropped or kept
// with a '?' level); without it, on the stand-in, which has no missing
// values and says so.
func TestMissing_NoResumeAcross(t *testing.T) {
	dataDir := os.Getenv(datasets.EnvDataDir)
	real := dataDir != ""
	if real {
		if st, err := datasets.Inspect("adult", dataDir); err != nil || !st[0].State.Usable() {
			real = false
		}
	}
	src := missingSpec
	args := []string{"--workers", "2"}
	if real {
		args = append(args, "--data-dir", dataDir)
		src = strings.Replace(src, "[data]\n", "[data]\nsynthetic = \"never\"\n", 1)
	} else {
		// The stand-in; a named directory that does not exist would be
		// an error before any run.
		t.Setenv(datasets.EnvDataDir, "")
		src = strings.Replace(src, "[data]\n", "[data]\nsynthetic = \"always\"\n", 1)
	}
	spec := writeSpec(t, src)
	out := t.TempDir()
	code, _, stderr := dprepro(t, append([]string{"run", spec, "--out", out}, args...)...)
	if code != 0 {
		t.Fatalf("drop run: exit %d\n%s", code, stderr)
	}
	dir := filepath.Join(out, "tiny", "quick-seed3")
	_, _, m1 := readRun(t, dir)
	// The same spec file edited (--set would run under another profile
	// name, in another folder).
	if err := os.WriteFile(spec, []byte(strings.Replace(src, "[data]\n", "[data]\nmissing = \"level\"\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = dprepro(t, append([]string{"run", spec, "--out", out}, args...)...)
	if code != 0 {
		t.Fatalf("level run: exit %d\n%s", code, stderr)
	}
	_, _, m2 := readRun(t, dir)
	if m2.Units.Resumed != 0 || m2.Units.Computed != m2.Units.Total {
		t.Errorf("level run after a drop run: units %+v, want none resumed", m2.Units)
	}
	if !strings.Contains(stderr, "data.missing") {
		t.Errorf("the level run does not say that data.missing changed:\n%s", stderr)
	}
	if m1.Spec.DesignHash == m2.Spec.DesignHash {
		t.Errorf("drop and level runs share the design hash %s", m1.Spec.DesignHash)
	}
	d1, d2 := m1.Datasets[0], m2.Datasets[0]
	if !real {
		if d2.Source != "synthetic" || !strings.Contains(d2.Params["missing"], "no missing values") || d1.Params["missing"] != "" {
			t.Errorf("stand-in: drop params %v, level params %v", d1.Params, d2.Params)
		}
		return
	}
	f1, f2 := d1.Files[0], d2.Files[0]
	if f1.Missing != "drop" || f1.Read != 32561 || f1.Records != 30162 || f1.Dropped != 2399 || f1.MissingLevel != 0 {
		t.Errorf("drop: file record %+v", f1)
	}
	if f2.Missing != "level" || f2.Read != 32561 || f2.Records != 32561 || f2.Dropped != 0 || f2.MissingLevel != 2399 {
		t.Errorf("level: file record %+v", f2)
	}
	// d: 104 one-hot and numeric columns + intercept under drop; the '?'
	// levels of workclass, occupation, native-country and workclass's
	// Never-worked add 4 (datasets.TestRealData_AdultMissing).
	if d1.D != 105 || d2.D != 109 {
		t.Errorf("d = %d (drop), %d (level); want 105, 109", d1.D, d2.D)
	}
}

// TestMissing_PublicUndeclared: under public scaling the '?' level that
// data.missing = "level" keeps must be declared like any other level;
// cv13-adult-public declares the levels of adult.names, without '?', so
// the run is refused (exit 2) naming data.missing and the columns.
func TestMissing_PublicUndeclared(t *testing.T) {
	dataDir := os.Getenv(datasets.EnvDataDir)
	if dataDir == "" {
		t.Skipf("real-data test: $%s is unset", datasets.EnvDataDir)
	}
	if st, err := datasets.Inspect("adult", dataDir); err != nil || !st[0].State.Usable() {
		t.Skipf("real-data test: adult.data not usable in %s", dataDir)
	}
	code, _, stderr := dprepro(t, "run", "cv13-adult-public", "--profile", "quick", "--data-dir", dataDir,
		"--set", `data.missing="level"`, "--out", t.TempDir(), "--workers", "1")
	const want = `data.missing = "level" keeps "?" as a level of workclass, occupation, native-country, which the public domain does not declare`
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr\n%s\nwant exit 2 and %q", code, stderr, want)
	}
	// The table to write is named with the dataset's name, and where the
	// built-in levels are documented.
	for _, part := range []string{"[data.levels.adult]", "Declared domains of the built-in datasets"} {
		if !strings.Contains(stderr, part) {
			t.Errorf("the refusal does not say %q:\n%s", part, stderr)
		}
	}
}
