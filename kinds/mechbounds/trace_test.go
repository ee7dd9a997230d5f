package mechbounds

import (
	"math"
	"slices"
	"testing"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/tracetest"
	"github.com/dprepro/dprepro/results"
)

// TestTrace_Builtin (issue 24) runs the built-in spec mechanisms.toml at
// the quick profile, shrunk to one replicate of 50 draws (every mechanism
// × ε, i.e. every ledger entry; a draw is one release, so the full
// profile's trace would hold ~10⁶ releases), with a privacy trace, and
// checks that each release spent, by the review's calibration of its noise
// (Nguyen 2019, Sections 3.1–3.4), exactly the ε (and δ) that the ledger
// charges one output of its mechanism at its ε.
func TestTrace_Builtin(t *testing.T) {
	s, err := experiments.Load("../../experiments/mechanisms.toml", "quick", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	s.Section.(*Section).Mechanisms.Replicates = 1
	s.Section.(*Section).Mechanisms.Draws = 50
	s.Output.Bootstrap = 20
	e, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	p := e.spec.Mechanisms
	run := tracetest.RunAll(t, e, 1)
	tracetest.CheckWellFormed(t, run.Releases)
	tracetest.CheckNoReplay(t, run.Releases, false)
	if got, want := e.Mechanisms(), tracetest.Mechanisms(run.Releases); !slices.Equal(got, want) {
		t.Errorf("Mechanisms() = %v, the trace drew %v", got, want)
	}
	// The ledger's charge per (mechanism, ε).
	charge := map[string]results.PrivacyGuarantee{}
	for _, le := range e.Ledger(run.Rows) {
		charge[le.Method+" "+le.Setting] = le.Total
	}
	if len(charge) != len(p.Mechanisms)*len(p.Epsilons) {
		t.Fatalf("ledger has %d entries for %d mechanisms × %d ε", len(charge), len(p.Mechanisms), len(p.Epsilons))
	}
	by := tracetest.ByUnit(run.Releases)
	units := map[string]results.Row{}
	for _, r := range run.Rows {
		units[r["unit"]] = r
	}
	if len(units) != len(e.units) || len(by) != len(units) {
		t.Fatalf("%d units, %d with rows, %d with releases", len(e.units), len(units), len(by))
	}
	for key, r := range units {
		name, eps := r["mechanism"], r.Float("epsilon")
		le, ok := charge[name+" epsilon="+r["epsilon"]]
		if !ok {
			t.Fatalf("%s: no ledger entry for %s at ε=%s", key, name, r["epsilon"])
		}
		rs := by[key]
		want := p.Draws // releases: one per output
		if name == "randomized-response" {
			want = p.Draws * p.Dim // one per respondent's bit
		}
		if len(rs) != want {
			t.Fatalf("%s: %d releases, want %d", key, len(rs), want)
		}
		for _, x := range rs {
			var spentEps, spentDelta float64
			switch name {
			case "randomized-response":
				// Keep probability e^ε/(1 + e^ε) (Section 3.1): ε = ln(p/(1−p)).
				spentEps = math.Log(x.Scale / (1 - x.Scale))
			case "laplace":
				spentEps = tracetest.LaplaceEps(1, x.Scale) // κ = 1 (Section 3.2)
			case "exponential":
				spentEps = tracetest.ExpMechEps(1, x.Scale) // score sensitivity 1 (Section 3.3)
			case "gaussian":
				// Proposition 3.15 with κ = 1: σ = √(2 ln(5/(4δ)))/ε.
				spentEps, spentDelta = math.Sqrt(2*math.Log(5/(4*p.GaussianDelta)))/x.Scale, p.GaussianDelta
			}
			if !tracetest.Close(spentEps, float64(le.Epsilon)) || !tracetest.Close(spentDelta, float64(le.Delta)) {
				t.Fatalf("%s: release %v spent (ε=%v, δ=%v); the ledger charges %s at ε=%v (ε=%v, δ=%v)", key, x, spentEps, spentDelta, name, eps, float64(le.Epsilon), float64(le.Delta))
			}
		}
	}
}
