package learnercmp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dprepro/dprepro/core/accountant"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// fakeMech is the mechanism the fake accounted worker declares on every
// fit: 100 steps of the Gaussian mechanism with σ = 1 on 5 % Poisson
// samples — at δ = 1e-5 an ε between the spec's levels 0.1 and 10.
var fakeMech = learners.Mechanism{Name: learners.MechSubsampledGaussian, NoiseMultiplier: 1, SamplingRate: 0.05, Steps: 100}

// fakeMechWorker is an external learner whose hello declares its
// mechanism (attributes.mechanism, privacy "approx"); each fit releases
// the zero model and declares fakeMech with, by mode: "level" the ε it
// was asked for beside it (below the mechanism's at ε = 0.1), "exact" the
// mechanism's own ε (computed here as the harness does), "none" no ε,
// "nomech" no mechanism (a fault), "pure" the same with a pure hello (refused
// at load).
func fakeMechWorker(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<24)
	if !in.Scan() {
		return 1
	}
	form := "approx"
	if mode == "pure" {
		form = "pure"
	}
	fmt.Printf(`{"type": "hello", "protocol": 1, "serves": "learner", "privacy": %q, "attributes": {"mechanism": "subsampled-gaussian"}}`+"\n", form)
	for in.Scan() {
		var req struct {
			ID     uint64 `json:"id"`
			Params struct {
				Epsilon float64 `json:"epsilon"`
				Delta   float64 `json:"delta"`
				D       int     `json:"d"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return 2
		}
		claim := map[string]any{"mechanism": fakeMech}
		switch mode {
		case "level":
			claim["epsilon"] = req.Params.Epsilon
		case "exact":
			g, err := learners.Account(fakeMech, req.Params.Delta, "")
			if err != nil {
				return 3
			}
			claim["epsilon"] = g.Epsilon
		case "nomech":
			claim = map[string]any{"epsilon": req.Params.Epsilon, "delta": req.Params.Delta}
		}
		b, _ := json.Marshal(map[string]any{"type": "result", "id": req.ID,
			"output": map[string]any{"weights": make([]float64, req.Params.D)}, "privacy": claim})
		fmt.Println(string(b))
	}
	return 0
}

// TestExternalLearner_Accounted: a worker that declares its mechanism gets
// the guarantee the harness computes for it (learners.Account: the smaller
// of the PLD and RDP accountants' ε at comparison.delta), not its own word — in its rows
// (epsilon_spent, approx, its declared ε in diag_declared_epsilon), its
// level check (over the level at ε = 0.1), the warnings (a declared ε
// below the computed one) and the ledger ("computed by the harness", the
// declared ε beside it). A reply without its mechanism fails the unit
// naming the method; a pure hello with a mechanism is refused at load.
func TestExternalLearner_Accounted(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const delta = 1e-5
	spec := func(mode string) string {
		return strings.Replace(extSpec(t, t.TempDir()+"/params.jsonl", "lambda = 0.01", fmt.Sprintf("lambda = 0.01\ndelta = %v", delta)),
			fmt.Sprintf("command = [%q, \"fake-learner\",", exe), fmt.Sprintf("command = [%q, \"fake-learner-mech\", %q] #", exe, mode), 1)
	}
	want, err := learners.Account(fakeMech, delta, "")
	if err != nil {
		t.Fatal(err)
	}
	if !(want.Epsilon > 0.1 && want.Epsilon < 10) {
		t.Fatalf("the fake mechanism's ε %v is not between the levels 0.1 and 10: the test checks nothing", want.Epsilon)
	}
	for _, mode := range []string{"level", "exact", "none"} {
		e := load(t, spec(mode))
		dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 2, Stderr: &strings.Builder{}})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		rows := readRows(t, dir+"/rows.csv")
		n := 0
		for _, r := range rows {
			if r["learner"] != "fake-ext" {
				if r["diag_declared_epsilon"] != "" {
					t.Errorf("%s: %s has a declared ε %q", mode, r["learner"], r["diag_declared_epsilon"])
				}
				continue
			}
			n++
			declared := map[string]string{"level": r["epsilon"], "exact": results.FormatFloat(want.Epsilon), "none": "NaN"}[mode]
			// Booked: the computed ε, or the level when larger (CheckLevel).
			over := r.Float("epsilon") < want.Epsilon
			spent := math.Max(want.Epsilon, r.Float("epsilon"))
			if r.Float("epsilon_spent") != spent || r.Float("delta_spent") != delta || r["notion"] != "approx-dp" ||
				r["diag_declared_epsilon"] != declared || r.Float("diag_accounted_epsilon") != want.Epsilon || strings.Contains(r["status"], "for a level of") != over {
				t.Errorf("%s: %s: spent (%s, %s) %s, declared %q, computed %s, status %q; want (%v, %v) approx-dp, declared %s, computed %v, over the level %v",
					mode, r["key"], r["epsilon_spent"], r["delta_spent"], r["notion"], r["diag_declared_epsilon"], r["diag_accounted_epsilon"], r["status"], spent, delta, declared, want.Epsilon, over)
			}
		}
		if n != 16 {
			t.Errorf("%s: %d rows of fake-ext, want 16", mode, n)
		}
		// Every row records how its ε was computed: the declared
		// mechanism, the δ, and both accountants' ε, the booked one the
		// smaller (an independent call of each accountant).
		rdp, order, err := accountant.SampledGaussian{Sigma: fakeMech.NoiseMultiplier, Q: fakeMech.SamplingRate, Steps: fakeMech.Steps}.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		pld, err := accountant.SampledGaussian{Sigma: fakeMech.NoiseMultiplier, Q: fakeMech.SamplingRate, Steps: fakeMech.Steps}.EpsilonPLD(delta, accountant.PLDOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !(pld < rdp) || want.Epsilon != pld {
			t.Fatalf("PLD ε %v, RDP ε %v, booked %v: want the PLD one, below RDP", pld, rdp, want.Epsilon)
		}
		for _, r := range rows {
			if r["learner"] != "fake-ext" {
				continue
			}
			got := []float64{r.Float("diag_noise_multiplier"), r.Float("diag_sampling_rate"), r.Float("diag_steps"), r.Float("diag_accounted_delta"), r.Float("diag_pld_epsilon"), r.Float("diag_rdp_epsilon"), r.Float("diag_rdp_order")}
			if w := []float64{fakeMech.NoiseMultiplier, fakeMech.SamplingRate, float64(fakeMech.Steps), delta, pld, rdp, order}; !slices.Equal(got, w) {
				t.Errorf("%s: %s: σ, q, T, δ, PLD ε, RDP ε, order = %v, want %v", mode, r["key"], got, w)
			}
		}
		warned := strings.Join(e.RowWarnings(rows), "\n")
		if below := strings.Contains(warned, "learner fake-ext declared an ε below what the harness computed for the mechanism it declares in 8 of 16 fits (first: declared 0.1, computed "+results.FormatFloat(want.Epsilon)); below != (mode == "level") {
			t.Errorf("%s: warnings %q: the declared-below warning present %v, want %v", mode, warned, below, mode == "level")
		}
		seen := 0
		for _, le := range e.Ledger(rows) {
			if le.Method != "fake-ext" {
				continue
			}
			seen++
			ch := le.Components[0]
			if !strings.Contains(ch.Release, "computed by the harness from the mechanism the method declares") ||
				!strings.Contains(ch.Claimed, "ε computed by the harness from the mechanism each fit declares: the smaller of two upper bounds") ||
				float64(le.Total.Epsilon) != math.Max(want.Epsilon, map[string]float64{"epsilon=0.1": 0.1, "epsilon=10": 10}[le.Setting]) || float64(le.Total.Delta) != delta {
				t.Errorf("%s: ledger %s: release %q claimed %q total %+v", mode, le.Setting, ch.Release, ch.Claimed, le.Total)
			}
			wantClaim := map[string]string{
				"level": "the method declared ε up to 0.1, below what the harness computed in 8 of 8 fits: the computed ε is the fits' guarantee",
				"exact": "never below what the harness computed",
				"none":  "the method declared no ε beside its mechanism",
			}[mode]
			if le.Setting == "epsilon=10" && mode == "level" {
				wantClaim = "the method declared ε up to 10, never below what the harness computed"
			}
			if w := fmt.Sprintf("the largest: σ = %s, q = %s, T = %d at δ = %s gives ε = %s (PLD accountant %s; RDP accountant %s at order %s)",
				results.FormatFloat(fakeMech.NoiseMultiplier), results.FormatFloat(fakeMech.SamplingRate), fakeMech.Steps, results.FormatFloat(delta),
				results.FormatFloat(pld), results.FormatFloat(pld), results.FormatFloat(rdp), results.FormatFloat(order)); !strings.Contains(ch.Claimed, w) {
				t.Errorf("%s: ledger %s: claimed %q, want it to say %q", mode, le.Setting, ch.Claimed, w)
			}
			if !strings.Contains(ch.Claimed, wantClaim) {
				t.Errorf("%s: ledger %s: claimed %q, want it to say %q", mode, le.Setting, ch.Claimed, wantClaim)
			}
		}
		if seen != 2 {
			t.Errorf("%s: %d ledger entries of fake-ext, want 2", mode, seen)
		}
		e.Methods.Close()
	}

	e := load(t, spec("nomech"))
	_, err = runner.RunKey(context.Background(), e, "magic/rep=1/fold=1/fake-ext/epsilon=0.1")
	e.Methods.Close()
	if err == nil || !strings.Contains(err.Error(), "fake-ext") || !strings.Contains(err.Error(), "the reply declares no mechanism") {
		t.Errorf("a reply without its mechanism: %v", err)
	}
	if _, err := New(parse(t, spec("pure")), runner.DataOptions{DataDir: os.Getenv("DPREPRO_DATA")}); err == nil || !strings.Contains(err.Error(), `declare "privacy": "approx"`) {
		t.Errorf("a pure hello with a mechanism: %v", err)
	}
}

// accountedGo is a Go learner that lets the harness compute its
// guarantee: it releases the non-private fit (a stand-in for DP-GD's
// model) and returns learners.Account of fakeMech at the level's δ, and
// says so (learners.Accounted).
type accountedGo struct{}

func (accountedGo) Name() string { return "fake-accounted-go" }
func (accountedGo) Fit(ctx context.Context, rng *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	m, _, err := learners.NonPrivate{}.Fit(ctx, rng, train, lambda, level)
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	g, err := learners.Account(fakeMech, level.Delta, "one fit of fake-accounted-go")
	return m, g, err
}
func (accountedGo) Notion() privacy.Notion { return privacy.Approx }
func (accountedGo) Accounting() string {
	return "ε computed by the harness (learners.Account) for the subsampled Gaussian the learner runs"
}

var registerAccountedGo = sync.OnceValue(func() error { return learners.Register(accountedGo{}) })

// TestGoLearner_Accounted: a Go learner that computes its guarantee with
// learners.Account and implements learners.Accounted is booked at the
// accountant's (ε, δ) (or the level, when larger), and its ledger charge
// says the guarantee is computed by the harness, in its words.
func TestGoLearner_Accounted(t *testing.T) {
	if err := registerAccountedGo(); err != nil {
		t.Fatal(err)
	}
	src := strings.NewReplacer(`learners = ["objective-perturbation", "output-perturbation"]`, `learners = ["output-perturbation", "fake-accounted-go"]`,
		"lambda = 0.01", "lambda = 0.01\ndelta = 1e-5").Replace(smallSpec)
	e := load(t, src)
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 2, Stderr: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := learners.Account(fakeMech, 1e-5, "")
	if err != nil {
		t.Fatal(err)
	}
	rows := readRows(t, dir+"/rows.csv")
	n := 0
	for _, r := range rows {
		if r["learner"] != "fake-accounted-go" {
			continue
		}
		n++
		if r.Float("epsilon_spent") != math.Max(want.Epsilon, r.Float("epsilon")) || r.Float("delta_spent") != 1e-5 {
			t.Errorf("%s: spent (%s, %s), want (max(%v, level), 1e-05)", r["key"], r["epsilon_spent"], r["delta_spent"], want.Epsilon)
		}
	}
	if n != 16 {
		t.Errorf("%d rows of fake-accounted-go, want 16", n)
	}
	for _, le := range e.Ledger(rows) {
		if le.Method != "fake-accounted-go" {
			continue
		}
		ch := le.Components[0]
		if !strings.Contains(ch.Release, "computed by the harness from the mechanism the method declares") ||
			!strings.HasPrefix(ch.Claimed, "ε computed by the harness (learners.Account)") || !strings.Contains(ch.Claimed, "the method declared no ε beside its mechanism") {
			t.Errorf("ledger %s: release %q, claimed %q", le.Setting, ch.Release, ch.Claimed)
		}
	}
}
