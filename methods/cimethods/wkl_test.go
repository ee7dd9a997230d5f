package cimethods

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
)

// TestBuiltins_NamesAndCosts checks the eight built-ins: their names (the
// spec names of before, in the paper's table order), that each is the
// method its parts build, and that their costs are the paper's: Theorem 2
// and Theorem 4 give ε₁ + ε₂ + ε₃ under DP; under zCDP, with Section 7's
// ρᵢ = εᵢ²/2, both give Σεᵢ²/2 (objective perturbation's ε₁-DP run counts
// ε₁²/2, Proposition 1). The budgets are those of Table 2's caption (ε₁ =
// 0.5, ρ₁ = 0.125, ε₂ = ε₃ = 0.25, ρ₂ = ρ₃ = 0.03125), exact in binary, so
// the sums are compared exactly.
func TestBuiltins_NamesAndCosts(t *testing.T) {
	want := []string{"dp-obj-lr", "dp-obj-svm", "dp-output-lr", "dp-output-svm",
		"zcdp-obj-lr", "zcdp-obj-svm", "zcdp-output-lr", "zcdp-output-svm"}
	if got := Names()[:8]; !slices.Equal(got, want) {
		t.Fatalf("built-in names %v, want %v", got, want)
	}
	b := Budget{Eps1: 0.5, Eps2: 0.25, Eps3: 0.25}
	i := 0
	for _, priv := range []dpci.Privacy{dpci.DP, dpci.ZCDP} {
		for _, pert := range []Perturbation{ObjPert, OutPert} {
			for _, model := range []dpci.Model{dpci.LR, dpci.SVM} {
				name := want[i]
				i++
				t.Run(name, func(t *testing.T) {
					built, err := NewWKL(priv, pert, model)
					if err != nil {
						t.Fatal(err)
					}
					m, err := Lookup(name)
					if err != nil {
						t.Fatal(err)
					}
					a := m.Attributes()
					if built.Name() != name || a != built.Attributes() || a.Privacy != string(priv) || a.Perturbation != string(pert) || a.Model != model {
						t.Errorf("registered %s %+v, built %s %+v", m.Name(), a, built.Name(), built.Attributes())
					}
					c := m.Cost(b)
					total, err := c.Total()
					if err != nil {
						t.Fatal(err)
					}
					var parts []string
					for _, ch := range c.Charges {
						parts = append(parts, ch.Part)
					}
					if !slices.Equal(parts, []string{"training", "hessian", "covariance"}) {
						t.Errorf("parts %v", parts)
					}
					switch priv {
					case dpci.DP:
						if total.Notion != privacy.Pure || total.Epsilon != 0.5+0.25+0.25 || total.Delta != 0 {
							t.Errorf("total %v, want ε = 1", total)
						}
					case dpci.ZCDP:
						if total.Notion != privacy.ZCDP || total.Rho != 0.125+0.03125+0.03125 {
							t.Errorf("total %v, want ρ = 0.1875", total)
						}
					}
					theorem := map[Perturbation]string{ObjPert: "Theorem 2", OutPert: "Theorem 4"}[pert]
					if !strings.Contains(c.Rule, theorem) {
						t.Errorf("rule %q, want %s", c.Rule, theorem)
					}
				})
			}
		}
	}
	for _, bad := range []struct {
		priv  dpci.Privacy
		pert  Perturbation
		model dpci.Model
	}{{"rdp", ObjPert, dpci.LR}, {dpci.DP, "input", dpci.LR}, {dpci.DP, ObjPert, "ridge"}} {
		if _, err := NewWKL(bad.priv, bad.pert, bad.model); err == nil {
			t.Errorf("NewWKL(%q, %q, %q): no error", bad.priv, bad.pert, bad.model)
		}
	}
	if _, err := Lookup("dp-obj-ridge"); err == nil || !strings.Contains(err.Error(), "known: dp-obj-lr") {
		t.Errorf("Lookup of an unknown name: %v", err)
	}
}

// TestWKL_ZCDPParams pins the conversion ρ = ε²/2 of Wang, Kifer & Lee's
// Section 7 ("we set ρ = ε²/2") in the parameters the zCDP methods hand to
// dpci: at the budget (ε₁, ε₂, ε₃) = (0.5, 0.25, 0.25) every zCDP method
// calls dpci with ϕ₂ = ε₂²/2, ϕ₃ = ε₃²/2, and output perturbation with
// ϕ₁ = ε₁²/2 (objective perturbation runs Algorithm 1 at ε₁ itself); the
// DP methods with ϕᵢ = εᵢ. (The noise drawn at those parameters is checked
// through the kind, kinds/cicoverage TestZCDP_RhoIsHalfEpsilonSquared.)
func TestWKL_ZCDPParams(t *testing.T) {
	b := Budget{Eps1: 0.5, Eps2: 0.25, Eps3: 0.25}
	reg := builtinRegistry()
	for _, name := range Names()[:8] {
		m, _ := reg.Lookup(name)
		var p dpci.Params
		var obj bool
		switch m := m.(type) {
		case objPert:
			p, obj = m.params(b, Problem{}), true
		case outPert:
			p = m.params(b, Problem{})
		default:
			t.Fatalf("%s: unexpected type %T", name, m)
		}
		want := [3]float64{b.Eps1, b.Eps2, b.Eps3}
		if p.Privacy == dpci.ZCDP {
			for i, e := range want {
				want[i] = e * e / 2
			}
		}
		got := [3]float64{p.Phi1, p.Phi2, p.Phi3}
		if obj {
			got[0], want[0] = b.Eps1, b.Eps1 // Algorithm 1 is run at ε₁ (objPert.fit)
		}
		if got != want {
			t.Errorf("%s: ϕ = %v, want %v", name, got, want)
		}
	}
}

// TestMechanisms checks the mechanisms a manifest lists per method: the
// built-ins' own (Algorithms 1, 4 and 2 of Wang, Kifer & Lee 2019, by
// privacy notion), and any other method's as declared.
func TestMechanisms(t *testing.T) {
	cases := []struct {
		name string
		want []string
	}{
		{"dp-obj-lr", []string{"objective-perturbation-wkl", "privspdmat-dp"}},
		{"zcdp-obj-svm", []string{"objective-perturbation-wkl", "privspdmat-zcdp"}},
		{"dp-output-svm", []string{"output-perturbation-wkl-dp", "privspdmat-dp"}},
		{"zcdp-output-lr", []string{"output-perturbation-wkl-zcdp", "privspdmat-zcdp"}},
	}
	for _, c := range cases {
		m, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := Mechanisms(m); !slices.Equal(got, c.want) {
			t.Errorf("Mechanisms(%s) = %v, want %v", c.name, got, c.want)
		}
	}
	if got, want := Mechanisms(stub{name: "mine"}), []string{mech.Declared("mine")}; !slices.Equal(got, want) {
		t.Errorf("Mechanisms of another method = %v, want %v", got, want)
	}
}

// TestOutPert_SharedMatricesFollowTheta: the points of an ε₂ or ε₃ sweep
// share a replicate's Shared. Seeded, their streams replay and give one θ̃,
// whose exact matrices are computed once; with secure noise every stream
// is fresh and each point draws its own θ̃, whose interval must then be
// computed at its own θ̃ — exactly what a replicate with a Shared of its
// own gives. Simulated here with a Streams that seeds each call afresh.
func TestOutPert_SharedMatricesFollowTheta(t *testing.T) {
	rows := testRows(t)
	for _, name := range []string{"dp-output-lr", "zcdp-output-lr", "dp-output-svm"} {
		m, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		calls := uint64(0)
		fresh := func(step string) *rand.Rand { calls++; return rand.New(rand.NewPCG(calls, 99)) }
		prob := Problem{C: 0.001, H: 1, Alpha: 0.05, MCSamples: 200}
		b1 := Budget{Eps1: 0.5, Eps2: 0.2, Eps3: 0.25}
		b2 := Budget{Eps1: 0.5, Eps2: 0.9, Eps3: 0.25}
		shared := new(Shared)
		d := Data{Rows: rows, Problem: prob, Streams: fresh, Shared: shared}
		if _, err := m.Interval(context.Background(), d, b1); err != nil {
			t.Fatal(err)
		}
		at := calls
		got, err := m.Interval(context.Background(), d, b2) // stream #at+1, θ̃ of its own
		if err != nil {
			t.Fatal(err)
		}
		calls = at // replay stream #at+1 with a Shared of its own
		d.Shared = new(Shared)
		want, err := m.Interval(context.Background(), d, b2)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Theta, want.Theta) || !slices.Equal(got.Interval.Lo, want.Interval.Lo) || !slices.Equal(got.Interval.Hi, want.Interval.Hi) {
			t.Errorf("%s: the second point's interval with the first point's Shared differs from its own (matrices at another θ̃)", name)
		}
	}
}

// testRows returns 400 rows in the unit ball (3 features and the
// constant, scaled by the largest norm) with planted logistic ±1 labels.
func testRows(t *testing.T) *erm.Rows {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	const n, d = 400, 4
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	maxNorm := 0.0
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for j := 0; j < d-1; j++ {
			row[j] = rng.NormFloat64()
		}
		row[d-1] = 1
		maxNorm = math.Max(maxNorm, floats.Norm(row, 2))
		y[i] = -1
		if rng.Float64() < 1/(1+math.Exp(-(row[0]-0.5*row[1]))) {
			y[i] = 1
		}
	}
	x.Scale(1/maxNorm, x)
	return erm.NewRows(x, y, nil)
}
