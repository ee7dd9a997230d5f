package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/results"
)

// TestRun_SetAndOnly runs the built binary with --set and --only, as a
// researcher trying a setting without editing the file: the run goes to
// its own folder (<profile>.set-<h>-seed<S>), its rows hold only the
// chosen method at the set α, spec.toml is the resolved spec with the
// changes, the manifest lists them, the file's own run (same folder
// above) is untouched, and the same command again resumes every unit. A
// bad --set exits 2 naming the assignment and writes nothing; reproduce
// has neither flag.
func TestRun_SetAndOnly(t *testing.T) {
	bin := sharedBinary(t)
	spec := writeSpec(t, tinySpec)
	out := t.TempDir()
	data := "--data-dir=" + os.Getenv("DPREPRO_DATA")
	args := []string{"run", spec, "--profile", "quick", "--out", out, data, "--only", "random", "--set", "tuning.alphas=[0.5, 2]", "--set", "tuning.lambdas=[1]"}
	code, stdout, stderr := runBin(t, bin, nil, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	runs, _ := filepath.Glob(filepath.Join(out, "tiny", "quick.set-*-seed3"))
	if len(runs) != 1 {
		t.Fatalf("run folders %v, want one quick.set-<h>-seed3", runs)
	}
	rows, _, m := readRun(t, runs[0])
	want := []string{"--only random", "--set tuning.alphas=[0.5, 2]", "--set tuning.lambdas=[1]"}
	slices.Sort(want)
	got := slices.Clone(m.Spec.Overrides)
	slices.Sort(got)
	if !slices.Equal(got, want) || !strings.HasPrefix(m.Profile, "quick.set-") {
		t.Errorf("manifest profile %q overrides %q", m.Profile, m.Spec.Overrides)
	}
	recs, err := results.ReadRowsCSV(filepath.Join(runs[0], "rows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	alphas := map[string]bool{}
	for _, r := range recs {
		if r["method"] != "random" {
			t.Fatalf("a row of method %q in a run --only random", r["method"])
		}
		alphas[r["alpha"]] = true
	}
	if len(alphas) != 2 || !alphas["0.5"] || !alphas["2"] {
		t.Errorf("alphas %v, want 0.5 and 2", alphas)
	}
	resolved, err := os.ReadFile(filepath.Join(runs[0], "spec.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(resolved); !strings.Contains(s, `methods = ["random"]`) || !strings.Contains(s, "alphas = [0.5, 2.0]") {
		t.Errorf("spec.toml does not hold the changes:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(out, "tiny", "quick-seed3")); err == nil {
		t.Error("the run with --set wrote the file's own run folder")
	}
	// Again: every unit resumes, the rows are the same.
	code, _, stderr = runBin(t, bin, nil, args...)
	if code != 0 || !strings.Contains(stderr, "6 units (6 already done)") {
		t.Errorf("again: exit %d, want every unit resumed\n%s", code, stderr)
	}
	if rows2, _, _ := readRun(t, runs[0]); string(rows2) != string(rows) {
		t.Error("the resumed run's rows differ")
	}
	// Errors: exit 2, the assignment named, nothing written.
	bad := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "cv.folds=two"}, "spec.toml: --set cv.folds=two: cv.folds: incompatible types"},
		{[]string{"--set", "tuning.alphas=[0]"}, "spec.toml: --set tuning.alphas=[0]: tuning.alphas[0]: must be finite and > 0"},
		{[]string{"--only", "stabilty"}, `spec.toml: --only stabilty: unknown method "stabilty" (known: stability, random); did you mean "stability"?`},
	} {
		code, _, stderr := runBin(t, bin, nil, append([]string{"run", spec, "--out", bad, data}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 and %q\n%s", c.args, code, c.want, stderr)
		}
	}
	if entries, _ := os.ReadDir(bad); len(entries) != 0 {
		t.Errorf("refused runs wrote %d entries to the output folder", len(entries))
	}
	if code, _, stderr := runBin(t, bin, nil, "reproduce", "--set", "cv.folds=3", "--out", bad); code != 2 || !strings.Contains(stderr, "flag provided but not defined: -set") {
		t.Errorf("reproduce --set: exit %d\n%s", code, stderr)
	}
}
