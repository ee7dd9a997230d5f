package external

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/params"
)

// ProtocolVersion is the version of the worker protocol this harness
// speaks. A worker's hello must carry the same number.
const ProtocolVersion = 1

// MaxSeed bounds the seed of a call: seeds are below 2⁵³ so that every
// JSON parser (R's jsonlite and JavaScript's read numbers as doubles) reads
// them exactly.
const MaxSeed = 1 << 53

// Privacy forms a worker declares in its hello: the notion of every
// guarantee it will claim.
const (
	FormPure   = "pure"   // ε-DP: a call claims {"epsilon": ε}
	FormApprox = "approx" // (ε, δ)-DP: a call claims {"epsilon": ε, "delta": δ}
	FormZCDP   = "zcdp"   // ρ-zCDP: a call claims {"rho": ρ}
)

// Forms lists the privacy forms a worker may declare.
var Forms = []string{FormPure, FormApprox, FormZCDP}

// HelloRequest is the harness's first line to a worker.
type HelloRequest struct {
	Type     string `json:"type"` // "hello"
	Protocol int    `json:"protocol"`
	Method   string `json:"method"` // the [[methods]] name
	Serves   string `json:"serves"` // "learner", "ci" or "hypothesis"
}

// Hello is a worker's reply to the harness's hello.
type Hello struct {
	Type     string `json:"type"` // "hello"
	Protocol int    `json:"protocol"`
	// Serves must repeat what the harness asked for.
	Serves string `json:"serves"`
	// Privacy is the form of the guarantee every call claims: "pure",
	// "approx" or "zcdp".
	Privacy string `json:"privacy"`
	// Version is the method's own version string, recorded in the
	// manifest; optional.
	Version string `json:"version,omitempty"`
	// Attributes are what the kind asks of a method of its extension point
	// (for a ci method: the model whose coefficients it covers, and the
	// budget parts it spends); see docs/worker-protocol.md.
	Attributes map[string]any `json:"attributes,omitempty"`
}

// Request is one call of a method: the harness's line after the
// handshake.
type Request struct {
	Type string `json:"type"` // "call"
	// ID numbers the calls of one worker process from 1; the reply
	// repeats it.
	ID uint64 `json:"id"`
	// Op is the operation, one of those of the method's extension point:
	// "fit" (learner), "interval" and "estimate" (ci), "sequence" and
	// "independent" (hypothesis).
	Op string `json:"op"`
	// Seed is the call's seed, derived by the harness from the run's seed
	// and the unit's identity as for built-in methods (< 2⁵³). A method
	// that draws all its randomness from a generator seeded by it replays
	// bit-identically.
	Seed uint64 `json:"seed"`
	// Params are the operation's parameters (an object).
	Params any `json:"params"`
	// Data maps each data role ("x", "y") to the path of a .npy file the
	// harness wrote into the run's scratch directory; the same path holds
	// the same bytes for the whole run, so a worker may cache by path.
	Data map[string]string `json:"data,omitempty"`
	// Weights, when present, weight the rows of the data: a bootstrap
	// replicate is the dataset's rows with these counts (zero for a row
	// not drawn).
	Weights []int32 `json:"weights,omitempty"`
}

// Reply is a worker's answer to a Request.
type Reply struct {
	Type string `json:"type"` // "result" or "error"
	ID   uint64 `json:"id"`
	// Output is the operation's output (decoded by the caller).
	Output json.RawMessage `json:"output,omitempty"`
	// Privacy is the guarantee the method claims for this call.
	Privacy *Claim `json:"privacy,omitempty"`
	// Message explains an "error" reply.
	Message string `json:"message,omitempty"`
}

// Claim is the privacy a method claims for one call, in its declared
// form.
type Claim struct {
	Epsilon *float64 `json:"epsilon,omitempty"`
	Delta   *float64 `json:"delta,omitempty"`
	Rho     *float64 `json:"rho,omitempty"`
	// Mechanism is the noise mechanism a learner declares instead of, or
	// beside, its ε, for the harness to compute the guarantee from
	// (methods/learners.Mechanism); only a learner whose hello declares
	// attributes.mechanism may send it, and such a learner must.
	Mechanism json.RawMessage `json:"mechanism,omitempty"`
}

// Guarantee returns the claim as a privacy.Guarantee of the declared
// form, covering covers (which the caller words, saying that the method
// declared it). It is an error for a claim to miss a value its form needs,
// to carry one it does not, or to be invalid (ε ≤ 0, δ ∉ [0, 1), …).
func (c *Claim) Guarantee(form, covers string) (privacy.Guarantee, error) {
	if c == nil {
		return privacy.Guarantee{}, fmt.Errorf(`the reply has no "privacy" (a method declaring %q must claim its guarantee on every call)`, form)
	}
	if c.Mechanism != nil {
		return privacy.Guarantee{}, fmt.Errorf(`privacy: "mechanism" is read only from a learner whose hello declares it (attributes.mechanism, docs/worker-protocol.md)`)
	}
	num := func(name string, p *float64) (float64, error) {
		if p == nil {
			return 0, fmt.Errorf(`privacy: %q is required in the %q form`, name, form)
		}
		if math.IsNaN(*p) || math.IsInf(*p, 0) {
			return 0, fmt.Errorf(`privacy: %q is not finite`, name)
		}
		return *p, nil
	}
	extra := func(name string, p *float64) error {
		if p != nil {
			return fmt.Errorf(`privacy: %q does not belong to the %q form`, name, form)
		}
		return nil
	}
	var g privacy.Guarantee
	switch form {
	case FormPure:
		if err := extra("rho", c.Rho); err != nil {
			return g, err
		}
		if c.Delta != nil && *c.Delta != 0 {
			return g, fmt.Errorf(`privacy: "delta" = %v in the "pure" form (declare "approx")`, *c.Delta)
		}
		eps, err := num("epsilon", c.Epsilon)
		if err != nil {
			return g, err
		}
		g = privacy.EpsDP(eps, covers)
	case FormApprox:
		if err := extra("rho", c.Rho); err != nil {
			return g, err
		}
		eps, err := num("epsilon", c.Epsilon)
		if err != nil {
			return g, err
		}
		delta, err := num("delta", c.Delta)
		if err != nil {
			return g, err
		}
		g = privacy.EpsDeltaDP(eps, delta, covers)
	case FormZCDP:
		if err := extra("epsilon", c.Epsilon); err != nil {
			return g, err
		}
		if err := extra("delta", c.Delta); err != nil {
			return g, err
		}
		rho, err := num("rho", c.Rho)
		if err != nil {
			return g, err
		}
		g = privacy.Rho(rho, covers)
	default:
		return g, fmt.Errorf("unknown privacy form %q", form)
	}
	if err := g.Validate(); err != nil {
		return privacy.Guarantee{}, fmt.Errorf("privacy: %w", err)
	}
	return g, nil
}

// Params returns the parameters the hello declares in attributes.params
// (none when it declares none), checked by params.Check: a list of
// {"name": …, "type": "float"|"int"|"bool"|"string", "default": …,
// "doc": …}. method names the method for the message.
func (h Hello) Params(method string) ([]params.Param, error) {
	raw, ok := h.Attributes["params"]
	if !ok {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("method %s: its hello's attributes.params: %v", method, err)
	}
	var decl []params.Param
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&decl); err != nil {
		return nil, fmt.Errorf(`method %s: its hello's attributes.params is %s: want a list of {"name": …, "type": "float"|"int"|"bool"|"string", "default": …, "doc": …} (%v)`, method, b, err)
	}
	return params.Check("method "+method+": its hello's attributes.params", decl)
}
