// Package privacy holds privacy guarantees as values: what a release
// promises (ε, δ or ρ), under which notion, covering what, and how
// guarantees compose. Every method of the harness returns its guarantee as
// a Guarantee; privacy ledgers are composed from those values, never
// decided by a method's name.
//
// # Notions
//
//   - Pure ε-DP and approximate (ε, δ)-DP: Dwork & Roth, "The Algorithmic
//     Foundations of Differential Privacy" (2014), Definition 2.4.
//   - ρ-zCDP: Bun & Steinke, "Concentrated Differential Privacy:
//     Simplifications, Extensions, and Lower Bounds" (TCC 2016,
//     arXiv:1605.02065v1), Definition 1.1; it implies
//     (ρ + 2√(ρ·ln(1/δ)), δ)-DP for every δ > 0 (Proposition 1.3).
//   - Ex-post ε (Ligett et al., "Accuracy First", NeurIPS 2017,
//     Definition 2.2): the loss is a function of the outcome, reported by the
//     method after the fact; the Guarantee then carries the realised ε.
//   - None: a step that is not private (a non-private baseline such as
//     Chaudhuri & Vinterbo's Control). A composition with a non-private part
//     is not private.
//
// # Composition
//
// Sequential composes guarantees of releases on the same data: ε and δ add
// (Dwork & Roth, Theorem 3.16), ρ adds (Bun & Steinke, Lemma 2.3); pure
// parts count as (ε, 0). Parallel composes releases on disjoint parts of
// the data: the maximum of each parameter (McSherry 2009, Theorem 4). A
// composition of zCDP with (ε, δ) parts is refused (convert first with
// ToApprox); a composition with a non-private part is non-private.
package privacy

import (
	"errors"
	"fmt"
	"math"
)

// Notion is the privacy definition a Guarantee is stated in.
type Notion string

// The notions of the harness.
const (
	Pure   Notion = "pure-dp"   // ε-DP
	Approx Notion = "approx-dp" // (ε, δ)-DP
	ZCDP   Notion = "zcdp"      // ρ-zCDP
	ExPost Notion = "ex-post"   // realised ex-post ε (Ligett et al. 2017)
	None   Notion = "none"      // not private
)

// Guarantee is the privacy promise of one release, or of a composition of
// releases. The zero value is not valid; build one with EpsDP, EpsDeltaDP,
// Rho, ExPostEps or NonPrivate.
type Guarantee struct {
	Notion  Notion
	Epsilon float64 // ε (Pure, Approx, ExPost); +Inf for None
	Delta   float64 // δ (Approx); 0 otherwise
	Rho     float64 // ρ (ZCDP); 0 otherwise
	// Covers says what the guarantee protects, in words: the release, the
	// data it touches and the adjacency, e.g. "the model θ̃ of one fit on
	// the training folds T (neighbouring datasets differ in one record)".
	Covers string
}

// EpsDP returns an ε-DP guarantee; ε must be finite and ≥ 0.
func EpsDP(epsilon float64, covers string) Guarantee {
	return Guarantee{Notion: Pure, Epsilon: epsilon, Covers: covers}
}

// EpsDeltaDP returns an (ε, δ)-DP guarantee; ε finite and ≥ 0, δ in [0, 1).
func EpsDeltaDP(epsilon, delta float64, covers string) Guarantee {
	return Guarantee{Notion: Approx, Epsilon: epsilon, Delta: delta, Covers: covers}
}

// Rho returns a ρ-zCDP guarantee; ρ finite and ≥ 0.
func Rho(rho float64, covers string) Guarantee {
	return Guarantee{Notion: ZCDP, Rho: rho, Covers: covers}
}

// ExPostEps returns a realised ex-post ε guarantee.
func ExPostEps(epsilon float64, covers string) Guarantee {
	return Guarantee{Notion: ExPost, Epsilon: epsilon, Covers: covers}
}

// NonPrivate returns the guarantee of a step that is not private.
func NonPrivate(covers string) Guarantee {
	return Guarantee{Notion: None, Epsilon: math.Inf(1), Covers: covers}
}

// Private reports whether g is a privacy guarantee at all.
func (g Guarantee) Private() bool { return g.Notion != None && g.Notion != "" }

// Validate returns an error for a guarantee whose parameters are outside
// their domain for its notion (a method's bug, not a user's).
func (g Guarantee) Validate() error {
	bad := func(name string, v float64) error {
		return fmt.Errorf("privacy: %s guarantee with %s = %v", g.Notion, name, v)
	}
	switch g.Notion {
	case Pure, ExPost:
		if !(g.Epsilon >= 0) || math.IsInf(g.Epsilon, 1) {
			return bad("epsilon", g.Epsilon)
		}
	case Approx:
		if !(g.Epsilon >= 0) || math.IsInf(g.Epsilon, 1) {
			return bad("epsilon", g.Epsilon)
		}
		if !(g.Delta >= 0 && g.Delta < 1) {
			return bad("delta", g.Delta)
		}
	case ZCDP:
		if !(g.Rho >= 0) || math.IsInf(g.Rho, 1) {
			return bad("rho", g.Rho)
		}
	case None:
	default:
		return fmt.Errorf("privacy: unknown notion %q", g.Notion)
	}
	return nil
}

// ToApprox returns the (ε, δ)-DP guarantee implied by g at δ: g itself as
// (ε, 0) for pure DP, (ρ + 2√(ρ·ln(1/δ)), δ) for ρ-zCDP (Bun & Steinke,
// Proposition 1.3). Approx and None are returned unchanged. δ must be in
// (0, 1) for zCDP.
func (g Guarantee) ToApprox(delta float64) Guarantee {
	switch g.Notion {
	case Pure:
		return Guarantee{Notion: Approx, Epsilon: g.Epsilon, Covers: g.Covers}
	case ZCDP:
		return Guarantee{Notion: Approx, Epsilon: g.Rho + 2*math.Sqrt(g.Rho*math.Log(1/delta)), Delta: delta, Covers: g.Covers}
	}
	return g
}

// String formats g as "ε=0.5", "(ε=0.5, δ=1e-05)", "ρ=0.125", "ex-post ε=0.3"
// or "not private".
func (g Guarantee) String() string {
	switch g.Notion {
	case Pure:
		return fmt.Sprintf("ε=%g", g.Epsilon)
	case Approx:
		return fmt.Sprintf("(ε=%g, δ=%g)", g.Epsilon, g.Delta)
	case ZCDP:
		return fmt.Sprintf("ρ=%g", g.Rho)
	case ExPost:
		return fmt.Sprintf("ex-post ε=%g", g.Epsilon)
	case None:
		return "not private"
	}
	return "invalid guarantee"
}

// Rule is a composition rule.
type Rule string

// The composition rules.
const (
	// Sequential: releases on the same data; parameters add.
	Sequential Rule = "sequential"
	// Parallel: releases on disjoint parts of the data; the maximum.
	Parallel Rule = "parallel"
)

// ErrMixed is returned when zCDP and (ε, δ) guarantees are composed
// directly.
var ErrMixed = errors.New("privacy: cannot compose zCDP with (ε, δ) guarantees directly; convert with ToApprox")

// Compose returns the guarantee of the releases gs under rule, covering
// covers. With no guarantees it returns ε = 0 (nothing released). Pure
// parts compose with approximate parts as (ε, 0); ex-post parts compose
// like pure ones (Ligett et al. 2017, Theorem 2.5, for sequential use) and
// make the result ex-post.
func Compose(rule Rule, covers string, gs ...Guarantee) (Guarantee, error) {
	out := Guarantee{Notion: Pure, Covers: covers}
	hasZ, hasEps := false, false
	for _, g := range gs {
		if err := g.Validate(); err != nil {
			return Guarantee{}, err
		}
		if !g.Private() {
			return NonPrivate(covers), nil
		}
	}
	for _, g := range gs {
		switch g.Notion {
		case ZCDP:
			hasZ = true
		default:
			hasEps = true
		}
		if hasZ && hasEps {
			return Guarantee{}, ErrMixed
		}
		add := func(a, b float64) float64 {
			if rule == Parallel {
				return math.Max(a, b)
			}
			return a + b
		}
		switch g.Notion {
		case ZCDP:
			out.Notion = ZCDP
			out.Rho = add(out.Rho, g.Rho)
		case Approx:
			if out.Notion != ExPost {
				out.Notion = Approx
			}
			out.Epsilon = add(out.Epsilon, g.Epsilon)
			out.Delta = add(out.Delta, g.Delta)
		case ExPost:
			out.Notion = ExPost
			out.Epsilon = add(out.Epsilon, g.Epsilon)
		case Pure:
			out.Epsilon = add(out.Epsilon, g.Epsilon)
		}
	}
	if out.Notion == ExPost && out.Delta > 0 {
		return Guarantee{}, fmt.Errorf("privacy: composing ex-post ε with δ > 0 is not supported")
	}
	return out, nil
}

// Versus is how a release's claimed guarantee compares with the level it
// was asked for; see [CompareLevel].
type Versus struct {
	// Booked is what an account books for the release: the larger of the
	// claim and the level, ε and δ each. The level is what the protocol
	// spends (it handed the release that much), so a claim below it is
	// booked at the level; a claim above it is booked as claimed. A pure
	// claim keeps δ = 0 (it holds at every δ of the level); an
	// approximate claim's δ is raised to the level's. Booked covers what
	// the claim covers.
	Booked Guarantee
	// Over reports a claim above the level: ε or δ larger than the
	// level's beyond the tolerance.
	Over bool
	// Under reports a claim below the level: ε smaller than the level's
	// beyond the tolerance, or (for an approximate claim, which states a
	// δ of its own) δ smaller than a level's δ > 0.
	Under bool
}

// Differs reports whether the claim differs from the level (over or under
// it).
func (v Versus) Differs() bool { return v.Over || v.Under }

// CompareLevel compares the pure or approximate guarantee claim that a
// release states with the level (ε, δ) it was asked for, up to a relative
// tol (which absorbs the rounding of a method that recomputes its ε, e.g.
// ε/k summed k times). A harness that hands a method a level knows what
// it asked for: a claim above it overspends, and one below it (ε = 0 for a
// private level, ε/100 of the ε asked) is a claim the protocol does not
// keep — the release was handed the level and the accounting of the
// protocol (Chaudhuri & Vinterbo 2013, Theorem 5; Ligett et al. 2017,
// Theorem A.2) charges it — so both are reported and the larger is
// booked (Versus.Booked). The claim must be a valid Pure or Approx
// guarantee and levelEpsilon finite and > 0, levelDelta in [0, 1); it
// panics otherwise (the callers check the notion first).
func CompareLevel(claim Guarantee, levelEpsilon, levelDelta, tol float64) Versus {
	if claim.Notion != Pure && claim.Notion != Approx {
		panic(fmt.Sprintf("privacy: CompareLevel: a %s claim has no (ε, δ) to compare", claim.Notion))
	}
	if !(levelEpsilon > 0) || math.IsInf(levelEpsilon, 1) || !(levelDelta >= 0 && levelDelta < 1) {
		panic(fmt.Sprintf("privacy: CompareLevel: level (ε=%v, δ=%v)", levelEpsilon, levelDelta))
	}
	v := Versus{Booked: claim}
	v.Over = claim.Epsilon > levelEpsilon*(1+tol) || claim.Delta > levelDelta*(1+tol)
	v.Under = claim.Epsilon < levelEpsilon*(1-tol) ||
		claim.Notion == Approx && levelDelta > 0 && claim.Delta < levelDelta*(1-tol)
	if v.Under {
		v.Booked.Epsilon = math.Max(claim.Epsilon, levelEpsilon)
		if claim.Notion == Approx {
			v.Booked.Delta = math.Max(claim.Delta, levelDelta)
		}
	}
	return v
}
