package cvtune

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/runner"
)

// notionLearner is objective perturbation's fit with the guarantee of
// another notion at exactly the level it is handed: (ε, δ)-DP, or the
// ρ-zCDP whose (ε, δ) at the level's δ is the level's ε (Bun & Steinke
// 2016, Proposition 1.3, solved for ρ). It declares its notion and
// records every level.
type notionLearner struct {
	name   string
	notion privacy.Notion
	rec    *fitLog
}

func (l notionLearner) Name() string           { return l.name }
func (l notionLearner) Notion() privacy.Notion { return l.notion }

func (l notionLearner) Fit(ctx context.Context, rng *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	l.rec.Lock()
	l.rec.fits = append(l.rec.fits, fmt.Sprintf("ε=%.6g δ=%.6g", level.Epsilon, level.Delta))
	l.rec.Unlock()
	m, _, err := learners.ObjectivePerturbation{}.Fit(ctx, rng, train, lambda, learners.Level{Epsilon: level.Epsilon})
	if l.notion == privacy.ZCDP {
		lg := math.Log(1 / level.Delta)
		rho := math.Pow(math.Sqrt(lg+level.Epsilon)-math.Sqrt(lg), 2)
		return m, privacy.Rho(rho, ""), err
	}
	return m, privacy.EpsDeltaDP(level.Epsilon, level.Delta, ""), err
}

// TestNotions_TrainDelta: with tuning.train_delta = δ_T an (ε, δ)-DP
// learner and a ρ-zCDP one run under every selection method, each method
// splitting δ_T as it splits α — alphaSplit hands its k = 3 fits (α/3,
// δ_T/3), dataSplit each part's fit (α, δ_T), random its fit (α, δ_T) —
// and the rows book (α, δ_T) of training (the ρ stated at each fit's δ)
// without a warning; with train_delta = 0 both are refused at load,
// naming the key.
func TestNotions_TrainDelta(t *testing.T) {
	for _, notion := range []privacy.Notion{privacy.Approx, privacy.ZCDP} {
		t.Run(string(notion), func(t *testing.T) {
			rec := &fitLog{}
			name := "notion-" + string(notion)
			registerLearner(t, notionLearner{name: name, notion: notion, rec: rec})
			src := fmt.Sprintf(extSpec, fmt.Sprintf("learners = [%q]\ntrain_delta = 3e-6", name))
			src = strings.Replace(src, `methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]`, `methods = ["alphaSplit", "dataSplit", "random"]`, 1)
			s, err := experiments.Parse("ext.toml", []byte(src), "", testKinds)
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				method string
				levels []string
			}{
				{"alphaSplit", []string{"ε=0.666667 δ=1e-06", "ε=0.666667 δ=1e-06", "ε=0.666667 δ=1e-06"}},
				{"dataSplit", []string{"ε=2 δ=3e-06", "ε=2 δ=3e-06", "ε=2 δ=3e-06"}},
				{"random", []string{"ε=2 δ=3e-06"}},
			} {
				rec.fits = nil
				rows, err := runner.RunKey(context.Background(), e, fmt.Sprintf("magic/alpha=2/%s/%s/rep=1/fold=1", c.method, name))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(rec.fits, c.levels) {
					t.Errorf("%s: levels %q, want %q", c.method, rec.fits, c.levels)
				}
				r := rows[0]
				if math.Abs(r.Float("eps_train")-2) > 1e-9 || math.Abs(r.Float("delta_train")-3e-6) > 1e-18 || r["status"] != "ok" || r["private"] != "true" {
					t.Errorf("%s: eps_train %s delta_train %s status %q private %s; want 2, 3e-06, ok, true", c.method, r["eps_train"], r["delta_train"], r["status"], r["private"])
				}
				if math.Abs(r.Float("delta")-3e-6) > 1e-18 {
					t.Errorf("%s: total δ %s, want 3e-06 (T and V disjoint: the training δ)", c.method, r["delta"])
				}
				led := e.Ledger(rows)
				if len(led) != 1 || led[0].Total.Delta != 3e-6 {
					t.Errorf("%s: ledger %+v, want a total δ of 3e-06", c.method, led)
				}
				if zc := strings.Contains(led[0].Components[0].Claimed, "ρ-zCDP claims, each stated as (ε, δ)"); zc != (notion == privacy.ZCDP) {
					t.Errorf("%s: training charge's claim %q: the ρ conversion said %v, want %v", c.method, led[0].Components[0].Claimed, zc, notion == privacy.ZCDP)
				}
			}
			e.Close()

			s, err = experiments.Parse("ext.toml", []byte(strings.Replace(src, "train_delta = 3e-6", "", 1)), "", testKinds)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := New(s, Options{}); err == nil || !strings.Contains(err.Error(), "tuning.learners[0]: learner "+name+" declares") || !strings.Contains(err.Error(), "set tuning.train_delta > 0") {
				t.Errorf("train_delta = 0: err %v, want the learner refused at load", err)
			}
		})
	}
}

// TestNotions_TrainDeltaWithoutLearnerList: with tuning.train_delta and
// no tuning.learners (the built-in, pure ε-DP learner) the rows still
// have delta_train and delta_tuning, so that the ledger's training charge
// books what the fits spent (δ = 0: a pure guarantee meets any level)
// rather than the plan's δ.
func TestNotions_TrainDeltaWithoutLearnerList(t *testing.T) {
	s, err := experiments.Parse("ext.toml", []byte(strings.Replace(fmt.Sprintf(extSpec, "train_delta = 1e-6"),
		`methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]`, `methods = ["alphaSplit"]`, 1)), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cols := strings.Join(e.Columns(), ","); !strings.Contains(cols, ",eps_tuning,delta_train,delta_tuning,") || strings.Contains(cols, ",learner,") {
		t.Errorf("columns %s: want delta_train and delta_tuning, no learner column", cols)
	}
	rows, err := runner.RunKey(context.Background(), e, "magic/alpha=2/alphaSplit/rep=1/fold=1")
	if err != nil {
		t.Fatal(err)
	}
	if rows[0]["delta_train"] != "0" || rows[0]["method"] != "alphaSplit" {
		t.Errorf("row method %s delta_train %q: want alphaSplit and 0", rows[0]["method"], rows[0]["delta_train"])
	}
	led := e.Ledger(rows)
	if len(led) != 1 || led[0].Components[0].Delta != 0 || led[0].Total.Delta != 0 {
		t.Errorf("ledger %+v: want the training charge and the total at δ = 0", led)
	}
}
