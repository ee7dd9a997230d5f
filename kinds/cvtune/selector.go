package cvtune

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/tune"
	"github.com/dprepro/dprepro/methods/registry"
)

// Selector is a private parameter-tuning (selection) method of both tuning
// kinds: given a total privacy budget α, it trains candidates through
// [Candidates], picks one parameter and releases one model, and states
// what that cost. The built-ins are the five methods of Chaudhuri &
// Vinterbo 2013 (NIPS), Section 5: [Stability] (Algorithms 1–2),
// [AlphaSplit], [DataSplit], [Random] and [Control]. Register another with
// [RegisterSelector]; a spec runs it by name in tuning.methods.
//
// A Selector must be safe for concurrent use (units run in parallel).
type Selector interface {
	// Name is the registry name, as tuning.methods lists it.
	Name() string
	// Select runs the method on the unit's candidates at budget b,
	// drawing every random number from rng (in a fixed order: a unit
	// replays), and returns the choice, the released fit and the Account
	// of what the release cost, composed from the guarantees the fits
	// returned (Fit.Guarantee).
	Select(rng *rand.Rand, c Candidates, b Budget) (Selection, error)
	// Plan returns the Account the method promises at budget b for k
	// candidates, when every training run delivers exactly the level it
	// is handed: the charges of the paper's theorem, without running
	// anything. Its charges' Covers describe the releases in the words
	// of t. The ledger takes its structure (parts, data, rule, notions)
	// from Plan; the histogram kind also its numbers (see [Hist]).
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
// cv-tuning kind over a [Learner], the histogram kind over Algorithm 5 of
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
	Train(rng *rand.Rand, i int, level Level, part, parts int) (Fit, error)
	// StabilityBeta returns β = max(β₁/n, β₂/m) of Algorithm 1, line 4
	// (n = |T|, m = |V|), from the constants of Definition 2 at training
	// level alpha1 and the δ of Theorem 1, or an error when the learner
	// has none or their conditions fail.
	StabilityBeta(alpha1, delta float64) (float64, error)
}

// Fit is one trained candidate, as a Selector sees it.
type Fit struct {
	Index     int               // candidate index i (0-based)
	Level     Level             // the level it was trained at
	Guarantee privacy.Guarantee // booked for the run: the learner's guarantee, or Level where that claims less ([CheckLevel])
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

// Selection is the outcome of a Selector on one unit.
type Selection struct {
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
func (s Stability) Select(rng *rand.Rand, c Candidates, b Budget) (Selection, error) {
	beta, err := c.StabilityBeta(s.StabilityLevel(b), b.Delta)
	if err != nil {
		return Selection{}, err
	}
	p := &trainer{c: c, selection: "selection: Algorithm 1's noisy argmax of the validation scores", selectionT: true}
	ch, err := tune.Stability[Fit](rng, p, b.Alpha/2, b.Alpha/2, beta)
	if err != nil {
		return Selection{}, err
	}
	a, err := s.account(b, c.Terms(), ch.Model.Guarantee)
	return selection(ch, a), err
}

// Plan implements Selector.
func (s Stability) Plan(b Budget, _ int, t Terms) (Account, error) {
	return s.account(b, t, privacy.EpsDP(b.Alpha/2, ""))
}

func (Stability) account(b Budget, t Terms, final privacy.Guarantee) (Account, error) {
	tuning := privacy.EpsDeltaDP(b.Alpha/2, b.Delta, "Validate (Algorithm 1): k "+t.Fit+"s at alpha/2, not released; noisy argmax with Exp noise")
	train, err := privacy.Compose(privacy.Sequential, "final release: "+t.Fit+" at alpha/2 with fresh noise (Algorithm 2, line 3)", final)
	if err != nil {
		return Account{}, err
	}
	const rule = "Theorem 2 of Chaudhuri & Vinterbo 2013: (alpha1 + alpha2, delta)"
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
func (s AlphaSplit) Select(rng *rand.Rand, c Candidates, b Budget) (Selection, error) {
	p := &trainer{c: c, selection: expMechWhat}
	ch, err := tune.AlphaSplit[Fit](rng, p, b.Alpha)
	if err != nil {
		return Selection{}, err
	}
	train, err := privacy.Compose(privacy.Sequential, s.trainCovers(c.Terms()), p.guarantees()...)
	if err != nil {
		return Selection{}, err
	}
	a, err := splitAccount(b, c.Terms(), train)
	return selection(ch, a), err
}

// Plan implements Selector: k runs at α/k compose to α.
func (s AlphaSplit) Plan(b Budget, _ int, t Terms) (Account, error) {
	return splitAccount(b, t, privacy.EpsDP(b.Alpha, s.trainCovers(t)))
}

func (AlphaSplit) trainCovers(t Terms) string {
	return "k " + t.Fit + "s at alpha/k each (sequential composition)"
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
func (s DataSplit) Select(rng *rand.Rand, c Candidates, b Budget) (Selection, error) {
	k := c.K()
	if k < 1 {
		return Selection{}, tune.ErrNoCandidates
	}
	if err := c.Split(rng, k); err != nil {
		return Selection{}, err
	}
	p := &trainer{c: c, selection: expMechWhat}
	ch, err := tune.DataSplit[Fit](rng, p, b.Alpha)
	if err != nil {
		return Selection{}, err
	}
	train, err := privacy.Compose(privacy.Parallel, s.trainCovers(c.Terms()), p.guarantees()...)
	if err != nil {
		return Selection{}, err
	}
	a, err := splitAccount(b, c.Terms(), train)
	return selection(ch, a), err
}

// Plan implements Selector.
func (s DataSplit) Plan(b Budget, _ int, t Terms) (Account, error) {
	return splitAccount(b, t, privacy.EpsDP(b.Alpha, s.trainCovers(t)))
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
func (s Random) Select(rng *rand.Rand, c Candidates, b Budget) (Selection, error) {
	p := &trainer{c: c}
	ch, err := tune.Random[Fit](rng, p, b.Alpha)
	if err != nil {
		return Selection{}, err
	}
	a, err := s.account(c.Terms(), ch.Model.Guarantee)
	return selection(ch, a), err
}

// Plan implements Selector.
func (s Random) Plan(b Budget, _ int, t Terms) (Account, error) {
	return s.account(t, privacy.EpsDP(b.Alpha, ""))
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
func (s Control) Select(rng *rand.Rand, c Candidates, b Budget) (Selection, error) {
	p := &trainer{c: c}
	ch, err := tune.Control[Fit](rng, p, b.Alpha)
	if err != nil {
		return Selection{}, err
	}
	train, err := privacy.Compose(privacy.Sequential, s.trainCovers(c.Terms()), p.guarantees()...)
	if err != nil {
		return Selection{}, err
	}
	a, err := s.account(c.Terms(), train)
	return selection(ch, a), err
}

// Plan implements Selector: k runs at α.
func (s Control) Plan(b Budget, k int, t Terms) (Account, error) {
	return s.account(t, privacy.EpsDP(float64(k)*b.Alpha, s.trainCovers(t)))
}

func (Control) trainCovers(t Terms) string {
	return "k " + t.Fit + "s at alpha each (sequential composition)"
}

func (Control) account(t Terms, train privacy.Guarantee) (Account, error) {
	tuning := privacy.NonPrivate("exact argmax of the " + t.Score + " (NOT private)")
	return account(privacy.Sequential, "not private: reference upper bound", Charge{Training, "T", train}, Charge{Tuning, "V", tuning})
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
	fits       []Fit
	selection  string
	selectionT bool
}

// expMechWhat is the scope of the exponential mechanism of alphaSplit and
// dataSplit.
const expMechWhat = "selection: exponential mechanism on the validation errors"

// scoper is implemented by the Candidates of this package's kinds: the
// records a selection reads (V; T and V with withT), for mech.Scope.
type scoper interface {
	selectionRecords(withT bool) mech.Records
}

// union returns the sorted union of two sorted, disjoint index sets.
func union(a, b []int) []int {
	out := append(append(make([]int, 0, len(a)+len(b)), a...), b...)
	slices.Sort(out)
	return out
}

func (p *trainer) K() int { return p.c.K() }

func (p *trainer) Train(rng *rand.Rand, i int, epsilon float64, part, parts int) (Fit, error) {
	f, err := p.c.Train(rng, i, Level{Epsilon: epsilon}, part, parts)
	if err != nil {
		return f, err
	}
	p.fits = append(p.fits, f)
	if s, ok := p.c.(scoper); ok && p.selection != "" {
		mech.Scope(rng, p.selection, s.selectionRecords(p.selectionT))
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

func selection(ch tune.Choice[Fit], a Account) Selection {
	return Selection{Index: ch.Index, Fit: ch.Model, Fits: ch.Fits, Account: a}
}

// selectors is the selector registry; the built-ins are filled here, in
// the paper's order, and users add theirs with RegisterSelector.
var selectors = registry.New[Selector]("method", nil, Stability{}, AlphaSplit{}, DataSplit{}, Random{}, Control{})

// RegisterSelector adds m to the selector registry under m.Name(), for
// specs to name in tuning.methods. Call it from main() before cli.Main.
// Errors are as for [RegisterLearner] (ErrBadName, ErrDuplicate).
func RegisterSelector(m Selector) error { return selectors.Register(m) }

// SelectorNames returns the registered selector names in registration
// order (the five built-ins first, in the paper's order).
func SelectorNames() []string { return selectors.Names() }

// SelectorDeclaredBy returns the name of selector m when it is not one of
// the five built-ins of Chaudhuri & Vinterbo 2013 but one a user's module
// registered ([RegisterSelector]): the Account it states (its tuning
// charge and how it composes the fits) is then its own word, which the
// harness does not check ("" for a built-in). See [DeclaredBy].
func SelectorDeclaredBy(m Selector) string {
	if m == nil || selectors.Builtin(m) {
		return ""
	}
	return m.Name()
}

// columns are the privacy columns of rows.csv from an Account: eps_train
// and eps_tuning sum the ε of the training and tuning charges (0 when
// there are none), delta_train and delta_tuning their δ, delta and
// eps_total are the Total's, private whether the Total is a privacy
// guarantee.
type columns struct {
	train, tuning, delta, total float64
	trainDelta, tuningDelta     float64
	private                     bool
}

func accountColumns(a Account) (columns, error) {
	var c columns
	for _, ch := range a.Charges {
		g := ch.Guarantee
		if err := g.Validate(); err != nil {
			return c, err
		}
		if g.Notion == privacy.ZCDP {
			return c, fmt.Errorf("cvtune: %s charge is ρ-zCDP; rows.csv records (ε, δ): convert it with Guarantee.ToApprox", ch.Part)
		}
		switch ch.Part {
		case Training:
			c.train += g.Epsilon
			c.trainDelta += g.Delta
		case Tuning:
			c.tuning += g.Epsilon
			c.tuningDelta += g.Delta
		default:
			return c, fmt.Errorf("cvtune: charge of unknown part %q", ch.Part)
		}
	}
	if err := a.Total.Validate(); err != nil {
		return c, err
	}
	if a.Total.Notion == privacy.ZCDP {
		return c, fmt.Errorf("cvtune: total is ρ-zCDP; rows.csv records (ε, δ): convert it with Guarantee.ToApprox")
	}
	c.delta, c.total, c.private = a.Total.Delta, a.Total.Epsilon, a.Total.Private()
	return c, nil
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

// learnerMechanisms are the mechanisms the fits of the built-in learners
// draw (the non-private learner draws none).
var learnerMechanisms = map[string][]string{
	ObjectivePerturbation{}.Name(): {"objective-perturbation"},
	OutputPerturbation{}.Name():    {"output-perturbation"},
}

// recordSelection records, in a traced run, the selection of a selector
// that is not built in as a declared release (mech.RecordDeclared): one
// per tuning charge of its account, or one of ε = 0 when the account has
// none (a choice that reads no data, as the selector declares), scoped to
// the records it may read (the built-in selectors' release sites record
// themselves). A user's selector that draws through the harness's own
// mechanisms has those releases in the trace as well: its declared charge
// is what the ledger books.
func recordSelection(rng *rand.Rand, s Selector, sel Selection, records mech.Records) {
	if selectors.Builtin(s) {
		return
	}
	mech.Scope(rng, "selection: "+s.Name()+"'s choice of a candidate", records)
	tuning := 0
	for _, ch := range sel.Account.Charges {
		if ch.Part == Tuning {
			mech.RecordDeclared(rng, s.Name(), ch.Guarantee, 1)
			tuning++
		}
	}
	if tuning == 0 {
		mech.RecordDeclared(rng, s.Name(), privacy.EpsDP(0, "declared by the method "+s.Name()+": its choice has no tuning charge"), 1)
	}
}

// armMechanisms returns the mechanisms the arms' selections and fits
// (fit: the mechanisms of one fit, by learner) release, sorted, without
// repeats. A selector that is not built in draws its own noise: it is
// mech.Declared(name), which a secure run's manifest lists among the
// releases it cannot vouch for (the run records its selections so).
func armMechanisms(arms []arm, fit func(arm) []string) []string {
	var ms []string
	for _, a := range arms {
		if selectors.Builtin(a.sel) {
			ms = append(ms, selectorMechanisms[a.sel.Name()]...)
		} else {
			ms = append(ms, mech.Declared(a.sel.Name()))
		}
		ms = append(ms, fit(a)...)
	}
	slices.Sort(ms)
	return slices.Compact(ms)
}

// Mechanisms implements runner.Releaser: the mechanisms of the spec's
// methods (selections) and learners (fits).
func (e *Experiment) Mechanisms() []string {
	return armMechanisms(e.arms, func(a arm) []string { return LearnerMechanisms(a.learner) })
}

// Mechanisms implements runner.Releaser: the mechanisms of the spec's
// methods and Algorithm 5's noisy counts.
func (e *Hist) Mechanisms() []string {
	return armMechanisms(e.arms, func(arm) []string { return []string{"laplace-histogram"} })
}
