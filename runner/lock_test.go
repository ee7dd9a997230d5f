package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLock: one holder per directory; a second Lock is refused at once
// naming the holder; after Release the directory can be locked again; a
// lock file left by a dead process (its flock is gone, its description is
// still there) is taken over and reported.
func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	a, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.TookOver != nil {
		t.Errorf("fresh lock took over %v", a.TookOver)
	}
	_, err = Lock(dir)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: got %v, want a LockedError", err)
	}
	if le.Holder.PID != os.Getpid() || !strings.Contains(err.Error(), "PID "+strconv.Itoa(os.Getpid())) {
		t.Errorf("the refusal does not name the holder: %v", err)
	}
	a.Release()
	b, err := Lock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	if b.TookOver != nil {
		t.Errorf("a released lock was reported as left by a dead process: %v", b.TookOver)
	}
	b.Release()

	// A dead holder: its description stays, its flock went with it.
	if err := os.WriteFile(filepath.Join(dir, LockFile), []byte(`{"pid":999999,"host":"h","command":"dprepro run x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Lock(dir)
	if err != nil {
		t.Fatalf("stale lock: %v", err)
	}
	defer c.Release()
	if c.TookOver == nil || c.TookOver.PID != 999999 {
		t.Errorf("stale lock not reported: %+v", c.TookOver)
	}
}

// TestHeldBy: a folder without a lock file, or whose lock is free (never
// taken, released, or left by a dead process), is held by no one; one
// whose lock is taken is held by its taker, named; and looking leaves the
// lock free for the next Lock.
func TestHeldBy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if h, err := HeldBy(dir); h != nil || err != nil {
		t.Errorf("no folder: %v, %v", h, err)
	}
	l, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := HeldBy(dir)
	if err != nil || h == nil || h.PID != os.Getpid() {
		t.Errorf("held: %+v, %v; want PID %d", h, err, os.Getpid())
	}
	l.Release()
	if h, err := HeldBy(dir); h != nil || err != nil {
		t.Errorf("released: %+v, %v", h, err)
	}
	// A dead holder's description, its flock gone with it.
	if err := os.WriteFile(filepath.Join(dir, LockFile), []byte(`{"pid":999999,"host":"h","command":"dprepro run x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if h, err := HeldBy(dir); h != nil || err != nil {
		t.Errorf("left by a dead process: %+v, %v", h, err)
	}
	l, err = Lock(dir)
	if err != nil {
		t.Fatalf("lock after looking: %v", err)
	}
	l.Release()
}
