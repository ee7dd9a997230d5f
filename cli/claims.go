package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
// against it here. The spec is the file the run's manifest names (its
// absolute path, so from any folder), and it must still resolve to the
// run's design (the resolved spec hash of its manifest); otherwise the run
// measures something else and is refused. A spec file that is gone, or
// whose claims no longer load, is refused (exit 2) and the claims.csv
// left as it was; a file changed since the run (its SHA-256) is said so,
// with both digests.
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
	refused := false
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
				refused = refused || errors.As(err, new(usageError))
				continue
			}
			if line != "" {
				fmt.Fprintf(stdout, "%s: %s\n", dir, line)
			}
		}
	}
	if len(failed) > 0 {
		err := fmt.Errorf("claims: %d run(s) not re-decided (their claims.csv left as it was)", len(failed))
		if refused {
			return usageError{err}
		}
		return err
	}
	return nil
}

// reclaim rewrites dir's claims.csv and says what it holds. It holds the
// folder's lock meanwhile: a folder another process is writing (a run of
// it, which replaces its files once it has all its units) is refused,
// naming the holder. An error the user must fix (the folder in use, the
// spec gone, changed in design, or not loading; the run's files
// unreadable) is a usageError.
func reclaim(dir string) (line string, err error) {
	lock, err := runner.Lock(dir)
	if le := (*runner.LockedError)(nil); errors.As(err, &le) {
		le.Elsewhere = "" // claims works on the run's own folder: there is no elsewhere
		return "", usageError{le}
	}
	if errors.Is(err, runner.ErrLocked) {
		return "", usageError{err}
	}
	if err != nil {
		return "", err
	}
	defer lock.Release()
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		return "", usageError{err}
	}
	// The folder's latest attempt may not have finished (it failed or was
	// stopped): its finished run is then an earlier one, which the report
	// shows but does not count.
	if f, err := report.ReadFolder(dir); err == nil && f.Attempt != nil {
		defer func() {
			if line != "" {
				line += fmt.Sprintf("; note: the folder's latest attempt (%s) did not finish, so these are the claims of the earlier run it still holds, which the report does not count", f.Attempt.State)
			}
		}()
	}
	spec, from, err := runSpec(m)
	if err != nil {
		return "", usageError{err}
	}
	claimsFile := filepath.Join(dir, "claims.csv")
	if len(spec.Claims) == 0 {
		// A claims.csv left from claims since removed would be reported
		// as the spec's: remove it, and say so.
		if err := os.Remove(claimsFile); err == nil {
			return "its spec has no claims now: claims.csv removed" + from, nil
		} else if !os.IsNotExist(err) {
			return "", err
		}
		return "", nil
	}
	rows, err := readRowsCSV(filepath.Join(dir, "rows.csv"))
	if err != nil {
		return "", usageError{err}
	}
	summary, err := results.ReadSummaryCSV(filepath.Join(dir, "summary.csv"))
	if err != nil {
		return "", usageError{err}
	}
	var o claims.Options
	if k, ok := runner.Kinds.Lookup(spec.Kind); ok {
		if p, ok := k.(runner.Pairer); ok {
			o.PairKey = p.PairKey()
		}
	}
	if len(o.PairKey) > 0 {
		// The kind pairs its differences by replicate: without the
		// replicates the claims would silently take the unpaired path,
		// which the run did not.
		if len(rows) == 0 {
			return "", usageError{fmt.Errorf("%s: no rows: the %s kind decides its claims on differences paired by %s, which need the run's rows", filepath.Join(dir, "rows.csv"), spec.Kind, strings.Join(o.PairKey, ", "))}
		}
		for _, c := range o.PairKey {
			if _, ok := rows[0][c]; !ok {
				return "", usageError{fmt.Errorf("%s: no column %q: the %s kind decides its claims on differences paired by %s", filepath.Join(dir, "rows.csv"), c, spec.Kind, strings.Join(o.PairKey, ", "))}
			}
		}
	}
	rs := claims.Evaluate(spec, rows, summary, o)
	b, err := claims.CSV(rs)
	if err != nil {
		return "", err
	}
	if err := results.WriteFileAtomic(claimsFile, b); err != nil {
		return "", err
	}
	var c report.Counts
	for _, r := range rs {
		c.Add(r.Verdict)
	}
	return fmt.Sprintf("%d held, %d not held, %d inconclusive, %d synthetic, %d missing (cells)%s", c.Held, c.NotHeld, c.Inconclusive, c.Synthetic, c.Missing, from), nil
}

// runSpec loads the spec of the run m describes, at its profile, seed and
// noise, and checks that it still resolves to the run's design. from says
// where its claims came from, and that the file changed since the run
// when it did (its SHA-256 then and now).
func runSpec(m results.Manifest) (spec *experiments.Spec, from string, err error) {
	file := m.Spec.File
	if name, ok := strings.CutPrefix(file, experiments.BuiltinPrefix); ok {
		spec, err = runner.Kinds.LoadBuiltin(strings.TrimSuffix(name, ".toml"), m.Profile)
		from = " — claims of the built-in spec compiled into this binary (after editing experiments/*.toml, rebuild: make build)"
	} else {
		shown := file
		if !filepath.IsAbs(file) {
			// A manifest of an older build, which recorded the path as
			// given: relative to the folder that run was started in.
			if abs, err := filepath.Abs(file); err == nil {
				shown = fmt.Sprintf("%s (recorded as %q, relative to the folder the run was started in; taken from this one)", abs, file)
			}
		}
		if _, serr := os.Stat(file); serr != nil {
			what := "is gone"
			if !errors.Is(serr, fs.ErrNotExist) {
				what = fmt.Sprintf("cannot be read (%v)", serr)
			}
			return nil, "", fmt.Errorf("its spec file %s %s; the run loaded it with sha256 %s: restore the file, or run the spec again", shown, what, orUnknown(m.Spec.FileSHA256))
		}
		spec, err = runner.Kinds.Load(file, m.Profile)
	}
	if err != nil {
		return nil, "", fmt.Errorf("its spec %s: %w", file, err)
	}
	changed := ""
	if m.Spec.FileSHA256 != "" && spec.Source != nil && spec.Source.SHA256 != m.Spec.FileSHA256 {
		changed = fmt.Sprintf("the spec file %s changed since the run (sha256 %s at the run, %s now)", file, m.Spec.FileSHA256, spec.Source.SHA256)
	}
	if m.SecureNoise {
		spec.Output.SecureNoise = true
	}
	spec.Seed = m.Seed
	if spec.Hash() != m.Spec.Hash {
		if changed == "" {
			changed = "the spec " + file
		}
		return nil, "", fmt.Errorf("%s no longer resolves to the run's design (resolved sha256 %.12s, the run's %.12s): run it again", changed, spec.Hash(), m.Spec.Hash)
	}
	if changed != "" {
		sep := " — "
		if from != "" {
			sep = "; "
		}
		from += sep + changed + ", its design did not: its current claims decided"
	}
	return spec, from, nil
}

// orUnknown returns s, or "unknown" when it is empty.
func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// readRowsCSV reads a rows.csv into rows keyed by column.
func readRowsCSV(path string) ([]results.Row, error) { return results.ReadRowsCSV(path) }
