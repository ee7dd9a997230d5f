package results

import (
	"fmt"
	"strconv"
)

// AuditFile is the file of a run's privacy audits of its methods
// (runner.MethodAuditor): one row per audited method, setting and
// neighbouring pair, beside rows.csv and never in it.
const AuditFile = "audit.csv"

// MethodAudit is the outcome of an empirical privacy audit of one method
// at one setting of a run (e.g. a learner at one ε of a learner-comparison
// spec with [comparison.audit]): the ε the method claimed for its
// releases beside a one-sided Clopper–Pearson lower bound on its true ε
// (package methods/learneraudit), and the verdict.
type MethodAudit struct {
	// Method and Setting name the ledger entry audited (LedgerEntry's
	// Method and Setting).
	Method  string `json:"method"`
	Setting string `json:"setting"`
	// ClaimedEpsilon and ClaimedDelta are the largest guarantee the
	// audited fits returned: the claim under test.
	ClaimedEpsilon Float `json:"claimed_epsilon"`
	ClaimedDelta   Float `json:"claimed_delta"`
	// EpsilonLower is ε_LB, a lower bound on the method's ε (at
	// ClaimedDelta) with probability at least Confidence.
	EpsilonLower Float   `json:"epsilon_lower"`
	Confidence   float64 `json:"confidence"`
	// Releases is the number of releases per side of each neighbouring
	// pair (half choose the distinguisher's threshold, half measure it).
	Releases int `json:"releases_per_side"`
	// Violated reports EpsilonLower > ClaimedEpsilon; Verdict says it in
	// words: "claim violated" or "consistent with the claim".
	Violated bool   `json:"violated"`
	Verdict  string `json:"verdict"`
	// Fits is the number of fits the audit ran; WallSeconds their wall
	// time when the audit was computed (a resumed audit keeps its own).
	Fits        int     `json:"fits"`
	WallSeconds float64 `json:"wall_seconds"`
	// File is the file of the audit's rows (AuditFile).
	File string `json:"file"`
}

// Summary says the audit in one line: ε_LB beside the claimed ε, the
// releases and confidence, and the verdict.
func (a MethodAudit) Summary() string {
	claim := "ε = " + FormatFloat(float64(a.ClaimedEpsilon))
	if a.ClaimedDelta > 0 {
		claim = fmt.Sprintf("(ε = %s, δ = %s)", FormatFloat(float64(a.ClaimedEpsilon)), FormatFloat(float64(a.ClaimedDelta)))
	}
	return fmt.Sprintf("audited: ε_LB = %s beside the claimed %s (one-sided Clopper–Pearson lower bound at confidence %s, %d releases per side and pair; %s): %s",
		strconv.FormatFloat(float64(a.EpsilonLower), 'g', 4, 64), claim, FormatFloat(a.Confidence), a.Releases, a.File, a.Verdict)
}

// Warning is the manifest's warning for a violated claim ("" when the
// audit is consistent with the claim).
func (a MethodAudit) Warning() string {
	if !a.Violated {
		return ""
	}
	return fmt.Sprintf("privacy audit: %s at %s: claim violated: ε_LB = %s > claimed ε = %s at confidence %s (%d releases per side; %s): the method spends more privacy than it claims, and the ledger books its claim",
		a.Method, a.Setting, strconv.FormatFloat(float64(a.EpsilonLower), 'g', 4, 64), FormatFloat(float64(a.ClaimedEpsilon)), FormatFloat(a.Confidence), a.Releases, a.File)
}

// AnnotateLedger puts each audit beside the entry of ledger it audits
// (same Method and Setting): the entry's Audit, and its Summary appended
// to the Claimed text of the entry's charges, so that ε_LB stands beside
// the ε the charge books. Audits without an entry are left out.
func AnnotateLedger(ledger []LedgerEntry, audits []MethodAudit) {
	for _, a := range audits {
		for i := range ledger {
			e := &ledger[i]
			if e.Method != a.Method || e.Setting != a.Setting {
				continue
			}
			a := a
			e.Audit = &a
			for j := range e.Components {
				c := &e.Components[j]
				if c.Claimed != "" {
					c.Claimed += "; "
				}
				c.Claimed += a.Summary()
			}
		}
	}
}
