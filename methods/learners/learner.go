package learners

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/perturb"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/tune"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/methods/params"
	"github.com/dprepro/dprepro/methods/registry"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
)

// Level is the privacy level a selection method hands one training run:
// ε, and δ (zero for pure ε-DP). The built-in methods hand δ = 0: the
// paper's methods train pure ε-DP learners (Chaudhuri & Vinterbo 2013,
// Section 5).
type Level struct {
	Epsilon float64 // ε; finite and > 0
	Delta   float64 // δ in [0, 1); zero for pure ε-DP
}

// String formats l as privacy.Guarantee does: "ε=0.5", or "(ε=0.5,
// δ=1e-05)" when δ > 0.
func (l Level) String() string {
	if l.Delta == 0 {
		return fmt.Sprintf("ε=%g", l.Epsilon)
	}
	return fmt.Sprintf("(ε=%g, δ=%g)", l.Epsilon, l.Delta)
}

// levelTol is the relative tolerance of the check of a fit's guarantee
// against its level: a guarantee whose ε (or δ) exceeds the level's by
// more than levelTol·ε is over the level, one whose ε falls short of it
// by more than that below it. It absorbs the rounding of a learner that
// recomputes its ε (ε/k summed k times, a calibration solved
// numerically), not a real difference.
const levelTol = 1e-9

// LevelCheck is how a fit's guarantee compares with the level it was
// handed ([CheckLevel]).
type LevelCheck struct {
	// Booked is what the rows and the ledger book for the fit: the
	// guarantee returned, or the level where the guarantee claims less
	// (privacy.CompareLevel: the larger of the two, ε and δ each).
	Booked privacy.Guarantee
	// Over and Under report a guarantee above or below the level (beyond
	// a relative 1e-9).
	Over, Under bool
	// Note says so, for the row's status ([RowStatus]): "learner X
	// returned ε=3 for a level of ε=2" (over) or "learner X returned
	// ε=0.02 below its level of ε=2" (under); empty when the guarantee
	// meets the level.
	Note string
}

// CheckLevel compares the guarantee g that learner returned for one fit
// with the level it was handed; every kind that hands learners a level
// (cv-tuning, learner-comparison) checks each fit with it. The harness
// knows what it asked for, so a difference either way is flagged: a
// guarantee above the level (ε or δ larger) overspends and is booked as
// returned; one below it (ε = 0 for a private level, ε/100 of the ε
// handed, or an (ε, δ) guarantee with a smaller δ) is a claim the
// protocol does not keep — the selection methods' theorems charge every
// fit the level it was handed — and is booked at the level
// (privacy.CompareLevel). A pure ε-DP guarantee at the level's ε meets an
// (ε, δ) level: it holds at every δ. The note goes into the row's status
// with [RowStatus]; [LevelWarnings] reads it back for the manifest. A
// guarantee that cannot be compared with a level — not private, or
// ex-post — is an error naming the learner. A ρ-zCDP guarantee is
// checked, and booked, as the (ε, δ) it implies at the level's δ (Bun &
// Steinke 2016, Proposition 1.3) when that δ is > 0, and is an error at a
// pure level.
func CheckLevel(learner string, g privacy.Guarantee, level Level) (LevelCheck, error) {
	switch g.Notion {
	case privacy.Pure, privacy.Approx:
	case privacy.None:
		return LevelCheck{}, fmt.Errorf("learner %s returned a non-private release for the level %v: a learner must release under the level it is handed", learner, level)
	case privacy.ZCDP:
		if level.Delta > 0 {
			// Stated as (ε, δ) at the level's δ (Bun & Steinke 2016,
			// Proposition 1.3) and checked as that.
			g = g.ToApprox(level.Delta)
			break
		}
		return LevelCheck{}, fmt.Errorf("learner %s returned %v for the level %v: a pure ε level, and ρ-zCDP implies an ε only at a δ > 0; "+
			"give the training budget a δ (tuning.train_delta, comparison.delta), at which each fit's ρ is stated as (ε, δ), "+
			`or return pure ε-DP guarantees (docs/worker-protocol.md)`, learner, g, level)
	default:
		return LevelCheck{}, fmt.Errorf("learner %s returned %v for the level %v: only an ε or (ε, δ) guarantee can be checked against a level and composed by the selection methods", learner, g, level)
	}
	v := privacy.CompareLevel(g, level.Epsilon, level.Delta, levelTol)
	c := LevelCheck{Booked: v.Booked, Over: v.Over, Under: v.Under}
	switch {
	case v.Over:
		c.Note = fmt.Sprintf("learner %s returned %v%s%v", learner, g, overWords, level)
	case v.Under:
		c.Note = fmt.Sprintf("learner %s returned %v%s%v", learner, g, underWords, level)
	}
	return c, nil
}

// The form of a row's status with warnings ([RowStatus]), which
// [LevelWarnings] reads back.
const (
	statusWarning = "warning: "
	statusSep     = "; "
	overWords     = " for a level of "     // in a part that reports fits over their level
	underWords    = " below its level of " // in a part that reports fits below their level
)

// RowStatus is the status column of a row with the warning parts parts
// (such as a note of [CheckLevel]): "ok" when there are none, else
// "warning: " and the parts joined by "; ". A part must not contain "; ".
func RowStatus(parts ...string) string {
	if len(parts) == 0 {
		return "ok"
	}
	return statusWarning + strings.Join(parts, statusSep)
}

// LevelNotes reads a row's status back ([RowStatus] with notes of
// [CheckLevel]): its part that reports fits over their level and its part
// that reports fits below it ("" for none). A status of another form
// (e.g. "failed: …") is read the same way, part by part.
func LevelNotes(status string) (over, under string) {
	rest := strings.TrimPrefix(status, statusWarning)
	for _, part := range strings.Split(rest, statusSep) {
		if !strings.HasPrefix(part, "learner ") {
			continue
		}
		switch {
		case over == "" && strings.Contains(part, overWords):
			over = part
		case under == "" && strings.Contains(part, underWords):
			under = part
		}
	}
	return over, under
}

// OverLevelMarks returns the figure points of rows that report fits over
// their level ([LevelNotes]): one plots.Mark per (dataset, method label,
// x), x read from the column xcol, in the rows' order. A kind that hands
// learners a level returns them from runner.FigureMarker, so that its
// figures ring the points whose x understates what their fits spent.
func OverLevelMarks(rows []results.Row, xcol string) []plots.Mark {
	var out []plots.Mark
	seen := map[plots.Mark]bool{}
	for _, r := range rows {
		if over, _ := LevelNotes(r["status"]); over == "" {
			continue
		}
		m := plots.Mark{Dataset: r["dataset"], Method: r["method"], X: r.Float(xcol)}
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// OverLevelLabel is the legend entry of the marks of [OverLevelMarks].
const OverLevelLabel = "fits over their privacy level (booked as returned)"

// LevelWarnings returns the manifest's warnings about fits whose
// guarantee differs from their level, read back from the rows' status
// column ([LevelNotes]): for each method label of labels, in order, whose
// rows report fits over their level, how many rows, the first note and
// over — what the rows and the ledger book instead of the level (e.g.
// "eps_*, delta_* and the ledger book what the learner returned"); then
// likewise for fits below their level, with under (e.g. "… book the
// level"). A kind implementing runner.RowWarner returns them.
func LevelWarnings(rows []results.Row, labels []string, over, under string) []string {
	cells := results.GroupLedger(rows, func(r results.Row) string { return r["method"] }, nil, LevelNotes)
	var w []string
	for _, label := range labels {
		t := cells.Get(label)
		if t == nil {
			continue
		}
		if t.Over > 0 {
			w = append(w, fmt.Sprintf("method %s: %d of %d rows have fits over their level, e.g. %s; %s",
				label, t.Over, t.Rows, t.OverNote, over))
		}
		if t.Under > 0 {
			w = append(w, fmt.Sprintf("method %s: %d of %d rows have fits below their level, e.g. %s; %s",
				label, t.Under, t.Rows, t.UnderNote, under))
		}
	}
	return w
}

// Learner is a private learner of the cv-tuning kind: the training
// procedure T = (G, F) of Chaudhuri & Vinterbo 2013 (NIPS), Section 2, for
// one candidate parameter λ ∈ Θ. Register one with [Register]; a
// spec runs it by name in tuning.learners.
//
// A Learner must be safe for concurrent use: units run in parallel, and
// each calls Fit with its own rng.
type Learner interface {
	// Name is the registry name, as tuning.learners lists it (see
	// [Register] for its form).
	Name() string
	// Fit trains on train (rows ±1-labelled, see [Data]) at parameter
	// lambda (> 0) and privacy level, drawing every random number from
	// rng and nothing else, and returns the released model and the
	// guarantee that release has with respect to train (what it covers,
	// neighbouring training sets differing in one record). Each call is a
	// fresh release: it spends its level again. Fit should return ctx's
	// error soon after ctx is done.
	//
	// The guarantee should be the level: pure ε-DP or (ε, δ)-DP with
	// ε = level.Epsilon and δ ≤ level.Delta (a pure guarantee meets an
	// (ε, δ) level). One above it is booked as returned (rows.csv, the
	// ledger) and flagged: the row's status, the manifest's warnings and
	// stderr say "learner NAME returned … for a level of …". One below it
	// is flagged alike ("learner NAME returned … below its level of …")
	// and booked at the level, which is what the protocol spends
	// ([CheckLevel]). A guarantee that cannot be checked against a level
	// (not private, ex-post, ρ-zCDP) fails the unit, naming the learner.
	Fit(ctx context.Context, rng *rand.Rand, train *Data, lambda float64, level Level) (Model, privacy.Guarantee, error)
}

// StableLearner is implemented by a Learner for which the kind's
// validation score — the mean negated ramp loss on V — is
// (β₁, β₂, δ/k)-stable in the sense of Chaudhuri & Vinterbo 2013,
// Definition 2. The stability method (Algorithms 1–2) needs it; a spec
// pairing the stability method with a learner that lacks it is refused.
type StableLearner interface {
	Learner
	// StabilityConstants returns (β₁, β₂) for the candidate parameters
	// lambdas, a training set of nTrain rows, training level alpha1 and
	// the δ of Theorem 1, or an error saying why the conditions do not
	// hold. ctx bounds the work (an external learner asks its worker).
	StabilityConstants(ctx context.Context, lambdas []float64, nTrain int, alpha1, delta float64) (beta1, beta2 float64, err error)
}

// Configurer is implemented by a registered Learner whose variant a spec
// chooses. [Lookup] calls Configure once when a kind loads the spec
// and the kind uses the returned learner (whose Name must be unchanged)
// for every unit.
type Configurer interface {
	Configure(c Config) (Learner, error)
}

// Config is what a spec says about the variants of the learners it
// names: the training loss and the objective-perturbation
// parametrization. Every kind that runs learners builds one from its own
// section (cv-tuning from [tuning], learner-comparison from [comparison])
// and hands it to [Lookup].
type Config struct {
	// Table is the spec table the keys below come from ("tuning"), used
	// to name the key at fault in a Configure error ("tuning.loss").
	Table string
	// Loss is the training loss: "logistic" (empty means that) or
	// "huber".
	Loss string
	// HuberH is the Huber-hinge parameter h when Loss is "huber"; in
	// (0, 1).
	HuberH float64
	// ObjPert is the objective-perturbation parametrization: "cms11"
	// (empty means that) or the labelled opt-in "privatelr-1.1-69".
	ObjPert string
	// RowNorm is the spec's data.row_norm ("l2-max", "l2-clip",
	// "l2-unit", "l1-max" or "none"): how the rows a learner is handed
	// were scaled (see [Data]). The built-in learners check the bound
	// they need on the rows themselves; an [External] is told it
	// with every fit, beside the loss, since the guarantee it claims may
	// rest on it.
	RowNorm string
}

// loss returns the erm.Loss of c.Loss for learner name, or an error naming
// the key.
func (c Config) loss(name string) (erm.Loss, error) {
	switch c.Loss {
	case "", "logistic":
		return erm.Logistic{}, nil
	case "huber":
		return erm.Huber{H: c.HuberH}, nil
	}
	return nil, fmt.Errorf("%s.loss: learner %s has no loss %q (want logistic or huber)", c.Table, name, c.Loss)
}

// Warner is implemented by a Learner with notes for the run's manifest,
// for example that it does not deliver the ε it is asked for.
type Warner interface {
	Warnings() []string
}

// Model is a trained classifier as the cv-tuning kind scores it.
type Model interface {
	// Margins returns a real-valued score for each row of d, in row
	// order: its sign is the predicted label and σ(margin) the predicted
	// probability of +1 (the kind's MSE is the Brier score of σ(margin)).
	// It writes into dst when dst has len d.N(), else allocates.
	Margins(dst []float64, d *Data) []float64
}

// Reporter is implemented by a Model that reports how its fit went; the
// kind copies the report of the released model into rows.csv and counts
// unconverged fits.
type Reporter interface {
	Report() FitReport
}

// FitReport is a fit's diagnostics. Columns: Solver → solver_status,
// GradNorm → grad_norm, Iter → newton_iter, EpsPrime → eps_prime,
// Fallback → objpert_fallback; a fit with Converged false counts in
// nonconverged_fits. A Model without a Reporter leaves those columns empty
// (eps_prime and grad_norm NaN, objpert_fallback false) and counts as
// converged.
type FitReport struct {
	Converged bool
	Solver    string
	GradNorm  float64
	Iter      int
	EpsPrime  float64 // objective perturbation's ε′; NaN when not applicable
	Fallback  bool    // objective perturbation's fallback branch
}

// Data is a labelled set of rows handed to a Learner (the training set T,
// or one part of it) or to a Model (V, W): rows idx of a design matrix X
// with labels y ∈ {−1, +1}. Its views are built on first use and shared;
// it is read-only and safe for concurrent use.
//
// Row norms: the rows are the dataset after the spec's preprocessing, the
// same for built-in datasets, data files and Go providers. With
// data.row_norm "l2-max" (the default), "l2-clip" or "l2-unit" every row has
// ‖x‖₂ ≤ 1, the bound objective perturbation's privacy analysis and most
// gradient-based ones assume; "l1-max" gives ‖x‖₁ ≤ 1 (so ‖x‖₂ ≤ 1 too);
// "none" gives no bound. The bound of l2-max is data-dependent (rows divided
// by the largest norm); a learner whose guarantee needs ‖x‖₂ ≤ 1 regardless
// of the spec should clip per-record contributions itself, as
// examples/go-extension/noisygd clips its per-record gradients.
type Data struct {
	x   *mat.Dense
	y   []float64
	idx []int

	denseOnce sync.Once
	dense     *mat.Dense
	ys        []float64
	ermOnce   sync.Once
	rows      *erm.Rows
	// parent, for a Data made by Subset: every row of X, whose ERM rows
	// this Data's are read from.
	parent  *Data
	keyOnce sync.Once
	key     string // scratchKey
}

// NewData returns the rows idx of X (nil: all rows, in order) with labels
// y[idx[k]]. It borrows X, y and idx. It panics if len(y) is not the
// number of rows of X or an index is out of range.
func NewData(X *mat.Dense, y []float64, idx []int) *Data {
	r, _ := X.Dims()
	if len(y) != r {
		panic(fmt.Sprintf("learners: NewData: len(y) = %d, X has %d rows", len(y), r))
	}
	for k, i := range idx {
		if i < 0 || i >= r {
			panic(fmt.Sprintf("learners: NewData: idx[%d] = %d out of range [0, %d)", k, i, r))
		}
	}
	return &Data{x: X, y: y, idx: idx}
}

// Subset returns the rows idx of d's X as NewData(X, y, idx) returns
// them, with the same views bit for bit, except that its ERM rows are
// read from d's (erm.Rows.Subset) instead of being built from X again: a
// kind that trains on many folds and parts of one dataset builds the
// dataset's rows once. d must hold every row of X (NewData(X, y, nil));
// Subset panics otherwise or if an index is out of range.
func (d *Data) Subset(idx []int) *Data {
	if d.idx != nil {
		panic("learners: Subset of a Data that does not hold every row of its X")
	}
	s := NewData(d.x, d.y, idx)
	s.parent = d
	return s
}

// Index returns the rows of X that d holds (nil: all of them, in order),
// as NewData was given them.
func (d *Data) Index() []int { return d.idx }

// N returns the number of rows.
func (d *Data) N() int {
	if d.idx == nil {
		r, _ := d.x.Dims()
		return r
	}
	return len(d.idx)
}

// D returns the number of columns.
func (d *Data) D() int {
	_, c := d.x.Dims()
	return c
}

func (d *Data) row(k int) int {
	if d.idx == nil {
		return k
	}
	return d.idx[k]
}

func (d *Data) materialize() {
	d.denseOnce.Do(func() {
		n, c := d.N(), d.D()
		d.dense = mat.NewDense(max(n, 1), c, nil)
		d.ys = make([]float64, n)
		for k := 0; k < n; k++ {
			i := d.row(k)
			d.dense.SetRow(k, d.x.RawRowView(i))
			d.ys[k] = d.y[i]
		}
		if n == 0 {
			d.dense = nil
		}
	})
}

// X returns the rows as an n×d matrix (a copy made on first use; nil when
// there are no rows). Callers must not modify it.
func (d *Data) X() *mat.Dense {
	d.materialize()
	return d.dense
}

// Y returns the labels, ±1, in row order. Callers must not modify it.
func (d *Data) Y() []float64 {
	d.materialize()
	return d.ys
}

// ERM returns the rows as core/erm's compressed rows (built on first use
// with erm.NewRows, or for a Subset read from its whole's with
// erm.Rows.Subset, and shared), for learners built on core/erm.
func (d *Data) ERM() *erm.Rows {
	d.ermOnce.Do(func() {
		switch {
		case d.parent != nil && d.idx == nil:
			d.rows = d.parent.ERM()
		case d.parent != nil:
			d.rows = d.parent.ERM().Subset(d.idx)
		default:
			d.rows = erm.NewRows(d.x, d.y, d.idx)
		}
	})
	return d.rows
}

// ObjectivePerturbation is the built-in learner "objective-perturbation":
// L2-regularized logistic regression (or the Huber-smoothed hinge loss)
// trained by objective perturbation, Chaudhuri, Monteleoni & Sarwate 2011
// (JMLR 12), Algorithm 2 — Algorithm 3 of Chaudhuri & Vinterbo 2013 — as
// implemented by core/perturb. Its release is the weight vector θ̃; the
// guarantee is pure ε-DP at the ε the plan delivers
// (perturb.ObjPertPlan.EpsilonDelivered: the requested ε for cms11, more
// for the labelled privatelr-1.1-69 variant), neighbouring training sets differing
// in one record.
//
// The spec keys tuning.loss, tuning.huber_h and
// tuning.objective_perturbation choose Loss and Variant (Configure). It is
// stable with the ramp-loss score (Theorem 4 of Chaudhuri & Vinterbo 2013:
// β₁ = 2/λ_min, β₂ = 1; tune.RampStabilityConstants).
type ObjectivePerturbation struct {
	// Loss is the training loss; nil means erm.Logistic{}.
	Loss erm.Loss
	// Variant is perturb.VariantCMS11 (empty means that) or
	// perturb.VariantPrivateLR1169.
	Variant string
}

// Name implements Learner: "objective-perturbation".
func (ObjectivePerturbation) Name() string { return "objective-perturbation" }

// Configure implements Configurer: the loss from c.Loss ("logistic", or
// "huber" with h = c.HuberH) and the variant from c.ObjPert (the spec keys
// tuning.loss, tuning.huber_h and tuning.objective_perturbation of the
// cv-tuning kind).
func (o ObjectivePerturbation) Configure(c Config) (Learner, error) {
	loss, err := c.loss(o.Name())
	if err != nil {
		return nil, err
	}
	o.Loss, o.Variant = loss, c.ObjPert
	return o, nil
}

// Fit implements Learner: one objective-perturbation fit (noise drawn from
// rng, then the solver run to its tolerance under ctx).
func (o ObjectivePerturbation) Fit(ctx context.Context, rng *rand.Rand, train *Data, lambda float64, level Level) (Model, privacy.Guarantee, error) {
	rows := train.ERM()
	plan, err := perturb.PlanObjPert(perturb.ObjPertOptions{
		Epsilon: level.Epsilon, Lambda: lambda, Loss: o.Loss, Variant: o.Variant,
	}, rows.N())
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	noise := make([]float64, rows.D())
	if err := plan.DrawNoise(noise, rng); err != nil {
		return nil, privacy.Guarantee{}, err
	}
	res, err := plan.Fit(rows, noise, erm.FitOptions{Context: ctx})
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	g := privacy.EpsDP(plan.EpsilonDelivered, fmt.Sprintf("the weights of one objective-perturbation fit (%s) on %d training rows", plan.Variant, rows.N()))
	return &linearModel{w: res.W, plan: plan, res: res}, g, nil
}

// StabilityConstants implements StableLearner: Theorem 4 of Chaudhuri &
// Vinterbo 2013 for the 1-Lipschitz ramp score with objective
// perturbation of a convex 1-Lipschitz loss (logistic and Huber are):
// β₁ = 2/λ_min, β₂ = 1, whatever n, α₁ and δ.
func (ObjectivePerturbation) StabilityConstants(_ context.Context, lambdas []float64, _ int, _, _ float64) (beta1, beta2 float64, err error) {
	if len(lambdas) == 0 {
		return 0, 0, fmt.Errorf("objective-perturbation: no candidate lambdas")
	}
	b1, b2 := tune.RampStabilityConstants(minFloat(lambdas))
	return b1, b2, nil
}

// Warnings implements Warner: the privatelr-1.1-69 variant does not deliver the
// stated ε.
func (o ObjectivePerturbation) Warnings() []string {
	if o.Variant == perturb.VariantCMS11 || o.Variant == "" {
		return nil
	}
	return []string{fmt.Sprintf("objective perturbation variant %q: reproduces an older implementation and does not deliver the stated ε; see eps_train in rows.csv", o.Variant)}
}

// linearModel is an objective-perturbation fit.
type linearModel struct {
	w    []float64
	plan perturb.ObjPertPlan
	res  erm.Result
}

// Margins implements Model: x·w, through core/erm's compressed rows.
func (m *linearModel) Margins(dst []float64, d *Data) []float64 {
	if len(dst) != d.N() {
		dst = nil
	}
	return d.ERM().Margins(dst, m.w)
}

// Report implements Reporter.
func (m *linearModel) Report() FitReport {
	return FitReport{
		Converged: m.res.Status == erm.StatusConverged,
		Solver:    m.res.Status, GradNorm: m.res.GradNorm, Iter: m.res.Iter,
		EpsPrime: m.plan.EpsilonPrime, Fallback: m.plan.Fallback,
	}
}

// OutputPerturbation is the built-in learner "output-perturbation":
// L2-regularized logistic regression (or the Huber-smoothed hinge loss)
// trained by output perturbation, Chaudhuri, Monteleoni & Sarwate 2011
// (JMLR 12), Algorithm 1 — Algorithm 4 of Chaudhuri & Vinterbo 2013
// (supplementary Section 6.2) — as implemented by core/perturb
// ([perturb.PlanOutPert]):
//
//	w* = argmin (λ/2)‖w‖² + (1/n)Σᵢ ℓ(yᵢ wᵀxᵢ)
//	release w* + b,  p(b) ∝ exp(−β‖b‖₂),  β = nλε/2
//
// The L2 sensitivity of w* is 2/(nλ) for a 1-Lipschitz loss and ‖x‖₂ ≤ 1
// (Lemma 1 of CMS11, as used in Chaudhuri & Vinterbo's proof of their
// Theorem 4; perturb checks the row norms and refuses larger ones), so the
// released weights are pure ε-DP at the ε asked for,
// neighbouring training sets differing in one record. Each Fit solves for
// w* again: a fresh release that spends its level again.
//
// The loss comes from the spec (Configure: tuning.loss or
// comparison.loss); objective perturbation's variant does not apply. It is
// stable with the ramp-loss score (Theorem 4 of Chaudhuri & Vinterbo 2013
// holds for Algorithms 3 and 4 alike: β₁ = 2/λ_min, β₂ = 1).
type OutputPerturbation struct {
	// Loss is the training loss; nil means erm.Logistic{}.
	Loss erm.Loss
}

// Name implements Learner: "output-perturbation".
func (OutputPerturbation) Name() string { return "output-perturbation" }

// Configure implements Configurer: the loss from c.Loss ("logistic", or
// "huber" with h = c.HuberH).
func (o OutputPerturbation) Configure(c Config) (Learner, error) {
	loss, err := c.loss(o.Name())
	if err != nil {
		return nil, err
	}
	o.Loss = loss
	return o, nil
}

// Fit implements Learner: one output-perturbation release. The noise b is
// drawn from rng first, then w* is solved to the solver's tolerance under
// ctx and w* + b released (perturb.OutPertPlan.Fit). level.Delta is not
// used: the release is pure ε-DP.
func (o OutputPerturbation) Fit(ctx context.Context, rng *rand.Rand, train *Data, lambda float64, level Level) (Model, privacy.Guarantee, error) {
	rows := train.ERM()
	plan, err := perturb.PlanOutPert(perturb.OutPertOptions{Epsilon: level.Epsilon, Lambda: lambda, Loss: o.Loss}, rows.N())
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	noise := make([]float64, rows.D())
	if err := plan.DrawNoise(noise, rng); err != nil {
		return nil, privacy.Guarantee{}, err
	}
	res, err := plan.Fit(rows, noise, erm.FitOptions{Context: ctx})
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	g := privacy.EpsDP(plan.EpsilonDelivered, fmt.Sprintf("the weights w* + b of one output-perturbation fit on %d training rows", rows.N()))
	return &weightModel{w: res.W, res: res}, g, nil
}

// StabilityConstants implements StableLearner: Theorem 4 of Chaudhuri &
// Vinterbo 2013 (its proof for output perturbation, supplementary Section
// 6.5) for the 1-Lipschitz ramp score: β₁ = 2/λ_min, β₂ = 1.
func (OutputPerturbation) StabilityConstants(_ context.Context, lambdas []float64, _ int, _, _ float64) (beta1, beta2 float64, err error) {
	if len(lambdas) == 0 {
		return 0, 0, fmt.Errorf("output-perturbation: no candidate lambdas")
	}
	b1, b2 := tune.RampStabilityConstants(minFloat(lambdas))
	return b1, b2, nil
}

// NonPrivate is the built-in learner "non-private": the exact regularized
// fit w* = argmin (λ/2)‖w‖² + (1/n)Σᵢ ℓ(yᵢ wᵀxᵢ), released as it is. It
// is the non-private reference of a comparison (the learner-comparison
// kind draws it as a horizontal line), Chaudhuri, Monteleoni & Sarwate
// 2011's "non-private" baseline. It ignores rng and level (the
// learner-comparison kind hands it ε = +Inf) and returns
// privacy.NonPrivate: the ledger books it as not private, never as a
// private method at the ε it was handed. No row-norm bound is needed.
type NonPrivate struct {
	// Loss is the training loss; nil means erm.Logistic{}.
	Loss erm.Loss
}

// Name implements Learner: "non-private".
func (NonPrivate) Name() string { return "non-private" }

// Configure implements Configurer: the loss from c.Loss.
func (np NonPrivate) Configure(c Config) (Learner, error) {
	loss, err := c.loss(np.Name())
	if err != nil {
		return nil, err
	}
	np.Loss = loss
	return np, nil
}

// Fit implements Learner: the exact fit, solved to the solver's tolerance
// under ctx (core/erm).
func (np NonPrivate) Fit(ctx context.Context, _ *rand.Rand, train *Data, lambda float64, _ Level) (Model, privacy.Guarantee, error) {
	if !(lambda > 0) || math.IsInf(lambda, 1) {
		return nil, privacy.Guarantee{}, fmt.Errorf("non-private: lambda must be finite and > 0 (got %v)", lambda)
	}
	loss := np.Loss
	if loss == nil {
		loss = erm.Logistic{}
	}
	rows := train.ERM()
	res, err := erm.Fit(rows, erm.Objective{Loss: loss, Lambda: lambda}, erm.FitOptions{Context: ctx})
	if err != nil {
		return nil, privacy.Guarantee{}, fmt.Errorf("non-private: %w", err)
	}
	g := privacy.NonPrivate(fmt.Sprintf("the exact regularized fit on %d training rows (not private)", rows.N()))
	return &weightModel{w: res.W, res: res}, g, nil
}

// weightModel is a linear model w released by a learner without
// objective perturbation's diagnostics: output perturbation's w* + b (its
// report describes the fit of w*) or the exact fit.
type weightModel struct {
	w   []float64
	res erm.Result
}

// Margins implements Model: x·w.
func (m *weightModel) Margins(dst []float64, d *Data) []float64 {
	if len(dst) != d.N() {
		dst = nil
	}
	return d.ERM().Margins(dst, m.w)
}

// Report implements Reporter (EpsPrime NaN: not objective perturbation).
func (m *weightModel) Report() FitReport {
	return FitReport{
		Converged: m.res.Status == erm.StatusConverged,
		Solver:    m.res.Status, GradNorm: m.res.GradNorm, Iter: m.res.Iter,
		EpsPrime: math.NaN(),
	}
}

// registered is the learner registry; the built-ins are filled here, users
// add theirs with [Register].
var registered = registry.New[Learner]("learner", nil, ObjectivePerturbation{}, OutputPerturbation{}, NonPrivate{})

// Lookup returns the learner that a spec names name, configured
// for it: the spec's external learner of that name when ext (the spec's
// [[methods]], see [External]; nil for none) serves one — its first
// worker is started and shaken hands with, and cfg's loss and row norm are
// passed to every fit — else the registered learner,
// passed through Configure with cfg when it is a [Configurer]. It is the
// one place where a kind turns a learner name into a Learner (the
// cv-tuning kind for tuning.learners, the learner-comparison kind for
// comparison.learners and comparison.reference), so that every source of
// learners the harness knows serves every kind. An unknown name is an
// error listing the known ones (there is no default); callers prefix the
// spec id and key path.
func Lookup(ext *external.Set, name string, cfg Config) (Learner, error) {
	if ext != nil && ext.Has(name, experiments.ServesLearner) {
		x, err := NewExternal(context.Background(), ext, name, cfg)
		if err != nil {
			return nil, err
		}
		if x.stable {
			return stableExternal{x}, nil
		}
		return x, nil
	}
	l, ok := registered.Lookup(name)
	if !ok {
		known := Names()
		if ext != nil {
			known = append(known, ext.Names(experiments.ServesLearner)...)
		}
		return nil, fmt.Errorf("unknown learner %q (known: %s)", name, strings.Join(known, ", "))
	}
	c, ok := l.(Configurer)
	if !ok {
		return l, nil
	}
	cl, err := c.Configure(cfg)
	switch {
	case err != nil:
		return nil, fmt.Errorf("learner %q: %w", name, err)
	case cl == nil || cl.Name() != name:
		return nil, fmt.Errorf("learner %q: Configure returned %v, not a learner of that name", name, cl)
	}
	return cl, nil
}

// Default is the learner a spec without tuning.learners runs.
const Default = "objective-perturbation"

// Register adds l to the learner registry under l.Name(), for
// specs to name in tuning.learners. Call it from main() before cli.Main
// (registration is not meant to race with runs). It returns an error
// wrapping registry.ErrBadName for a nil l or a name that breaks the registries'
// one rule (registry.CheckName: 1–64 bytes, a letter or digit, then
// letters, digits, '_', '.' or '-'; names become parts of unit keys and
// row labels), and one wrapping registry.ErrDuplicate for a name already
// registered.
func Register(l Learner) error { return registered.Register(l) }

// Names returns the registered learner names in registration order
// (the built-ins "objective-perturbation", "output-perturbation" and
// "non-private" first).
func Names() []string { return registered.Names() }

// DeclaredBy returns the name of learner l when its guarantees are its own
// word, which the harness does not check: a learner served by an external
// command ([External]) or one a user's module registered
// ([Register]) — a Go extension is no more audited by the harness
// than a worker is. It returns "" for the built-in learners, whose
// guarantees rest on the harness's own mechanisms (core/perturb, checked
// by its tests and privacy audit). The ledgers name such a learner in
// their charges' declared_by, and the figures' legends say "declared by
// the method".
func DeclaredBy(l Learner) string {
	if l == nil || registered.BuiltinName(params.Base(l.Name())) {
		return ""
	}
	return l.Name()
}

// RecordDeclared records, in a traced run, the fit of a learner whose
// guarantee is its own word ([DeclaredBy]) as a declared release
// (mech.RecordDeclared) with the guarantee it declared, unless the
// learner declares its own mechanisms (a Mechanisms() []string method)
// or its fit recorded a release of the harness's mechanisms (a Go
// learner built on OutputPerturbation, say): those record themselves.
func RecordDeclared(rng *rand.Rand, l Learner, g privacy.Guarantee, dim int) {
	by := DeclaredBy(l)
	if _, own := l.(interface{ Mechanisms() []string }); by == "" || own {
		return
	}
	mech.RecordDeclared(rng, by, g, dim)
}

// Mechanisms returns the mechanisms (mech.Release.Mechanism) the
// fits of l record: the built-in learners' own, none for the
// non-private one, those a learner declares with a Mechanisms() []string
// method, and mech.Declared(name) for any other (an external worker, a
// user's module), whose noise the harness does not draw.
func Mechanisms(l Learner) []string {
	if ms, ok := learnerMechanisms[l.Name()]; ok && DeclaredBy(l) == "" {
		return ms
	}
	if own, ok := l.(interface{ Mechanisms() []string }); ok {
		return own.Mechanisms()
	}
	if DeclaredBy(l) == "" {
		return nil // the non-private learner
	}
	return []string{mech.Declared(l.Name())}
}

func minFloat(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

// learnerMechanisms are the mechanisms the fits of the built-in learners
// draw (the non-private learner draws none).
var learnerMechanisms = map[string][]string{
	ObjectivePerturbation{}.Name(): {"objective-perturbation"},
	OutputPerturbation{}.Name():    {"output-perturbation"},
}

// Unregister removes the learner called name that a user registered
// ([Register]); a name not registered is ignored. It is for tests that
// register a learner and undo it; unregistering a built-in panics.
func Unregister(name string) { registered.Remove(name) }
