package experiments_test

import (
	"flag"
	. "github.com/dprepro/dprepro/experiments"
	"os"
	"regexp"
	"strings"
	"testing"
)

var updateVariants = flag.Bool("update-variants", false, "rewrite the calibration-variant specs from their bases")

// sigmaFloorVariants are the Wang–Kifer–Lee calibration variants: the base
// spec with the private gradient covariance floored at c
// (confidence_intervals.sigma_floor = 1) instead of the 2c of the paper's
// text (docs/analysis.md, "coverage above the paper's").
var sigmaFloorVariants = []string{"wkl-table2-kdd", "wkl-table3-adult", "wkl-table4-bank"}

var titleLine = regexp.MustCompile(`(?m)^(title = "[^"]*)"`)

// sigmaFloorVariant returns the variant spec file of base (its text): the
// same spec and claims, with id, title, notes and sigma_floor changed.
func sigmaFloorVariant(base, text string) string {
	v := base + "-sigma-c"
	head := "# Calibration variant of " + base + ".toml: the same spec and claims with the\n" +
		"# private gradient covariance floored at c (confidence_intervals.sigma_floor = 1)\n" +
		"# instead of the 2c of the paper's text. Generated from " + base + ".toml; edit the\n" +
		"# base, then: go test ./experiments -run TestSigmaFloorVariants -update-variants\n"
	s := head + text
	s = strings.Replace(s, `id = "`+base+`"`, `id = "`+v+`"`, 1)
	loc := titleLine.FindStringSubmatchIndex(s)
	s = s[:loc[3]] + ", variant: covariance floor c" + s[loc[3]:]
	s = strings.Replace(s, "notes = \"\"\"\n", "notes = \"\"\"\n"+
		"Calibration variant: the eigenvalues of the private gradient covariance are\n"+
		"floored at c (sigma_floor = 1), not at the 2c the paper's text gives\n"+
		"(Algorithm 2 line 12, as Algorithm 3 line 6 and Algorithm 5 line 5 apply it);\n"+
		"the Hessian's floor stays 2c. A probe on Bank found this floor reproduces the\n"+
		"published coverages within about 0.005 where the text's 2c covers 0.01-0.03\n"+
		"more (docs/analysis.md). The privacy guarantee is unchanged (post-processing).\n", 1)
	return strings.Replace(s, "[confidence_intervals]\n", "[confidence_intervals]\nsigma_floor = 1.0\n", 1)
}

// TestSigmaFloorVariants: each variant file is its base transformed, so a
// change to the base (its claims included) cannot leave the variant behind.
func TestSigmaFloorVariants(t *testing.T) {
	for _, base := range sigmaFloorVariants {
		b, err := os.ReadFile(base + ".toml")
		if err != nil {
			t.Fatal(err)
		}
		want := sigmaFloorVariant(base, string(b))
		path := base + "-sigma-c.toml"
		if *updateVariants {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s is not %s.toml transformed; regenerate: go test ./experiments -run TestSigmaFloorVariants -update-variants", path, base)
		}
		s, err := Load(path, "quick", testKinds)
		if err != nil {
			t.Fatal(err)
		}
		if s.ID != base+"-sigma-c" || !strings.Contains(string(mustCanonical(t, s)), "sigma_floor = 1.0") {
			t.Errorf("%s: id %q or sigma_floor missing from the resolved spec", path, s.ID)
		}
	}
}

func mustCanonical(t *testing.T, s *Spec) []byte {
	t.Helper()
	b, err := s.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
