package expost

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/randx"
)

// fixed is a hypothesis with a known excess risk and configurable bounds.
type fixed struct {
	e      float64
	lo, hi float64
	calls  *int // counts exact evaluations
}

func (f fixed) Bounds() (float64, float64) { return f.lo, f.hi }
func (f fixed) Excess() (float64, error) {
	if f.calls != nil {
		*f.calls++
	}
	return f.e, nil
}
func (f fixed) Theta() ([]float64, error) { return []float64{f.e}, nil }

// seq is a Sequence over fixed hypotheses.
type seq struct {
	hs  []Hypothesis
	eps []float64
	t   int
}

func (s *seq) Next() (Hypothesis, bool, error) {
	if s.t >= len(s.hs) {
		return nil, false, nil
	}
	s.t++
	return s.hs[s.t-1], true, nil
}
func (s *seq) Guarantee() privacy.Guarantee { return privacy.EpsDP(s.eps[s.t-1], "test sequence") }
func (s *seq) Len() int                     { return len(s.hs) }

func exactOnly(e float64) fixed { return fixed{e: e, lo: math.Inf(-1), hi: math.Inf(1)} }

// TestCalibrationConstants checks the two calibrations against the numbers
// worked out by hand for the paper's ridge setting (n = 100,000, λ = 0.005,
// T = 1000, γ = 0.1; Ligett et al. 2017, Appendix B.1). Paper: Algorithm 3
// (CovNR) sets ε₀ = 16Δ·log(2T/γ)/α and W = −α/2 with Δ = (√(1/λ) + 1)²/n,
// so ε₀ = 16·(15.142²/10⁵)·ln(20,000)/0.05 ≈ 7.27 at α = 0.05. Authors'
// code: Δ = (√(1/λ) + 1)²/(2n) and the threshold of code/sparsevec.py
// (compute_epsilon), doubled in the plots (docs/original-code.md, AF-1).
func TestCalibrationConstants(t *testing.T) {
	n, lambda := 1e5, 0.005
	m := 1/math.Sqrt(lambda) + 1
	deltaPaper := m * m / n      // Claim A.5
	deltaCode := m * m / (2 * n) // the authors' code
	eps, w, err := Paper.NRTest(0.05, 0.1, 1000, deltaPaper)
	if err != nil {
		t.Fatal(err)
	}
	if want := 16 * deltaPaper * math.Log(2000/0.1) / 0.05; math.Abs(eps-want) > 1e-12 || w != -0.025 {
		t.Errorf("paper: ε₀ = %v, W = %v; want %v, −0.025", eps, w, want)
	}
	if eps < 7 || eps > 7.5 {
		t.Errorf("paper ridge ε₀ at α = 0.05 = %v, Algorithm 3 gives 16·Δ·ln(2T/γ)/α ≈ 7.27", eps)
	}
	// Authors' code: the paper's e^ε ≈ 10.0 at α = 0.05 and 4.65 at 0.075
	// come from 2ε_A plus a small hypothesis ε.
	for _, c := range []struct{ alpha, lo, hi float64 }{{0.05, 9.0, 10.0}, {0.075, 4.3, 4.65}} {
		eps, w, err := AuthorsCode.NRTest(c.alpha, 0.1, 1000, deltaCode)
		if err != nil {
			t.Fatal(err)
		}
		b := c.alpha / (4 * math.Log(math.Pow(1.5, 0.75)*math.Sqrt(1000)/0.1))
		if math.Abs(eps-2*deltaCode/b) > 1e-12 {
			t.Errorf("authors-code ε_A = %v, want 2Δ/b = %v", eps, 2*deltaCode/b)
		}
		if s := c.alpha/4 + 0.75*b*math.Log(1.5) - 0.5*b*math.Log(1000); math.Abs(w+s) > 1e-15 {
			t.Errorf("authors-code W = %v, want −s = %v", w, -s)
		}
		if f := math.Exp(AuthorsCode.ReportedTestEps(eps)); f < c.lo || f > c.hi {
			t.Errorf("α = %v: e^(2ε_A) = %v, want in [%v, %v] (below the paper's figure, which adds ε_t)", c.alpha, f, c.lo, c.hi)
		}
	}
	if Paper.ReportedTestEps(1.5) != 1.5 || AuthorsCode.ReportedTestEps(1.5) != 3 {
		t.Error("ReportedTestEps")
	}
	g := privacy.EpsDP(1.5, "test")
	if r := AuthorsCode.ReportedTest(g); r.Epsilon != 3 || r.Notion != privacy.Pure {
		t.Errorf("authors-code ReportedTest %v", r)
	}
	if r := Paper.ReportedTest(g); r != g {
		t.Errorf("paper ReportedTest %v, want %v", r, g)
	}
	if r := AuthorsCode.ReportedTest(privacy.NonPrivate("⊥")); r.Private() || !math.IsInf(r.Epsilon, 1) {
		t.Errorf("authors-code ReportedTest of a failure %v", r)
	}
	for _, bad := range []struct {
		a, g, d float64
		T       int
	}{{0, 0.1, 1, 10}, {0.1, 0, 1, 10}, {0.1, 1, 1, 10}, {0.1, 0.1, 0, 10}, {0.1, 0.1, 1, 0}, {math.NaN(), 0.1, 1, 10}} {
		if _, _, err := Paper.NRTest(bad.a, bad.g, bad.T, bad.d); err == nil {
			t.Errorf("NRTest(%v) accepted", bad)
		}
	}
	if _, _, err := Calibration("nope").NRTest(0.1, 0.1, 10, 1); err == nil {
		t.Error("unknown calibration accepted")
	}
}

func TestDoublingLevelsAndTests(t *testing.T) {
	lv, err := DoublingLevels(1e-5, 70)
	if err != nil {
		t.Fatal(err)
	}
	K := int(math.Ceil(math.Log2(70 / 1e-5)))
	if len(lv) != K+1 || lv[0] != 1e-5 || lv[K] < 70 || lv[K-1] >= 70 {
		t.Errorf("levels: %d, first %v, last two %v %v", len(lv), lv[0], lv[K-1], lv[K])
	}
	for k := 1; k < len(lv); k++ {
		if lv[k] != 2*lv[k-1] {
			t.Fatalf("level %d = %v not twice %v", k, lv[k], lv[k-1])
		}
	}
	alpha, gamma, delta := 0.05, 0.1, 1e-3
	T := float64(len(lv))
	p, err := Paper.Doubling(alpha, gamma, delta, lv)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * delta * math.Log(T/gamma) / alpha; math.Abs(p.EpsilonTest()-want) > 1e-15 || p.Cut != alpha/2 {
		t.Errorf("paper doubling ε_test = %v, want %v (Theorem A.2)", p.EpsilonTest(), want)
	}
	a, err := AuthorsCode.Doubling(alpha, gamma, delta, lv)
	if err != nil {
		t.Fatal(err)
	}
	if want := delta * math.Log(T/(2*gamma)) / (alpha / 2); math.Abs(a.EpsilonTest()-want) > 1e-15 {
		t.Errorf("authors-code doubling ε_test = %v, want %v", a.EpsilonTest(), want)
	}
	if _, err := DoublingLevels(1, 1); err == nil {
		t.Error("ε_min = ε_max accepted")
	}
}

// lapDiffSurvival returns P(A − B ≥ c) for independent A ~ Lap(a),
// B ~ Lap(b), by numerical integration over B (Simpson, fine grid).
func lapDiffSurvival(c, a, b float64) float64 {
	surv := func(x float64) float64 { // P(A ≥ x)
		if x >= 0 {
			return 0.5 * math.Exp(-x/a)
		}
		return 1 - 0.5*math.Exp(x/a)
	}
	lo, hi := -60*b, 60*b
	const m = 200000
	h := (hi - lo) / m
	s := 0.0
	for i := 0; i <= m; i++ {
		x := lo + float64(i)*h
		f := math.Exp(-math.Abs(x)/b) / (2 * b) * surv(c+x)
		switch {
		case i == 0 || i == m:
			s += f
		case i%2 == 1:
			s += 4 * f
		default:
			s += 2 * f
		}
	}
	return s * h / 3
}

// TestAboveThresholdAcceptanceProbability checks Algorithm 2's first
// answer against its exact probability P(−e + Lap(4Δ/ε) ≥ W + Lap(2Δ/ε)),
// within 4 binomial standard errors.
func TestAboveThresholdAcceptanceProbability(t *testing.T) {
	eps, delta, W := 0.8, 0.01, -0.02
	for _, e := range []float64{0, 0.01, 0.02, 0.05, 0.1} {
		p := lapDiffSurvival(W+e, 4*delta/eps, 2*delta/eps)
		const N = 40000
		hits := 0
		for i := 0; i < N; i++ {
			rng := randx.New(7, "at", "accept", strconv.FormatFloat(e, 'g', -1, 64), itoa(i))
			at, err := NewAboveThreshold(rng, eps, W, delta)
			if err != nil {
				t.Fatal(err)
			}
			ok, err := at.Test(exactOnly(e))
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				hits++
			}
		}
		got := float64(hits) / N
		se := math.Sqrt(p * (1 - p) / N)
		if math.Abs(got-p) > 4*se+1e-9 {
			t.Errorf("e = %v: acceptance %v, want %v ± %v (4 SE)", e, got, p, 4*se)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestBoundsDoNotChangeDecisions runs the same searches twice with the same
// seeds, once with exact-only hypotheses and once with valid bounds, and
// requires identical outcomes — and fewer exact evaluations.
func TestBoundsDoNotChangeDecisions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	exactCalls := 0
	for trial := 0; trial < 300; trial++ {
		T := 50
		var plain, bounded []Hypothesis
		eps := make([]float64, T)
		for i := 0; i < T; i++ {
			e := 0.2 * math.Exp(-float64(i)/8) * (0.5 + rng.Float64())
			w := e * 0.3 * rng.Float64()
			plain = append(plain, exactOnly(e))
			bounded = append(bounded, fixed{e: e, lo: e - w, hi: e + w*rng.Float64(), calls: &exactCalls})
			eps[i] = float64(i + 1)
		}
		run := func(hs []Hypothesis) Outcome {
			at, err := NewAboveThreshold(randx.New(3, "bounds", itoa(trial)), 0.5, -0.025, 0.002)
			if err != nil {
				t.Fatal(err)
			}
			o, err := NoiseReduction(context.Background(), at, &seq{hs: hs, eps: eps})
			if err != nil {
				t.Fatal(err)
			}
			return o
		}
		a, b := run(plain), run(bounded)
		if a.Success != b.Success || a.Stop != b.Stop || a.Tested != b.Tested || expostEps(t, a) != expostEps(t, b) {
			t.Fatalf("trial %d: exact %+v vs bounded %+v", trial, a, b)
		}
		if a.Exact != a.Tested {
			t.Fatalf("exact-only hypotheses: %d exact of %d", a.Exact, a.Tested)
		}
		da, err := Doubling(context.Background(), randx.New(4, itoa(trial)), randx.New(5, itoa(trial)), indep(plain), DoublingTest{Levels: eps, Scale: 0.01, Cut: 0.025, Delta: 0.001})
		if err != nil {
			t.Fatal(err)
		}
		db, err := Doubling(context.Background(), randx.New(4, itoa(trial)), randx.New(5, itoa(trial)), indep(bounded), DoublingTest{Levels: eps, Scale: 0.01, Cut: 0.025, Delta: 0.001})
		if err != nil {
			t.Fatal(err)
		}
		if da.Stop != db.Stop || da.Success != db.Success {
			t.Fatalf("doubling trial %d: %+v vs %+v", trial, da, db)
		}
	}
	if exactCalls == 0 {
		t.Error("bounds never used the exact value; the test does not exercise the fallback")
	}
}

// indep serves the k-th hypothesis of hs at the k-th call.
func indep(hs []Hypothesis) Independent {
	k := 0
	return func(_ *rand.Rand, eps float64) (Hypothesis, privacy.Guarantee, error) {
		k++
		return hs[k-1], privacy.EpsDP(eps, "test release"), nil
	}
}

// TestNoiseReductionAccounting checks Lemma 2.8's ex-post loss ε_A + εₜ and
// the failure outcome (⊥, ∞).
func TestNoiseReductionAccounting(t *testing.T) {
	eps := []float64{0.1, 0.2, 0.4, 0.8}
	hs := []Hypothesis{exactOnly(10), exactOnly(10), exactOnly(0), exactOnly(0)}
	at, err := NewAboveThreshold(randx.New(1, "acct"), 1, -0.5, 1e-4) // tiny noise
	if err != nil {
		t.Fatal(err)
	}
	o, err := NoiseReduction(context.Background(), at, &seq{hs: hs, eps: eps})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Success || o.Stop != 3 || o.Generation.Epsilon != 0.4 || o.Test.Epsilon != 1 || expostEps(t, o) != 1.4 {
		t.Errorf("outcome %+v", o)
	}
	if g, _ := o.Guarantee(); g.Notion != privacy.ExPost || o.Generation.Notion != privacy.ExPost || o.Test.Notion != privacy.Pure {
		t.Errorf("notions: outcome %s, generation %s, test %s; want ex-post, ex-post, pure", g.Notion, o.Generation.Notion, o.Test.Notion)
	}
	at, _ = NewAboveThreshold(randx.New(1, "acct2"), 1, -0.5, 1e-4)
	o, err = NoiseReduction(context.Background(), at, &seq{hs: hs[:2], eps: eps[:2]})
	if err != nil {
		t.Fatal(err)
	}
	if o.Success || !math.IsInf(expostEps(t, o), 1) || o.Hypothesis != nil || o.Tested != 2 || o.Generation.Private() || o.Test.Private() {
		t.Errorf("failure outcome %+v", o)
	}
	// Doubling: accept at the third level: 3 tests + ε₁ + ε₂ + ε₃.
	d := DoublingTest{Levels: eps, Scale: 1e-6, Cut: 0.5, Delta: 1e-3}
	o, err = Doubling(context.Background(), randx.New(1, "g"), randx.New(1, "t"), indep(hs), d)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Success || o.Stop != 3 || math.Abs(o.Generation.Epsilon-0.7) > 1e-15 || o.Test.Epsilon != 3*d.EpsilonTest() {
		t.Errorf("doubling outcome %+v", o)
	}
	if g, _ := o.Guarantee(); g.Notion != privacy.ExPost || g.Epsilon != o.Generation.Epsilon+o.Test.Epsilon {
		t.Errorf("doubling guarantee %v", g)
	}
}

// expostEps returns the ε of o's composed guarantee.
func expostEps(t *testing.T, o Outcome) float64 {
	t.Helper()
	g, err := o.Guarantee()
	if err != nil {
		t.Fatal(err)
	}
	return g.Epsilon
}

// approxSeq is a sequence whose prefixes claim (ε, δ)-DP.
type approxSeq struct{ seq }

func (s *approxSeq) Guarantee() privacy.Guarantee {
	return privacy.EpsDeltaDP(s.eps[s.t-1], 1e-6, "approximate")
}

// TestSearches_RefuseApproxGuarantees: Lemma 2.8 and Theorem A.2 are
// stated for pure ε-DP generators (Remark 2.9), so an (ε, δ) guarantee
// from the generator is an error, not a silently added ε.
func TestSearches_RefuseApproxGuarantees(t *testing.T) {
	hs := []Hypothesis{exactOnly(0)}
	at, err := NewAboveThreshold(randx.New(1, "approx"), 1, -0.5, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NoiseReduction(context.Background(), at, &approxSeq{seq{hs: hs, eps: []float64{1}}}); err == nil || !strings.Contains(err.Error(), "pure") {
		t.Errorf("noise reduction with an (ε, δ) sequence: %v", err)
	}
	gen := func(_ *rand.Rand, eps float64) (Hypothesis, privacy.Guarantee, error) {
		return hs[0], privacy.EpsDeltaDP(eps, 1e-6, "approximate"), nil
	}
	d := DoublingTest{Levels: []float64{1}, Scale: 1e-6, Cut: 0.5, Delta: 1e-3}
	if _, err := Doubling(context.Background(), randx.New(1, "g"), randx.New(1, "t"), gen, d); err == nil || !strings.Contains(err.Error(), "pure") {
		t.Errorf("doubling with an (ε, δ) release: %v", err)
	}
}

// TestAccuracyGuarantee checks the 1 − γ accuracy of the noise-reduction
// test (Theorems 3.2/3.4 via Theorem A.1) for both calibrations: with
// T − 1 hypotheses whose excess is α (bad) followed by a perfect one, the
// search must release a bad one in at most a fraction γ of runs (plus 4
// binomial standard errors).
func TestAccuracyGuarantee(t *testing.T) {
	const T, runs = 200, 1500
	alpha, gamma, delta := 0.05, 0.1, 2e-4
	for _, c := range Calibrations {
		epsA, w, err := c.NRTest(alpha, gamma, T, delta)
		if err != nil {
			t.Fatal(err)
		}
		hs := make([]Hypothesis, T)
		eps := make([]float64, T)
		for i := range hs {
			hs[i] = exactOnly(alpha * 1.0000001)
			eps[i] = float64(i + 1)
		}
		hs[T-1] = exactOnly(0)
		bad := 0
		for r := 0; r < runs; r++ {
			at, err := NewAboveThreshold(randx.New(11, string(c), itoa(r)), epsA, w, delta)
			if err != nil {
				t.Fatal(err)
			}
			o, err := NoiseReduction(context.Background(), at, &seq{hs: hs, eps: eps})
			if err != nil {
				t.Fatal(err)
			}
			if o.Success && o.Stop < T {
				bad++
			}
		}
		rate := float64(bad) / runs
		if lim := gamma + 4*math.Sqrt(gamma*(1-gamma)/runs); rate > lim {
			t.Errorf("%s: inaccurate release rate %v > γ = %v (+4 SE = %v)", c, rate, gamma, lim)
		}
		t.Logf("%s: inaccurate release rate %v (γ = %v)", c, rate, gamma)
	}
}

// endless is a sequence of hypotheses that are never accepted and never
// run out (T = ∞), each costing a little work like a real level. With
// cancel set it calls it when it builds level cancelAt, so that a test can
// count the levels built after a cancellation.
type endless struct {
	t        int
	cancelAt int
	cancel   func()
}

func (s *endless) Next() (Hypothesis, bool, error) {
	s.t++
	if s.cancel != nil && s.t == s.cancelAt {
		s.cancel()
	}
	x := 0.0
	for i := range 1000 {
		x += math.Sqrt(float64(i + s.t))
	}
	return fixed{e: 1e9 + x, lo: 1e9, hi: 1e9 + x}, true, nil
}
func (s *endless) Guarantee() privacy.Guarantee { return privacy.EpsDP(float64(s.t), "endless") }
func (s *endless) Len() int                     { return math.MaxInt }

// TestSearches_Context checks that both searches stop promptly: at once
// with a done context, and within a few levels when it is cancelled
// during an endless noise-reduction walk. Promptness is counted in levels
// built after the cancellation (NoiseReduction checks ctx every 16
// levels), not in wall-clock time, which a loaded machine stretches.
func TestSearches_Context(t *testing.T) {
	t.Parallel()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	at, err := NewAboveThreshold(randx.New(1, "ctx"), 0.5, -0.025, 0.002)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NoiseReduction(done, at, &endless{}); !errors.Is(err, context.Canceled) {
		t.Errorf("NoiseReduction with a done context: %v", err)
	}
	d := DoublingTest{Levels: []float64{1, 2, 4}, Scale: 0.01, Cut: 0.025, Delta: 0.001}
	if _, err := Doubling(done, randx.New(1, "g"), randx.New(1, "t"), indep([]Hypothesis{exactOnly(1), exactOnly(1), exactOnly(1)}), d); !errors.Is(err, context.Canceled) {
		t.Errorf("Doubling with a done context: %v", err)
	}

	ctx, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	const cancelAt, checkEvery = 1000, 16
	s := &endless{cancelAt: cancelAt, cancel: cancel2}
	if _, err := NoiseReduction(ctx, at, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled walk: %v", err)
	}
	if after := s.t - cancelAt; after > checkEvery {
		t.Errorf("the walk built %d levels after the cancellation (at level %d), want at most %d", after, cancelAt, checkEvery)
	}
}
