package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dprepro/dprepro/claims"
)

// TestCompareVerdicts: a claim that held in the reference and does not
// now fails the check, even when the summaries are identical; a claim that
// turned inconclusive is reported but does not fail.
func TestCompareVerdicts(t *testing.T) {
	csv := func(verdicts ...string) []byte {
		rs := []claims.Result{
			{Experiment: "e", ClaimID: "a", Dataset: "d", X: 1, Rule: "greater"},
			{Experiment: "e", ClaimID: "b", Dataset: "d", X: 1, Rule: "greater"},
		}
		for i := range rs {
			rs[i].Verdict = verdicts[i]
		}
		b, err := claims.CSV(rs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	refs := fstest.MapFS{"e/claims.csv": {Data: csv(claims.Held, claims.Held)}}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "claims.csv"), csv(claims.NotHeld, claims.Inconclusive), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if n := compareVerdicts(&out, dir, refs, "e"); n != 1 {
		t.Fatalf("%d flips, want 1\n%s", n, out.String())
	}
	for _, want := range []string{"claim a [d, x = 1]: held in the reference, not held now (FAIL)", "claim b [d, x = 1]: held in the reference, inconclusive now"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestClaimsCommand: `dprepro claims OUT` re-decides a finished run's
// claims from its rows and summary, giving the claims.csv the run wrote.
func TestClaimsCommand(t *testing.T) {
	bin := sharedBinary(t)
	out := t.TempDir()
	args := []string{"run", "wkl-table4-bank", "--profile", "quick", "--out", out}
	if d := os.Getenv("DPREPRO_DATA"); d != "" {
		args = append(args, "--data-dir", d)
	}
	if code, _, stderr := runBin(t, bin, nil, args...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	path := filepath.Join(out, "wkl-table4-bank", "quick-seed2019", "claims.csv")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runBin(t, bin, nil, "claims", out)
	if code != 0 || !strings.Contains(stdout, "held") {
		t.Fatalf("claims: exit %d\n%s\n%s", code, stdout, stderr)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("claims.csv re-decided differs from the run's (%v)", err)
	}
	if code, _, stderr := runBin(t, bin, nil, "claims", filepath.Join(out, "nothing")); code != 2 {
		t.Fatalf("claims of a missing folder: exit %d\n%s", code, stderr)
	}
}
