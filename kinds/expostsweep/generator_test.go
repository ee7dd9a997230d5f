package expostsweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/core/noisered"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/generators"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// tinySpec is a logistic sweep on a 400-row subsample of the Magic
// stand-in (synthetic: the same data with or without $DPREPRO_DATA). The
// generator and the methods are replaced after parsing, since the spec
// validation of package experiments knows only the built-in names.
const tinySpec = `schema = 1
id = "af-tiny"
kind = "expost-sweep"
seed = 3

[data]
datasets = ["magic"]
synthetic = "always"
column_scale = "none"
intercept = false
row_norm = "l1-max"
subsample = 400

[accuracy_first]
task = "logistic"
generator = "output"
calibration = "CAL"
lambda = 0.01
gamma = 0.1
steps = 20
alphas = [0.05, 0.2]
trials = 3
methods = ["noise-reduction", "doubling", "theory"]

[output]
bootstrap = 100
`

// fakeFactor is the ε the fake claims per unit of level: a release at
// level ε states a guarantee of fakeFactor·ε, so any privacy column that
// equals a multiple of fakeFactor of the levels came from the guarantee
// values, not from the levels.
const fakeFactor = 3

// fakeTheory is the fake's "utility theorem": ε = fakeTheory/α.
const fakeTheory = 0.05

// recordingGen is a deterministic fake generator: zero noise (every
// hypothesis is θ*, excess risk 0), guarantees of fakeFactor·ε, and a
// record of the levels it is asked for.
type recordingGen struct {
	name  string
	tasks []accfirst.Task

	mu      sync.Mutex
	seq     [][]float64 // the level grids of Sequence calls
	indep   []float64   // the levels of Independent calls
	theory  []float64   // the levels of TheoryRelease calls
	settled []accfirst.Setting
}

func (g *recordingGen) Name() string           { return g.name }
func (g *recordingGen) Tasks() []accfirst.Task { return g.tasks }

func (g *recordingGen) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq, g.indep, g.theory, g.settled = nil, nil, nil, nil
}

func (g *recordingGen) Sequence(_ context.Context, _ *rand.Rand, s accfirst.Setting, eps []float64) (expost.Sequence, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq = append(g.seq, append([]float64(nil), eps...))
	g.settled = append(g.settled, s)
	return &zeroSeq{pr: s.Problem, eps: eps}, nil
}

func (g *recordingGen) Independent(_ context.Context, _ *rand.Rand, s accfirst.Setting, eps float64) (expost.Hypothesis, privacy.Guarantee, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.indep = append(g.indep, eps)
	return zeroHyp{s.Problem}, privacy.EpsDP(fakeFactor*eps, "fake release"), nil
}

func (g *recordingGen) TheoryEpsilon(_ accfirst.Setting, alpha, _ float64) (float64, error) {
	return fakeTheory / alpha, nil
}

func (g *recordingGen) TheoryRelease(_ context.Context, _ *rand.Rand, s accfirst.Setting, eps float64) (expost.Hypothesis, privacy.Guarantee, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.theory = append(g.theory, eps)
	return zeroHyp{s.Problem}, privacy.EpsDP(fakeFactor*eps, "fake theory release"), nil
}

// zeroHyp is θ* itself.
type zeroHyp struct{ pr accfirst.Problem }

func (h zeroHyp) Bounds() (float64, float64) { return 0, 0 }
func (h zeroHyp) Excess() (float64, error)   { return 0, nil }
func (h zeroHyp) Theta() ([]float64, error)  { return h.pr.ThetaStar(), nil }
func (s *zeroSeq) Guarantee() privacy.Guarantee {
	return privacy.EpsDP(fakeFactor*s.eps[s.t-1], "fake prefix")
}
func (s *zeroSeq) Len() int { return len(s.eps) }

// zeroSeq is a sequence of θ* at the given levels.
type zeroSeq struct {
	pr  accfirst.Problem
	eps []float64
	t   int
}

func (s *zeroSeq) Next() (expost.Hypothesis, bool, error) {
	if s.t == len(s.eps) {
		return nil, false, nil
	}
	s.t++
	return zeroHyp{s.pr}, true, nil
}

// The fakes, registered once per test binary (a registry refuses a name
// twice, and -count=N runs a test N times in one process).
var (
	fakeLogistic  = &recordingGen{name: "fake-zero", tasks: []accfirst.Task{accfirst.TaskLogistic, accfirst.TaskRidge}}
	fakeRidgeOnly = &recordingGen{name: "fake-ridge-only", tasks: []accfirst.Task{accfirst.TaskRidge}}
	registerFakes = sync.OnceValue(func() error {
		return errors.Join(generators.Register(fakeLogistic), generators.Register(fakeRidgeOnly))
	})
)

// loadWith parses tinySpec under cal, sets the generator and methods and
// calls New.
func loadWith(t *testing.T, cal, gen string, methods ...string) (*Experiment, error) {
	t.Helper()
	if err := registerFakes(); err != nil {
		t.Fatal(err)
	}
	s, err := experiments.Parse("tiny.toml", []byte(strings.Replace(tinySpec, "CAL", cal, 1)), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	s.Section.(*Section).AccuracyFirst.Generator = gen
	if len(methods) > 0 {
		s.Section.(*Section).AccuracyFirst.Methods = methods
	}
	return New(s, Options{})
}

// TestFakeGenerator_GuaranteesReachRowsAndLedger runs every method with
// the recording fake, unit by unit, and checks that the fake is asked for
// exactly the levels of the paper's searches (Appendix B.1 grid, doubling
// levels, theory ε) and that every privacy column is the fake's guarantee
// values (fakeFactor·ε), composed with the test's charge (Lemma 2.8,
// Theorem A.2) — under both calibrations.
func TestFakeGenerator_GuaranteesReachRowsAndLedger(t *testing.T) {
	for _, cal := range []expost.Calibration{expost.AuthorsCode, expost.Paper} {
		t.Run(string(cal), func(t *testing.T) {
			e, err := loadWith(t, string(cal), "fake-zero", "noise-reduction", "doubling", "theory", "theory-output")
			if err != nil {
				t.Fatal(err)
			}
			af := e.spec.AccuracyFirst
			pr := e.probs[0]
			var all []results.Row
			for _, key := range unitKeys(e) {
				fakeLogistic.reset()
				rows, err := runner.RunKey(context.Background(), e, key)
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != 1 {
					t.Fatalf("%s: %d rows", key, len(rows))
				}
				r := rows[0]
				all = append(all, r)
				alpha := r.Float("alpha")
				E := fakeTheory / alpha
				epsMin, epsMax := 1/float64(pr.N()), af.EpsMaxFactor*E
				delta := pr.QuerySensitivity(cal)
				hyp, test, single := r.Float("hypothesis_eps"), r.Float("test_eps"), r.Float("test_eps_single")
				fake := r["method"] != "theory-output" // the built-in output generator's noise
				if r["generator"] != "fake-zero" || r["success_rate"] != "1" || (fake && r.Float("excess_risk") != 0) {
					t.Errorf("%s: generator %s, success %s, excess %s", key, r["generator"], r["success_rate"], r["excess_risk"])
				}
				if got := r.Float("eps_max"); got != epsMax || r.Float("eps_min") != epsMin {
					t.Errorf("%s: grid [%v, %v], want [%v, %v] (ε_max = 4·fakeTheory/α)", key, r.Float("eps_min"), got, epsMin, epsMax)
				}
				stop := int(r.Float("stop"))
				var wantHyp, wantSingle float64
				switch m := r["method"]; m {
				case "noise-reduction":
					grid, err := noisered.Geometric(epsMin, epsMax, af.Steps)
					if err != nil {
						t.Fatal(err)
					}
					if len(fakeLogistic.seq) != 1 || !slices.Equal(fakeLogistic.seq[0], grid) {
						t.Fatalf("%s: asked for sequences %v, want the grid %v", key, fakeLogistic.seq, grid)
					}
					if s := fakeLogistic.settled[0]; s.Task != accfirst.TaskLogistic || s.Calibration != cal || s.Problem != pr {
						t.Errorf("%s: setting %+v", key, s)
					}
					wantHyp = fakeFactor * grid[stop-1]
					epsA, _, err := cal.NRTest(alpha, af.Gamma, af.Steps, delta)
					if err != nil {
						t.Fatal(err)
					}
					wantSingle = epsA
				case "doubling":
					lv, err := expost.DoublingLevels(epsMin, epsMax)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(fakeLogistic.indep, lv[:stop]) {
						t.Fatalf("%s: asked for levels %v, want %v", key, fakeLogistic.indep, lv[:stop])
					}
					for _, l := range lv[:stop] {
						wantHyp += fakeFactor * l
					}
					d, err := cal.Doubling(alpha, af.Gamma, delta, lv)
					if err != nil {
						t.Fatal(err)
					}
					wantSingle = float64(stop) * d.EpsilonTest()
				case "theory":
					if !slices.Equal(fakeLogistic.theory, []float64{E}) {
						t.Fatalf("%s: theory releases at %v, want [%v]", key, fakeLogistic.theory, E)
					}
					wantHyp = fakeFactor * E
				case "theory-output":
					// The built-in output generator, not the fake: its own ε-DP
					// release at Theorem 3.3's ε.
					if len(fakeLogistic.theory)+len(fakeLogistic.indep)+len(fakeLogistic.seq) != 0 {
						t.Fatalf("%s: the fake was called", key)
					}
					set := e.sets[0]
					th, err := accfirst.Output{}.TheoryEpsilon(set, alpha, af.Gamma)
					if err != nil {
						t.Fatal(err)
					}
					wantHyp = th
				default:
					t.Fatalf("method %s", m)
				}
				if math.Abs(hyp-wantHyp) > 1e-12*wantHyp {
					t.Errorf("%s: hypothesis ε %v, want the guarantee's %v", key, hyp, wantHyp)
				}
				// The fake claims three times each level: flagged, booked
				// as claimed; the built-in output generator claims its level.
				if fake && (!strings.HasPrefix(r["status"], "warning: generator fake-zero returned ε=") || !strings.Contains(r["status"], " for a level of ε=") || !strings.Contains(r["status"], " releases over their level)")) {
					t.Errorf("%s: status %q does not flag the releases over their level", key, r["status"])
				}
				if !fake && r["status"] != "ok" {
					t.Errorf("%s: status %q, want ok", key, r["status"])
				}
				if math.Abs(single-wantSingle) > 1e-12*math.Max(wantSingle, 1e-300) {
					t.Errorf("%s: test ε %v, want %v", key, single, wantSingle)
				}
				if want := cal.ReportedTestEps(single); test != want {
					t.Errorf("%s: reported test ε %v, want %v", key, test, want)
				}
				if got := r.Float("expost_eps"); got != hyp+test {
					t.Errorf("%s: ex-post ε %v ≠ %v + %v", key, got, hyp, test)
				}
				if got := r.Float("expost_eps_single"); got != hyp+single {
					t.Errorf("%s: single ex-post ε %v ≠ %v + %v", key, got, hyp, single)
				}
			}
			// The ledger: per method and α, the largest values of the rows.
			led := e.Ledger(all)
			if len(led) != 4*len(af.Alphas) {
				t.Fatalf("%d ledger entries", len(led))
			}
			for _, le := range led {
				want := 0.0
				for _, r := range all {
					if r["method"] == le.Method && "dataset="+r["dataset"]+" alpha="+r["alpha"] == le.Setting {
						want = math.Max(want, r.Float("expost_eps"))
					}
				}
				if float64(le.Total.Epsilon) != want || want == 0 || !le.Total.Private {
					t.Errorf("%s %s: ledger total %v, want %v", le.Method, le.Setting, le.Total.Epsilon, want)
				}
				tested := len(le.Components) == 2
				if tested == strings.HasPrefix(le.Method, "theory") || le.Components[0].Part != "generating" {
					t.Errorf("%s: charges %+v", le.Method, le.Components)
				}
				// Whose word the generating charge is, and the claim beside
				// it: the fake is a Go extension claiming over its levels.
				gen := le.Components[0]
				if le.Method == "theory-output" {
					if gen.DeclaredBy != "" || gen.Claimed != "" {
						t.Errorf("%s: built-in generator declared by %q, claimed %q", le.Method, gen.DeclaredBy, gen.Claimed)
					}
				} else if gen.DeclaredBy != "fake-zero" || !strings.HasPrefix(gen.Claimed, "generator fake-zero returned ε=") || !strings.HasSuffix(gen.Claimed, "; booked as returned") {
					t.Errorf("%s: generating charge declared by %q, claimed %q", le.Method, gen.DeclaredBy, gen.Claimed)
				}
				// The searches' losses are ex post (Definition 2.3), the
				// theory approach's ε is fixed ex ante.
				notion := string(privacy.ExPost)
				if strings.HasPrefix(le.Method, "theory") {
					notion = string(privacy.Pure)
				}
				for _, c := range append(le.Components, results.LedgerCharge{Notion: le.Total.Notion}) {
					if c.Notion != notion {
						t.Errorf("%s: notion %q, want %q", le.Method, c.Notion, notion)
					}
				}
			}
		})
	}
}

// TestNew_GeneratorNames checks the errors for names a spec may get
// wrong: an unknown generator (listing the registered ones), a generator
// that does not support the task, an unknown method.
func TestNew_GeneratorNames(t *testing.T) {
	tests := []struct {
		name    string
		gen     string
		methods []string
		want    []string // substrings of the error
	}{
		{"unknown generator", "nope", nil, []string{`accuracy_first.generator: unknown generator "nope"`, "covariance", "fake-zero", "output"}},
		{"empty generator", "", nil, []string{`accuracy_first.generator: unknown generator ""`}},
		{"task not supported", "fake-ridge-only", nil, []string{"accuracy_first.generator", `"fake-ridge-only" is defined for task ridge only, not for "logistic"`}},
		{"built-in task not supported", "covariance", nil, []string{"accuracy_first.generator", `"covariance" is defined for task ridge only, not for "logistic"`}},
		{"unknown method", "output", []string{"theory", "bisection"}, []string{`accuracy_first.methods[1]: unknown method "bisection"`, "noise-reduction", "theory-output"}},
		{"unknown theory generator", "output", []string{"theory-nope"}, []string{`accuracy_first.methods[0]`, `unknown generator "nope"`}},
		{"theory generator without the task", "output", []string{"theory-fake-ridge-only"}, []string{`accuracy_first.methods[0]`, `method "theory-fake-ridge-only"`, `not for "logistic"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadWith(t, "paper", tt.gen, tt.methods...)
			if err == nil {
				t.Fatal("accepted")
			}
			t.Log(err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// plainGen is a generator without a utility theorem.
type plainGen struct{ name string }

func (g plainGen) Name() string           { return g.name }
func (g plainGen) Tasks() []accfirst.Task { return []accfirst.Task{accfirst.TaskLogistic} }
func (g plainGen) Sequence(context.Context, *rand.Rand, accfirst.Setting, []float64) (expost.Sequence, error) {
	return nil, errors.New("unused")
}
func (g plainGen) Independent(context.Context, *rand.Rand, accfirst.Setting, float64) (expost.Hypothesis, privacy.Guarantee, error) {
	return nil, privacy.Guarantee{}, errors.New("unused")
}

// TestNew_GeneratorWithoutTheory: the ε grid needs E (ε_max =
// eps_max_factor·E), so a generator without a utility theorem is refused
// as the spec's generator, and as the generator of a theory method.
func TestNew_GeneratorWithoutTheory(t *testing.T) {
	g := plainGen{"fake-no-theory"}
	if err := generators.Register(g); err != nil && !errors.Is(err, generators.ErrDuplicate) {
		t.Fatal(err)
	}
	_, err := loadWith(t, "paper", g.name)
	if err == nil || !strings.Contains(err.Error(), "no utility theorem") {
		t.Errorf("generator without theory: %v", err)
	}
	_, err = loadWith(t, "paper", "output", "theory-fake-no-theory")
	if err == nil || !strings.Contains(err.Error(), "needs a utility theorem") {
		t.Errorf("theory method without theory: %v", err)
	}
}

// scaledGen is a zero-noise generator claiming factor·ε for a release at
// level ε (a sequence's prefix, an independent release, a theory release).
type scaledGen struct {
	name   string
	factor float64
}

func (g scaledGen) Name() string           { return g.name }
func (g scaledGen) Tasks() []accfirst.Task { return accfirst.KnownTasks() }
func (g scaledGen) Sequence(_ context.Context, _ *rand.Rand, s accfirst.Setting, eps []float64) (expost.Sequence, error) {
	return &scaledSeq{zeroSeq{pr: s.Problem, eps: eps}, g.factor}, nil
}
func (g scaledGen) Independent(_ context.Context, _ *rand.Rand, s accfirst.Setting, eps float64) (expost.Hypothesis, privacy.Guarantee, error) {
	return zeroHyp{s.Problem}, privacy.EpsDP(g.factor*eps, "scaled release"), nil
}
func (g scaledGen) TheoryEpsilon(_ accfirst.Setting, alpha, _ float64) (float64, error) {
	return fakeTheory / alpha, nil
}
func (g scaledGen) TheoryRelease(_ context.Context, _ *rand.Rand, s accfirst.Setting, eps float64) (expost.Hypothesis, privacy.Guarantee, error) {
	return zeroHyp{s.Problem}, privacy.EpsDP(g.factor*eps, "scaled theory release"), nil
}

type scaledSeq struct {
	zeroSeq
	factor float64
}

func (s *scaledSeq) Guarantee() privacy.Guarantee {
	return privacy.EpsDP(s.factor*s.eps[s.t-1], "scaled prefix")
}

var registerHundredth = sync.OnceValue(func() error { return generators.Register(scaledGen{"fake-hundredth", 0.01}) })

// TestGenerator_UnderLevel: a generator whose releases claim ε/100 of the
// ε they were asked for is flagged as one over its level is — the row's
// status, the manifest's warnings, stderr — and booked at the level, the
// ε asked, which is what the search spends: hypothesis_eps is the grid's
// εₜ (noise reduction), the sum of the doubling levels, the theory ε. The
// ledger's generating charge shows the claim beside it and names the
// generator as declared (a Go extension).
func TestGenerator_UnderLevel(t *testing.T) {
	if err := registerHundredth(); err != nil {
		t.Fatal(err)
	}
	e, err := loadWith(t, string(expost.Paper), "fake-hundredth", "noise-reduction", "doubling", "theory")
	if err != nil {
		t.Fatal(err)
	}
	af := e.spec.AccuracyFirst
	pr := e.probs[0]
	var stderr strings.Builder
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 2, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	var rows []results.Row
	for _, key := range unitKeys(e) {
		r, err := runner.RunKey(context.Background(), e, key)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r...)
	}
	for _, r := range rows {
		alpha := r.Float("alpha")
		E := fakeTheory / alpha
		epsMin, epsMax := 1/float64(pr.N()), af.EpsMaxFactor*E
		stop := int(r.Float("stop"))
		var want float64
		var releases int
		switch r["method"] {
		case "noise-reduction":
			grid, err := noisered.Geometric(epsMin, epsMax, af.Steps)
			if err != nil {
				t.Fatal(err)
			}
			want, releases = grid[stop-1], 1
		case "doubling":
			lv, err := expost.DoublingLevels(epsMin, epsMax)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lv[:stop] {
				want += l
			}
			releases = stop
		case "theory":
			want, releases = E, 1
		}
		if got := r.Float("hypothesis_eps"); math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s: hypothesis_eps %v, want the levels' %v", r["unit"], got, want)
		}
		suffix := fmt.Sprintf("(%d of %d releases below their level)", releases, releases)
		if !strings.HasPrefix(r["status"], "warning: generator fake-hundredth returned ε=") || !strings.Contains(r["status"], " below its level of ε=") || !strings.HasSuffix(r["status"], suffix) {
			t.Errorf("%s: status %q, want a note ending %q", r["unit"], r["status"], suffix)
		}
	}
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range af.Methods {
		prefix := fmt.Sprintf("method %s: 6 of 6 trials have releases below their level, e.g. generator fake-hundredth returned ε=", method)
		i := slices.IndexFunc(m.Warnings, func(w string) bool { return strings.HasPrefix(w, prefix) })
		if i < 0 || !strings.HasSuffix(m.Warnings[i], "; hypothesis_eps, expost_eps and the ledger book the level, which is what the search spends") {
			t.Errorf("manifest warnings %q lack %q…", m.Warnings, prefix)
			continue
		}
		if !strings.Contains(stderr.String(), "dprepro: af-tiny: WARNING: "+m.Warnings[i]+"\n") {
			t.Errorf("stderr does not warn %q:\n%s", m.Warnings[i], stderr.String())
		}
	}
	for _, le := range m.Ledger {
		gen := le.Components[0]
		if gen.DeclaredBy != "fake-hundredth" || !strings.HasPrefix(gen.Claimed, "generator fake-hundredth returned ε=") || !strings.HasSuffix(gen.Claimed, " in 3 of 3 trials; booked at the level") {
			t.Errorf("%s %s: generating charge declared by %q, claimed %q", le.Method, le.Setting, gen.DeclaredBy, gen.Claimed)
		}
	}
}
