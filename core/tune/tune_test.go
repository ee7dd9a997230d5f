package tune

import (
	"math"
	"math/rand/v2"
	"testing"
)

// fake is a recording Procedure: candidate i has a fixed validation score
// and error count; Train records the ε and data part it was given and draws
// nothing (a zero-noise trainer), so the selection step is tested alone.
type fake struct {
	scores []float64
	errs   []float64
	calls  []call
}

type call struct {
	i           int
	eps         float64
	part, parts int
}

func (f *fake) K() int { return len(f.scores) }
func (f *fake) Train(_ *rand.Rand, i int, eps float64, part, parts int) (int, error) {
	f.calls = append(f.calls, call{i, eps, part, parts})
	return i, nil
}
func (f *fake) Score(h int) float64  { return f.scores[h] }
func (f *fake) Errors(h int) float64 { return f.errs[h] }

func newFake(k int) *fake {
	f := &fake{scores: make([]float64, k), errs: make([]float64, k)}
	for i := range f.scores {
		f.scores[i] = -0.5 + 0.01*float64(i) // best is the last
		f.errs[i] = float64(100 - i)
	}
	return f
}

// TestPrivacyPlumbing checks the ε and data part each method hands the
// trainer (Chaudhuri & Vinterbo 2013, Section 5).
func TestPrivacyPlumbing(t *testing.T) {
	const k, alpha = 10, 2.0
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name  string
		run   func(p *fake) (Choice[int], error)
		check func(t *testing.T, calls []call)
	}{
		{"stability", func(p *fake) (Choice[int], error) { return Stability[int](rng, p, alpha/2, alpha/2, 0.01) },
			func(t *testing.T, calls []call) {
				if len(calls) != k+1 {
					t.Fatalf("%d fits, want k+1 = %d", len(calls), k+1)
				}
				for j, c := range calls {
					if c.eps != alpha/2 || c.parts != 1 {
						t.Errorf("fit %d: eps %v parts %d, want alpha/2 on all of T", j, c.eps, c.parts)
					}
					if j < k && c.i != j {
						t.Errorf("fit %d trained candidate %d", j, c.i)
					}
				}
			}},
		{"alphaSplit", func(p *fake) (Choice[int], error) { return AlphaSplit[int](rng, p, alpha) },
			func(t *testing.T, calls []call) {
				if len(calls) != k {
					t.Fatalf("%d fits, want %d", len(calls), k)
				}
				for j, c := range calls {
					if math.Abs(c.eps-alpha/k) > 1e-15 || c.parts != 1 {
						t.Errorf("fit %d: eps %v parts %d, want alpha/k on all of T", j, c.eps, c.parts)
					}
				}
			}},
		{"dataSplit", func(p *fake) (Choice[int], error) { return DataSplit[int](rng, p, alpha) },
			func(t *testing.T, calls []call) {
				for j, c := range calls {
					if c.eps != alpha || c.parts != k || c.part != j || c.i != j {
						t.Errorf("fit %d: %+v, want candidate %d at alpha on part %d of %d", j, c, j, j, k)
					}
				}
			}},
		{"random", func(p *fake) (Choice[int], error) { return Random[int](rng, p, alpha) },
			func(t *testing.T, calls []call) {
				if len(calls) != 1 || calls[0].eps != alpha || calls[0].parts != 1 {
					t.Errorf("calls %+v, want one fit at alpha on T", calls)
				}
			}},
		{"control", func(p *fake) (Choice[int], error) { return Control[int](rng, p, alpha) },
			func(t *testing.T, calls []call) {
				if len(calls) != k {
					t.Fatalf("%d fits, want %d", len(calls), k)
				}
				for _, c := range calls {
					if c.eps != alpha || c.parts != 1 {
						t.Errorf("fit %+v, want alpha on T", c)
					}
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newFake(k)
			ch, err := c.run(p)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, p.calls)
			if ch.Fits != len(p.calls) {
				t.Errorf("Fits = %d, trainer called %d times", ch.Fits, len(p.calls))
			}
			if ch.Model != ch.Index {
				t.Errorf("released model %d is not candidate %d", ch.Model, ch.Index)
			}
		})
	}
}

func TestControl_Argmax(t *testing.T) {
	p := newFake(5)
	p.scores = []float64{-0.3, -0.1, -0.1, -0.9, -0.2}
	c, err := Control[int](rand.New(rand.NewPCG(3, 4)), p, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Index != 1 {
		t.Errorf("Control chose %d, want 1 (first maximum)", c.Index)
	}
}

// TestValidate_Distribution checks Algorithm 1's selection law on two
// candidates: i* = argmax q_i + 2βZ_i with Z_i ~ Exp(mean 1/α₂) i.i.d. For
// two candidates with gap g = q_1 − q_0 > 0 and rate r = α₂/(2β) of the
// scaled noise, P(i* = 0) = P(E_0 − E_1 > g) = ½·exp(−r·g) (the difference of
// two i.i.d. Exp(r) is Laplace(1/r)).
func TestValidate_Distribution(t *testing.T) {
	const (
		n      = 40000
		alpha2 = 1.0
		beta   = 0.05
		gap    = 0.1
	)
	p := &fake{scores: []float64{0, gap}, errs: []float64{0, 0}}
	rng := rand.New(rand.NewPCG(5, 6))
	zeros := 0
	for i := 0; i < n; i++ {
		c, err := Validate[int](rng, p, 1, alpha2, beta)
		if err != nil {
			t.Fatal(err)
		}
		if c.Index == 0 {
			zeros++
		}
	}
	want := 0.5 * math.Exp(-alpha2/(2*beta)*gap)
	got := float64(zeros) / n
	// Binomial standard error, 4.42 of them: a correct sampler fails with
	// probability < 1e-5.
	tol := 4.42 * math.Sqrt(want*(1-want)/n)
	if math.Abs(got-want) > tol {
		t.Errorf("P(i*=0) = %.4f, want %.4f ± %.4f", got, want, tol)
	}
}

// TestAlphaSplit_ExpMech checks p_i ∝ exp(−α e_i/2) on the error counts.
func TestAlphaSplit_ExpMech(t *testing.T) {
	const n, alpha = 30000, 1.0
	p := &fake{scores: make([]float64, 3), errs: []float64{10, 11, 13}}
	w := []float64{math.Exp(-alpha * 10 / 2), math.Exp(-alpha * 11 / 2), math.Exp(-alpha * 13 / 2)}
	z := w[0] + w[1] + w[2]
	counts := make([]int, 3)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < n; i++ {
		c, err := AlphaSplit[int](rng, p, alpha)
		if err != nil {
			t.Fatal(err)
		}
		counts[c.Index]++
	}
	for i, c := range counts {
		want := w[i] / z
		got := float64(c) / n
		tol := 4.42 * math.Sqrt(want*(1-want)/n) // binomial se, 4.42 of them
		if math.Abs(got-want) > tol {
			t.Errorf("P(i*=%d) = %.4f, want %.4f ± %.4f", i, got, want, tol)
		}
	}
}

func TestRandom_Uniform(t *testing.T) {
	const n, k = 20000, 4
	p := newFake(k)
	counts := make([]int, k)
	rng := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < n; i++ {
		c, err := Random[int](rng, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		counts[c.Index]++
	}
	want := 1.0 / k
	tol := 4.42 * math.Sqrt(want*(1-want)/n) // binomial se, 4.42 of them
	for i, c := range counts {
		if got := float64(c) / n; math.Abs(got-want) > tol {
			t.Errorf("P(i*=%d) = %.4f, want %.4f ± %.4f", i, got, want, tol)
		}
	}
}

// TestStability_SmallNoise: with β → 0 the noisy argmax is the exact argmax.
func TestStability_SmallNoise(t *testing.T) {
	p := newFake(10)
	c, err := Stability[int](rand.New(rand.NewPCG(11, 12)), p, 1, 1, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	if c.Index != 9 {
		t.Errorf("chose %d, want 9 (the best score)", c.Index)
	}
	if len(c.Noisy) != 10 {
		t.Errorf("Noisy has %d entries", len(c.Noisy))
	}
}

func TestStabilityConstants(t *testing.T) {
	// Theorem 4 with the ramp loss: β₁ = 2/λ_min = 2000 at λ_min = 0.001,
	// β₂ = 1; with n = 24000, m = 3000: β = max(2000/24000, 1/3000) = 1/12.
	b1, b2 := RampStabilityConstants(0.001)
	if b1 != 2000 || b2 != 1 {
		t.Errorf("constants = %v, %v", b1, b2)
	}
	if b := StabilityBeta(b1, b2, 24000, 3000); math.Abs(b-1.0/12) > 1e-15 {
		t.Errorf("beta = %v, want 1/12", b)
	}
}

func TestInvalid(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	p := newFake(3)
	for _, a := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := AlphaSplit[int](rng, p, a); err == nil {
			t.Errorf("AlphaSplit accepted alpha %v", a)
		}
		if _, err := Stability[int](rng, p, a, 1, 1); err == nil {
			t.Errorf("Stability accepted alpha1 %v", a)
		}
	}
	if _, err := Control[int](rng, &fake{}, 1); err != ErrNoCandidates {
		t.Errorf("no candidates: got %v", err)
	}
}
