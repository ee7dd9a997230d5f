package kinds_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/kinds"
	"github.com/dprepro/dprepro/results"
)

// TestProduces_MatchesReferenceSummaries: what each built-in kind declares
// its summary holds (experiments.Producer, which the claims' names are
// checked against at load) is exactly the datasets, methods and metrics of
// the committed quick-profile reference summary of every built-in spec —
// so that a claim is never refused for a name the run writes, nor allowed
// one it never writes.
func TestProduces_MatchesReferenceSummaries(t *testing.T) {
	reg := kinds.Registry()
	ids := experiments.BuiltinIDs()
	checked := 0
	for _, id := range ids {
		path := filepath.Join("..", "results", "reference", id, "summary.csv")
		if _, err := os.Stat(path); err != nil {
			continue // no reference (e.g. a spec added since)
		}
		s, err := reg.LoadBuiltin(id, "quick")
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		p, ok := s.Produced()
		if !ok {
			t.Errorf("%s: kind %s declares nothing (experiments.Producer)", id, s.Kind)
			continue
		}
		sum, err := results.ReadSummaryCSV(path)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		var datasets, methods, metrics []string
		for _, r := range sum {
			for _, v := range []struct {
				dst *[]string
				x   string
			}{{&datasets, r.Dataset}, {&methods, r.Method}, {&metrics, r.Metric}} {
				if !slices.Contains(*v.dst, v.x) {
					*v.dst = append(*v.dst, v.x)
				}
			}
		}
		for _, c := range []struct {
			what           string
			declared, held []string
		}{{"datasets", p.Datasets, datasets}, {"methods", p.Methods, methods}, {"metrics", p.Metrics, metrics}} {
			a, b := slices.Sorted(slices.Values(c.declared)), slices.Sorted(slices.Values(c.held))
			if !slices.Equal(a, b) {
				t.Errorf("%s: declared %s %q, the reference summary has %q", id, c.what, a, b)
			}
		}
		checked++
	}
	if checked < 30 {
		t.Errorf("only %d built-in specs have a reference summary", checked)
	}
}
