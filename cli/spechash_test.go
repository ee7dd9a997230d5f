package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// TestBuiltin_HashesMatchReferences: every built-in spec at the quick
// profile resolves to the spec hash and design hash of its committed
// reference run (results/reference/ID/manifest.json), the identity that
// `dprepro check` compares. A field added to the spec structs must leave
// the canonical encoding of a spec that does not set it unchanged
// (omitempty), or every reference would stop matching its spec.
func TestBuiltin_HashesMatchReferences(t *testing.T) {
	if err := registerBuiltins(); err != nil {
		t.Fatal(err)
	}
	for _, id := range experiments.BuiltinIDs() {
		t.Run(id, func(t *testing.T) {
			m, err := results.ReadManifestFS(os.DirFS(filepath.Join("..", "results", "reference", id)), "manifest.json")
			if errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("no reference run: scripts/references.sh makes one")
			}
			if err != nil {
				t.Fatal(err)
			}
			s, err := runner.Kinds.LoadBuiltin(id, "quick")
			if err != nil {
				t.Fatal(err)
			}
			s.Seed = m.Seed
			if got := s.DesignHash(); got != m.Spec.DesignHash {
				t.Errorf("design hash %.12s, reference %.12s", got, m.Spec.DesignHash)
			}
			if got := s.Hash(); got != m.Spec.Hash {
				t.Errorf("resolved hash %.12s, reference %.12s", got, m.Spec.Hash)
			}
		})
	}
}
