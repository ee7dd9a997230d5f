package privaudit

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/runner"
)

// PrepareAudit implements runner.Auditor for `dprepro audit`: the spec
// restricted to opts.Mechanisms (id suffix "-selected"), in secure mode
// (opts.Secure, "-secure"), and with each bound's confidence raised to
// 1 − (1 − c)/m for the m audits of correct mechanisms (opts.Family,
// Bonferroni, "-family"), so that a false alarm anywhere in the run has
// probability at most 1 − c.
func (auditKind) PrepareAudit(s *experiments.Spec, opts runner.AuditOptions) (*runner.Audit, error) {
	sec, ok := s.Section.(*Section)
	if !ok {
		return nil, fmt.Errorf("spec %s: kind %q is not %s", s.ID, s.Kind, Name)
	}
	if len(opts.Mechanisms) > 0 {
		for _, n := range opts.Mechanisms {
			if !slices.Contains(Mechanisms, n) {
				return nil, fmt.Errorf("audit: %s", experiments.Unknown("mechanism", n, Mechanisms))
			}
		}
		sec.Audit.Mechanisms = opts.Mechanisms
		s.ID += "-selected" // not the whole audit: keep it apart from the reference run
	}
	if opts.Secure {
		s.Output.SecureNoise = true
		s.ID += "-secure" // the harness's mechanisms in secure mode: does not replay
	}
	exp, err := New(s)
	if err != nil {
		return nil, err
	}
	correct := 0
	for _, u := range exp.Units() {
		if strings.Contains(u.Key(), "/"+Correct+"/") {
			correct++
		}
	}
	if opts.Family {
		sec.Audit.Confidence = 1 - (1-sec.Audit.Confidence)/float64(correct)
		s.ID += "-family"
		if exp, err = New(s); err != nil {
			return nil, err
		}
	}
	confidence := sec.Audit.Confidence
	report := func(dir string, w io.Writer) error {
		table, err := os.ReadFile(filepath.Join(dir, "tables", "verdicts.md"))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\n", table)
		bad, missed, total, err := auditCounts(filepath.Join(dir, "rows.csv"))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "audit: %d audits in %s; %d broken variants missed (their true ε may be within a loose claim)\n", total, dir, missed)
		if !opts.Family {
			// Union bound over the correct audits: with m of them at level c,
			// P(any false alarm) ≤ m(1 − c); say so plainly when that is vacuous.
			union := float64(correct) * (1 - confidence)
			guarantee := fmt.Sprintf("a false alarm somewhere has probability at most %.3g", union)
			if union >= 1 {
				guarantee = fmt.Sprintf("the union bound gives no run-wide guarantee (%d × %.3g %% ≥ 1)", correct, 100*(1-confidence))
			}
			fmt.Fprintf(w, "audit: each bound holds at %.3g %%; over the %d correct audits %s (--family makes it %.3g %% for the run)\n",
				100*confidence, correct, guarantee, 100*(1-confidence))
		}
		if len(bad) > 0 {
			return fmt.Errorf("audit: %d correct mechanisms have a lower bound on ε above their claim: %s", len(bad), strings.Join(bad, ", "))
		}
		fmt.Fprintln(w, "audit: pass (no lower bound of a correct mechanism exceeds its claimed ε)")
		return nil
	}
	return &runner.Audit{Experiment: exp, Report: report}, nil
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
		case Violation:
			bad = append(bad, r[u])
		case Missed:
			missed++
		}
	}
	return bad, missed, total, nil
}
