package cicoverage

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// fixedWidth is a zero-noise fake: θ̃ is the non-private θ̂ and the interval
// θ̂[j] ± halfWidth, so its coverage (1) and length (2·halfWidth) are known.
// It claims a made-up (ε₁ + ε₂, 10⁻⁶)-DP cost so that the test can follow
// guarantee values through the kind: it tests plumbing, not privacy. It
// records the budgets it is given. lie makes its releases state another
// cost than Cost; mixed makes Cost uncomposable (zCDP with (ε, δ)).
type fixedWidth struct {
	name       string
	lie, mixed bool
	rec        *recorder
}

// halfWidth is the fake's half interval length. It always covers θ₀: with
// |f′| ≤ 1 and ‖x‖₂ ≤ 1 the minimizer of (1/n)Σ[f + c‖θ‖²] has
// ‖θ‖₂ ≤ 1/(2c) = 500 at c = 0.001 (stationarity: 2cθ = −(1/n)Σ f′·x), so
// |θ̂[j] − θ₀[j]| ≤ 1000.
const halfWidth = 1000

type recorder struct {
	mu       sync.Mutex
	budgets  []cimethods.Budget
	fitEps1s []float64
}

func (m fixedWidth) Name() string { return m.name }

func (m fixedWidth) Attributes() cimethods.Attributes {
	return cimethods.Attributes{Privacy: "fake", Perturbation: "zero-noise", Model: dpci.LR}
}

func (m fixedWidth) Cost(b cimethods.Budget) cimethods.Cost {
	second := privacy.EpsDeltaDP(b.Eps2, 1e-6, "the interval (test fake)")
	if m.mixed {
		second = privacy.Rho(b.Eps2, "the interval (test fake)")
	}
	return cimethods.Cost{Charges: []cimethods.Charge{
		{Part: "training", Guarantee: privacy.EpsDP(b.Eps1, "θ̂ (test fake)")},
		{Part: "interval", Guarantee: second},
	}, Rule: "test fake, sequential composition", Covers: "one interval of the test fake"}
}

func (m fixedWidth) fit(d cimethods.Data) ([]float64, error) {
	res, err := cimethods.Share(d.Shared, "test/hat", func() ([]float64, error) {
		r, err := dpci.FitNonPrivate(d.Rows, dpci.Params{Model: dpci.LR, C: d.Problem.C}, d.Problem.Fit)
		return r.W, err
	})
	return res, err
}

func (m fixedWidth) Interval(ctx context.Context, d cimethods.Data, b cimethods.Budget) (cimethods.Release, error) {
	if m.rec != nil {
		m.rec.mu.Lock()
		m.rec.budgets = append(m.rec.budgets, b)
		m.rec.mu.Unlock()
	}
	theta, err := m.fit(d)
	if err != nil {
		return cimethods.Release{}, err
	}
	iv := dpci.Interval{Lo: make([]float64, len(theta)), Hi: make([]float64, len(theta))}
	for j, v := range theta {
		iv.Lo[j], iv.Hi[j] = v-halfWidth, v+halfWidth
	}
	c := m.Cost(b)
	if m.lie {
		c = m.Cost(cimethods.Budget{Eps1: b.Eps1 / 2, Eps2: b.Eps2, Eps3: b.Eps3})
	}
	return cimethods.Release{Theta: theta, Interval: iv, Status: "ok", EpsilonPrime: math.NaN(), Cost: c}, nil
}

func (m fixedWidth) Fit(ctx context.Context, d cimethods.Data, eps1 float64) (cimethods.Estimate, error) {
	if m.rec != nil {
		m.rec.mu.Lock()
		m.rec.fitEps1s = append(m.rec.fitEps1s, eps1)
		m.rec.mu.Unlock()
	}
	theta, err := m.fit(d)
	if err != nil {
		return cimethods.Estimate{}, err
	}
	return cimethods.Estimate{Theta: theta, Status: "ok", EpsilonPrime: math.NaN()}, nil
}

var fakeRec = new(recorder)

// errFakes registers the fakes once per test binary (a variable
// initializer, as a user's module would).
var errFakes = errors.Join(
	cimethods.Register(fixedWidth{name: "test-fixed-lr", rec: fakeRec}),
	cimethods.Register(fixedWidth{name: "test-liar-lr", lie: true}),
	cimethods.Register(fixedWidth{name: "test-mixed-lr", mixed: true}),
)

// tinySpec is a one-value run on 400 Adult records (the labelled stand-in
// unless $DPREPRO_DATA holds the real file); its methods are replaced by
// the test.
const tinySpec = `schema = 1
id = "wkl-tiny"
kind = "ci-coverage"
seed = 3

[data]
datasets = ["adult"]
intercept = false

[confidence_intervals]
methods = ["dp-obj-lr"]
n1 = 400
d1 = 2
eps1 = 0.5
eps2 = 0.25
eps3 = 0.25
sweep = "eps1"
values = [0.5]
replicates = 3
mc_samples = 50
vi_fits = 4
block_size = 3

[output]
bootstrap = 100
`

// newWith loads tinySpec with methods, bypassing the spec's own name check
// (package experiments knows only the built-ins), as a module that
// registers a method would once spec validation asks the registry.
func newWith(t *testing.T, methods ...string) (*Experiment, error) {
	t.Helper()
	s, err := experiments.Parse("spec.toml", []byte(tinySpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	s.Section.(*Section).ConfidenceIntervals.Methods = methods
	return New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
}

// TestFakeMethod_ThroughKind runs a registered fake next to a built-in
// through the kind: its rows carry its attributes and its known interval,
// it receives the spec's budgets, and the manifest's ledger carries the
// guarantee values it states, composed.
func TestFakeMethod_ThroughKind(t *testing.T) {
	if errFakes != nil {
		t.Fatal(errFakes)
	}
	fakeRec.mu.Lock()
	fakeRec.budgets, fakeRec.fitEps1s = nil, nil // -count > 1
	fakeRec.mu.Unlock()
	e, err := newWith(t, "dp-obj-lr", "test-fixed-lr")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	checkTables(t, dir, e)
	b, err := os.ReadFile(filepath.Join(dir, "rows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var ci, vi int
	for _, r := range parseRows(t, b) {
		if r["method"] != "test-fixed-lr" {
			continue
		}
		if r["privacy"] != "fake" || r["perturbation"] != "zero-noise" || r["model"] != "lr" || r["status"] != "ok" {
			t.Errorf("row %v: want the fake's attributes and status ok", r)
		}
		switch r["row_type"] {
		case "ci":
			ci++
			// Length (θ+1000) − (θ−1000) = 2000 up to rounding of |θ| ≪ 1000.
			if r.Float("coverage") != 1 || math.Abs(r.Float("ci_length")-2*halfWidth) > 1e-9 {
				t.Errorf("coverage %s, length %s: want 1 and %d", r["coverage"], r["ci_length"], 2*halfWidth)
			}
		case "vi":
			vi++
			if !(r.Float("vi_length") > 0) {
				t.Errorf("VI length %s, want > 0 (bootstrap spread of θ̂)", r["vi_length"])
			}
		}
	}
	if ci != 3 || vi != 1 {
		t.Errorf("%d CI rows and %d VI rows, want 3 and 1", ci, vi)
	}
	fakeRec.mu.Lock()
	for _, got := range fakeRec.budgets {
		if got != (cimethods.Budget{Eps1: 0.5, Eps2: 0.25, Eps3: 0.25}) {
			t.Errorf("Interval got budget %+v, want the spec's (0.5, 0.25, 0.25)", got)
		}
	}
	for _, got := range fakeRec.fitEps1s {
		if got != 0.5 {
			t.Errorf("Fit got ε₁ = %v, want 0.5", got)
		}
	}
	if len(fakeRec.budgets) != 3 || len(fakeRec.fitEps1s) != 4 {
		t.Errorf("%d intervals and %d fits, want 3 and 4", len(fakeRec.budgets), len(fakeRec.fitEps1s))
	}
	fakeRec.mu.Unlock()

	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, le := range m.Ledger {
		if le.Method != "test-fixed-lr" {
			continue
		}
		found = true
		// (0.5-DP) then (0.25, 10⁻⁶)-DP compose to (0.75, 10⁻⁶)-DP.
		if le.Total != (results.PrivacyGuarantee{Notion: string(privacy.Approx), Epsilon: 0.75, Delta: 1e-6, Private: true}) {
			t.Errorf("ledger total %+v, want (0.75, 1e-06)", le.Total)
		}
		want := []results.LedgerCharge{
			{Part: "training", Release: "θ̂ (test fake)", Data: "D", Notion: string(privacy.Pure), Epsilon: 0.5, Private: true, DeclaredBy: "test-fixed-lr"},
			{Part: "interval", Release: "the interval (test fake)", Data: "D", Notion: string(privacy.Approx), Epsilon: 0.25, Delta: 1e-6, Private: true, DeclaredBy: "test-fixed-lr"},
		}
		if !slices.Equal(le.Components, want) {
			t.Errorf("ledger components %+v, want %+v", le.Components, want)
		}
		if le.Rule != "test fake, sequential composition" {
			t.Errorf("ledger rule %q", le.Rule)
		}
	}
	if !found {
		t.Error("no ledger entry for the fake")
	}
}

// TestNew_MethodErrors checks that an unknown or repeated method name is an
// error naming the key and the known methods, and that a method whose cost
// does not compose is refused before anything runs.
func TestNew_MethodErrors(t *testing.T) {
	if errFakes != nil {
		t.Fatal(errFakes)
	}
	cases := []struct {
		name    string
		methods []string
		want    []string
	}{
		{"unknown", []string{"dp-obj-lr", "dp-objective-lr"}, []string{`confidence_intervals.methods[1]: unknown method "dp-objective-lr"`, "known: dp-obj-lr, dp-obj-svm,", "test-fixed-lr"}},
		{"no default for a near name", []string{"DP-obj-lr"}, []string{`confidence_intervals.methods[0]: unknown method "DP-obj-lr"`}},
		{"duplicate", []string{"zcdp-output-svm", "zcdp-output-svm"}, []string{`confidence_intervals.methods[1]: duplicate method "zcdp-output-svm"`}},
		{"empty", nil, []string{"confidence_intervals.methods: must list at least one method"}},
		{"uncomposable cost", []string{"test-mixed-lr"}, []string{"method test-mixed-lr: cost:", "cannot compose zCDP"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := newWith(t, c.methods...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestRunUnit_CostMismatch checks that a release stating another cost than
// the ledger's fails the run.
func TestRunUnit_CostMismatch(t *testing.T) {
	e, err := newWith(t, "test-liar-lr")
	if err != nil {
		t.Fatal(err)
	}
	_, err = runner.RunKey(context.Background(), e, unitKeys(e)[0])
	if err == nil || !strings.Contains(err.Error(), "released under a cost other than") {
		t.Errorf("error %v, want a cost mismatch", err)
	}
}

// TestPaperFigures_Methods checks that the cross-run figures select the
// built-ins by attributes in the order they were drawn by name before
// (per model LR then SVM, the two compared sides), and not the fakes.
func TestPaperFigures_Methods(t *testing.T) {
	want := map[string][]string{
		"figure1-dp-vs-zcdp-obj":     {"dp-obj-lr", "zcdp-obj-lr", "dp-obj-svm", "zcdp-obj-svm"},
		"figure2-dp-vs-zcdp-output":  {"dp-output-lr", "zcdp-output-lr", "dp-output-svm", "zcdp-output-svm"},
		"figure3-obj-vs-output-dp":   {"dp-obj-lr", "dp-output-lr", "dp-obj-svm", "dp-output-svm"},
		"figure4-obj-vs-output-zcdp": {"zcdp-obj-lr", "zcdp-output-lr", "zcdp-obj-svm", "zcdp-output-svm"},
	}
	figs := PaperFigures()
	if len(figs) != len(want) {
		t.Fatalf("%d figures", len(figs))
	}
	for _, f := range figs {
		if !slices.Equal(f.Methods, want[f.Name]) {
			t.Errorf("%s: methods %v, want %v", f.Name, f.Methods, want[f.Name])
		}
	}
	if got := modelPanel(results.SummaryRow{Dataset: "adult", Method: "test-fixed-lr: ci_length"}); got != "adult, LR" {
		t.Errorf("modelPanel of the fake = %q, want %q", got, "adult, LR")
	}
}

// TestStreams_Resample checks that a method cannot draw from the
// replicate's own stream.
func TestStreams_Resample(t *testing.T) {
	st := streams(func(string) *rand.Rand { return nil })
	st("obj-fit")
	defer func() {
		if recover() == nil {
			t.Error("no panic for the resample stream")
		}
	}()
	st(resampleStep)
}

// TestLedger_ZCDPRecordsRho: a zCDP method's charges and total are
// recorded as ρ with their notion, not as an ε (Wang, Kifer & Lee 2019,
// Section 7: ρᵢ = εᵢ²/2, so ρ = 0.125, 0.03125, 0.03125 for the default
// budgets, 0.1875 composed); the DP method beside it keeps ε and no ρ.
func TestLedger_ZCDPRecordsRho(t *testing.T) {
	e, err := newWith(t, "zcdp-obj-lr", "dp-obj-lr")
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	for _, le := range e.Ledger(nil) {
		switch le.Method {
		case "zcdp-obj-lr":
			seen++
			for i, c := range le.Components {
				want := []float64{0.125, 0.03125, 0.03125}[i]
				if c.Notion != "zcdp" || c.Rho == nil || float64(*c.Rho) != want || !math.IsNaN(float64(c.Epsilon)) || c.Delta != 0 || !c.Private {
					t.Errorf("%s charge %d: %+v, want ρ = %v", le.Method, i, c, want)
				}
			}
			if tot := le.Total; tot.Notion != "zcdp" || tot.Rho == nil || float64(*tot.Rho) != 0.1875 || !math.IsNaN(float64(tot.Epsilon)) {
				t.Errorf("%s total %+v, want ρ = 0.1875", le.Method, tot)
			}
			b, err := json.Marshal(le.Components[0])
			if err != nil {
				t.Fatal(err)
			}
			if want := `"notion":"zcdp","epsilon":"nan","delta":0,"rho":0.125,"private":true}`; !strings.HasSuffix(string(b), want) {
				t.Errorf("JSON %s, want it to end in %s", b, want)
			}
		case "dp-obj-lr":
			seen++
			for _, c := range le.Components {
				if c.Notion != "pure-dp" || c.Rho != nil || !(c.Epsilon > 0) {
					t.Errorf("%s charge %+v: want pure ε and no ρ", le.Method, c)
				}
			}
			b, _ := json.Marshal(le.Total)
			if strings.Contains(string(b), "rho") {
				t.Errorf("DP total %s has a rho", b)
			}
		}
	}
	if seen == 0 {
		t.Error("no ledger entries")
	}
}
