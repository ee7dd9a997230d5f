package runner

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/claims"
	"github.com/dprepro/dprepro/experiments"
)

// TestRun_ClaimsNeverVanish: a kind that declares nothing of its summary
// (no experiments.Producer, as a user's kind may be) gets claims whose
// names were not checked at load; each still has its row in claims.csv,
// "missing" with the reason, instead of vanishing from the file and from
// the report's counts.
func TestRun_ClaimsNeverVanish(t *testing.T) {
	e := newFake(6)
	e.spec.Claims = []experiments.ClaimSpec{
		{ID: "typo", Source: "s", Statement: "s", Rule: experiments.RuleIncreasing, Method: "m0", Metric: "Value"},
		{ID: "gone", Source: "s", Statement: "s", Rule: experiments.RuleGreater, Method: "m9", Metric: "value", Than: "m0"},
		{ID: "fine", Source: "s", Statement: "s", Rule: experiments.RuleGreater, Method: "m1", Metric: "value", Than: "m0"},
	}
	dir, err := Run(context.Background(), e, Options{OutDir: t.TempDir(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "claims.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col, ok := claims.Header(recs[0])
	if !ok {
		t.Fatalf("header %q", recs[0])
	}
	why := map[string]string{}
	for _, r := range recs[1:] {
		why[r[col("claim_id")]] = r[col("verdict")] + ": " + r[col("reason")]
	}
	for id, want := range map[string]string{
		"typo": "missing: metric not run: Value of m0 on d (the summary has value)",
		"gone": "missing: method not run: m9 on d (the run has m0, m1, m2)",
	} {
		if why[id] != want {
			t.Errorf("claim %s: %q, want %q", id, why[id], want)
		}
	}
	if v := why["fine"]; strings.HasPrefix(v, "missing") || v == "" {
		t.Errorf("claim fine: %q", v)
	}
}
