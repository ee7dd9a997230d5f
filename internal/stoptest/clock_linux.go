package stoptest

import (
	"syscall"
	"time"
	"unsafe"
)

// clockName names the measure of promptness in messages.
const clockName = "CPU"

// threadClock returns a function that reads the CPU time of the calling
// goroutine's OS thread, which must stay locked to it (LockOSThread); the
// function may be called from any goroutine. It is the thread's POSIX CPU
// clock, whose id the kernel derives from the thread id
// (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) in linux/posix-timers.h):
// clock_gettime on it reads another thread's clock, which
// CLOCK_THREAD_CPUTIME_ID cannot.
func threadClock() func() time.Duration {
	const (
		cpuclockSched     = 2
		cpuclockPerThread = 4
	)
	id := int32(^uint32(syscall.Gettid()))<<3 | cpuclockPerThread | cpuclockSched
	var last time.Duration
	return func() time.Duration {
		var ts syscall.Timespec
		if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(id), uintptr(unsafe.Pointer(&ts)), 0); errno == 0 {
			last = time.Duration(ts.Nano())
		} // else the thread is gone (read after the work ended): its last reading
		return last
	}
}
