package dpci

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
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

	// Cancelled during the draws: the stream cancels the context at its
	// cancelAt-th number and counts those drawn after it. mcInterval
	// checks ctx every 2¹⁶/(d² + d) samples; a sample of ObjPertCI draws
	// d normals and a spherical Laplace vector (a gamma and d normals),
	// fewer than 32 numbers of the source for d = 2 (normals and gammas
	// by rejection take one or a few each; the stream is seeded, so the
	// count is the same on every run).
	ctx, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	const cancelAt = 100000
	stride := (1 << 16) / (d*d + d)
	src := &countingSource{src: rand.NewPCG(2, 3), cancelAt: cancelAt, cancel: cancel2}
	_, err := ObjPertCI(ctx, rand.New(src), theta, h, sigma, 100, 1, 0.05, 1e6)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled during the draws: %v", err)
	}
	if after, limit := src.n-cancelAt, 32*stride; after > limit {
		t.Errorf("%d random numbers drawn after the cancellation (at the %d-th), want at most %d (%d samples)", after, cancelAt, limit, stride)
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

// countingSource is a rand.Source that counts the numbers drawn and calls
// cancel at the cancelAt-th.
type countingSource struct {
	src      rand.Source
	n        int
	cancelAt int
	cancel   func()
}

func (c *countingSource) Uint64() uint64 {
	c.n++
	if c.n == c.cancelAt {
		c.cancel()
	}
	return c.src.Uint64()
}
