package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learneraudit"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// cmdAudit runs the empirical privacy audit (the privacy-audit spec,
// experiments/audit.toml by default) for all or the named mechanisms,
// prints the verdicts and fails when a correct mechanism's lower bound on ε
// exceeds its claim. With --learner NAME --spec FILE it audits one learner
// of a learner-comparison or cv-tuning spec instead (cmdAuditLearner).
func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var f runFlags
	defer f.stopProfiles(stderr, &err)
	fs := newFlagSet("audit", stderr)
	f.registerRun(fs)
	specFile := fs.String("spec", "audit", "the privacy-audit spec: a `file`, or the id of a built-in spec; with --learner, the learner-comparison or cv-tuning spec that runs the learner")
	thorough := fs.Bool("thorough", false, "the thorough audit (the spec's paper profile: more draws and epsilons)")
	family := fs.Bool("family", false, "Bonferroni: each bound at confidence 1 − (1 − c)/m for the m correct mechanisms' audits, so that a false alarm anywhere in the run has probability ≤ 1 − c")
	var lf learnerAuditFlags
	lf.register(fs)
	f.registerData(fs)
	names, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if lf.learner != "" {
		switch {
		case !given["spec"]:
			return usagef("audit: --learner needs --spec FILE: the learner-comparison or cv-tuning spec that runs it")
		case len(names) > 0:
			return usagef("audit: --learner audits one learner; it takes no mechanisms (got %s)", strings.Join(names, " "))
		case *thorough || *family:
			return usagef("audit: --thorough and --family are for the mechanism audit, not --learner")
		case given["secure-noise"] || given["trace-privacy"]:
			return usagef("audit: --secure-noise and --trace-privacy do not go with --learner (an audit's releases replay from their seeded streams and are no run's releases)")
		}
		return cmdAuditLearner(ctx, &f, &lf, *specFile, stdout, stderr)
	}
	for _, fl := range []string{"releases", "epsilon", "lambda", "rows", "confidence", "data-dir"} {
		if given[fl] {
			return usagef("audit: --%s goes with --learner (to audit a spec's learner: --learner NAME --spec FILE)", fl)
		}
	}
	if *thorough {
		explicit := false
		fs.Visit(func(fl *flag.Flag) { explicit = explicit || fl.Name == "profile" })
		if explicit && f.profile != "paper" {
			return usagef("audit: --thorough is the paper profile; it cannot go with --profile %s", f.profile)
		}
		f.profile = "paper"
	}
	seed, err := f.check()
	if err != nil {
		return err
	}
	s, err := loadSpec(*specFile, f.profile, experiments.LoadOptions{})
	if err != nil {
		return usageError{err}
	}
	if err := s.CheckResources(f.workers); err != nil {
		return usageError{err}
	}
	k, _ := runner.Kinds.Lookup(s.Kind)
	auditor, ok := k.(runner.Auditor)
	if !ok {
		hint := ""
		if _, ok := s.Section.(learneraudit.Source); ok {
			hint = "; to audit one of its learners, add --learner NAME"
		}
		return usagef("%s: kind %q is not an audit kind (%s)%s", *specFile, s.Kind, strings.Join(auditKinds(), ", "), hint)
	}
	if seed >= 0 {
		s.Seed = seed
	}
	a, err := auditor.PrepareAudit(s, runner.AuditOptions{Mechanisms: names, Family: *family, Secure: f.secure})
	if err != nil {
		return usageError{err}
	}
	exp := a.Experiment
	for _, w := range exp.Warnings() {
		fmt.Fprintf(stderr, "dprepro: %s: WARNING: %s\n", s.ID, w)
	}
	locks, err := lockRuns(f.out, []*experiments.Spec{s}, stderr)
	if err != nil {
		return err
	}
	defer locks[0].Release()
	entry := newIndexEntry(f.out, s)
	runDir := runner.RunDir(f.out, s)
	prev, _ := results.ReadAttempt(runDir)
	attempt := newAttempt(s, results.AttemptRunning, time.Now())
	saveAttempt(runDir, attempt, stderr)
	dir, err := runSecure(s, func() (string, error) {
		return runner.Run(ctx, exp, runner.Options{OutDir: f.out, Workers: f.workers, Stderr: stderr, Interval: f.interval, Locked: true, TracePrivacy: f.trace})
	}, stderr)
	recordFailures(err, runDir)
	endAttempt(ctx, runDir, attempt, prev, err, true, runner.Shard{}, len(exp.Units()), stderr)
	entry.Finished = time.Now().UTC().Truncate(time.Second)
	entry.Data = "none"
	entry.Status = runStatus(ctx, err, true) // an interrupt's exit status is main's
	if err != nil {
		entry.Error = err.Error()
	}
	if ierr := updateIndex(f.out, []indexEntry{entry}); ierr != nil {
		fmt.Fprintf(stderr, "dprepro: WARNING: could not update the index of %s: %v\n", f.out, ierr)
	}
	if err != nil {
		return err
	}
	return a.Report(dir, stdout)
}

// auditKinds returns the registered kinds that run audits
// (runner.Auditor).
func auditKinds() []string {
	var out []string
	for _, n := range runner.Kinds.Names() {
		if k, _ := runner.Kinds.Lookup(n); k != nil {
			if _, ok := k.(runner.Auditor); ok {
				out = append(out, n)
			}
		}
	}
	return out
}
