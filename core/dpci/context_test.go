package dpci

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/internal/stoptest"
)

// TestCI_Context checks that the Monte Carlo intervals stop promptly: a
// done context returns its error at once (before the m·d draws are
// allocated), a context cancelled during the draws within one of
// mcInterval's ctx checks, and a live context changes nothing. Promptness
// is measured in CPU time and in random numbers drawn after the
// cancellation, not in wall-clock time, which a loaded machine stretches.
func TestCI_Context(t *testing.T) {
	t.Parallel()
	const d = 2
	theta := []float64{0.1, -0.2}
	h := mat.NewSymDense(d, []float64{1, 0, 0, 1})
	sigma := mat.NewSymDense(d, []float64{0.5, 0, 0, 0.5})
	done, cancel := context.WithCancel(context.Background())
	cancel()
	// m = 1e9 would need 16 GB if the draws were allocated.
	spent := stoptest.CPU(func() {
		if _, err := ObjPertCI(done, randx.New(1, "ci"), theta, h, sigma, 100, 1, 0.05, 1e9); !errors.Is(err, context.Canceled) {
			t.Errorf("ObjPertCI with a done context: %v", err)
		}
		if _, err := OutPertCI(done, randx.New(1, "ci"), theta, h, sigma, 100, 0.01, 1, DP, 0.05, 1e9); !errors.Is(err, context.Canceled) {
			t.Errorf("OutPertCI with a done context: %v", err)
		}
	})
	if spent > stoptest.DoneLimit {
		t.Errorf("done context: returned after %v of CPU", spent)
	}

	// Cancelled during the draws: the context turns done at its cancelAt-th
	// Err call, and the draws stop there (no further check, so no further
	// stride of samples). The draws come from a Sim, not from the stream,
	// so promptness is counted in ctx checks: a live context is checked
	// before the draws and then every 2¹⁶/(d² + d) samples.
	stride := (1 << 16) / (d*d + d)
	const cancelAt = 3
	cc := &countingContext{Context: context.Background(), doneAt: cancelAt}
	if _, err := ObjPertCI(cc, randx.New(2, "ci"), theta, h, sigma, 100, 1, 0.05, 1e6); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled during the draws: %v", err)
	}
	if cc.n != cancelAt {
		t.Errorf("ctx checked %d times, want the draws to stop at the check that found it done (%d)", cc.n, cancelAt)
	}
	live := &countingContext{Context: context.Background()}
	if _, err := OutPertCI(live, randx.New(2, "ci"), theta, h, sigma, 100, 0.01, 1, DP, 0.05, 10*stride); err != nil {
		t.Fatal(err)
	}
	if want := 1 + 10; live.n < want {
		t.Errorf("%d samples checked ctx %d times, want at least %d (every %d samples)", 10*stride, live.n, want, stride)
	}

	// A live context gives the same interval as before it existed.
	a, err := ObjPertCI(context.Background(), randx.New(3, "ci"), theta, h, sigma, 100, 1, 0.05, 5000)
	if err != nil {
		t.Fatal(err)
	}
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	b, err := ObjPertCI(ctx3, randx.New(3, "ci"), theta, h, sigma, 100, 1, 0.05, 5000)
	if err != nil {
		t.Fatal(err)
	}
	for j := range theta {
		if math.Float64bits(a.Lo[j]) != math.Float64bits(b.Lo[j]) || math.Float64bits(a.Hi[j]) != math.Float64bits(b.Hi[j]) {
			t.Errorf("coordinate %d: [%v, %v] vs [%v, %v]", j, a.Lo[j], a.Hi[j], b.Lo[j], b.Hi[j])
		}
	}
}

// countingContext counts its Err calls and reports context.Canceled from
// the doneAt-th on (never, with doneAt 0).
type countingContext struct {
	context.Context
	n, doneAt int
}

func (c *countingContext) Err() error {
	c.n++
	if c.doneAt > 0 && c.n >= c.doneAt {
		return context.Canceled
	}
	return nil
}
