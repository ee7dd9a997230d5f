package experiments_test

import (
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
	. "github.com/dprepro/dprepro/experiments"
)

// TestSelect_Values: data.select and data.coding are left out of the
// canonical spec when not set (a spec without them keeps its hash), and
// each value changes the resolved and design hashes.
func TestSelect_Values(t *testing.T) {
	withDatasets(t)
	base, err := Parse("good.toml", []byte(goodSpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	c, err := base.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(c), "select") || strings.Contains(string(c), "coding") {
		t.Errorf("a spec without data.select / data.coding encodes them:\n%s", c)
	}
	hashes := map[string]string{base.DesignHash(): "default"}
	for _, set := range []string{`data.select="stepwise-bic"`, `data.select="stepwise-aic"`, `data.coding="treatment"`} {
		s, err := ParseWith("good.toml", []byte(goodSpec), "", testKinds, LoadOptions{Set: []string{set}})
		if err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		if prev, ok := hashes[s.DesignHash()]; ok {
			t.Errorf("%s has the design hash of %s", set, prev)
		}
		hashes[s.DesignHash()] = set
	}
	s, err := ParseWith("good.toml", []byte(goodSpec), "", testKinds, LoadOptions{Set: []string{`data.select="stepwise-bic"`, `data.coding="treatment"`}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Data.Select != datasets.SelectStepwiseBIC || s.Data.Coding != datasets.CodingTreatment {
		t.Errorf("data.select = %q, data.coding = %q", s.Data.Select, s.Data.Coding)
	}
}

// TestSelect_Errors: a bad value names the file, line and key; public
// scaling refuses a selection (it reads every label) and treatment coding.
func TestSelect_Errors(t *testing.T) {
	withDatasets(t)
	cases := []struct {
		name, src, want string
	}{
		{"bad select", strings.Replace(goodSpec, "[data]\n", "[data]\nselect = \"stepwise\"\n", 1),
			`bad.toml:7: data.select: must be one of none, stepwise-bic, stepwise-aic (got "stepwise")`},
		{"bad coding", strings.Replace(goodSpec, "[data]\n", "[data]\ncoding = \"dummy\"\n", 1),
			`bad.toml:7: data.coding: must be one of one-hot, treatment (got "dummy")`},
		{"select with public scaling", strings.Replace(goodSpec, "[data]\n", "[data]\nscaling = \"public\"\nselect = \"stepwise-bic\"\n", 1),
			`bad.toml:8: data.select: "stepwise-bic" fits a model to every record's label`},
		{"treatment with public scaling", strings.Replace(goodSpec, "[data]\n", "[data]\nscaling = \"public\"\ncoding = \"treatment\"\n", 1),
			`bad.toml:8: data.coding: "treatment" is implemented for data-dependent scaling only`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("dir/bad.toml", []byte(c.src), "", testKinds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}
