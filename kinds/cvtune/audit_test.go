package cvtune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learneraudit"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/selection"
	"github.com/dprepro/dprepro/runner"
)

// configRecorder is a configurable learner (learners.Configurer) that
// records the Config the kind hands it and, through the recordingLearner
// it returns, the parameter, level and training-set size of every fit.
type configRecorder struct {
	recordingLearner
	cfg *learners.Config
}

func (configRecorder) Name() string { return "audit-recorder" }
func (c configRecorder) Configure(cfg learners.Config) (learners.Learner, error) {
	*c.cfg = cfg
	return c, nil
}

// parseTwoAlphas parses extSpec at α = 1 and 2 with tuningExtra.
func parseTwoAlphas(t *testing.T, tuningExtra string) *experiments.Spec {
	t.Helper()
	src := fmt.Sprintf(strings.Replace(extSpec, "alphas = [2.0]", "alphas = [1.0, 2.0]", 1), tuningExtra)
	s, err := experiments.Parse("ext.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLearnerSetting_AsTheKindRuns: the setting `dprepro audit --learner`
// audits a cv-tuning spec's learner in is the kind's own: a recording
// learner run through every unit of the kind (all five methods, two α,
// tuning.train_delta > 0 so that alphaSplit's δ/k differs from the
// others' δ, the Huber loss) receives the Config of the Setting, fits at
// λ = min(tuning.lambdas) among others, at exactly the (ε, δ) of the
// Setting's points and nowhere else, on training sets of the points'
// shares (±2 rows: folds and parts differ by one row each), and the first
// point at each ε has the smallest training set of the fits at that
// level. A change in how the kind or a selection method hands its fits
// that LearnerSetting does not follow fails here.
func TestLearnerSetting_AsTheKindRuns(t *testing.T) {
	var mu sync.Mutex
	var calls []call
	var cfg learners.Config
	registerLearner(t, configRecorder{recordingLearner{&mu, &calls}, &cfg})
	s := parseTwoAlphas(t, `learners = ["audit-recorder"]
train_delta = 0.001
loss = "huber"`)
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range e.Units() {
		if _, err := runner.RunKey(context.Background(), e, u.Key()); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Section.(learneraudit.Source).LearnerSetting(s, "audit-recorder")
	if err != nil {
		t.Fatal(err)
	}
	if st.Config != cfg || cfg.Loss != "huber" || cfg.Table != "tuning" {
		t.Errorf("Config %+v, the kind configured %+v", st.Config, cfg)
	}
	const N = 400 // data.subsample
	type level struct{ eps, delta float64 }
	fitted := map[level][]int{} // training-set sizes per level
	lambdas := map[float64]bool{}
	for _, c := range calls {
		l := level{c.level.Epsilon, c.level.Delta}
		fitted[l] = append(fitted[l], c.n)
		lambdas[c.lambda] = true
	}
	if !lambdas[st.Lambda] || st.Lambda != slices.Min(e.spec.Tuning.Lambdas) {
		t.Errorf("λ = %v: not the smallest of the λ the kind fits (%v)", st.Lambda, lambdas)
	}
	pointed := map[level]bool{}
	for i, p := range st.Points {
		l := level{p.Epsilon, p.Delta}
		pointed[l] = true
		ns, ok := fitted[l]
		if !ok {
			t.Errorf("point %d (%+v): the kind hands no fit (ε, δ) = (%v, %v)", i, p, p.Epsilon, p.Delta)
			continue
		}
		want := p.TrainShare * N
		if !slices.ContainsFunc(ns, func(n int) bool { return math.Abs(float64(n)-want) <= 2 }) {
			t.Errorf("point %d (%+v): %v rows, the kind fits at this level on %v", i, p, want, ns)
		}
		if first := i == 0 || st.Points[i-1].Epsilon != p.Epsilon; first && want > float64(slices.Min(ns))+2 {
			t.Errorf("point %d (%+v): %v rows, more than the smallest training set at this level (%d)", i, p, want, slices.Min(ns))
		}
		if p.Why == "" {
			t.Errorf("point %d: no Why", i)
		}
	}
	for l, ns := range fitted {
		if !pointed[l] {
			t.Errorf("the kind fits at (ε, δ) = (%v, %v) on %v rows: no point of the Setting", l.eps, l.delta, ns)
		}
	}
	// 5 methods × 2 α: stability α/2, alphaSplit α/k (δ/k), dataSplit α
	// on a part, random and control α on T: ε = 1/3, 1/2, 2/3, and 1
	// (stability at α = 2 as well) and 2 each on a part and on T.
	if len(st.Points) != 7 || !slices.Equal(st.Epsilons, []float64{1.0 / 3, 0.5, 2.0 / 3, 1, 2}) {
		t.Errorf("points %+v, ε grid %v", st.Points, st.Epsilons)
	}
}

// TestLearnerSetting_Prepare: learneraudit.Prepare audits a cv-tuning
// spec's learner at the point of the ε closest to 1 (ε = 1: stability at
// α = 2, dataSplit, random and control at α = 1), on the smallest
// training set at that level, one of dataSplit's k = 3 parts of T
// (⌊400·(2/4)/3⌋ = 66 rows), at the δ that level's fits get, and at
// λ = min(tuning.lambdas); --lambda's Lambda replaces it.
func TestLearnerSetting_Prepare(t *testing.T) {
	s := parseTwoAlphas(t, `train_delta = 0.001`)
	p, err := learneraudit.Prepare(s, learners.Default, learneraudit.SpecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	o := p.Options
	if o.N != 66 || o.Level.Epsilon != 1 || o.Level.Delta != 0.001 || o.Lambda != 0.1 ||
		!strings.Contains(p.Setting, "dataSplit at alpha=1") || !strings.Contains(p.Setting, "smallest of tuning.lambdas") {
		t.Errorf("n=%d, level %v, λ=%v, setting %q", o.N, o.Level, o.Lambda, p.Setting)
	}
	p2, err := learneraudit.Prepare(s, learners.Default, learneraudit.SpecOptions{Lambda: 0.7, Epsilon: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	// ε = 0.5: stability's fits at α = 1, on T (200 rows).
	if o := p2.Options; o.Lambda != 0.7 || o.N != 200 || !strings.Contains(p2.Setting, "λ = 0.7, given") {
		t.Errorf("n=%d, λ=%v, setting %q", o.N, o.Lambda, p2.Setting)
	}
}

// TestLearnerSetting_NotTuned: a learner the spec does not tune is an
// error at tuning.learners, with and without the key.
func TestLearnerSetting_NotTuned(t *testing.T) {
	for extra, want := range map[string]string{
		"":                                      `does not tune learner "output-perturbation" (without tuning.learners it tunes the built-in objective-perturbation)`,
		`learners = ["objective-perturbation"]`: `does not tune learner "output-perturbation" (tuning.learners: objective-perturbation)`,
	} {
		s := parseExt(t, extra)
		_, err := s.Section.(learneraudit.Source).LearnerSetting(s, "output-perturbation")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "tuning.learners") {
			t.Errorf("%q: err = %v, want %q", extra, err, want)
		}
	}
}

// dryFailing is a selector that fails without a model of the kind's
// (as a user's selector reading Fit.Model might).
type dryFailing struct{ firstSelector }

func (dryFailing) Name() string { return "dry-failing" }
func (dryFailing) Select(context.Context, *rand.Rand, selection.Candidates, selection.Budget) (selection.Outcome, error) {
	return selection.Outcome{}, errors.New("no model")
}

// TestLearnerSetting_SelectorFails: a method that cannot say the levels
// of its fits is an error naming it and the α, not a setting without it.
func TestLearnerSetting_SelectorFails(t *testing.T) {
	registerSelector(t, dryFailing{})
	s := parseExt(t, "")
	s.Section.(*Section).Tuning.Methods = []string{"random", "dry-failing"}
	_, err := s.Section.(learneraudit.Source).LearnerSetting(s, learners.Default)
	if err == nil || !strings.Contains(err.Error(), "method dry-failing at alpha = 2") || !strings.Contains(err.Error(), "no model") {
		t.Errorf("err = %v", err)
	}
}
