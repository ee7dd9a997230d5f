package selection

import (
	"context"
	"math/rand/v2"
	"slices"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/tune"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/registry"
)

// Selector is a private parameter-tuning (selection) method of both tuning
// kinds: given a total privacy budget α, it trains candidates through
// [Candidates], picks one parameter and releases one model, and states
// what that cost. The built-ins are the five methods of Chaudhuri &
// Vinterbo 2013 (NIPS), Section 5: [Stability] (Algorithms 1–2),
// [AlphaSplit], [DataSplit], [Random] and [Control]. Register another with
// [Register]; a spec runs it by name in tuning.methods.
//
// A Selector must be safe for concurrent use (units run in parallel).
type Selector interface {
	// Name is the registry name, as tuning.methods lists it.
	Name() string
	// Select runs the method on the unit's candidates at budget b,
	// drawing every random number from rng (in a fixed order: a unit
	// replays), and returns the choice, the released fit and the Account
	// of what the release cost, composed from the guarantees the fits
	// returned (Fit.Guarantee). It should return ctx's error soon after
	// ctx is done (Candidates.Train does, before each fit).
	Select(ctx context.Context, rng *rand.Rand, c Candidates, b Budget) (Outcome, error)
	// Plan returns the Account the method promises at budget b for k
	// candidates, when every training run delivers exactly the level it
	// is handed: the charges of the paper's theorem, without running
	// anything. Its charges' Covers describe the releases in the words
	// of t. The ledger takes its structure (parts, data, rule, notions)
	// from Plan; the histogram kind also its numbers (see cvtune.Hist).
	Plan(b Budget, k int, t Terms) (Account, error)
}

// StabilityUser is implemented by a Selector that calls
// Candidates.StabilityBeta, so that a kind can check when it loads a spec
// that the learner has stability constants at the level the method will
// ask for (Theorem 6's sample size, for the histogram kind).
type StabilityUser interface {
	Selector
	// StabilityLevel returns the training level α₁ at which the method
	// asks for β at budget b.
	StabilityLevel(b Budget) float64
}

// Splitter is implemented by a Selector that trains candidates on parts of
// the training set T (Candidates.Split), so that a kind can refuse, when
// it loads a spec, data too small for those parts ([DataSplit]: one part
// per candidate). A Selector that splits T without implementing it is
// checked only when a unit runs (Split's error fails the unit).
type Splitter interface {
	Selector
	// SplitParts returns the number of parts T is split into for k
	// candidates.
	SplitParts(k int) int
}

// Budget is what a selection method may spend on one unit.
type Budget struct {
	// Alpha is the total privacy level α of the method. Finite and > 0.
	Alpha float64
	// Delta is the δ of the stability-based validation (Theorem 1 of
	// Chaudhuri & Vinterbo 2013): the spec's tuning.delta, in (0, 1).
	Delta float64
	// TrainDelta is the δ of the training budget, for learners whose
	// guarantee is (ε, δ)-DP (or ρ-zCDP, stated at the δ of each fit):
	// the spec's tuning.train_delta, in [0, 1); 0 for pure ε-DP learners
	// (the paper's). The built-in methods split it as they split α:
	// alphaSplit hands each of its k fits δ/k (sequential composition),
	// dataSplit each part's fit δ (parallel composition), random,
	// control and stability's final release δ.
	TrainDelta float64
}

// level returns the level of a fit at ε eps and δ delta.
func level(eps, delta float64) learners.Level { return learners.Level{Epsilon: eps, Delta: delta} }

// budgetGuarantee is the guarantee of a training budget (ε, δ): pure ε-DP
// when δ = 0.
func budgetGuarantee(eps, delta float64, covers string) privacy.Guarantee {
	if delta > 0 {
		return privacy.EpsDeltaDP(eps, delta, covers)
	}
	return privacy.EpsDP(eps, covers)
}

// Terms name, for a ledger, what a method works on; the kind fills them.
type Terms struct {
	Fit     string // one private training run, e.g. "objective-perturbation fit"
	Param   string // the tuned parameter, e.g. "lambda"
	Utility string // what the exponential mechanism ranks
	Score   string // what Control maximizes
}

// Candidates is what a Selector trains and scores: the k candidate
// parameters θ_1..θ_k of one unit, bound to its training set T and
// validation set V (disjoint). A kind implements it per unit: the
// cv-tuning kind over a learners.Learner, the histogram kind over Algorithm 5 of
// Chaudhuri & Vinterbo 2013 (core/histogram). It is used by one goroutine.
type Candidates interface {
	// K is the number of candidates, ≥ 1.
	K() int
	// Terms describe the candidates for the ledger.
	Terms() Terms
	// Split partitions T into parts disjoint parts of equal size (±1),
	// drawing from rng if the partition is random; Train with parts > 1
	// needs it first.
	Split(rng *rand.Rand, parts int) error
	// Train trains candidate i (0-based) at level on part `part` of the
	// `parts` parts of T made by Split (parts == 1: all of T), drawing
	// its noise from rng, and scores it on V.
	Train(rng *rand.Rand, i int, level learners.Level, part, parts int) (Fit, error)
	// StabilityBeta returns β = max(β₁/n, β₂/m) of Algorithm 1, line 4
	// (n = |T|, m = |V|), from the constants of Definition 2 at training
	// level alpha1 and the δ of Theorem 1, or an error when the learner
	// has none or their conditions fail.
	StabilityBeta(alpha1, delta float64) (float64, error)
}

// Fit is one trained candidate, as a Selector sees it.
type Fit struct {
	Index     int               // candidate index i (0-based)
	Level     learners.Level    // the level it was trained at
	Guarantee privacy.Guarantee // booked for the run: the learner's guarantee, or Level where that claims less (learners.CheckLevel)
	Score     float64           // validation score q(h, V); higher is better
	// Errors is the loss the exponential mechanism of alphaSplit and
	// dataSplit ranks: sensitivity 1 in V (the error count of a
	// classifier).
	Errors float64
	Model  any // the kind's trained model; opaque to selectors
}

// Part names what a Charge pays for: rows.csv's eps_train is the sum of
// the training charges' ε, eps_tuning that of the tuning charges.
type Part string

// The parts of an Account.
const (
	Training Part = "training" // training runs whose output is released or composed into it
	Tuning   Part = "tuning"   // the selection of i*
)

// Charge is one component of what a release cost.
type Charge struct {
	Part Part
	Data string // the data it touches: "T", "V", "T,V"
	// Guarantee is the component's guarantee; its Covers says, in words,
	// what is computed or released.
	Guarantee privacy.Guarantee
}

// Account is what one released output of a selection method cost: its
// components and their composition.
type Account struct {
	Charges []Charge
	Total   privacy.Guarantee // the composition of Charges
	Rule    string            // how Charges compose, citing the theorem
}

// Outcome is the outcome of a Selector on one unit.
type Outcome struct {
	Index   int     // chosen candidate i* (0-based)
	Fit     Fit     // the released fit
	Fits    int     // number of training runs
	Account Account // what the release cost
}

// Stability is the built-in selector "stability": Algorithm 2 of Chaudhuri
// & Vinterbo 2013 (Validate, Algorithm 1, then a fresh fit of the chosen
// candidate) at α₁ = α₂ = α/2, as in the paper's Section 5. It costs
// (α₁ + α₂, δ) (Theorem 2) when the learner's score is
// (β₁, β₂, δ/k)-stable at α₁ (Theorem 1); the training charge is what
// the final fit delivered.
type Stability struct{}

// Name implements Selector.
func (Stability) Name() string { return "stability" }

// StabilityLevel implements StabilityUser: α/2.
func (Stability) StabilityLevel(b Budget) float64 { return b.Alpha / 2 }

// Select implements Selector.
func (s Stability) Select(ctx context.Context, rng *rand.Rand, c Candidates, b Budget) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	beta, err := c.StabilityBeta(s.StabilityLevel(b), b.Delta)
	if err != nil {
		return Outcome{}, err
	}
	p := &trainer{c: c, delta: b.TrainDelta, selection: "selection: Algorithm 1's noisy argmax of the validation scores", selectionT: true}
	ch, err := tune.Stability[Fit](rng, p, b.Alpha/2, b.Alpha/2, beta)
	if err != nil {
		return Outcome{}, err
	}
	a, err := s.account(b, c.Terms(), ch.Model.Guarantee)
	return selection(ch, a), err
}

// Plan implements Selector.
func (s Stability) Plan(b Budget, _ int, t Terms) (Account, error) {
	return s.account(b, t, budgetGuarantee(b.Alpha/2, b.TrainDelta, ""))
}

func (Stability) account(b Budget, t Terms, final privacy.Guarantee) (Account, error) {
	tuning := privacy.EpsDeltaDP(b.Alpha/2, b.Delta, "Validate (Algorithm 1): k "+t.Fit+"s at alpha/2, not released; noisy argmax with Exp noise")
	train, err := privacy.Compose(privacy.Sequential, "final release: "+t.Fit+" at alpha/2 with fresh noise (Algorithm 2, line 3)", final)
	if err != nil {
		return Account{}, err
	}
	rule := "Theorem 2 of Chaudhuri & Vinterbo 2013: (alpha1 + alpha2, delta)"
	if b.TrainDelta > 0 {
		rule += "; the final fit's own δ (tuning.train_delta) adds to it (sequential composition)"
	}
	return account(privacy.Sequential, rule, Charge{Tuning, "T,V", tuning}, Charge{Training, "T", train})
}

// AlphaSplit is the built-in selector "alphaSplit" of Chaudhuri & Vinterbo
// 2013, Section 5: every candidate trained on T at α/k, i* drawn by the
// exponential mechanism p_i ∝ exp(−α·e_i/2) on the validation errors. The
// training runs compose sequentially, the mechanism costs α on V, and T
// and V are disjoint: α-DP (Theorem 5).
type AlphaSplit struct{}

// Name implements Selector.
func (AlphaSplit) Name() string { return "alphaSplit" }

// Select implements Selector.
func (s AlphaSplit) Select(ctx context.Context, rng *rand.Rand, c Candidates, b Budget) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	p := &trainer{c: c, delta: b.TrainDelta / float64(c.K()), selection: expMechWhat}
	ch, err := tune.AlphaSplit[Fit](rng, p, b.Alpha)
	if err != nil {
		return Outcome{}, err
	}
	train, err := privacy.Compose(privacy.Sequential, s.trainCovers(c.Terms()), p.guarantees()...)
	if err != nil {
		return Outcome{}, err
	}
	a, err := splitAccount(b, c.Terms(), train)
	return selection(ch, a), err
}

// Plan implements Selector: k runs at (α/k, δ/k) compose to (α, δ).
func (s AlphaSplit) Plan(b Budget, _ int, t Terms) (Account, error) {
	return splitAccount(b, t, budgetGuarantee(b.Alpha, b.TrainDelta, s.trainCovers(t)))
}

func (AlphaSplit) trainCovers(t Terms) string {
	return "k " + t.Fit + "s at alpha/k (and train_delta/k) each (sequential composition)"
}

// DataSplit is the built-in selector "dataSplit" of Chaudhuri & Vinterbo
// 2013, Section 5 (the procedure of Chaudhuri, Monteleoni & Sarwate 2011):
// T partitioned into k parts (Candidates.Split), candidate i trained on
// part i at α, i* drawn by the exponential mechanism
// p_i ∝ exp(−α·e_i/2). The runs on disjoint parts compose in parallel:
// α-DP (Theorem 5).
type DataSplit struct{}

// Name implements Selector.
func (DataSplit) Name() string { return "dataSplit" }

// SplitParts implements Splitter: one part of T per candidate.
func (DataSplit) SplitParts(k int) int { return k }

// Select implements Selector. The partition of T is drawn first.
func (s DataSplit) Select(ctx context.Context, rng *rand.Rand, c Candidates, b Budget) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	k := c.K()
	if k < 1 {
		return Outcome{}, tune.ErrNoCandidates
	}
	if err := c.Split(rng, k); err != nil {
		return Outcome{}, err
	}
	p := &trainer{c: c, delta: b.TrainDelta, selection: expMechWhat}
	ch, err := tune.DataSplit[Fit](rng, p, b.Alpha)
	if err != nil {
		return Outcome{}, err
	}
	train, err := privacy.Compose(privacy.Parallel, s.trainCovers(c.Terms()), p.guarantees()...)
	if err != nil {
		return Outcome{}, err
	}
	a, err := splitAccount(b, c.Terms(), train)
	return selection(ch, a), err
}

// Plan implements Selector.
func (s DataSplit) Plan(b Budget, _ int, t Terms) (Account, error) {
	return splitAccount(b, t, budgetGuarantee(b.Alpha, b.TrainDelta, s.trainCovers(t)))
}

func (DataSplit) trainCovers(t Terms) string {
	return "k " + t.Fit + "s at alpha on disjoint parts of T (parallel composition)"
}

// splitAccount is the Account of alphaSplit and dataSplit (Theorem 5).
func splitAccount(b Budget, t Terms, train privacy.Guarantee) (Account, error) {
	tuning := privacy.EpsDP(b.Alpha, "exponential mechanism on "+t.Utility)
	const rule = "Theorem 5: T and V disjoint, parallel composition: max(training, tuning)"
	return account(privacy.Parallel, rule, Charge{Training, "T", train}, Charge{Tuning, "V", tuning})
}

// Random is the built-in selector "random" of Chaudhuri & Vinterbo 2013,
// Section 5: i* uniform on the k candidates, the model trained on T at α.
// The choice does not look at the data: the release costs what the one
// fit delivered (α-DP, Theorem 5). See tune.Random for its deviation
// (only the chosen candidate is trained).
type Random struct{}

// Name implements Selector.
func (Random) Name() string { return "random" }

// Select implements Selector.
func (s Random) Select(ctx context.Context, rng *rand.Rand, c Candidates, b Budget) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	p := &trainer{c: c, delta: b.TrainDelta}
	ch, err := tune.Random[Fit](rng, p, b.Alpha)
	if err != nil {
		return Outcome{}, err
	}
	a, err := s.account(c.Terms(), ch.Model.Guarantee)
	return selection(ch, a), err
}

// Plan implements Selector.
func (s Random) Plan(b Budget, _ int, t Terms) (Account, error) {
	return s.account(t, budgetGuarantee(b.Alpha, b.TrainDelta, ""))
}

func (Random) account(t Terms, fit privacy.Guarantee) (Account, error) {
	train, err := privacy.Compose(privacy.Sequential, "one "+t.Fit+" at alpha for a uniformly chosen "+t.Param, fit)
	if err != nil {
		return Account{}, err
	}
	return account(privacy.Sequential, "the choice does not look at the data", Charge{Training, "T", train})
}

// Control is the built-in selector "control" of Chaudhuri & Vinterbo 2013,
// Section 5: every candidate trained on T at α, i* the exact argmax of the
// validation score. Its selection is not private, so neither is its
// release (privacy.NonPrivate); it is the paper's reference upper bound.
type Control struct{}

// Name implements Selector.
func (Control) Name() string { return "control" }

// Select implements Selector.
func (s Control) Select(ctx context.Context, rng *rand.Rand, c Candidates, b Budget) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	p := &trainer{c: c, delta: b.TrainDelta}
	ch, err := tune.Control[Fit](rng, p, b.Alpha)
	if err != nil {
		return Outcome{}, err
	}
	train, err := privacy.Compose(privacy.Sequential, s.trainCovers(c.Terms()), p.guarantees()...)
	if err != nil {
		return Outcome{}, err
	}
	a, err := s.account(c.Terms(), train)
	return selection(ch, a), err
}

// Plan implements Selector: k runs at α.
func (s Control) Plan(b Budget, k int, t Terms) (Account, error) {
	return s.account(t, budgetGuarantee(float64(k)*b.Alpha, float64(k)*b.TrainDelta, s.trainCovers(t)))
}

func (Control) trainCovers(t Terms) string {
	return "k " + t.Fit + "s at alpha each (sequential composition)"
}

func (Control) account(t Terms, train privacy.Guarantee) (Account, error) {
	tuning := privacy.NonPrivate("exact argmax of the " + t.Score + " (NOT private)")
	return account(privacy.Sequential, "not private: reference upper bound", Charge{Training, "T", train}, Charge{Tuning, "V", tuning})
}

// Compose returns the Account of charges composed under rule, which
// words state (citing the theorem): the helper for a user's selector to
// state what its release cost.
func Compose(rule privacy.Rule, words string, charges ...Charge) (Account, error) {
	return account(rule, words, charges...)
}

// account composes charges under rule into an Account.
func account(rule privacy.Rule, words string, charges ...Charge) (Account, error) {
	gs := make([]privacy.Guarantee, len(charges))
	for i, c := range charges {
		gs[i] = c.Guarantee
	}
	total, err := privacy.Compose(rule, words, gs...)
	if err != nil {
		return Account{}, err
	}
	return Account{Charges: charges, Total: total, Rule: words}, nil
}

// trainer adapts Candidates to tune.Procedure for the algorithms of
// package tune (pure ε levels), recording every fit. After each fit it
// scopes the generator for the selection that may draw next (mech.Scope;
// Candidates.Train scopes each fit): selection says what it is ("" for a
// method whose selection draws nothing), selectionT whether it reads T as
// well as V.
type trainer struct {
	c          Candidates
	delta      float64 // the δ of every fit's level (0: pure ε-DP levels)
	fits       []Fit
	selection  string
	selectionT bool
}

// expMechWhat is the scope of the exponential mechanism of alphaSplit and
// dataSplit.
const expMechWhat = "selection: exponential mechanism on the validation errors"

// scoper is implemented by Candidates that name the records a selection
// reads (V; T and V with withT), for mech.Scope in traced runs (the
// cv-tuning kinds' candidates do).
type scoper interface {
	SelectionRecords(withT bool) mech.Records
}

func (p *trainer) K() int { return p.c.K() }

func (p *trainer) Train(rng *rand.Rand, i int, epsilon float64, part, parts int) (Fit, error) {
	f, err := p.c.Train(rng, i, level(epsilon, p.delta), part, parts)
	if err != nil {
		return f, err
	}
	p.fits = append(p.fits, f)
	if s, ok := p.c.(scoper); ok && p.selection != "" {
		mech.Scope(rng, p.selection, s.SelectionRecords(p.selectionT))
	}
	return f, nil
}

func (p *trainer) Score(f Fit) float64  { return f.Score }
func (p *trainer) Errors(f Fit) float64 { return f.Errors }

// guarantees returns the guarantees of the fits, in training order.
func (p *trainer) guarantees() []privacy.Guarantee {
	gs := make([]privacy.Guarantee, len(p.fits))
	for i, f := range p.fits {
		gs[i] = f.Guarantee
	}
	return gs
}

func selection(ch tune.Choice[Fit], a Account) Outcome {
	return Outcome{Index: ch.Index, Fit: ch.Model, Fits: ch.Fits, Account: a}
}

// selectors is the selector registry; the built-ins are filled here, in
// the paper's order, and users add theirs with Register.
var selectors = registry.New[Selector]("method", nil, Stability{}, AlphaSplit{}, DataSplit{}, Random{}, Control{})

// Register adds m to the selector registry under m.Name(), for
// specs to name in tuning.methods. Call it from main() before cli.Main.
// Errors are as for learners.Register (registry.ErrBadName, registry.ErrDuplicate).
func Register(m Selector) error { return selectors.Register(m) }

// Names returns the registered selector names in registration
// order (the five built-ins first, in the paper's order).
func Names() []string { return selectors.Names() }

// DeclaredBy returns the name of selector m when it is not one of
// the five built-ins of Chaudhuri & Vinterbo 2013 but one a user's module
// registered ([Register]): the Account it states (its tuning
// charge and how it composes the fits) is then its own word, which the
// harness does not check ("" for a built-in). See learners.DeclaredBy.
func DeclaredBy(m Selector) string {
	if m == nil || selectors.Builtin(m) {
		return ""
	}
	return m.Name()
}

// selectorMechanisms are the mechanisms (mech.Release.Mechanism) the
// selections of the built-in selectors draw: Algorithm 1's exponential
// noise for stability, the exponential mechanism of alphaSplit and
// dataSplit; random and control draw no selection noise.
var selectorMechanisms = map[string][]string{
	Stability{}.Name():  {"stability-noisy-max"},
	AlphaSplit{}.Name(): {"exponential-mechanism"},
	DataSplit{}.Name():  {"exponential-mechanism"},
}

// Builtin reports whether s is one of the five built-in selectors of
// Chaudhuri & Vinterbo 2013 (by name: no other selector can take one).
func Builtin(s Selector) bool { return selectors.Builtin(s) }

// Mechanisms returns the mechanisms (mech.Release.Mechanism) the
// selections of s draw: a built-in's own (none for random and control),
// and mech.Declared(name) for a selector a user registered, whose noise
// the harness does not draw.
func Mechanisms(s Selector) []string {
	if selectors.Builtin(s) {
		return slices.Clone(selectorMechanisms[s.Name()])
	}
	return []string{mech.Declared(s.Name())}
}

// Lookup returns the selector called name; an unknown name is an error
// listing the known ones, with a "did you mean" (there is no default).
func Lookup(name string) (Selector, error) { return selectors.Get(name) }

// Unregister removes the selector called name that a user registered
// ([Register]); a name not registered is ignored. It is for tests that
// register a selector and undo it; unregistering a built-in panics.
func Unregister(name string) { selectors.Remove(name) }
