package experiments_test

import (
	"errors"
	"testing"

	. "github.com/dprepro/dprepro/experiments"
)

// TestSpec_Pos: the line of a key, of the run's profile's override, of the
// nearest written table, or the file alone; nothing for a spec built in
// code.
func TestSpec_Pos(t *testing.T) {
	t.Parallel()
	s, err := Parse("dir/good.toml", []byte(goodSpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Parse("dir/good.toml", []byte(goodSpec), "quick", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		spec *Spec
		key  string
		want string
	}{
		{"key", s, "tuning.lambdas", "good.toml:14"},
		{"table of an unwritten key", s, "tuning.learners", "good.toml:13"},
		{"profile override", q, "cv.repetitions", "good.toml:19"},
		{"not overridden", q, "cv.folds", "good.toml:11"},
		{"nothing written", s, "output.bootstrap", "good.toml"},
		{"spec built in code", &Spec{ID: "code"}, "tuning.lambdas", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.spec.Pos(c.key); got != c.want {
				t.Errorf("Pos(%q) = %q, want %q", c.key, got, c.want)
			}
		})
	}
}

// TestSpec_Attribute: an error names the spec once, however often it is
// attributed; errors at keys keep their positions.
func TestSpec_Attribute(t *testing.T) {
	t.Parallel()
	s, err := Parse("dir/good.toml", []byte(goodSpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	base := errors.New("boom")
	at := s.ErrorAt("tuning.lambdas", "tuning.lambdas[1]", base)
	plain := s.Attribute(base)
	joined := errors.Join(at, s.Errorf("cv.folds", "too few"))
	mixed := errors.Join(at, base)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"at a key", at, "good.toml:14: tuning.lambdas[1]: boom"},
		{"at a key, attributed", s.Attribute(at), "good.toml:14: tuning.lambdas[1]: boom"},
		{"plain", plain, "t: boom"},
		{"plain, attributed twice", s.Attribute(s.Attribute(base)), "t: boom"},
		{"joined keys", s.Attribute(joined), "good.toml:14: tuning.lambdas[1]: boom\ngood.toml:11: cv.folds: too few"},
		{"joined with a plain error", s.Attribute(mixed), "t: good.toml:14: tuning.lambdas[1]: boom\nboom"},
		{"built in code", (&Spec{ID: "code"}).Errorf("cv.folds", "too few"), "code: cv.folds: too few"},
		{"nil", s.Attribute(nil), "<nil>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := "<nil>"
			if c.err != nil {
				got = c.err.Error()
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
	if !errors.Is(at, base) || !errors.Is(plain, base) {
		t.Error("a SpecError does not unwrap to its error")
	}
	if s.ErrorAt("cv.folds", "cv.folds", nil) != nil {
		t.Error("ErrorAt(nil) is not nil")
	}
}
