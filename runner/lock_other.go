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

// flockShared is a no-op where flock(2) does not exist: no lock is ever
// seen held.
func flockShared(f *os.File) error { return nil }

// funlock is a no-op where flock(2) does not exist.
func funlock(f *os.File) {}
