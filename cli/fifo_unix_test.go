//go:build unix

package cli

import (
	"syscall"
	"testing"
)

func mkfifoT(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}
