package lint

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryLinksNoTestCode: the shipped binary (cmd/dprepro) imports no
// test helper: neither the standard library's testing package nor any
// internal helper of the tests (internal/stattest, internal/tracetest,
// internal/stoptest, internal/testdeps), so that a test flag or a test
// dependency never reaches a user's binary. Production code that needs a
// statistical critical value uses internal/statcrit.
func TestBinaryLinksNoTestCode(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the binary's dependencies")
	}
	cmd := exec.Command(gobin, "list", "-deps", "./cmd/dprepro")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/dprepro: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		switch {
		case p == "testing", strings.HasPrefix(p, "testing/"):
			t.Errorf("cmd/dprepro links %s", p)
		case strings.HasPrefix(p, "github.com/dprepro/dprepro/internal/") &&
			(strings.HasSuffix(p, "test") || strings.HasSuffix(p, "testdeps")):
			t.Errorf("cmd/dprepro links the test helper %s", p)
		}
	}
}
