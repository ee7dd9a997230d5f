// Package stoptest checks that a piece of work stops promptly when its
// context is cancelled (the requirement: Ctrl-C stops a run within about a
// second, even in the middle of a long unit).
//
// # Work, not wall-clock time
//
// Promptness is measured as the CPU time of the OS thread that runs the
// work (Linux: the thread's CPU clock), never as wall-clock time: on a
// machine shared with other work (two cores at load 15–20) wall-clock time
// stretches by an unknown factor, while the work a unit does after its
// cancellation does not. A unit that stops within a second of CPU after
// the cancellation stops within a second on an idle machine, and
// proportionally later on a busy one — the assertion keeps its strength
// and no load can break it. The work runs on one goroutine locked to its
// thread (the units and searches tested run on the calling goroutine; work
// that a unit hands to other goroutines would not be counted). Where the
// platform has no thread CPU clock the measure falls back to wall-clock
// time.
package stoptest

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// Limits of Prompt, in CPU time of the work's thread.
const (
	// DoneLimit bounds the work of a call with a context that is already
	// done: it must return before doing any of its work.
	DoneLimit = 100 * time.Millisecond
	// StopLimit bounds the work done after a cancellation.
	StopLimit = time.Second
)

// Prompt runs fn twice. With a context that is already cancelled, fn must
// return context.Canceled having spent at most DoneLimit (100 ms) of CPU.
// With a context cancelled once fn has spent after of CPU, fn must return
// context.Canceled having spent at most StopLimit (1 s) of CPU after the
// cancellation. fn must be work that takes far longer than after when
// left alone: one that returns before it is cancelled fails the test.
func Prompt(t testing.TB, name string, after time.Duration, fn func(ctx context.Context) error) {
	t.Helper()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	var err error
	spent := CPU(func() { err = fn(done) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%s, done context: %v", name, err)
	}
	if spent > DoneLimit {
		t.Errorf("%s, done context: returned after %v of %s, want at most %v", name, spent, clockName, DoneLimit)
	}

	ctx, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	r := runCancelled(ctx, cancel2, after, fn)
	switch {
	case !r.cancelled:
		t.Errorf("%s: returned (%v) after %v of %s, before the cancellation at %v: give it more work, or the test proves nothing", name, r.err, r.total, clockName, after)
	case !errors.Is(r.err, context.Canceled):
		t.Errorf("%s, cancelled after %v of %s: %v", name, after, clockName, r.err)
	case r.afterCancel > StopLimit:
		t.Errorf("%s: went on for %v of %s after the cancellation (at %v), want at most %v", name, r.afterCancel, clockName, r.atCancel, StopLimit)
	}
}

// CPU runs fn on a goroutine locked to an OS thread of its own and returns
// the CPU time that thread spent in fn (wall-clock time where there is no
// thread CPU clock).
func CPU(fn func()) time.Duration {
	var spent time.Duration
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		clock := threadClock()
		start := clock()
		fn()
		spent = clock() - start
	}()
	<-finished
	return spent
}

// cancelled is the outcome of runCancelled.
type cancelled struct {
	err         error
	cancelled   bool          // the context was cancelled before fn returned
	atCancel    time.Duration // the work's CPU time at the cancellation
	afterCancel time.Duration // and from then until it returned
	total       time.Duration
}

// runCancelled runs fn(ctx) on a thread of its own and calls cancel once
// that thread has spent after of CPU in fn. The work's clock is read
// before cancel is called, so that what fn does between the reading and
// the cancellation counts against it.
func runCancelled(ctx context.Context, cancel context.CancelFunc, after time.Duration, fn func(context.Context) error) cancelled {
	var r cancelled
	clocks := make(chan func() time.Duration, 1)
	finished := make(chan time.Duration, 1)
	var start time.Duration
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		clock := threadClock()
		start = clock()
		clocks <- clock // read by the watcher from its own thread
		err := fn(ctx)
		r.err = err
		finished <- clock() - start
	}()
	clock := <-clocks
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r.total = <-finished:
			if r.cancelled {
				r.afterCancel = r.total - r.atCancel
			}
			return r
		case <-tick.C:
			if r.cancelled {
				continue
			}
			if used := clock() - start; used >= after {
				r.atCancel, r.cancelled = used, true
				cancel()
			}
		}
	}
}
