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

// TestRunUnit_StopsPromptly gives a unit 2000 values of ε for two learners
// on 12,000 rows (4000 fits, seconds of work) and checks that it stops
// promptly when cancelled.
func TestRunUnit_StopsPromptly(t *testing.T) {
	eps := make([]string, 2000)
	for i := range eps {
		eps[i] = fmt.Sprint(0.01 + 0.001*float64(i))
	}
	src := strings.NewReplacer("subsample = 600", "subsample = 12000",
		"epsilons = [0.1, 10.0]", "epsilons = ["+strings.Join(eps, ", ")+"]").Replace(smallSpec)
	e := load(t, src)
	key := "magic/rep=1/fold=1/objective-perturbation"
	stoptest.Prompt(t, key, 100*time.Millisecond, func(ctx context.Context) error { _, err := runner.RunKey(ctx, e, key); return err })
}
