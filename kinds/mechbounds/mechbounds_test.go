package mechbounds

import (
	"bytes"
	"context"
	"github.com/dprepro/dprepro/internal/stoptest"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/stattest"
	"github.com/dprepro/dprepro/runner"
)

var params = MechanismsSpec{Dim: 10, Candidates: 100, GaussianDelta: 1e-5}

var levels = []float64{0.5, 0.1, 0.01, 0.001}

// TestBoundsHold runs every mechanism at several ε and checks, at each tail
// level, that the empirical tail is within its sampling error of the exact
// tail (where known) and below the stated bound: a mechanism whose errors
// are larger than the review's bound allows fails here.
func TestBoundsHold(t *testing.T) {
	const n = 40000
	epsilons := []float64{0.1, 1, 5}
	checks := len(mechanisms(params)) * len(epsilons) * len(levels) * 2
	z := stattest.ZCrit(checks)
	for _, seed := range stattest.Seeds(61) {
		rng := rand.New(rand.NewPCG(seed, 62))
		for name, m := range mechanisms(params) {
			for _, eps := range epsilons {
				cells := m.Cells(eps, levels)
				counts, err := run(context.Background(), rng, m, eps, cells, n, params.Dim)
				if err != nil {
					t.Fatal(err)
				}
				for c, cl := range cells {
					if !holds(counts[c], n, cl.bound, checks) {
						t.Errorf("seed %d, %s, eps %v, level %v: tail %v above the bound %v", seed, name, eps, cl.level, float64(counts[c])/n, cl.bound)
					}
					if math.IsNaN(cl.exact) {
						continue
					}
					se := math.Sqrt(cl.exact*(1-cl.exact)/n) + 1/float64(n)
					if d := math.Abs(float64(counts[c])/n - cl.exact); d > z*se {
						t.Errorf("seed %d, %s, eps %v, level %v: tail %v, exact %v (%.1f SE)", seed, name, eps, cl.level, float64(counts[c])/n, cl.exact, d/se)
					}
				}
			}
		}
	}
}

// TestBrokenMechanismsFlagged checks that the check catches mechanisms
// whose errors are larger than their calibration allows: Laplace at twice
// its scale, Gaussian at twice its σ, randomized response flipping twice as
// often, the exponential mechanism at ε/8. (Too little noise makes an
// accuracy bound easier to meet; it is a privacy bug, for the audits.)
func TestBrokenMechanismsFlagged(t *testing.T) {
	ms := mechanisms(params)
	linf := func(noise func() float64) float64 {
		var m float64
		for range params.Dim {
			m = math.Max(m, math.Abs(noise()))
		}
		return m
	}
	broken := map[string]func(rng *rand.Rand, eps float64) (float64, error){
		"laplace": func(rng *rand.Rand, eps float64) (float64, error) {
			return linf(func() float64 { return mech.LaplaceNoise(rng, 2/eps) }), nil
		},
		"gaussian": func(rng *rand.Rand, eps float64) (float64, error) {
			s := 2 * ms["gaussian"].Sigma(eps)
			return linf(func() float64 { return s * rng.NormFloat64() }), nil
		},
		"randomized-response": func(rng *rand.Rand, eps float64) (float64, error) {
			flips := 0
			for range params.Dim {
				if rng.Float64() < 2*(1-mech.RRKeepProb(eps)) {
					flips++
				}
			}
			return float64(flips), nil
		},
		"exponential": func(rng *rand.Rand, eps float64) (float64, error) {
			i, err := mech.Exponential(rng, scoresFor(params), eps/8, 1)
			return float64(i), err // the gap: scores are 0, −1, …
		},
	}
	const n = 20000
	rng := rand.New(rand.NewPCG(63, 64))
	for name, draw := range broken {
		m := ms[name]
		m.Draw = draw
		eps := 1.0
		cells := m.Cells(eps, levels)
		counts, err := run(context.Background(), rng, m, eps, cells, n, params.Dim)
		if err != nil {
			t.Fatal(err)
		}
		flagged := false
		for c, cl := range cells {
			flagged = flagged || !holds(counts[c], n, cl.bound, len(cells))
		}
		if !flagged {
			t.Errorf("broken %s: no level flagged (counts %v of %d)", name, counts, n)
		}
	}
}

func scoresFor(p MechanismsSpec) []float64 {
	s := make([]float64, p.Candidates)
	for i := range s {
		s[i] = -float64(i)
	}
	return s
}

const quickSpec = `schema = 1
id = "mech-small"
kind = "mechanism-bounds"
seed = 3

[mechanisms]
mechanisms = ["randomized-response", "laplace", "exponential", "gaussian"]
epsilons = [0.5, 2.0]
levels = [0.1, 0.01]
replicates = 3
draws = 2000

[output]
bootstrap = 200
`

// TestRun_Deterministic checks that the kind runs end to end, flags no
// bound, and writes the same bytes for 1 and 3 workers.
func TestRun_Deterministic(t *testing.T) {
	var first []byte
	for _, w := range []int{1, 3} {
		s, err := experiments.Parse("mech.toml", []byte(quickSpec), "", testKinds)
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := os.ReadFile(filepath.Join(dir, "rows.csv"))
		if bytes.Contains(rows, []byte("bound-violated")) {
			t.Error("a bound is flagged as violated")
		}
		if _, err := os.Stat(filepath.Join(dir, "figures", "tails.png")); err != nil {
			t.Error(err)
		}
		if first == nil {
			first = rows
		} else if !bytes.Equal(first, rows) {
			t.Error("rows differ between 1 and 3 workers")
		}
	}
}

// TestRunUnit_StopsPromptly gives units work for many seconds (5e7 draws
// of 10 coordinates; 1e5 draws over 1e5 candidates) and checks that they
// return the context's error at once when it is already done and within a
// second of a cancellation.
func TestRunUnit_StopsPromptly(t *testing.T) {
	t.Parallel()
	src := strings.Replace(quickSpec, "draws = 2000", "draws = 50000000", 1)
	src = strings.Replace(src, `mechanisms = ["randomized-response", "laplace", "exponential", "gaussian"]`, `mechanisms = ["laplace", "exponential"]`+"\ncandidates = 100000", 1)
	s, err := experiments.Parse("mech.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"laplace/eps=0.5/rep=1", "exponential/eps=0.5/rep=1"} {
		stoptest.Prompt(t, key, 50*time.Millisecond, func(ctx context.Context) error {
			_, err := runner.RunKey(ctx, e, key)
			return err
		})
	}
}

// TestLedgerAndWarnings_FromGuarantees: each mechanism's ledger charge is
// its Guarantee (the Gaussian's δ is gaussian_delta, the others pure), and
// the unproven-ε warning comes from the mechanism's note, not its name: the
// same values the name switch gave.
func TestLedgerAndWarnings_FromGuarantees(t *testing.T) {
	const src = `schema = 1
id = "mech"
kind = "mechanism-bounds"
[mechanisms]
mechanisms = ["randomized-response", "laplace", "exponential", "gaussian"]
epsilons = [0.5, 2.0]
levels = [0.1]
replicates = 2
draws = 100
gaussian_delta = 1e-6
`
	s, err := experiments.Parse("mech.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	led := e.Ledger(nil)
	if len(led) != 8 {
		t.Fatalf("%d ledger entries, want 4 mechanisms × 2 ε", len(led))
	}
	for _, le := range led {
		wantDelta := 0.0
		if le.Method == "gaussian" {
			wantDelta = 1e-6
		}
		eps := map[string]float64{"epsilon=0.5": 0.5, "epsilon=2": 2}[le.Setting]
		c := le.Components[0]
		if float64(c.Epsilon) != eps || float64(c.Delta) != wantDelta || !c.Private ||
			float64(le.Total.Epsilon) != eps || float64(le.Total.Delta) != wantDelta || !le.Total.Private {
			t.Errorf("%s %s: charge %+v total %+v; want (ε=%v, δ=%v)", le.Method, le.Setting, c, le.Total, eps, wantDelta)
		}
	}
	want := []string{"gaussian: σ of Proposition 3.15 at ε ≥ 1, where its (ε, δ) guarantee is not proven (Dwork & Roth Theorem A.1 needs ε < 1); only its accuracy is measured"}
	if w := e.Warnings(); !slices.Equal(w, want) {
		t.Errorf("warnings %q, want %q", w, want)
	}
	s.Section.(*Section).Mechanisms.Epsilons = []float64{0.5}
	if w := e.Warnings(); len(w) != 0 {
		t.Errorf("ε < 1: warnings %q", w)
	}
}
