package cvtune

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dprepro/dprepro/internal/stoptest"
	"github.com/dprepro/dprepro/runner"

	"github.com/dprepro/dprepro/experiments"
)

// grid returns k distinct values lo, lo+step, … as a TOML array body.
func grid(k int, lo, step float64) string {
	parts := make([]string, k)
	for i := range parts {
		parts[i] = fmt.Sprint(lo + float64(i)*step)
	}
	return strings.Join(parts, ", ")
}

// gridInt returns k distinct integers lo, lo+1, … as a TOML array body.
func gridInt(k, lo int) string {
	parts := make([]string, k)
	for i := range parts {
		parts[i] = fmt.Sprint(lo + i)
	}
	return strings.Join(parts, ", ")
}

// stopsPromptly runs the unit with a done context (it must return at once)
// and with one cancelled after 100 ms (it must return within a second).
func stopsPromptly(t *testing.T, key string, run func(ctx context.Context) error) {
	t.Helper()
	stoptest.Prompt(t, key, 100*time.Millisecond, run)
}

// TestRunUnit_StopsPromptly gives a cv-tuning unit 400 candidate
// regularizers on 12,000 rows (800 fits, seconds of work) and checks that
// it stops promptly.
func TestRunUnit_StopsPromptly(t *testing.T) {
	src := strings.NewReplacer("subsample = 1500", "subsample = 12000",
		"lambdas = [0.01, 0.1, 1.0]", "lambdas = ["+grid(400, 0.001, 0.0001)+"]").Replace(smallSpec)
	spec, err := experiments.Parse("small.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(spec, Options{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		t.Fatal(err)
	}
	key := "magic/alpha=0.5/stability/rep=1/fold=1"
	stopsPromptly(t, key, func(ctx context.Context) error { _, err := runner.RunKey(ctx, e, key); return err })
}

// TestHist_StopsPromptly gives a histogram unit 50 candidate bin counts of
// about a million bins each (50 million noise draws, seconds of work) and
// checks that it stops promptly.
func TestHist_StopsPromptly(t *testing.T) {
	src := strings.NewReplacer("bins = [4, 16, 64]", "bins = ["+gridInt(50, 1000000)+"]",
		`methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]`, `methods = ["control"]`).Replace(histSpecSrc)
	e, err := loadHist(t, src)
	if err != nil {
		t.Fatal(err)
	}
	key := unitKeys(e)[0]
	if !strings.HasPrefix(key, "bimodal/") || !strings.Contains(key, "/control/") {
		t.Fatalf("first unit %q", key)
	}
	stopsPromptly(t, key, func(ctx context.Context) error { _, err := runner.RunKey(ctx, e, key); return err })
}
