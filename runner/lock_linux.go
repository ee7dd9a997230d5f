//go:build linux

package runner

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// heldByKernel reports whether some open file holds the exclusive flock(2)
// of path, read from the kernel's table of locks (/proc/locks, proc(5))
// without taking any lock, so that a writer calling Lock at the same
// moment can never be refused because of it. ok is false when the table
// cannot be read (HeldBy then probes with a shared lock).
//
// The table names a lock by its file's device and inode; only the inode is
// matched (on overlay file systems the table may name the device beneath),
// so another file with the same inode number holding an exclusive flock
// on another file system would be taken for the holder: what HeldBy says
// is then wrong in its wording only (at work, not killed), never a refusal.
func heldByKernel(path string) (held, ok bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return false, false
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false, false
	}
	ino := strconv.FormatUint(st.Ino, 10)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 26769 fe:00:9977913 0 EOF"; a
		// process waiting for a lock is listed as "1: -> FLOCK …".
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" || f[3] != "WRITE" {
			continue
		}
		if id := f[5]; strings.HasSuffix(id, ":"+ino) && strings.Count(id, ":") == 2 {
			return true, true
		}
	}
	return false, true
}
