package cvtune

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learneraudit"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/selection"
	"github.com/dprepro/dprepro/results"
)

// LearnerSetting implements learneraudit.Source for `dprepro audit
// --learner`: learner name (one of tuning.learners, or the built-in
// objective perturbation of a spec without the key) as the kind runs it.
//
//   - Config: tuning.loss, huber_h and objective_perturbation and
//     data.row_norm, the configuration New hands learners.LookupVariants.
//   - λ: the smallest of tuning.lambdas. The kind fits every λ of the
//     grid (Chaudhuri & Vinterbo 2013, Section 5); the smallest gives the
//     minimizer its largest sensitivity 2/(nλ) (Chaudhuri, Monteleoni &
//     Sarwate 2011, Corollary 8), where output perturbation's noise and
//     objective perturbation's correction ε − ε′ (Algorithm 2) are
//     largest: the setting a broken calibration shows in first. The
//     command's --lambda audits another.
//   - The privacy grid: the levels the spec's selection methods hand
//     their fits over tuning.alphas, not α itself — stability α/2,
//     alphaSplit α/k, dataSplit, random and control α, with the δ of
//     tuning.train_delta as each method splits it (selection.Budget).
//     They are found by running each method of tuning.methods on
//     candidates that train nothing and record the level and part of
//     every fit (levelPoints), so a user's registered selector is audited
//     at the levels it hands, with no list of names here.
//   - Training set: a fit sees the training set T of a round, K−2 of the
//     K folds of cv.folds (the others are V and W, see roles) — every
//     built-in method but dataSplit, which fits each candidate on one of
//     k parts of T: a share (K−2)/(K·k). At an ε that several methods
//     hand, the audit takes the smallest training set (Setting.Points).
//
// Deviation: a learner with variants run as a grid ([[methods]] grid =
// "private") makes k·variants candidates; the points are those of k.
func (sec *Section) LearnerSetting(s *experiments.Spec, name string) (learneraudit.Setting, error) {
	t := &sec.Tuning
	names := t.Learners
	if len(names) == 0 {
		names = []string{learners.Default}
	}
	if !slices.Contains(names, name) {
		list := "tuning.learners: " + strings.Join(names, ", ")
		if len(t.Learners) == 0 {
			list = "without tuning.learners it tunes the built-in " + learners.Default
		}
		return learneraudit.Setting{}, s.ErrorAt("tuning.learners", "tuning.learners",
			fmt.Errorf("the spec does not tune learner %q (%s)", name, list))
	}
	sels, err := resolveSelectors(s, t)
	if err != nil {
		return learneraudit.Setting{}, err
	}
	K := sec.CV.Folds
	share := float64(K-2) / float64(K)
	points, err := levelPoints(s, sels, t, K)
	if err != nil {
		return learneraudit.Setting{}, err
	}
	var eps []float64
	for _, p := range points {
		if len(eps) == 0 || eps[len(eps)-1] != p.Epsilon {
			eps = append(eps, p.Epsilon)
		}
	}
	lambda := slices.Min(t.Lambdas)
	return learneraudit.Setting{
		Config: t.learnerConfig(s.Data.RowNorm), Lambda: lambda,
		Epsilons: eps, Delta: t.TrainDelta, TrainShare: share, Points: points,
		Choice: fmt.Sprintf("λ = %g, the smallest of tuning.lambdas (the largest sensitivity 2/(nλ))", lambda),
	}, nil
}

// levelPoints returns the settings in which the methods sels hand a
// learner its fits at the α of t.Alphas with K folds: each method's
// Select run on [levelRecorder] candidates (k = len(t.Lambdas)), one
// point per distinct (ε, δ, parts of T), sorted by ε, δ and training
// share, each saying which (method, α) hand it.
func levelPoints(s *experiments.Spec, sels []selection.Selector, t *TuningSpec, K int) ([]learneraudit.Point, error) {
	type key struct {
		eps, delta float64
		parts      int
	}
	var keys []key
	runs := map[key][]string{}
	for _, sel := range sels {
		for _, alpha := range t.Alphas {
			rec := &levelRecorder{k: len(t.Lambdas)}
			// The stream only feeds the selection's draws over
			// candidates that score alike; no data is involved.
			rng := randx.New(uint64(s.Seed), "learner-audit", "levels", sel.Name(), results.FormatFloat(alpha))
			if _, err := sel.Select(context.Background(), rng, rec, t.budget(alpha)); err != nil {
				return nil, s.Errorf("tuning.methods", "method %s at alpha = %v: finding the levels it hands its fits (a run on candidates that fit nothing): %v", sel.Name(), alpha, err)
			}
			for _, f := range rec.fits {
				k := key{f.level.Epsilon, f.level.Delta, f.parts}
				if _, ok := runs[k]; !ok {
					keys = append(keys, k)
				}
				run := fmt.Sprintf("%s at alpha=%s", sel.Name(), results.FormatFloat(alpha))
				if !slices.Contains(runs[k], run) {
					runs[k] = append(runs[k], run)
				}
			}
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.eps, b.eps), cmp.Compare(a.delta, b.delta), cmp.Compare(b.parts, a.parts))
	})
	out := make([]learneraudit.Point, len(keys))
	for i, k := range keys {
		rows := fmt.Sprintf("a training set T, %d of the %d folds", K-2, K)
		if k.parts > 1 {
			rows = fmt.Sprintf("one of %d parts of a training set T of %d of the %d folds", k.parts, K-2, K)
		}
		why := fmt.Sprintf("the level of the fits of %s, on %s", strings.Join(runs[k], ", "), rows)
		// The others at this level: keys are sorted by parts, most
		// first, so those before k have smaller training sets.
		var fewer, more []string
		for j, o := range keys {
			if j != i && o.eps == k.eps && o.delta == k.delta {
				if j < i {
					fewer = append(fewer, runs[o]...)
				} else {
					more = append(more, runs[o]...)
				}
			}
		}
		switch {
		case len(fewer) > 0:
			why += fmt.Sprintf(" (also at this level, on fewer rows: %s)", strings.Join(fewer, ", "))
		case len(more) > 0:
			why += fmt.Sprintf(" (the smallest training set at this level; also at it, on more rows: %s)", strings.Join(more, ", "))
		}
		out[i] = learneraudit.Point{
			Epsilon: k.eps, Delta: k.delta, TrainShare: float64(K-2) / float64(K*k.parts), Why: why,
		}
	}
	return out, nil
}

// levelRecorder is a selection.Candidates that fits nothing: it records
// the level and the number of parts of T of every fit a selector asks for
// and returns a fit that delivers exactly that level, scores 0 and makes
// no errors (so every candidate ties), with stability constants β = 1.
type levelRecorder struct {
	k     int
	parts int
	fits  []recordedFit
}

type recordedFit struct {
	level learners.Level
	parts int
}

func (r *levelRecorder) K() int                 { return r.k }
func (r *levelRecorder) Terms() selection.Terms { return classifierTerms("audited learner") }

func (r *levelRecorder) Split(_ *rand.Rand, parts int) error {
	r.parts = parts
	return nil
}

func (r *levelRecorder) Train(_ *rand.Rand, i int, level learners.Level, part, parts int) (selection.Fit, error) {
	if i < 0 || i >= r.k || (parts > 1 && (parts != r.parts || part < 0 || part >= parts)) {
		return selection.Fit{}, fmt.Errorf("candidate %d of %d, part %d of %d (%d made by Split)", i, r.k, part, parts, r.parts)
	}
	r.fits = append(r.fits, recordedFit{level, max(parts, 1)})
	g := privacy.EpsDP(level.Epsilon, "a recorded level")
	if level.Delta > 0 {
		g = privacy.EpsDeltaDP(level.Epsilon, level.Delta, "a recorded level")
	}
	return selection.Fit{Index: i, Level: level, Guarantee: g}, nil
}

func (r *levelRecorder) StabilityBeta(float64, float64) (float64, error) { return 1, nil }
