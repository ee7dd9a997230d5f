package cicoverage

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/methods/cimethods"
)

// TestObjPert_IntervalIsAlgorithm3 checks that the built-in objective
// perturbations release, bit for bit, Algorithm 3 composed from dpci's
// parts on the same streams: θ̃ by ObjPertFit ("obj-fit", at ε₁), then H̃
// and Σ̃ by PrivMatrices at θ̃ and the Monte Carlo intervals (the method's
// "<privacy>-obj-ci" stream). The zCDP method runs first on the
// replicate, so the DP one takes the exact matrices it shared (computed
// once at θ̃ for both: dpci.ExactMatrices), which must be those at θ̃.
func TestObjPert_IntervalIsAlgorithm3(t *testing.T) {
	e, err := newWith(t, "zcdp-obj-lr", "dp-obj-lr")
	if err != nil {
		t.Fatal(err)
	}
	pt := e.points[0]
	rows := newResampler(pt.data, false).draw(randx.New(3, "alg3", "resample"))
	stream := func(step string) *rand.Rand { return randx.New(3, "alg3", step) }
	d := cimethods.Data{Rows: rows, Problem: e.problem(erm.FitOptions{Init: pt.theta0[dpci.LR]}), Shared: new(cimethods.Shared), Streams: streams(stream)}
	b := cimethods.Budget{Eps1: 0.5, Eps2: 0.25, Eps3: 0.25}
	for _, c := range []struct {
		name    string
		privacy dpci.Privacy
		phi     func(float64) float64
	}{
		{"zcdp-obj-lr", dpci.ZCDP, func(e float64) float64 { return e * e / 2 }},
		{"dp-obj-lr", dpci.DP, func(e float64) float64 { return e }},
	} {
		m, err := cimethods.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := m.Interval(context.Background(), d, b)
		if err != nil {
			t.Fatal(err)
		}
		pr := d.Problem
		p := dpci.Params{Model: dpci.LR, H: pr.H, C: pr.C, Privacy: c.privacy, Alpha: pr.Alpha, M: pr.MCSamples,
			Phi1: b.Eps1, Phi2: c.phi(b.Eps2), Phi3: c.phi(b.Eps3), SigmaFloor: pr.SigmaFloor, Fit: pr.Fit}
		res, ep, err := dpci.ObjPertFit(stream("obj-fit"), rows, p)
		if err != nil {
			t.Fatal(err)
		}
		rng := stream(string(c.privacy) + "-obj-ci")
		h, sigma, err := dpci.PrivMatrices(rng, rows, p, res.W)
		if err != nil {
			t.Fatal(err)
		}
		want, err := dpci.ObjPertCI(context.Background(), rng, res.W, h, sigma, rows.SumWeights(), ep, p.Alpha, p.M)
		if err != nil {
			t.Fatal(err)
		}
		for j := range want.Lo {
			if math.Float64bits(rel.Interval.Lo[j]) != math.Float64bits(want.Lo[j]) || math.Float64bits(rel.Interval.Hi[j]) != math.Float64bits(want.Hi[j]) {
				t.Errorf("%s: coordinate %d: released [%v, %v], Algorithm 3 from dpci's parts [%v, %v]", c.name, j, rel.Interval.Lo[j], rel.Interval.Hi[j], want.Lo[j], want.Hi[j])
			}
		}
	}
}
