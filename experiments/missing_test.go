package experiments_test

import (
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
	. "github.com/dprepro/dprepro/experiments"
)

// TestMissing_Values: data.missing accepts "drop" and "level", is left out
// of the canonical spec when not set (a spec without it keeps its hash),
// and "level" changes the resolved and design hashes (a run under it is
// another run: never resumed from, nor compared with, a "drop" run).
func TestMissing_Values(t *testing.T) {
	withDatasets(t)
	base, err := Parse("good.toml", []byte(goodSpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	c, err := base.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(c), "missing") {
		t.Errorf("a spec without data.missing encodes it:\n%s", c)
	}
	if base.Data.Missing != "" {
		t.Errorf("default data.missing = %q, want \"\" (drop)", base.Data.Missing)
	}
	level, err := ParseWith("good.toml", []byte(goodSpec), "", testKinds, LoadOptions{Set: []string{`data.missing="level"`}})
	if err != nil {
		t.Fatal(err)
	}
	if level.Data.Missing != datasets.MissingLevel {
		t.Errorf("data.missing = %q", level.Data.Missing)
	}
	if level.Hash() == base.Hash() || level.DesignHash() == base.DesignHash() {
		t.Errorf("\"level\" keeps the hashes of the default spec")
	}
	drop, err := ParseWith("good.toml", []byte(goodSpec), "", testKinds, LoadOptions{Set: []string{"data.missing=drop"}})
	if err != nil {
		t.Fatal(err)
	}
	if drop.Data.Missing != datasets.MissingDrop || drop.DesignHash() == level.DesignHash() {
		t.Errorf("drop: data.missing = %q, design hash equal to level's: %v", drop.Data.Missing, drop.DesignHash() == level.DesignHash())
	}
}

// TestMissing_Errors: a bad value names the file, line and key; "level"
// with a data file is refused (a data file drops its incomplete records).
func TestMissing_Errors(t *testing.T) {
	withDatasets(t)
	cases := []struct {
		name, src, want string
	}{
		{"bad value", strings.Replace(goodSpec, "[data]\n", "[data]\nmissing = \"keep\"\n", 1),
			`bad.toml:7: data.missing: must be one of drop, level (got "keep")`},
		{"near miss", strings.Replace(goodSpec, "[data]\n", "[data]\nmissing = \"levels\"\n", 1),
			`bad.toml:7: data.missing: must be one of drop, level (got "levels")`},
		{"level with a data file", strings.Replace(fileSpec, "[data]\n", "[data]\nmissing = \"level\"\n", 1),
			`bad.toml:7: data.missing: "level" is implemented for the registry's files (adult); the data file data.files.mine drops`},
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
