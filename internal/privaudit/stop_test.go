package privaudit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dprepro/dprepro/experiments"
)

// TestRunUnit_StopsPromptly gives an audit unit 10,000,000 Laplace draws
// per side and a fitting unit 1,000,000 model fits per side (seconds to
// minutes of work) and checks that they return the context's error at once
// when it is already done and within a second of a cancellation.
func TestRunUnit_StopsPromptly(t *testing.T) {
	src := `schema = 1
id = "audit-stop"
kind = "privacy-audit"
seed = 1
[audit]
mechanisms = ["laplace", "objpert-wkl-lr"]
epsilons = [1.0]
draws = 10000000
fit_draws = 1000000
`
	spec, err := experiments.Parse("audit.toml", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range e.Units() {
		done, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		if _, err := e.RunUnit(done, key); !errors.Is(err, context.Canceled) {
			t.Errorf("%s, done context: %v", key, err)
		}
		if el := time.Since(start); el > 100*time.Millisecond {
			t.Errorf("%s, done context: returned after %v", key, el)
		}
		ctx, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start = time.Now()
		_, err := e.RunUnit(ctx, key)
		cancel2()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s, cancelled after 100 ms: %v", key, err)
		}
		if el := time.Since(start); el > time.Second {
			t.Errorf("%s: returned %v after the start (cancelled at 100 ms)", key, el)
		}
	}
}
