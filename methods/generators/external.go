package generators

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/external"
)

// External is a [Generator] served by an external command: a [[methods]]
// table of the spec with serves = "hypothesis", speaking the worker
// protocol (docs/worker-protocol.md). A spec names it in
// accuracy_first.generator, or as the suffix of a method
// ("noise-reduction-<name>", "doubling-<name>").
//
// Its hello must declare the "pure" privacy form (the ex-post analyses of
// Lemma 2.8 and Theorem A.2 are for pure ε-DP, Remark 2.9) and the tasks
// it is defined for, as attributes:
//
//	{"type": "hello", "protocol": 1, "serves": "hypothesis", "privacy": "pure",
//	 "attributes": {"tasks": ["logistic", "ridge"]}}
//
// Both operations carry the problem (common params) and the data:
//
//	params: {"task": "logistic"|"ridge", "calibration": "authors-code"|"paper",
//	         "lambda": λ, "n": n, "d": d, "radius": M, …}
//	data:   {"x": "<scratch>/….npy" (n×d float64), "y": "<scratch>/….npy" (n targets; ±1 for logistic)}
//	seed:   drawn from the unit's "generate" stream (< 2⁵³)
//
// where M is the norm bound every hypothesis must respect, ‖θ‖₂ ≤ M
// (1/√λ for ridge, √(2 log 2/λ) for logistic: the query sensitivity of the
// accuracy tests assumes it, Claims A.5, A.12; a method rescales onto the
// ball, which is post-processing), and the calibration says which ridge
// risk the tests use (authors-code: 0.25·MSE + (λ/2)‖θ‖², paper: the
// paper's L). Then:
//
//	"sequence"    params += {"epsilons": [ε₁, …, ε_T]}  (increasing)
//	              output:  {"thetas": [[θ¹], …, [θᵀ]]}  (T vectors of d numbers)
//	              privacy: {"epsilon": ε_T}
//	"independent" params += {"epsilon": ε}
//	              output:  {"theta": [θ]}               (d numbers)
//	              privacy: {"epsilon": ε'}               (the release's ε; see below)
//
// The sequence is Lemma 2.8's prefix-private M: the method declares, by
// answering the op, that releasing the prefix θ¹…θᵗ is εₜ-DP for every t
// (noise reduction, Ligett et al. 2017 Algorithm 1 / Theorem 2.7: the
// hypotheses share correlated noise, not independent draws). Its claim is
// the whole sequence's, ε_T; External requires exactly that (to a
// relative 10⁻⁹), and the expost-sweep kind books the prefix it actually
// tests and releases, up to the accepted t, at εₜ, trusting the declared
// property; the ledger says the guarantee was declared by the method
// ([DeclaredBy]). An independent release's claim is checked by the kind
// against the ε it was asked for, as every generator's is: a claim above
// it is booked as claimed, one below it (ε/100 of the ε asked) at the ε
// asked, which is what the search spends, and either is flagged in the
// row's status, the manifest's warnings and stderr
// (expostsweep.Experiment.RowWarnings).
//
// A reply with the wrong number of hypotheses, a wrong dimension, a
// non-finite coordinate or a hypothesis outside the ball (beyond a relative
// 10⁻⁹, which is rescaled away) fails the unit with an
// [external.FaultOutput]. The worker computes all T hypotheses in one call;
// only the tested prefix is used. It has no utility theorem (it is not a
// [TheoryGenerator]): the theory methods are unavailable with it, and the
// ε grid comes from accuracy_first.grid_generator.
//
// It is safe for concurrent use (each call takes a worker of the pool).
type External struct {
	name   string
	set    *external.Set
	tasks  []Task
	values map[string]any // the values of its declared parameters, sent in every call
	canon  string         // those values, "k=v,…" (params.Setting.Canonical)

	mu     sync.Mutex
	inputs map[Problem]genInput
}

// genInput is the data a problem was built from, for the scratch files.
type genInput struct {
	key string // scratch key prefix
	x   *mat.Dense
	y   []float64
}

var _ Generator = (*External)(nil)

// NewExternal returns the generator that the spec's [[methods]] table
// name serves (a method of set), starting its first worker to check the
// handshake: a "pure" privacy form and a non-empty "tasks" attribute of
// known tasks. Its calls need the data of each problem ([External.Bind])
// and set opened for a run (external.Set.Open: the scratch area).
func NewExternal(ctx context.Context, set *external.Set, name string) (*External, error) {
	_, h, err := set.Pool(ctx, name)
	if err != nil {
		return nil, err
	}
	if h.Privacy != external.FormPure {
		return nil, fmt.Errorf("external generator %s declares the %q privacy form; the ex-post analyses of noise reduction and doubling need pure ε-DP (Ligett et al. 2017, Lemma 2.8, Theorem A.2, Remark 2.9): declare \"pure\"", name, h.Privacy)
	}
	raw, ok := h.Attributes["tasks"].([]any)
	if !ok || len(raw) == 0 {
		return nil, fmt.Errorf(`external generator %s: the hello's attributes must list the tasks it is defined for, e.g. "attributes": {"tasks": ["logistic"]} (known: %s)`, name, taskList())
	}
	st, err := set.Setting(ctx, name)
	if err != nil {
		return nil, err
	}
	g := &External{name: name, set: set, inputs: map[Problem]genInput{}, values: st.Values, canon: st.Canonical()}
	for _, v := range raw {
		s, _ := v.(string)
		t := Task(s)
		if !slices.Contains(accfirst.KnownTasks(), t) {
			return nil, fmt.Errorf("external generator %s: the hello declares unknown task %v (known: %s)", name, v, taskList())
		}
		if !slices.Contains(g.tasks, t) {
			g.tasks = append(g.tasks, t)
		}
	}
	return g, nil
}

// Setting returns the values of the parameters the worker declares, as
// the spec sets them, "k=v,…" ("" for none): part of the identity of
// every unit that calls it (runner.UnitReader).
func (g *External) Setting() string { return g.canon }

// Name implements Generator: the [[methods]] name.
func (g *External) Name() string { return g.name }

// Tasks implements Generator: the tasks of the worker's hello.
func (g *External) Tasks() []Task { return slices.Clone(g.tasks) }

// Bind tells g the data problem pr was built from (x n×d, y n targets);
// key names them in the run's scratch directory (a safe file name, one per
// dataset of the run). The expost-sweep kind binds every problem of a
// run before its units start; a call on a problem that was not bound
// fails. Safe for concurrent use.
func (g *External) Bind(pr Problem, key string, x *mat.Dense, y []float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inputs[pr] = genInput{key: key, x: x, y: y}
}

// problemParams are the params of both operations.
type problemParams struct {
	Task        string  `json:"task"`
	Calibration string  `json:"calibration"`
	Lambda      float64 `json:"lambda"`
	N           int     `json:"n"`
	D           int     `json:"d"`
	Radius      float64 `json:"radius"`
}

type sequenceParams struct {
	problemParams
	Epsilons []float64 `json:"epsilons"`
}

type independentParams struct {
	problemParams
	Epsilon float64 `json:"epsilon"`
}

// call makes one call of op with the setting's problem and data.
func (g *External) call(ctx context.Context, rng *rand.Rand, s Setting, op string, params func(problemParams) any) (external.Reply, error) {
	if s.Problem == nil {
		return external.Reply{}, fmt.Errorf("generators: external generator %s: no problem", g.name)
	}
	g.mu.Lock()
	in, ok := g.inputs[s.Problem]
	g.mu.Unlock()
	if !ok {
		return external.Reply{}, fmt.Errorf("generators: external generator %s: the problem was not bound to its data (External.Bind)", g.name)
	}
	pool, _, err := g.set.Pool(ctx, g.name)
	if err != nil {
		return external.Reply{}, err
	}
	sc, err := g.set.Scratch()
	if err != nil {
		return external.Reply{}, err
	}
	xPath, err := sc.Matrix(in.key+"-x", func() *mat.Dense { return in.x })
	if err != nil {
		return external.Reply{}, err
	}
	yPath, err := sc.Vector(in.key+"-y", func() []float64 { return in.y })
	if err != nil {
		return external.Reply{}, err
	}
	// The seed comes first from the unit's stream, so that a deterministic
	// method replays bit-identically whatever worker serves the call.
	seed := rng.Uint64() % external.MaxSeed
	pr := s.Problem
	base := problemParams{Task: string(s.Task), Calibration: string(s.Calibration), Lambda: pr.Lambda(), N: pr.N(), D: pr.P(), Radius: pr.Radius()}
	p, err := external.MethodParams(params(base), g.values)
	if err != nil {
		return external.Reply{}, err
	}
	return pool.Call(ctx, external.Request{
		Op: op, Seed: seed, Params: p,
		Data: map[string]string{"x": xPath, "y": yPath},
	})
}

// theta checks one hypothesis of an output: d finite numbers in the ball
// of radius r (rescaled onto it within a relative 10⁻⁹ of round-off).
func (g *External) theta(op, what string, th []float64, d int, r float64) error {
	if len(th) != d {
		return external.OutputFault(g.name, op, "%s has %d coordinates for d = %d", what, len(th), d)
	}
	for j, v := range th {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return external.OutputFault(g.name, op, "%s[%d] is %v", what, j, v)
		}
	}
	nrm := floats.Norm(th, 2)
	if nrm > r*(1+1e-9) {
		return external.OutputFault(g.name, op, "%s has norm %v > the bound %v (params.radius): the accuracy tests' sensitivity needs ‖θ‖ ≤ radius (rescale onto the ball)", what, nrm, r)
	}
	if nrm > r {
		floats.Scale(r/nrm, th)
	}
	return nil
}

// Sequence implements Generator through one "sequence" call, made under
// ctx (the unit's: an interrupted run ends the calls in flight).
func (g *External) Sequence(ctx context.Context, rng *rand.Rand, s Setting, eps []float64) (Sequence, error) {
	return g.sequence(ctx, rng, s, eps)
}

// Independent implements Generator through one "independent" call, made
// under ctx.
func (g *External) Independent(ctx context.Context, rng *rand.Rand, s Setting, epsilon float64) (Hypothesis, privacy.Guarantee, error) {
	return g.independent(ctx, rng, s, epsilon)
}

func (g *External) sequence(ctx context.Context, rng *rand.Rand, s Setting, eps []float64) (Sequence, error) {
	const op = "sequence"
	if len(eps) == 0 {
		return nil, errors.New("generators: external generator: no privacy levels")
	}
	rep, err := g.call(ctx, rng, s, op, func(p problemParams) any { return sequenceParams{p, eps} })
	if err != nil {
		return nil, err
	}
	var out struct {
		Thetas [][]float64 `json:"thetas"`
	}
	if err := external.DecodeOutput(rep, g.name, op, `{"thetas": [T lists of d numbers]}`, &out); err != nil {
		return nil, err
	}
	T, d, r := len(eps), s.Problem.P(), s.Problem.Radius()
	if len(out.Thetas) != T {
		return nil, external.OutputFault(g.name, op, "the output has %d hypotheses for T = %d levels", len(out.Thetas), T)
	}
	for t, th := range out.Thetas {
		if err := g.theta(op, fmt.Sprintf("thetas[%d]", t), th, d, r); err != nil {
			return nil, err
		}
	}
	claim, err := rep.Privacy.Guarantee(external.FormPure, "declared by the method "+g.name+": the whole sequence")
	if err != nil {
		return nil, external.OutputFault(g.name, op, "%v", err)
	}
	last := eps[T-1]
	if math.Abs(claim.Epsilon-last) > 1e-9*last {
		return nil, external.OutputFault(g.name, op, `the sequence claims ε = %v; a noise-reduction sequence claims {"epsilon": ε_T} = %v for the whole sequence (its prefix up to t being εₜ-DP)`, claim.Epsilon, last)
	}
	return &extSeq{name: g.name, pr: s.Problem, eps: eps, thetas: out.Thetas}, nil
}

func (g *External) independent(ctx context.Context, rng *rand.Rand, s Setting, epsilon float64) (Hypothesis, privacy.Guarantee, error) {
	const op = "independent"
	rep, err := g.call(ctx, rng, s, op, func(p problemParams) any { return independentParams{p, epsilon} })
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	var out struct {
		Theta []float64 `json:"theta"`
	}
	if err := external.DecodeOutput(rep, g.name, op, `{"theta": [d numbers]}`, &out); err != nil {
		return nil, privacy.Guarantee{}, err
	}
	if err := g.theta(op, "theta", out.Theta, s.Problem.P(), s.Problem.Radius()); err != nil {
		return nil, privacy.Guarantee{}, err
	}
	gu, err := rep.Privacy.Guarantee(external.FormPure, fmt.Sprintf("declared by the method %s: one hypothesis asked at ε = %v", g.name, epsilon))
	if err != nil {
		return nil, privacy.Guarantee{}, external.OutputFault(g.name, op, "%v", err)
	}
	return &extHyp{pr: s.Problem, theta: out.Theta}, gu, nil
}

// extHyp is a hypothesis released by an external generator; its excess
// risk and bounds are computed on the problem (Problem.Excess, Bounds).
type extHyp struct {
	pr    Problem
	theta []float64
}

func (h *extHyp) Bounds() (lo, hi float64)  { return h.pr.Bounds(h.theta) }
func (h *extHyp) Excess() (float64, error)  { return h.pr.Excess(h.theta), nil }
func (h *extHyp) Theta() ([]float64, error) { return h.theta, nil }

// extSeq is the sequence of an external generator: all T hypotheses came
// in one reply; the search uses (releases) the prefix it tests.
type extSeq struct {
	name   string
	pr     Problem
	eps    []float64
	thetas [][]float64
	t      int // hypotheses returned so far
}

func (s *extSeq) Next() (Hypothesis, bool, error) {
	if s.t == len(s.thetas) {
		return nil, false, nil
	}
	s.t++
	return &extHyp{pr: s.pr, theta: s.thetas[s.t-1]}, true, nil
}

// Guarantee returns εₜ-DP for the prefix up to the current t, as the
// method declared (the whole sequence's claim is ε_T).
func (s *extSeq) Guarantee() privacy.Guarantee {
	t := max(s.t, 1)
	return privacy.EpsDP(s.eps[t-1], fmt.Sprintf("declared by the method %s: its noise-reduction prefix θ¹…θᵗ up to t = %d is εₜ-DP (claimed ε_T = %v for the whole sequence of %d)", s.name, t, s.eps[len(s.eps)-1], len(s.eps)))
}

func (s *extSeq) Len() int { return len(s.thetas) }
