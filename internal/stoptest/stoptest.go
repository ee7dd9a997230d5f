// Package stoptest checks that a piece of work stops promptly when its
// context is cancelled (the requirement: Ctrl-C stops a run within about a
// second, even in the middle of a long unit).
package stoptest

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Prompt runs fn twice: with a context that is already cancelled, when it
// must return context.Canceled within 100 ms; and with a context cancelled
// after the given delay, when it must return context.DeadlineExceeded within
// 1 s of the cancellation. fn must be work that takes far longer than that when
// left alone, or the second half proves nothing.
func Prompt(t testing.TB, name string, after time.Duration, fn func(ctx context.Context) error) {
	t.Helper()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := fn(done); !errors.Is(err, context.Canceled) {
		t.Errorf("%s, done context: %v", name, err)
	}
	if el := time.Since(start); el > 100*time.Millisecond {
		t.Errorf("%s, done context: returned after %v", name, el)
	}
	ctx, cancel2 := context.WithTimeout(context.Background(), after)
	defer cancel2()
	start = time.Now()
	if err := fn(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%s, cancelled after %v: %v", name, after, err)
	}
	if el := time.Since(start); el > after+time.Second {
		t.Errorf("%s: returned %v after the start (cancelled at %v)", name, el, after)
	}
}
