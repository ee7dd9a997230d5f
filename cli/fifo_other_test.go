//go:build !unix

package cli

import "testing"

func mkfifoT(t *testing.T, path string) {
	t.Helper()
	t.Skip("named pipes: unix only")
}
