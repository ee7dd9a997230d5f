package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrLocked reports a run directory that another live process is writing.
var ErrLocked = errors.New("run directory in use")

// LockFile is the name of the lock file in a run directory.
const LockFile = ".lock"

// Holder describes the process that holds a run directory's lock.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Start   time.Time `json:"start"`
	Command string    `json:"command"`
}

func (h Holder) String() string {
	return fmt.Sprintf("PID %d on %s, started %s (%s)", h.PID, h.Host, h.Start.Format(time.RFC3339), h.Command)
}

// LockedError is the error of [Lock] when the directory is in use; it wraps
// [ErrLocked] and names the holder.
type LockedError struct {
	Dir    string
	Holder Holder
	// Elsewhere, when set, is how the caller can write elsewhere instead
	// (e.g. "write elsewhere with --out"), added to the advice; empty for
	// a command that works on the folder itself (dprepro claims).
	Elsewhere string
}

func (e *LockedError) Error() string {
	advice := "wait for it to finish or stop it"
	if e.Elsewhere != "" {
		advice += ", or " + e.Elsewhere
	}
	return fmt.Sprintf("%s is in use by another dprepro (%s); %s", e.Dir, e.Holder, advice)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// DirLock is an exclusive lock on a run directory, held until Release.
type DirLock struct {
	f *os.File
	// TookOver names the holder of a lock left by a process that is no
	// longer running, which this lock replaced; nil when there was none.
	TookOver *Holder
}

// Lock takes the exclusive lock of directory dir (created if needed): one
// writer per run directory. It does not wait for a holder: when another
// live process holds the lock it returns a *LockedError naming it (PID,
// host, start time), after trying again for 0.3 s (what HeldBy's instant
// hold needs). The lock is an flock(2) on dir/.lock, which the kernel releases
// when its holder exits however it exits (even SIGKILL), so a lock left by a
// dead process is detected (the flock is free while the file still names
// the old holder) and taken over; DirLock.TookOver then says whose it was.
// The file's content, the holder's description, is for messages only.
func Lock(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("runner: lock: %w", err)
	}
	err = flock(f, false)
	// A probe (HeldBy) holds a shared lock for an instant (two system
	// calls): try again for a moment (0.3 s, ample even for a probe
	// descheduled on a loaded machine) before refusing, so that a report
	// or check reading the folder never refuses a run.
	for try := 0; errors.Is(err, errWouldBlock) && try < 30; try++ {
		time.Sleep(10 * time.Millisecond)
		err = flock(f, false)
	}
	if err != nil {
		f.Close()
		// The holder writes its description right after taking the lock:
		// give it a moment before calling it unknown.
		h := Holder{Command: "unknown holder"}
		for try := 0; try < 10; try++ {
			var got Holder
			if b, _ := os.ReadFile(path); json.Unmarshal(b, &got) == nil && got.PID != 0 {
				h = got
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if errors.Is(err, errWouldBlock) {
			return nil, &LockedError{Dir: dir, Holder: h, Elsewhere: "write elsewhere with --out"}
		}
		return nil, fmt.Errorf("runner: lock %s: %w", path, err)
	}
	l := &DirLock{f: f}
	if b, _ := os.ReadFile(path); len(b) > 0 {
		var old Holder
		if json.Unmarshal(b, &old) == nil && old.PID != 0 {
			l.TookOver = &old
		}
	}
	host, _ := os.Hostname()
	me := Holder{PID: os.Getpid(), Host: host, Start: time.Now().UTC().Truncate(time.Second), Command: strings.Join(os.Args, " ")}
	b, _ := json.Marshal(me)
	b = append(b, '\n')
	if _, err := f.WriteAt(b, 0); err == nil {
		f.Truncate(int64(len(b)))
	}
	return l, nil
}

// HeldBy reports whether a live process holds the lock of run directory
// dir (Lock), without taking it in a way a writer could notice: on Linux
// it reads the kernel's table of locks (/proc/locks) and takes none;
// elsewhere, or when that table cannot be read, it tries a shared
// flock(2), which fails while the exclusive lock is held, and drops it at
// once if it was free (Lock tries again for a moment before refusing). The holder is described from the lock file (its Command is
// "unknown holder" when the holder has not written it yet); nil when no
// process holds the lock, or the folder has no lock file. An error means
// that it could not tell (the file unreadable, no flock on the file
// system).
func HeldBy(dir string) (*Holder, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("runner: lock: %w", err)
	}
	defer f.Close()
	held, ok := heldByKernel(path)
	switch {
	case ok && !held:
		return nil, nil
	case !ok:
		err = flockShared(f)
		if err == nil {
			funlock(f)
			return nil, nil
		}
		if !errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("runner: lock %s: %w", path, err)
		}
	}
	h := Holder{Command: "unknown holder"}
	var got Holder
	if b, _ := os.ReadFile(path); json.Unmarshal(b, &got) == nil && got.PID != 0 {
		h = got
	}
	return &h, nil
}

// LockWait is Lock that waits for the lock instead of refusing: for short
// critical sections shared by every run of an output folder (its index).
func LockWait(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("runner: lock: %w", err)
	}
	if err := flock(f, true); err != nil {
		f.Close()
		return nil, fmt.Errorf("runner: lock %s: %w", dir, err)
	}
	return &DirLock{f: f}, nil
}

// Release frees the lock. The file stays (removing it would let a process
// that opened it before the removal lock an orphaned inode while a third
// locks a new file); its content is stale and is replaced by the next
// holder.
func (l *DirLock) Release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0)
	l.f.Close()
	l.f = nil
}
