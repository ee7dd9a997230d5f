//go:build !unix

package datasets

import "testing"

func mkfifo(t *testing.T, path string) {
	t.Helper()
	t.Skip("named pipes: unix only")
}
