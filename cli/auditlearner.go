package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learneraudit"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// learnerAuditFlags are the flags of `dprepro audit --learner`.
type learnerAuditFlags struct {
	learner    string
	releases   int
	epsilon    float64
	lambda     float64
	rows       int
	confidence float64
}

func (l *learnerAuditFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.learner, "learner", "", "audit the learner `name` of the --spec (a learner-comparison or cv-tuning spec; other kinds run no learners) instead of the harness's mechanisms: built-in, Go-registered or external ([[methods]]), run as the spec runs it (cv-tuning: at the smallest λ of tuning.lambdas, at the levels its methods hand their fits, on the smallest training set a fit at that level sees); writes audit.csv, audit.json and audit.md to OUT/<spec id>/audit-<name>-seed<seed>/ and exits 1 when the claim is violated or the audit could not finish (the message says which)")
	fs.IntVar(&l.releases, "releases", 2000, "with --learner: releases `n` per side and pair (half choose the threshold, half measure it); >= 200")
	fs.Float64Var(&l.epsilon, "epsilon", 0, "with --learner: the ε `e` handed to every fit (default: the spec's ε closest to 1; cv-tuning: of the levels its methods hand their fits, e.g. α/2 for stability)")
	fs.Float64Var(&l.lambda, "lambda", 0, "with --learner: the λ `l` handed to every fit (default: the spec's; cv-tuning: the smallest of tuning.lambdas)")
	fs.IntVar(&l.rows, "rows", 0, "with --learner: rows `n` of the audited datasets (default: the spec's training-set size of its first dataset)")
	fs.Float64Var(&l.confidence, "confidence", 0.95, "with --learner: confidence `c` of the lower bound on ε, in (0, 1)")
}

// cmdAuditLearner is `dprepro audit --learner NAME --spec FILE`: the
// black-box audit of one learner of a spec (methods/learneraudit). It
// writes audit.csv (one row per neighbouring pair), audit.json and
// audit.md to OUT/<spec id>/audit-<learner>-seed<seed>/, prints the
// verdict, and fails (exit 1) when the claim is violated.
func cmdAuditLearner(ctx context.Context, f *runFlags, lf *learnerAuditFlags, specFile string, stdout, stderr io.Writer) error {
	switch {
	case lf.releases < 200:
		return usagef("audit: --releases must be >= 200 (got %d)", lf.releases)
	case !(lf.confidence > 0 && lf.confidence < 1):
		return usagef("audit: --confidence must be in (0, 1) (got %v)", lf.confidence)
	case lf.epsilon < 0 || lf.epsilon != lf.epsilon:
		return usagef("audit: --epsilon must be > 0 (got %v)", lf.epsilon)
	case lf.lambda < 0 || lf.lambda != lf.lambda || math.IsInf(lf.lambda, 1):
		return usagef("audit: --lambda must be finite and > 0 (got %v)", lf.lambda)
	case lf.rows < 0:
		return usagef("audit: --rows must be >= 4 (got %d)", lf.rows)
	}
	seed, err := f.check()
	if err != nil {
		return err
	}
	s, err := loadSpec(specFile, f.profile, experiments.LoadOptions{})
	if err != nil {
		return usageError{err}
	}
	if seed >= 0 {
		s.Seed = seed
	}
	dd, err := resolveData(f.dataDir, stderr)
	if err != nil {
		return err
	}
	// Absolute: an external learner's worker runs in its spec's folder and
	// reads the scratch files by the paths it is handed.
	out, err := filepath.Abs(f.out)
	if err != nil {
		return usageError{fmt.Errorf("audit: --out: %w", err)}
	}
	dir := filepath.Join(out, s.ID, fmt.Sprintf("audit-%s-seed%d", lf.learner, s.Seed))
	p, err := learneraudit.Prepare(s, lf.learner, learneraudit.SpecOptions{
		Epsilon: lf.epsilon, Lambda: lf.lambda, Rows: lf.rows,
		Data:    runner.DataOptions{DataDir: dd.Path, Named: dd.Named},
		Scratch: filepath.Join(dir, "scratch"), Log: stderr,
	})
	if err != nil {
		return usageError{err}
	}
	defer p.Close()
	o := p.Options
	o.Releases, o.Seed, o.Workers, o.Confidence = lf.releases, uint64(s.Seed), f.workers, lf.confidence
	fmt.Fprintf(stderr, "dprepro: audit %s: %d releases per side on 2 pairs of %d×%d rows (%s), λ=%g, ε=%g\n",
		lf.learner, o.Releases, o.N, o.D, p.Dataset, o.Lambda, o.Level.Epsilon)
	if p.Setting != "" {
		fmt.Fprintf(stderr, "dprepro: audit %s: the spec's setting: %s\n", lf.learner, p.Setting)
	}
	rep, err := learneraudit.Run(ctx, p.Learner, o)
	os.RemoveAll(filepath.Join(dir, "scratch"))
	if err != nil {
		os.Remove(dir) // only when empty: an earlier audit's files stay
		return fmt.Errorf("audit: learner %s: the audit did not finish, no verdict: %w", lf.learner, err)
	}
	if err := writeLearnerAudit(dir, s, p, o, rep); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: ε_LB = %.4g at confidence %g (%d releases per side; claimed ε = %g, δ = %g): %s\n",
		rep.Learner, rep.EpsLower, rep.Confidence, rep.Releases, rep.Claim.Epsilon, rep.Claim.Delta, rep.Verdict())
	for _, pr := range rep.Pairs {
		fmt.Fprintf(stdout, "  %-11s ε_LB = %.4g  event %v  (%d/%d vs %d/%d)\n", pr.Pair, pr.Result.EpsLower, pr.Result.Event, pr.Result.K0, pr.Result.N, pr.Result.K1, pr.Result.N)
	}
	fmt.Fprintf(stdout, "wrote %s\n", dir)
	if rep.Violated {
		return fmt.Errorf("audit: learner %s: claim violated: ε_LB = %.4g > claimed ε = %g", rep.Learner, rep.EpsLower, rep.Claim.Epsilon)
	}
	return nil
}

func writeLearnerAudit(dir string, s *experiments.Spec, p *learneraudit.Prepared, o learneraudit.Options, rep learneraudit.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageError{fmt.Errorf("audit: --out: %w", err)}
	}
	csvBytes, err := results.EncodeCSV(learneraudit.Columns, learneraudit.Rows(rep, o))
	if err != nil {
		return err
	}
	type jsonPair struct {
		Pair       string  `json:"pair"`
		What       string  `json:"what"`
		Event      string  `json:"event"`
		Threshold  float64 `json:"threshold"`
		K0         int     `json:"k0"`
		K1         int     `json:"k1"`
		Measure    int     `json:"measure"`
		EpsLower   float64 `json:"epsilon_lower"`
		Confidence float64 `json:"confidence"`
	}
	js := struct {
		Spec           string     `json:"spec"`
		Learner        string     `json:"learner"`
		DeclaredBy     string     `json:"declared_by,omitempty"`
		Dataset        string     `json:"dataset"`
		ClaimedEpsilon float64    `json:"claimed_epsilon"`
		Delta          float64    `json:"delta"`
		LevelEpsilon   float64    `json:"level_epsilon"`
		Lambda         float64    `json:"lambda"`
		Setting        string     `json:"setting,omitempty"`
		Seed           int64      `json:"seed"`
		Releases       int        `json:"releases_per_side"`
		Confidence     float64    `json:"confidence"`
		EpsLower       float64    `json:"epsilon_lower"`
		Verdict        string     `json:"verdict"`
		Fits           int        `json:"fits"`
		WallSeconds    float64    `json:"wall_seconds"`
		Pairs          []jsonPair `json:"pairs"`
	}{
		Spec: s.ID, Learner: rep.Learner, DeclaredBy: rep.Declared, Dataset: p.Dataset,
		ClaimedEpsilon: rep.Claim.Epsilon, Delta: rep.Claim.Delta, LevelEpsilon: o.Level.Epsilon, Lambda: o.Lambda, Setting: p.Setting,
		Seed: s.Seed, Releases: rep.Releases, Confidence: rep.Confidence, EpsLower: rep.EpsLower,
		Verdict: rep.Verdict(), Fits: rep.Fits, WallSeconds: rep.Wall.Seconds(),
	}
	for _, pr := range rep.Pairs {
		js.Pairs = append(js.Pairs, jsonPair{pr.Pair, pr.What, pr.Result.Event.String(), pr.Result.Event.T, pr.Result.K0, pr.Result.K1, pr.Result.N, pr.Result.EpsLower, pr.Confidence})
	}
	jb, err := json.MarshalIndent(js, "", "  ")
	if err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# Privacy audit of learner %s (spec %s)\n\n", rep.Learner, s.ID)
	fmt.Fprintf(&md, "| ε_LB | claimed ε | δ | releases per side | confidence | verdict |\n|---|---|---|---|---|---|\n")
	fmt.Fprintf(&md, "| %.4g | %g | %g | %d | %g | %s |\n\n", rep.EpsLower, rep.Claim.Epsilon, rep.Claim.Delta, rep.Releases, rep.Confidence, rep.Verdict())
	fmt.Fprintf(&md, "Level handed to every fit: ε = %g, δ = %g, λ = %g; base rows: %s.\n", o.Level.Epsilon, o.Level.Delta, o.Lambda, p.Dataset)
	if p.Setting != "" {
		fmt.Fprintf(&md, "The spec's setting of the learner: %s.\n", p.Setting)
	}
	if rep.Declared != "" {
		fmt.Fprintf(&md, "The claim is declared by the method %s.\n", rep.Declared)
	}
	fmt.Fprintf(&md, "\nε_LB is a one-sided Clopper–Pearson lower bound on the learner's ε (δ = %g): the largest over the pairs below, each at confidence %g (Bonferroni), the threshold of each chosen on half of the releases and measured on the other half.\n\n", rep.Claim.Delta, rep.Pairs[0].Confidence)
	fmt.Fprintf(&md, "| pair | ε_LB | event | k0 / N | k1 / N | datasets |\n|---|---|---|---|---|---|\n")
	for _, pr := range rep.Pairs {
		fmt.Fprintf(&md, "| %s | %.4g | %s | %d / %d | %d / %d | %s |\n", pr.Pair, pr.Result.EpsLower, pr.Result.Event, pr.Result.K0, pr.Result.N, pr.Result.K1, pr.Result.N, pr.What)
	}
	fmt.Fprintf(&md, "\n%d fits in %.1f s (wall clock).\n", rep.Fits, rep.Wall.Seconds())
	for name, data := range map[string][]byte{"audit.csv": csvBytes, "audit.json": append(jb, '\n'), "audit.md": []byte(md.String())} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
