package mutants

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProjectList_AppliesToTheTree: every mutant of the project's list
// (mutants/mutants.toml) names a file of the tree in which its text occurs
// exactly once, so that a refactor that moves a line fails here, in every
// test run, instead of turning the mutant stale at the next full `make
// mutants`.
func TestProjectList_AppliesToTheTree(t *testing.T) {
	root := filepath.Join("..", "..")
	l, err := Load(filepath.Join(root, "mutants", "mutants.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Mutants) == 0 {
		t.Fatal("the project's list holds no mutant")
	}
	for _, m := range l.Mutants {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.File)))
		if err != nil {
			t.Errorf("mutant %s: %v", m.ID, err)
			continue
		}
		if n := bytes.Count(b, []byte(m.Old)); n != 1 {
			t.Errorf("mutant %s: its text occurs %d times in %s (want exactly 1): update mutants/mutants.toml", m.ID, n, m.File)
		}
	}
}
