package audit

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dprepro/dprepro/internal/stattest"
)

// binomPMF returns P(K = k) for K ~ Binomial(n, p).
func binomPMF(k, n int, p float64) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}

// TestClopperPearsonCoverage checks the one-sided bounds exactly (no
// sampling): for K ~ Binomial(n, p), P(LowerCP(K) > p) ≤ a and
// P(UpperCP(K) < p) ≤ a, and the closed forms at k = 0 and k = n.
func TestClopperPearsonCoverage(t *testing.T) {
	for _, a := range []float64{0.025, 1e-7} {
		checkCP(t, a)
	}
}

func checkCP(t *testing.T, a float64) {
	for _, n := range []int{1, 7, 50, 400, 20000} {
		for _, p := range []float64{0.001, 0.03, 0.2, 0.5, 0.77, 0.999} {
			if n > 400 {
				break // the exact sum over k is for the small n
			}
			var missLo, missHi float64
			for k := 0; k <= n; k++ {
				if LowerCP(k, n, a) > p {
					missLo += binomPMF(k, n, p)
				}
				if UpperCP(k, n, a) < p {
					missHi += binomPMF(k, n, p)
				}
			}
			if missLo > a+1e-12 || missHi > a+1e-12 {
				t.Errorf("n=%d p=%v: P(lower > p) = %v, P(upper < p) = %v, want <= %v", n, p, missLo, missHi, a)
			}
		}
		for _, k := range []int{0, 1, n / 3, n - 1} {
			// Round trip through the regularized incomplete beta function.
			if k > 0 {
				if y := mathext.RegIncBeta(float64(k), float64(n-k+1), LowerCP(k, n, a)); math.Abs(y-a) > 1e-6*a {
					t.Errorf("n=%d k=%d a=%v: I(LowerCP) = %v", n, k, a, y)
				}
			}
			if k < n {
				if y := mathext.RegIncBeta(float64(k+1), float64(n-k), UpperCP(k, n, a)); math.Abs(1-y-a) > 1e-6*a {
					t.Errorf("n=%d k=%d a=%v: 1 − I(UpperCP) = %v", n, k, a, 1-y)
				}
			}
		}
		if got, want := LowerCP(n, n, a), math.Pow(a, 1/float64(n)); math.Abs(got-want) > 1e-12 {
			t.Errorf("LowerCP(n, n) = %v, want a^(1/n) = %v", got, want)
		}
		if got, want := UpperCP(0, n, a), 1-math.Pow(a, 1/float64(n)); math.Abs(got-want) > 1e-12 {
			t.Errorf("UpperCP(0, n) = %v, want 1 − a^(1/n) = %v", got, want)
		}
	}
	if LowerCP(0, 10, 0.025) != 0 || UpperCP(10, 10, 0.025) != 1 {
		t.Error("LowerCP(0, n) must be 0 and UpperCP(n, n) must be 1")
	}
}

func TestEpsLower(t *testing.T) {
	cases := []struct{ p0, p1, delta, want float64 }{
		{0.2, 0.1, 0, math.Log(2)},
		{0.2, 0.1, 0.1, 0},
		{0.05, 0.1, 0, 0},
		{0.3, 0.1, 0.1, math.Log(2)},
		{0.3, 0, 0, math.Inf(1)},
	}
	for _, c := range cases {
		if got := EpsLower(c.p0, c.p1, c.delta); math.Abs(got-c.want) > 1e-12 && got != c.want {
			t.Errorf("EpsLower(%v, %v, %v) = %v, want %v", c.p0, c.p1, c.delta, got, c.want)
		}
	}
}

func TestCountEvents(t *testing.T) {
	xs := []float64{0, 1, 1, 2, 3}
	for _, c := range []struct {
		op   string
		t    float64
		want int
	}{{"<=", 1, 3}, {">", 1, 2}, {"==", 1, 2}, {"==", 1.5, 0}, {"<=", -1, 0}, {">", 3, 0}} {
		if got := count(xs, Event{Op: c.op, T: c.t}); got != c.want {
			t.Errorf("count(%s %v) = %d, want %d", c.op, c.t, got, c.want)
		}
	}
}

// laplace is an ε-DP Laplace mechanism on f(D) = 0, f(D′) = shift: the
// audit of a correct mechanism, and of broken ones (shift 2: sensitivity
// off by 2).
func laplace(eps, shift float64) Sampler {
	return func(dst []float64, rng *rand.Rand, side int) error {
		dst[0] = float64(side)*shift + distuv.Laplace{Scale: 1 / eps, Src: rng}.Rand()
		return nil
	}
}

// TestRunSoundAndPowerful audits the Laplace mechanism at ε = 1 over the
// test seeds with the confidence set so that the family of checks fails with
// probability ≤ stattest.FamilyAlpha: the correct mechanism's lower bound
// never exceeds ε (soundness), and the mechanism with half its noise or
// twice the sensitivity (true ε = 2) is caught (power: at n = 40,000 the
// best event's bound is near 2 − a few binomial standard errors).
func TestRunSoundAndPowerful(t *testing.T) {
	seeds := stattest.Seeds(7)
	conf := 1 - stattest.FamilyAlpha/float64(len(seeds))
	o := Options{Stats: 1, Select: 10000, Measure: 40000, Confidence: conf}
	for _, seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 8))
		r, err := Run(context.Background(), rng, laplace(1, 1), Claim{Epsilon: 1}, o)
		if err != nil {
			t.Fatal(err)
		}
		if r.Violated || r.EpsLower > 1 {
			t.Errorf("seed %d: correct Laplace: lower bound %v > ε = 1 (event %v, k0 %d, k1 %d)", seed, r.EpsLower, r.Event, r.K0, r.K1)
		}
		for name, s := range map[string]Sampler{"half noise": laplace(2, 1), "sensitivity x2": laplace(1, 2)} {
			r, err := Run(context.Background(), rng, s, Claim{Epsilon: 1}, o)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Violated {
				t.Errorf("seed %d: %s not caught: lower bound %v (event %v)", seed, name, r.EpsLower, r.Event)
			}
		}
	}
}

// TestRunNull checks that the event is chosen on draws independent of the
// measurement: on a null mechanism (both sides draw four i.i.d. N(0, 1)
// statistics) whose claim ε = 0 is true, a 95 % audit flags at most 5 % of
// seeds in expectation. Over 300 seeds the count of alarms is then
// stochastically below Binomial(300, 0.05), whose 1 − FamilyAlpha quantile
// is the limit. Choosing the event on the measurement draws themselves
// (the bug this guards against) flags about a third of the seeds.
func TestRunNull(t *testing.T) {
	null := func(dst []float64, rng *rand.Rand, _ int) error {
		for i := range dst {
			dst[i] = rng.NormFloat64()
		}
		return nil
	}
	const seeds = 300
	o := Options{Stats: 4, Select: 500, Measure: 2000, Confidence: 0.95}
	alarms := 0
	for s := range uint64(seeds) {
		r, err := Run(context.Background(), rand.New(rand.NewPCG(s, 99)), null, Claim{}, o)
		if err != nil {
			t.Fatal(err)
		}
		if r.Violated {
			alarms++
		}
	}
	// limit: the smallest q with P(Binomial(seeds, 0.05) ≤ q) ≥ 1 − FamilyAlpha.
	limit, cdf := 0, binomPMF(0, seeds, 0.05)
	for cdf < 1-stattest.FamilyAlpha {
		limit++
		cdf += binomPMF(limit, seeds, 0.05)
	}
	if alarms > limit {
		t.Errorf("null mechanism flagged at %d of %d seeds, above the Binomial(%d, 0.05) limit %d: the event is not chosen independently of the measurement", alarms, seeds, seeds, limit)
	}
	t.Logf("null mechanism: %d alarms in %d seeds (limit %d)", alarms, seeds, limit)
}

// TestRunDelta checks the δ term: a mechanism that outputs its input with
// probability δ₀ = 0.01 and otherwise nothing ("·"), is (0, δ₀)-DP and no
// better: the audit must not flag the claim (0, 0.01) and must flag (0, 0).
func TestRunDelta(t *testing.T) {
	leak := func(dst []float64, rng *rand.Rand, side int) error {
		dst[0] = -1
		if rng.Float64() < 0.01 {
			dst[0] = float64(side)
		}
		return nil
	}
	o := Options{Stats: 1, Select: 20000, Measure: 100000, Confidence: 1 - 1e-6}
	rng := rand.New(rand.NewPCG(1, 2))
	if r, _ := Run(context.Background(), rng, leak, Claim{Epsilon: 0, Delta: 0.01}, o); r.Violated {
		t.Errorf("(0, 0.01) flagged: %+v", r)
	}
	if r, _ := Run(context.Background(), rng, leak, Claim{Epsilon: 0, Delta: 0}, o); !r.Violated || r.K1 != 0 {
		t.Errorf("(0, 0) not flagged on a point event that D′ never hits: %+v", r)
	}
}

func TestRunErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ok := Options{Stats: 1, Select: 100, Measure: 100}
	for _, c := range []struct {
		o Options
		c Claim
	}{
		{Options{Stats: 0, Select: 100, Measure: 100}, Claim{Epsilon: 1}},
		{Options{Stats: 1, Select: 10, Measure: 100}, Claim{Epsilon: 1}},
		{Options{Stats: 1, Select: 100, Measure: 100, Confidence: 1}, Claim{Epsilon: 1}},
		{Options{Stats: 1, Select: 100, Measure: 100, Cuts: 1}, Claim{Epsilon: 1}},
		{ok, Claim{Epsilon: math.Inf(1)}},
		{ok, Claim{Epsilon: 1, Delta: 1}},
		{ok, Claim{Epsilon: math.NaN()}},
	} {
		if _, err := Run(context.Background(), rng, laplace(1, 1), c.c, c.o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v %+v: err %v, want ErrOptions", c.o, c.c, err)
		}
	}
	nan := func(dst []float64, _ *rand.Rand, _ int) error { dst[0] = math.NaN(); return nil }
	if _, err := Run(context.Background(), rng, nan, Claim{Epsilon: 1}, ok); err == nil {
		t.Error("a NaN statistic was accepted")
	}
}

// TestRun_Context checks that an audit stops promptly: at once with a done
// context (before the draws are allocated), and soon after a cancellation
// during the draws. Promptness is counted in draws made after the
// cancellation (the draws check ctx every 1024), not in wall-clock time,
// which a loaded machine stretches.
func TestRun_Context(t *testing.T) {
	t.Parallel()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	// 1e9 draws per side would need 20 GB.
	o := Options{Stats: 1, Select: 1e9, Measure: 1e9}
	if _, err := Run(done, rand.New(rand.NewPCG(1, 2)), laplace(1, 1), Claim{Epsilon: 1}, o); !errors.Is(err, context.Canceled) {
		t.Errorf("done context: %v", err)
	}
	ctx, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	// The sampler cancels the audit at its cancelAt-th draw and counts
	// the draws after it.
	const cancelAt, checkEvery = 5000, 1024
	draws := 0
	counting := func(dst []float64, rng *rand.Rand, side int) error {
		draws++
		if draws == cancelAt {
			cancel2()
		}
		dst[0] = rng.Float64()
		return nil
	}
	o = Options{Stats: 1, Select: 1e6, Measure: 1e6}
	if _, err := Run(ctx, rand.New(rand.NewPCG(1, 2)), counting, Claim{Epsilon: 1}, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled during the draws: %v", err)
	}
	if after := draws - cancelAt; after > checkEvery {
		t.Errorf("%d draws after the cancellation (at draw %d), want at most %d", after, cancelAt, checkEvery)
	}
}
