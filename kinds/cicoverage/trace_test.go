package cicoverage

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/tracetest"
	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/results"
)

// Issue 24: the ledger of every built-in ci-coverage spec, recomputed
// from the noise its releases drew.
//
// The accountant (Wang, Kifer & Lee 2019; n, c, h, d from the spec and
// the trace, never the sensitivity or guarantee a site recorded):
//
//   - θ̃ of objective perturbation (Algorithm 1, "objective-perturbation-
//     wkl"): spherical noise of γ = Scale on the gradient term βᵀθ/n,
//     whose ℓ₂ sensitivity is 2 (‖f′‖ ≤ 1, ‖x‖ ≤ 1), plus the Jacobian
//     term: ε = 2γ + log(1 + t/(2nc)) (Theorem 1, proof in Appendix A:
//     γ = ε′/2 and ε − ε′ = log(1 + t/(2nc))), with t = 1/4 for logistic
//     regression and 1/(2h) for the Huber SVM (the bound on |f″|). Under
//     zCDP it counts ε²/2 (Proposition 1; Theorem 2's ϕ₁²/2). The DP and
//     zCDP objective perturbations of a replicate share ONE Algorithm 1 run
//     (Share, stream "obj-fit"): the one release is charged to both
//     methods, each in its own notion.
//   - θ̃ of output perturbation (Algorithm 4): ℓ₂ sensitivity 1/(nc)
//     (Section 5, [10]); DP: ε = γ/(nc); zCDP (Gaussian σ):
//     ρ = (1/(nc))²/(2σ²) (Proposition 3).
//   - H̃ and Σ̃ (Algorithm 2, Lemma 1), in that order on the method's
//     stream: DP ε = γ·Sens, zCDP ρ = Sens²/(2σ²), with Sens(H) = 1/(2n)
//     (LR, Lemma 3) or 1/(nh) (SVM, Lemma 5) and Sens(Σ) = 2·S(‖θ̃‖₂)²/n
//     (LR, Lemma 2, at the released θ̃ as Algorithms 3 and 5 use it; ‖θ̃‖₂
//     is read from the release's scope, matricesWhat) or 2/n (SVM,
//     Lemma 4).
//   - One interval composes its three releases sequentially on the
//     replicate (Theorems 2 and 4, Proposition 4): per part, the spent ε
//     (DP methods) or ρ (zCDP methods) equals the row's eps1..3 or
//     rho1..3; the Monte Carlo draws of the intervals are post-processing
//     and record nothing.
//   - The ledger books one interval per (method, dataset, x): every
//     replicate is its own data set D, so the ledger's charge is the
//     maximum over replicates of what one spent (they are all equal).
//     No part is composed in parallel in this kind, so there is no
//     disjointness to check.
//   - The variability-interval fits (VI units) are the paper's yardstick
//     (Section 7.1), not in the ledger: each fit releases one θ̃ at ε₁
//     on its bootstrap replicate, checked against the VI rows' eps1 (DP)
//     or rho1 (zCDP).
//
// The specs are expensive at the quick profile (20 replicates, m = 500,
// 200 VI fits per point and model), so each is shrunk through its spec
// struct to one coverage replicate per point, m = 20 and 2 VI fits, and
// then every unit is run: every (method, dataset, x) entry of the ledger
// is covered by one replicate.

// shrinkCI shrinks a ci-coverage spec's Monte Carlo sizes for a trace test.
func shrinkCI(s *experiments.Spec) *Section {
	sec := s.Section.(*Section)
	ci := &sec.ConfidenceIntervals
	ci.Replicates, ci.BlockSize, ci.MCSamples, ci.VIFits = 1, 1, 20, 2
	return sec
}

// builtinCISpecs returns the ids of the built-in ci-coverage specs.
func builtinCISpecs(t *testing.T) []string {
	var ids []string
	for _, id := range experiments.BuiltinIDs() {
		s, err := experiments.LoadBuiltin(id, "quick", testKinds)
		if err != nil {
			continue // another kind's spec
		}
		if s.Kind == "ci-coverage" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		t.Fatal("no built-in ci-coverage spec")
	}
	return ids
}

// stepOf splits a stream name ".../<model>/{ci,vi}/<…>/<index>/<step>"
// into the model, whether it is a VI stream, the replicate or fit index
// (0-based) and the step.
func stepOf(t *testing.T, stream string) (model string, vi bool, idx int, step string) {
	p := strings.Split(stream, "/")
	if len(p) < 5 {
		t.Fatalf("stream %q: not a replicate's stream", stream)
	}
	step = p[len(p)-1]
	idx, err := strconv.Atoi(p[len(p)-2])
	if err != nil {
		t.Fatalf("stream %q: %v", stream, err)
	}
	if p[len(p)-3] == "ci" {
		return p[len(p)-4], false, idx, step
	}
	// VI: <dataset>/vi/<viKey>/<model>/<i>/<step>
	if p[len(p)-5] != "vi" {
		t.Fatalf("stream %q: neither a coverage nor a VI stream", stream)
	}
	return p[len(p)-3], true, idx, step
}

// spentPart is what one release spent, in the notion of the method it is
// charged to: part 0 training, 1 Hessian, 2 covariance.
type spentPart struct {
	part int
	eps  float64 // DP ε (NaN for a Gaussian release)
	rho  float64 // zCDP ρ
}

// accountant computes the spend of releases from the paper's formulas.
type accountant struct {
	c, h float64
}

func (a accountant) t(model string) float64 {
	if model == "svm" {
		return 1 / (2 * a.h)
	}
	return 0.25
}

// account returns the spend of the releases of one step stream of one
// replicate (in drawing order), and the methods (without the model) they
// are charged to.
func (a accountant) account(t *testing.T, model, step string, rs []mech.Release) ([]string, []spentPart) {
	t.Helper()
	var out []spentPart
	var methods []string
	var mats []mech.Release
	want := map[string][]string{ // the mechanisms each step releases, in order
		"obj-fit":     {"objective-perturbation-wkl"},
		"dp-obj-ci":   {"privspdmat-dp", "privspdmat-dp"},
		"zcdp-obj-ci": {"privspdmat-zcdp", "privspdmat-zcdp"},
		"dp-output":   {"output-perturbation-wkl-dp", "privspdmat-dp", "privspdmat-dp"},
		"zcdp-output": {"output-perturbation-wkl-zcdp", "privspdmat-zcdp", "privspdmat-zcdp"},
	}[step]
	var got []string
	for _, r := range rs {
		got = append(got, r.Mechanism)
	}
	// A VI fit releases θ̃ only: the prefix of the step's list.
	if want == nil || len(got) == 0 || !slices.Equal(got, want[:min(len(got), len(want))]) || (len(got) < len(want) && len(got) != 1) {
		t.Fatalf("stream step %q released %v, want %v (a release drawn from another method's or notion's stream)", step, got, want)
	}
	for _, r := range rs {
		n := float64(r.Data.N)
		if r.Data.Index != nil || !(n > 0) {
			t.Fatalf("release %v: want the whole replicate (Index nil, N = n)", r)
		}
		c := a.c
		switch r.Mechanism {
		case "objective-perturbation-wkl":
			eps := 2*r.Scale + math.Log1p(a.t(model)/(2*n*c))
			out = append(out, spentPart{0, eps, eps * eps / 2})
			methods = []string{"dp-obj", "zcdp-obj"}
		case "output-perturbation-wkl-dp":
			out = append(out, spentPart{0, tracetest.SphericalEps(1/(n*c), r.Scale), math.NaN()})
		case "output-perturbation-wkl-zcdp":
			out = append(out, spentPart{0, math.NaN(), tracetest.GaussianRho(1/(n*c), r.Scale)})
		case "privspdmat-dp", "privspdmat-zcdp":
			mats = append(mats, r)
		}
	}
	for i, r := range mats {
		n := float64(r.Data.N)
		var sens float64
		switch {
		case i == 0 && model == "lr":
			sens = 1 / (2 * n) // Lemma 3
		case i == 0:
			sens = 1 / (n * a.h) // Lemma 5
		case model == "lr":
			norm, ok := r.Params["theta_norm"]
			if !ok {
				t.Fatalf("release %v: no ‖θ̃‖₂ among its params", r)
			}
			s := 1 / (1 + math.Exp(-norm))
			sens = 2 * s * s / n // Lemma 2
		default:
			sens = 2 / n // Lemma 4
		}
		if r.Mechanism == "privspdmat-dp" {
			out = append(out, spentPart{1 + i, tracetest.SphericalEps(sens, r.Scale), math.NaN()})
		} else {
			out = append(out, spentPart{1 + i, math.NaN(), tracetest.GaussianRho(sens, r.Scale)})
		}
	}
	if methods == nil {
		methods = []string{strings.TrimSuffix(step, "-ci")} // dp-obj-ci → dp-obj; dp-output
	}
	return methods, out
}

// spend is what one method spent on one replicate or VI fit, per part.
type spend struct {
	v   [3]float64
	has [3]bool
	n   int // the records the releases touched (Data.N)
}

// checkSpecTrace runs every unit of exp traced and checks the ledger
// against the draws.
func checkSpecTrace(t *testing.T, e *Experiment) {
	rels, rows := tracetest.RunUnits(t, e, unitKeys(e))
	tracetest.CheckWellFormed(t, rels)
	if got, want := tracetest.Mechanisms(rels), e.Mechanisms(); !slices.Equal(got, want) {
		t.Errorf("the run released %v; the kind declares %v (runner.Releaser)", got, want)
	}
	// The coverage streams are keyed by (dataset, ciKey, model,
	// replicate, step): ciKey is the swept value, except in an ε₂ or ε₃
	// sweep, whose points share one unit per replicate block and the
	// replicate's streams, keyed by ε₁ (runCI: common random numbers).
	// Each point asks for each of its streams once, in the group's order,
	// and θ̃ of Algorithm 1 is drawn once for the points of one ε₁
	// ("obj-fit", shared): so the release of the q-th point of a unit's
	// group with the stream's ciKey draws from generator #q of the stream
	// (pointOf) — none replays another of its own interval (such a replay
	// would be counted against the next point, whose part would then be
	// released twice). The VI streams are keyed by viKey (data and ε₁), not x: the
	// points of an ε₂ or ε₃ sweep are served by one VI computation, and
	// the fits of one replicate at the ε₁ values of an ε₁ sweep draw from
	// streams of their own ε₁ — so no VI release may replay another
	// either (one keyed without its ε₁ would).
	var ciRels, viRels []mech.Release
	for _, r := range rels {
		if _, vi, _, _ := stepOf(t, r.Stream); vi {
			viRels = append(viRels, r)
		} else {
			ciRels = append(ciRels, r)
		}
	}
	// pointOf returns the points (indices in e.points) a coverage
	// release is charged to: the instance-th point of its unit's group
	// whose ciKey its stream names, or all of them for the shared θ̃.
	pointOf := func(r mech.Release) []int {
		u, ok := e.byKey[r.Unit]
		p := strings.Split(r.Stream, "/")
		var at []int
		for _, pi := range u.group {
			if e.points[pi].ciKey == p[len(p)-5] {
				at = append(at, pi)
			}
		}
		_, _, _, step := stepOf(t, r.Stream)
		if !ok || r.Instance >= len(at) || step == "obj-fit" && r.Instance > 0 {
			t.Fatalf("release %v drew from generator #%d of its stream: its unit serves %d points of its ciKey (a point's releases draw from generator #q, a shared θ̃ from #0)", r, r.Instance, len(at))
		}
		if step == "obj-fit" {
			return at
		}
		return at[r.Instance : r.Instance+1]
	}
	for _, r := range ciRels {
		pointOf(r)
	}
	tracetest.CheckNoReplay(t, viRels, false)
	if t.Failed() {
		t.FailNow()
	}

	sec := e.spec
	a := accountant{c: sec.ConfidenceIntervals.C, h: sec.ConfidenceIntervals.H}
	// byUnit[unit][model/kind/idx][method] = spend.
	type repKey struct {
		unit  string
		vi    bool
		idx   int
		model string
		viKey string // VI: the data and ε₁ its streams are keyed by
		pt    int    // coverage: the point (index in e.points)
	}
	spent := map[repKey]map[string]*spend{}
	// The releases per generator: a stream and its generator number.
	type gen struct {
		stream string
		q      int
	}
	streamsOf := map[gen][]mech.Release{}
	var streamOrder []gen
	for _, r := range rels {
		g := gen{r.Stream, r.Instance}
		if _, ok := streamsOf[g]; !ok {
			streamOrder = append(streamOrder, g)
		}
		streamsOf[g] = append(streamsOf[g], r)
	}
	for _, g := range streamOrder {
		s, rs := g.stream, streamsOf[g]
		model, vi, idx, step := stepOf(t, s)
		part := fmt.Sprintf("ci replicate %d", idx+1)
		if vi {
			part = fmt.Sprintf("vi fit %d", idx+1)
		}
		for _, r := range rs {
			if r.Data.Part != part || r.Unit != rs[0].Unit {
				t.Fatalf("release %v: on the stream of %s, want data part %q", r, s, part)
			}
		}
		methods, parts := a.account(t, model, step, rs)
		k := repKey{rs[0].Unit, vi, idx, model, "", -1}
		qs := []int{-1}
		if vi {
			p := strings.Split(s, "/")
			k.viKey = p[len(p)-4]
		} else {
			qs = pointOf(rs[0])
		}
		for _, q := range qs {
			k.pt = q
			if spent[k] == nil {
				spent[k] = map[string]*spend{}
			}
			for _, m := range methods {
				name := m + "-" + model
				sp := spent[k][name]
				if sp == nil {
					sp = &spend{n: rs[0].Data.N}
					spent[k][name] = sp
				}
				zcdp := strings.HasPrefix(name, "zcdp-")
				for _, p := range parts {
					if sp.has[p.part] {
						t.Fatalf("%s %v: %s's part %d released twice", s, k, name, p.part)
					}
					sp.has[p.part] = true
					if zcdp {
						sp.v[p.part] = p.rho
					} else {
						sp.v[p.part] = p.eps
					}
					if math.IsNaN(sp.v[p.part]) {
						t.Fatalf("%s: %s charged a release of the other notion", s, name)
					}
				}
			}
		}
	}

	// Per row: the spend of its replicate (or of every VI fit) equals the
	// row's budget columns; and the maximum per ledger setting.
	type setting struct{ method, setting string }
	maxSpent := map[setting]*[3]float64{}
	checked := 0
	for _, row := range rows {
		name := row["method"]
		model := row["model"]
		zcdp := row["privacy"] == "zcdp"
		n, err := strconv.Atoi(row["n"])
		if err != nil {
			t.Fatal(err)
		}
		var want [3]float64
		for i := range want {
			col := "eps"
			if zcdp {
				col = "rho"
			}
			v, err := strconv.ParseFloat(row[fmt.Sprintf("%s%d", col, i+1)], 64)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = v
		}
		if row["status"] == cimethods.StatusEpsilonPrime {
			continue // Algorithm 1 refused: nothing drawn (the ledger books it all the same)
		}
		if row["row_type"] == "vi" {
			// The row's point: its VI draws from the streams of its data
			// and ε₁ (its unit's replicates are fitted at every ε₁ of
			// the unit).
			var viKey string
			for _, pt := range e.points {
				if e.data[pt.ds].Name == row["dataset"] && results.FormatFloat(pt.x) == row["x"] {
					viKey = pt.viKey
				}
			}
			if viKey == "" {
				t.Fatalf("VI row %v: no point", row)
			}
			fits := 0
			for k, byM := range spent {
				if !k.vi || k.unit != row["unit"] || k.model != model || k.viKey != viKey {
					continue
				}
				sp := byM[name]
				if sp == nil || !sp.has[0] || sp.has[1] || sp.has[2] {
					t.Errorf("VI unit %s fit %d: %s: want one θ̃ release, got %+v", k.unit, k.idx+1, name, sp)
					continue
				}
				fits++
				if sp.n != n {
					t.Errorf("VI unit %s fit %d: %s: releases scoped on %d records, the row's n is %d", k.unit, k.idx+1, name, sp.n, n)
				}
				if !tracetest.Close(sp.v[0], want[0]) {
					t.Errorf("VI unit %s fit %d: %s spent %v on θ̃ per the draws; the row says %v", k.unit, k.idx+1, name, sp.v[0], want[0])
				}
			}
			if fits != sec.ConfidenceIntervals.VIFits {
				t.Errorf("VI unit %s: %s: %d fits released θ̃, want %d", row["unit"], name, fits, sec.ConfidenceIntervals.VIFits)
			}
			checked++
			continue
		}
		rep, err := strconv.Atoi(row["replicate"])
		if err != nil {
			t.Fatal(err)
		}
		// The row's point.
		q := -1
		for _, pi := range e.byKey[row["unit"]].group {
			if results.FormatFloat(e.points[pi].x) == row["x"] {
				q = pi
			}
		}
		if q < 0 {
			t.Fatalf("coverage row %v: not a point of its unit", row)
		}
		sp := spent[repKey{row["unit"], false, rep - 1, model, "", q}][name]
		if sp == nil || sp.has != [3]bool{true, true, true} {
			t.Errorf("unit %s replicate %d: %s: want the three releases θ̃, H̃, Σ̃, got %+v", row["unit"], rep, name, sp)
			continue
		}
		if sp.n != n {
			t.Errorf("unit %s replicate %d: %s: releases scoped on %d records, the row's n is %d", row["unit"], rep, name, sp.n, n)
		}
		for i := range want {
			if !tracetest.Close(sp.v[i], want[i]) {
				t.Errorf("unit %s replicate %d: %s: part %d spent %v per the draws (paper's sensitivity), the row says %v", row["unit"], rep, name, i+1, sp.v[i], want[i])
			}
		}
		k := setting{name, fmt.Sprintf("dataset=%s %s=%s", row["dataset"], row["sweep"], row["x"])}
		m := maxSpent[k]
		if m == nil {
			m = &[3]float64{}
			maxSpent[k] = m
		}
		for i := range m {
			m[i] = math.Max(m[i], sp.v[i])
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no row checked")
	}

	// Per run: the ledger.
	ledger := e.Ledger(rows)
	if len(ledger) != len(maxSpent) {
		t.Errorf("ledger has %d entries, the draws %d (method, setting) pairs", len(ledger), len(maxSpent))
	}
	parts := []string{"training", "hessian", "covariance"}
	for _, le := range ledger {
		m := maxSpent[setting{le.Method, le.Setting}]
		if m == nil {
			t.Errorf("ledger entry %s %s: no release drawn for it", le.Method, le.Setting)
			continue
		}
		zcdp := strings.HasPrefix(le.Method, "zcdp-")
		val := func(g results.PrivacyGuarantee) float64 {
			if zcdp {
				if g.Notion != "zcdp" || g.Rho == nil {
					t.Errorf("ledger entry %s %s: a zCDP method booked %+v", le.Method, le.Setting, g)
					return math.NaN()
				}
				return float64(*g.Rho)
			}
			if g.Notion != "pure-dp" {
				t.Errorf("ledger entry %s %s: a DP method booked %+v", le.Method, le.Setting, g)
			}
			return float64(g.Epsilon)
		}
		if len(le.Components) != 3 {
			t.Errorf("ledger entry %s %s: %d components, want 3", le.Method, le.Setting, len(le.Components))
			continue
		}
		var total float64
		for i, c := range le.Components {
			if c.Part != parts[i] {
				t.Errorf("ledger entry %s %s: component %d is %q, want %q", le.Method, le.Setting, i, c.Part, parts[i])
			}
			g := results.PrivacyGuarantee{Notion: c.Notion, Epsilon: c.Epsilon, Delta: c.Delta, Rho: c.Rho}
			if v := val(g); !tracetest.Close(v, m[i]) {
				t.Errorf("ledger entry %s %s: %s booked %v, the draws spent %v", le.Method, le.Setting, c.Part, v, m[i])
			}
			total += m[i]
		}
		if v := val(le.Total); !tracetest.Close(v, total) {
			t.Errorf("ledger entry %s %s: total %v, the draws spent %v (sequential composition)", le.Method, le.Setting, v, total)
		}
	}
}

// TestTrace_BuiltinSpecs checks every built-in ci-coverage spec, shrunk
// (shrinkCI) and run unit by unit with a trace, against its draws.
//
// Loading KDD-99 takes seconds, so a spec that differs from one already
// loaded only in sigma_floor (the "-sigma-c" variants: a floor on Σ̃'s
// eigenvalues, post-processing that New does not read) reuses that
// Experiment's data, points and θ₀ with its own spec.
func TestTrace_BuiltinSpecs(t *testing.T) {
	loaded := map[string]*Experiment{}
	for _, id := range builtinCISpecs(t) {
		t.Run(id, func(t *testing.T) {
			s, err := experiments.LoadBuiltin(id, "quick", testKinds)
			if err != nil {
				t.Fatal(err)
			}
			sec := shrinkCI(s)
			ci := sec.ConfidenceIntervals
			ci.SigmaFloor = nil
			fp := fmt.Sprintf("%d|%+v|%+v", s.Seed, s.Data, ci)
			var e *Experiment
			if base, ok := loaded[fp]; ok {
				cp := *base
				if cp.spec, err = ciSpec(s); err != nil {
					t.Fatal(err)
				}
				e = &cp
			} else {
				if e, err = New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")}); err != nil {
					t.Fatal(err)
				}
				loaded[fp] = e
			}
			checkSpecTrace(t, e)
		})
	}
}

// TestTrace_SecureNoise runs the smallest built-in spec (the public-bounds
// Adult d sweep, shrunk to d = 1 and one replicate) twice with secure
// noise through the runner: every release drew crypto/rand bits, the
// Gaussian releases of zCDP (output perturbation, PrivSPDMat) their
// floating-point-safe construction, the spherical-Laplace ones (objective
// perturbation, DP output perturbation and PrivSPDMat) not, and the
// manifest's list of unhardened releases is what the runs drew.
func TestTrace_SecureNoise(t *testing.T) {
	s, err := experiments.LoadBuiltin("wkl-table3-adult-public", "quick", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	sec := shrinkCI(s)
	sec.ConfidenceIntervals.Values = sec.ConfidenceIntervals.Values[:1]
	s.Output.SecureNoise = true
	e, err := New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		t.Fatal(err)
	}
	a := tracetest.RunAll(t, e, 2)
	b := tracetest.RunAll(t, e, 2)
	tracetest.CheckWellFormed(t, a.Releases)
	unhardened := tracetest.CheckSecure(t, a.Releases, b.Releases)
	if !slices.Equal(a.Manifest.Unhardened, unhardened) || !slices.Equal(b.Manifest.Unhardened, unhardened) {
		t.Errorf("manifest unhardened_releases %v and %v, the runs drew %v", a.Manifest.Unhardened, b.Manifest.Unhardened, unhardened)
	}
	want := []string{"objective-perturbation-wkl", "output-perturbation-wkl-dp", "privspdmat-dp"}
	if !slices.Equal(unhardened, want) {
		t.Errorf("unhardened releases %v, want %v", unhardened, want)
	}
}

// TestTrace_ExternalMethods runs two external interval methods (fake
// workers declaring ε-DP and ρ-zCDP) beside dp-obj-lr, traced: each call
// of a worker is one declared release ("declared-by:NAME") on the
// replicate's own "external/NAME" stream, scoped to the replicate, never
// replayed, at the guarantee the ledger books for the method (its total
// over the parts it spends, in its notion); Mechanisms() names them as
// the trace does.
func TestTrace_ExternalMethods(t *testing.T) {
	fakes := map[string]string{"fake-seeded": "seeded", "fake-zcdp": "zcdp"}
	e, err := loadFake(t, fakes, "dp-obj-lr", "fake-seeded", "fake-zcdp")
	if err != nil {
		t.Fatal(err)
	}
	run := tracetest.RunAll(t, e, 2)
	tracetest.CheckWellFormed(t, run.Releases)
	if got, want := tracetest.Mechanisms(run.Releases), e.Mechanisms(); !slices.Equal(got, want) {
		t.Errorf("the run released %v; the kind declares %v (runner.Releaser)", got, want)
	}
	// The guarantees the ledger books per method: its totals (an interval
	// release on a replicate) and its parts (a VI fit's θ̃ estimate
	// spends the ε₁ part only).
	totals, parts := map[string][]results.PrivacyGuarantee{}, map[string][]results.PrivacyGuarantee{}
	for _, le := range e.Ledger(run.Rows) {
		totals[le.Method] = append(totals[le.Method], le.Total)
		for _, c := range le.Components {
			parts[le.Method] = append(parts[le.Method], results.PrivacyGuarantee{Notion: c.Notion, Epsilon: c.Epsilon, Rho: c.Rho, Private: c.Private})
		}
	}
	books := func(gs []results.PrivacyGuarantee, g privacy.Guarantee) bool {
		return slices.ContainsFunc(gs, func(b results.PrivacyGuarantee) bool {
			if b.Notion != string(g.Notion) {
				return false
			}
			if b.Rho != nil {
				return tracetest.Close(float64(*b.Rho), g.Rho)
			}
			return tracetest.Close(float64(b.Epsilon), g.Epsilon)
		})
	}
	var declared []mech.Release
	count := map[string]int{}
	for _, r := range run.Releases {
		name, ok := mech.DeclaredMethod(r.Mechanism)
		if !ok {
			continue
		}
		declared = append(declared, r)
		count[name]++
		if !strings.HasSuffix(r.Stream, "/external/"+name) {
			t.Errorf("declared release %v: want the stream …/external/%s", r, name)
		}
		switch {
		case strings.HasPrefix(r.Data.Part, "ci replicate "):
			if !books(totals[name], r.Guarantee) {
				t.Errorf("declared interval release %v: its guarantee is none of the ledger's totals of %s %v", r, name, totals[name])
			}
		case strings.HasPrefix(r.Data.Part, "vi fit "):
			if !books(parts[name], r.Guarantee) {
				t.Errorf("declared VI estimate %v: its guarantee is none of the ledger's parts of %s %v", r, name, parts[name])
			}
		default:
			t.Errorf("declared release %v: neither a replicate's nor a VI fit's records", r)
		}
	}
	tracetest.CheckNoReplay(t, declared, false)
	for name := range fakes {
		if count[name] == 0 {
			t.Errorf("no declared release of %s in the trace", name)
		}
	}
}
