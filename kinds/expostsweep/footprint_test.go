package expostsweep

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/generators"
)

// oldWorkloadTerms are the two noise-reduction memory terms as the kind
// computed them by switching on the generator's name (section.go at commit
// 9b69159): "covariance" had 2 chains over d² + d coordinates, any other
// name 1 chain over d. The estimate of the built-in generators must not
// move.
func oldWorkloadTerms(s *experiments.Spec, a *AccuracyFirstSpec) (steps, coords float64) {
	cov := a.Generator == "covariance"
	var c float64
	for _, name := range s.Data.Datasets {
		_, _, p := s.DataTerm(name)
		x := p
		if cov {
			x = p*p + p
		}
		c = math.Max(c, x)
	}
	perLevel := 60.0
	if cov {
		perLevel = 120
	}
	T := experiments.Pos(a.Steps)
	return T * perLevel, c * (1 + math.Min(T-1, 64)) * 24
}

// nrTerms returns the bytes of the workload's noise-reduction terms: the
// steps term and the coordinates term.
func nrTerms(t *testing.T, w experiments.Workload) (steps, coords float64) {
	t.Helper()
	for _, term := range w.Terms {
		switch {
		case term.Key == "accuracy_first.steps":
			steps = term.Bytes
		case strings.Contains(term.Formula, "noise-reduction coordinates"):
			coords = term.Bytes
		}
	}
	return steps, coords
}

// TestWorkload_BuiltinFootprints: the built-in specs' memory estimate,
// now from the generators' Footprint, is the one the name switch gave.
func TestWorkload_BuiltinFootprints(t *testing.T) {
	for _, id := range []string{"af17-twitter-ridge", "af17-twitter-ridge-paper", "af17-kdd-logistic", "af17-kdd-logistic-paper"} {
		for _, profile := range []string{"paper", "quick"} {
			s, err := experiments.Load("../../experiments/"+id+".toml", profile, testKinds)
			if err != nil {
				t.Fatal(err)
			}
			sec := s.Section.(*Section)
			gotSteps, gotCoords := nrTerms(t, sec.Workload(s))
			wantSteps, wantCoords := oldWorkloadTerms(s, &sec.AccuracyFirst)
			if gotSteps != wantSteps || gotCoords != wantCoords {
				t.Errorf("%s/%s: noise-reduction terms %v, %v bytes; the name switch gave %v, %v", id, profile, gotSteps, gotCoords, wantSteps, wantCoords)
			}
		}
	}
}

// footprintGen is plainGen stating a footprint of its own.
type footprintGen struct {
	plainGen
	fp accfirst.Footprint
}

func (g footprintGen) Footprint(accfirst.Task, float64) accfirst.Footprint { return g.fp }

// TestWorkload_GeneratorFootprint: a registered generator's own Footprint
// drives the estimate; one that states none is estimated as covariance
// perturbation (the largest built-in), never as a name it does not have.
func TestWorkload_GeneratorFootprint(t *testing.T) {
	small := footprintGen{plainGen{"fp-small"}, accfirst.Footprint{Chains: 3, Coordinates: 7}}
	silent := plainGen{"fp-silent"}
	for _, g := range []accfirst.Generator{small, silent} {
		if err := generators.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	s, err := experiments.Parse("tiny.toml", []byte(strings.Replace(tinySpec, "CAL", "paper", 1)), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	a := &s.Section.(*Section).AccuracyFirst
	_, _, p := s.DataTerm("magic")
	T := experiments.Pos(a.Steps)
	events := 1 + math.Min(T-1, 64)
	for _, c := range []struct {
		gen           string
		chains        float64
		coords        float64
		formulaChains string
	}{
		{"fp-small", 3, 7, "chains"},
		{"fp-silent", 2, p*p + p, "chains"},
		{"output", 1, p, "chain "},
		{"no-such-generator", 2, p*p + p, "chains"}, // a spec that did not validate
	} {
		t.Run(c.gen, func(t *testing.T) {
			a.Generator = c.gen
			w := s.Section.Workload(s)
			steps, coords := nrTerms(t, w)
			if steps != T*60*c.chains || coords != c.coords*events*24 {
				t.Errorf("terms %v, %v bytes; want %v, %v", steps, coords, T*60*c.chains, c.coords*events*24)
			}
			if !slices.ContainsFunc(w.Terms, func(m experiments.MemTerm) bool {
				return strings.Contains(m.Formula, "noise-reduction "+c.formulaChains)
			}) {
				t.Errorf("no term says %q: %+v", "noise-reduction "+c.formulaChains, w.Terms)
			}
		})
	}
	// Without noise reduction the sequence is never drawn: no steps term.
	a.Generator, a.Methods = "fp-silent", []string{"doubling"}
	if steps, coords := nrTerms(t, s.Section.Workload(s)); steps != 0 || coords != 0 {
		t.Errorf("doubling only: noise-reduction terms %v, %v", steps, coords)
	}
}

// TestFigures_FromRoles: the panels of Figures 1–4 are laid out from the
// methods' figure roles, in legend order whatever the spec's order, as the
// name lists laid them out.
func TestFigures_FromRoles(t *testing.T) {
	figMethods := func(e *Experiment) map[string]string {
		out := map[string]string{}
		for _, f := range e.Figures() {
			out[f.Name] = strings.Join(f.Methods, ",")
		}
		return out
	}
	for _, c := range []struct {
		name    string
		methods []string
		want    map[string]string
	}{
		{"paper order", []string{"noise-reduction", "doubling", "theory", "theory-output"}, map[string]string{
			"fig1-expost":             "noise-reduction,doubling,theory,theory-output",
			"fig2-accuracy":           "noise-reduction,doubling",
			"fig3b-privacy-breakdown": "noise-reduction,doubling",
			"fig4b-norms":             "noise-reduction,doubling",
			"risk-factor-b":           "noise-reduction,doubling",
		}},
		{"reversed", []string{"theory-output", "theory", "doubling", "noise-reduction"}, map[string]string{
			"fig1-expost":             "noise-reduction,doubling,theory,theory-output",
			"fig2-accuracy":           "noise-reduction,doubling",
			"fig3b-privacy-breakdown": "noise-reduction,doubling",
			"fig4b-norms":             "noise-reduction,doubling",
			"risk-factor-b":           "noise-reduction,doubling",
		}},
		{"theory alone", []string{"theory"}, map[string]string{}},
		{"doubling alone", []string{"doubling"}, map[string]string{
			"fig1-expost":             "doubling",
			"fig2-accuracy":           "doubling",
			"fig3b-privacy-breakdown": "doubling",
			"fig4b-norms":             "doubling",
			"risk-factor-b":           "doubling",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := loadWith(t, "paper", "output", c.methods...)
			if err != nil {
				t.Fatal(err)
			}
			if got := figMethods(e); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("figures\n%v\nwant\n%v", got, c.want)
			}
		})
	}
}
