package learnercmp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dprepro/dprepro/internal/stoptest"
	"github.com/dprepro/dprepro/runner"
)

// TestRunUnit_StopsPromptly gives two learners 2000 values of ε on 12,000
// rows: 4000 units of one fit each per fold, seconds of work for the
// first fold's, run one after the other as a worker runs them. Cancelled,
// the sequence stops promptly: a unit handed out after the cancellation
// does no work (runner.Begin), and a fit in progress is one fit.
func TestRunUnit_StopsPromptly(t *testing.T) {
	eps := make([]string, 2000)
	for i := range eps {
		eps[i] = fmt.Sprint(0.01 + 0.001*float64(i))
	}
	src := strings.NewReplacer("subsample = 600", "subsample = 12000",
		"epsilons = [0.1, 10.0]", "epsilons = ["+strings.Join(eps, ", ")+"]").Replace(smallSpec)
	e := load(t, src)
	var units []runner.Unit
	for _, u := range e.Units() {
		if strings.HasPrefix(u.Key(), "magic/rep=1/fold=1/") {
			units = append(units, u)
		}
	}
	stoptest.Prompt(t, "the units of magic/rep=1/fold=1", 100*time.Millisecond, func(ctx context.Context) error {
		for _, u := range units {
			if _, err := e.RunUnit(ctx, u, runner.NewEnv(e.Spec(), u.Key(), false)); err != nil {
				return err
			}
		}
		return nil
	})
}
