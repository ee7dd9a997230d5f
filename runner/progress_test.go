package runner

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// lineWriter records every Write and signals it on writes.
type lineWriter struct {
	mu     sync.Mutex
	all    []string
	writes chan string
}

func newLineWriter() *lineWriter { return &lineWriter{writes: make(chan string, 100)} }

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all = append(w.all, string(b))
	select {
	case w.writes <- string(b):
	default:
	}
	return len(b), nil
}

func (w *lineWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.all)
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// hangGuard bounds a wait for something that must happen (a write after a
// tick): only a hang reaches it, never a slow but busy machine.
const hangGuard = time.Minute

// next returns the next write, failing after hangGuard.
func (w *lineWriter) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-w.writes:
		return s
	case <-time.After(hangGuard):
		t.Fatalf("no write within %v", hangGuard)
		return ""
	}
}

func TestProgress_HeartbeatOnTimer(t *testing.T) {
	t.Parallel()
	w := newLineWriter()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	tick := make(chan time.Time)
	p := newProgress(w, "spec", 12, 0, 5*time.Second, false, clk.now, tick, nil)
	if got := w.next(t); got != "dprepro: spec: 12 units (0 already done)\n" {
		t.Fatalf("first line %q", got)
	}

	// A slow first unit: the timer still reports, with no ETA yet.
	clk.advance(5 * time.Second)
	tick <- clk.now()
	want := "dprepro: spec: 0/12 units (0%), elapsed 5s, 0.00 units/s, ETA unknown\n"
	if got := w.next(t); got != want {
		t.Errorf("before the first unit:\n got %q\nwant %q", got, want)
	}

	// 3 units in 10 s: 0.3 units/s, 9 left, ETA 30 s. Add itself writes
	// nothing when not on a terminal.
	p.Add(3)
	clk.advance(5 * time.Second)
	tick <- clk.now()
	want = "dprepro: spec: 3/12 units (25%), elapsed 10s, 0.30 units/s, ETA 30s\n"
	if got := w.next(t); got != want {
		t.Errorf("after 3 units:\n got %q\nwant %q", got, want)
	}

	p.Add(9)
	clk.advance(2 * time.Second)
	p.Finish()
	if got, want := w.next(t), "dprepro: spec: 12/12 units in 12s\n"; got != want {
		t.Errorf("final line %q, want %q", got, want)
	}
	p.Finish() // a second call does nothing
	if n := w.count(); n != 4 {
		t.Errorf("%d writes, want 4: %q", n, w.all)
	}
}

func TestProgress_ResumedRate(t *testing.T) {
	t.Parallel()
	w := newLineWriter()
	clk := &fakeClock{t: time.Unix(0, 0)}
	tick := make(chan time.Time)
	p := newProgress(w, "s", 10, 4, time.Second, false, clk.now, tick, nil)
	w.next(t)
	// Resumed units are not part of the rate: still unknown.
	clk.advance(2 * time.Second)
	tick <- clk.now()
	if got := w.next(t); !strings.Contains(got, "4/10 units (40%)") || !strings.HasSuffix(got, "ETA unknown\n") {
		t.Errorf("resumed, nothing computed: %q", got)
	}
	p.Add(2) // 2 computed in 4 s: 0.5/s, 4 left: 8 s
	clk.advance(2 * time.Second)
	tick <- clk.now()
	if got := w.next(t); !strings.Contains(got, "6/10 units (60%)") || !strings.Contains(got, "0.50 units/s, ETA 8s") {
		t.Errorf("after 2 computed: %q", got)
	}
	p.Finish()
}

func TestProgress_TerminalBar(t *testing.T) {
	t.Parallel()
	w := newLineWriter()
	clk := &fakeClock{t: time.Unix(0, 0)}
	tick := make(chan time.Time)
	p := newProgress(w, "s", 4, 0, ttyInterval, true, clk.now, tick, nil)
	if got := w.next(t); !strings.HasPrefix(got, "\rs [") || !strings.Contains(got, "0/4") || !strings.Contains(got, "ETA unknown") {
		t.Errorf("first bar %q", got)
	}
	clk.advance(ttyInterval)
	tick <- clk.now()
	if got := w.next(t); !strings.Contains(got, "0/4") || !strings.Contains(got, "ETA unknown") || strings.Contains(got, "ETA 0s") {
		t.Errorf("timer redraw %q", got)
	}
	clk.advance(time.Second)
	p.Add(2) // a unit done on a terminal redraws at once: 2 in 1.2 s
	if got := w.next(t); !strings.Contains(got, "[###############---------------] 2/4  50%") || !strings.Contains(got, "ETA 1s") {
		t.Errorf("bar after Add %q", got)
	}
	p.Finish()
	w.next(t) // the final bar
	if got := w.next(t); got != "\n" {
		t.Errorf("after the final bar %q, want a newline", got)
	}
}

// TestProgress_NothingAfterFinish runs the real timer at a short interval:
// after Finish no write happens and the goroutine is gone.
func TestProgress_NothingAfterFinish(t *testing.T) {
	t.Parallel()
	w := newLineWriter()
	p := NewProgress(w, "s", 3, 0, time.Millisecond)
	// The start line and at least two heartbeats.
	for range 3 {
		w.next(t)
	}
	p.Add(1)
	p.Finish()
	select {
	case <-p.done:
	default:
		t.Fatal("the timer goroutine is still running after Finish")
	}
	n := w.count()
	time.Sleep(20 * time.Millisecond) // 20 intervals
	if m := w.count(); m != n {
		t.Errorf("%d writes after Finish", m-n)
	}
}

// TestProgress_FinishStopsTicker checks that the timer is released.
func TestProgress_FinishStopsTicker(t *testing.T) {
	t.Parallel()
	stopped := make(chan struct{})
	tick := make(chan time.Time, 1)
	w := newLineWriter()
	p := newProgress(w, "s", 1, 0, time.Second, false, time.Now, tick, func() { close(stopped) })
	p.Finish()
	select {
	case <-stopped:
	case <-time.After(hangGuard):
		t.Fatal("the ticker was not stopped")
	}
	n := w.count()
	tick <- time.Now() // nobody reads it any more
	time.Sleep(10 * time.Millisecond)
	if w.count() != n {
		t.Error("a tick after Finish was drawn")
	}
}
