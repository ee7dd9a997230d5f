package generators

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/privacy"
)

// plainGen is a generator declaring tasks, without a utility theorem;
// its releases are never drawn here.
type plainGen struct {
	name  string
	tasks []Task
}

func (g plainGen) Name() string  { return g.name }
func (g plainGen) Tasks() []Task { return g.tasks }
func (g plainGen) Sequence(context.Context, *rand.Rand, Setting, []float64) (Sequence, error) {
	return nil, errors.New("unused")
}
func (g plainGen) Independent(context.Context, *rand.Rand, Setting, float64) (Hypothesis, privacy.Guarantee, error) {
	return nil, privacy.Guarantee{}, errors.New("unused")
}

// logistic is a plainGen defined for the logistic task.
func logistic(name string) plainGen { return plainGen{name, []Task{TaskLogistic}} }

// TestRegister_Refuses checks the names and declarations the registry
// refuses, and that a refusal leaves it unchanged.
func TestRegister_Refuses(t *testing.T) {
	before := Names()
	tests := []struct {
		name    string
		g       Generator
		wantErr string
	}{
		{"nil", nil, "nil generator"},
		{"empty name", logistic(""), `bad name: generator name ""`},
		{"slash", logistic("a/b"), "bad name"},
		{"comma", logistic("a,b"), "bad name"},
		{"space", logistic("a b"), "bad name"},
		{"leading dot", logistic(".hidden"), "bad name"},
		{"duplicate built-in", logistic("output"), "already registered"},
		{"no task", plainGen{name: "no-task"}, "declares no task"},
		{"unknown task", plainGen{"svm-gen", []Task{"svm"}}, `unknown task "svm"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Register(tt.g)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
	if err := Register(accfirst.Covariance{}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v, want ErrDuplicate", err)
	}
	if got := Names(); !slices.Equal(got, before) {
		t.Errorf("names %v after refusals, want %v", got, before)
	}
	for _, b := range []string{"covariance", "output"} {
		if !slices.Contains(before, b) {
			t.Errorf("built-in %q not registered (names %v)", b, before)
		}
	}
}

// TestRegister_Lookup: the built-ins come first and are found by name; a
// registered generator follows them, is found, and is declared by itself,
// while the built-ins (and nil) are declared by no one.
func TestRegister_Lookup(t *testing.T) {
	g := logistic("test-lookup")
	if err := Register(g); err != nil && !errors.Is(err, ErrDuplicate) {
		t.Fatal(err)
	}
	names := Names()
	if len(names) < 3 || names[0] != "covariance" || names[1] != "output" || !slices.Contains(names[2:], g.name) {
		t.Errorf("names %v: want covariance, output, then %s", names, g.name)
	}
	for _, tt := range []struct{ name, declaredBy string }{
		{"covariance", ""},
		{"output", ""},
		{g.name, g.name},
	} {
		got, ok := Lookup(tt.name)
		if !ok || got.Name() != tt.name {
			t.Errorf("Lookup(%q) = %v, %v", tt.name, got, ok)
			continue
		}
		if d := DeclaredBy(got); d != tt.declaredBy {
			t.Errorf("DeclaredBy(%s) = %q, want %q", tt.name, d, tt.declaredBy)
		}
	}
	if g, ok := Lookup("no-such-generator"); ok {
		t.Errorf("Lookup of an unknown name: %v", g)
	}
	if d := DeclaredBy(nil); d != "" {
		t.Errorf("DeclaredBy(nil) = %q", d)
	}
	// Under a built-in's type, a registered name is still its own word.
	if d := DeclaredBy(renamed{accfirst.Output{}}); d != "renamed-output" {
		t.Errorf("DeclaredBy(renamed output) = %q", d)
	}
}

// renamed is output perturbation under another name.
type renamed struct{ accfirst.Output }

func (renamed) Name() string { return "renamed-output" }
