package expostsweep

import (
	"context"
	"github.com/dprepro/dprepro/internal/stoptest"
	"github.com/dprepro/dprepro/runner"
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
	key := unitKeys(e)[0]
	stoptest.Prompt(t, key, 300*time.Millisecond, func(ctx context.Context) error {
		_, err := runner.RunKey(ctx, e, key)
		return err
	})
}
