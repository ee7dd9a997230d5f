//go:build linux

package runner

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHeldByKernel: on Linux the holder of a run folder's lock is read
// from the kernel's table of locks, so HeldBy takes no lock a starting run
// could collide with: the table says held while Lock's flock is held
// (another open file of the same lock file, as another process would
// have), and free once it is released.
func TestHeldByKernel(t *testing.T) {
	if _, err := os.ReadFile("/proc/locks"); err != nil {
		t.Skipf("no /proc/locks here (%v): HeldBy probes with a shared lock", err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	l, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, LockFile)
	if held, ok := heldByKernel(path); !ok || !held {
		t.Errorf("while locked: held %v, ok %v", held, ok)
	}
	l.Release()
	if held, ok := heldByKernel(path); !ok || held {
		t.Errorf("after release: held %v, ok %v", held, ok)
	}
	// Another file locked exclusively is not this one.
	other, err := Lock(filepath.Join(t.TempDir(), "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	if held, _ := heldByKernel(path); held {
		t.Error("another folder's lock taken for this one's")
	}
}
