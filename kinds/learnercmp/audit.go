package learnercmp

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/dprepro/dprepro/methods/learneraudit"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// AuditColumns is the schema of audit.csv (results.AuditFile), the rows
// of [comparison.audit]: one per audited learner and neighbouring pair
// (methods/learneraudit: "adversarial" and "search"). method is the
// learner's label, epsilon the level its fits were handed (its ledger
// entry's), claimed_epsilon and claimed_delta the largest guarantee they
// returned; the pair's own bound is pair_epsilon_lower at
// pair_confidence (Bonferroni over the pairs), the learner's ε_LB is
// epsilon_lower (the largest of its pairs') at confidence, and verdict
// compares it with claimed_epsilon: learneraudit.Columns between the
// run's experiment, dataset and method and the unit's key. The same rows
// as `dprepro audit --learner` writes with the spec's seed, releases and
// confidence.
var AuditColumns = slices.Concat([]string{"experiment", "dataset", "method"}, learneraudit.Columns, []string{"key"})

// auditPrefix starts the key of every audit unit: "audit/<label>/epsilon=<ε>".
const auditPrefix = "audit/"

// layoutAudits adds the units of [comparison.audit]: one per audited arm
// (a learner, or each variant of one), at the audit's ε. They come first,
// so that these long units start while the short fits run beside them.
func (e *Experiment) layoutAudits() error {
	a := e.spec.Comparison.Audit
	if a == nil {
		return nil
	}
	_, eps, _ := a.resolved(e.spec.Comparison.Epsilons)
	for i, name := range a.Learners {
		for ai, arm := range e.arms {
			if arm.name != name {
				continue
			}
			if arm.oracle {
				path := fmt.Sprintf("comparison.audit.learners[%d]", i)
				return e.spec.ErrorAt("comparison.audit.learners", path, fmt.Errorf("learner %s runs as an oracle over its variants (grid = \"oracle\"), which is not private: there is no claim to audit; audit its variants with grid = \"variants\"", name))
			}
			key := auditPrefix + arm.label + "/epsilon=" + results.FormatFloat(eps)
			e.units = append(e.units, key)
			e.byKey[key] = unit{fold: auditPrefix + arm.label, learner: ai, eps: eps, audit: true}
		}
	}
	return nil
}

// AuditUnit implements runner.MethodAuditor.
func (e *Experiment) AuditUnit(ru runner.Unit) bool {
	u, ok := ru.(unit)
	return ok && u.audit
}

// AuditColumns implements runner.MethodAuditor: [AuditColumns].
func (e *Experiment) AuditColumns() []string { return AuditColumns }

// runAudit runs the audit unit u: learneraudit.Run on the arm's learner
// as the spec runs it (learneraudit.SpecBase on the first dataset, as
// `dprepro audit --learner` prepares it), its releases one after the
// other (the run's workers run the other units beside it).
//
// Randomness: the audit's streams are learneraudit's, keyed by the
// spec's seed (runner.Stream's root), not by the unit: so the run's
// audit and the command's, at one seed, are the same bits. Secure noise
// does not reach them: an audit measures the learner's own noise, it
// releases nothing of the data.
func (e *Experiment) runAudit(ctx context.Context, u unit) ([]results.Row, error) {
	c := &e.spec.Comparison
	arm := e.arms[u.learner]
	st, err := e.spec.Section.LearnerSetting(e.spec.Spec, arm.name)
	if err != nil {
		return nil, err
	}
	ds := e.data[0]
	o, what, err := learneraudit.SpecBase(e.spec.Spec, st, ds, u.eps, 0)
	if err != nil {
		return nil, err
	}
	o.Releases, _, o.Confidence = c.Audit.resolved(c.Epsilons)
	o.Seed, o.Workers = uint64(e.spec.Seed), 1
	start := time.Now()
	rep, err := learneraudit.Run(ctx, arm.fits[0], o)
	if err != nil {
		return nil, fmt.Errorf("%s: audit of learner %s: %w", u.key, arm.label, err)
	}
	wall := time.Since(start).Seconds()
	rows := learneraudit.Rows(rep, o)
	for _, r := range rows {
		r.Set("experiment", e.spec.ID)
		r.Set("dataset", ds.Name)
		r.Set("method", arm.label)
		r.Set("learner", arm.label)
		r.Set("what", r["what"]+"; base rows: "+what)
		r.Set("key", u.key)
		r.SetFloat("wall_seconds", wall) // the manifest's, not audit.csv's
	}
	return rows, nil
}

// Audits implements runner.MethodAuditor: one audit per audited learner
// (its rows' first: the learner's fields repeat on its pair rows),
// beside the ledger entry of that learner at the audit's ε
// ("epsilon=<ε>").
func (e *Experiment) Audits(rows []results.Row) []results.MethodAudit {
	var out []results.MethodAudit
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r["key"]] {
			continue
		}
		seen[r["key"]] = true
		releases, _ := strconv.Atoi(r["releases"])
		fits, _ := strconv.Atoi(r["fits"])
		out = append(out, results.MethodAudit{
			Method: r["method"], Setting: "epsilon=" + r["epsilon"],
			ClaimedEpsilon: results.Float(r.Float("claimed_epsilon")), ClaimedDelta: results.Float(r.Float("claimed_delta")),
			EpsilonLower: results.Float(r.Float("epsilon_lower")), Confidence: r.Float("confidence"),
			Releases: releases, Violated: r["verdict"] == "claim violated", Verdict: r["verdict"],
			Fits: fits, WallSeconds: r.Float("wall_seconds"), File: results.AuditFile,
		})
	}
	return out
}

// auditInputs is runner.UnitReader's UnitInputs of an audit unit: the
// learner's identity and λ (as its fits' units), and the audit's
// releases and confidence; its ε is in its key.
func (e *Experiment) auditInputs(u unit) map[string]string {
	a := e.arms[u.learner]
	c := &e.spec.Comparison
	releases, _, confidence := c.Audit.resolved(c.Epsilons)
	fit := e.UnitInputs(unit{learner: u.learner})
	return map[string]string{
		"learner " + a.label: fit["learner "+a.label],
		"audit":              fmt.Sprintf("releases=%d confidence=%s", releases, results.FormatFloat(confidence)),
	}
}
