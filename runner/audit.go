package runner

import (
	"io"

	"github.com/dprepro/dprepro/experiments"
)

// AuditOptions are the choices of `dprepro audit` that an audit kind
// applies to its spec.
type AuditOptions struct {
	// Mechanisms restricts the audit to the named mechanisms (nil: all
	// of the spec's). An unknown name is an error listing the known ones.
	Mechanisms []string
	// Family sets each bound's confidence so that a false alarm anywhere
	// in the run has at most the spec's probability (Bonferroni over the
	// audits of correct mechanisms).
	Family bool
	// Secure draws the harness's mechanisms' noise from crypto/rand
	// (spec output.secure_noise): the run does not replay.
	Secure bool
}

// Audit is an audit run prepared by an [Auditor]: the experiment to run,
// and what to say of it when it finished.
type Audit struct {
	// Experiment is run like any other (checkpoints, manifest, trace).
	Experiment Experiment
	// Report reads the finished run in runDir and writes its verdicts
	// and what they guarantee to w. Its error is the audit's failure
	// (e.g. a correct mechanism whose lower bound on ε exceeds its
	// claim), which the command reports and exits 1 on.
	Report func(runDir string, w io.Writer) error
}

// Auditor is implemented by a kind whose runs are empirical privacy
// audits, which `dprepro audit` runs: it knows its section, the
// mechanisms it audits and how to read its verdicts, so that the command
// names no concrete kind.
type Auditor interface {
	Kind
	// PrepareAudit applies opts to spec (a loaded spec of this kind; its
	// ID gains a suffix for every option that makes the run differ from
	// the spec's reference run: "-selected", "-secure", "-family") and
	// returns the audit to run. Its errors are the user's (exit 2).
	PrepareAudit(spec *experiments.Spec, opts AuditOptions) (*Audit, error)
}
