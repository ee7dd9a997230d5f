package plots

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/results"
)

// TestLedgerNotions reads each method's notion off a ledger: pure, (ε, δ)
// with its δ (one, or the largest), ρ-zCDP with its ρ (one, or the
// range), a zCDP claim booked as (ε, δ), ex-post, not private, a method
// with two notions, a total written before notions were recorded, and
// "declared by the method" for a charge that is its method's word.
func TestLedgerNotions(t *testing.T) {
	t.Parallel()
	f := func(v float64) *results.Float { x := results.Float(v); return &x }
	entry := func(method string, total results.PrivacyGuarantee, cs ...results.LedgerCharge) results.LedgerEntry {
		return results.LedgerEntry{Method: method, Total: total, Components: cs}
	}
	ledger := []results.LedgerEntry{
		entry("pure", results.PrivacyGuarantee{Notion: "pure-dp", Epsilon: 1, Private: true}),
		entry("pure", results.PrivacyGuarantee{Notion: "pure-dp", Epsilon: 2, Private: true}),
		entry("approx", results.PrivacyGuarantee{Notion: "approx-dp", Epsilon: 1, Delta: 0.01, Private: true}),
		entry("deltas", results.PrivacyGuarantee{Notion: "approx-dp", Epsilon: 1, Delta: 1e-6, Private: true}),
		entry("deltas", results.PrivacyGuarantee{Notion: "approx-dp", Epsilon: 1, Delta: 1e-5, Private: true}),
		entry("zcdp", results.PrivacyGuarantee{Notion: "zcdp", Rho: f(0.1875), Private: true}),
		entry("rhos", results.PrivacyGuarantee{Notion: "zcdp", Rho: f(0.005), Private: true}),
		entry("rhos", results.PrivacyGuarantee{Notion: "zcdp", Rho: f(0.5), Private: true}),
		entry("as-approx", results.PrivacyGuarantee{Notion: "approx-dp", Epsilon: 3, Delta: 1e-6, Private: true},
			results.LedgerCharge{Notion: "approx-dp", Epsilon: 3, Delta: 1e-6, Rho: f(0.5), Private: true, DeclaredBy: "as-approx"}),
		entry("expost", results.PrivacyGuarantee{Notion: "ex-post", Epsilon: 0.3, Private: true}),
		entry("control", results.PrivacyGuarantee{Notion: "none", Private: false}),
		entry("mixed", results.PrivacyGuarantee{Notion: "pure-dp", Epsilon: 1, Private: true}),
		entry("mixed", results.PrivacyGuarantee{Notion: "none", Private: false}),
		entry("old", results.PrivacyGuarantee{Epsilon: 1, Delta: 1e-5, Private: true}),
		entry("ext", results.PrivacyGuarantee{Notion: "pure-dp", Epsilon: 1, Private: true},
			results.LedgerCharge{Notion: "pure-dp", Epsilon: 1, Private: true, DeclaredBy: "ext"}),
	}
	audited := entry("audited", results.PrivacyGuarantee{Notion: "pure-dp", Epsilon: 1, Private: true},
		results.LedgerCharge{Notion: "pure-dp", Epsilon: 1, Private: true, DeclaredBy: "audited"})
	audited.Audit = &results.MethodAudit{Method: "audited", Setting: "epsilon=1", EpsilonLower: 1.5312, Verdict: "claim violated", Violated: true}
	ledger = append(ledger, audited)
	want := map[string]string{
		"pure":      "pure ε-DP",
		"approx":    "(ε, δ)-DP, δ = 0.01",
		"deltas":    "(ε, δ)-DP, δ ≤ 1e-05",
		"zcdp":      "ρ-zCDP, ρ = 0.1875",
		"rhos":      "ρ-zCDP, ρ = 0.005–0.5",
		"as-approx": "ρ-zCDP stated as (ε, δ), δ = 1e-06; declared by the method",
		"expost":    "ex-post ε",
		"control":   "not private",
		"mixed":     "pure ε-DP / not private",
		"old":       "(ε, δ)-DP, δ = 1e-05",
		"ext":       "pure ε-DP; declared by the method",
		"audited":   "pure ε-DP; declared by the method; audited at epsilon=1: ε_LB = 1.53, claim violated",
	}
	got := LedgerNotions(ledger)
	if len(got) != len(want) {
		t.Errorf("%d methods, want %d: %v", len(got), len(want), got)
	}
	for m, w := range want {
		if got[m] != w {
			t.Errorf("%s: %q, want %q", m, got[m], w)
		}
	}
}

// TestBuild_NotionsAndMarks: the notions reach the legend ("method —
// notion", every metric of a several-metric figure) or, with
// NotionsByPanel, the panels' titles; the marked points, and only they,
// get a ring, every metric of a marked method at that x, with one legend
// entry for the rings; a figure without marks has neither. A figure with
// both renders.
func TestBuild_NotionsAndMarks(t *testing.T) {
	t.Parallel()
	xs := []float64{0.5, 1, 2}
	rows := append(fakeRows("auc", []string{"adult", "magic"}, []string{"a", "b"}, xs),
		fakeRows("mse", []string{"adult", "magic"}, []string{"a", "b"}, xs)...)
	notions := map[string]string{"a": "pure ε-DP", "b": "(ε, δ)-DP, δ = 0.01; declared by the method"}
	marks := []Mark{{Dataset: "adult", Method: "b", X: 1}, {Dataset: "magic", Method: "b", X: 2}, {Dataset: "magic", Method: "zz", X: 2}}
	spec := FigureSpec{Name: "nm", Metrics: []string{"auc", "mse"}, Notions: notions, Marks: marks, MarkLabel: "over"}
	fig, err := build(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range fig.legend {
		names = append(names, e.name)
	}
	wantNames := []string{"a: auc — pure ε-DP", "a: mse — pure ε-DP",
		"b: auc — (ε, δ)-DP, δ = 0.01; declared by the method", "b: mse — (ε, δ)-DP, δ = 0.01; declared by the method", "over"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("legend %q\nwant %q", names, wantNames)
	}
	for pi, pd := range fig.data.Panels {
		for si, s := range pd.Series {
			var ringed []float64
			for _, p := range s.Points {
				if p.Marked {
					ringed = append(ringed, p.X)
				}
			}
			var want []float64
			if strings.HasPrefix(s.Method, "b:") {
				want = map[string][]float64{"adult": {1}, "magic": {2}}[pd.Dataset]
			}
			if !slices.Equal(ringed, want) {
				t.Errorf("panel %s, %s: marked x %v, want %v", pd.Dataset, s.Method, ringed, want)
			}
			sp := fig.parts[pi][si]
			if (sp.Marks != nil) != (len(want) > 0) || sp.Marks != nil && sp.Marks.Len() != len(want) {
				t.Errorf("panel %s, %s: rings %v", pd.Dataset, s.Method, sp.Marks)
			}
		}
	}

	// By panel: the notion goes to the title, not the legend.
	byPanel := FigureSpec{Name: "np", Metric: "auc", Notions: map[string]string{"adult": "ρ-zCDP, ρ = 0.5"}, NotionsByPanel: true}
	fig, err = build(byPanel, rows)
	if err != nil {
		t.Fatal(err)
	}
	if got := fig.panels[0].Title.Text; got != "adult — ρ-zCDP, ρ = 0.5" {
		t.Errorf("panel title %q", got)
	}
	if got := fig.panels[1].Title.Text; got != "magic" {
		t.Errorf("panel title %q", got)
	}
	for _, e := range fig.legend {
		if strings.Contains(e.name, "—") {
			t.Errorf("legend entry %q carries a notion", e.name)
		}
	}
	// No marks: no rings, no legend entry for them.
	fig, err = build(FigureSpec{Name: "plain", Metric: "auc"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range fig.parts {
		for _, sp := range ps {
			if sp.Marks != nil {
				t.Error("rings without marks")
			}
		}
	}
	if len(fig.legend) != 2 {
		t.Errorf("legend %+v, want the two methods", fig.legend)
	}

	dir := t.TempDir()
	spec.Caption = Caption{Profile: "quick"}
	if err := Render(dir, spec, rows); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "nm.svg")); err != nil || !strings.Contains(string(b), "declared by the method") {
		t.Errorf("svg: %v; want the legend's notions in it", err)
	}
}
