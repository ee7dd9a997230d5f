package report

import (
	"math"
	"testing"

	"github.com/dprepro/dprepro/results"
)

// TestChargeText: a ledger charge reads as its notion says — a zCDP
// claim booked as (ε, δ) shows both — followed by whose word it is and
// what the method claimed where that differs from the booking.
func TestChargeText(t *testing.T) {
	rho := results.Float(0.5)
	for _, c := range []struct {
		charge      results.LedgerCharge
		text, notes string
	}{
		{results.LedgerCharge{Notion: "pure-dp", Epsilon: 1, Private: true}, "ε = 1", ""},
		{results.LedgerCharge{Notion: "zcdp", Epsilon: results.Float(math.NaN()), Rho: &rho, Private: true}, "ρ = 0.5 (zCDP)", ""},
		{results.LedgerCharge{Notion: "approx-dp", Epsilon: 3, Delta: 1e-6, Rho: &rho, Private: true, DeclaredBy: "py-zcdp",
			Claimed: "ρ-zCDP with ρ = 0.5"}, "(ε = 3, δ = 1e-06) from ρ = 0.5 (zCDP)",
			"declared by the method py-zcdp, not checked by the harness; claimed: ρ-zCDP with ρ = 0.5"},
		// Whose word it is, said once where the release says it already.
		{results.LedgerCharge{Notion: "pure-dp", Epsilon: 1, Private: true, DeclaredBy: "py-ci",
			Release: "declared by the method py-ci: one interval release on the replicate D"}, "ε = 1", "not checked by the harness"},
		{results.LedgerCharge{Notion: "pure-dp", Epsilon: 2, Private: true, Claimed: "learner l returned ε=0.02 below its level of ε=2 in 4 of 4 rows; booked at the level"},
			"ε = 2", "claimed: learner l returned ε=0.02 below its level of ε=2 in 4 of 4 rows; booked at the level"},
	} {
		if got := chargeOf(c.charge); got != c.text {
			t.Errorf("chargeOf(%+v) = %q, want %q", c.charge, got, c.text)
		}
		if got := chargeNotes(c.charge); got != c.notes {
			t.Errorf("chargeNotes(%+v) = %q, want %q", c.charge, got, c.notes)
		}
	}
}
