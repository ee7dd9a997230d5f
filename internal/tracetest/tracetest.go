// Package tracetest runs experiments with a privacy trace (mech.Trace) and
// checks, from the draws, what their releases spent (issue 24): the tests
// of each kind compute the privacy a run actually spent from the noise it
// drew, under the composition its paper states, and compare it with the
// ledger the run wrote.
//
// The functions here are mechanism-level: the privacy of one release from
// its recorded noise scale and the sensitivity the paper gives for it (a
// test passes its own, never the one the site recorded, so a site
// calibrated to the wrong sensitivity is caught), plus the checks every
// traced run must pass (well-formed releases, no replayed stream,
// disjoint parts where the composition is parallel, secure draws).
package tracetest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// Run is one traced run.
type Run struct {
	Dir      string
	Releases []mech.Release
	Opened   map[string]int
	Rows     []results.Row
	Manifest results.Manifest
}

// RunAll runs exp through runner.Run (the runner's own Env, with the
// noise mode of exp's spec) with a trace, in a temporary folder, and
// returns the releases, the rows and the manifest the run wrote.
func RunAll(t testing.TB, exp runner.Experiment, workers int) Run {
	t.Helper()
	tr := mech.NewTrace()
	defer tr.Close()
	dir, err := runner.Run(context.Background(), exp, runner.Options{OutDir: t.TempDir(), Workers: workers, Trace: tr})
	if err != nil {
		t.Fatalf("traced run of %s: %v", exp.Spec().ID, err)
	}
	r := Run{Dir: dir, Releases: tr.Releases(), Opened: tr.Opened()}
	r.Rows, err = results.ReadRowsCSV(filepath.Join(dir, "rows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r.Manifest); err != nil {
		t.Fatal(err)
	}
	return r
}

// RunUnits runs the units of exp named by keys with a traced Env (secure
// noise as exp's spec says), as runner.RunKey does, and returns the
// releases and the rows: for a spec too large to run whole in a test.
// The ledger of these rows is exp.Ledger(rows).
func RunUnits(t testing.TB, exp runner.Experiment, keys []string) ([]mech.Release, []results.Row) {
	t.Helper()
	tr := mech.NewTrace()
	defer tr.Close()
	var rows []results.Row
	for _, k := range keys {
		rs, err := runner.RunKeyTraced(context.Background(), exp, k, tr)
		if err != nil {
			t.Fatalf("%s: unit %s: %v", exp.Spec().ID, k, err)
		}
		rows = append(rows, rs...)
	}
	return tr.Releases(), rows
}

// LaplaceEps is the ε of Laplace noise of scale b on a query of ℓ₁
// sensitivity sens (Dwork & Roth 2014, Theorem 3.6), per release.
func LaplaceEps(sens, b float64) float64 { return sens / b }

// SphericalEps is the ε of spherical Laplace noise, density ∝
// exp(−γ‖z‖₂), on a query of ℓ₂ sensitivity sens (Chaudhuri, Monteleoni
// & Sarwate 2011, proof of Theorem 6).
func SphericalEps(sens, gamma float64) float64 { return gamma * sens }

// GaussianRho is the ρ of Gaussian noise σ on a query of ℓ₂ sensitivity
// sens (Bun & Steinke 2016, Proposition 1.6).
func GaussianRho(sens, sigma float64) float64 { return sens * sens / (2 * sigma * sigma) }

// ExpMechEps is the ε of the exponential mechanism with weights
// exp(λ·u) on a utility of sensitivity sens (McSherry & Talwar 2007).
func ExpMechEps(sens, lambda float64) float64 { return 2 * lambda * sens }

// AboveThresholdEps is the ε of AboveThreshold with threshold noise of
// scale bT and query noise of scale bQ on queries of sensitivity sens
// (Dwork & Roth 2014, Theorem 3.23: ε/2 each for b_T = 2Δ/ε, b_Q = 4Δ/ε),
// whatever the number of queries.
func AboveThresholdEps(sens, bT, bQ float64) float64 { return sens/bT + 2*sens/bQ }

// Close reports whether a and b agree to a relative 1e-9.
func Close(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// CheckWellFormed checks what every release of a traced run must carry:
// its unit, stream, scope (what and which data), a known mechanism, at
// least one noise draw noted by package mech, every draw at a scale the
// release records (mech.Release.ScaleMismatch), and a valid guarantee. A
// declared release (mech.RecordDeclared: a method's own word) needs its
// unit, stream, scope and a valid guarantee only.
func CheckWellFormed(t testing.TB, rs []mech.Release) {
	t.Helper()
	if len(rs) == 0 {
		t.Fatal("the traced run recorded no release")
	}
	bad := 0
	for _, r := range rs {
		_, known := mech.FloatSafe(r.Mechanism)
		var why string
		switch {
		case !known:
			why = "unknown mechanism"
		case r.Stream == "" || r.Unit == "":
			why = "no stream or unit: drawn from a generator the runner did not hand out"
		case r.What == "" || r.Data.Dataset == "" || r.Data.Part == "":
			why = "no scope (mech.Scope): what it is and which records it touched"
		case declared(r):
			// A method's own word: its guarantee is all there is to check
			// (the kind's test compares it with the ledger).
			if err := r.Guarantee.Validate(); err != nil {
				why = err.Error()
			}
		case r.Draws == 0:
			why = "no noise draw noted: the noise was drawn outside package mech"
		case r.Guarantee.Validate() != nil:
			why = r.Guarantee.Validate().Error()
		case !(r.Scale > 0) || math.IsInf(r.Scale, 0):
			why = "scale not finite and > 0"
		case r.ScaleMismatch() != nil:
			why = fmt.Sprintf("noise drawn at scale %g, which the release does not record (scale %g, scales %g)", r.ScaleMismatch(), r.Scale, r.Scales)
		}
		if why != "" {
			bad++
			if bad <= 5 {
				t.Errorf("release %v: %s", r, why)
			}
		}
	}
	if bad > 5 {
		t.Errorf("… %d releases in all", bad)
	}
}

// CheckNoReplay checks that no two releases share a stream's bits: every
// release drew from the first generator opened on its stream in the run
// (a second generator of a seeded stream replays the first's draws),
// except on the streams that several units share on purpose (Env.Stream)
// when shared says so.
func CheckNoReplay(t testing.TB, rs []mech.Release, sharedOK bool) {
	t.Helper()
	for _, r := range rs {
		if r.Instance > 0 && !(r.Shared && sharedOK) {
			t.Errorf("release %v drew from generator #%d of its stream: it replays the draws of generator #0", r, r.Instance)
			return
		}
	}
}

// Overlap returns the first index a and b have in common.
func Overlap(a, b []int) (int, bool) {
	in := make(map[int]bool, len(a))
	for _, i := range a {
		in[i] = true
	}
	for _, i := range b {
		if in[i] {
			return i, true
		}
	}
	return 0, false
}

// CheckSecure checks two traced runs of one spec with secure noise, at the
// draws: every release drew every bit from crypto/rand, used its
// floating-point-safe construction exactly when its mechanism has one, and
// does not replay across the runs (no release digest of one run occurs in
// the other); the two runs made the same releases. It returns the
// mechanisms without a floating-point-safe construction the runs drew, for
// the manifest's list (results.Manifest.Unhardened).
func CheckSecure(t testing.TB, a, b []mech.Release) []string {
	t.Helper()
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("two secure runs recorded %d and %d releases", len(a), len(b))
	}
	digests := map[uint64]bool{}
	var ms []string
	for _, r := range a {
		digests[r.Digest] = true
	}
	for i, rs := range [][]mech.Release{a, b} {
		for _, r := range rs {
			safe, _ := mech.FloatSafe(r.Mechanism)
			switch {
			case !r.Secure:
				t.Fatalf("run %d: release %v: bits not from crypto/rand", i+1, r)
			case r.FloatSafe != safe:
				t.Fatalf("run %d: release %v: floating-point-safe draws %v, but the mechanism %s has a safe construction: %v", i+1, r, r.FloatSafe, r.Mechanism, safe)
			case i == 1 && digests[r.Digest]:
				t.Fatalf("release %v replays a release of the first secure run (equal digests)", r)
			}
			ms = append(ms, r.Mechanism)
		}
	}
	return mech.Unhardened(ms)
}

// CommonReleases returns, of each unit's releases of each mechanism, the
// first min(count in a, count in b) of a and of b, in order: the releases
// two secure runs of one spec both made, where the runs may make different
// numbers of them (a search that stops at a noisy test, as the ex-post
// sweeps do), for CheckSecure.
func CommonReleases(a, b []mech.Release) (ca, cb []mech.Release) {
	count := func(rs []mech.Release) map[string]int {
		m := map[string]int{}
		for _, r := range rs {
			m[r.Unit+"|"+r.Mechanism]++
		}
		return m
	}
	na, nb := count(a), count(b)
	take := func(rs []mech.Release) []mech.Release {
		seen := map[string]int{}
		var out []mech.Release
		for _, r := range rs {
			k := r.Unit + "|" + r.Mechanism
			if seen[k] < min(na[k], nb[k]) {
				out = append(out, r)
			}
			seen[k]++
		}
		return out
	}
	return take(a), take(b)
}

// Mechanisms returns the mechanisms of rs, sorted, without repeats.
func Mechanisms(rs []mech.Release) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rs {
		if !seen[r.Mechanism] {
			seen[r.Mechanism] = true
			out = append(out, r.Mechanism)
		}
	}
	sort.Strings(out)
	return out
}

// ByUnit groups releases by unit key.
func ByUnit(rs []mech.Release) map[string][]mech.Release {
	out := map[string][]mech.Release{}
	for _, r := range rs {
		out[r.Unit] = append(out[r.Unit], r)
	}
	return out
}

// Describe lists releases for a failure message.
func Describe(rs []mech.Release) string {
	s := ""
	for i, r := range rs {
		if i == 20 {
			return s + fmt.Sprintf("… %d in all\n", len(rs))
		}
		s += r.String() + "\n"
	}
	return s
}

// declared reports whether r is a release of a method whose privacy is
// its own word (mech.RecordDeclared).
func declared(r mech.Release) bool {
	_, ok := mech.DeclaredMethod(r.Mechanism)
	return ok
}
