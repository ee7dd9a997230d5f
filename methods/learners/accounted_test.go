package learners

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/accountant"
	"github.com/dprepro/dprepro/core/privacy"
)

// TestAccount: the guarantee the harness computes for a declared mechanism
// is the accountant's (ε, δ) at that δ, says so in what it covers, and
// refuses a δ outside (0, 1); ParseMechanism refuses every malformed
// declaration, naming what is wrong.
func TestAccount(t *testing.T) {
	m, err := ParseMechanism(json.RawMessage(`{"name": "subsampled-gaussian", "noise_multiplier": 1.1, "sampling_rate": 0.0042666, "steps": 14063}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Account(m, 1e-5, "one fit")
	if err != nil {
		t.Fatal(err)
	}
	eps, _, err := accountant.SampledGaussian{Sigma: 1.1, Q: 0.0042666, Steps: 14063}.Epsilon(1e-5)
	if err != nil {
		t.Fatal(err)
	}
	// Abadi et al.'s MNIST setting (60 epochs of batch 256 of 60,000):
	// the tight conversion's ε is about 2.6 (core/accountant's published
	// values: 3.01 with the classic one).
	if g.Notion != privacy.Approx || g.Epsilon != eps || g.Delta != 1e-5 || !(eps > 2 && eps < 3.1) ||
		!strings.HasPrefix(g.Covers, "computed by the harness (RDP accountant") || !strings.HasSuffix(g.Covers, ": one fit") {
		t.Errorf("Account: %+v, want (%v, 1e-05) computed by the harness", g, eps)
	}
	for _, d := range []float64{0, 1, -1} {
		if _, err := Account(m, d, ""); err == nil || !strings.Contains(err.Error(), "has an ε only at a δ in (0, 1)") {
			t.Errorf("δ = %v: %v", d, err)
		}
	}
	for raw, want := range map[string]string{
		`{"noise_multiplier": 1, "sampling_rate": 0.1, "steps": 10}`:                                           `"name" is required`,
		`{"name": "laplace", "noise_multiplier": 1, "sampling_rate": 0.1, "steps": 10}`:                        `unknown mechanism "laplace"`,
		`{"name": "subsampled-gaussian", "sampling_rate": 0.1, "steps": 10}`:                                   `"noise_multiplier", "sampling_rate" and "steps" are required`,
		`{"name": "subsampled-gaussian", "noise_multiplier": 1, "sampling_rate": 0.1, "steps": 2.5}`:           `"steps" must be a whole number`,
		`{"name": "subsampled-gaussian", "noise_multiplier": 1, "sampling_rate": 0.1, "steps": 0}`:             `"steps" must be a whole number`,
		`{"name": "subsampled-gaussian", "noise_multiplier": 0, "sampling_rate": 0.1, "steps": 10}`:            `privacy.mechanism: accountant: invalid parameter`,
		`{"name": "subsampled-gaussian", "noise_multiplier": 1, "sampling_rate": 1.5, "steps": 10}`:            `privacy.mechanism: accountant: invalid parameter`,
		`{"name": "subsampled-gaussian", "noise_multiplier": 1, "sampling_rate": 0.1, "steps": 10, "clip": 1}`: `unknown field "clip"`,
		`[1, 2]`: `privacy.mechanism:`,
	} {
		if _, err := ParseMechanism(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}
