package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
)

// TestSelect_Process: a run with data.select through the binary, on the
// stand-in of adult (the real-data trace is datasets'
// TestRealData_AdultStepwise): exit 0, stderr and the manifest say the
// selection is not private and what it kept, the design has only the kept
// attributes' columns, and the report flags the preprocessing. Public
// scaling with a selection is a spec error (exit 2) at data.select.
func TestSelect_Process(t *testing.T) {
	t.Setenv(datasets.EnvDataDir, "")
	src := strings.Replace(missingSpec, "[data]\n", "[data]\nsynthetic = \"always\"\nselect = \"stepwise-bic\"\ncoding = \"treatment\"\n", 1)
	spec := writeSpec(t, src)
	out := t.TempDir()
	code, _, stderr := dprepro(t, "run", spec, "--out", out, "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "predictors chosen by stepwise-bic on all") || !strings.Contains(stderr, "records of the SYNTHETIC stand-in and their labels") || !strings.Contains(stderr, "NOT private") {
		t.Errorf("stderr does not warn of the non-private selection:\n%s", stderr)
	}
	_, _, m := readRun(t, filepath.Join(out, "tiny", "quick-seed3"))
	if len(m.Datasets) != 1 || m.Datasets[0].Selection == nil {
		t.Fatalf("manifest datasets %+v: no selection record", m.Datasets)
	}
	d := m.Datasets[0]
	s := d.Selection
	if !strings.HasPrefix(s.Statement, "NOT private: BIC selection fitted to all ") || !strings.Contains(s.Statement, " records of the SYNTHETIC stand-in and their labels") || s.Method != "stepwise-bic" || s.Criterion != "BIC" ||
		len(s.Candidates) != 14 || len(s.Kept) == 0 || len(s.Kept)+len(s.Dropped) != 14 || len(s.Steps) != len(s.Dropped) {
		t.Errorf("selection record %+v", s)
	}
	if d.Scaling != experiments.StatementSelected {
		t.Errorf("scaling statement %q, want %q", d.Scaling, experiments.StatementSelected)
	}
	if !strings.Contains(d.Preproc, "select=stepwise-bic") || !strings.Contains(d.Preproc, "coding=treatment") {
		t.Errorf("preprocessing %q", d.Preproc)
	}
	// The design: the kept attributes in treatment coding and the constant
	// (s.Columns counts the constant too).
	if d.D != s.Columns {
		t.Errorf("d = %d, the selection's model has %d columns", d.D, s.Columns)
	}
	code, _, stderr = dprepro(t, "report", out)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	page, err := os.ReadFile(filepath.Join(out, "report", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "non-private preprocessing") || !strings.Contains(string(page), s.Statement) {
		t.Error("the report does not flag the non-private selection")
	}

	// A kind that reads the raw attributes itself (histogram-tuning)
	// would ignore a selection: refused.
	code, _, stderr = dprepro(t, "run", "cv13-histogram", "--profile", "quick", "--set", `data.select="stepwise-bic"`, "--out", t.TempDir())
	if want := `data.select: kind "histogram-tuning" reads the raw attributes it names; it takes no predictor selection`; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("histogram + select: exit %d, stderr\n%s\nwant exit 2 and %q", code, stderr, want)
	}

	pub := writeSpec(t, strings.Replace(missingSpec, "[data]\n", "[data]\nscaling = \"public\"\nselect = \"stepwise-bic\"\n", 1))
	code, _, stderr = dprepro(t, "run", pub, "--out", t.TempDir(), "--workers", "1")
	if want := `spec.toml:9: data.select: "stepwise-bic" fits a model to every record's label`; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("public + select: exit %d, stderr\n%s\nwant exit 2 and %q", code, stderr, want)
	}
}
