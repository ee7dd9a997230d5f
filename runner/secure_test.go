package runner_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/tracetest"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// noiseExp is an experiment whose units make Laplace releases the way the
// kinds do: from the unit's own stream, from a stream several units share,
// and from a generator the unit wraps (rand.New) before handing it down.
type noiseExp struct{ spec *experiments.Spec }

func newNoiseExp(secure bool) *noiseExp {
	s := experiments.DefaultSpec()
	s.ID, s.Kind, s.Seed, s.Profile = "noise", "cv-tuning", 5, "quick"
	s.Output.SecureNoise = secure
	return &noiseExp{spec: &s}
}

func (e *noiseExp) Spec() *experiments.Spec { return e.spec }
func (e *noiseExp) Units() []runner.Unit {
	var us []runner.Unit
	for i := range 4 {
		us = append(us, runner.Key(fmt.Sprintf("u%d", i)))
	}
	return us
}
func (e *noiseExp) Columns() []string {
	return []string{"dataset", "data_source", "method", "unit", "v"}
}
func (e *noiseExp) RunUnit(_ context.Context, u runner.Unit, env runner.Env) ([]results.Row, error) {
	var rows []results.Row
	for _, c := range []struct {
		name string
		rng  *rand.Rand
	}{
		{"own", env.RNG("fit")},
		{"shared", env.Stream("common")},
		{"wrapped", rand.New(env.RNG("wrapped"))},
	} {
		mech.Scope(c.rng, c.name, mech.Records{Dataset: "d", Part: "all", N: 10})
		v := mech.AddLaplace(c.rng, 0.25, 1)
		mech.Record(c.rng, mech.Release{Mechanism: "laplace", Scale: 1, Sensitivity: 1, Dim: 1, Guarantee: privacy.EpsDP(1, c.name)})
		r := results.Row{"dataset": "d", "data_source": "synthetic", "method": c.name, "unit": u.Key()}
		r.SetFloat("v", v)
		rows = append(rows, r)
	}
	return rows, nil
}
func (e *noiseExp) Summary([]results.Row) []results.SummaryRow { return nil }
func (e *noiseExp) Figures() []plots.FigureSpec                { return nil }
func (e *noiseExp) Datasets() []results.DatasetInfo            { return nil }
func (e *noiseExp) Ledger([]results.Row) []results.LedgerEntry { return nil }
func (e *noiseExp) Warnings() []string                         { return nil }
func (e *noiseExp) Mechanisms() []string                       { return []string{"laplace"} }

// TestRun_SecureNoiseReachesEveryDraw follows --secure-noise from the spec
// through runner.Run down to the draws: in a secure run every release of
// every unit — from its own stream, a shared stream, or a generator the
// unit wrapped — drew crypto/rand bits through the floating-point-safe
// construction, and two secure runs replay nothing; a seeded run replays
// bit for bit and is not float-safe. The manifest lists no unhardened
// release for Laplace releases.
func TestRun_SecureNoiseReachesEveryDraw(t *testing.T) {
	a := tracetest.RunAll(t, newNoiseExp(true), 2)
	b := tracetest.RunAll(t, newNoiseExp(true), 1)
	tracetest.CheckWellFormed(t, a.Releases)
	if got := len(a.Releases); got != 12 {
		t.Fatalf("%d releases, want 12:\n%s", got, tracetest.Describe(a.Releases))
	}
	if un := tracetest.CheckSecure(t, a.Releases, b.Releases); len(un) != 0 || len(a.Manifest.Unhardened) != 0 {
		t.Errorf("unhardened: trace %v, manifest %v", un, a.Manifest.Unhardened)
	}
	g := mech.GridGranularity(1)
	for _, r := range a.Rows {
		if v := r.Float("v"); v/g != float64(int64(v/g)) {
			t.Errorf("secure release %s/%s = %v is off the grid %v", r["unit"], r["method"], v, g)
		}
	}
	s1 := tracetest.RunAll(t, newNoiseExp(false), 2)
	s2 := tracetest.RunAll(t, newNoiseExp(false), 1)
	if len(s1.Releases) != 12 || len(s2.Releases) != 12 {
		t.Fatalf("seeded runs: %d and %d releases", len(s1.Releases), len(s2.Releases))
	}
	for i, r := range s1.Releases {
		if r.Secure || r.FloatSafe || r.Digest != s2.Releases[i].Digest {
			t.Errorf("seeded release %v vs %v: secure or float-safe, or not replayed", r, s2.Releases[i])
		}
	}
	for i, r := range s1.Rows {
		if r["v"] != s2.Rows[i]["v"] {
			t.Errorf("seeded runs differ at row %d: %s vs %s", i, r["v"], s2.Rows[i]["v"])
		}
	}
}
