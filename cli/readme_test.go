package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/report"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the README's generated account of the claims from results/paper")

// TestReadmeClaimsSummary checks that the README's account of what
// reproduced (between its claims-summary markers) is what the committed
// paper-profile claims (results/paper, from scripts/paper-claims.sh) say,
// so that prose and data cannot drift. -update-readme rewrites it.
func TestReadmeClaimsSummary(t *testing.T) {
	paper := filepath.Join("..", "results", "paper")
	if _, err := os.Stat(paper); err != nil {
		t.Fatalf("results/paper: %v (scripts/paper-claims.sh OUT commits a paper-profile run's claims)", err)
	}
	want, err := readmeSummary(paper)
	if err != nil {
		t.Fatal(err)
	}
	want = strings.ReplaceAll(want, "../results/paper", "results/paper")
	path := filepath.Join("..", "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, report.ReadmeBegin), strings.Index(s, report.ReadmeEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the markers %q … %q", report.ReadmeBegin, report.ReadmeEnd)
	}
	got := s[i+len(report.ReadmeBegin)+1 : j]
	if got == want {
		return
	}
	if *updateReadme {
		s = s[:i+len(report.ReadmeBegin)] + "\n" + want + s[j:]
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's account of the claims differs from results/paper; run scripts/paper-claims.sh OUT (or go test ./cli -run TestReadmeClaimsSummary -update-readme)\n--- README\n%s\n--- results/paper\n%s", got, want)
}
