package experiments_test

import (
	. "github.com/dprepro/dprepro/experiments"
	"path/filepath"
	"testing"
)

// TestBuiltin_MatchesFiles: the built-in copy is this directory's specs,
// each file's id is its name, and loading by id gives the file's spec.
func TestBuiltin_MatchesFiles(t *testing.T) {
	files, _ := filepath.Glob("*.toml")
	if got := BuiltinFiles(); len(got) != len(files) {
		t.Fatalf("built in %v, on disk %v", got, files)
	}
	for _, f := range files {
		disk, err := Load(f, "quick", testKinds)
		if err != nil {
			t.Fatal(err)
		}
		b, err := LoadBuiltin(disk.ID, "quick", testKinds)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if b.Hash() != disk.Hash() || b.ID+".toml" != f {
			t.Errorf("%s: built-in spec differs or its id %q is not its file name", f, b.ID)
		}
		if b.Source.Path != BuiltinPrefix+f {
			t.Errorf("%s: source %q", f, b.Source.Path)
		}
	}
	if _, err := LoadBuiltin("nope", "quick", testKinds); err == nil {
		t.Error("unknown built-in spec loaded")
	}
}
