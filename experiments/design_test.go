package experiments_test

import (
	. "github.com/dprepro/dprepro/experiments"
	"strings"
	"testing"
)

// TestSpec_DesignHash checks that the design hash ignores the seed, the
// secure-noise switch (and the acceptance of data-dependent scaling that
// goes with it) and the file the spec came from, and changes with
// anything that changes what is computed (a setting, the profile).
func TestSpec_DesignHash(t *testing.T) {
	withDatasets(t)
	parse := func(src, profile string) *Spec {
		t.Helper()
		s, err := Parse("good.toml", []byte(src), profile, testKinds)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	accept := strings.Replace(goodSpec, `datasets = ["magic"]`, "datasets = [\"magic\"]\naccept_data_dependent_scaling = true", 1)
	base := parse(goodSpec, "")
	want := base.DesignHash()
	if len(want) != 64 {
		t.Fatalf("design hash %q: want 64 hex digits", want)
	}
	same := []struct {
		name string
		spec *Spec
	}{
		{"another seed", parse(strings.Replace(goodSpec, "seed = 7", "seed = 8", 1), "")},
		{"secure noise", parse(accept+"\n[output]\nsecure_noise = true\n", "")},
		{"accepting data-dependent scaling", parse(accept, "")},
		{"another source", parse(goodSpec+"\n# a comment changes the file digest\n", "")},
	}
	for _, c := range same {
		if got := c.spec.DesignHash(); got != want {
			t.Errorf("%s: design hash changed", c.name)
		}
		if c.spec.Hash() == base.Hash() && c.name != "another source" {
			t.Errorf("%s: the resolved hash did not change (the test changes nothing)", c.name)
		}
	}
	differ := []struct {
		name string
		spec *Spec
	}{
		{"quick profile", parse(goodSpec, "quick")},
		{"another lambda", parse(strings.Replace(goodSpec, "lambdas = [0.1, 1.0]", "lambdas = [0.2, 1.0]", 1), "")},
		{"public scaling", parse(strings.Replace(goodSpec, `datasets = ["magic"]`, "datasets = [\"magic\"]\nscaling = \"public\"", 1), "")},
	}
	for _, c := range differ {
		if c.spec.DesignHash() == want {
			t.Errorf("%s: same design hash", c.name)
		}
	}
	// DesignHash does not modify the spec.
	s := parse(strings.Replace(accept, "seed = 7", "seed = 8", 1)+"\n[output]\nsecure_noise = true\n", "")
	s.DesignHash()
	if s.Seed != 8 || !s.Output.SecureNoise || !s.Data.AcceptDataDependentScaling || s.Source == nil {
		t.Errorf("DesignHash modified the spec: seed %d, secure %v, source %v", s.Seed, s.Output.SecureNoise, s.Source)
	}
}
