package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/claims"
)

// TestLoad_MissingReason: a claim missing from a run is shown with the
// reason its claims.csv gives (which of the dataset, method, metric or x
// was not run), in index.html and report.md; a claims.csv written before
// the reason column is still read, and says it has none.
func TestLoad_MissingReason(t *testing.T) {
	out := writeFixture(t)
	why := "method not run: control on adult (the run has a)"
	csv := strings.Join(claims.Columns, ",") + "\n" +
		"t,a-lt-b,Section 5,a beats b,adult,a,auc,1,NaN,0.1,0.05,0.15,less,not held,\n" +
		"t,gone,Table 3,control beats a,adult,control,auc,NaN,NaN,NaN,NaN,NaN,greater,missing," + why + "\n"
	if err := os.WriteFile(filepath.Join(out, "t", "quick-seed1", "claims.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Load(out, Options{Claims: fixtureClaims})
	if err != nil {
		t.Fatal(err)
	}
	run := r.Papers[0].Runs[0]
	if len(run.Notes) != 0 || len(run.Claims) != 2 || run.Claims[1].MissingWhy() != why {
		t.Fatalf("notes %q, claims %d", run.Notes, len(run.Claims))
	}
	dir, err := r.Write()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"index.html", "report.md"} {
		if s := read(t, filepath.Join(dir, f)); !strings.Contains(s, why) {
			t.Errorf("%s does not say why the claim is missing (%q)", f, why)
		}
	}

	legacy := writeFixture(t) // its claims.csv has no reason column
	r, err = Load(legacy, Options{Claims: fixtureClaims})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Papers[0].Runs[0].Claims {
		if c.ID == "gone" && !strings.Contains(c.MissingWhy(), "predates the reason column") {
			t.Errorf("legacy missing claim: %q", c.MissingWhy())
		}
	}
}
