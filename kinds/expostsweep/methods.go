package expostsweep

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/noisered"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/generators"
)

// trial is what a method needs to run one trial.
type trial struct {
	alpha, gamma   float64
	steps          int
	epsMin, epsMax float64 // the grid of Appendix B.1
	e              float64 // E, the spec generator's theory ε for α
	delta          float64 // query sensitivity Δ
	cal            expost.Calibration
	set            accfirst.Setting
	gen            accfirst.Generator // the generator the method drives
	genRNG         *rand.Rand         // the "generate" stream
	testRNG        *rand.Rand         // the "test" stream
	data           mech.Records       // the records every release touches: the whole (subsampled) data set
	claims         claimLog           // the generator's claims that differ from their levels
}

// levelTol is the relative tolerance of the check of a generator's claim
// against the level it was asked for (privacy.CompareLevel): it absorbs a
// generator's rounding (a level halved and doubled again), not a real
// difference.
const levelTol = 1e-9

// The words of a row's notes on a generator's claims (claimLog.notes),
// which levelNotes reads back.
const (
	overWords  = " for a level of "     // a claim above its level
	underWords = " below its level of " // a claim below its level
	notePrefix = "generator "
)

// claimLog records, for one trial, the generator's releases whose claimed
// guarantee differs from the level the method asked for (Ligett et al.
// 2017: a release at level ε of the doubling method, the ε-grid's εₜ for
// the noise-reduction prefix, the theory ε).
type claimLog struct {
	releases, over, under int
	overNote, underNote   string
}

// check compares the guarantee g that generator gen returned for a
// release asked at level epsilon and returns what is booked for it: the
// larger of the two (a claim below the level is booked at the level, which
// is what the search spends: its ex-post accounting, Lemma 2.8 and
// Theorem A.2, charges each release the level it was handed). A guarantee
// that is not pure ε-DP is returned as it is, for the search to refuse.
func (c *claimLog) check(gen string, g privacy.Guarantee, epsilon float64) privacy.Guarantee {
	if g.Notion != privacy.Pure || g.Validate() != nil || !(epsilon > 0) || math.IsInf(epsilon, 1) {
		return g
	}
	c.releases++
	v := privacy.CompareLevel(g, epsilon, 0, levelTol)
	switch {
	case v.Over:
		if c.over == 0 {
			c.overNote = fmt.Sprintf("%s%s returned %v%sε=%v", notePrefix, gen, g, overWords, epsilon)
		}
		c.over++
	case v.Under:
		if c.under == 0 {
			c.underNote = fmt.Sprintf("%s%s returned %v%sε=%v", notePrefix, gen, g, underWords, epsilon)
		}
		c.under++
	}
	return v.Booked
}

// notes are the row's warning parts: the first claim over its level and
// the first below it, each with how many of the trial's releases did so.
func (c *claimLog) notes() []string {
	var out []string
	if c.over > 0 {
		out = append(out, fmt.Sprintf("%s (%d of %d releases over their level)", c.overNote, c.over, c.releases))
	}
	if c.under > 0 {
		out = append(out, fmt.Sprintf("%s (%d of %d releases below their level)", c.underNote, c.under, c.releases))
	}
	return out
}

// levelNotes reads a row's status back: its note of a claim over its
// level and its note of one below it ("" for none).
func levelNotes(status string) (over, under string) {
	_, rest, ok := strings.Cut(status, "warning: ")
	if !ok {
		return "", ""
	}
	for _, part := range strings.Split(rest, "; ") {
		if !strings.HasPrefix(part, notePrefix) {
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

// checkedSeq is a generator's noise-reduction sequence whose prefix
// guarantee is checked against the grid level of the current step.
type checkedSeq struct {
	expost.Sequence
	gen    string
	levels []float64 // the ε grid asked for
	t      int       // hypotheses returned so far
	claims *claimLog
}

func (s *checkedSeq) Next() (expost.Hypothesis, bool, error) {
	h, ok, err := s.Sequence.Next()
	if ok {
		s.t++
	}
	return h, ok, err
}

// Guarantee is the prefix's guarantee as booked: checked against εₜ of
// the grid (claimLog.check).
func (s *checkedSeq) Guarantee() privacy.Guarantee {
	g := s.Sequence.Guarantee()
	if s.t < 1 || s.t > len(s.levels) {
		return g
	}
	return s.claims.check(s.gen, g, s.levels[s.t-1])
}

// ran is the result of a method's trial: the search outcome, whose
// guarantees give every privacy column, the number of levels on offer and
// the method's theory ε.
type ran struct {
	out       expost.Outcome
	levels    int
	theoryEps float64
}

// method is one of the kind's methods of choosing ε for accuracy α
// (Ligett et al. 2017, Section 4). The set is fixed; the generator each
// one drives comes from the registry or the spec's [[methods]], and the
// privacy each reports comes
// from the guarantees in its outcome. The texts word the ledger.
type method struct {
	run func(ctx context.Context, t *trial) (ran, error)
	// needsTheory: the method inverts a utility theorem, so its generator
	// must be an accfirst.TheoryGenerator.
	needsTheory bool
	// sequence: the method draws the generator's noise-reduction sequence
	// (Generator.Sequence), whose chains the memory estimate counts.
	sequence                  bool
	generating, testing, rule string
	// notion is the notion of the method's ledger charges: ex-post for
	// the searches (the loss is a function of the outcome, Definition
	// 2.3), pure ε-DP for the theory approach (ε fixed ex ante).
	notion  privacy.Notion
	figures figureRole
}

// figureRole is a method's place in Ligett et al. 2017's Figures 1–4,
// from which Experiment.Figures lays the panels out (not from the
// methods' names).
type figureRole struct {
	// vsTheory: drawn in Figure 1(a/b), the ex-post loss of noise
	// reduction against the theory approach.
	vsTheory bool
	// search: an accuracy-first search with an ex-post loss, drawn in
	// Figures 1(c/d), 3 and 4 and in a Figure 2 panel of its own.
	search bool
	// second: the method's Figure 2 panel is the second of its task's
	// pair ((c) for ridge, (d) for logistic), not the first ((a), (b)).
	second bool
	// order is the method's place in a figure's legend.
	order int
}

// methods are the kind's methods by name; "<method>-<generator>" (see
// methodPrefixes) is a method run with another generator than the spec's.
var methods = map[string]method{
	"noise-reduction": {
		run:        runNoiseReduction,
		sequence:   true,
		notion:     privacy.ExPost,
		figures:    figureRole{vsTheory: true, search: true, order: 0},
		generating: "noise-reduction prefix θ¹…θᵗ (Theorem 2.7): ε_t of the accepted level",
		testing:    "InteractiveAboveThreshold (Algorithm 2), ε_A as the calibration reports it",
		rule:       "Lemma 2.8: ex-post ε_A + ε_t per outcome; ∞ when no hypothesis is accepted; largest over trials",
	},
	"doubling": {
		run:        runDoubling,
		notion:     privacy.ExPost,
		figures:    figureRole{search: true, second: true, order: 1},
		generating: "independent hypotheses at ε_min·2^k: Σ ε_k",
		testing:    "k Laplace tests of the excess risk",
		rule:       "Theorem A.2 (privacy odometer): ex-post k·ε_test + Σ ε_k; ∞ on failure; largest over trials",
	},
	"theory": {
		run:         runTheory,
		needsTheory: true,
		notion:      privacy.Pure,
		figures:     figureRole{vsTheory: true, order: 2},
		generating:  "one run at the theory ε",
		rule:        "ε-DP (utility theorem inverted ex ante)",
	},
}

// theoryPrefix names the theory method run with a named generator.
const theoryPrefix = "theory-"

// resolved is a spec method bound to its generator.
type resolved struct {
	method
	gen accfirst.Generator
}

// methodNames lists the method names a spec may use, for error messages:
// the kind's methods and theory-<generator> for every generator (of gl)
// with a utility theorem.
func methodNames(gl genLookup) []string {
	var ns []string
	for n := range methods {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	for _, g := range gl.names() {
		if th, ok := gl.lookup(g); ok {
			if _, ok := th.(accfirst.TheoryGenerator); ok {
				ns = append(ns, theoryPrefix+g)
			}
		}
	}
	return ns
}

// genLookup finds the generators a spec may name: the spec's external
// generators ([[methods]] with serves = "hypothesis") and the registry.
type genLookup struct {
	ext   map[string]accfirst.Generator
	order []string // the external names, in file order
}

func (gl genLookup) lookup(name string) (accfirst.Generator, bool) {
	if g, ok := gl.ext[name]; ok {
		return g, true
	}
	return generators.Lookup(name)
}

// names returns the registered names, then the external ones.
func (gl genLookup) names() []string { return append(generators.Names(), gl.order...) }

// methodPrefixes are the kind's methods that take a generator suffix,
// "<method>-<generator>": the method run with another generator on the
// same grid and tests (theory-output: Theorem A.9 beside covariance
// perturbation in Figure 1a; noise-reduction-py-gen: an external
// generator beside the spec's).
var methodPrefixes = []string{"noise-reduction-", "doubling-", theoryPrefix}

// splitMethod returns the kind's method and the generator suffix of a
// spec's method name ("" for a plain method), and whether name has one of
// the forms.
func splitMethod(name string) (base, gen string, ok bool) {
	if _, ok := methods[name]; ok {
		return name, "", true
	}
	for _, p := range methodPrefixes {
		if rest, found := strings.CutPrefix(name, p); found && rest != "" {
			return strings.TrimSuffix(p, "-"), rest, true
		}
	}
	return "", "", false
}

// resolveNames checks accuracy_first.task, generator, grid_generator and
// methods against the kind's tasks, the generators of gl and the methods,
// reporting each problem to bad (the key whose line is shown, the key
// path, the message), and binds each method to its generator. It returns
// the spec's generator and the generator whose utility theorem scales the
// ε grid (ε_max = eps_max_factor·E, Appendix B.1): grid_generator, or the
// spec's generator when it is unset; nil when unusable. Section
// validation and New share it, so a spec names exactly what New can run.
func resolveNames(af *AccuracyFirstSpec, gl genLookup, bad func(key, path, msg string)) (accfirst.Generator, accfirst.TheoryGenerator, map[string]resolved) {
	task := accfirst.Task(af.Task)
	badf := func(key, path, format string, args ...any) { bad(key, path, fmt.Sprintf(format, args...)) }
	taskKnown := slices.Contains(accfirst.KnownTasks(), task)
	if !taskKnown {
		badf("accuracy_first.task", "accuracy_first.task", "%s", experiments.Unknown("task", af.Task, taskNames()))
	}
	const genKey, gridKey = "accuracy_first.generator", "accuracy_first.grid_generator"
	g, ok := gl.lookup(af.Generator)
	switch {
	case !ok:
		badf(genKey, genKey, "%s", experiments.Unknown("generator", af.Generator, gl.names()))
		g = nil
	case taskKnown && !accfirst.SupportsTask(g, task):
		badf(genKey, genKey, "%s", unsupported(g, task))
	}
	var grid accfirst.TheoryGenerator
	if af.GridGenerator == "" {
		if g != nil {
			if grid, ok = g.(accfirst.TheoryGenerator); !ok {
				badf(genKey, genKey, "generator %q has no utility theorem (accfirst.TheoryGenerator), which the ε grid needs: ε_max = eps_max_factor·E (Appendix B.1); name a generator with one in accuracy_first.grid_generator", af.Generator)
			}
		}
	} else {
		gg, ok := gl.lookup(af.GridGenerator)
		switch {
		case !ok:
			badf(gridKey, gridKey, "%s", experiments.Unknown("generator", af.GridGenerator, gl.names()))
		case taskKnown && !accfirst.SupportsTask(gg, task):
			badf(gridKey, gridKey, "%s", unsupported(gg, task))
		default:
			if grid, ok = gg.(accfirst.TheoryGenerator); !ok {
				badf(gridKey, gridKey, "generator %q has no utility theorem (accfirst.TheoryGenerator), which the ε grid needs: ε_max = eps_max_factor·E (Appendix B.1)", af.GridGenerator)
			}
		}
	}
	out := map[string]resolved{}
	const mKey = "accuracy_first.methods"
	for i, name := range af.Methods {
		key := fmt.Sprintf("%s[%d]", mKey, i)
		base, suffix, ok := splitMethod(name)
		if !ok {
			badf(mKey, key, "%s (and noise-reduction-, doubling- or theory-<generator> for a known generator)", experiments.Unknown("method", name, methodNames(gl)))
			continue
		}
		m, mg := methods[base], g
		if suffix != "" {
			if base == "theory" {
				m.figures.order++ // in a legend after the spec generator's theory (Figure 1a: Theorem 3.1, then A.9)
			}
			if mg, ok = gl.lookup(suffix); !ok {
				badf(mKey, key, "method %q: %s", name, experiments.Unknown("generator", suffix, gl.names()))
				continue
			}
			if taskKnown && !accfirst.SupportsTask(mg, task) {
				badf(mKey, key, "method %q: %s", name, unsupported(mg, task))
				continue
			}
		}
		if mg == nil {
			continue // the spec's generator is unknown: reported above
		}
		if _, isTheory := mg.(accfirst.TheoryGenerator); m.needsTheory && !isTheory {
			badf(mKey, key, "method %q needs a utility theorem, and generator %q has none (accfirst.TheoryGenerator)", name, mg.Name())
			continue
		}
		if x, ok := mg.(*generators.External); ok {
			m = declaredMethod(x.Name(), base, m)
		}
		out[name] = resolved{method: m, gen: mg}
	}
	return g, grid, out
}

// declaredMethod returns m, the kind's method base run with the external
// generator name ([generators.External]), with the ledger's texts saying
// that its guarantees are the method's word: the generating release, and
// for noise reduction the prefix property the rule relies on.
func declaredMethod(name, base string, m method) method {
	m.generating += fmt.Sprintf(" — guarantee declared by the external method %s", name)
	if base == "noise-reduction" {
		m.rule += fmt.Sprintf("; the prefix property (θ¹…θᵗ is εₜ-DP) is declared by %s, not checked", name)
	}
	return m
}

// taskNames returns the known tasks (accfirst.KnownTasks), for messages.
func taskNames() []string {
	var s []string
	for _, t := range accfirst.KnownTasks() {
		s = append(s, string(t))
	}
	return s
}

// unsupported says that g is not defined for task.
func unsupported(g accfirst.Generator, task accfirst.Task) string {
	var ts []string
	for _, t := range g.Tasks() {
		ts = append(ts, string(t))
	}
	return fmt.Sprintf("generator %q is defined for task %s only, not for %q (accuracy_first.task)", g.Name(), strings.Join(ts, ", "), task)
}

// runNoiseReduction is the noise-reduction search (Algorithms 3 and 5 with
// the generator abstracted): the generator's sequence over the geometric
// grid of T levels, tested by InteractiveAboveThreshold (Algorithm 2).
func runNoiseReduction(ctx context.Context, t *trial) (ran, error) {
	grid, err := noisered.Geometric(t.epsMin, t.epsMax, t.steps)
	if err != nil {
		return ran{}, fmt.Errorf("ε grid for α = %v: %w", t.alpha, err)
	}
	epsA, w, err := t.cal.NRTest(t.alpha, t.gamma, t.steps, t.delta)
	if err != nil {
		return ran{}, err
	}
	mech.Scope(t.testRNG, fmt.Sprintf("InteractiveAboveThreshold (Algorithm 2) of the excess risk at α=%v", t.alpha), t.data)
	at, err := expost.NewAboveThreshold(t.testRNG, epsA, w, t.delta)
	if err != nil {
		return ran{}, err
	}
	mech.Scope(t.genRNG, fmt.Sprintf("noise-reduction hypotheses of %s over %d levels", t.gen.Name(), len(grid)), t.data)
	seq, err := t.gen.Sequence(ctx, t.genRNG, t.set, grid)
	if err != nil {
		return ran{}, err
	}
	out, err := expost.NoiseReduction(ctx, at, &checkedSeq{Sequence: seq, gen: t.gen.Name(), levels: grid, claims: &t.claims})
	if err != nil {
		return ran{}, err
	}
	recordDeclared(t.genRNG, t.gen, out.Generation)
	return ran{out: out, levels: len(grid), theoryEps: t.e}, nil
}

// runDoubling is the doubling method (Algorithm 4): independent releases
// of the generator at ε_min·2^k until the test accepts.
func runDoubling(ctx context.Context, t *trial) (ran, error) {
	lv, err := expost.DoublingLevels(t.epsMin, t.epsMax)
	if err != nil {
		return ran{}, fmt.Errorf("doubling levels for α = %v: %w", t.alpha, err)
	}
	test, err := t.cal.Doubling(t.alpha, t.gamma, t.delta, lv)
	if err != nil {
		return ran{}, err
	}
	gen := func(rng *rand.Rand, eps float64) (expost.Hypothesis, privacy.Guarantee, error) {
		h, g, err := t.gen.Independent(ctx, rng, t.set, eps)
		if err != nil {
			return nil, g, err
		}
		g = t.claims.check(t.gen.Name(), g, eps)
		recordDeclared(rng, t.gen, g)
		return h, g, nil
	}
	mech.Scope(t.genRNG, fmt.Sprintf("doubling: independent hypotheses of %s", t.gen.Name()), t.data)
	mech.Scope(t.testRNG, fmt.Sprintf("doubling: Laplace test of the excess risk at α=%v", t.alpha), t.data)
	out, err := expost.Doubling(ctx, t.genRNG, t.testRNG, gen, test)
	if err != nil {
		return ran{}, err
	}
	return ran{out: out, levels: len(lv), theoryEps: t.e}, nil
}

// runTheory is the theory approach: one release of the generator's
// theorem mechanism at the ε its utility theorem needs for α, with
// nothing tested.
func runTheory(ctx context.Context, t *trial) (ran, error) {
	th, ok := t.gen.(accfirst.TheoryGenerator)
	if !ok {
		return ran{}, fmt.Errorf("expostsweep: generator %q has no utility theorem", t.gen.Name())
	}
	eps, err := th.TheoryEpsilon(t.set, t.alpha, t.gamma)
	if err != nil {
		return ran{}, err
	}
	mech.Scope(t.genRNG, fmt.Sprintf("theory: one release of %s at ε=%v", t.gen.Name(), eps), t.data)
	h, g, err := th.TheoryRelease(ctx, t.genRNG, t.set, eps)
	if err != nil {
		return ran{}, err
	}
	g = t.claims.check(t.gen.Name(), g, eps)
	recordDeclared(t.genRNG, t.gen, g)
	out := expost.Outcome{
		Success: true, Stop: 1, Generation: g, Hypothesis: h,
		Test: privacy.EpsDP(0, "nothing tested: ε is fixed ex ante by the utility theorem"),
	}
	return ran{out: out, levels: 1, theoryEps: eps}, nil
}
