package learnercmp

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/tracetest"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// The accountant of this file computes what each fit of a traced run
// spent from the noise it drew, with the paper's sensitivities and the
// public parameters only (n = the number of training records the trace's
// scope lists, λ of the spec, c of the spec's loss), never from what the
// release site recorded as its sensitivity or guarantee:
//
//   - objective perturbation, Chaudhuri, Monteleoni & Sarwate 2011
//     (JMLR 12), Algorithm 2: noise b with p(b) ∝ exp(−(ε′/2)‖b‖₂), so
//     ε′ = 2γ (spherical noise γ on the term bᵀw/n, of ℓ₂ sensitivity 2
//     in b), and ε = ε′ + 2·log(1 + c/(n(λ+Δ))), with Δ = 0 unless
//     ε − 2·log(1 + c/(nλ)) ≤ 0, then Δ = c/(n(e^{ε/4} − 1)) − λ (the
//     paper's Δ at the level ε handed); c = 1/4 for the logistic loss;
//   - output perturbation, their Algorithm 1: w* has ℓ₂ sensitivity
//     2/(nλ) (their Corollary 8 with a 1-Lipschitz loss, ‖x‖ ≤ 1), so
//     ε = γ·2/(nλ);
//   - the non-private reference draws nothing and is booked as not
//     private;
//   - a learner whose privacy is its own word (an external worker) makes
//     one declared release per fit (mech.RecordDeclared), booked at the
//     ε it declared.
//
// Each fit is one release on its own stream ("learner-comparison/<unit>/
// <learner>/epsilon=<ε>", the row's key); its spent ε is the row's
// epsilon_spent (the level, or what the learner claimed over it), and
// the ledger's entry for (learner, ε) is the largest over the units (the
// fits of a cell are separate releases: no composition across folds).

// spent returns the ε that release r, a fit of learner at level eps,
// spent per the paper (see above), or fails the test for a release the
// accountant does not know.
func spent(t *testing.T, r mech.Release, c *ComparisonSpec, learner string, eps float64) float64 {
	t.Helper()
	if r.Data.Index == nil || r.Data.N != len(r.Data.Index) {
		t.Fatalf("release %v: its scope does not list the training records (%d indices, N = %d)", r, len(r.Data.Index), r.Data.N)
	}
	n, lambda := float64(len(r.Data.Index)), c.lambda(learner)
	gamma := r.Scale
	switch r.Mechanism {
	case "objective-perturbation":
		if c.Loss != "logistic" || c.ObjPert != "cms11" {
			t.Fatalf("the accountant knows the cms11 logistic objective perturbation, not %s/%s", c.ObjPert, c.Loss)
		}
		const curv = 0.25 // c of the logistic loss (CMS11, Section 3.4.1)
		delta := 0.0
		if eps-2*math.Log1p(curv/(n*lambda)) <= 0 {
			delta = curv/(n*math.Expm1(eps/4)) - lambda
		}
		if !tracetest.Close(r.Params["Delta"], delta) && !(delta == 0 && r.Params["Delta"] == 0) {
			t.Errorf("release %v: the fit added Δ = %v to λ, the paper's Δ is %v", r, r.Params["Delta"], delta)
		}
		epsPrime := tracetest.SphericalEps(2, gamma)
		return epsPrime + 2*math.Log1p(curv/(n*(lambda+delta)))
	case "output-perturbation":
		return tracetest.SphericalEps(2/(n*lambda), gamma)
	}
	if m, ok := mech.DeclaredMethod(r.Mechanism); ok && m == learner && r.Guarantee.Notion == privacy.Pure {
		// A learner whose privacy is its own word (an external worker):
		// what it declared is all the harness can book.
		return float64(r.Guarantee.Epsilon)
	}
	t.Fatalf("release %v: a mechanism the accountant does not know", r)
	return 0
}

// checkTrace checks the releases rs and rows of a traced run of e (all
// its units, or those of rows): the releases are well formed and replay
// no stream; each private fit made exactly one release, on the stream its
// row's key names, touching the unit's training folds only (disjoint from
// its test fold; together the whole dataset); what it spent (see
// [spent]) is the row's epsilon_spent and, unless the learner claimed
// more, the level; the reference drew nothing; and the ledger's entry of
// each (learner, ε) books the largest spent over the units. It returns
// the spent ε by row key.
func checkTrace(t *testing.T, e *Experiment, rs []mech.Release, rows []results.Row) map[string]float64 {
	t.Helper()
	tracetest.CheckWellFormed(t, rs)
	tracetest.CheckNoReplay(t, rs, false)
	c := &e.spec.Comparison
	byStream := map[string][]mech.Release{}
	for _, r := range rs {
		byStream[r.Stream] = append(byStream[r.Stream], r)
	}
	out := map[string]float64{}
	cell := map[string]float64{} // "learner|epsilon" -> the largest spent
	for _, row := range rows {
		key := row["key"]
		stream := Name + "/" + key
		got := byStream[stream]
		delete(byStream, stream)
		if row["private"] != "true" {
			if len(got) != 0 || row["learner"] != c.Reference {
				t.Errorf("%s: not private (learner %s) with %d releases:\n%s", key, row["learner"], len(got), tracetest.Describe(got))
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("%s: %d releases on its stream %q, want 1:\n%s", key, len(got), stream, tracetest.Describe(got))
			continue
		}
		r := got[0]
		unitKey := key // a unit per fit: its key is the row's
		u := e.byKey[unitKey]
		if r.Unit != unitKey {
			t.Errorf("%s: release drawn by unit %q, want %q", key, r.Unit, unitKey)
		}
		// The training part: disjoint from the test fold, the rest of the
		// dataset (the test fold read from the partition, not from split).
		testIdx := e.folds[foldKey(row["dataset"], u.rep)][u.fold1-1]
		if i, ok := tracetest.Overlap(r.Data.Index, testIdx); ok {
			t.Errorf("%s: the fit touched record %d of the test fold", key, i)
		}
		if total, _ := e.data[u.ds].X.Dims(); len(r.Data.Index)+len(testIdx) != total || r.Data.Dataset != row["dataset"] {
			t.Errorf("%s: the fit touched %d records of %s, the test fold has %d: not the %d of %s", key, len(r.Data.Index), r.Data.Dataset, len(testIdx), total, row["dataset"])
		}
		if row.Float("n_train") != float64(len(r.Data.Index)) {
			t.Errorf("%s: n_train %s, the fit touched %d records", key, row["n_train"], len(r.Data.Index))
		}
		level := row.Float("epsilon")
		s := spent(t, r, c, row["learner"], level)
		out[key] = s
		if !tracetest.Close(s, row.Float("epsilon_spent")) || row.Float("delta_spent") != 0 {
			t.Errorf("%s: the draws spent ε = %v, the row books (%v, %v)", key, s, row["epsilon_spent"], row["delta_spent"])
		}
		// Over the level: the row says so; never below it.
		over, _ := learners.LevelNotes(row["status"])
		switch isOver := s > level*(1+1e-9); {
		case s < level*(1-1e-9):
			t.Errorf("%s: the draws spent ε = %v, below the level %v", key, s, level)
		case isOver != (over != ""):
			t.Errorf("%s: the draws spent ε = %v at the level %v; the status %q", key, s, level, row["status"])
		}
		k := row["learner"] + "|" + row["epsilon"]
		cell[k] = math.Max(cell[k], s)
	}
	for stream, got := range byStream {
		t.Errorf("releases on stream %q of no row:\n%s", stream, tracetest.Describe(got))
	}
	// The ledger: one entry per (learner, ε), booking the largest spent,
	// and the reference's, not private.
	seen := map[string]bool{}
	for _, le := range e.Ledger(rows) {
		if le.Method == c.Reference {
			if le.Total.Private || len(le.Components) != 1 || le.Components[0].Private {
				t.Errorf("ledger: the reference %+v is booked as private", le)
			}
			seen[le.Method] = true
			continue
		}
		k := le.Method + "|" + strings.TrimPrefix(le.Setting, "epsilon=")
		want, ok := cell[k]
		if !ok || len(le.Components) != 1 {
			t.Errorf("ledger entry %s %s (%d components): no fit spent at it", le.Method, le.Setting, len(le.Components))
			continue
		}
		seen[k] = true
		if ch := le.Components[0]; !tracetest.Close(float64(le.Total.Epsilon), want) || !tracetest.Close(float64(ch.Epsilon), want) ||
			le.Total.Delta != 0 || ch.Delta != 0 || !le.Total.Private {
			t.Errorf("ledger %s %s: total %+v, charge ε = %v; the draws spent at most ε = %v", le.Method, le.Setting, le.Total, ch.Epsilon, want)
		}
	}
	for k := range cell {
		if !seen[k] {
			t.Errorf("ledger: no entry for %s, which the fits spent on", k)
		}
	}
	if c.Reference != "" && !seen[c.Reference] {
		t.Errorf("ledger: no entry for the reference %s", c.Reference)
	}
	return out
}

// builtinSpecs returns the built-in specs of the kind at the quick
// profile.
func builtinSpecs(t *testing.T) []*experiments.Spec {
	t.Helper()
	paths, err := filepath.Glob("../../experiments/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	var out []*experiments.Spec
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `kind = "`+Name+`"`) {
			continue
		}
		s, err := experiments.Load(p, "quick", testKinds)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		t.Fatal("no built-in spec of the kind")
	}
	return out
}

// TestTrace_BuiltinSpecs: for every built-in spec of the kind at the
// quick profile, a subset of its units run traced spends, by the draws,
// what its rows and ledger book (checkTrace). The subset is the first
// unit of each dataset and the last unit of the last: every unit fits
// every (learner, ε) and the reference, so it covers every ledger entry
// of every dataset; the quick profile's 40 units on Adult's 44 000
// training rows would take minutes. The units run with the real data
// when $DPREPRO_DATA holds it (the synthetic stand-ins otherwise).
func TestTrace_BuiltinSpecs(t *testing.T) {
	for _, s := range builtinSpecs(t) {
		t.Run(s.ID, func(t *testing.T) {
			e, err := New(s, runner.DataOptions{DataDir: os.Getenv("DPREPRO_DATA")})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Methods.Close()
			var keys []string
			last := ""
			for _, k := range e.units {
				u := e.byKey[k]
				if u.rep == 1 && u.fold1 == 1 {
					keys = append(keys, k)
				}
				last = k
			}
			if !slices.Contains(keys, last) {
				keys = append(keys, last)
			}
			rs, rows := tracetest.RunUnits(t, e, keys)
			spentBy := checkTrace(t, e, rs, rows)
			fitted := 0 // the keys' units of a private learner (not the reference): one fit each
			for _, k := range keys {
				if e.byKey[k].learner >= 0 {
					fitted++
				}
			}
			if want := fitted; len(spentBy) != want { // a unit per private fit
				t.Errorf("%d private fits checked, want %d", len(spentBy), want)
			}
			// The declared mechanisms are those the fits drew.
			if got, want := tracetest.Mechanisms(rs), slices.Sorted(slices.Values(e.Mechanisms())); !slices.Equal(got, want) {
				t.Errorf("the fits drew %v, Mechanisms declares %v", got, want)
			}
		})
	}
}

// TestTrace_SmallSpec runs the small spec (both objective perturbation
// branches: at ε = 0.1 on 450 rows at λ = 0.01 it takes the Δ > 0
// branch) traced, whole, through the runner: every fit spent its level.
func TestTrace_SmallSpec(t *testing.T) {
	t.Parallel()
	e := load(t, smallSpec)
	run := tracetest.RunAll(t, e, 2)
	spentBy := checkTrace(t, e, run.Releases, run.Rows)
	if len(spentBy) != 8*2*2 {
		t.Errorf("%d private fits checked, want 32", len(spentBy))
	}
	fallback := 0
	for _, r := range run.Releases {
		if r.Mechanism == "objective-perturbation" && r.Params["Delta"] > 0 {
			fallback++
		}
	}
	if fallback != 8 {
		t.Errorf("%d objective-perturbation fits took the Δ > 0 branch, want 8 (ε = 0.1)", fallback)
	}
}

// claimLearner is output perturbation run at scale×level, claiming
// claim×level: an external method whose claim the kind checks against
// the level it handed (privacy.CompareLevel through learners.CheckLevel).
type claimLearner struct {
	name         string
	scale, claim float64
}

func (l claimLearner) Name() string { return l.name }
func (l claimLearner) Fit(ctx context.Context, rng *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	m, _, err := learners.OutputPerturbation{}.Fit(ctx, rng, train, lambda, learners.Level{Epsilon: l.scale * level.Epsilon})
	return m, privacy.EpsDP(l.claim*level.Epsilon, "output perturbation"), err
}

var registerClaimFakes = sync.OnceValue(func() error {
	return errors.Join(
		learners.Register(claimLearner{"fake-op-under", 1, 0.1}),
		learners.Register(claimLearner{"fake-op-over", 2, 2}),
	)
})

// TestTrace_ClaimVersusLevel: the direction of the check of a learner's
// claim against its level, at the draws. A learner that spends its level
// but claims a tenth of it is booked at what its draws spent (the level:
// a claim below it is not kept); one that spends and claims twice its
// level is booked at that and flagged over its level. checkTrace books
// every fit at what its draws spent, flagged exactly when that is over
// the level.
func TestTrace_ClaimVersusLevel(t *testing.T) {
	if err := registerClaimFakes(); err != nil {
		t.Fatal(err)
	}
	e := load(t, strings.NewReplacer(`learners = ["objective-perturbation", "output-perturbation"]`, `learners = ["fake-op-under", "fake-op-over"]`,
		"[comparison.lambdas]\noutput-perturbation = 0.05\n", "").Replace(smallSpec))
	var keys []string
	for _, k := range e.units {
		if strings.HasPrefix(k, "magic/rep=1/fold=1/") || strings.HasPrefix(k, "magic/rep=2/fold=3/") {
			keys = append(keys, k)
		}
	}
	rs, rows := tracetest.RunUnits(t, e, keys)
	spentBy := checkTrace(t, e, rs, rows)
	for key, s := range spentBy {
		scale := 1.0
		if strings.Contains(key, "/fake-op-over/") {
			scale = 2
		}
		var level float64
		for _, r := range rows {
			if r["key"] == key {
				level = r.Float("epsilon")
			}
		}
		if !tracetest.Close(s, scale*level) {
			t.Errorf("%s: the draws spent %v at the level %v, want %v", key, s, level, scale*level)
		}
	}
	if len(spentBy) != 2*2*2 {
		t.Errorf("%d fits checked, want 8", len(spentBy))
	}
}

// TestTrace_SecureNoise runs the built-in spec, shrunk (one repetition of
// 2 folds of a 600-row sample of Magic, two ε), with secure noise twice
// through the runner: every bit from crypto/rand, no replay across the
// runs, and the manifest lists the releases without a floating-point-safe
// construction that the runs drew.
func TestTrace_SecureNoise(t *testing.T) {
	t.Parallel()
	var runs [2]tracetest.Run
	for i := range runs {
		s := builtinSpecs(t)[0]
		sec, err := runner.SectionOf[*Section](s, Name)
		if err != nil {
			t.Fatal(err)
		}
		s.Data.Datasets, s.Data.Subsample, s.Data.AcceptDataDependentScaling = []string{"magic"}, 600, true
		s.Output.SecureNoise, s.Output.Bootstrap = true, 100
		sec.CV.Repetitions, sec.CV.Folds = 1, 2
		sec.Comparison.Epsilons = []float64{0.1, 1}
		e, err := New(s, runner.DataOptions{DataDir: os.Getenv("DPREPRO_DATA")})
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = tracetest.RunAll(t, e, 1)
		if len(runs[i].Releases) != 2*2*2 {
			t.Fatalf("run %d: %d releases, want 8", i+1, len(runs[i].Releases))
		}
	}
	un := tracetest.CheckSecure(t, runs[0].Releases, runs[1].Releases)
	for i, r := range runs {
		if !slices.Equal(r.Manifest.Unhardened, un) {
			t.Errorf("run %d: manifest lists %v as unhardened, the draws %v", i+1, r.Manifest.Unhardened, un)
		}
	}
}

// TestTrace_ExternalLearner runs the external learner fake-ext (a worker
// that claims 2ε) beside output perturbation, traced, twice with secure
// noise: each of its fits is one declared release ("declared-by:fake-ext")
// on the fit's own stream, scoped to the training folds, booked in its row
// and the ledger at what it declared; its seed's bits come from
// crypto/rand and do not replay; and the manifest lists it among the
// releases the harness cannot vouch for, as the draws show.
func TestTrace_ExternalLearner(t *testing.T) {
	t.Parallel()
	var runs [2]tracetest.Run
	for i := range runs {
		e := load(t, extSpec(t, t.TempDir()+"/params.jsonl", "subsample = 600", "subsample = 600\naccept_data_dependent_scaling = true", "[output]\n", "[output]\nsecure_noise = true\n"))
		runs[i] = tracetest.RunAll(t, e, 2)
		checkTrace(t, e, runs[i].Releases, runs[i].Rows)
		declared := 0
		for _, r := range runs[i].Releases {
			if r.Mechanism == mech.Declared("fake-ext") {
				declared++
				if r.Draws != 0 || !math.IsNaN(r.Scale) || r.Data.Part != "T" {
					t.Errorf("declared release %v: want no draws, scale NaN, the training part", r)
				}
			}
		}
		if declared != 8*2 {
			t.Errorf("run %d: %d declared releases of fake-ext, want 16 (8 folds × 2 ε)", i+1, declared)
		}
	}
	un := tracetest.CheckSecure(t, runs[0].Releases, runs[1].Releases)
	if !slices.Contains(un, mech.Declared("fake-ext")) {
		t.Errorf("unhardened %v lacks the external learner", un)
	}
	for i, r := range runs {
		if !slices.Equal(r.Manifest.Unhardened, un) {
			t.Errorf("run %d: manifest lists %v as unhardened, the draws %v", i+1, r.Manifest.Unhardened, un)
		}
	}
}
