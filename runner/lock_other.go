//go:build !unix

package runner

import (
	"errors"
	"os"
)

var errWouldBlock = errors.New("would block")

// flock is a no-op where flock(2) does not exist: run directories are not
// locked there (dprepro is developed and tested on Linux).
func flock(f *os.File, wait bool) error { return nil }

// flockShared cannot tell where flock(2) does not exist: HeldBy then
// says that it does not know.
func flockShared(f *os.File) error {
	return errors.New("no flock(2) here: whether a process holds the folder is unknown")
}

// funlock is a no-op where flock(2) does not exist.
func funlock(f *os.File) {}
