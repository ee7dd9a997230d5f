package learners

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"weak"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/methods/params"
	"github.com/dprepro/dprepro/runner"
)

// External is a Learner served by an external command: a [[methods]]
// table of the spec with serves = "learner", speaking the worker protocol
// (docs/worker-protocol.md). Each Fit is one "fit" call:
//
//	params: {"lambda": λ, "epsilon": ε, "delta": δ, "n": n, "d": d,
//	         "loss": "logistic"|"huber", "huber_h": h (huber only),
//	         "row_norm": the spec's data.row_norm ("l2-max", …, "none")}
//	data:   {"x": "<scratch>/….npy" (n×d float64), "y": "<scratch>/….npy" (n labels ±1)}
//	seed:   drawn from the unit's stream (so a deterministic method replays)
//	output: {"weights": [w₁, …, w_d]}   (the model scores x·w)
//	privacy: the guarantee the method claims for this release
//
// loss, huber_h and row_norm are the spec's, as the built-in learners get
// them ([Config]): the preconditions a claimed guarantee may rest
// on (a 1-Lipschitz loss of the kind the method implements, ‖x‖₂ ≤ 1). A
// method whose guarantee needs what a call does not give should refuse
// the call (an error reply) rather than claim the guarantee.
//
// The harness writes each training set's matrices once per run (the same
// path for every call on the same rows) and computes every metric itself
// from the weights. The guarantee is the method's own claim, booked as
// "declared by the method"; a claim above the level the call asked for is
// the caller's to flag (like any learner's, see [CheckLevel]).
//
// The level must be finite: JSON has no infinity, so an external learner
// cannot be handed ε = +Inf (the learner-comparison kind's reference).
type External struct {
	name    string // the label: method, or a variant's "method[k=v,…]"
	method  string // the [[methods]] name
	decl    []params.Param
	setting params.Setting // the values sent in every call (method_params)
	set     *external.Set
	form    string
	loss    string   // "logistic" or "huber"
	huberH  *float64 // h when loss is "huber"
	rowNorm string
	diags   []string // the diagnostics its hello declares (attributes.diagnostics)
	stable  bool     // its hello declares the "stability" op (attributes.stability)
	mech    string   // the mechanism its fits declare (attributes.mechanism), "" for none
}

// NewExternal returns the learner that the spec's [[methods]] table
// name serves, configured by cfg (its Loss, HuberH and RowNorm go to every
// fit), starting its first worker to check the handshake.
func NewExternal(ctx context.Context, set *external.Set, name string, cfg Config) (*External, error) {
	if _, err := cfg.loss(name); err != nil {
		return nil, err
	}
	l := &External{name: name, method: name, set: set, loss: "logistic", rowNorm: cfg.RowNorm}
	if cfg.Loss == "huber" {
		h := cfg.HuberH
		l.loss, l.huberH = "huber", &h
	}
	_, h, err := set.Pool(ctx, name)
	if err != nil {
		return nil, err
	}
	l.form = h.Privacy
	if l.decl, err = h.Params(name); err != nil {
		return nil, err
	}
	l.setting = params.Defaults(l.decl)
	if raw, ok := h.Attributes["stability"]; ok {
		b, isBool := raw.(bool)
		if !isBool {
			return nil, fmt.Errorf("learner %s: its hello's attributes.stability is %v: want true (the worker answers the \"stability\" op) or false", name, raw)
		}
		l.stable = b
	}
	if raw, ok := h.Attributes["mechanism"]; ok {
		m, isString := raw.(string)
		if !isString || !slices.Contains(AccountedMechanisms, m) {
			return nil, fmt.Errorf("learner %s: its hello's attributes.mechanism is %v: want one of %s (every fit then declares its mechanism, from which the harness computes the guarantee)", name, raw, strings.Join(AccountedMechanisms, ", "))
		}
		if l.form != external.FormApprox {
			return nil, fmt.Errorf("learner %s: its hello declares attributes.mechanism %q and privacy %q: the harness computes (ε, δ) for a mechanism; declare \"privacy\": \"approx\"", name, m, l.form)
		}
		l.mech = m
	}
	if raw, ok := h.Attributes["diagnostics"]; ok {
		list, ok := raw.([]any)
		for _, v := range list {
			n, isString := v.(string)
			if !isString {
				ok = false
				break
			}
			l.diags = append(l.diags, n)
		}
		if !ok {
			return nil, fmt.Errorf("learner %s: its hello's attributes.diagnostics is %v: want a list of names", name, raw)
		}
		if err := CheckDiagnosticNames(l.diags); err != nil {
			return nil, fmt.Errorf("learner %s: its hello's attributes.diagnostics: %w", name, err)
		}
		for _, n := range AccountedDiagnostics {
			if l.mech != "" && slices.Contains(l.diags, n) {
				return nil, fmt.Errorf("learner %s: its hello's attributes.diagnostics: %q is the harness's diagnostic of a learner that declares its mechanism", name, n)
			}
		}
	}
	return l, nil
}

// Accounting implements Accounted: how the harness computes the fits'
// guarantees when the hello declares attributes.mechanism, else "" (the
// method's claims are its word).
func (l *External) Accounting() string {
	if l.mech == "" {
		return ""
	}
	return accountingWords
}

// DiagnosticNames implements Diagnoser: the names the worker's hello
// declares in attributes.diagnostics (none when it declares none), and
// [AccountedDiagnostics] when its fits declare their mechanism.
func (l *External) DiagnosticNames() []string {
	names := slices.Clone(l.diags)
	if l.mech != "" {
		names = append(names, AccountedDiagnostics...)
	}
	return names
}

// Name implements Learner: the [[methods]] name, or a variant's label
// ([External.WithParams]).
func (l *External) Name() string { return l.name }

// Params implements Parameterized: what the worker's hello declares in
// attributes.params (docs/worker-protocol.md).
func (l *External) Params() []params.Param { return slices.Clone(l.decl) }

// WithParams implements Parameterized: the learner named name that sends
// s's values in every fit call (params.method_params).
func (l *External) WithParams(name string, s params.Setting) (Learner, error) {
	c := *l
	c.name, c.setting = name, s
	return &c, nil
}

// Form returns the privacy form the learner's worker declared in its hello
// (external.FormPure, FormApprox or FormZCDP).
func (l *External) Form() string { return l.form }

// externalFit is the params of a "fit" call.
type externalFit struct {
	Lambda  float64  `json:"lambda"`
	Epsilon float64  `json:"epsilon"`
	Delta   float64  `json:"delta"`
	N       int      `json:"n"`
	D       int      `json:"d"`
	Loss    string   `json:"loss"`
	HuberH  *float64 `json:"huber_h,omitempty"`
	RowNorm string   `json:"row_norm"`
	// MethodParams are the values of the parameters the hello declares
	// (absent when it declares none).
	MethodParams map[string]any `json:"method_params,omitempty"`
}

// Fit implements Learner through one "fit" call.
func (l *External) Fit(ctx context.Context, rng *rand.Rand, train *Data, lambda float64, level Level) (Model, privacy.Guarantee, error) {
	for _, v := range []struct {
		name string
		v    float64
	}{{"lambda", lambda}, {"epsilon", level.Epsilon}, {"delta", level.Delta}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) {
			// JSON has no NaN or infinity: the call could not be written.
			return nil, privacy.Guarantee{}, fmt.Errorf("external learner %s cannot be handed %s = %v: the worker protocol sends finite numbers only", l.name, v.name, v.v)
		}
	}
	pool, _, err := l.set.Pool(ctx, l.method)
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	sc, err := l.set.Scratch()
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	key := train.scratchKey()
	// Scoped to the unit's fold (runner.ScratchScoper): the files go once
	// no pending unit reads them.
	scope := runner.ScratchScopeOf(ctx)
	xPath, err := sc.MatrixIn(scope, key+"-x", train.X)
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	yPath, err := sc.VectorIn(scope, key+"-y", train.Y)
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	seed := rng.Uint64() % external.MaxSeed
	n, d := train.N(), train.D()
	rep, err := pool.Call(ctx, external.Request{
		Op: "fit", Seed: seed,
		Params: externalFit{Lambda: lambda, Epsilon: level.Epsilon, Delta: level.Delta, N: n, D: d,
			Loss: l.loss, HuberH: l.huberH, RowNorm: l.rowNorm, MethodParams: l.setting.Values},
		Data: map[string]string{"x": xPath, "y": yPath},
	})
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	var out struct {
		Weights     []float64           `json:"weights"`
		Diagnostics map[string]*float64 `json:"diagnostics"`
	}
	if err := external.DecodeOutput(rep, l.name, "fit", `{"weights": [d numbers], "diagnostics": {name: number or null} (the names its hello declares)}`, &out); err != nil {
		return nil, privacy.Guarantee{}, err
	}
	diag, err := l.diagnostics(out.Diagnostics)
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	if len(out.Weights) != d {
		return nil, privacy.Guarantee{}, external.OutputFault(l.name, "fit", "the output has %d weights for d = %d columns", len(out.Weights), d)
	}
	for i, w := range out.Weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, privacy.Guarantee{}, external.OutputFault(l.name, "fit", "weights[%d] is %v", i, w)
		}
	}
	var g privacy.Guarantee
	if l.mech != "" {
		var declared float64
		var m Mechanism
		g, m, declared, err = l.account(rep.Privacy, level, n)
		if err != nil {
			return nil, privacy.Guarantee{}, external.OutputFault(l.name, "fit", "%v", err)
		}
		if diag == nil {
			diag = map[string]float64{}
		}
		diag[DeclaredEpsilon], diag[AccountedEpsilon] = declared, g.Epsilon
		if err := accountingDiagnostics(diag, m, g.Delta); err != nil {
			return nil, privacy.Guarantee{}, external.OutputFault(l.name, "fit", "%v", err)
		}
	} else {
		g, err = rep.Privacy.Guarantee(l.form, fmt.Sprintf("declared by the method %s: the weights of one fit on %d training rows", l.name, n))
		if err != nil {
			return nil, privacy.Guarantee{}, external.OutputFault(l.name, "fit", "%v", err)
		}
	}
	if diag != nil {
		return diagnosedModel{weightsModel(out.Weights), diag}, g, nil
	}
	return weightsModel(out.Weights), g, nil
}

// account returns the guarantee the harness computes for a fit's declared
// mechanism ([Account]) at the claim's δ, or the level's when the claim
// gives none, the mechanism, and the ε the method declared beside it (NaN
// for none). A
// claim without a mechanism, with a ρ, or with an ε or δ that is not a
// number in its domain is an error.
func (l *External) account(c *external.Claim, level Level, n int) (privacy.Guarantee, Mechanism, float64, error) {
	want := `"privacy": {"mechanism": {"name": "` + l.mech + `", "noise_multiplier": σ, "sampling_rate": q, "steps": T}} (and, optionally, the "epsilon" the method computes)`
	if c == nil || c.Mechanism == nil {
		return privacy.Guarantee{}, Mechanism{}, 0, fmt.Errorf("the reply declares no mechanism: a learner whose hello declares attributes.mechanism sends %s", want)
	}
	if c.Rho != nil {
		return privacy.Guarantee{}, Mechanism{}, 0, fmt.Errorf(`privacy: "rho" does not belong beside a mechanism (the harness computes (ε, δ))`)
	}
	m, err := ParseMechanism(c.Mechanism)
	if err != nil {
		return privacy.Guarantee{}, Mechanism{}, 0, err
	}
	delta := level.Delta
	if c.Delta != nil {
		delta = *c.Delta
	}
	declared := math.NaN()
	if c.Epsilon != nil {
		if !(*c.Epsilon >= 0) || math.IsInf(*c.Epsilon, 0) {
			return privacy.Guarantee{}, Mechanism{}, 0, fmt.Errorf(`privacy: "epsilon" is %v: want a finite number ≥ 0`, *c.Epsilon)
		}
		declared = *c.Epsilon
	}
	g, err := Account(m, delta, fmt.Sprintf("the weights of one fit of %s on %d training rows", l.name, n))
	if err != nil {
		return privacy.Guarantee{}, Mechanism{}, 0, err
	}
	return g, m, declared, nil
}

// diagnostics checks a fit's reported diagnostics against the declared
// ones: every declared name present (null: NaN, not reported for this
// fit), no other; nil when none is declared and none reported.
func (l *External) diagnostics(got map[string]*float64) (map[string]float64, error) {
	if len(l.diags) == 0 && len(got) == 0 {
		return nil, nil
	}
	out := make(map[string]float64, len(l.diags))
	for _, n := range l.diags {
		v, ok := got[n]
		if !ok {
			return nil, external.OutputFault(l.name, "fit", "the output's diagnostics lack %q, which the hello declares (null if not measured)", n)
		}
		out[n] = math.NaN()
		if v != nil {
			out[n] = *v
		}
	}
	for n := range got {
		if !slices.Contains(l.diags, n) {
			return nil, external.OutputFault(l.name, "fit", "the output's diagnostics hold %q, which the hello does not declare (attributes.diagnostics: %v)", n, l.diags)
		}
	}
	return out, nil
}

// diagnosedModel is a model of an external learner with the diagnostics
// of its fit.
type diagnosedModel struct {
	weightsModel
	diag map[string]float64
}

// Diagnostics implements Diagnosed.
func (m diagnosedModel) Diagnostics() map[string]float64 { return m.diag }

// weightsModel is a linear model released by an external learner.
type weightsModel []float64

// Margins implements Model: x·w.
func (w weightsModel) Margins(dst []float64, d *Data) []float64 {
	if len(dst) != d.N() {
		dst = nil
	}
	return d.ERM().Margins(dst, w)
}

// scratchIDs numbers the design matrices Data borrows, for scratch keys.
// Weak pointers: the table does not keep a finished experiment's data
// alive.
var scratchIDs struct {
	sync.Mutex
	ids map[weak.Pointer[mat.Dense]]uint64
}

func scratchID(x *mat.Dense) uint64 {
	scratchIDs.Lock()
	defer scratchIDs.Unlock()
	if scratchIDs.ids == nil {
		scratchIDs.ids = map[weak.Pointer[mat.Dense]]uint64{}
	}
	k := weak.Make(x)
	id, ok := scratchIDs.ids[k]
	if !ok {
		id = uint64(len(scratchIDs.ids) + 1)
		scratchIDs.ids[k] = id
	}
	return id
}

// scratchKey names d's rows for the scratch directory: a digest of the
// matrix's identity and the row indices, so that every Data on the same
// rows of the same matrix writes (and reads) one file.
func (d *Data) scratchKey() string {
	d.keyOnce.Do(func() {
		h := sha256.New()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], scratchID(d.x))
		h.Write(b[:])
		binary.LittleEndian.PutUint64(b[:], uint64(d.N()))
		h.Write(b[:])
		for k := 0; k < d.N(); k++ {
			binary.LittleEndian.PutUint64(b[:], uint64(d.row(k)))
			h.Write(b[:])
		}
		d.key = fmt.Sprintf("rows-%d-%s", d.N(), hex.EncodeToString(h.Sum(nil))[:20])
	})
	return d.key
}

// stableExternal is an [External] whose hello declares the "stability"
// op: a [StableLearner], so that the Stability method (Chaudhuri &
// Vinterbo 2013, Algorithms 1–2) can tune it.
type stableExternal struct{ *External }

// stabilityCall is the params of a "stability" call.
type stabilityCall struct {
	Lambdas      []float64      `json:"lambdas"`
	N            int            `json:"n"`
	Alpha1       float64        `json:"alpha1"`
	Delta        float64        `json:"delta"`
	Loss         string         `json:"loss"`
	HuberH       *float64       `json:"huber_h,omitempty"`
	RowNorm      string         `json:"row_norm"`
	MethodParams map[string]any `json:"method_params,omitempty"`
}

// StabilityConstants implements StableLearner through one "stability"
// call: the worker returns {"beta1": β₁, "beta2": β₂}, the constants of
// Definition 2 of Chaudhuri & Vinterbo 2013 for the ramp-loss score at
// the candidates lambdas, n training rows, training level alpha1 and the
// δ of Theorem 1 (or an error reply saying why they do not hold). They
// are data-independent: the call carries no data and no privacy claim
// (one is refused). Both must be finite and > 0.
func (l stableExternal) StabilityConstants(ctx context.Context, lambdas []float64, nTrain int, alpha1, delta float64) (float64, float64, error) {
	pool, _, err := l.set.Pool(ctx, l.method)
	if err != nil {
		return 0, 0, err
	}
	rep, err := pool.Call(ctx, external.Request{Op: "stability", Params: stabilityCall{
		Lambdas: lambdas, N: nTrain, Alpha1: alpha1, Delta: delta,
		Loss: l.loss, HuberH: l.huberH, RowNorm: l.rowNorm, MethodParams: l.setting.Values,
	}})
	if err != nil {
		return 0, 0, err
	}
	if rep.Privacy != nil {
		return 0, 0, external.OutputFault(l.name, "stability", "the reply claims privacy %+v: a stability call releases nothing (omit \"privacy\")", *rep.Privacy)
	}
	var out struct {
		Beta1 *float64 `json:"beta1"`
		Beta2 *float64 `json:"beta2"`
	}
	if err := external.DecodeOutput(rep, l.name, "stability", `{"beta1": β₁, "beta2": β₂}`, &out); err != nil {
		return 0, 0, err
	}
	for _, b := range []struct {
		name string
		v    *float64
	}{{"beta1", out.Beta1}, {"beta2", out.Beta2}} {
		if b.v == nil || !(*b.v > 0) || math.IsInf(*b.v, 0) {
			return 0, 0, external.OutputFault(l.name, "stability", "%s is %v: want a finite number > 0", b.name, b.v)
		}
	}
	return *out.Beta1, *out.Beta2, nil
}

// WithParams implements Parameterized, keeping the stability op.
func (l stableExternal) WithParams(name string, s params.Setting) (Learner, error) {
	v, err := l.External.WithParams(name, s)
	if err != nil {
		return nil, err
	}
	return stableExternal{v.(*External)}, nil
}
