package cimethods

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/external"
)

// External is a Method served by an external command: a [[methods]]
// table of the spec with serves = "ci", speaking the worker protocol
// (docs/worker-protocol.md, package external), named in
// confidence_intervals.methods like a registered method (it may not take a
// registered method's name).
//
// # Data
//
// The harness writes the (sub)dataset of each dataset and swept setting
// once per run into the run's scratch directory, as the ci-coverage kind
// (kinds/cicoverage) builds it ([Records]): x is the n × (d+1) design
// matrix of its n records (float64, the d features then the constant, rows
// scaled per data.row_norm, so ‖xᵢ‖₂ ≤ 1) and y their n labels ±1. A
// bootstrap replicate travels with each call as weights, not as a copy:
// weights[i] is how often record i was drawn (Σ = n), the same draws as
// the built-in methods' replicate. A (sub)dataset keeps its path for the
// whole run, so a worker may cache by path.
//
// # Operations
//
// "interval" is one Method.Interval:
//
//	params:  {"eps1": ε₁, "eps2": ε₂, "eps3": ε₃, "alpha": α, "c": c, "h": h,
//	          "m": m, "model": "lr"|"svm", "n": n}
//	data:    {"x": "<scratch>/….npy", "y": "<scratch>/….npy"}
//	weights: [n counts, one per record of x]
//	output:  {"theta": [d+1], "lo": [d+1], "hi": [d+1], "status": "ok"}
//	         or, releasing no interval, {"status": "<reason>"} (theta,
//	         lo and hi absent or null; the row gets the reason as status);
//	         optional "epsilon_prime": ε′ for rows.csv (else NaN)
//
// "estimate" is one Method.Fit, the private fit alone for a variability
// interval:
//
//	params:  {"eps1": ε₁, "c": c, "h": h, "model": "lr"|"svm", "n": n}
//	output:  {"theta": [d+1], "status": "ok"} or {"status": "<reason>"}
//	         (optional "epsilon_prime")
//
// c is the regularization of the objective (1/n)Σᵢ f(xᵢ, yᵢ, θ) + c‖θ‖², h the
// Huber width of the SVM loss, m the Monte Carlo samples the spec asks
// for, α the miscoverage of the (1 − α) intervals, n the records of the
// replicate. "estimate" carries no ε₂, ε₃, α or m: the kind shares one
// variability interval between the settings that differ only in those.
// The seed of a call is drawn from the replicate's stream "external/<name>",
// so a method that seeds all its randomness from it replays bit-identically
// at any worker count.
//
// Each output is checked: arrays of exactly d+1 finite numbers, lo ≤ hi
// coordinate by coordinate, a non-empty status, "ok" only with an interval
// (or a θ̃), theta with every interval, no other keys. A status other than
// "ok" beside an interval marks it as released from a fit that did not
// converge, as for the built-ins. A failed check is an [external.Fault] of
// kind "output": the unit fails with a message naming the method. An
// external method computes in units of its own (keys ending
// "/<name>"), so that its faults fail its units only: the other methods
// of the same replicates are computed and checkpointed, and the run
// exits 1 naming the failed units (the same command again retries them).
// A method that never releases an interval (every reply a status) is no
// fault: its rows carry the statuses, the run's warnings (the manifest,
// stderr, the report) say it released none, and its table cells say "no
// interval in N of N replicates" (the kind's Experiment.RowWarnings).
//
// # Attributes and cost
//
// The hello's attributes describe the method to the kind:
//
//	"model":  "lr" or "svm", required: the loss whose θ₀ the kind fits
//	"spends": the budget parts the method spends, a non-empty subset of
//	          ["eps1", "eps2", "eps3"] with "eps1" (θ̃), required
//	"perturbation": the rows.csv perturbation column; default "external"
//	"privacy_label", "perturbation_label", "model_label": table labels
//
// Any other attribute is an error. The privacy column is "dp" for a
// method declaring the "pure" form and "zcdp" for "zcdp". The cost of an
// interval ([External.Cost]) is composed from the declared parts, in
// the declared form, independent of the data: under "pure" εᵢ-DP per
// spent part, under "zcdp" ρᵢ = εᵢ²/2 per part, as the paper's zCDP methods
// pair them (Section 7, "we set ρ = ε²/2"); composed sequentially. The
// "approx" form is refused: the kind's budget (ε₁, ε₂, ε₃) has no δ to
// spend.
//
// Every reply must claim, in the declared form, exactly what the cost
// states for that call (an "interval" the composed total, an "estimate"
// the ε₁ part alone), up to a relative 10⁻⁹ for the worker's rounding; any
// other claim fails the unit ("claimed …, declared …"). The harness does
// not check that the method keeps its word: the ledger labels every charge
// "declared by the method".
type External struct {
	name   string
	set    *external.Set
	form   string
	attrs  Attributes
	spends []int          // the budget parts spent, indices 0..2 (ε₁, ε₂, ε₃), ascending
	values map[string]any // the values of its declared parameters, sent in every call
	canon  string         // those values, "k=v,…" (params.Setting.Canonical)
}

// Attribute keys of a ci method's hello.
var externalAttributes = []string{"model", "spends", "perturbation", "privacy_label", "perturbation_label", "model_label", "params"}

// budgetParts are the names of the budget parts in a hello's "spends" and
// the ledger's names of the releases the paper spends them on.
var budgetParts = [3]struct{ key, part string }{{"eps1", "training"}, {"eps2", "hessian"}, {"eps3", "covariance"}}

// NewExternal returns the method that the spec's [[methods]] table
// name serves, starting its first worker to read the handshake's privacy
// form and attributes.
func NewExternal(ctx context.Context, set *external.Set, name string) (*External, error) {
	_, h, err := set.Pool(ctx, name)
	if err != nil {
		return nil, err
	}
	m := &External{name: name, set: set, form: h.Privacy}
	switch h.Privacy {
	case external.FormPure:
		m.attrs.Privacy, m.attrs.PrivacyLabel = string(dpci.DP), "DP"
	case external.FormZCDP:
		m.attrs.Privacy, m.attrs.PrivacyLabel = string(dpci.ZCDP), "zCDP"
	default:
		return nil, fmt.Errorf("external method %s: a ci method must declare privacy %q or %q, not %q: the ci-coverage budget (eps1, eps2, eps3) has no delta", name, external.FormPure, external.FormZCDP, h.Privacy)
	}
	if err := m.readAttributes(h.Attributes); err != nil {
		return nil, fmt.Errorf("external method %s: hello: %w", name, err)
	}
	st, err := set.Setting(ctx, name)
	if err != nil {
		return nil, err
	}
	m.values, m.canon = st.Values, st.Canonical()
	return m, nil
}

// Setting returns the values of the parameters the worker declares, as
// the spec sets them, "k=v,…" ("" for none): part of the identity of
// every unit that calls it (runner.UnitReader).
func (m *External) Setting() string { return m.canon }

// readAttributes sets m's attributes and budget parts from a hello's.
func (m *External) readAttributes(attrs map[string]any) error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	str := func(key string) (string, bool) {
		v, ok := attrs[key]
		if !ok {
			return "", false
		}
		s, isStr := v.(string)
		if !isStr || s == "" {
			bad("attributes.%s must be a non-empty string (got %v)", key, v)
			return "", false
		}
		return s, true
	}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(externalAttributes, k) {
			bad("unknown attribute %q (known: %s)", k, strings.Join(externalAttributes, ", "))
		}
	}
	if model, ok := str("model"); !ok {
		if _, present := attrs["model"]; !present {
			bad(`attributes.model is required: "lr" or "svm"`)
		}
	} else if _, err := (dpci.Params{Model: dpci.Model(model), H: 1}).Loss(); err != nil {
		bad(`attributes.model must be "lr" or "svm" (got %q)`, model)
	} else {
		m.attrs.Model = dpci.Model(model)
	}
	m.attrs.Perturbation = "external"
	if s, ok := str("perturbation"); ok {
		m.attrs.Perturbation = s
	}
	if s, ok := str("privacy_label"); ok {
		m.attrs.PrivacyLabel = s
	}
	if s, ok := str("perturbation_label"); ok {
		m.attrs.PerturbationLabel = s
	}
	if s, ok := str("model_label"); ok {
		m.attrs.ModelLabel = s
	}
	spends, ok := attrs["spends"].([]any)
	switch {
	case attrs["spends"] == nil:
		bad(`attributes.spends is required: the budget parts the method spends, e.g. ["eps1", "eps2", "eps3"]`)
	case !ok || len(spends) == 0:
		bad(`attributes.spends must be a non-empty list of "eps1", "eps2", "eps3" (got %v)`, attrs["spends"])
	default:
		for _, v := range spends {
			i := slices.IndexFunc(budgetParts[:], func(p struct{ key, part string }) bool { return p.key == v })
			switch {
			case i < 0:
				bad(`attributes.spends: %v is not a budget part ("eps1", "eps2" or "eps3")`, v)
			case slices.Contains(m.spends, i):
				bad("attributes.spends: %q listed twice", budgetParts[i].key)
			default:
				m.spends = append(m.spends, i)
			}
		}
		slices.Sort(m.spends)
		if len(errs) == 0 && !slices.Contains(m.spends, 0) {
			bad(`attributes.spends must include "eps1": the kind asks every method for a private θ̃ at ε₁`)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Name implements Method.
func (m *External) Name() string { return m.name }

// Attributes implements Method: from the hello (see the type's doc).
func (m *External) Attributes() Attributes { return m.attrs }

// UsesRecords implements RecordUser: the replicate goes to the worker as
// counts over the records.
func (m *External) UsesRecords() bool { return true }

func (m *External) String() string { return m.name }

// declared is the guarantee the method declares for spending eps on one
// part, in its form.
func (m *External) declared(eps float64, covers string) privacy.Guarantee {
	if m.form == external.FormZCDP {
		return privacy.Rho(Rho(eps), covers)
	}
	return privacy.EpsDP(eps, covers)
}

// Cost implements Method: the declared parts of b in the declared form
// (see the type's doc), each labelled as the method's declaration.
func (m *External) Cost(b Budget) Cost {
	eps := [3]float64{b.Eps1, b.Eps2, b.Eps3}
	var c Cost
	for _, i := range m.spends {
		p := budgetParts[i]
		c.Charges = append(c.Charges, Charge{Part: p.part, Guarantee: m.declared(eps[i],
			fmt.Sprintf("declared by the method %s: its release at %s on D", m.name, p.key))})
	}
	c.Rule = fmt.Sprintf("declared by the method %s (worker protocol, privacy %q; not checked by the harness), sequential composition", m.name, m.form)
	c.Covers = fmt.Sprintf("declared by the method %s: one interval release on the replicate D; neighbouring datasets differ in one record", m.name)
	return c
}

// externalInterval is the params of an "interval" call.
type externalInterval struct {
	Eps1  float64 `json:"eps1"`
	Eps2  float64 `json:"eps2"`
	Eps3  float64 `json:"eps3"`
	Alpha float64 `json:"alpha"`
	C     float64 `json:"c"`
	H     float64 `json:"h"`
	M     int     `json:"m"`
	Model string  `json:"model"`
	N     int     `json:"n"`
}

// externalEstimate is the params of an "estimate" call.
type externalEstimate struct {
	Eps1  float64 `json:"eps1"`
	C     float64 `json:"c"`
	H     float64 `json:"h"`
	Model string  `json:"model"`
	N     int     `json:"n"`
}

// externalOutput is the output of either operation.
type externalOutput struct {
	Theta        []float64 `json:"theta"`
	Lo           []float64 `json:"lo"`
	Hi           []float64 `json:"hi"`
	Status       *string   `json:"status"`
	EpsilonPrime *float64  `json:"epsilon_prime"`
}

// call makes one call of op on d's replicate and decodes its output,
// checking the claim against want.
func (m *External) call(ctx context.Context, op string, d Data, params any, want privacy.Guarantee) (externalOutput, error) {
	var out externalOutput
	r := d.Records
	if r == nil {
		panic("cimethods: an external method got a replicate without its records")
	}
	pool, _, err := m.set.Pool(ctx, m.name)
	if err != nil {
		return out, err
	}
	sc, err := m.set.Scratch()
	if err != nil {
		return out, err
	}
	xPath, err := sc.Matrix(r.Key()+"-x", r.X)
	if err != nil {
		return out, err
	}
	yPath, err := sc.Vector(r.Key()+"-y", r.Y)
	if err != nil {
		return out, err
	}
	rng := d.Streams("external/" + m.name)
	seed := rng.Uint64() % external.MaxSeed
	params, err = external.MethodParams(params, m.values)
	if err != nil {
		return out, err
	}
	rep, err := pool.Call(ctx, external.Request{
		Op: op, Seed: seed, Params: params,
		Data:    map[string]string{"x": xPath, "y": yPath},
		Weights: r.Counts,
	})
	if err != nil {
		return out, err
	}
	if err := external.DecodeOutput(rep, m.name, op, `{"theta": [...], "lo": [...], "hi": [...], "status": "..."}`, &out); err != nil {
		return out, err
	}
	g, err := rep.Privacy.Guarantee(m.form, want.Covers)
	if err != nil {
		return out, external.OutputFault(m.name, op, "%v", err)
	}
	if !sameClaim(g, want) {
		return out, external.OutputFault(m.name, op, "claimed %s, declared %s (privacy %q; the hello says it spends %s)",
			claimString(g), claimString(want), m.form, m.spendsString())
	}
	if out.Status == nil || *out.Status == "" {
		return out, external.OutputFault(m.name, op, `the output has no "status" (want "ok" or the reason nothing was released)`)
	}
	// The release's privacy is the method's word: a traced run records
	// it as declared, on the replicate's records.
	mech.Scope(rng, fmt.Sprintf("%s of %s (external)", op, m.name), d.Scope)
	mech.RecordDeclared(rng, m.name, g, len(out.Theta))
	return out, nil
}

// sameClaim reports whether a claim equals the declared guarantee, up to
// a relative 10⁻⁹ (the worker sums the parts in its own floating point).
func sameClaim(got, want privacy.Guarantee) bool {
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	return got.Notion == want.Notion && close(got.Epsilon, want.Epsilon) && close(got.Rho, want.Rho) && got.Delta == want.Delta
}

func claimString(g privacy.Guarantee) string {
	if g.Notion == privacy.ZCDP {
		return fmt.Sprintf("ρ = %v", g.Rho)
	}
	return fmt.Sprintf("ε = %v", g.Epsilon)
}

func (m *External) spendsString() string {
	var s []string
	for _, i := range m.spends {
		s = append(s, budgetParts[i].key)
	}
	return strings.Join(s, ", ")
}

// checkVector returns an output fault unless v has dim finite numbers.
func (m *External) checkVector(op, name string, v []float64, dim int) error {
	if len(v) != dim {
		return external.OutputFault(m.name, op, "%s has %d numbers for the d+1 = %d coefficients", name, len(v), dim)
	}
	for j, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return external.OutputFault(m.name, op, "%s[%d] is %v", name, j, x)
		}
	}
	return nil
}

func epsilonPrime(out externalOutput) float64 {
	if out.EpsilonPrime == nil {
		return math.NaN()
	}
	return *out.EpsilonPrime
}

// Interval implements Method through one "interval" call.
func (m *External) Interval(ctx context.Context, d Data, b Budget) (Release, error) {
	const op = "interval"
	cost := m.Cost(b)
	total, err := cost.Total()
	if err != nil {
		return Release{}, err
	}
	pr := d.Problem
	params := externalInterval{Eps1: b.Eps1, Eps2: b.Eps2, Eps3: b.Eps3, Alpha: pr.Alpha, C: pr.C, H: pr.H, M: pr.MCSamples,
		Model: string(m.attrs.Model), N: d.Records.N()}
	out, err := m.call(ctx, op, d, params, total)
	if err != nil {
		return Release{}, err
	}
	dim := d.Rows.D()
	rel := Release{Status: *out.Status, EpsilonPrime: epsilonPrime(out), Cost: cost}
	if out.Lo == nil && out.Hi == nil {
		if rel.Status == "ok" {
			return Release{}, external.OutputFault(m.name, op, `status "ok" without an interval (lo and hi are missing)`)
		}
		if out.Theta != nil {
			if err := m.checkVector(op, "theta", out.Theta, dim); err != nil {
				return Release{}, err
			}
			rel.Theta = out.Theta
		}
		return rel, nil
	}
	for _, v := range []struct {
		name string
		v    []float64
	}{{"theta", out.Theta}, {"lo", out.Lo}, {"hi", out.Hi}} {
		if err := m.checkVector(op, v.name, v.v, dim); err != nil {
			return Release{}, err
		}
	}
	for j := range out.Lo {
		if out.Lo[j] > out.Hi[j] {
			return Release{}, external.OutputFault(m.name, op, "lo[%d] = %v exceeds hi[%d] = %v", j, out.Lo[j], j, out.Hi[j])
		}
	}
	rel.Theta, rel.Interval = out.Theta, dpci.Interval{Lo: out.Lo, Hi: out.Hi}
	return rel, nil
}

// Fit implements Method through one "estimate" call.
func (m *External) Fit(ctx context.Context, d Data, eps1 float64) (Estimate, error) {
	const op = "estimate"
	want := m.declared(eps1, fmt.Sprintf("declared by the method %s: θ̃ at eps1 on D", m.name))
	pr := d.Problem
	params := externalEstimate{Eps1: eps1, C: pr.C, H: pr.H, Model: string(m.attrs.Model), N: d.Records.N()}
	out, err := m.call(ctx, op, d, params, want)
	if err != nil {
		return Estimate{}, err
	}
	if out.Lo != nil || out.Hi != nil {
		return Estimate{}, external.OutputFault(m.name, op, `an estimate releases theta only (got "lo" or "hi")`)
	}
	est := Estimate{Status: *out.Status, EpsilonPrime: epsilonPrime(out)}
	if out.Theta == nil {
		if est.Status == "ok" {
			return Estimate{}, external.OutputFault(m.name, op, `status "ok" without a theta`)
		}
		return est, nil
	}
	if err := m.checkVector(op, "theta", out.Theta, d.Rows.D()); err != nil {
		return Estimate{}, err
	}
	est.Theta = out.Theta
	return est, nil
}
