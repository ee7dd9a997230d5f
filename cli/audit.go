package cli

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/kinds/privaudit"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// cmdAudit runs the empirical privacy audit (the privacy-audit spec,
// experiments/audit.toml by default) for all or the named mechanisms,
// prints the verdicts and fails when a correct mechanism's lower bound on ε
// exceeds its claim.
func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlagSet("audit", stderr)
	f.registerRun(fs)
	specFile := fs.String("spec", "audit", "the privacy-audit spec: a `file`, or the id of a built-in spec")
	thorough := fs.Bool("thorough", false, "the thorough audit (the spec's paper profile: more draws and epsilons)")
	family := fs.Bool("family", false, "Bonferroni: each bound at confidence 1 − (1 − c)/m for the m correct mechanisms' audits, so that a false alarm anywhere in the run has probability ≤ 1 − c")
	names, err := parseInterleaved(fs, args)
	if err != nil {
		return err
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
	s, err := loadSpec(*specFile, f.profile)
	if err != nil {
		return usageError{err}
	}
	if err := s.CheckResources(f.workers); err != nil {
		return usageError{err}
	}
	sec, ok := s.Section.(*privaudit.Section)
	if !ok {
		return usagef("%s: kind %q is not %s", *specFile, s.Kind, privaudit.Name)
	}
	if seed >= 0 {
		s.Seed = seed
	}
	if len(names) > 0 {
		for _, n := range names {
			if !slices.Contains(privaudit.Mechanisms, n) {
				return usagef("audit: %s", experiments.Unknown("mechanism", n, privaudit.Mechanisms))
			}
		}
		sec.Audit.Mechanisms = names
		s.ID += "-selected" // not the whole audit: keep it apart from the reference run
	}
	if f.secure {
		s.Output.SecureNoise = true
		s.ID += "-secure" // the harness's mechanisms in secure mode: does not replay
	}
	exp, err := privaudit.New(s)
	if err != nil {
		return usageError{err}
	}
	correct := 0
	for _, u := range exp.Units() {
		if strings.Contains(u.Key(), "/"+privaudit.Correct+"/") {
			correct++
		}
	}
	if *family {
		sec.Audit.Confidence = 1 - (1-sec.Audit.Confidence)/float64(correct)
		s.ID += "-family"
		if exp, err = privaudit.New(s); err != nil {
			return usageError{err}
		}
	}
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
	table, err := os.ReadFile(filepath.Join(dir, "tables", "verdicts.md"))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", table)
	bad, missed, total, err := auditCounts(filepath.Join(dir, "rows.csv"))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "audit: %d audits in %s; %d broken variants missed (their true ε may be within a loose claim)\n", total, dir, missed)
	if !*family {
		// Union bound over the correct audits: with m of them at level c,
		// P(any false alarm) ≤ m(1 − c); say so plainly when that is vacuous.
		union := float64(correct) * (1 - sec.Audit.Confidence)
		guarantee := fmt.Sprintf("a false alarm somewhere has probability at most %.3g", union)
		if union >= 1 {
			guarantee = fmt.Sprintf("the union bound gives no run-wide guarantee (%d × %.3g %% ≥ 1)", correct, 100*(1-sec.Audit.Confidence))
		}
		fmt.Fprintf(stdout, "audit: each bound holds at %.3g %%; over the %d correct audits %s (--family makes it %.3g %% for the run)\n",
			100*sec.Audit.Confidence, correct, guarantee, 100*(1-sec.Audit.Confidence))
	}
	if len(bad) > 0 {
		return fmt.Errorf("audit: %d correct mechanisms have a lower bound on ε above their claim: %s", len(bad), strings.Join(bad, ", "))
	}
	fmt.Fprintln(stdout, "audit: pass (no lower bound of a correct mechanism exceeds its claimed ε)")
	return nil
}

// auditCounts reads an audit's rows.csv: the units of correct mechanisms
// that violate their claim, the number of broken variants missed, and the
// number of audits.
func auditCounts(path string) (bad []string, missed, total int, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, err
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, 0, 0, fmt.Errorf("%s: empty", path)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	v, u := col["verdict"], col["unit"]
	for _, r := range recs[1:] {
		total++
		switch r[v] {
		case privaudit.Violation:
			bad = append(bad, r[u])
		case privaudit.Missed:
			missed++
		}
	}
	return bad, missed, total, nil
}
