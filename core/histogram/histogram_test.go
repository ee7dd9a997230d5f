package histogram

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dprepro/dprepro/core/tune"
	"github.com/dprepro/dprepro/internal/stattest"
)

var _ tune.Procedure[Estimate] = (*Procedure)(nil)

func TestCounts(t *testing.T) {
	c, err := Counts([]float64{0, 0.2499, 0.25, 0.5, 0.99, 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{2, 1, 1, 2}; !slices.Equal(c, want) {
		t.Errorf("counts %v, want %v (bins [0, .25), [.25, .5), [.5, .75), [.75, 1])", c, want)
	}
	for _, x := range []float64{-0.1, 1.1, math.NaN()} {
		if _, err := Counts([]float64{0.5, x}, 4); !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "x[1]") {
			t.Errorf("x = %v: err = %v, want ErrOutOfRange naming x[1]", x, err)
		}
	}
	if _, err := Counts(nil, 0); err == nil {
		t.Error("0 bins: no error")
	}
}

// TestNoisyCounts_Law checks Algorithm 5's noise: on counts far from 0 (no
// clamping) ñᵢ − nᵢ is Laplace with scale 2/α, by a DKW-bounded KS
// statistic over 20,000 draws, for two α; and clamping at 0.
func TestNoisyCounts_Law(t *testing.T) {
	for _, seed := range stattest.Seeds(41) {
		rng := rand.New(rand.NewPCG(seed, 42))
		for _, alpha := range []float64{0.5, 4} {
			const draws = 20000
			d := make([]float64, 0, draws)
			for len(d) < draws {
				noisy, err := NoisyCounts(rng, []int{1000, 5000}, alpha)
				if err != nil {
					t.Fatal(err)
				}
				d = append(d, noisy[0]-1000, noisy[1]-5000)
			}
			slices.Sort(d)
			lap := distuv.Laplace{Mu: 0, Scale: 2 / alpha} // lint:nosrc (CDF only)
			var ks float64
			for i, v := range d {
				f := lap.CDF(v)
				ks = math.Max(ks, math.Max(math.Abs(f-float64(i)/draws), math.Abs(f-float64(i+1)/draws)))
			}
			// The two coordinates of a draw are independent; DKW holds for
			// the pooled sample of i.i.d. values.
			if c := stattest.DKWCrit(draws, 2); ks > c {
				t.Errorf("seed %d, alpha %v: KS %.4f > %.4f against Laplace(2/alpha)", seed, alpha, ks, c)
			}
		}
		noisy, err := NoisyCounts(rng, make([]int, 200), 1)
		if err != nil {
			t.Fatal(err)
		}
		zeros := 0
		for _, v := range noisy {
			if v < 0 {
				t.Fatalf("negative noisy count %v", v)
			}
			if v == 0 {
				zeros++
			}
		}
		// P(R < 0) = 1/2 for a zero count: 200 bins, ZCrit SE.
		stattest.CheckProportion(t, "clamped fraction of zero counts", zeros, 200, 0.5, stattest.ZCrit(2))
	}
	for _, bad := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := NoisyCounts(rand.New(rand.NewPCG(1, 1)), []int{1}, bad); err == nil {
			t.Errorf("alpha %v: no error", bad)
		}
	}
	if _, err := NoisyCounts(rand.New(rand.NewPCG(1, 1)), []int{1, -1}, 1); err == nil {
		t.Error("negative count: no error")
	}
}

func TestNormalize(t *testing.T) {
	e := Normalize([]float64{1, 3, 0, 4})
	if want := []float64{0.5, 1.5, 0, 2}; !slices.Equal(e.Dens, want) {
		t.Errorf("density %v, want %v", e.Dens, want)
	}
	if got := e.L2Squared(); math.Abs(got-(0.25+2.25+4)/4) > 1e-15 {
		t.Errorf("∫f̂² = %v", got)
	}
	if u := Normalize([]float64{0, 0, 0}); !slices.Equal(u.Dens, []float64{1, 1, 1}) {
		t.Errorf("all clamped: %v, want uniform", u.Dens)
	}
	if e.At(-0.1) != 0 || e.At(1) != 2 || e.At(0.3) != 1.5 {
		t.Errorf("At: %v %v %v", e.At(-0.1), e.At(1), e.At(0.3))
	}
}

// mixtures are the named Densities and one with singular ends.
var mixtures = func() map[string]BetaMixture {
	m := map[string]BetaMixture{"near-edges": {W: []float64{0.5, 0.5}, A: []float64{0.8, 6}, B: []float64{3, 0.9}}}
	for k, v := range Densities {
		m[k] = v
	}
	return m
}()

// TestBetaMixture_Exact checks ∫ f², the CDF and ISE against adaptive
// numerical integration of the density.
func TestBetaMixture_Exact(t *testing.T) {
	for name, m := range mixtures {
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		sq := func(x float64) float64 {
			if !(x > 0 && x < 1) {
				return 0 // an end point rounded onto a singularity: measure zero
			}
			v := m.PDF(x)
			return v * v
		}
		if got, want := integrate(sq, 0, 0.5)+integrate(sq, 0.5, 1), m.L2Squared(); math.Abs(got-want) > 1e-6*want {
			t.Errorf("%s: ∫f² = %.10g, numerically %.10g", name, got, want)
		}
		if got, want := m.CDF(0.37), integrate(m.PDF, 0, 0.37); math.Abs(got-want) > 1e-8 {
			t.Errorf("%s: F(0.37) = %v, numerically %v", name, got, want)
		}
		e := Normalize([]float64{3, 1, 0, 2, 5, 1, 1, 2})
		diff := func(x float64) float64 { v := e.At(x) - m.PDF(x); return v * v }
		var want float64
		for i := 0; i < 8; i++ { // piecewise, so the integrand is smooth on each piece
			want += integrate(diff, float64(i)/8, float64(i+1)/8)
		}
		if got := ISE(e, m); math.Abs(got-want) > 1e-6*(1+want) {
			t.Errorf("%s: ISE = %.10g, numerically %.10g", name, got, want)
		}
	}
	for _, bad := range []BetaMixture{{}, {W: []float64{0.5}, A: []float64{2}, B: []float64{2}}, {W: []float64{1}, A: []float64{0.4}, B: []float64{2}}} {
		if bad.Validate() == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// integrate is a 200-point Legendre quadrature over [a, b] on 64
// subintervals. An end at 0 or 1, where a Beta density with a shape below 1
// has an integrable singularity, is smoothed by the substitution
// x = a + (b−a)·u⁴ (or its mirror), which removes it.
func integrate(f func(float64) float64, a, b float64) float64 {
	g := f
	switch {
	case a == 0:
		top := b
		g = func(u float64) float64 { return f(top*u*u*u*u) * 4 * top * u * u * u }
		a, b = 0, 1
	case b == 1:
		w := 1 - a
		g = func(u float64) float64 { return f(1-w*u*u*u*u) * 4 * w * u * u * u }
		a, b = 0, 1
	}
	const parts = 64
	var s float64
	for i := 0; i < parts; i++ {
		lo := a + (b-a)*float64(i)/parts
		hi := a + (b-a)*float64(i+1)/parts
		s += quad.Fixed(g, lo, hi, 200, nil, 0)
	}
	return s
}

// TestBetaMixture_Rand checks the sampler against the CDF (DKW).
func TestBetaMixture_Rand(t *testing.T) {
	for _, seed := range stattest.Seeds(43) {
		rng := rand.New(rand.NewPCG(seed, 44))
		for name, m := range mixtures {
			const n = 20000
			x := make([]float64, n)
			for i := range x {
				x[i] = m.Rand(rng)
			}
			slices.Sort(x)
			var ks float64
			for i, v := range x {
				f := m.CDF(v)
				ks = math.Max(ks, math.Max(math.Abs(f-float64(i)/n), math.Abs(f-float64(i+1)/n)))
			}
			if c := stattest.DKWCrit(n, len(mixtures)); ks > c {
				t.Errorf("seed %d, %s: KS %.4f > %.4f", seed, name, ks, c)
			}
		}
	}
}

// TestScore_EstimatesISE checks Eq. 6: E[q(f̂, V)] = ∫f² − ISE(f̂) for V
// drawn from f, within ZCrit standard errors of the mean of f̂(z).
func TestScore_EstimatesISE(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	m := mixtures["bimodal"]
	e := Normalize([]float64{1, 4, 6, 3, 1, 2, 5, 8, 6, 2})
	const n = 50000
	v := make([]float64, n)
	var s, ss float64
	for i := range v {
		v[i] = m.Rand(rng)
		f := e.At(v[i])
		s += f
		ss += f * f
	}
	sd := math.Sqrt(ss/n - (s/n)*(s/n))
	stattest.CheckWithin(t, "q(f̂, V)", Score(e, v), m.L2Squared()-ISE(e, m), stattest.ZCrit(1)*2*sd/math.Sqrt(n))
	if !math.IsNaN(Score(e, nil)) {
		t.Error("empty V: want NaN")
	}
}

func TestStabilityConstants(t *testing.T) {
	// k = 7 widths 1/4…1/256, δ = 0.01, α = 1: MinN = 1 + 2 ln(2800)·16.
	need := MinN(1.0/256, 7, 1, 0.01)
	if want := 1 + 2*math.Log(2800)*16; math.Abs(need-want) > 1e-9 {
		t.Errorf("MinN = %v, want %v", need, want)
	}
	b1, b2, err := StabilityConstants(1.0/256, 7, 10000, 1, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	nu := 2 * math.Log(2800) * 16 / 10000
	if math.Abs(b1-6*256/(1-nu)) > 1e-9 || b2 != 512 {
		t.Errorf("β₁, β₂ = %v, %v; want %v, 512", b1, b2, 6*256/(1-nu))
	}
	_, _, err = StabilityConstants(1.0/256, 7, int(need)-1, 1, 0.01)
	if err == nil || !strings.Contains(err.Error(), "Theorem 6 needs n >=") {
		t.Errorf("n below the requirement: err = %v", err)
	}
	for _, c := range []struct {
		hmin, alpha, delta float64
		k                  int
	}{{0, 1, 0.01, 7}, {1.5, 1, 0.01, 7}, {0.25, 0, 0.01, 7}, {0.25, 1, 1, 7}, {0.25, 1, 0.01, 0}} {
		if _, _, err := StabilityConstants(c.hmin, c.k, 1e6, c.alpha, c.delta); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestStability_Empirical checks the constants of Theorem 6 against the
// definition they certify (Chaudhuri & Vinterbo, Definition 2): for T, T′
// differing in one point and the same noise R, |q(F(T, R), V) −
// q(F(T′, R), V)| ≤ β₁/n except with probability δ/k; and for V, V′
// differing in one point, |q(f̂, V) − q(f̂, V′)| ≤ β₂/m always. The
// training bound is loose: on this data the largest observed change is
// about 0.5 % of β₁/n, so the test guards against constants off by orders
// of magnitude (e.g. 6·h_min for 6/h_min), not against small slack.
func TestStability_Empirical(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	m := mixtures["beta(2,5)"]
	bins := []int{4, 16, 64}
	const n, mv, alpha, delta = 5000, 2000, 1.0, 0.01
	b1, b2, err := StabilityConstants(1.0/64, len(bins), n, alpha, delta)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = m.Rand(rng)
	}
	v := make([]float64, mv)
	for i := range v {
		v[i] = m.Rand(rng)
	}
	const trials = 2000
	exceed := 0
	for trial := 0; trial < trials; trial++ {
		xp := slices.Clone(x)
		xp[rng.IntN(n)] = rng.Float64() // T′: one point moved anywhere
		k := bins[trial%len(bins)]
		seed := rng.Uint64()
		c, _ := Counts(x, k)
		cp, _ := Counts(xp, k)
		e, _ := Private(rand.New(rand.NewPCG(seed, 0)), c, alpha)
		ep, _ := Private(rand.New(rand.NewPCG(seed, 0)), cp, alpha)
		if math.Abs(Score(e, v)-Score(ep, v)) > b1/n {
			exceed++
		}
		vp := slices.Clone(v)
		vp[rng.IntN(mv)] = rng.Float64()
		if d := math.Abs(Score(e, v) - Score(e, vp)); d > b2/mv*(1+1e-12) {
			t.Fatalf("validation change %v > β₂/m = %v", d, b2/mv)
		}
	}
	// Allowed: δ/k of the trials, plus ZCrit binomial standard errors.
	p := delta / float64(len(bins))
	if lim := float64(trials)*p + stattest.ZCrit(1)*math.Sqrt(float64(trials)*p*(1-p)); float64(exceed) > lim {
		t.Errorf("%d of %d training changes exceed β₁/n = %v (allowed %.1f)", exceed, trials, b1/n, lim)
	}
}

// TestProcedure checks the tune.Procedure: parts of T, the sensitivity-1
// Errors, input checks, and that Stability with a large budget picks the
// bin width Control picks.
func TestProcedure(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	m := mixtures["bimodal"]
	draw := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = m.Rand(rng)
		}
		return s
	}
	tr, va := draw(20000), draw(5000)
	bins := []int{4, 8, 16, 32, 64, 128, 256}
	p, err := NewProcedure(tr, va, bins)
	if err != nil {
		t.Fatal(err)
	}
	if p.K() != 7 || p.HMin() != 1.0/256 {
		t.Errorf("K %d, h_min %v", p.K(), p.HMin())
	}
	// Errors has sensitivity ≤ 1 in V.
	e, err := p.Train(rng, 6, 1, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for trial := 0; trial < 500; trial++ {
		vp := slices.Clone(va)
		vp[rng.IntN(len(va))] = rng.Float64()
		q, _ := NewProcedure(tr, vp, bins)
		if d := math.Abs(p.Errors(e) - q.Errors(e)); d > 1+1e-9 {
			t.Fatalf("Errors changed by %v > 1 with one validation point", d)
		}
	}
	// dataSplit's parts: the last part takes the remainder.
	for part := 0; part < 3; part++ {
		if _, err := p.Train(rng, 0, 1, part, 3); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Train(rng, 0, 1, 3, 3); err == nil {
		t.Error("part 3 of 3: no error")
	}
	// With α = 10⁴ the noise of training (2/α per count) and of selection
	// (2β/α ≈ 2e-5) is far below the score gaps between widths.
	const big = 1e4
	beta1, beta2, err := StabilityConstants(p.HMin(), p.K(), len(tr), big, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	beta := tune.StabilityBeta(beta1, beta2, len(tr), len(va))
	seed := rng.Uint64()
	s, err := tune.Stability(rand.New(rand.NewPCG(seed, 1)), p, big, big, beta)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tune.Control(rand.New(rand.NewPCG(seed, 2)), p, big)
	if err != nil {
		t.Fatal(err)
	}
	if s.Index != c.Index {
		t.Errorf("large budget: Stability chose %d bins, Control %d", bins[s.Index], bins[c.Index])
	}
	if ise := ISE(s.Model, m); !(ise < ISE(Normalize(make([]float64, 4)), m)) {
		t.Errorf("chosen estimate's ISE %v is no better than the uniform density's", ise)
	}
	for _, bad := range []struct {
		t, v []float64
		b    []int
	}{{tr, va, nil}, {nil, va, bins}, {tr, nil, bins}, {tr, va, []int{4, 4}}, {tr, va, []int{0}}, {[]float64{2}, va, bins}} {
		if _, err := NewProcedure(bad.t, bad.v, bad.b); err == nil {
			t.Errorf("NewProcedure(%d, %d, %v): no error", len(bad.t), len(bad.v), bad.b)
		}
	}
}
