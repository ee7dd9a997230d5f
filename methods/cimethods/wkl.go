package cimethods

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/methods/registry"
)

// Perturbation is how one of the paper's methods makes θ̃ private.
type Perturbation string

// The perturbations of Wang, Kifer & Lee 2019.
const (
	// ObjPert is objective perturbation (Algorithm 1), with the intervals
	// of Algorithm 3.
	ObjPert Perturbation = "obj"
	// OutPert is output perturbation (Algorithm 4), with the intervals of
	// Algorithm 5.
	OutPert Perturbation = "output"
)

// NewWKL returns the method of Wang, Kifer & Lee, "Differentially
// Private Confidence Intervals for Empirical Risk Minimization" (JPC 9(1),
// 2019; [arXiv:1804.03794]) for privacy (dpci.DP or dpci.ZCDP),
// perturbation and model (dpci.LR or dpci.SVM), named
// "<privacy>-<perturbation>-<model>", e.g. "dp-obj-lr". The eight are
// registered as built-ins.
//
// With the budget (ε₁, ε₂, ε₃) of a run:
//
//   - ObjPert runs Algorithm 3: θ̃ by Algorithm 1 at ε = ε₁, H̃ and Σ̃ by
//     Algorithm 2 at ϕ₂, ϕ₃, and the Monte Carlo intervals of Eq. 4. Its
//     cost is (ε₁ + ε₂ + ε₃)-DP under DP and (ε₁²/2 + ρ₂ + ρ₃)-zCDP under
//     zCDP with ρᵢ = εᵢ²/2 (Theorem 2; Section 7 sets ρ = ε²/2, and an
//     ε₁-DP Algorithm 1 is ε₁²/2-zCDP, Proposition 1).
//   - OutPert runs Algorithm 5: θ̃ = θ̂ + β by Algorithm 4 at ϕ₁, H̃ and Σ̃ at
//     ϕ₂, ϕ₃, and the intervals of Eq. 8 (Monte Carlo under DP, closed form
//     under zCDP). Its cost is (ε₁ + ε₂ + ε₃)-DP or (ρ₁ + ρ₂ + ρ₃)-zCDP
//     with ρᵢ = εᵢ²/2 (Theorem 4).
//
// Under zCDP both therefore cost Σεᵢ²/2. The DP and zCDP objective
// perturbations of one replicate share one Algorithm 1 run (stream
// "obj-fit"; the mechanism is the same at the same ε₁), and the output
// perturbations one non-private fit θ̂; each draws the rest from its own
// streams ("<privacy>-output", "<privacy>-obj-ci").
//
// It returns an error for a privacy, perturbation or model it does not
// know.
//
// [arXiv:1804.03794]: https://arxiv.org/abs/1804.03794
func NewWKL(privacy dpci.Privacy, perturbation Perturbation, model dpci.Model) (Method, error) {
	var privLabel string
	var phi func(eps float64) float64
	switch privacy {
	case dpci.DP:
		privLabel, phi = "DP", func(eps float64) float64 { return eps }
	case dpci.ZCDP:
		privLabel, phi = "zCDP", Rho // ρ = ε²/2 (Section 7)
	default:
		return nil, fmt.Errorf("cimethods: unknown privacy %q (want %q or %q)", privacy, dpci.DP, dpci.ZCDP)
	}
	var modelLabel string
	switch model {
	case dpci.LR:
		modelLabel = "LR"
	case dpci.SVM:
		modelLabel = "SVM"
	default:
		return nil, fmt.Errorf("cimethods: unknown model %q (want %q or %q)", model, dpci.LR, dpci.SVM)
	}
	w := wkl{
		name:    fmt.Sprintf("%s-%s-%s", privacy, perturbation, model),
		privacy: privacy, model: model, phi: phi,
		attrs: Attributes{Privacy: string(privacy), Perturbation: string(perturbation), Model: model,
			PrivacyLabel: privLabel, PerturbationLabel: string(perturbation), ModelLabel: modelLabel},
	}
	switch perturbation {
	case ObjPert:
		return objPert{w}, nil
	case OutPert:
		return outPert{w}, nil
	}
	return nil, fmt.Errorf("cimethods: unknown perturbation %q (want %q or %q)", perturbation, ObjPert, OutPert)
}

// builtinRegistry returns a registry holding the paper's eight methods in
// the row order of its Tables 2–6.
func builtinRegistry() *registry.Registry[Method] {
	var builtins []Method
	for _, privacy := range []dpci.Privacy{dpci.DP, dpci.ZCDP} {
		for _, pert := range []Perturbation{ObjPert, OutPert} {
			for _, model := range []dpci.Model{dpci.LR, dpci.SVM} {
				m, err := NewWKL(privacy, pert, model)
				if err != nil {
					panic("cimethods: built-in method: " + err.Error())
				}
				builtins = append(builtins, m)
			}
		}
	}
	return registry.New("method", checkAttributes, builtins...)
}

// Mechanisms returns the mechanisms (mech.Release.Mechanism) that the
// releases of m record, for a run's manifest: for the paper's methods
// ([NewWKL]) objective perturbation (Algorithm 1,
// "objective-perturbation-wkl") or output perturbation (Algorithm 4,
// "output-perturbation-wkl-dp" or "-zcdp") and the two PrivSPDMat matrices
// (Algorithm 2, "privspdmat-dp" or "-zcdp"); for any other method
// mech.Declared(NAME), as a traced run records an external method's
// releases: the manifest cannot vouch for its noise.
func Mechanisms(m Method) []string {
	switch m := m.(type) {
	case objPert:
		return []string{"objective-perturbation-wkl", "privspdmat-" + string(m.privacy)}
	case outPert:
		return []string{"output-perturbation-wkl-" + string(m.privacy), "privspdmat-" + string(m.privacy)}
	}
	return []string{mech.Declared(m.Name())}
}

// wkl holds what the paper's methods have in common.
type wkl struct {
	name    string
	privacy dpci.Privacy
	model   dpci.Model
	// phi converts a spec budget εᵢ to the method's ϕᵢ: εᵢ under DP,
	// ρᵢ = εᵢ²/2 under zCDP.
	phi   func(eps float64) float64
	attrs Attributes
}

// Name implements Method.
func (w wkl) Name() string { return w.name }

// Attributes implements Method.
func (w wkl) Attributes() Attributes { return w.attrs }

func (w wkl) String() string { return w.name }

// params returns the dpci parameters at budget b: ϕᵢ = εᵢ under DP and
// ϕᵢ = ρᵢ = εᵢ²/2 under zCDP (Section 7).
func (w wkl) params(b Budget, pr Problem) dpci.Params {
	return dpci.Params{Model: w.model, H: pr.H, C: pr.C, Privacy: w.privacy, Alpha: pr.Alpha, M: pr.MCSamples,
		Phi1: w.phi(b.Eps1), Phi2: w.phi(b.Eps2), Phi3: w.phi(b.Eps3), SigmaFloor: pr.SigmaFloor}
}

// status is the row status of a release from a fit with solver status s.
func status(s string) string {
	if s != erm.StatusConverged {
		return "fit " + s
	}
	return "ok"
}

// StatusEpsilonPrime is the Release and Estimate status of the paper's
// objective perturbation when its budget cannot absorb the curvature term
// (ε′ ≤ 0 in Algorithm 1, [dpci.ErrEpsilonPrime]): nothing is released.
const StatusEpsilonPrime = "epsilon-prime<=0"

// covers is what the composed guarantee of a built-in method protects.
const covers = "one interval release (θ̃, H̃, Σ̃ and the intervals computed from them) on the replicate D; neighbouring datasets differ in one record"

// matricesWhat is the scope of the H̃ and Σ̃ releases of Algorithm 2 at the
// released θ̃, for a traced run (the releases carry ‖θ̃‖₂, which the
// sensitivity of Σ for logistic regression depends on, in their Params:
// dpci.PrivMatrices).
func matricesWhat(method string) string {
	return "H̃ and Σ̃ of Algorithm 2 (" + method + ") at θ̃"
}

// objPert is the paper's objective-perturbation method (Algorithm 3).
type objPert struct{ wkl }

// Cost implements Method: Theorem 2, with ϕ₁ = ε₁ always (Algorithm 1 is
// run at ε₁ and counts ε₁²/2 under zCDP).
func (m objPert) Cost(b Budget) Cost {
	p := m.params(b, Problem{})
	p.Phi1 = b.Eps1
	parts := dpci.ObjPertParts(p)
	return Cost{Charges: []Charge{{"training", parts[0]}, {"hessian", parts[1]}, {"covariance", parts[2]}},
		Rule: "Wang, Kifer & Lee 2019, Theorem 2", Covers: covers}
}

// objFit is one shared Algorithm 1 run.
type objFit struct {
	res erm.Result
	ep  float64
}

// fit runs Algorithm 1 at ε₁ once per replicate for the DP and zCDP
// variants (the mechanism does not depend on the notion).
func (m objPert) fit(d Data, eps1 float64) (objFit, error) {
	key := fmt.Sprintf("wkl/obj-fit/%s/eps1=%v", m.model, eps1)
	return Share(d.Shared, key, func() (objFit, error) {
		p := m.params(Budget{Eps1: eps1}, d.Problem)
		p.Phi1 = eps1
		p.Fit = d.Problem.Fit
		rng := d.Streams("obj-fit")
		mech.Scope(rng, fmt.Sprintf("θ̃ of Algorithm 1 (%s, ε₁ = %v), shared by dp-obj-%[1]s and zcdp-obj-%[1]s", m.model, eps1), d.Scope)
		res, ep, err := dpci.ObjPertFit(rng, d.Rows, p)
		return objFit{res, ep}, err
	})
}

// Interval implements Method: Algorithm 3.
func (m objPert) Interval(ctx context.Context, d Data, b Budget) (Release, error) {
	cost := m.Cost(b)
	f, err := m.fit(d, b.Eps1)
	if errors.Is(err, dpci.ErrEpsilonPrime) {
		return Release{Status: StatusEpsilonPrime, EpsilonPrime: f.ep, Cost: cost}, nil
	}
	if err != nil {
		return Release{}, err
	}
	p := m.params(b, d.Problem)
	// The exact H and Σ at θ̃, computed once for the DP and zCDP variants
	// (they share θ̃; the matrices depend on the rows, θ̃, the model, c and
	// h only); each then draws its own noise.
	mats, err := Share(d.Shared, fmt.Sprintf("wkl/obj-matrices/%s/eps1=%v", m.model, b.Eps1), func() (dpci.Matrices, error) {
		return dpci.ExactMatrices(d.Rows, p, f.res.W)
	})
	if err != nil {
		return Release{}, err
	}
	rng := d.Streams(string(m.privacy) + "-obj-ci")
	mech.Scope(rng, matricesWhat(m.name), d.Scope)
	h, sigma, err := dpci.PrivMatricesOf(rng, d.Rows.SumWeights(), p, f.res.W, mats)
	if err != nil {
		return Release{}, err
	}
	iv, err := dpci.ObjPertCI(ctx, rng, f.res.W, h, sigma, d.Rows.SumWeights(), f.ep, p.Alpha, p.M)
	if err != nil {
		return Release{}, err
	}
	return Release{Theta: f.res.W, Interval: iv, Status: status(f.res.Status), EpsilonPrime: f.ep, Cost: cost}, nil
}

// Fit implements Method: Algorithm 1 at ε₁.
func (m objPert) Fit(ctx context.Context, d Data, eps1 float64) (Estimate, error) {
	f, err := m.fit(d, eps1)
	if errors.Is(err, dpci.ErrEpsilonPrime) {
		return Estimate{Status: StatusEpsilonPrime, EpsilonPrime: f.ep}, nil
	}
	if err != nil {
		return Estimate{}, err
	}
	return Estimate{Theta: f.res.W, Status: status(f.res.Status), EpsilonPrime: f.ep}, nil
}

// outPert is the paper's output-perturbation method (Algorithm 5).
type outPert struct{ wkl }

// Cost implements Method: Theorem 4.
func (m outPert) Cost(b Budget) Cost {
	parts := dpci.OutPertParts(m.params(b, Problem{}))
	return Cost{Charges: []Charge{{"training", parts[0]}, {"hessian", parts[1]}, {"covariance", parts[2]}},
		Rule: "Wang, Kifer & Lee 2019, Theorem 4", Covers: covers}
}

// hat returns the non-private θ̂ of Eq. 7, fitted once per replicate for
// every output perturbation of the model.
func (m outPert) hat(d Data) (erm.Result, error) {
	return Share(d.Shared, "wkl/nonprivate-fit/"+string(m.model), func() (erm.Result, error) {
		return dpci.FitNonPrivate(d.Rows, dpci.Params{Model: m.model, H: d.Problem.H, C: d.Problem.C}, d.Problem.Fit)
	})
}

// Interval implements Method: Algorithm 5.
func (m outPert) Interval(ctx context.Context, d Data, b Budget) (Release, error) {
	hat, err := m.hat(d)
	if err != nil {
		return Release{}, err
	}
	p := m.params(b, d.Problem)
	n := d.Rows.SumWeights()
	rng := d.Streams(string(m.privacy) + "-output")
	mech.Scope(rng, "θ̃ of Algorithm 4 ("+m.name+")", d.Scope)
	theta, err := dpci.OutPertNoise(nil, rng, hat.W, n, p.C, p.Phi1, p.Privacy)
	if err != nil {
		return Release{}, err
	}
	// The exact H and Σ at θ̃, computed once for the points of an ε₂ or ε₃
	// sweep, whose seeded streams give each the same θ̃ (θ̂ and the noise
	// drawn at ϕ₁ from the replicate's stream); each point then draws H̃
	// and Σ̃ at its ϕ₂, ϕ₃. The key holds θ̃ bit for bit: with secure noise
	// every stream is fresh, each point draws its own θ̃, and matrices at
	// another point's θ̃ would be released at the wrong θ (and, for
	// logistic regression, with the covariance's sensitivity of the wrong
	// ‖θ̃‖).
	mats, err := Share(d.Shared, fmt.Sprintf("wkl/output-matrices/%s/eps1=%v/theta=%s", m.name, b.Eps1, thetaKey(theta)), func() (dpci.Matrices, error) {
		return dpci.ExactMatrices(d.Rows, p, theta)
	})
	if err != nil {
		return Release{}, err
	}
	mech.Scope(rng, matricesWhat(m.name), d.Scope)
	h, sigma, err := dpci.PrivMatricesOf(rng, n, p, theta, mats)
	if err != nil {
		return Release{}, err
	}
	iv, err := dpci.OutPertCI(ctx, rng, theta, h, sigma, n, p.C, p.Phi1, p.Privacy, p.Alpha, p.M)
	if err != nil {
		return Release{}, err
	}
	return Release{Theta: theta, Interval: iv, Status: status(hat.Status), EpsilonPrime: math.NaN(), Cost: m.Cost(b)}, nil
}

// Fit implements Method: Algorithm 4 at ϕ₁ (ε₁, or ρ₁ = ε₁²/2 under zCDP).
func (m outPert) Fit(ctx context.Context, d Data, eps1 float64) (Estimate, error) {
	hat, err := m.hat(d)
	if err != nil {
		return Estimate{}, err
	}
	p := m.params(Budget{Eps1: eps1}, d.Problem)
	rng := d.Streams(string(m.privacy) + "-output")
	mech.Scope(rng, "θ̃ of Algorithm 4 ("+m.name+")", d.Scope)
	theta, err := dpci.OutPertNoise(nil, rng, hat.W, d.Rows.SumWeights(), p.C, p.Phi1, p.Privacy)
	if err != nil {
		return Estimate{}, err
	}
	return Estimate{Theta: theta, Status: status(hat.Status), EpsilonPrime: math.NaN()}, nil
}

// thetaKey is θ bit for bit, as a Share key part.
func thetaKey(theta []float64) string {
	b := make([]byte, 0, 17*len(theta))
	for _, v := range theta {
		b = strconv.AppendUint(b, math.Float64bits(v), 16)
		b = append(b, ',')
	}
	return string(b)
}
