package plots

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dprepro/dprepro/results"
)

// LedgerNotions returns, for each method of a privacy ledger (the ledger
// entries of one run, or of several concatenated), what FigureSpec.Notions
// says about its curve: the notion of its totals, in the ledger's order of
// first appearance when a method has several —
//
//	pure ε-DP
//	(ε, δ)-DP, δ = 0.01            δ ≤ 0.01 when the entries differ
//	ρ-zCDP, ρ = 0.1875             ρ = 0.0025–0.5 when they differ
//	ρ-zCDP stated as (ε, δ), δ = 1e-06   a zCDP claim booked as (ε, δ)
//	ex-post ε
//	not private
//
// joined by " / ", then "; declared by the method" when a charge of the
// method is its own word (results.LedgerCharge.DeclaredBy), and what an
// empirical audit of the method found (results.LedgerEntry.Audit:
// "audited at epsilon=1: ε_LB = 1.53, claim violated"). A total
// written before notions were recorded is read by its δ (> 0: (ε, δ)).
func LedgerNotions(ledger []results.LedgerEntry) map[string]string {
	type agg struct {
		order    []string // notion kinds, in order of first appearance
		deltas   []float64
		rhos     []float64
		fromRho  bool
		declared bool
		audits   []string // what the ledger's audits of the method found
	}
	per := map[string]*agg{}
	var methods []string
	for _, e := range ledger {
		a := per[e.Method]
		if a == nil {
			a = &agg{}
			per[e.Method] = a
			methods = append(methods, e.Method)
		}
		t := e.Total
		kind := t.Notion
		switch {
		case !t.Private || kind == "none":
			kind = "none"
		case kind == "zcdp" || kind == "" && t.Rho != nil:
			kind = "zcdp"
			if t.Rho != nil {
				a.rhos = append(a.rhos, float64(*t.Rho))
			}
		case kind == "approx-dp" || kind == "" && float64(t.Delta) > 0:
			kind = "approx-dp"
			a.deltas = append(a.deltas, float64(t.Delta))
		case kind == "":
			kind = "pure-dp"
		}
		if au := e.Audit; au != nil {
			a.audits = append(a.audits, fmt.Sprintf("audited at %s: ε_LB = %.3g, %s", au.Setting, float64(au.EpsilonLower), au.Verdict))
		}
		for _, c := range e.Components {
			a.declared = a.declared || c.DeclaredBy != ""
			if kind == "approx-dp" && c.Rho != nil {
				a.fromRho = true
			}
		}
		if !slices.Contains(a.order, kind) {
			a.order = append(a.order, kind)
		}
	}
	out := make(map[string]string, len(methods))
	for _, m := range methods {
		a := per[m]
		var parts []string
		for _, kind := range a.order {
			switch kind {
			case "pure-dp":
				parts = append(parts, "pure ε-DP")
			case "approx-dp":
				what := "(ε, δ)-DP"
				if a.fromRho {
					what = "ρ-zCDP stated as (ε, δ)"
				}
				parts = append(parts, what+", δ "+spread(a.deltas, "≤"))
			case "zcdp":
				if len(a.rhos) == 0 {
					parts = append(parts, "ρ-zCDP")
					continue
				}
				parts = append(parts, "ρ-zCDP, ρ "+spread(a.rhos, "–"))
			case "ex-post":
				parts = append(parts, "ex-post ε")
			case "none":
				parts = append(parts, "not private")
			default:
				parts = append(parts, kind)
			}
		}
		s := strings.Join(parts, " / ")
		if a.declared {
			s += "; declared by the method"
		}
		for _, au := range a.audits {
			s += "; " + au
		}
		out[m] = s
	}
	return out
}

// spread formats values as "= v" when they are all equal, else as
// "≤ max" (sep "≤") or "= min–max" (sep "–"), to 4 significant digits.
func spread(values []float64, sep string) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	switch {
	case len(values) == 0:
		return "= ?"
	case g(lo) == g(hi):
		return "= " + g(lo)
	case sep == "≤":
		return "≤ " + g(hi)
	}
	return fmt.Sprintf("= %s%s%s", g(lo), sep, g(hi))
}
