// Package privaudit is the "privacy-audit" experiment kind: every
// mechanism the harness uses is run many times on a pair of neighbouring
// inputs chosen close to its worst case, and a Clopper–Pearson lower bound
// on its privacy loss ε (core/audit) is set against the ε it claims.
//
// Audited: the Laplace, Gaussian ((ε, δ) and ρ-zCDP) and spherical Laplace
// mechanisms, the exponential mechanism and report-noisy-max, randomized
// response, objective perturbation (CMS11 Algorithm 2 with the logistic and
// Huber losses, as the tuning experiments run it, and in its Δ-regularized
// branch; Wang, Kifer & Lee Algorithm 1 for LR and Huber SVM), output
// perturbation (CMS11 Algorithm 1 and Wang, Kifer & Lee Algorithm 4 under
// DP and zCDP, with the Huber loss on a pair that attains the sensitivity
// bound), noise reduction (Ligett et al. Algorithm 1: the whole prefix, the
// prefix up to a level t fixed in advance against ε_t, and one keep/add
// step), InteractiveAboveThreshold (Ligett et al. Algorithm 2), the doubling
// method's accuracy test (Ligett et al. Algorithm 4), the selection step of
// stability-based validation (Chaudhuri & Vinterbo Algorithm 1), PrivSPDMat
// (Wang, Kifer & Lee Algorithm 2, DP and zCDP, on the Hessian and the
// gradient covariance) and the DP histogram (Chaudhuri & Vinterbo
// Algorithm 5); and the floating-point-safe Laplace and Gaussian
// constructions of --secure-noise (core/mech.SecureLaplace, SecureGaussian),
// on seeded bits so that their rows replay. `dprepro audit --secure-noise`
// audits every mechanism as it runs in secure mode (crypto/rand bits).
//
// Sensitivities that the experiments compute are not typed into the
// targets: PrivSPDMat runs on the Hessian and gradient covariance that dpci
// computes at n = 5,000 (the coverage experiments' quick shape) on a pair
// searched for its worst case, with dpci's SensHessian and SensGradCov; the
// doubling test uses accfirst's Claim A.12 sensitivity on its worst pair.
// The primitive mechanisms (Laplace, Gaussian, …) take Δ as a parameter
// and run on a pair that attains it. Exact privacy losses, which sampling
// only approaches from below, are computed in the package's tests on the
// same pairs (objective perturbation's log density ratio, the Laplace and
// Gaussian closed forms).
//
// Each is also run in deliberately broken variants — half the noise scale,
// the sensitivity off by a factor 2, AboveThreshold without threshold
// noise, noise reduction with the keep probability unsquared or the
// per-level scale one level off, CMS11 without its extra regularization
// Δ — to measure that the audit catches such bugs. A correct mechanism
// whose lower bound exceeds its claim is a "violation" (a bug, or a false
// alarm of probability ≤ 1 − confidence); a broken variant whose bound
// exceeds the claim is "caught", otherwise "missed": the audit lacked the
// power to see it (the Gaussian and zCDP variants are truly not private at
// their claims, but their worst events have probability near δ; the
// thorough profile catches most zCDP ones at ε ≤ 1), or the pair is not the
// variant's worst case.
//
// What the audit cannot see: it tests the mechanisms on the chosen pairs and
// events only, so a passing audit is evidence, not proof; a lower bound
// well below the claim says the claim may be loose or the pair/event is not
// the worst case. For zCDP mechanisms the claim is the standard conversion
// ρ + 2√(ρ ln(1/δ)) at the spec's δ, itself loose. The stability-validation
// audit fixes the validation scores to differ by β, which is what the
// stability of the score guarantees with probability 1 − δ; that the scores
// of real fits move by at most β is tested separately (core/histogram,
// core/tune).
package privaudit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/core/audit"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// Mechanisms lists the audited mechanisms in output order.
var Mechanisms = []string{
	"laplace", "laplace-secure", "gaussian-dp", "gaussian-zcdp", "gaussian-zcdp-secure", "spherical-laplace",
	"exponential", "report-noisy-max", "randomized-response",
	"objpert-cms11-lr", "objpert-cms11-huber", "objpert-wkl-lr", "objpert-wkl-svm",
	"outpert-cms11-huber", "outpert-wkl-dp", "outpert-wkl-zcdp",
	"noise-reduction", "above-threshold", "stability-validation",
	"privspdmat-dp", "privspdmat-zcdp", "privspdmat-cov-dp", "privspdmat-cov-zcdp", "histogram",
	"noise-reduction-level", "noise-reduction-step", "objpert-cms11-delta", "doubling-test",
}

// Columns is the rows.csv schema of the kind.
var Columns = []string{
	"experiment", "dataset", "data_source", "method", "mechanism", "variant", "expected", "epsilon", "unit",
	"claimed_eps", "claimed_delta", "eps_lower", "eps_point", "select_eps", "event", "k0", "k1", "n",
	"p0_lo", "p1_hi", "confidence", "verdict", "pair",
}

// Metrics are the summarized metrics, against x = the privacy parameter.
var Metrics = []string{"eps_lower", "claimed_eps"}

// Verdicts of a row.
const (
	Pass      = "pass"      // correct mechanism, bound ≤ claim
	Violation = "violation" // correct mechanism, bound > claim
	Caught    = "caught"    // broken variant, bound > claim
	Missed    = "missed"    // broken variant, bound ≤ claim
)

// Experiment is a loaded privacy-audit spec.
type Experiment struct {
	spec    *Spec
	targets map[string]target
	units   []string
	byKey   map[string]unit
	skipped []string
}

type unit struct {
	key           string // the unit key (runner.Unit)
	mech, variant string
	x             float64
}

// Key implements runner.Unit.
func (u unit) Key() string { return u.key }

func (u unit) withKey(k string) unit { u.key = k; return u }

// New lays out the units of spec: every (mechanism, variant, ε) the
// mechanism supports, the correct variant first.
func New(es *experiments.Spec) (*Experiment, error) {
	spec, err := auditSpec(es)
	if err != nil {
		return nil, err
	}
	e := &Experiment{spec: spec, targets: targets(), byKey: map[string]unit{}}
	a := spec.Audit
	for i, name := range a.Mechanisms {
		t, ok := e.targets[name]
		if !ok {
			return nil, es.ErrorAt("audit.mechanisms", fmt.Sprintf("audit.mechanisms[%d]", i), errors.New(experiments.Unknown("mechanism", name, Mechanisms)))
		}
		for _, v := range append([]string{Correct}, a.Variants...) {
			for _, x := range a.Epsilons {
				if !t.supports(v, x) {
					if v == Correct {
						e.skipped = append(e.skipped, fmt.Sprintf("%s at ε = %v", name, x))
					}
					continue
				}
				key := fmt.Sprintf("%s/%s/eps=%s", name, v, results.FormatFloat(x))
				e.units = append(e.units, key)
				e.byKey[key] = unit{mech: name, variant: v, x: x}
			}
		}
	}
	if len(e.units) == 0 {
		return nil, es.Errorf("audit.epsilons", "no mechanism runs at the given epsilons")
	}
	return e, nil
}

// Spec implements runner.Experiment.
func (e *Experiment) Spec() *experiments.Spec { return e.spec.Spec }

// Units implements runner.Experiment.
func (e *Experiment) Units() []runner.Unit { return runner.UnitsOf(e.units, e.byKey, unit.withKey) }

// Columns implements runner.Experiment.
func (e *Experiment) Columns() []string { return Columns }

// RunUnit implements runner.Experiment: one audit (selection, then
// measurement) of one mechanism in one variant at one ε.
func (e *Experiment) RunUnit(ctx context.Context, ru runner.Unit, env runner.Env) ([]results.Row, error) {
	u, err := runner.Begin[unit](ctx, ru)
	if err != nil {
		return nil, err
	}
	key := u.key
	a := e.spec.Audit
	t := e.targets[u.mech]
	sample, err := t.sampler(u.x, u.variant, a.Delta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	n := a.Draws
	if t.fits {
		n = a.FitDraws
	}
	if t.drawsMul > 1 {
		n *= t.drawsMul
	}
	claim := t.claim(u.x, a.Delta)
	rng := env.RNG()
	r, err := audit.Run(ctx, rng, sample, claim, audit.Options{Stats: t.stats, Select: n / 4, Measure: n, Confidence: a.Confidence})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	expected, verdict := "private", Pass
	if u.variant != Correct {
		expected, verdict = "broken", Missed
		if r.Violated {
			verdict = Caught
		}
	} else if r.Violated {
		verdict = Violation
	}
	row := results.Row{}
	row.Set("experiment", e.spec.ID)
	row.Set("dataset", u.mech)
	row.Set("data_source", "simulated")
	row.Set("method", u.variant)
	row.Set("mechanism", u.mech)
	row.Set("variant", u.variant)
	row.Set("expected", expected)
	row.SetFloat("epsilon", u.x)
	row.Set("unit", key)
	row.SetFloat("claimed_eps", claim.Epsilon)
	row.SetFloat("claimed_delta", claim.Delta)
	row.SetFloat("eps_lower", r.EpsLower)
	row.SetFloat("eps_point", r.EpsPoint)
	row.SetFloat("select_eps", r.SelectEps)
	row.Set("event", r.Event.String())
	row.SetInt("k0", r.K0)
	row.SetInt("k1", r.K1)
	row.SetInt("n", r.N)
	row.SetFloat("p0_lo", r.P0Lo)
	row.SetFloat("p1_hi", r.P1Hi)
	row.SetFloat("confidence", a.Confidence)
	row.Set("verdict", verdict)
	row.Set("pair", t.what)
	return []results.Row{row}, nil
}

// Summary implements runner.Experiment: the lower bound and the claim per
// (mechanism, variant) against ε (one value per cell).
func (e *Experiment) Summary(rows []results.Row) []results.SummaryRow {
	return results.Summarize(rows, results.SummaryOptions{
		Experiment: e.spec.ID, XName: "epsilon", XCol: "epsilon", Metrics: Metrics,
		Bootstrap: e.spec.Output.Bootstrap, Level: e.spec.Output.CILevel, Seed: e.spec.Seed,
	})
}

// Figures implements runner.Experiment: one panel per mechanism, the
// audited lower bound of each variant and the claimed ε against ε.
func (e *Experiment) Figures() []plots.FigureSpec {
	variants := append([]string{Correct}, e.spec.Audit.Variants...)
	styles := make(map[string]plots.Style, len(variants))
	for i, v := range variants {
		styles[v] = plots.PaletteStyle(i)
	}
	return []plots.FigureSpec{{
		Name:    "audit",
		Title:   fmt.Sprintf("Privacy audit: Clopper–Pearson %g%% lower bound on ε (correct and broken variants) vs the claimed ε", 100*e.spec.Audit.Confidence),
		Caption: plots.Caption{Replicates: "one audit per point", Bars: "none (each point is one Clopper–Pearson bound)"},
		Metrics: Metrics, MetricLabels: map[string]string{"eps_lower": "audited lower bound", "claimed_eps": "claimed ε"},
		Methods: variants, Styles: styles,
		XLabel: "privacy parameter ε (zCDP: ρ = ε²/2)", YLabel: "ε", Columns: 6, Width: 2.8, Height: 2.3,
	}}
}

// Tables implements runner.Tabler: verdicts.md, one line per audit.
func (e *Experiment) Tables(summary []results.SummaryRow) (map[string][]byte, error) {
	type cell struct{ lower, claim float64 }
	cells := map[string]*cell{}
	var order []string
	for _, s := range summary {
		k := s.Dataset + "\x00" + s.Method + "\x00" + results.FormatFloat(s.X)
		c, ok := cells[k]
		if !ok {
			c = &cell{math.NaN(), math.NaN()}
			cells[k] = c
			order = append(order, k)
		}
		switch s.Metric {
		case "eps_lower":
			c.lower = s.Mean
		case "claimed_eps":
			c.claim = s.Mean
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| mechanism | variant | ε | claimed ε | audited lower bound (%g%%) | verdict |\n|---|---|---|---|---|---|\n", 100*e.spec.Audit.Confidence)
	for _, k := range order {
		f := strings.Split(k, "\x00")
		c := cells[k]
		verdict := Pass
		switch {
		case f[1] == Correct && c.lower > c.claim:
			verdict = Violation
		case f[1] != Correct && c.lower > c.claim:
			verdict = Caught
		case f[1] != Correct:
			verdict = Missed
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.4g | %.4g | %s |\n", f[0], f[1], f[2], c.claim, c.lower, verdict)
	}
	return map[string][]byte{"verdicts.md": []byte(b.String())}, nil
}

// Datasets implements runner.Experiment: no data.
func (e *Experiment) Datasets() []results.DatasetInfo { return nil }

// Warnings implements runner.Experiment.
func (e *Experiment) Warnings() []string {
	var w []string
	if len(e.skipped) > 0 {
		w = append(w, "not audited where the mechanism is not defined (gaussian-dp needs ε < 1; objpert-wkl needs ε′ > 0; objpert-cms11-delta audits the branch ε′ ≤ 0, ε ≤ 3.58): "+strings.Join(e.skipped, ", "))
	}
	if slices.ContainsFunc(e.spec.Audit.Mechanisms, func(m string) bool { return e.targets[m].zcdp }) {
		w = append(w, fmt.Sprintf("zCDP mechanisms are audited against ρ + 2√(ρ ln(1/δ)) at δ = %g (ρ = ε²/2), a loose conversion", e.spec.Audit.Delta))
	}
	return w
}

// Ledger implements runner.Experiment: the audit releases nothing about
// real data; every draw is a simulated release on a fixed pair.
func (e *Experiment) Ledger([]results.Row) []results.LedgerEntry { return nil }
