package runner

import (
	"strings"
	"testing"

	"github.com/dprepro/dprepro/experiments"
)

// nopKind is a kind whose experiments are never built.
type nopKind struct{ name string }

func (k nopKind) Name() string                  { return k.name }
func (nopKind) NewSection() experiments.Section { return nil }
func (nopKind) New(*experiments.Spec, DataOptions) (Experiment, error) {
	return nil, nil
}

// TestRegisterKind: the command's registry takes a new kind once; a
// duplicate or unsafe name is refused and leaves it unchanged.
func TestRegisterKind(t *testing.T) {
	const name = "test-register-kind"
	if err := RegisterKind(nopKind{name}); err != nil {
		t.Fatal(err)
	}
	if err := RegisterKind(nopKind{name}); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("duplicate: %v", err)
	}
	for _, bad := range []string{"", "-x", "a b", "a/b"} {
		if err := RegisterKind(nopKind{bad}); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	n := 0
	for _, k := range Kinds.Names() {
		if k == name {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%q listed %d times in %v", name, n, Kinds.Names())
	}
}
