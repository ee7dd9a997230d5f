package cvtune

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/histogram"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/internal/tracetest"
	"github.com/dprepro/dprepro/methods/selection"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// Issue 24: the privacy the runs of both tuning kinds SPENT, computed from
// the noise they drew (mech.Trace), under the composition Chaudhuri &
// Vinterbo 2013 state, must equal what their rows and ledgers book.
//
// The accountant (spentCV, spentHist) takes from a release only its noise
// scale, the records it touched (mech.Scope) and the public parameters of
// its mechanism, and derives every sensitivity from the paper:
//
//   - an objective-perturbation fit (CMS11 Algorithm 2, Algorithm 3 of the
//     paper): ε = 2γ + 2·ln(1 + c/(n(λ+Δ))) for noise ∝ exp(−γ‖b‖), the
//     ℓ₂ sensitivity 2 of the noise term for ‖x‖ ≤ 1 and a 1-Lipschitz
//     loss, c = 1/4 (logistic), n = |records touched|;
//     an output-perturbation fit (CMS11 Algorithm 1): ε = γ·2/(nλ);
//     an Algorithm 5 histogram: ε = 2/b (Laplace b, replace-one ℓ₁
//     sensitivity 2);
//   - stability (Algorithms 1–2, Theorems 1–2): the k candidates of
//     Validate are trained but not released and cost nothing by
//     themselves; the selection's noise 2β·Exp(1/α₂) costs α₂ = 2β/scale
//     once (not once per candidate), with β = max(β₁/n, β₂/m), n = |T|,
//     m = |V|, and (β₁, β₂) of Theorem 4 (β₁ = 2/λ_min, β₂ = 1) or of
//     Theorem 6 at the candidates' level α₁ (histograms); then the final
//     fit, with fresh noise, costs its own ε: total α₁ + α₂ at the δ of
//     Theorem 1;
//   - alphaSplit (Theorem 5): k fits on T compose sequentially; the
//     exponential mechanism on V (error counts, sensitivity 1) costs
//     2λ; T and V disjoint (checked with tracetest.Overlap): the maximum;
//   - dataSplit (Theorem 5): k fits on pairwise disjoint parts of T
//     (checked) compose in parallel (the maximum); the exponential
//     mechanism on V as above; the maximum;
//   - random: one fit (the uniform choice reads no data);
//   - control: k fits on T, sequentially; the exact argmax is not
//     private (ε = +∞, private = false).
//
// The ledger books, per method and α, the largest value over the units of
// each part and of the total (ledger).

// spent is what one unit spent, from its trace.
type spent struct {
	train, tuning, total, delta float64
	private                     bool
}

// equalIdx reports whether a and b hold the same indices in order.
func equalIdx(a, b []int) bool { return slices.Equal(a, b) }

// traceSubset returns the keys of one unit per (arm, α) of units (given
// as unit key → (arm, α index)), the fold and repetition cycling so that
// the subset visits different folds: every ledger entry is covered.
func traceSubset(keys []string, arm func(string) (a, alpha, rep, fold int), nAlphas, reps, folds int) []string {
	var out []string
	for _, k := range keys {
		a, j, rep, fold := arm(k)
		i := a*nAlphas + j
		if fold == i%folds+1 && rep == (i/folds)%reps+1 {
			out = append(out, k)
		}
	}
	return out
}

// fitEpsCV is the ε of one learner fit of the cv-tuning kind, from its
// noise scale and public parameters (the paper's sensitivities).
func fitEpsCV(t *testing.T, r mech.Release, lambdas []float64) float64 {
	t.Helper()
	n := float64(len(r.Data.Index))
	if n == 0 || len(r.Data.Index) != r.Data.N {
		t.Fatalf("fit %v: records %d, N %d", r, len(r.Data.Index), r.Data.N)
	}
	lambda := r.Params["lambda"]
	if !slices.Contains(lambdas, lambda) {
		t.Fatalf("fit %v: lambda %v is not a candidate %v", r, lambda, lambdas)
	}
	switch r.Mechanism {
	case "objective-perturbation":
		delta := r.Params["Delta"]
		if delta < 0 || r.Params["output_fallback"] != 0 {
			t.Fatalf("fit %v: Δ = %v, output fallback %v", r, delta, r.Params["output_fallback"])
		}
		const c = 0.25 // logistic loss: c = 1/4 (CMS11, Corollary 11)
		return tracetest.SphericalEps(2, r.Scale) + 2*math.Log1p(c/(n*(lambda+delta)))
	case "output-perturbation":
		return tracetest.SphericalEps(2/(n*lambda), r.Scale)
	}
	t.Fatalf("fit %v: not a learner's mechanism", r)
	return 0
}

// checkDisjoint fails unless the index sets are pairwise disjoint.
func checkDisjoint(t *testing.T, unit string, parts ...[]int) {
	t.Helper()
	for i := range parts {
		for j := i + 1; j < len(parts); j++ {
			if x, ok := tracetest.Overlap(parts[i], parts[j]); ok {
				t.Fatalf("%s: parts %d and %d, composed in parallel, share record %d", unit, i, j, x)
			}
		}
	}
}

// spentSelection is the accountant of the five methods over one unit's
// releases: fits (in drawing order) with their ε, and the selection
// releases; beta computes Algorithm 1's β from n = |T|, m = |V| and the
// candidates' level α₁.
func spentSelection(t *testing.T, method, unit string, k int, fits, sels []mech.Release, fitEps func(mech.Release) float64,
	beta func(n, m int, alpha1 float64) float64, delta float64) spent {
	t.Helper()
	count := func(nf, ns int) {
		t.Helper()
		if len(fits) != nf || len(sels) != ns {
			t.Fatalf("%s (%s): %d fits and %d selection releases, want %d and %d:\n%s", unit, method, len(fits), len(sels), nf, ns,
				tracetest.Describe(append(append([]mech.Release(nil), fits...), sels...)))
		}
	}
	onT := func(rs []mech.Release) []int {
		t.Helper()
		T := rs[0].Data.Index
		for _, r := range rs {
			if r.Data.Part != "T" || !equalIdx(r.Data.Index, T) {
				t.Fatalf("%s: fit %v is not on T", unit, r)
			}
		}
		return T
	}
	expMech := func(T []int) float64 {
		t.Helper()
		s := sels[0]
		if s.Mechanism != "exponential-mechanism" || s.Data.Part != "V" {
			t.Fatalf("%s: selection %v: want the exponential mechanism on V", unit, s)
		}
		checkDisjoint(t, unit, T, s.Data.Index) // Theorem 5: T and V compose in parallel
		return tracetest.ExpMechEps(1, s.Scale) // error counts: sensitivity 1
	}
	switch method {
	case "stability":
		count(k+1, k)
		T := onT(fits)
		alpha1 := fitEps(fits[0])
		for _, f := range fits[:k] {
			if !tracetest.Close(fitEps(f), alpha1) {
				t.Fatalf("%s: candidates trained at different levels: %v", unit, tracetest.Describe(fits))
			}
		}
		for _, s := range sels {
			if s.Mechanism != "stability-noisy-max" || s.Scale != sels[0].Scale || s.Data.Part != "T,V" {
				t.Fatalf("%s: selection release %v: want one noise scale, on T,V", unit, s)
			}
		}
		m := len(sels[0].Data.Index) - len(T)
		V := slices.DeleteFunc(slices.Clone(sels[0].Data.Index), func(i int) bool { _, in := slices.BinarySearch(T, i); return in })
		if m < 1 || len(V) != m {
			t.Fatalf("%s: selection records %d, T %d: V is not disjoint from T", unit, len(sels[0].Data.Index), len(T))
		}
		alpha2 := 2 * beta(len(T), m, alpha1) / sels[0].Scale // noise 2β·Exp(mean 1/α₂), counted once
		final := fitEps(fits[k])
		return spent{train: final, tuning: alpha2, total: final + alpha2, delta: delta, private: true}
	case "alphaSplit":
		count(k, 1)
		T := onT(fits)
		var train float64
		for _, f := range fits {
			train += fitEps(f) // sequential on T
		}
		em := expMech(T)
		return spent{train: train, tuning: em, total: math.Max(train, em), private: true}
	case "dataSplit":
		count(k, 1)
		parts := make([][]int, k)
		var train float64
		for i, f := range fits {
			parts[i] = f.Data.Index
			train = math.Max(train, fitEps(f)) // parallel over disjoint parts
		}
		checkDisjoint(t, unit, parts...)
		em := expMech(slices.Concat(parts...))
		return spent{train: train, tuning: em, total: math.Max(train, em), private: true}
	case "random":
		count(1, 0)
		onT(fits)
		e := fitEps(fits[0])
		return spent{train: e, total: e, private: true}
	case "control":
		count(k, 0)
		onT(fits)
		var train float64
		for _, f := range fits {
			train += fitEps(f)
		}
		return spent{train: train, tuning: math.Inf(1), total: math.Inf(1), private: false}
	}
	t.Fatalf("%s: no accountant for method %q", unit, method)
	return spent{}
}

// checkUnits checks every unit's trace against its row, and the ledger
// against the units' spending. kind is the stream prefix (Env.RNG).
func checkUnits(t *testing.T, kind string, rs []mech.Release, rows []results.Row, ledger []results.LedgerEntry,
	account func(unit string, rs []mech.Release, row results.Row) spent) {
	t.Helper()
	tracetest.CheckWellFormed(t, rs)
	tracetest.CheckNoReplay(t, rs, false)
	byUnit := tracetest.ByUnit(rs)
	type agg struct{ train, tuning, total, delta float64 }
	want := map[string]*agg{}
	for _, row := range rows {
		unit := row["unit"]
		urs := byUnit[unit]
		for _, r := range urs {
			if r.Stream != kind+"/"+unit || r.Shared {
				t.Fatalf("release %v: drawn from stream %q, want the unit's own %q", r, r.Stream, kind+"/"+unit)
			}
		}
		s := account(unit, urs, row)
		for _, c := range []struct {
			col  string
			want float64
		}{{"eps_train", s.train}, {"eps_tuning", s.tuning}, {"eps_total", s.total}, {"delta", s.delta}} {
			if got := row.Float(c.col); !tracetest.Close(got, c.want) {
				t.Errorf("%s: %s = %v, the draws spent %v\n%s", unit, c.col, got, c.want, tracetest.Describe(urs))
			}
		}
		if got := row["private"] == "true"; got != s.private {
			t.Errorf("%s: private = %v, the draws: %v", unit, got, s.private)
		}
		key := row["method"] + "|alpha=" + row["alpha"]
		a := want[key]
		if a == nil {
			a = &agg{}
			want[key] = a
		}
		a.train, a.tuning = math.Max(a.train, s.train), math.Max(a.tuning, s.tuning)
		a.total, a.delta = math.Max(a.total, s.total), math.Max(a.delta, s.delta)
	}
	if len(ledger) != len(want) {
		t.Errorf("ledger has %d entries, the units cover %d (method, alpha)", len(ledger), len(want))
	}
	for _, le := range ledger {
		a := want[le.Method+"|"+le.Setting]
		if a == nil {
			t.Errorf("ledger entry %s %s: no unit spent it", le.Method, le.Setting)
			continue
		}
		for _, c := range le.Components {
			w := map[string]float64{"training": a.train, "tuning": a.tuning}[c.Part]
			if !tracetest.Close(float64(c.Epsilon), w) {
				t.Errorf("ledger %s %s: %s ε = %v, the units spent at most %v", le.Method, le.Setting, c.Part, c.Epsilon, w)
			}
		}
		if !tracetest.Close(float64(le.Total.Epsilon), a.total) || !tracetest.Close(float64(le.Total.Delta), a.delta) {
			t.Errorf("ledger %s %s: total (%v, %v), the units spent at most (%v, %v)", le.Method, le.Setting, le.Total.Epsilon, le.Total.Delta, a.total, a.delta)
		}
	}
}

// accountCV is the accountant of a cv-tuning unit.
func accountCV(t *testing.T, e *Experiment) func(string, []mech.Release, results.Row) spent {
	tu := e.spec.Tuning
	if tu.Loss != "" && tu.Loss != "logistic" {
		t.Fatalf("accountant knows the logistic loss only, spec has %q", tu.Loss)
	}
	return func(unit string, rs []mech.Release, row results.Row) spent {
		t.Helper()
		var fits, sels []mech.Release
		for _, r := range rs {
			switch r.Mechanism {
			case "objective-perturbation", "output-perturbation":
				fits = append(fits, r)
			default:
				sels = append(sels, r)
			}
		}
		a := e.arms[e.byKey[unit].arm]
		if m := a.sel.Name(); (m == "stability" || m == "random") && len(fits) > 0 && fits[len(fits)-1].Params["lambda"] != row.Float("lambda") {
			t.Errorf("%s: last fit %v is not of the released lambda %v", unit, fits[len(fits)-1], row["lambda"])
		}
		beta := func(n, m int, _ float64) float64 {
			b1, b2 := 2/slices.Min(tu.Lambdas), 1.0 // Theorem 4: ramp score, 1-Lipschitz loss
			return math.Max(b1/float64(n), b2/float64(m))
		}
		return spentSelection(t, a.sel.Name(), unit, len(tu.Lambdas), fits, sels,
			func(r mech.Release) float64 { return fitEpsCV(t, r, tu.Lambdas) }, beta, tu.Delta)
	}
}

// accountHist is the accountant of a histogram-tuning unit.
func accountHist(t *testing.T, e *Hist) func(string, []mech.Release, results.Row) spent {
	bins, tu := e.spec.Histogram.Bins, e.spec.Tuning
	return func(unit string, rs []mech.Release, _ results.Row) spent {
		t.Helper()
		var fits, sels []mech.Release
		for _, r := range rs {
			if r.Mechanism == "laplace-histogram" {
				fits = append(fits, r)
			} else {
				sels = append(sels, r)
			}
		}
		fitEps := func(r mech.Release) float64 {
			if r.Dim != slices.Max(bins) && !slices.Contains(bins, r.Dim) {
				t.Fatalf("%s: histogram %v of %d bins", unit, r, r.Dim)
			}
			return tracetest.LaplaceEps(2, r.Scale) // replace-one: two counts move by 1
		}
		beta := func(n, m int, alpha1 float64) float64 {
			b1, b2, err := histogram.StabilityConstants(1/float64(slices.Max(bins)), len(bins), n, alpha1, tu.Delta) // Theorem 6
			if err != nil {
				t.Fatal(err)
			}
			return math.Max(b1/float64(n), b2/float64(m))
		}
		return spentSelection(t, e.arms[e.byKey[unit].arm].sel.Name(), unit, len(bins), fits, sels, fitEps, beta, tu.Delta)
	}
}

func loadTraceCV(t *testing.T, id string, shrink func(*Section)) *Experiment {
	t.Helper()
	s, err := testKinds.LoadBuiltin(id, "quick")
	if err != nil {
		t.Fatal(err)
	}
	if shrink != nil {
		sec, err := runner.SectionOf[*Section](s, Name)
		if err != nil {
			t.Fatal(err)
		}
		shrink(sec)
	}
	e, err := New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func loadTraceHist(t *testing.T, shrink func(*HistSection)) *Hist {
	t.Helper()
	s, err := testKinds.LoadBuiltin("cv13-histogram", "quick")
	if err != nil {
		t.Fatal(err)
	}
	if shrink != nil {
		sec, err := runner.SectionOf[*HistSection](s, HistName)
		if err != nil {
			t.Fatal(err)
		}
		shrink(sec)
	}
	e, err := NewHist(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// cvSpecs are the built-in cv-tuning specs.
var cvSpecs = []string{"cv13-adult", "cv13-adult-all", "cv13-adult-all-maxabs", "cv13-adult-maxabs", "cv13-adult-public", "cv13-magic", "cv13-magic-maxabs", "cv13-magic-public"}

// TestTrace_CVSpecs checks every built-in cv-tuning spec at the quick
// profile. The quick profile runs 600 units of up to 11 fits on ~39,000
// (Adult) or ~15,000 (Magic) rows per spec, too many for a test: it runs
// one unit per (method, α) — every ledger entry — the fold and
// repetition cycling over the subset (traceSubset), 30 units per spec.
func TestTrace_CVSpecs(t *testing.T) {
	for _, id := range cvSpecs {
		t.Run(id, func(t *testing.T) {
			e := loadTraceCV(t, id, nil)
			tu, cv := e.spec.Tuning, e.spec.CV
			keys := traceSubset(e.units, func(k string) (int, int, int, int) {
				u := e.byKey[k]
				return u.arm, slices.Index(tu.Alphas, u.alpha), u.rep, u.fold
			}, len(tu.Alphas), cv.Repetitions, cv.Folds)
			if len(keys) != len(e.arms)*len(tu.Alphas) {
				t.Fatalf("subset of %d units, want one per (method, alpha): %d", len(keys), len(e.arms)*len(tu.Alphas))
			}
			rs, rows := tracetest.RunUnits(t, e, keys)
			checkUnits(t, Name, rs, rows, e.Ledger(rows), accountCV(t, e))
			if got, want := e.Mechanisms(), tracetest.Mechanisms(rs); !slices.Equal(got, want) {
				t.Errorf("Mechanisms() = %v, the trace drew %v", got, want)
			}
		})
	}
}

// TestTrace_Histogram checks cv13-histogram at the quick profile: one unit
// per (source, method, α) — every ledger entry for every source — the
// fold and repetition cycling (traceSubset); 150 units without a solver.
func TestTrace_Histogram(t *testing.T) {
	e := loadTraceHist(t, nil)
	tu, cv := e.spec.Tuning, e.spec.CV
	keys := traceSubset(e.units, func(k string) (int, int, int, int) {
		u := e.byKey[k]
		return u.arm, slices.Index(tu.Alphas, u.alpha), u.rep, u.fold
	}, len(tu.Alphas), cv.Repetitions, cv.Folds)
	if len(keys) != len(e.sources)*len(e.arms)*len(tu.Alphas) {
		t.Fatalf("subset of %d units, want one per (source, method, alpha)", len(keys))
	}
	rs, rows := tracetest.RunUnits(t, e, keys)
	checkUnits(t, HistName, rs, rows, e.Ledger(rows), accountHist(t, e))
	if got, want := e.Mechanisms(), tracetest.Mechanisms(rs); !slices.Equal(got, want) {
		t.Errorf("Mechanisms() = %v, the trace drew %v", got, want)
	}
}

// TestTrace_Secure runs the smallest cv-tuning spec that secure noise
// accepts (public scaling), cv13-magic-public, shrunk to
// one repetition of 3 folds, 3 λ and one α, and cv13-histogram shrunk to
// one density, one α, 3 folds, twice each with secure noise through the
// runner, and checks the draws (tracetest.CheckSecure) and the manifest's
// list of unhardened releases.
func TestTrace_Secure(t *testing.T) {
	t.Run("cv13-magic-public", func(t *testing.T) {
		shrink := func(s *Section) {
			s.CV.Repetitions, s.CV.Folds = 1, 3
			s.Tuning.Lambdas, s.Tuning.Alphas = []float64{0.001, 0.5, 1}, []float64{1}
		}
		runs := [2]tracetest.Run{}
		for i := range runs {
			e := loadTraceCV(t, "cv13-magic-public", shrink)
			e.spec.Output.SecureNoise = true
			runs[i] = tracetest.RunAll(t, e, 2)
		}
		un := tracetest.CheckSecure(t, runs[0].Releases, runs[1].Releases)
		if !slices.Equal(runs[0].Manifest.Unhardened, un) {
			t.Errorf("manifest lists unhardened %v, the draws %v", runs[0].Manifest.Unhardened, un)
		}
	})
	t.Run("cv13-histogram", func(t *testing.T) {
		shrink := func(s *HistSection) {
			s.CV.Repetitions, s.CV.Folds = 1, 3
			s.Tuning.Alphas = []float64{1}
			s.Histogram.Densities, s.Histogram.Attributes = s.Histogram.Densities[:1], nil
		}
		runs := [2]tracetest.Run{}
		for i := range runs {
			e := loadTraceHist(t, shrink)
			e.spec.Output.SecureNoise = true
			runs[i] = tracetest.RunAll(t, e, 2)
		}
		un := tracetest.CheckSecure(t, runs[0].Releases, runs[1].Releases)
		if !slices.Equal(runs[0].Manifest.Unhardened, un) {
			t.Errorf("manifest lists unhardened %v, the draws %v", runs[0].Manifest.Unhardened, un)
		}
	})
}

// TestTrace_DeclaredMethods runs a registered learner (fake-double: no
// noise, (2ε, 10⁻⁶) declared per fit) under the built-in selectors and a
// registered selector ("first"), traced: every fit of the learner is one
// declared release ("declared-by:fake-double") on the training records
// the kind scoped, at the guarantee it declared; every selection of the
// registered selector is one declared release on T and V; Mechanisms()
// names both as the trace does (a secure run's manifest lists them as
// releases it cannot vouch for); and the fits' declared ε compose to the
// rows' eps_train as each selector's theorem says (checked for random:
// one fit at α).
func TestTrace_DeclaredMethods(t *testing.T) {
	registerLearner(t, fakeLearner{})
	registerSelector(t, &firstSelector{planEps: func(b selection.Budget) float64 { return 2 * b.Alpha }})
	s := parseExt(t, `learners = ["fake-double"]`)
	tuningOf(s).Methods = []string{"stability", "dataSplit", "random", "first"}
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := tracetest.RunAll(t, e, 2)
	tracetest.CheckWellFormed(t, run.Releases)
	tracetest.CheckNoReplay(t, run.Releases, false)
	if got, want := e.Mechanisms(), tracetest.Mechanisms(run.Releases); !slices.Equal(got, want) {
		t.Errorf("Mechanisms() = %v, the trace drew %v", got, want)
	}
	by := tracetest.ByUnit(run.Releases)
	selections := 0
	for _, row := range run.Rows {
		method, _, _ := strings.Cut(row["method"], "/")
		alpha := row.Float("alpha")
		var fits []mech.Release
		for _, r := range by[row["unit"]] {
			switch r.Mechanism {
			case mech.Declared("fake-double"):
				if !strings.HasPrefix(r.Data.Part, "T") || r.Guarantee.Notion != privacy.Approx || r.Guarantee.Delta != 1e-6 {
					t.Errorf("%s: fit %v: want the training records and a (2ε, 10⁻⁶) declaration", row["unit"], r)
				}
				fits = append(fits, r)
			case mech.Declared("first"):
				selections++
				if method != "first" || r.Data.Part != "T,V" || r.Guarantee.Epsilon != 0 {
					t.Errorf("%s: selection %v: want first's, on T and V, declaring ε = 0", row["unit"], r)
				}
			}
		}
		if len(fits) == 0 {
			t.Errorf("%s: no declared fit", row["unit"])
		}
		if method == "random" || method == "first" {
			if len(fits) != 1 || !tracetest.Close(fits[0].Guarantee.Epsilon, row.Float("eps_train")) || !tracetest.Close(fits[0].Guarantee.Epsilon, 2*alpha) {
				t.Errorf("%s: fits %v, want one declaring 2α = eps_train %s", row["unit"], fits, row["eps_train"])
			}
		}
	}
	if want := 4; selections != want {
		t.Errorf("%d selections of first recorded, want %d (one per fold)", selections, want)
	}
}
