package cli

import (
	"bytes"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dprepro/dprepro/results"
)

// checkManifest is a hand-built manifest of a cv13-magic run on the real
// Magic file, at the quick profile, seed 2013.
func checkManifest() results.Manifest {
	return results.Manifest{Tool: "dprepro",
		Spec: results.SpecInfo{ID: "cv13-magic", Kind: "cv-tuning", Hash: "r0", DesignHash: "d0"},
		Seed: 2013, Profile: "quick", GOOS: "linux", GOARCH: "amd64", GOAMD64: "v1",
		Noise: []string{"simulation: seeded ChaCha8 streams per unit"},
		Datasets: []results.DatasetInfo{{Name: "magic", Source: "real",
			Files: []results.FileInfo{{Name: "magic04.data", SHA256: "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a"}}}},
	}
}

// checkRows are two summary cells with mean m, CI m ± 0.01, sd 0.05 and
// n 20 (hand-built; the rule reads the CI and sd, not how they were made).
func checkRows() []results.SummaryRow {
	row := func(method string, m float64) results.SummaryRow {
		return results.SummaryRow{Experiment: "fig1", Dataset: "magic", DataSource: "real", Method: method,
			XName: "alpha", X: 1, Metric: "auc", Mean: m, SD: 0.05, CILow: m - 0.01, CIHigh: m + 0.01, N: 20}
	}
	return []results.SummaryRow{row("stability", 0.8), row("random", 0.7)}
}

// writeRun writes a run folder (or a reference folder) holding m and rows.
func writeRun(t *testing.T, dir string, m results.Manifest, rows []results.SummaryRow) {
	t.Helper()
	mb, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := results.EncodeSummaryCSV(rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"manifest.json": mb, "summary.csv": sb} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheck_ExitCodes checks one run against one reference for each exit
// path: 0 identical or within tolerance, 1 a regression (with the advice to
// refresh on purpose), 2 refused or unusable input (without it).
func TestCheck_ExitCodes(t *testing.T) {
	t.Parallel()
	// inflate widens every CI of rows to ±hw and sets sd to match:
	// hw = 1.96·sd/√n.
	inflate := func(rows []results.SummaryRow, shift, hw float64) []results.SummaryRow {
		for i := range rows {
			rows[i].Mean += shift
			rows[i].CILow, rows[i].CIHigh = rows[i].Mean-hw, rows[i].Mean+hw
			rows[i].SD = hw * math.Sqrt(float64(rows[i].N)) / 1.96
		}
		return rows
	}
	otherSeed := func(m *results.Manifest) { m.Seed = 7 }
	cases := []struct {
		name     string
		run      func(m *results.Manifest, rows []results.SummaryRow) []results.SummaryRow
		ref      func(m *results.Manifest, rows []results.SummaryRow) []results.SummaryRow
		after    func(t *testing.T, runDir, refDir string) // breaks a file after writing
		code     int
		contains []string
	}{
		{name: "identical", code: 0, contains: []string{"cv13-magic (", "ok, all 2 cells identical [exact]"}},
		{name: "another seed, identical values", code: 0,
			run:      func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow { otherSeed(m); return r },
			contains: []string{"[tolerance z = 3; seed: 7 (run) vs 2013 (reference)]"}},
		{name: "another seed, mean moved by half the reference half-width", code: 0,
			run: func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow {
				otherSeed(m)
				r[0].Mean += 0.005
				return r
			},
			contains: []string{"ok, 1 of 2 cells moved within tolerance", "moved"}},
		{name: "exact setting, mean moved by 1e-12", code: 1,
			run: func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow {
				r[0].Mean += 1e-12
				return r
			},
			contains: []string{"FAIL", "out of tolerance", "[exact]", "make references"}},
		// Under the old rule z·√(hw_ref² + hw_run²) ≈ 300 this passed.
		{name: "means moved by 0.5 with CIs inflated to ±100", code: 1,
			run: func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow {
				otherSeed(m)
				return inflate(r, 0.5, 100)
			},
			contains: []string{"FAIL", "2 of 2 cells", "out of tolerance", "tolerance mode", "never refresh the references from them"}},
		{name: "same means with CIs inflated to ±100", code: 1,
			run: func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow {
				otherSeed(m)
				return inflate(r, 0, 100)
			},
			contains: []string{"FAIL", "spread grew", "never refresh the references from them"}},
		{name: "a cell missing", code: 1,
			run:      func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow { return r[:1] },
			contains: []string{"missing in run"}},
		{name: "stand-in vs real data", code: 2,
			run: func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow {
				m.Datasets = []results.DatasetInfo{{Name: "magic", Source: "synthetic", Generator: "planted-logistic/v1"}}
				return r
			},
			contains: []string{"refused against", "data differ: magic=synthetic planted-logistic/v1 (run) vs magic=real sha256 e9314b7ebd4b… (reference)"}},
		{name: "another data file", code: 2,
			ref: func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow {
				m.Datasets[0].Files[0].SHA256 = "318f"
				return r
			},
			contains: []string{"refused", "data differ", "sha256 318f (reference)"}},
		{name: "another profile", code: 2,
			run: func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow {
				m.Profile, m.Spec.DesignHash = "paper", "d1"
				return r
			},
			contains: []string{"refused", "profile differs: paper (run) vs quick (reference)"}},
		{name: "another design", code: 2,
			run: func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow {
				m.Spec.DesignHash = "d1"
				return r
			},
			contains: []string{"refused", "design differs"}},
		{name: "reference predates design hashes", code: 2,
			ref: func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow {
				m.Spec.DesignHash = ""
				return r
			},
			contains: []string{"unusable", "predates design hashes", "must be refreshed"}},
		{name: "duplicated row in the run", code: 2,
			run:      func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow { return append(r, r[0]) },
			contains: []string{"unusable", "duplicated summary row", "fig1 | magic | stability"}},
		{name: "duplicated row in both", code: 2,
			run:      func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow { return append(r, r[0]) },
			ref:      func(m *results.Manifest, r []results.SummaryRow) []results.SummaryRow { return append(r, r[0]) },
			contains: []string{"unusable", "duplicated summary row"}},
		{name: "unreadable run manifest", code: 2,
			after:    func(t *testing.T, run, ref string) { write(t, filepath.Join(run, "manifest.json"), `{"spec": `) },
			contains: []string{"unusable", "manifest.json"}},
		{name: "unreadable reference manifest", code: 2,
			after:    func(t *testing.T, run, ref string) { write(t, filepath.Join(ref, "manifest.json"), `not json`) },
			contains: []string{"unusable", "reference", "manifest.json"}},
		{name: "bad header in the run summary", code: 2,
			after:    func(t *testing.T, run, ref string) { write(t, filepath.Join(run, "summary.csv"), "a,b\n1,2\n") },
			contains: []string{"unusable", "header is not the summary schema"}},
		{name: "unparsable number in the reference summary", code: 2,
			after: func(t *testing.T, run, ref string) {
				b, _ := os.ReadFile(filepath.Join(ref, "summary.csv"))
				write(t, filepath.Join(ref, "summary.csv"), strings.Replace(string(b), ",0.05,", ",five,", 1))
			},
			contains: []string{"unusable", `sd = "five" is not a number`}},
		{name: "run without summary.csv", code: 2,
			after:    func(t *testing.T, run, ref string) { os.Remove(filepath.Join(run, "summary.csv")) },
			contains: []string{"unusable", "summary.csv"}},
		{name: "reference folder without manifest.json", code: 2,
			after:    func(t *testing.T, run, ref string) { os.Remove(filepath.Join(ref, "manifest.json")) },
			contains: []string{"unusable", "reference"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, against := t.TempDir(), t.TempDir()
			runDir := filepath.Join(out, "cv13-magic", "quick-seed2013")
			refDir := filepath.Join(against, "cv13-magic")
			rm, rrows := checkManifest(), checkRows()
			if tc.run != nil {
				rrows = tc.run(&rm, rrows)
			}
			fm, frows := checkManifest(), checkRows()
			if tc.ref != nil {
				frows = tc.ref(&fm, frows)
			}
			writeRun(t, runDir, rm, rrows)
			writeRun(t, refDir, fm, frows)
			if tc.after != nil {
				tc.after(t, runDir, refDir)
			}
			// The run folder named directly: compared whatever its profile.
			code, stdout, stderr := dprepro(t, "check", runDir, "--against", against)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			for _, s := range tc.contains {
				if !strings.Contains(stdout+stderr, s) {
					t.Errorf("output lacks %q\nstdout: %s\nstderr: %s", s, stdout, stderr)
				}
			}
			if !strings.Contains(stdout, "references: "+against) {
				t.Errorf("no header naming the references: %s", stdout)
			}
			if tc.code != 1 && strings.Contains(stdout+stderr, "refresh") && !strings.Contains(tc.name, "predates") {
				t.Errorf("advice to refresh with exit %d: %s %s", tc.code, stdout, stderr)
			}
			if strings.Contains(stdout, "refused") && (!strings.Contains(stdout, runDir) || !strings.Contains(stdout, refDir)) {
				t.Errorf("a refusal must name the run %s and the reference %s: %s", runDir, refDir, stdout)
			}
		})
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheck_Layout checks run discovery (a run folder, or runs up to three
// levels down, not in dot folders), matching by the manifest's spec id, and
// that every run is reported before the worst exit status.
func TestCheck_Layout(t *testing.T) {
	t.Parallel()
	out, against := t.TempDir(), t.TempDir()
	writeRun(t, filepath.Join(against, "cv13-magic"), checkManifest(), checkRows())
	quick := filepath.Join(out, "cv13-magic", "quick-seed2013")
	writeRun(t, quick, checkManifest(), checkRows())
	// The folder name does not matter: the manifest's spec id does.
	paper := checkManifest()
	paper.Profile, paper.Spec.DesignHash = "paper", "d1"
	writeRun(t, filepath.Join(out, "cv13-magic", "zz-renamed"), paper, checkRows())
	other := checkManifest()
	other.Spec.ID = "wkl-table2-kdd"
	writeRun(t, filepath.Join(out, "wkl-table2-kdd", "quick-seed1"), other, checkRows())
	// Not runs: a dot folder, and a run four levels down.
	writeRun(t, filepath.Join(out, ".checkpoint", "x"), checkManifest(), checkRows())
	writeRun(t, filepath.Join(out, "a", "b", "c", "d"), checkManifest(), checkRows())
	os.MkdirAll(filepath.Join(out, "wkl-figures"), 0o755)

	runs, err := findRuns(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{quick, filepath.Join(out, "cv13-magic", "zz-renamed"), filepath.Join(out, "wkl-table2-kdd", "quick-seed1")}
	if strings.Join(runs, "\n") != strings.Join(want, "\n") {
		t.Errorf("runs under %s:\n%s\nwant\n%s", out, strings.Join(runs, "\n"), strings.Join(want, "\n"))
	}

	// Scanning OUT: the paper run beside the quick one is not checked
	// against the quick reference (make paper; make check must not fail).
	code, stdout, stderr := dprepro(t, "check", out, "--against", against)
	if code != 0 {
		t.Errorf("a paper run beside a good quick run: exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	for _, s := range []string{
		"cv13-magic (" + quick + "): ok, all 2 cells identical [exact]",
		"zz-renamed): not checked: the reference " + filepath.Join(against, "cv13-magic") + ` is of profile "quick", this run of "paper"`,
		"wkl-table2-kdd (" + filepath.Join(out, "wkl-table2-kdd", "quick-seed1") + "): no reference in " + against + " (not checked)",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}

	// One folder of a spec id, and one run folder; the paper run folder
	// named directly is refused.
	if code, stdout, _ := dprepro(t, "check", filepath.Join(out, "cv13-magic"), "--against", against); code != 0 || strings.Count(stdout, "cv13-magic (") != 2 {
		t.Errorf("OUT/<id>: exit %d: %s", code, stdout)
	}
	if code, stdout, _ := dprepro(t, "check", quick, "--against", against); code != 0 || strings.Count(stdout, "cv13-magic (") != 1 {
		t.Errorf("a run folder: exit %d: %s", code, stdout)
	}
	paperDir := filepath.Join(out, "cv13-magic", "zz-renamed")
	code, stdout, stderr = dprepro(t, "check", paperDir, "--against", against)
	if code != 2 || !strings.Contains(stdout, "refused against "+filepath.Join(against, "cv13-magic")+": profile differs: paper (run) vs quick (reference)") || strings.Contains(stderr, "refresh") {
		t.Errorf("the paper run named: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}

	// A regression: exit 1, with the advice.
	moved := checkRows()
	moved[0].Mean += 0.5
	writeRun(t, quick, checkManifest(), moved)
	code, stdout, stderr = dprepro(t, "check", out, "--against", against)
	if code != 1 || !strings.Contains(stdout, "FAIL") || !strings.Contains(stderr, "make references") {
		t.Errorf("regression: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// TestCheck_Usage checks the arguments refused with exit 2.
func TestCheck_Usage(t *testing.T) {
	t.Parallel()
	out, against := t.TempDir(), t.TempDir()
	writeRun(t, filepath.Join(out, "cv13-magic"), checkManifest(), checkRows())
	for _, args := range [][]string{
		{"check"},
		{"check", out, "extra"},
		{"check", t.TempDir()},                  // no run
		{"check", filepath.Join(out, "absent")}, // no folder
		{"check", out, "--z", "0"},              // z > 0
		{"check", out, "--z", "+Inf"},           // finite
		{"check", out, "--against", against},    // no reference for any run
		{"check", out, "--against", filepath.Join(against, "absent")},
	} {
		if code, stdout, stderr := dprepro(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s %s", args, code, stdout, stderr)
		}
	}
}

// TestCheck_BuiltinReferences runs check without --against from a folder
// that has no results/reference: it reads the references built into the
// binary. The run is a copy of a built-in reference, so it is identical
// to it; until the references record design hashes it is refused as
// unusable instead.
func TestCheck_BuiltinReferences(t *testing.T) {
	refs := results.ReferenceFS()
	ents, err := fs.ReadDir(refs, ".")
	if err != nil || len(ents) == 0 {
		t.Fatalf("no built-in reference: %v", err)
	}
	id := ents[0].Name()
	runDir := filepath.Join(t.TempDir(), id, "quick-seed1")
	os.MkdirAll(runDir, 0o755)
	for _, name := range []string{"manifest.json", "summary.csv"} {
		b, err := fs.ReadFile(refs, id+"/"+name)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(runDir, name), string(b))
	}
	m, err := results.ReadManifestFS(refs, id+"/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, stdout, stderr := dprepro(t, "check", runDir)
	if !strings.Contains(stdout, "references: built-in (results/reference at build time)") {
		t.Errorf("header: %s", stdout)
	}
	if m.Spec.DesignHash != "" {
		if code != 0 || !strings.Contains(stdout, id+" ("+runDir+"): ok, all") || !strings.Contains(stdout, "[exact]") {
			t.Errorf("a copy of built-in reference %s: exit %d\nstdout: %s\nstderr: %s", id, code, stdout, stderr)
		}
	} else if code != 2 || !strings.Contains(stdout, "built-in reference/"+id+": reference manifest predates design hashes") {
		t.Errorf("a copy of old-format built-in reference %s: exit %d\nstdout: %s\nstderr: %s", id, code, stdout, stderr)
	}
}

// TestCheckRuns_FS calls checkRuns with an in-memory reference folder.
func TestCheckRuns_FS(t *testing.T) {
	t.Parallel()
	mb, _ := func() ([]byte, error) { m := checkManifest(); return m.Encode() }()
	sb, _ := results.EncodeSummaryCSV(checkRows())
	refs := fstest.MapFS{"cv13-magic/manifest.json": {Data: mb}, "cv13-magic/summary.csv": {Data: sb}}
	out := t.TempDir()
	writeRun(t, filepath.Join(out, "cv13-magic", "quick-seed2013"), checkManifest(), checkRows())
	var w bytes.Buffer
	if err := checkRuns(&w, out, refs, builtinReferences, 3); err != nil || !strings.Contains(w.String(), "ok, all 2 cells identical [exact]") {
		t.Errorf("%v: %s", err, w.String())
	}
}

// TestCheck_EndToEnd runs a tiny data-free spec, takes the run as its own
// reference, and checks it: identical (exact), a moved mean in the
// reference (exit 1), another seed (tolerance mode), another profile
// (refused, exit 2).
func TestCheck_EndToEnd(t *testing.T) {
	spec := writeSpec(t, strings.Replace(processSpecSmall, "replicates = 20", "replicates = 3", 1))
	out := t.TempDir()
	if code, _, stderr := dprepro(t, "run", spec, "--out", out); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	runs, err := findRuns(out)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	ref := t.TempDir()
	refDir := filepath.Join(ref, "proc")
	os.MkdirAll(refDir, 0o755)
	for _, f := range []string{"summary.csv", "manifest.json"} {
		b, err := os.ReadFile(filepath.Join(runs[0], f))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(refDir, f), string(b))
	}
	code, stdout, stderr := dprepro(t, "check", out, "--against", ref)
	if code != 0 || !strings.Contains(stdout, "proc (") || !strings.Contains(stdout, "ok, all") || !strings.Contains(stdout, "[exact]") {
		t.Fatalf("identical: exit %d, %q %q", code, stdout, stderr)
	}
	// Another seed: compared in tolerance mode, and named. With three
	// replicates some rare-event cells (a tail frequency of 0 in every
	// replicate) have sd 0 in the reference, which then allows them no
	// movement at all, so the outcome may be a regression (exit 1) but
	// never a refusal.
	seeded := t.TempDir()
	if code, _, stderr := dprepro(t, "run", spec, "--out", seeded, "--seed", "99"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = dprepro(t, "check", seeded, "--against", ref)
	if code == 2 || !strings.Contains(stdout, "[tolerance z = 3; seed: 99 (run) vs 17 (reference)]") {
		t.Errorf("other seed: exit %d, %q %q", code, stdout, stderr)
	}
	// Another profile: refused.
	paper := t.TempDir()
	if code, _, stderr := dprepro(t, "run", spec, "--out", paper, "--profile", "paper"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = dprepro(t, "check", filepath.Join(paper, "proc", "paper-seed17"), "--against", ref)
	if code != 2 || !strings.Contains(stdout, "refused against "+refDir+": profile differs: paper (run) vs quick (reference)") || strings.Contains(stderr, "refresh") {
		t.Errorf("other profile: exit %d, %q %q", code, stdout, stderr)
	}
	// Move one mean in the reference.
	rows, err := results.ReadSummaryCSV(filepath.Join(refDir, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows[0].Mean += 0.5
	b, _ := results.EncodeSummaryCSV(rows)
	write(t, filepath.Join(refDir, "summary.csv"), string(b))
	code, stdout, stderr = dprepro(t, "check", out, "--against", ref)
	if code != 1 || !strings.Contains(stdout, "FAIL") || !strings.Contains(stdout, "out of tolerance") || !strings.Contains(stderr, "make references") {
		t.Errorf("moved mean: exit %d, %q %q", code, stdout, stderr)
	}
}

// TestCheck_UnfinishedRuns: a run folder whose latest attempt did not
// finish is never skipped without a word. With a reference for its spec it
// fails the check (exit 1: the results the reference guards are not
// there), even when the folder still holds a finished run from before the
// failed attempt (which is not compared); without one it is named and not
// checked. A good run beside them is still compared.
func TestCheck_UnfinishedRuns(t *testing.T) {
	t.Parallel()
	out, against := t.TempDir(), t.TempDir()
	writeRun(t, filepath.Join(against, "cv13-magic"), checkManifest(), checkRows())
	other := checkManifest()
	other.Spec.ID = "cv13-adult"
	writeRun(t, filepath.Join(against, "cv13-adult"), other, checkRows())
	good := filepath.Join(out, "cv13-magic", "quick-seed2013")
	m := checkManifest()
	m.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	writeRun(t, good, m, checkRows())

	// Only the good run: exit 0.
	if code, stdout, stderr := dprepro(t, "check", out, "--against", against); code != 0 {
		t.Fatalf("the good run alone: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// A failed attempt of a spec with a reference, in a folder of its own.
	failed := filepath.Join(out, "cv13-adult", "quick-seed2013")
	if err := os.MkdirAll(failed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteAttempt(failed, &results.Attempt{State: results.AttemptFailed, Error: "cv13-adult: 3 of 40 units failed\nunit r1/f2: worker exited",
		Spec: results.SpecInfo{ID: "cv13-adult"}, Profile: "quick", Seed: 2013, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// A checkpoint without a manifest or a record, of a spec without a
	// reference (an older build's run that was killed).
	killed := filepath.Join(out, "mine", "quick-seed1")
	if err := os.MkdirAll(filepath.Join(killed, ".checkpoint"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(killed, ".checkpoint", "units.jsonl"), `{"format":1,"spec_id":"mine","profile":"quick","seed":1}`+"\n")
	// A damaged checkpoint, alone in the folder of a spec with a
	// reference.
	damaged := filepath.Join(out, "cv13-adult", "paper-seed1")
	if err := os.MkdirAll(filepath.Join(damaged, ".checkpoint"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(damaged, ".checkpoint", "units.jsonl"), `{"format":2,"spec_`+"\n")
	code, stdout, stderr := dprepro(t, "check", out, "--against", against)
	if !strings.Contains(stdout, "cv13-adult ("+damaged+"): FAIL: the run did not finish (unfinished): a damaged checkpoint (no readable header)") {
		t.Errorf("the damaged checkpoint is not named:\n%s", stdout)
	}
	if err := os.RemoveAll(damaged); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = dprepro(t, "check", out, "--against", against)
	if code != 1 {
		t.Errorf("a failed run with a reference: exit %d, want 1\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, s := range []string{
		"cv13-magic (" + good + "): ok, all 2 cells identical [exact]",
		"cv13-adult (" + failed + "): FAIL: the run did not finish (failed): cv13-adult: 3 of 40 units failed …; its reference " + filepath.Join(against, "cv13-adult") + " is not compared",
		"mine (" + killed + "): did not finish (unfinished): a checkpoint of 0 units and no manifest.json; no reference in " + against + " (not checked)",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	if !strings.Contains(stderr, "1 of 2 runs did not finish") || strings.Contains(stderr, "make references") {
		t.Errorf("stderr: %s", stderr)
	}

	// The good run's folder gets a newer attempt that failed: the finished
	// run it still holds is not what the folder stands for, and is not
	// compared as if it were.
	if err := os.RemoveAll(failed); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteAttempt(good, &results.Attempt{State: results.AttemptInterrupted, Error: "interrupted",
		Spec: results.SpecInfo{ID: "cv13-magic"}, Profile: "quick", Seed: 2013, Started: m.Start.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = dprepro(t, "check", good, "--against", against)
	if want := "cv13-magic (" + good + "): FAIL: the run did not finish (interrupted): interrupted (the finished run it still holds from before is not compared)"; code != 1 || !strings.Contains(stdout, want) || strings.Contains(stdout, "identical") {
		t.Errorf("a finished run superseded by an interrupted attempt: exit %d, want 1 and %q:\n%s", code, want, stdout)
	}
}
