package experiments_test

import (
	"slices"
	"strings"
	"testing"

	. "github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/kinds/cvtune"
)

func tuningOf(s *Spec) cvtune.TuningSpec { return s.Section.(*cvtune.Section).Tuning }

// TestParseWith_Set: --set assignments change the chosen profile's
// resolved spec (shared part and section, lists and scalars, bare words as
// strings), later assignments win, the profile gains a suffix that
// depends on the options only, the manifest's words are kept, and the
// spec's hash moves.
func TestParseWith_Set(t *testing.T) {
	plain, err := Parse("good.toml", []byte(goodSpec), "quick", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	o := LoadOptions{Set: []string{"tuning.alphas=[0.25, 2]", "cv.folds=5", "data.synthetic=never", "cv.folds=4"}}
	s, err := ParseWith("good.toml", []byte(goodSpec), "quick", testKinds, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := tuningOf(s).Alphas; !slices.Equal(got, []float64{0.25, 2}) {
		t.Errorf("tuning.alphas = %v", got)
	}
	if cv := cvOf(s); cv.Folds != 4 || cv.Repetitions != 1 {
		t.Errorf("cv = %+v, want folds 4 (the later --set) and the quick profile's 1 repetition", cv)
	}
	if s.Data.Synthetic != "never" {
		t.Errorf("data.synthetic = %q", s.Data.Synthetic)
	}
	if !strings.HasPrefix(s.Profile, "quick.set-") || len(s.Profile) != len("quick.set-")+8 {
		t.Errorf("profile %q, want quick.set-<8 hex>", s.Profile)
	}
	if want := []string{"--set tuning.alphas=[0.25, 2]", "--set cv.folds=5", "--set data.synthetic=never", "--set cv.folds=4"}; !slices.Equal(s.Overrides, want) {
		t.Errorf("overrides %q", s.Overrides)
	}
	if s.Hash() == plain.Hash() {
		t.Error("the resolved spec's hash did not change")
	}
	again, _ := ParseWith("good.toml", []byte(goodSpec), "quick", testKinds, o)
	if again.Profile != s.Profile || again.Hash() != s.Hash() {
		t.Error("the same options gave another profile or hash")
	}
	other, _ := ParseWith("good.toml", []byte(goodSpec), "quick", testKinds, LoadOptions{Set: []string{"cv.folds=5"}})
	if other.Profile == s.Profile {
		t.Error("other options gave the same profile suffix")
	}
	if plain.Overrides != nil || plain.Profile != "quick" {
		t.Errorf("no options: overrides %q, profile %q", plain.Overrides, plain.Profile)
	}
}

// TestParseWith_SetErrors: every bad --set is refused naming the
// assignment — a forbidden or unknown key, a value of the wrong type, a
// value the validation refuses — and an error of the file itself still
// names its line.
func TestParseWith_SetErrors(t *testing.T) {
	cases := []struct {
		set  string
		want string
	}{
		{"id=other", "--set id=other: id cannot be set from the command line"},
		{"claims.x=1", "--set claims.x=1: claims cannot be set"},
		{"methods=[]", "--set methods=[]: methods cannot be set"},
		{"nokey", "--set nokey: want key=value"},
		{"tuning.nosuch=1", "--set tuning.nosuch=1: tuning.nosuch: unknown key"},
		{"cv.folds=many", "--set cv.folds=many:"},
		{"cv.folds=1", "--set cv.folds=1: cv.folds:"},
		{"tuning.alphas=[-1]", "--set tuning.alphas=[-1]: tuning.alphas[0]:"},
		{"a..b=1", `--set a..b=1: "a..b" is not a dotted key`},
	}
	for _, c := range cases {
		_, err := ParseWith("good.toml", []byte(goodSpec), "quick", testKinds, LoadOptions{Set: []string{c.set}})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "good.toml: ") {
			t.Errorf("--set %s: err = %v, want good.toml: … %s", c.set, err, c.want)
		}
	}
}

// TestParseWith_Only: --only keeps the named methods in each list that
// holds one (tuning.methods here; the default learner may be named), an
// unknown name is refused with the spec's methods and a "did you mean".
func TestParseWith_Only(t *testing.T) {
	s, err := ParseWith("good.toml", []byte(goodSpec), "quick", testKinds, LoadOptions{Only: []string{"control", "objective-perturbation"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tuningOf(s).Methods; !slices.Equal(got, []string{"control"}) {
		t.Errorf("tuning.methods = %v", got)
	}
	if tuningOf(s).Learners != nil {
		t.Errorf("tuning.learners = %v, want the default (none listed)", tuningOf(s).Learners)
	}
	if !strings.HasPrefix(s.Profile, "quick.set-") || !slices.Equal(s.Overrides, []string{"--only control,objective-perturbation"}) {
		t.Errorf("profile %q overrides %q", s.Profile, s.Overrides)
	}
	_, err = ParseWith("good.toml", []byte(goodSpec), "quick", testKinds, LoadOptions{Only: []string{"stabilty"}})
	if err == nil || !strings.Contains(err.Error(), `--only stabilty: unknown method "stabilty" (known: stability, control); did you mean "stability"?`) {
		t.Errorf("unknown: %v", err)
	}
	withLearners := strings.Replace(goodSpec, `methods = ["stability", "control"]`, `methods = ["stability", "control"]
learners = ["objective-perturbation", "output-perturbation"]`, 1)
	s, err = ParseWith("good.toml", []byte(withLearners), "quick", testKinds, LoadOptions{Only: []string{"output-perturbation"}})
	if err != nil {
		t.Fatal(err)
	}
	if tu := tuningOf(s); !slices.Equal(tu.Learners, []string{"output-perturbation"}) || !slices.Equal(tu.Methods, []string{"stability", "control"}) {
		t.Errorf("learners %v methods %v: want the one learner and every method", tu.Learners, tu.Methods)
	}
}
