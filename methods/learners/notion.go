package learners

import (
	"fmt"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/methods/params"
)

// Notioner is implemented by a Learner that declares, before any fit, the
// privacy notion of every guarantee it returns (privacy.Pure, Approx or
// ZCDP), so that a kind can refuse at load a spec whose budget does not
// fit it ([CheckNotion]) instead of failing unit by unit. The built-in
// learners declare theirs; an [External] declares its hello's form.
type Notioner interface {
	Notion() privacy.Notion
}

// Notion implements Notioner: pure ε-DP (Chaudhuri, Monteleoni & Sarwate
// 2011, Theorem 9).
func (ObjectivePerturbation) Notion() privacy.Notion { return privacy.Pure }

// Notion implements Notioner: pure ε-DP (Chaudhuri, Monteleoni & Sarwate
// 2011, Theorem 6).
func (OutputPerturbation) Notion() privacy.Notion { return privacy.Pure }

// Notion implements Notioner: not private.
func (NonPrivate) Notion() privacy.Notion { return privacy.None }

// Notion implements Notioner: the form its hello declares ("pure",
// "approx", "zcdp").
func (l *External) Notion() privacy.Notion {
	switch l.form {
	case external.FormApprox:
		return privacy.Approx
	case external.FormZCDP:
		return privacy.ZCDP
	}
	return privacy.Pure
}

// CheckNotion checks, when a kind loads a spec, that learner l's declared
// notion ([Notioner]; a learner that declares none is checked fit by fit,
// [CheckLevel]) fits a training budget whose δ is delta, which the spec
// sets at key: an (ε, δ)-DP learner needs δ > 0, and so does a ρ-zCDP
// one, whose claims are stated as (ε, δ) at each fit's δ (Bun & Steinke
// 2016, Proposition 1.3).
func CheckNotion(l Learner, delta float64, key string) error {
	n, ok := l.(Notioner)
	if !ok || delta > 0 {
		return nil
	}
	name := params.Base(l.Name()) // every variant declares the same
	switch n.Notion() {
	case privacy.Approx:
		return fmt.Errorf("learner %s declares (ε, δ)-DP guarantees, and %s is 0 (unset: a pure ε-DP budget): set %s > 0, the δ of the training budget", name, key, key)
	case privacy.ZCDP:
		return fmt.Errorf("learner %s declares ρ-zCDP guarantees, which imply an ε only at a δ > 0, and %s is 0 (unset): set %s > 0; each fit's ρ is then stated as (ε, δ) at the δ it is handed (Bun & Steinke 2016, Proposition 1.3)", name, key, key)
	}
	return nil
}
