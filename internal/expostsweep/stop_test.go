package expostsweep

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRunUnit_StopsPromptly gives a covariance noise-reduction unit
// T = 1,000,000 levels and an α that no level meets (a walk of the whole
// chain, each level a 77×77 trust-region test: about a minute) and checks
// that it returns the context's error at once when it is already done and
// within a second of a cancellation.
func TestRunUnit_StopsPromptly(t *testing.T) {
	src := strings.NewReplacer("steps = 300", "steps = 1000000", "alphas = [0.05, 0.2]", "alphas = [0.000001]",
		"trials = 4", "trials = 1", `methods = ["noise-reduction", "doubling", "theory", "theory-output"]`, `methods = ["noise-reduction"]`).Replace(ridgeSpec)
	e := load(t, src, "paper")
	key := e.Units()[0]
	done, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := e.RunUnit(done, key); !errors.Is(err, context.Canceled) {
		t.Errorf("done context: %v", err)
	}
	if el := time.Since(start); el > 100*time.Millisecond {
		t.Errorf("done context: returned after %v", el)
	}
	ctx, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	start = time.Now()
	if _, err := e.RunUnit(ctx, key); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled after 300 ms: %v", err)
	}
	if el := time.Since(start); el > 1300*time.Millisecond {
		t.Errorf("returned %v after the start (cancelled at 300 ms)", el)
	}
}
