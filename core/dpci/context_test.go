package dpci

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/randx"
)

// TestCI_Context checks that the Monte Carlo intervals stop promptly: a
// done context returns its error at once (before the m·d draws are
// allocated), a context cancelled during the draws within well under a
// second, and a live context changes nothing.
func TestCI_Context(t *testing.T) {
	t.Parallel()
	const d = 2
	theta := []float64{0.1, -0.2}
	h := mat.NewSymDense(d, []float64{1, 0, 0, 1})
	sigma := mat.NewSymDense(d, []float64{0.5, 0, 0, 0.5})
	done, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	// m = 1e9 would need 16 GB if the draws were allocated.
	if _, err := ObjPertCI(done, randx.New(1, "ci"), theta, h, sigma, 100, 1, 0.05, 1e9); !errors.Is(err, context.Canceled) {
		t.Errorf("ObjPertCI with a done context: %v", err)
	}
	if _, err := OutPertCI(done, randx.New(1, "ci"), theta, h, sigma, 100, 0.01, 1, DP, 0.05, 1e9); !errors.Is(err, context.Canceled) {
		t.Errorf("OutPertCI with a done context: %v", err)
	}
	if el := time.Since(start); el > 100*time.Millisecond {
		t.Errorf("done context: returned after %v", el)
	}

	// Cancelled during the draws (1e6 draws with spherical Laplace noise
	// take about 0.3 s).
	ctx, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	var cancelled time.Time
	time.AfterFunc(5*time.Millisecond, func() { cancelled = time.Now(); cancel2() })
	_, err := ObjPertCI(ctx, randx.New(2, "ci"), theta, h, sigma, 100, 1, 0.05, 1e6)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled during the draws: %v", err)
		}
		if el := time.Since(cancelled); el > 200*time.Millisecond {
			t.Errorf("returned %v after the cancellation", el)
		}
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
