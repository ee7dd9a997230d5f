package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dprepro/dprepro/claims"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/report"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// cmdClaims re-decides the claims of finished runs against the current
// [[claims]] of their specs, rewriting each run's claims.csv from its
// rows.csv and summary.csv without computing a unit: claims are not part of
// a run's identity, so a claim edited (or added) after a run is checked
// against it here. The run's spec must still resolve to the run's design
// (the resolved spec hash of its manifest); otherwise the run measures
// something else and is refused.
func cmdClaims(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("claims", stderr)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("claims: name run folders, or folders holding runs (e.g. the --out of reproduce)")
	}
	var failed []string
	for _, root := range pos {
		dirs, err := report.FindRuns(root, 3)
		if err != nil {
			return usagef("claims: %v", err)
		}
		if len(dirs) == 0 {
			return usagef("claims: %s holds no finished run (a folder with manifest.json)", root)
		}
		for _, dir := range dirs {
			line, err := reclaim(dir)
			if err != nil {
				fmt.Fprintf(stderr, "dprepro: claims: %s: %v\n", dir, err)
				failed = append(failed, dir)
				continue
			}
			if line != "" {
				fmt.Fprintf(stdout, "%s: %s\n", dir, line)
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("claims: %d run(s) not re-decided", len(failed))
	}
	return nil
}

// reclaim rewrites dir's claims.csv and says what it holds ("" for a spec
// without claims).
func reclaim(dir string) (string, error) {
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		return "", err
	}
	var spec *experiments.Spec
	from := ""
	if name, ok := strings.CutPrefix(m.Spec.File, experiments.BuiltinPrefix); ok {
		spec, err = runner.Kinds.LoadBuiltin(strings.TrimSuffix(name, ".toml"), m.Profile)
		from = " — claims of the built-in spec compiled into this binary (after editing experiments/*.toml, rebuild: make build)"
	} else {
		spec, err = runner.Kinds.Load(m.Spec.File, m.Profile)
	}
	if err != nil {
		return "", fmt.Errorf("its spec: %w", err)
	}
	if m.SecureNoise {
		spec.Output.SecureNoise = true
	}
	spec.Seed = m.Seed
	if spec.Hash() != m.Spec.Hash {
		return "", fmt.Errorf("the spec %s no longer resolves to the run's design (resolved sha256 %.12s, the run's %.12s): run it again", m.Spec.File, spec.Hash(), m.Spec.Hash)
	}
	if len(spec.Claims) == 0 {
		return "", nil
	}
	rows, err := readRowsCSV(filepath.Join(dir, "rows.csv"))
	if err != nil {
		return "", err
	}
	summary, err := results.ReadSummaryCSV(filepath.Join(dir, "summary.csv"))
	if err != nil {
		return "", err
	}
	var o claims.Options
	if k, ok := runner.Kinds.Lookup(spec.Kind); ok {
		if p, ok := k.(runner.Pairer); ok {
			o.PairKey = p.PairKey()
		}
	}
	rs := claims.Evaluate(spec, rows, summary, o)
	b, err := claims.CSV(rs)
	if err != nil {
		return "", err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, "claims.csv"), b); err != nil {
		return "", err
	}
	var c report.Counts
	for _, r := range rs {
		c.Add(r.Verdict)
	}
	return fmt.Sprintf("%d held, %d not held, %d inconclusive, %d synthetic, %d missing (cells)%s", c.Held, c.NotHeld, c.Inconclusive, c.Synthetic, c.Missing, from), nil
}

// readRowsCSV reads a rows.csv into rows keyed by column.
func readRowsCSV(path string) ([]results.Row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	rows := make([]results.Row, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		r := make(results.Row, len(rec))
		for i, col := range recs[0] {
			r[col] = rec[i]
		}
		rows = append(rows, r)
	}
	return rows, nil
}
