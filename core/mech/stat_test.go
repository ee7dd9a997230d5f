package mech

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/dprepro/dprepro/internal/stattest"
)

// Randomized tests in this package follow internal/stattest: a fixed seed,
// tolerances from theory at family-wise level stattest.FamilyAlpha, and the
// -stat.seeds audit flag.
var (
	zCrit           = stattest.ZCrit
	testSeeds       = stattest.Seeds
	checkWithin     = stattest.CheckWithin
	checkProportion = stattest.CheckProportion
)

const familyAlpha = stattest.FamilyAlpha

// newRNG returns a PCG generator for seed; every test draws from its own.
func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0xda3e39cb94b95bdb))
}

// checkRel reports an error when got differs from want by more than rel
// relative to |want|.
func checkRel(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if !(math.Abs(got-want) <= rel*math.Abs(want)) {
		t.Errorf("%s = %.17g, want %.17g (relative tolerance %g)", what, got, want, rel)
	}
}

// mustPanic fails the test unless f panics.
func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: did not panic", what)
		}
	}()
	f()
}

// scriptSource is a rand.Source returning vals in turn, then repeating the
// last one, for tests that need exact control of the uniform draws.
type scriptSource struct {
	vals []uint64
	i    int
}

func (s *scriptSource) Uint64() uint64 {
	v := s.vals[min(s.i, len(s.vals)-1)]
	s.i++
	return v
}

// randFrom wraps a scripted source in a *rand.Rand.
func randFrom(src rand.Source) *rand.Rand { return rand.New(src) }

// formatFloat formats v for test names and messages.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
