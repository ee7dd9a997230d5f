package cicoverage

import (
	"math"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/runner"
)

// TestUnitCost_HandWorked checks the estimate of runner.UnitCoster on the
// small spec's units against the formula worked by hand (n = 1500; the
// lr units compute dp-obj-lr and zcdp-obj-lr, which share one fit; the
// svm units dp- and zcdp-output-svm, which share θ̂), and that it orders
// the units as their work does: more features, more work; a VI unit of
// 40 fits above a coverage block of 4 replicates.
func TestUnitCost_HandWorked(t *testing.T) {
	t.Parallel()
	e := load(t, smallSpec)
	var c runner.UnitCoster = e
	cost := map[string]float64{}
	for _, u := range e.Units() {
		cost[u.Key()] = c.UnitCost(u)
	}
	// r: the distinct rows of each point's sample (the fits run over
	// those); points are d = 1, then d = 3.
	r1, r3 := float64(e.points[0].data.base.N()), float64(e.points[1].data.base.N())
	if e.points[0].d != 1 || e.points[1].d != 3 || r1 > 1500 || r3 > 1500 || r1 < 1 {
		t.Fatalf("points: d %d, %d; distinct rows %v, %v", e.points[0].d, e.points[1].d, r1, r3)
	}
	// VI, d = 1 (D = 2), logistic (ℓ = 20), one fit shared by the obj
	// methods: vi_fits · (10·n + r·D + 3·r·(2D + ℓ)).
	if got, want := cost["adult/vi/n=1500,d=1/lr"], 40*(10*1500+r1*2+3*r1*24); got != want {
		t.Errorf("VI d=1 lr: %v, want %v", got, want)
	}
	// Coverage block of 4 replicates, d = 3 (D = 4), Huber (ℓ = 2),
	// m = 200, 2 methods sharing θ̂: 4 · (10·n + r·D + 3·r·(2D + ℓ) + 2 ·
	// (2·r·(D² + ℓ) + m·(20·D + D² + D·log₂ 201))).
	m := 200.0
	want := 4 * (10*1500 + r3*4 + 3*r3*10 + 2*(2*r3*18+m*(80+16+4*math.Log2(201))))
	if got := cost["adult/d=3/svm/ci/rep=1-4"]; math.Abs(got-want) > 1e-9*want {
		t.Errorf("coverage d=3 svm rep 1-4: %v, want %v", got, want)
	}
	// The last block holds 2 replicates: half the first's.
	if a, b := cost["adult/d=3/svm/ci/rep=1-4"], cost["adult/d=3/svm/ci/rep=5-6"]; math.Abs(a-2*b) > 1e-9*a {
		t.Errorf("blocks of 4 and 2 replicates: %v and %v, want a ratio of 2", a, b)
	}
	if cost["adult/vi/n=1500,d=3/lr"] <= cost["adult/vi/n=1500,d=1/lr"] {
		t.Error("VI: d = 3 not above d = 1")
	}
	if cost["adult/vi/n=1500,d=1/lr"] <= cost["adult/d=1/lr/ci/rep=1-4"] {
		t.Error("VI of 40 fits not above a coverage block of 4 replicates")
	}
	for k, v := range cost {
		if !(v > 0) {
			t.Errorf("unit %s: cost %v, want > 0", k, v)
		}
	}
}

// TestUnitCost_EpsOneSweep checks the VI estimate of an ε₁ sweep, whose one
// VI unit per model fits each replicate at every ε₁ (runVI): Algorithm 1
// once per ε₁ (shared by dp- and zcdp-obj-lr), output perturbation's θ̂
// once for all of them.
func TestUnitCost_EpsOneSweep(t *testing.T) {
	t.Parallel()
	src := strings.Replace(smallSpec, `methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-svm", "zcdp-output-svm"]`,
		`methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-lr", "zcdp-output-lr", "dp-output-svm"]`, 1)
	src = strings.Replace(src, "sweep = \"d\"\nvalues = [1, 3]", "d1 = 1\nsweep = \"eps1\"\nvalues = [0.5, 1, 2]", 1)
	e := load(t, src)
	var c runner.UnitCoster = e
	cost := map[string]float64{}
	for _, u := range e.Units() {
		cost[u.Key()] = c.UnitCost(u)
	}
	r := float64(e.points[0].data.base.N())
	// lr: 3 Algorithm 1 fits and one θ̂ per replicate, D = 2, ℓ = 20.
	if got, want := cost["adult/vi/n=1500,d=1/lr"], 40*(10*1500+r*2+(3+1)*3*r*24); got != want {
		t.Errorf("VI lr: %v, want %v", got, want)
	}
	// svm: one θ̂ per replicate whatever the ε₁ (ℓ = 2).
	if got, want := cost["adult/vi/n=1500,d=1/svm"], 40*(10*1500+r*2+3*r*6); got != want {
		t.Errorf("VI svm: %v, want %v", got, want)
	}
	var vi int
	for k := range cost {
		if strings.Contains(k, "/vi/") {
			vi++
		}
	}
	if vi != 2 {
		t.Errorf("%d VI units, want one per model: %v", vi, cost)
	}
}

// TestUnitCost_EpsSweepCoverage checks the estimate of the coverage units
// of ε sweeps, one per model and block serving every value (runCI): in an
// ε₂ sweep the replicate, θ̃ (one Algorithm 1 fit) and the exact matrices
// once, the intervals per value; in an ε₁ sweep Algorithm 1 and the exact
// matrices per ε₁, output perturbation's θ̂ once.
func TestUnitCost_EpsSweepCoverage(t *testing.T) {
	t.Parallel()
	src := strings.Replace(smallSpec, `methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-svm", "zcdp-output-svm"]`,
		`methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-lr"]`, 1)
	m := 200.0
	interval := m * (20*2 + 4 + 2*math.Log2(201)) // D = 2
	for _, c := range []struct {
		sweep string
		E     float64 // the distinct ε₁
	}{{"eps2", 1}, {"eps1", 3}} {
		e := load(t, strings.Replace(src, "sweep = \"d\"\nvalues = [1, 3]", "d1 = 1\nsweep = \""+c.sweep+"\"\nvalues = [0.5, 1, 2]", 1))
		var coster runner.UnitCoster = e
		units := 0
		for _, u := range e.Units() {
			if e.byKey[u.Key()].vi {
				continue
			}
			units++
			if u.Key() != "adult/n=1500,d=1/lr/ci/rep=1-4" {
				continue
			}
			r := float64(e.points[0].data.base.N())
			// 4 · (10·n + r·D + (E + 1)·3·r·(2D + ℓ) + 3 methods · (E·2·r·(D² + ℓ) + 3 values · interval)), ℓ = 20.
			want := 4 * (10*1500 + r*2 + (c.E+1)*3*r*24 + 3*(c.E*2*r*24+3*interval))
			if got := coster.UnitCost(u); math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s: coverage unit: %v, want %v", c.sweep, got, want)
			}
		}
		if units != 2 {
			t.Errorf("%s: %d coverage units, want 2 (one per block of the lr model)", c.sweep, units)
		}
	}
}
