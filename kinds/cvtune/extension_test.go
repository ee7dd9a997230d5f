package cvtune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/registry"
	"github.com/dprepro/dprepro/methods/selection"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// extSpec runs on the labelled synthetic stand-in of Magic (400 rows), so
// that it needs no data directory.
const extSpec = `schema = 1
id = "ext"
kind = "cv-tuning"
seed = 3

[data]
datasets = ["magic"]
synthetic = "always"
subsample = 400

[cv]
repetitions = 1
folds = 4

[tuning]
lambdas = [0.1, 0.5, 1.0]
alphas = [2.0]
methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]
%s

[output]
bootstrap = 100
`

func parseExt(t *testing.T, tuningExtra string) *experiments.Spec {
	t.Helper()
	s, err := experiments.Parse("ext.toml", []byte(fmt.Sprintf(extSpec, tuningExtra)), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func registerLearner(t *testing.T, l learners.Learner) {
	t.Helper()
	if err := learners.Register(l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { learners.Unregister(l.Name()) })
}

func registerSelector(t *testing.T, m selection.Selector) {
	t.Helper()
	if err := selection.Register(m); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { selection.Unregister(m.Name()) })
}

// meanModel is w·x.
type meanModel struct{ w []float64 }

func (m meanModel) Margins(dst []float64, d *learners.Data) []float64 {
	if len(dst) != d.N() {
		dst = make([]float64, d.N())
	}
	X := d.X()
	for i := range dst {
		dst[i] = 0
		for j, v := range X.RawRowView(i) {
			dst[i] += v * m.w[j]
		}
	}
	return dst
}

// meanDiff fits w = (mean of x over y = +1 − mean over y = −1)/(1 + λ):
// deterministic, no noise, through Data's dense view.
func meanDiff(train *learners.Data, lambda float64) meanModel {
	X, y := train.X(), train.Y()
	w := make([]float64, train.D())
	var np, nm float64
	for _, yi := range y {
		if yi > 0 {
			np++
		} else {
			nm++
		}
	}
	for i, yi := range y {
		for j, v := range X.RawRowView(i) {
			if yi > 0 {
				w[j] += v / np / (1 + lambda)
			} else {
				w[j] -= v / nm / (1 + lambda)
			}
		}
	}
	return meanModel{w}
}

// fakeLearner is a zero-noise learner whose guarantee is (2ε, 1e-6) for
// level ε: unlike any built-in, so that it is recognisable in the rows.
type fakeLearner struct{}

func (fakeLearner) Name() string { return "fake-double" }
func (fakeLearner) Fit(_ context.Context, _ *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	return meanDiff(train, lambda), privacy.EpsDeltaDP(2*level.Epsilon, 1e-6, "fake"), nil
}
func (fakeLearner) StabilityConstants(context.Context, []float64, int, float64, float64) (float64, float64, error) {
	return 1, 1, nil
}

// recordingLearner records the parameter, level and training-set size of
// every fit, and delivers exactly the level it is handed.
type recordingLearner struct {
	mu    *sync.Mutex
	calls *[]call
}

type call struct {
	lambda float64
	level  learners.Level
	n      int
}

func (recordingLearner) Name() string { return "recorder" }
func (r recordingLearner) Fit(_ context.Context, _ *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	r.mu.Lock()
	*r.calls = append(*r.calls, call{lambda, level, train.N()})
	r.mu.Unlock()
	return meanDiff(train, lambda), privacy.EpsDP(level.Epsilon, "recorded"), nil
}
func (recordingLearner) StabilityConstants(context.Context, []float64, int, float64, float64) (float64, float64, error) {
	return 1, 1, nil
}

// unstableLearner has no stability constants.
type unstableLearner struct{}

func (unstableLearner) Name() string { return "unstable" }
func (unstableLearner) Fit(_ context.Context, _ *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	return meanDiff(train, lambda), privacy.EpsDP(level.Epsilon, "unstable"), nil
}

func TestRegister_Errors(t *testing.T) {
	long := strings.Repeat("a", 65)
	for _, c := range []struct {
		name    string
		err     error
		wantErr error
	}{
		{"nil learner", learners.Register(nil), registry.ErrBadName},
		{"empty", learners.Register(namedLearner("")), registry.ErrBadName},
		{"slash", learners.Register(namedLearner("a/b")), registry.ErrBadName},
		{"space", learners.Register(namedLearner("a b")), registry.ErrBadName},
		{"equals", learners.Register(namedLearner("alpha=1")), registry.ErrBadName},
		{"dot first", learners.Register(namedLearner(".x")), registry.ErrBadName},
		{"too long", learners.Register(namedLearner(long)), registry.ErrBadName},
		{"built-in learner", learners.Register(learners.ObjectivePerturbation{}), registry.ErrDuplicate},
		{"nil selector", selection.Register(nil), registry.ErrBadName},
		{"bad selector", selection.Register(namedSelector("a,b")), registry.ErrBadName},
		{"built-in selector", selection.Register(selection.Control{}), registry.ErrDuplicate},
		{"builtin name, other type", selection.Register(namedSelector("stability")), registry.ErrDuplicate},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !errors.Is(c.err, c.wantErr) {
				t.Errorf("err = %v, want %v", c.err, c.wantErr)
			}
		})
	}
	if got := learners.Names(); !slices.Equal(got, []string{"objective-perturbation", "output-perturbation", "non-private"}) {
		t.Errorf("LearnerNames() = %v", got)
	}
	if got := selection.Names(); !slices.Equal(got, []string{"stability", "alphaSplit", "dataSplit", "random", "control"}) {
		t.Errorf("SelectorNames() = %v", got)
	}
	registerLearner(t, fakeLearner{})
	if err := learners.Register(fakeLearner{}); !errors.Is(err, registry.ErrDuplicate) {
		t.Errorf("second registration: err = %v", err)
	}
	if got := learners.Names(); !slices.Equal(got, []string{"objective-perturbation", "output-perturbation", "non-private", "fake-double"}) {
		t.Errorf("LearnerNames() = %v, want registration order", got)
	}
}

type namedLearner string

func (n namedLearner) Name() string { return string(n) }
func (namedLearner) Fit(context.Context, *rand.Rand, *learners.Data, float64, learners.Level) (learners.Model, privacy.Guarantee, error) {
	return nil, privacy.Guarantee{}, errors.New("unused")
}

type namedSelector string

func (n namedSelector) Name() string { return string(n) }
func (namedSelector) Select(context.Context, *rand.Rand, selection.Candidates, selection.Budget) (selection.Outcome, error) {
	return selection.Outcome{}, errors.New("unused")
}
func (namedSelector) Plan(selection.Budget, int, selection.Terms) (selection.Account, error) {
	return selection.Account{}, errors.New("unused")
}

// TestNew_UnknownNames: a name that is not registered is an error naming
// the file, line and key (once) and the known names, never a default. (The
// test sets the lists in code: the line is that of [tuning].)
func TestNew_UnknownNames(t *testing.T) {
	registerLearner(t, unstableLearner{})
	for _, c := range []struct {
		name     string
		methods  []string
		learners []string
		want     string
	}{
		{"method", []string{"stability", "oracle"}, nil, `ext.toml:18: tuning.methods[1]: unknown method "oracle" (known: stability, alphaSplit, dataSplit, random, control)`},
		{"method twice", []string{"random", "random"}, nil, `ext.toml:18: tuning.methods[1]: method "random" listed twice`},
		{"learner", []string{"random"}, []string{"objective-perturbation", "nope"}, `ext.toml:15: tuning.learners[1]: unknown learner "nope" (known: objective-perturbation, output-perturbation, non-private, unstable)`},
		{"learner twice", []string{"random"}, []string{"unstable", "unstable"}, `ext.toml:15: tuning.learners[1]: learner "unstable" listed twice`},
		{"stability needs constants", []string{"random", "stability"}, []string{"unstable"}, `ext.toml:18: tuning.methods[1]: method "stability" needs the stability constants of Definition 2 (Chaudhuri & Vinterbo 2013), which learner "unstable" does not have`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := parseExt(t, "")
			tuningOf(s).Methods, tuningOf(s).Learners = c.methods, c.learners
			_, err := New(s, Options{})
			if err == nil || err.Error() != c.want {
				t.Errorf("err = %v\nwant %s", err, c.want)
			}
		})
	}
}

// TestNew_ConfigureError: the built-in learner reads its variant from the
// spec; a loss it does not have (set in code here: section validation
// refuses it in a file) is an error at its entry of tuning.learners naming
// the key it refuses. A registered
// learner whose Configure returns a plain error is reported at its entry
// of tuning.learners, named once.
func TestNew_ConfigureError(t *testing.T) {
	s := parseExt(t, "")
	tuningOf(s).Loss = "hinge"
	_, err := New(s, Options{})
	if want := `ext.toml:15: tuning.learners (default): learner "objective-perturbation": tuning.loss: learner objective-perturbation has no loss "hinge" (want logistic or huber)`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}

	registerLearner(t, refusingLearner{})
	s = parseExt(t, `learners = ["refuses"]`)
	_, err = New(s, Options{})
	if want := `ext.toml:19: tuning.learners[0]: learner "refuses": needs tuning.loss = "huber"`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	// Through the registry of kinds, as the command builds it: the same
	// message, not prefixed with the spec id again.
	_, err = testKinds.New(s, Options{})
	if want := `ext.toml:19: tuning.learners[0]: learner "refuses": needs tuning.loss = "huber"`; err == nil || err.Error() != want {
		t.Errorf("Registry.New: err = %v, want %s", err, want)
	}
}

// refusingLearner refuses every spec in Configure, with a plain error.
type refusingLearner struct{ unstableLearner }

func (refusingLearner) Name() string { return "refuses" }
func (refusingLearner) Configure(learners.Config) (learners.Learner, error) {
	return nil, errors.New(`needs tuning.loss = "huber"`)
}

// TestHist_RefusesUnknownMethod: the histogram kind used to book any
// method it did not name as Control ("default: control", not private); it
// now refuses an unknown name when it loads the spec, and a learners key.
func TestHist_RefusesUnknownMethod(t *testing.T) {
	s, err := experiments.Parse("hist.toml", []byte(histSpecSrc), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	tuningOf(s).Methods = []string{"control", "oracle"}
	if _, err := NewHist(s, Options{}); err == nil || !strings.Contains(err.Error(), `tuning.methods[1]: unknown method "oracle"`) {
		t.Errorf("unknown method: err = %v", err)
	}
	tuningOf(s).Methods, tuningOf(s).Learners = []string{"control"}, []string{"objective-perturbation"}
	if _, err := NewHist(s, Options{}); err == nil || !strings.Contains(err.Error(), "tuning.learners: the histogram-tuning kind has one learner") {
		t.Errorf("learners: err = %v", err)
	}
}

// firstSelector releases the first candidate trained on all of T at α: a
// data-independent choice, α-DP.
type firstSelector struct {
	planEps func(b selection.Budget) float64 // the ε its Plan claims for training
}

func (firstSelector) Name() string { return "first" }
func (s firstSelector) Select(_ context.Context, rng *rand.Rand, c selection.Candidates, b selection.Budget) (selection.Outcome, error) {
	f, err := c.Train(rng, 0, learners.Level{Epsilon: b.Alpha}, 0, 1)
	if err != nil {
		return selection.Outcome{}, err
	}
	a, err := s.account(f.Guarantee)
	return selection.Outcome{Index: 0, Fit: f, Fits: 1, Account: a}, err
}
func (s firstSelector) Plan(b selection.Budget, _ int, _ selection.Terms) (selection.Account, error) {
	return s.account(privacy.EpsDP(s.planEps(b), "the first candidate"))
}
func (firstSelector) account(g privacy.Guarantee) (selection.Account, error) {
	return selection.Compose(privacy.Sequential, "one fit", selection.Charge{Part: selection.Training, Data: "T", Guarantee: g})
}

// TestHist_RegisteredSelector: a registered selector runs in the
// histogram kind with its own guarantee (private, ε = α), where the old
// switch would have booked it non-private; a selector whose Plan
// disagrees with what its runs delivered fails the unit.
func TestHist_RegisteredSelector(t *testing.T) {
	src := strings.Replace(histSpecSrc, `attributes = [{ dataset = "adult", column = "age", lo = 0.0, hi = 100.0 }]`, "", 1)
	s, err := experiments.Parse("hist.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	sel := &firstSelector{planEps: func(b selection.Budget) float64 { return b.Alpha }}
	registerSelector(t, sel)
	tuningOf(s).Methods = []string{"first"}
	e, err := NewHist(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	key := unitKeys(e)[0]
	rows, err := runner.RunKey(context.Background(), e, key)
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r["method"] != "first" || r["private"] != "true" || r.Float("eps_total") != r.Float("alpha") || r.Float("eps_train") != r.Float("alpha") || r["index"] != "1" {
		t.Errorf("row %v: want method first, private, eps_train = eps_total = alpha, index 1", r)
	}
	led := e.Ledger(rows)
	if len(led) != 1 || led[0].Method != "first" || !led[0].Total.Private || float64(led[0].Total.Epsilon) != r.Float("alpha") {
		t.Errorf("ledger %+v", led)
	}

	sel.planEps = func(b selection.Budget) float64 { return b.Alpha / 2 } // a plan that understates
	if _, err := runner.RunKey(context.Background(), e, key); err == nil || !strings.Contains(err.Error(), "training charge: plan ε=") {
		t.Errorf("understating plan: err = %v", err)
	}
}

// TestFakeLearner_RowsAndLedger runs a registered zero-noise learner whose
// fits are (2ε, 1e-6)-DP beside the built-in one, and checks that its
// guarantee reaches the rows and the ledger composed as each method's
// theorem says.
func TestFakeLearner_RowsAndLedger(t *testing.T) {
	registerLearner(t, fakeLearner{})
	s := parseExt(t, `learners = ["objective-perturbation", "fake-double"]`)
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.Columns(), LearnerColumns) {
		t.Errorf("columns %v", e.Columns())
	}
	// datasets × alphas × methods × learners × repetitions × folds
	if got := len(e.Units()); got != 1*1*5*2*1*4 {
		t.Errorf("%d units", got)
	}
	var all []results.Row
	for _, key := range unitKeys(e) {
		rows, err := runner.RunKey(context.Background(), e, key)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		all = append(all, rows...)
	}
	const alpha, k, delta, fitDelta = 2.0, 3.0, 0.01, 1e-6
	// (eps_train, delta_train, eps_tuning, delta_tuning, eps_total, delta):
	// each fit at level ε is (2ε, 1e-6)-DP.
	want := map[string][6]float64{
		"stability":  {alpha, fitDelta, alpha / 2, delta, 1.5 * alpha, delta + fitDelta}, // Theorem 2: final fit + (α/2, δ)
		"alphaSplit": {2 * alpha, k * fitDelta, alpha, 0, 2 * alpha, k * fitDelta},       // Σ of k fits at α/k; max with α
		"dataSplit":  {2 * alpha, fitDelta, alpha, 0, 2 * alpha, fitDelta},               // max of k fits at α on disjoint parts
		"random":     {2 * alpha, fitDelta, 0, 0, 2 * alpha, fitDelta},                   // one fit
		"control":    {k * 2 * alpha, k * fitDelta, math.Inf(1), 0, math.Inf(1), 0},      // not private
	}
	cols := []string{"eps_train", "delta_train", "eps_tuning", "delta_tuning", "eps_total", "delta"}
	seen := map[string]bool{}
	for _, r := range all {
		method, learner, ok := strings.Cut(r["method"], "/")
		if !ok || learner != r["learner"] {
			t.Fatalf("method %q, learner %q: want label <method>/<learner>", r["method"], r["learner"])
		}
		seen[learner] = true
		if learner == "objective-perturbation" {
			// CMS11 delivers the ε it is handed: as before the key existed.
			if method != "control" && math.Abs(r.Float("eps_total")-alpha) > 1e-12 {
				t.Errorf("%s: eps_total %v", r["unit"], r.Float("eps_total"))
			}
			continue
		}
		w := want[method]
		for i, col := range cols {
			if got := r.Float(col); !(got == w[i] || math.Abs(got-w[i]) <= 1e-12*math.Abs(w[i])) {
				t.Errorf("%s: %s = %v, want %v", r["unit"], col, got, w[i])
			}
		}
		if (r["private"] == "true") != (method != "control") {
			t.Errorf("%s: private %s", r["unit"], r["private"])
		}
		// Each fit returns (2ε, 1e-6) for a level of ε: over it, flagged.
		if !strings.HasPrefix(r["status"], "warning: learner fake-double returned (ε=") || !strings.Contains(r["status"], "fits over their level)") {
			t.Errorf("%s: status %q does not flag the fits over their level", r["unit"], r["status"])
		}
		if r["solver_status"] != "" || !math.IsNaN(r.Float("eps_prime")) {
			t.Errorf("%s: a model without a Reporter has solver_status %q, eps_prime %v", r["unit"], r["solver_status"], r["eps_prime"])
		}
	}
	if !seen["fake-double"] || !seen["objective-perturbation"] {
		t.Errorf("learners seen: %v", seen)
	}
	for _, le := range e.Ledger(all) {
		method, learner, _ := strings.Cut(le.Method, "/")
		if learner != "fake-double" {
			continue
		}
		w := want[method]
		if eps, d := float64(le.Total.Epsilon), float64(le.Total.Delta); !(eps == w[4] || math.Abs(eps-w[4]) <= 1e-12*w[4]) || math.Abs(d-w[5]) > 1e-15 {
			t.Errorf("ledger %s: total (%v, %v), want (%v, %v)", le.Method, eps, d, w[4], w[5])
		}
		for _, c := range le.Components {
			i := map[string]int{"training": 0, "tuning": 2}[c.Part]
			if eps := float64(c.Epsilon); !(eps == w[i] || math.Abs(eps-w[i]) <= 1e-12*w[i]) || math.Abs(float64(c.Delta)-w[i+1]) > 1e-15 {
				t.Errorf("ledger %s: %s charge (%v, %v), want (%v, %v)", le.Method, c.Part, c.Epsilon, c.Delta, w[i], w[i+1])
			}
			if c.Part == "training" && !strings.Contains(c.Release, "fake-double fit") {
				t.Errorf("ledger %s: %s charge release %q does not name the learner", le.Method, c.Part, c.Release)
			}
			// The notion of what was booked: (ε, δ) when δ > 0, pure ε
			// otherwise, none for Control's argmax.
			notion := "pure-dp"
			switch {
			case method == "control" && c.Part == "tuning":
				notion = "none"
			case float64(c.Delta) > 0:
				notion = "approx-dp"
			}
			if c.Notion != notion || c.Rho != nil {
				t.Errorf("ledger %s: %s charge notion %q (ρ %v), want %q", le.Method, c.Part, c.Notion, c.Rho, notion)
			}
		}
	}
}

// TestSelectors_HandLevels checks, with a recording learner, the level
// and data each built-in method hands the learner (Chaudhuri & Vinterbo
// 2013, Section 5): Stability k + 1 fits at α/2 on T (α₁ = α/2),
// alphaSplit k fits at α/k on T, dataSplit k fits at α on disjoint parts
// of T, Random one fit at α, Control k fits at α; δ = 0 throughout.
func TestSelectors_HandLevels(t *testing.T) {
	var mu sync.Mutex
	var calls []call
	registerLearner(t, recordingLearner{&mu, &calls})
	e, err := New(parseExt(t, `learners = ["recorder"]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lambdas := e.spec.Tuning.Lambdas
	const alpha = 2.0
	k := len(lambdas)
	for _, method := range selection.Names() {
		t.Run(method, func(t *testing.T) {
			calls = nil
			key := fmt.Sprintf("magic/alpha=2/%s/recorder/rep=1/fold=1", method)
			rows, err := runner.RunKey(context.Background(), e, key)
			if err != nil {
				t.Fatal(err)
			}
			nT := int(rows[0].Float("n_train"))
			chosen := lambdas[int(rows[0].Float("index"))-1]
			want := func(n int, eps float64, allT bool) {
				t.Helper()
				if len(calls) != n {
					t.Fatalf("%d fits, want %d", len(calls), n)
				}
				for j, c := range calls {
					if math.Abs(c.level.Epsilon-eps) > 1e-15 || c.level.Delta != 0 {
						t.Errorf("fit %d: level %+v, want ε = %v, δ = 0", j, c.level, eps)
					}
					if allT && c.n != nT {
						t.Errorf("fit %d on %d rows, want all %d of T", j, c.n, nT)
					}
				}
			}
			switch method {
			case "stability":
				want(k+1, alpha/2, true)
				for j := range k {
					if calls[j].lambda != lambdas[j] {
						t.Errorf("Validate fit %d at lambda %v", j, calls[j].lambda)
					}
				}
				if calls[k].lambda != chosen {
					t.Errorf("final fit at lambda %v, chose %v", calls[k].lambda, chosen)
				}
			case "alphaSplit":
				want(k, alpha/float64(k), true)
			case "dataSplit":
				want(k, alpha, false)
				sum := 0
				for j, c := range calls {
					sum += c.n
					if c.n < nT/k || c.n > nT/k+1 || c.lambda != lambdas[j] {
						t.Errorf("fit %d: lambda %v on %d rows, want lambda %v on a part of %d/%d", j, c.lambda, c.n, lambdas[j], nT, k)
					}
				}
				if sum != nT {
					t.Errorf("parts hold %d rows, T %d", sum, nT)
				}
			case "random":
				want(1, alpha, true)
				if calls[0].lambda != chosen {
					t.Errorf("fit at lambda %v, chose %v", calls[0].lambda, chosen)
				}
			case "control":
				want(k, alpha, true)
			default:
				t.Fatalf("no expectation for %s", method)
			}
			if got := int(rows[0].Float("fits")); got != len(calls) {
				t.Errorf("fits column %d, learner called %d times", got, len(calls))
			}
		})
	}
}

// fakeCandidates deliver, for candidate i at level ε, a pure guarantee
// ε·(1 + i/10) + 0.001 (over-delivering, like the privatelr-1.1-69 variant), or
// exactly ε when exact; scores and error counts are fixed and no noise is
// drawn.
type fakeCandidates struct {
	k     int
	exact bool
}

func (c *fakeCandidates) K() int                                          { return c.k }
func (c *fakeCandidates) Terms() selection.Terms                          { return classifierTerms("fake") }
func (c *fakeCandidates) Split(*rand.Rand, int) error                     { return nil }
func (c *fakeCandidates) StabilityBeta(float64, float64) (float64, error) { return 0.01, nil }
func (c *fakeCandidates) Train(_ *rand.Rand, i int, level learners.Level, _, _ int) (selection.Fit, error) {
	eps := level.Epsilon
	if !c.exact {
		eps = level.Epsilon*(1+float64(i)/10) + 0.001
	}
	return selection.Fit{Index: i, Level: level, Guarantee: privacy.EpsDP(eps, "fake"), Score: float64(i), Errors: float64(c.k - i)}, nil
}

// oldClassifier is the accounting the cv-tuning kind did by method name
// before the extension points (cvtune.go at commit e7254e9): delivered
// values in training order.
func oldClassifier(method string, alpha, delta float64, delivered []float64, final float64) columns {
	var sum, mx float64
	for _, d := range delivered {
		sum += d
		mx = math.Max(mx, d)
	}
	switch method {
	case "stability":
		return columns{train: final, tuning: alpha / 2, delta: delta, total: final + alpha/2, private: true}
	case "alphaSplit":
		return columns{train: sum, tuning: alpha, total: math.Max(sum, alpha), private: true}
	case "dataSplit":
		return columns{train: mx, tuning: alpha, total: math.Max(mx, alpha), private: true}
	case "random":
		return columns{train: final, total: final, private: true}
	}
	return columns{train: sum, tuning: math.Inf(1), total: math.Inf(1)}
}

// oldHistogram is the histogram kind's accounting by method name before
// the extension points (histogram.go at commit e7254e9).
func oldHistogram(method string, alpha, delta float64, k int) columns {
	switch method {
	case "stability":
		return columns{train: alpha / 2, tuning: alpha / 2, delta: delta, total: alpha, private: true}
	case "alphaSplit", "dataSplit":
		return columns{train: alpha, tuning: alpha, total: alpha, private: true}
	case "random":
		return columns{train: alpha, total: alpha, private: true}
	}
	return columns{train: float64(k) * alpha, tuning: math.Inf(1), total: math.Inf(1)}
}

// TestAccount_OldValues: the columns composed from the built-in
// selectors' Accounts equal, bit for bit, what the name switches computed
// — for the cv-tuning kind from the delivered guarantees (also when fits
// deliver more than they are handed), for the histogram kind from Plan —
// and the histogram's delivered Accounts agree with the plans.
func TestAccount_OldValues(t *testing.T) {
	const delta = 0.01
	for _, method := range selection.Names() {
		sel, _ := selection.Lookup(method)
		for _, k := range []int{1, 3, 7, 10} {
			for _, alpha := range []float64{0.1, 0.3, 0.5, 1, 2, 3, 5, 7.3, 1000} {
				name := fmt.Sprintf("%s/k=%d/alpha=%v", method, k, alpha)
				b := selection.Budget{Alpha: alpha, Delta: delta}
				rng := rand.New(rand.NewPCG(1, 2))
				c := &fakeCandidates{k: k}
				var delivered []float64
				rec := &recordingCandidates{Candidates: c, eps: &delivered}
				s, err := sel.Select(context.Background(), rng, rec, b)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got, err := accountColumns(s.Account)
				if err != nil {
					t.Fatal(err)
				}
				want := oldClassifier(method, alpha, delta, delivered, s.Fit.Guarantee.Epsilon)
				if got.train != want.train || got.tuning != want.tuning || got.delta != want.delta || got.total != want.total || got.private != want.private {
					t.Errorf("%s: delivered columns %+v, old %+v", name, got, want)
				}

				plan, err := sel.Plan(b, k, histTerms)
				if err != nil {
					t.Fatal(err)
				}
				got, _ = accountColumns(plan)
				want = oldHistogram(method, alpha, delta, k)
				if got.train != want.train || got.tuning != want.tuning || got.delta != want.delta || got.total != want.total || got.private != want.private {
					t.Errorf("%s: planned columns %+v, old histogram %+v", name, got, want)
				}
				exact, err := sel.Select(context.Background(), rand.New(rand.NewPCG(1, 2)), &fakeCandidates{k: k, exact: true}, b)
				if err != nil {
					t.Fatal(err)
				}
				if err := agree(plan, exact.Account); err != nil {
					t.Errorf("%s: exact runs disagree with the plan: %v", name, err)
				}
			}
		}
	}
}

// recordingCandidates record the ε each fit delivered, in order.
type recordingCandidates struct {
	selection.Candidates
	eps *[]float64
}

func (r *recordingCandidates) Train(rng *rand.Rand, i int, level learners.Level, part, parts int) (selection.Fit, error) {
	f, err := r.Candidates.Train(rng, i, level, part, parts)
	*r.eps = append(*r.eps, f.Guarantee.Epsilon)
	return f, err
}

// tuningOf returns the [tuning] table of a parsed cv-tuning or
// histogram-tuning spec.
func tuningOf(s *experiments.Spec) *TuningSpec {
	switch sec := s.Section.(type) {
	case *Section:
		return &sec.Tuning
	case *HistSection:
		return &sec.Tuning
	}
	panic("not a tuning spec")
}

// levelLearner returns, for a fit at level, the guarantee give(level): a
// zero-noise learner for the level checks.
type levelLearner struct {
	name string
	give func(l learners.Level) privacy.Guarantee
}

func (l levelLearner) Name() string { return l.name }
func (l levelLearner) Fit(_ context.Context, _ *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	return meanDiff(train, lambda), l.give(level), nil
}

// TestLearner_OverLevel: a learner whose guarantee exceeds the level it
// was handed is booked as returned (rows, ledger) and flagged in the row's
// status, the manifest's warnings and stderr; rounding within 1e-9 of the
// level is not flagged; a guarantee that cannot be compared with a level
// fails the unit, naming the learner.
func TestLearner_OverLevel(t *testing.T) {
	over := levelLearner{"over-eps", func(l learners.Level) privacy.Guarantee { return privacy.EpsDP(1.5*l.Epsilon, "over") }}
	overDelta := levelLearner{"over-delta", func(l learners.Level) privacy.Guarantee { return privacy.EpsDeltaDP(l.Epsilon, 1e-6, "δ") }}
	rounding := levelLearner{"rounding", func(l learners.Level) privacy.Guarantee { return privacy.EpsDP(l.Epsilon*(1+1e-12), "rounded") }}
	for _, l := range []learners.Learner{over, overDelta, rounding,
		levelLearner{"not-private", func(learners.Level) privacy.Guarantee { return privacy.NonPrivate("no noise") }},
		levelLearner{"ex-post", func(l learners.Level) privacy.Guarantee { return privacy.ExPostEps(l.Epsilon, "realised") }},
		levelLearner{"zcdp", func(l learners.Level) privacy.Guarantee { return privacy.Rho(l.Epsilon*l.Epsilon/2, "ρ") }},
	} {
		registerLearner(t, l)
	}
	s := parseExt(t, `learners = ["over-eps", "over-delta", "rounding", "not-private", "ex-post", "zcdp"]`)
	tuningOf(s).Methods = []string{"random", "alphaSplit"}
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := func(method, learner string) ([]results.Row, error) {
		return runner.RunKey(context.Background(), e, fmt.Sprintf("magic/alpha=2/%s/%s/rep=1/fold=1", method, learner))
	}
	// α = 2, k = 3: random fits once at ε = 2, alphaSplit 3 times at 2/3.
	for _, c := range []struct {
		method, learner string
		status          string
		epsTrain        float64
		deltaTrain      float64
	}{
		{"random", "over-eps", "warning: learner over-eps returned ε=3 for a level of ε=2 (1 of 1 fits over their level)", 3, 0},
		{"alphaSplit", "over-eps", "warning: learner over-eps returned ε=1 for a level of ε=0.6666666666666666 (3 of 3 fits over their level)", 3, 0},
		{"random", "over-delta", "warning: learner over-delta returned (ε=2, δ=1e-06) for a level of ε=2 (1 of 1 fits over their level)", 2, 1e-6},
		{"random", "rounding", "ok", 2 * (1 + 1e-12), 0},
	} {
		rows, err := run(c.method, c.learner)
		if err != nil {
			t.Fatalf("%s/%s: %v", c.method, c.learner, err)
		}
		r := rows[0]
		if r["status"] != c.status {
			t.Errorf("%s/%s: status\n%q, want\n%q", c.method, c.learner, r["status"], c.status)
		}
		// Booked as returned: 1e-12 relative covers ε summed over the fits.
		if got := r.Float("eps_train"); math.Abs(got-c.epsTrain) > 1e-12*c.epsTrain || r.Float("delta_train") != c.deltaTrain {
			t.Errorf("%s/%s: eps_train %v, delta_train %v; want %v, %v", c.method, c.learner, got, r.Float("delta_train"), c.epsTrain, c.deltaTrain)
		}
	}
	for _, c := range []struct{ learner, want string }{
		{"not-private", "learner not-private returned a non-private release for the level ε=2: a learner must release under the level it is handed"},
		{"ex-post", "learner ex-post returned ex-post ε=2 for the level ε=2: only an ε or (ε, δ) guarantee can be checked against a level and composed by the selection methods"},
		{"zcdp", "learner zcdp returned ρ=2 for the level ε=2: a pure ε level, and ρ-zCDP implies an ε only at a δ > 0; " +
			"give the training budget a δ (tuning.train_delta, comparison.delta), at which each fit's ρ is stated as (ε, δ), or return pure ε-DP guarantees (docs/worker-protocol.md)"},
	} {
		if _, err := run("random", c.learner); err == nil || err.Error() != c.want {
			t.Errorf("%s: err = %v\nwant %s", c.learner, err, c.want)
		}
	}

	// A whole run of the over-eps learner: the manifest's warnings and
	// stderr say what the rows say; the ledger books ε = 3.
	s = parseExt(t, `learners = ["over-eps"]`)
	tuningOf(s).Methods = []string{"random"}
	e, err = New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 1, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	const want = "method random/over-eps: 4 of 4 rows have fits over their level, e.g. learner over-eps returned ε=3 for a level of ε=2 (1 of 1 fits over their level); eps_*, delta_* and the ledger book what the learner returned"
	if !slices.Contains(m.Warnings, want) {
		t.Errorf("manifest warnings %q\nwant %q", m.Warnings, want)
	}
	if !strings.Contains(stderr.String(), "dprepro: ext: WARNING: "+want+"\n") {
		t.Errorf("stderr %q does not warn", stderr.String())
	}
	if len(m.Ledger) != 1 || float64(m.Ledger[0].Total.Epsilon) != 3 || float64(m.Ledger[0].Components[0].Epsilon) != 3 {
		t.Errorf("ledger %+v: want the training charge and the total booked at ε = 3", m.Ledger)
	}
	// The figures ring the points over their level and say, in the
	// legend, the notion and whose word it is.
	svg, err := os.ReadFile(filepath.Join(dir, "figures", "fig1a-auc.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"random/over-eps — pure ε-DP; declared by the method", learners.OverLevelLabel} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("fig1a-auc.svg lacks %q", want)
		}
	}
}

// TestLearner_UnderLevel: a learner whose guarantee is below the level it
// was handed (ε/100, or ε = 0 for a private level) gets the warning an
// over-level one gets — the row's status, the manifest's warnings and
// stderr — and is booked at the level, which is what the protocol spends:
// random's one fit at α = 2 books 2, alphaSplit's k = 3 fits at 2/3 book
// 2 (Theorem 5), whatever the learner claimed. The ledger's training
// charge shows the claim beside the booking, and names the learner as
// declared (a learner registered by a test is not a built-in).
func TestLearner_UnderLevel(t *testing.T) {
	hundredth := levelLearner{"hundredth", func(l learners.Level) privacy.Guarantee { return privacy.EpsDP(l.Epsilon/100, "a hundredth") }}
	zero := levelLearner{"zero", func(learners.Level) privacy.Guarantee { return privacy.EpsDP(0, "nothing") }}
	exact := levelLearner{"exact", func(l learners.Level) privacy.Guarantee { return privacy.EpsDP(l.Epsilon, "the level") }}
	for _, l := range []learners.Learner{hundredth, zero, exact} {
		registerLearner(t, l)
	}
	s := parseExt(t, `learners = ["hundredth", "zero", "exact"]`)
	tuningOf(s).Methods = []string{"random", "alphaSplit"}
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, learner, status string
	}{
		{"random", "hundredth", "warning: learner hundredth returned ε=0.02 below its level of ε=2 (1 of 1 fits below their level)"},
		{"alphaSplit", "hundredth", "warning: learner hundredth returned ε=0.006666666666666666 below its level of ε=0.6666666666666666 (3 of 3 fits below their level)"},
		{"random", "zero", "warning: learner zero returned ε=0 below its level of ε=2 (1 of 1 fits below their level)"},
		{"alphaSplit", "exact", "ok"},
	} {
		rows, err := runner.RunKey(context.Background(), e, fmt.Sprintf("magic/alpha=2/%s/%s/rep=1/fold=1", c.method, c.learner))
		if err != nil {
			t.Fatalf("%s/%s: %v", c.method, c.learner, err)
		}
		r := rows[0]
		if r["status"] != c.status {
			t.Errorf("%s/%s: status\n%q, want\n%q", c.method, c.learner, r["status"], c.status)
		}
		// Booked at the level: 2 in all (alphaSplit: 3 × 2/3, to rounding).
		for _, col := range []string{"eps_train", "eps_total"} {
			if got := r.Float(col); math.Abs(got-2) > 1e-12 {
				t.Errorf("%s/%s: %s = %v, want the level 2", c.method, c.learner, col, got)
			}
		}
	}

	// A whole run: the manifest's warnings and stderr say what the rows
	// say; the ledger books α = 2 with the claim beside it.
	s = parseExt(t, `learners = ["hundredth"]`)
	tuningOf(s).Methods = []string{"random"}
	e, err = New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 1, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	const want = "method random/hundredth: 4 of 4 rows have fits below their level, e.g. learner hundredth returned ε=0.02 below its level of ε=2 (1 of 1 fits below their level); eps_*, delta_* and the ledger book the level, which is what the protocol spends"
	if !slices.Contains(m.Warnings, want) {
		t.Errorf("manifest warnings %q\nwant %q", m.Warnings, want)
	}
	if !strings.Contains(stderr.String(), "dprepro: ext: WARNING: "+want+"\n") {
		t.Errorf("stderr %q does not warn", stderr.String())
	}
	if len(m.Ledger) != 1 || float64(m.Ledger[0].Total.Epsilon) != 2 || len(m.Ledger[0].Components) != 1 {
		t.Fatalf("ledger %+v: want one training charge and the total booked at ε = 2", m.Ledger)
	}
	ch := m.Ledger[0].Components[0]
	const claim = "learner hundredth returned ε=0.02 below its level of ε=2 in 4 of 4 rows; booked at the level"
	if float64(ch.Epsilon) != 2 || ch.Claimed != claim || ch.DeclaredBy != "hundredth" {
		t.Errorf("training charge %+v\nwant ε = 2, claimed %q, declared by hundredth", ch, claim)
	}
}

// TestCheckLevel is the comparison itself, both ways, at the tolerance's
// edges, with what it books: the larger of the guarantee and the level.
func TestCheckLevel(t *testing.T) {
	t.Parallel()
	pure := learners.Level{Epsilon: 1}
	approx := learners.Level{Epsilon: 1, Delta: 1e-5}
	for _, c := range []struct {
		name        string
		g           privacy.Guarantee
		level       learners.Level
		over, under bool
		note        string
		booked      privacy.Guarantee
		wantErr     bool
	}{
		{"exact", privacy.EpsDP(1, ""), pure, false, false, "", privacy.EpsDP(1, ""), false},
		{"below", privacy.EpsDP(0.5, ""), pure, false, true, "learner l returned ε=0.5 below its level of ε=1", privacy.EpsDP(1, ""), false},
		{"zero", privacy.EpsDP(0, ""), pure, false, true, "learner l returned ε=0 below its level of ε=1", privacy.EpsDP(1, ""), false},
		{"rounding", privacy.EpsDP(1+1e-10, ""), pure, false, false, "", privacy.EpsDP(1+1e-10, ""), false},
		{"rounding below", privacy.EpsDP(1-1e-10, ""), pure, false, false, "", privacy.EpsDP(1-1e-10, ""), false},
		{"over by 1e-8", privacy.EpsDP(1+1e-8, ""), pure, true, false, "learner l returned ε=1.00000001 for a level of ε=1", privacy.EpsDP(1+1e-8, ""), false},
		{"delta for a pure level", privacy.EpsDeltaDP(1, 1e-12, ""), pure, true, false, "learner l returned (ε=1, δ=1e-12) for a level of ε=1", privacy.EpsDeltaDP(1, 1e-12, ""), false},
		{"delta within", privacy.EpsDeltaDP(1, 1e-5, ""), approx, false, false, "", privacy.EpsDeltaDP(1, 1e-5, ""), false},
		{"delta over", privacy.EpsDeltaDP(1, 2e-5, ""), approx, true, false, "learner l returned (ε=1, δ=2e-05) for a level of (ε=1, δ=1e-05)", privacy.EpsDeltaDP(1, 2e-5, ""), false},
		{"delta below", privacy.EpsDeltaDP(1, 1e-7, ""), approx, false, true, "learner l returned (ε=1, δ=1e-07) below its level of (ε=1, δ=1e-05)", privacy.EpsDeltaDP(1, 1e-5, ""), false},
		{"pure for an approx level", privacy.EpsDP(1, ""), approx, false, false, "", privacy.EpsDP(1, ""), false},
		{"not private", privacy.NonPrivate(""), pure, false, false, "", privacy.Guarantee{}, true},
		{"ex-post", privacy.ExPostEps(0.1, ""), pure, false, false, "", privacy.Guarantee{}, true},
		// ρ = 0.01 at δ = 1e-5: ε = 0.01 + 2√(0.01·ln 1e5) ≈ 0.6886, below
		// ε = 1 (booked at the level); ρ = 0.1 gives 0.1 + 2√(0.1·ln 1e5)
		// ≈ 2.24597, over it
		// (booked as stated); at a pure level ρ cannot be checked.
		{"zcdp below", privacy.Rho(0.01, ""), approx, false, true, "learner l returned (ε=0.6886140424415113, δ=1e-05) below its level of (ε=1, δ=1e-05)", privacy.EpsDeltaDP(1, 1e-5, ""), false},
		{"zcdp over", privacy.Rho(0.1, ""), approx, true, false, "learner l returned (ε=2.2459660262893473, δ=1e-05) for a level of (ε=1, δ=1e-05)", privacy.EpsDeltaDP(2.2459660262893473, 1e-5, ""), false},
		{"zcdp at a pure level", privacy.Rho(0.01, ""), pure, false, false, "", privacy.Guarantee{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := learners.CheckLevel("l", c.g, c.level)
			if got.Over != c.over || got.Under != c.under || (err != nil) != c.wantErr || got.Note != c.note {
				t.Errorf("CheckLevel(%v, %v) = %+v, %v; want over %v, under %v, note %q, error %v", c.g, c.level, got, err, c.over, c.under, c.note, c.wantErr)
			}
			if b := got.Booked; b.Notion != c.booked.Notion || b.Epsilon != c.booked.Epsilon || b.Delta != c.booked.Delta {
				t.Errorf("booked %+v, want %+v", b, c.booked)
			}
			if over, under := learners.LevelNotes(learners.RowStatus(got.Note)); (over != "") != (c.over && got.Note != "") || (under != "") != (c.under && !c.over) {
				t.Errorf("LevelNotes(%q) = %q, %q", learners.RowStatus(got.Note), over, under)
			}
		})
	}
}

// TestDeclaredBy: the built-in learners and selectors (configured for a
// spec or not) are the harness's own; a learner or selector a module
// registers is declared by itself, even under a built-in's type.
func TestDeclaredBy(t *testing.T) {
	for _, name := range []string{"objective-perturbation", "output-perturbation", "non-private"} {
		l, err := learners.Lookup(nil, name, learners.Config{Table: "tuning", Loss: "huber", HuberH: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		if d := learners.DeclaredBy(l); d != "" {
			t.Errorf("built-in %s: declared by %q", name, d)
		}
	}
	for _, name := range selection.Names() {
		s, _ := selection.Lookup(name)
		if d := selection.DeclaredBy(s); d != "" {
			t.Errorf("built-in selector %s: declared by %q", name, d)
		}
	}
	l := levelLearner{"mine", func(l learners.Level) privacy.Guarantee { return privacy.EpsDP(l.Epsilon, "") }}
	registerLearner(t, l)
	if d := learners.DeclaredBy(l); d != "mine" {
		t.Errorf("registered learner: declared by %q, want mine", d)
	}
	sel := renamed{selection.Random{}, "my-random"}
	registerSelector(t, sel)
	if d := selection.DeclaredBy(sel); d != "my-random" {
		t.Errorf("registered selector: declared by %q, want my-random", d)
	}
}

// renamed is a selector under another name.
type renamed struct {
	selection.Selector
	name string
}

func (n renamed) Name() string { return n.name }

// TestExternalLearner_ZCDPRefusedAtLoad: an external learner whose hello
// declares ρ-zCDP is refused when the spec loads with a pure training
// budget (tuning.train_delta = 0), at tuning.learners[i] and saying what
// to set, instead of failing every unit; with tuning.train_delta > 0 it
// loads (each fit's ρ is stated at its δ). (The worker is a shell script
// that answers the hello only.)
func TestExternalLearner_ZCDPRefusedAtLoad(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to run the fake worker")
	}
	script := filepath.Join(t.TempDir(), "zcdp-worker.sh")
	body := "read line\necho '{\"type\": \"hello\", \"protocol\": 1, \"serves\": \"learner\", \"privacy\": \"zcdp\"}'\ncat > /dev/null\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(extSpec, `learners = ["objective-perturbation", "zc"]`)
	src = strings.Replace(src, "[data]\n", fmt.Sprintf("[[methods]]\nname = \"zc\"\nserves = \"learner\"\ncommand = [%q, %q]\ntimeout = \"20s\"\n\n[data]\n", sh, script), 1)
	s, err := experiments.Parse("ext.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(s, Options{})
	if err == nil || !strings.Contains(err.Error(), "ext.toml:25: tuning.learners[1]: learner zc declares ρ-zCDP") || !strings.Contains(err.Error(), "set tuning.train_delta > 0") {
		t.Errorf("New: %v, want the zCDP learner refused at tuning.learners[1]", err)
	}
	src = strings.Replace(src, `methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]`, `methods = ["alphaSplit", "dataSplit", "random", "control"]`, 1)
	s, err = experiments.Parse("ext.toml", []byte(strings.Replace(src, "alphas = [2.0]", "alphas = [2.0]\ntrain_delta = 1e-6", 1)), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(s, Options{})
	if err != nil {
		t.Fatalf("New with tuning.train_delta: %v, want the zCDP learner accepted", err)
	}
	e.Close()
}
