package learners

import (
	"encoding/json"
	"fmt"
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
	sg := accountant.SampledGaussian{Sigma: 1.1, Q: 0.0042666, Steps: 14063}
	rdp, order, err := sg.Epsilon(1e-5)
	if err != nil {
		t.Fatal(err)
	}
	pld, err := sg.EpsilonPLD(1e-5, accountant.PLDOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Abadi et al.'s MNIST setting (60 epochs of batch 256 of 60,000):
	// the RDP accountant's tight conversion gives about 2.6
	// (core/accountant's published values: 3.01 with the classic one), the
	// PLD accountant about 2.39; the smaller is booked, and the text names
	// both.
	wantText := fmt.Sprintf("computed by the harness (PLD accountant, h=0.000967; RDP accountant gives %.4g at order %v) for the declared subsampled Gaussian σ=1.1, q=0.0042666, T=14063: one fit", rdp, order)
	if g.Notion != privacy.Approx || g.Epsilon != pld || g.Delta != 1e-5 || !(pld > 2.3 && pld < 2.45) || !(rdp > 2.5 && rdp < 2.7) || g.Covers != wantText {
		t.Errorf("Account: %+v,\nwant (%v, 1e-05) %q", g, pld, wantText)
	}
	// Cached: the same value again.
	if g2, err := Account(m, 1e-5, "one fit"); err != nil || g2 != g {
		t.Errorf("Account again: %+v, %v", g2, err)
	}
	// At a δ below the PLD accountant's round-off budget (~2e-8 here) its
	// ε is +Inf, and the RDP one is booked, saying so.
	g, err = Account(m, 1e-10, "one fit")
	if err != nil {
		t.Fatal(err)
	}
	rdp, order, _ = sg.Epsilon(1e-10)
	if g.Epsilon != rdp || !strings.HasPrefix(g.Covers, fmt.Sprintf("computed by the harness (RDP accountant, order %v; PLD accountant gives +Inf)", order)) {
		t.Errorf("Account at δ=1e-10: %+v, want the RDP ε %v", g, rdp)
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
