package cvtune

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/tune"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/params"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// scaledOP is a parameterized Go learner: objective perturbation at
// λ·factor (factor a float parameter, default 1), with the stability
// constants of Theorem 4 at that λ. It records the (λ·factor, ε) of
// every fit.
type scaledOP struct {
	name   string // registered name
	label  string // a variant's label
	factor float64
	rec    *fitLog
}

type fitLog struct {
	sync.Mutex
	fits []string
}

func (l scaledOP) Name() string { return cmpOr(l.label, l.name) }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (l scaledOP) Params() []params.Param {
	return []params.Param{{Name: "factor", Type: params.Float, Default: 1.0}}
}

func (l scaledOP) WithParams(name string, s params.Setting) (learners.Learner, error) {
	f := s.Float("factor")
	if !(f > 0) {
		return nil, fmt.Errorf("factor = %v: want > 0", f)
	}
	return scaledOP{name: l.name, label: name, factor: f, rec: l.rec}, nil
}

func (l scaledOP) Fit(ctx context.Context, rng *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	l.rec.Lock()
	l.rec.fits = append(l.rec.fits, fmt.Sprintf("%.6g %.6g", lambda*l.factor, level.Epsilon))
	l.rec.Unlock()
	return learners.ObjectivePerturbation{}.Fit(ctx, rng, train, lambda*l.factor, level)
}

func (l scaledOP) StabilityConstants(_ context.Context, lambdas []float64, nTrain int, alpha1, delta float64) (float64, float64, error) {
	b1, b2 := tune.RampStabilityConstants(slices.Min(lambdas) * l.factor)
	return b1, b2, nil
}

// paramsCVSpec is extSpec (400 synthetic rows, 4 folds, λ ∈ {0.1, 0.5,
// 1}, α = 2) with learner name and its [[methods]] table ending in table.
func paramsCVSpec(t *testing.T, name, table, methods string) *experiments.Spec {
	t.Helper()
	src := fmt.Sprintf(extSpec, fmt.Sprintf("learners = [%q]", name))
	src = strings.Replace(src, `methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]`, "methods = "+methods, 1)
	src = strings.Replace(src, "[data]\n", fmt.Sprintf("[[methods]]\nname = %q\nserves = \"learner\"\n%s\n\n[data]\n", name, table), 1)
	s, err := experiments.Parse("ext.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestParams_PrivateGrid: grid = "private" makes the candidates of the
// selection every (λ, variant): alphaSplit trains all 3 λ × 2 factors,
// each at α/6, and the ledger's plan charges six fits; the row names
// the grid as its learner, the chosen variant in setting and its λ.
// Stability runs on the grid with the largest β of the variants.
func TestParams_PrivateGrid(t *testing.T) {
	rec := &fitLog{}
	registerLearner(t, scaledOP{name: "scaled-op-grid", rec: rec})
	spec := paramsCVSpec(t, "scaled-op-grid", "grid = \"private\"\n[methods.params]\nfactor = [1.0, 0.1]", `["alphaSplit", "stability"]`)
	e, err := New(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := labels(e.arms); !slices.Equal(got, []string{"alphaSplit/scaled-op-grid[grid=private]", "stability/scaled-op-grid[grid=private]"}) {
		t.Fatalf("arms %v", got)
	}
	rows, err := runner.RunKey(context.Background(), e, "magic/alpha=2/alphaSplit/scaled-op-grid[grid=private]/rep=1/fold=1")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rec.fits)
	want := []string{"0.01 0.333333", "0.05 0.333333", "0.1 0.333333", "0.1 0.333333", "0.5 0.333333", "1 0.333333"}
	if !slices.Equal(rec.fits, want) {
		t.Errorf("fits (λ·factor, ε) %q, want every λ of both factors at α/6 = 1/3:\n%q", rec.fits, want)
	}
	r := rows[0]
	if r["learner"] != "scaled-op-grid[grid=private]" || (r["setting"] != "factor=1" && r["setting"] != "factor=0.1") || r["fits"] != "6" || math.Abs(r.Float("eps_train")-2) > 1e-12 || r["private"] != "true" {
		t.Errorf("row learner %q setting %q fits %s eps_train %s private %s", r["learner"], r["setting"], r["fits"], r["eps_train"], r["private"])
	}
	if !slices.Contains(e.spec.Tuning.Lambdas, r.Float("lambda")) || int(r.Float("index")) != slices.Index(e.spec.Tuning.Lambdas, r.Float("lambda"))+1 {
		t.Errorf("row lambda %s, index %s", r["lambda"], r["index"])
	}
	led := e.Ledger(rows)
	if len(led) != 1 || !strings.HasPrefix(led[0].Rule, "the candidates are every λ of tuning.lambdas for each of 2 variants (factor=1; factor=0.1): 6 in all") {
		t.Errorf("ledger %+v: want the six candidates named", led)
	}

	// Stability: β from the smaller λ·factor (0.01): β₁ = 2/0.01 = 200 on
	// 200 training rows dominates β₂/m.
	rec.fits = nil
	srows, err := runner.RunKey(context.Background(), e, "magic/alpha=2/stability/scaled-op-grid[grid=private]/rep=1/fold=1")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.fits); n != 7 || srows[0]["fits"] != "7" {
		t.Errorf("stability: %d fits (row %s), want 6 candidates and the release", n, srows[0]["fits"])
	}
}

// TestParams_OracleAndVariants: a list with the default grid gives one
// arm per variant ("control/scaled-op-var[factor=1]", …), and grid =
// "oracle" one arm whose row is, per unit, the variant row with the
// highest test AUC — the same selection the variant's own arm makes, from
// the same stream — with private false.
func TestParams_OracleAndVariants(t *testing.T) {
	registerLearner(t, scaledOP{name: "scaled-op-var", rec: &fitLog{}})
	registerLearner(t, scaledOP{name: "scaled-op-orc", rec: &fitLog{}})
	run := func(spec *experiments.Spec) []results.Row {
		t.Helper()
		e, err := New(spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 2, Stderr: &strings.Builder{}})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := results.ReadRowsCSV(dir + "/rows.csv")
		if err != nil {
			t.Fatal(err)
		}
		// What the section declares (claims and tuning.baseline are
		// checked against it at load) admits every label the rows carry,
		// and none of its plain labels is missing from them.
		p, _ := spec.Produced()
		seen := map[string]bool{}
		for _, r := range rows {
			seen[r["method"]] = true
			if why := p.CheckMethod(r["method"]); why != "" {
				t.Errorf("the rows' method %q is refused by the declared names: %s", r["method"], why)
			}
		}
		for _, m := range p.Methods {
			if !seen[m] {
				t.Errorf("declared method %q: no row carries it", m)
			}
		}
		if len(p.Varied) != 2 {
			t.Errorf("declared variants %q, want the two arms of the varied learner", p.Varied)
		}
		return rows
	}
	// The same name in both specs (streams are keyed by the label).
	vrows := run(paramsCVSpec(t, "scaled-op-var", "[methods.params]\nfactor = [1.0, 0.1, 3.0]", `["control", "random"]`))
	best := map[string]results.Row{}
	count := map[string]int{}
	for _, r := range vrows {
		count[r["method"]]++
		k := strings.SplitN(r["method"], "/", 2)[0] + "|" + r["fold"]
		if b, ok := best[k]; !ok || r.Float("auc") > b.Float("auc") {
			best[k] = r
		}
	}
	if len(count) != 6 || count["control/scaled-op-var[factor=0.1]"] != 4 {
		t.Errorf("rows by method %v, want 6 arms (2 methods × 3 variants) of 4 folds", count)
	}
	orows := run(paramsCVSpec(t, "scaled-op-var", "grid = \"oracle\"\n[methods.params]\nfactor = [1.0, 0.1, 3.0]", `["control", "random"]`))
	if len(orows) != 8 {
		t.Fatalf("%d oracle rows, want 8", len(orows))
	}
	for _, r := range orows {
		m := strings.SplitN(r["method"], "/", 2)[0]
		b := best[m+"|"+r["fold"]]
		if r["method"] != m+"/scaled-op-var[grid=oracle]" || r["auc"] != b["auc"] || r["lambda"] != b["lambda"] ||
			"scaled-op-var["+r["setting"]+"]" != b["learner"] || r["private"] != "false" || !strings.Contains(r["status"], "not private") {
			t.Errorf("oracle row %s: method %s auc %s λ %s setting %s private %s status %q; want the best variant %s (auc %s, λ %s)",
				r["unit"], r["method"], r["auc"], r["lambda"], r["setting"], r["private"], r["status"], b["learner"], b["auc"], b["lambda"])
		}
	}
}
