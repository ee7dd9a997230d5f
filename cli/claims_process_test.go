package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dprepro/dprepro/claims"
	"github.com/dprepro/dprepro/results"
)

// claimsSpec is a tiny cv-tuning spec whose quick profile runs fewer
// methods than its base, with three claims: one decided, one at an x the
// run does not have, one on a method the quick profile does not run.
const claimsSpec = `schema = 1
id = "claimed"
title = "claims"
kind = "cv-tuning"
seed = 5

[data]
datasets = ["magic"]
subsample = 600

[cv]
repetitions = 1
folds = 3

[tuning]
lambdas = [0.05, 1.0]
alphas = [1.0]
methods = ["stability", "random", "control"]

[output]
bootstrap = 100

[profile.quick.tuning]
methods = ["stability", "random"]

[[claims]]
id = "decided"
source = "Section 5"
statement = "stability beats random"
rule = "greater"
metric = "auc"
method = "stability"
than = "random"

[[claims]]
id = "x-not-run"
source = "Section 5"
statement = "stability's MSE is below random's"
rule = "less"
metric = "mse"
method = "stability"
than = "random"
x = [1.0, 2.0]

[[claims]]
id = "method-not-run"
source = "Section 5"
statement = "control beats random"
rule = "greater"
metric = "auc"
method = "control"
than = "random"
`

// runIn runs bin in dir with the newcomer's environment (cleanEnv).
func runIn(t *testing.T, dir, bin string, args ...string) procResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, cleanEnv(t)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := procResult{stdout: o.String(), stderr: e.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return r
}

// claimLine returns the 1-based line of the first line of src at or after
// the claims table id that starts with key.
func claimLine(t *testing.T, src, id, key string) int {
	t.Helper()
	in := false
	for i, l := range strings.Split(src, "\n") {
		in = in || l == fmt.Sprintf("id = %q", id)
		if in && strings.HasPrefix(l, key) {
			return i + 1
		}
	}
	t.Fatalf("no %s in claim %s", key, id)
	return 0
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestClaims_UnknownNameRefusedAtLoad: `metric = "AUC"` (the kind writes
// auc) is refused before any work, exit 2, at its line with the names the
// kind writes and a did-you-mean — where it used to drop the claim from
// claims.csv and the report without a word.
func TestClaims_UnknownNameRefusedAtLoad(t *testing.T) {
	bin := sharedBinary(t)
	dir, out := t.TempDir(), t.TempDir()
	src := strings.Replace(claimsSpec, "metric = \"auc\"\nmethod = \"stability\"", "metric = \"AUC\"\nmethod = \"stability\"", 1)
	if err := os.WriteFile(filepath.Join(dir, "spec.toml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, dir, bin, "run", "spec.toml", "--profile", "quick", "--out", out)
	want := fmt.Sprintf(`spec.toml:%d: claims[0].metric: unknown metric "AUC" (the kind writes: auc, mse, index, error_rate); did you mean "auc"?`, claimLine(t, src, "decided", "metric ="))
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, stderr\n%s\nwant %s", r.code, r.stderr, want)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a refused spec left %d entries in the output folder", len(entries))
	}
}

// TestClaims_EveryClaimARowFromAnyFolder is the researcher's path: a run
// of a spec given by a relative path, then `dprepro claims` from another
// folder after the claims are edited. The manifest records the spec's
// absolute path; every claim has its rows, a missing one with its reason;
// an edit is said to have changed the file (both SHA-256s); a claim that
// no longer loads is refused (exit 2) and claims.csv is left as it was;
// a spec file that is gone is named, with the digest the run loaded; a
// spec whose claims were all removed has its stale claims.csv removed.
func TestClaims_EveryClaimARowFromAnyFolder(t *testing.T) {
	bin := sharedBinary(t)
	dir, elsewhere, out := t.TempDir(), t.TempDir(), t.TempDir()
	specPath := filepath.Join(dir, "spec.toml")
	if err := os.WriteFile(specPath, []byte(claimsSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runIn(t, dir, bin, "run", "spec.toml", "--profile", "quick", "--out", out); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	run := filepath.Join(out, "claimed", "quick-seed5")
	_, _, m := readRun(t, run)
	if m.Spec.File != specPath || m.Spec.FileSHA256 != sha([]byte(claimsSpec)) {
		t.Errorf("manifest spec file %q sha256 %s, want %q %s", m.Spec.File, m.Spec.FileSHA256, specPath, sha([]byte(claimsSpec)))
	}
	written := mustRead(t, filepath.Join(run, "claims.csv"))
	rows := readClaimRows(t, written)
	for id, want := range map[string]string{
		"x-not-run@2":        "missing: x not run (the run has alpha = 1 of stability on magic)",
		"method-not-run@NaN": "missing: method not run: control on magic (the run has stability, random)",
	} {
		if rows[id] != want {
			t.Errorf("%s: %q, want %q", id, rows[id], want)
		}
	}
	for _, id := range []string{"decided@1", "x-not-run@1"} {
		if v := rows[id]; !strings.HasPrefix(v, "synthetic: ") { // the magic stand-in: no data folder named
			t.Errorf("%s: %q", id, v)
		}
	}

	// From another folder: the same verdicts, the same file.
	r := runIn(t, elsewhere, bin, "claims", out)
	if r.code != 0 || strings.Contains(r.stdout, "changed") {
		t.Fatalf("claims from elsewhere: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := mustRead(t, filepath.Join(run, "claims.csv")); !bytes.Equal(got, written) {
		t.Errorf("claims.csv re-decided from another folder differs:\n%s\nwas\n%s", got, written)
	}

	// A claim edited: re-decided, and the change said with both digests.
	edited := strings.Replace(claimsSpec, `statement = "stability beats random"`, `statement = "stability beats random (AUC)"`, 1)
	if err := os.WriteFile(specPath, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, elsewhere, bin, "claims", out)
	want := fmt.Sprintf("the spec file %s changed since the run (sha256 %s at the run, %s now), its design did not", specPath, sha([]byte(claimsSpec)), sha([]byte(edited)))
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("claims after an edit: exit %d\n%s\n%s\nwant %s", r.code, r.stdout, r.stderr, want)
	}
	before := mustRead(t, filepath.Join(run, "claims.csv"))
	if !bytes.Contains(before, []byte("stability beats random (AUC)")) {
		t.Error("the edited statement is not in claims.csv")
	}

	// A claim that no longer loads: refused, claims.csv untouched.
	broken := strings.Replace(edited, "metric = \"auc\"\nmethod = \"stability\"", "metric = \"AUC\"\nmethod = \"stability\"", 1)
	if err := os.WriteFile(specPath, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, elsewhere, bin, "claims", out)
	want = fmt.Sprintf(`spec.toml:%d: claims[0].metric: unknown metric "AUC" (the kind writes: auc, mse, index, error_rate); did you mean "auc"?`, claimLine(t, broken, "decided", "metric ="))
	if r.code != 2 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "claims.csv left as it was") {
		t.Fatalf("claims after a bad edit: exit %d\n%s\nwant %s", r.code, r.stderr, want)
	}
	if got := mustRead(t, filepath.Join(run, "claims.csv")); !bytes.Equal(got, before) {
		t.Error("a refused spec rewrote claims.csv")
	}

	// The spec file gone: named, with the digest the run loaded.
	if err := os.Remove(specPath); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, elsewhere, bin, "claims", out)
	want = fmt.Sprintf("its spec file %s is gone; the run loaded it with sha256 %s", specPath, sha([]byte(claimsSpec)))
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Fatalf("claims with the spec gone: exit %d\n%s\nwant %s", r.code, r.stderr, want)
	}
	if got := mustRead(t, filepath.Join(run, "claims.csv")); !bytes.Equal(got, before) {
		t.Error("claims with the spec gone rewrote claims.csv")
	}

	// Every claim removed: a claims.csv left behind would be reported as
	// the spec's, so it goes, and the command says so.
	bare := claimsSpec[:strings.Index(claimsSpec, "[[claims]]")]
	if err := os.WriteFile(specPath, []byte(bare), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, elsewhere, bin, "claims", out)
	if r.code != 0 || !strings.Contains(r.stdout, "its spec has no claims now: claims.csv removed") {
		t.Fatalf("claims of a spec without claims: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(run, "claims.csv")); !os.IsNotExist(err) {
		t.Errorf("claims.csv of removed claims: %v", err)
	}
}

// readClaimRows maps "claim_id@x" to "verdict: reason".
func readClaimRows(t *testing.T, b []byte) map[string]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("claims.csv: %v", err)
	}
	col, ok := claims.Header(recs[0])
	if !ok {
		t.Fatalf("claims.csv header %q", recs[0])
	}
	out := map[string]string{}
	for _, r := range recs[1:] {
		out[r[col("claim_id")]+"@"+r[col("x")]] = r[col("verdict")] + ": " + r[col("reason")]
	}
	return out
}

// TestClaims_RelativePathOfOlderManifest: a manifest of an older build
// recorded the spec's path as given; `dprepro claims` then resolves it
// from the current folder and says so when the file is not there.
func TestClaims_RelativePathOfOlderManifest(t *testing.T) {
	dir := t.TempDir()
	m := results.Manifest{Tool: "dprepro", Spec: results.SpecInfo{ID: "x", Kind: "cv-tuning", File: "specs/x.toml", FileSHA256: "ab12"}, Profile: "quick"}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := dprepro(t, "claims", dir)
	if code != 2 || !strings.Contains(stderr, `(recorded as "specs/x.toml", relative to the folder the run was started in; taken from this one) is gone; the run loaded it with sha256 ab12`) {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// TestCompareVerdicts_LegacyReference: the committed references'
// claims.csv, written before the reason column, still compare with a run's
// (`dprepro check`): a held claim that is not held now still fails.
func TestCompareVerdicts_LegacyReference(t *testing.T) {
	ref := strings.Join(claims.LegacyColumns, ",") + "\n" +
		"e,a,s,st,d,m,auc,1,NaN,0.1,0.05,0.15,greater,held\n" +
		"e,b,s,st,d,m,auc,2,NaN,NaN,NaN,NaN,greater,missing\n"
	now, err := claims.CSV([]claims.Result{
		{Experiment: "e", ClaimID: "a", Dataset: "d", X: 1, Rule: "greater", Verdict: claims.NotHeld},
		{Experiment: "e", ClaimID: "b", Dataset: "d", X: 2, Rule: "greater", Verdict: claims.Missing, Reason: "x not run (the run has alpha = 1 of m on d)"},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "claims.csv"), now, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if n := compareVerdicts(&out, dir, fstest.MapFS{"e/claims.csv": {Data: []byte(ref)}}, "e"); n != 1 || strings.Contains(out.String(), "claims.csv:") {
		t.Errorf("%d flips\n%s", n, out.String())
	}
}

// TestClaims_PairedKindNeedsItsRows: a cv-tuning run's claims are decided
// on differences paired by rep and fold, so `dprepro claims` refuses a
// folder whose rows.csv has no rows or lacks those columns (exit 2,
// claims.csv untouched) instead of silently taking the unpaired path that
// the run did not take.
func TestClaims_PairedKindNeedsItsRows(t *testing.T) {
	bin := sharedBinary(t)
	dir, out := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spec.toml"), []byte(claimsSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runIn(t, dir, bin, "run", "spec.toml", "--out", out); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	run := filepath.Join(out, "claimed", "quick-seed5")
	rowsPath := filepath.Join(run, "rows.csv")
	rows := mustRead(t, rowsPath)
	before := mustRead(t, filepath.Join(run, "claims.csv"))
	header := rows[:bytes.IndexByte(rows, '\n')+1]
	for name, body := range map[string][]byte{
		"header only": header,
		"no fold":     []byte(strings.Replace(string(rows), ",fold,", ",fold_,", 1)),
	} {
		if err := os.WriteFile(rowsPath, body, 0o644); err != nil {
			t.Fatal(err)
		}
		r := runIn(t, dir, bin, "claims", out)
		if r.code != 2 || !strings.Contains(r.stderr, "decides its claims on differences paired by rep, fold") {
			t.Errorf("%s: exit %d\n%s", name, r.code, r.stderr)
		}
		if got := mustRead(t, filepath.Join(run, "claims.csv")); !bytes.Equal(got, before) {
			t.Errorf("%s: claims.csv rewritten", name)
		}
	}
}
