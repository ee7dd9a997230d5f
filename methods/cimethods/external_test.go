package cimethods

import (
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/external"
)

// TestExternal_Attributes checks how a hello's attributes describe an
// external method (see External): the model and the budget parts it
// spends are required, the perturbation defaults to "external", and any
// other key or a bad value is refused with a message naming it. Calls to
// a worker, through the kind, are tested in kinds/cicoverage.
func TestExternal_Attributes(t *testing.T) {
	spendsAll := []any{"eps1", "eps2", "eps3"}
	cases := []struct {
		name       string
		attrs      map[string]any
		want       Attributes
		wantSpends []int
		wantErr    []string
	}{
		{name: "minimal", attrs: map[string]any{"model": "lr", "spends": spendsAll},
			want: Attributes{Model: dpci.LR, Perturbation: "external"}, wantSpends: []int{0, 1, 2}},
		{name: "labels", attrs: map[string]any{"model": "svm", "spends": []any{"eps3", "eps1"}, "perturbation": "fake-ext",
			"privacy_label": "P", "perturbation_label": "fake (external)", "model_label": "Huber SVM"},
			want:       Attributes{Model: dpci.SVM, Perturbation: "fake-ext", PrivacyLabel: "P", PerturbationLabel: "fake (external)", ModelLabel: "Huber SVM"},
			wantSpends: []int{0, 2}},
		{name: "no model", attrs: map[string]any{"spends": spendsAll}, wantErr: []string{`attributes.model is required: "lr" or "svm"`}},
		{name: "unknown model", attrs: map[string]any{"model": "ridge", "spends": spendsAll}, wantErr: []string{`attributes.model must be "lr" or "svm" (got "ridge")`}},
		{name: "no spends", attrs: map[string]any{"model": "lr"}, wantErr: []string{"attributes.spends is required"}},
		{name: "empty spends", attrs: map[string]any{"model": "lr", "spends": []any{}}, wantErr: []string{"attributes.spends must be a non-empty list"}},
		{name: "bad part", attrs: map[string]any{"model": "lr", "spends": []any{"eps1", "eps4"}}, wantErr: []string{"attributes.spends: eps4 is not a budget part"}},
		{name: "twice", attrs: map[string]any{"model": "lr", "spends": []any{"eps1", "eps1"}}, wantErr: []string{`attributes.spends: "eps1" listed twice`}},
		{name: "no eps1", attrs: map[string]any{"model": "lr", "spends": []any{"eps2"}}, wantErr: []string{`attributes.spends must include "eps1"`}},
		{name: "unknown key", attrs: map[string]any{"model": "lr", "spends": spendsAll, "colour": "red"}, wantErr: []string{`unknown attribute "colour"`}},
		{name: "label not a string", attrs: map[string]any{"model": "lr", "spends": spendsAll, "model_label": 3.0}, wantErr: []string{"attributes.model_label must be a non-empty string (got 3)"}},
		{name: "errors joined", attrs: map[string]any{"colour": "red"}, wantErr: []string{`unknown attribute "colour"`, "attributes.model is required", "attributes.spends is required"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &External{name: "py-ci"}
			err := m.readAttributes(c.attrs)
			if c.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if m.attrs != c.want || !slices.Equal(m.spends, c.wantSpends) {
					t.Errorf("attributes %+v, spends %v; want %+v, %v", m.attrs, m.spends, c.want, c.wantSpends)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestExternal_Cost checks the cost of an external method's interval: one
// charge per declared budget part, in the declared form (εᵢ-DP under
// "pure", ρᵢ = εᵢ²/2 under "zcdp", Section 7's pairing), composed
// sequentially, each labelled as the method's declaration. The budgets are
// exact in binary, so the sums are compared exactly.
func TestExternal_Cost(t *testing.T) {
	b := Budget{Eps1: 0.5, Eps2: 0.25, Eps3: 0.75}
	cases := []struct {
		form      string
		spends    []int
		parts     []string
		wantTotal privacy.Guarantee
	}{
		{external.FormPure, []int{0, 1, 2}, []string{"training", "hessian", "covariance"}, privacy.Guarantee{Notion: privacy.Pure, Epsilon: 1.5}},
		{external.FormPure, []int{0, 2}, []string{"training", "covariance"}, privacy.Guarantee{Notion: privacy.Pure, Epsilon: 1.25}},
		// ρ = 0.125 + 0.03125 + 0.28125.
		{external.FormZCDP, []int{0, 1, 2}, []string{"training", "hessian", "covariance"}, privacy.Guarantee{Notion: privacy.ZCDP, Rho: 0.4375}},
	}
	for _, c := range cases {
		m := &External{name: "py-ci", form: c.form, spends: c.spends}
		cost := m.Cost(b)
		var parts []string
		for _, ch := range cost.Charges {
			parts = append(parts, ch.Part)
			if !strings.HasPrefix(ch.Guarantee.Covers, "declared by the method py-ci: ") {
				t.Errorf("%s %v: charge covers %q, want the method's declaration", c.form, c.spends, ch.Guarantee.Covers)
			}
		}
		if !slices.Equal(parts, c.parts) {
			t.Errorf("%s %v: parts %v, want %v", c.form, c.spends, parts, c.parts)
		}
		total, err := cost.Total()
		if err != nil {
			t.Fatal(err)
		}
		if total.Notion != c.wantTotal.Notion || total.Epsilon != c.wantTotal.Epsilon || total.Rho != c.wantTotal.Rho || total.Delta != 0 {
			t.Errorf("%s %v: total %v, want %v", c.form, c.spends, total, c.wantTotal)
		}
		if !strings.Contains(cost.Rule, "declared by the method py-ci") || !strings.Contains(cost.Rule, "not checked by the harness") {
			t.Errorf("rule %q", cost.Rule)
		}
	}
}
