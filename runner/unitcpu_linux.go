//go:build linux

package runner

import (
	"syscall"
	"time"

	"github.com/dprepro/dprepro/results"
)

// rusageThread is RUSAGE_THREAD of getrusage(2) (Linux ≥ 2.6.26,
// include/uapi/linux/resource.h), which package syscall does not name:
// the resource usage of the calling thread only.
const rusageThread = 1

// threadCPU returns the user plus system CPU time of the calling OS
// thread, and the measure it is (results.MeasureThreadCPU); ok is false
// when getrusage refuses, and the caller then times the unit's wall clock.
// The caller must hold its goroutine on the thread (runtime.LockOSThread)
// between two readings for their difference to be its goroutine's.
func threadCPU() (d time.Duration, measure string, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, "", false
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(ru.Utime) + tv(ru.Stime), results.MeasureThreadCPU, true
}
