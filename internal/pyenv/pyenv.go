// Package pyenv finds, for tests, a python3 that can import numpy: the
// external-method examples (examples/python-method) need one.
package pyenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/internal/testdeps"
)

// candidates are the interpreters tried in order: the one on $PATH, then
// Debian's (which has numpy once python3-numpy is installed, even when a
// pyenv or virtualenv python3 comes first on $PATH).
var candidates = []string{"python3", "/usr/bin/python3"}

// Find returns the path of a python3 that imports numpy, or "" and why
// none does.
func Find() (string, string) {
	var why []string
	for _, c := range candidates {
		p, err := exec.LookPath(c)
		if err != nil {
			why = append(why, c+": not found")
			continue
		}
		out, err := exec.Command(p, "-c", "import numpy").CombinedOutput()
		if err != nil {
			why = append(why, p+": "+strings.TrimSpace(lastLine(string(out))))
			continue
		}
		return p, ""
	}
	return "", strings.Join(why, "; ")
}

// Require returns a $PATH value whose first directory holds a python3
// (a symbolic link) that imports numpy, for a child process whose command
// says "python3". Without one the test is skipped with the reason, except
// under CI (CI=true), where it fails: CI installs python3-numpy (.ci/run)
// and must run these tests.
func Require(t testing.TB) string {
	t.Helper()
	py, why := Find()
	if py == "" {
		msg := "no python3 with numpy (" + why + "); install Debian's python3-numpy (apt-get install python3-numpy)"
		testdeps.Missing(t, msg)
	}
	dir := t.TempDir()
	if err := os.Symlink(py, filepath.Join(dir, "python3")); err != nil {
		t.Fatal(err)
	}
	return dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
