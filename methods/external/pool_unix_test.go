//go:build unix

package external

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestPool_CloseWithOrphan: a worker whose child left the process group
// (so that killing the group does not reach it) and holds its pipes must
// not keep Close (or the run) waiting. The orphan lives until the test
// lets it end, after Close: Close returning while it still holds the
// pipes is the proof, whatever the machine's load (a Close that waited
// for the pipes to close would never return).
func TestPool_CloseWithOrphan(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	stop := filepath.Join(t.TempDir(), "stop")
	t.Setenv("DPREPRO_FAKE_STOP", stop)
	defer os.WriteFile(stop, nil, 0o644) // whatever happens, the orphan ends
	p := NewPool(fakeCommand(t, "orphan", time.Minute))
	h, err := p.Hello(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(h.Version)
	if err != nil {
		t.Fatalf("hello version %q: %v", h.Version, err)
	}
	if _, err := p.Call(context.Background(), Request{Op: "fit", Params: fitParams{D: 1, Epsilon: 1}}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if !alive(orphan) {
		t.Fatalf("the orphan (pid %d) is gone before the test let it end: it proves nothing", orphan)
	}
	os.WriteFile(stop, nil, 0o644)
	waitGone(t, orphan)
}

// TestPool_ChildrenEnded: a worker that forks a child into its process
// group, the child holding the worker's stdout and stderr (a shell's
// `sleep 1000 &`), does not leave it running: the child is gone once the
// pool is closed (a normal end: the worker exits when its stdin closes)
// and once a fault kills the worker. Checked by the child's pid, not by
// time.
func TestPool_ChildrenEnded(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep")
	}
	for _, how := range []string{"close", "fault"} {
		t.Run(how, func(t *testing.T) {
			p := NewPool(fakeCommand(t, "forkchild", time.Minute))
			defer p.Close()
			h, err := p.Hello(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			child, err := strconv.Atoi(h.Version)
			if err != nil {
				t.Fatalf("hello version %q: %v", h.Version, err)
			}
			defer syscall.Kill(child, syscall.SIGKILL) // a failed test leaves nothing behind
			if !alive(child) {
				t.Fatalf("the child (pid %d) is not running before the end", child)
			}
			switch how {
			case "close":
				p.Close()
			case "fault": // a call that is cancelled kills its worker
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if _, err := p.Call(ctx, Request{Op: "fit", Params: fitParams{D: 1, Epsilon: 1, WaitFor: "/nonexistent"}}); !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled call: %v", err)
				}
			}
			waitGone(t, child)
		})
	}
}

// alive reports whether process pid exists and is not a zombie (a killed
// child of an exited worker is a zombie until init reaps it).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if _, serr := os.Stat("/proc/self/stat"); serr != nil { // no procfs
			return syscall.Kill(pid, 0) == nil
		}
		return false
	}
	// pid (comm) state …: the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return true
	}
	state := b[i+2]
	return state != 'Z' && state != 'X'
}

// waitGone waits until process pid has ended. The kill was sent before:
// a signal's delivery is not instantaneous, but nothing here depends on
// how long it takes — only a process that is never ended fails, at the
// guard of a minute.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	guard := time.Now().Add(time.Minute)
	for alive(pid) {
		if time.Now().After(guard) {
			t.Fatalf("process %d still runs a minute after the pool ended its worker", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
