package experiments_test

import (
	. "github.com/dprepro/dprepro/experiments"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the spec parser: it must never panic;
// a spec it accepts must validate, and one it rejects must say so in a
// message that starts with the file name. Seeded with every spec in this
// folder; `go test -fuzz FuzzParse ./experiments` explores further.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("*.toml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "quick")
			f.Add(b, "paper")
		}
	}
	f.Add([]byte("schema = 1\nkind = \"cv-tuning\"\n[cv]\nfolds = -1\n"), "")
	f.Add([]byte("[profile.quick]\nx = 1\n"), "quick")
	f.Add([]byte("\x00\"\"\"\n[[["), "")
	f.Fuzz(func(t *testing.T, src []byte, profile string) {
		s, err := Parse("fuzz.toml", src, profile, testKinds)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.toml") && !strings.HasPrefix(err.Error(), "spec: fuzz.toml") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if errs := s.Problems(); len(errs) > 0 {
			t.Errorf("accepted a spec that does not validate: %v", errs)
		}
	})
}
