//go:build unix

package runner

import (
	"errors"
	"os"
	"syscall"
)

var errWouldBlock = syscall.EWOULDBLOCK

// flock takes an exclusive flock(2) on f, waiting or not.
func flock(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// flockShared tries a shared flock(2) on f without waiting: it fails with
// errWouldBlock while another open file holds the exclusive lock.
func flockShared(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// funlock drops f's flock.
func funlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
