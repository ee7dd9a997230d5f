// Package testdeps decides, for tests, what a missing external dependency
// (a Debian package such as python3-numpy or chromium) means: a skip with
// the reason on a developer's machine, a failure under CI (CI=true), which
// installs every such package (scripts/debian-deps.sh) and must run the
// tests that need them.
package testdeps

import (
	"os"
	"testing"
)

// Missing ends the test for a missing dependency: t.Skip(msg), or t.Fatal
// under CI.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
