package privaudit

import (
	"context"
	"github.com/dprepro/dprepro/internal/stoptest"
	"github.com/dprepro/dprepro/runner"
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
	spec, err := experiments.Parse("audit.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range unitKeys(e) {
		stoptest.Prompt(t, key, 100*time.Millisecond, func(ctx context.Context) error {
			_, err := runner.RunKey(ctx, e, key)
			return err
		})
	}
}
