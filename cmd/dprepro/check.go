package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"

	"github.com/dprepro/dprepro/results"
)

// errCheckFailed marks a check that ran and found results out of
// tolerance: exit status 1.
var errCheckFailed = errors.New("check failed")

// maxShown bounds the rows of the table of moved cells per spec.
const maxShown = 40

// cmdCheck compares the runs under RUN_DIR (an --out folder, or one run's
// folder) with the reference summaries in --against (one folder per spec
// id holding summary.csv and manifest.json): bit-identical when spec, seed,
// profile, platform and data are the same, else within the tolerance of
// results.CompareSummaries.
func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", stderr)
	against := fs.String("against", filepath.Join("results", "reference"), "folder of reference runs (one per spec id)")
	z := fs.Float64("z", 3, "tolerance in combined 95% CI half-widths when the setting differs")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("check: name one run folder (got %d arguments)", len(pos))
	}
	if !(*z > 0) {
		return usagef("check: --z must be > 0 (got %v)", *z)
	}
	runs, err := runDirs(pos[0])
	if err != nil {
		return err
	}
	failed, checked := 0, 0
	for _, dir := range runs {
		id := filepath.Base(dir)
		refDir := filepath.Join(*against, id)
		if _, err := os.Stat(filepath.Join(refDir, "summary.csv")); err != nil {
			fmt.Fprintf(stdout, "%s: no reference in %s (not checked)\n", id, *against)
			continue
		}
		checked++
		c, why, err := checkRun(dir, refDir, *z)
		if err != nil {
			return err
		}
		mode := "exact"
		if !c.Exact {
			mode = fmt.Sprintf("tolerance z = %v (setting differs: %s)", *z, why)
		}
		switch {
		case c.Failed > 0:
			failed++
			fmt.Fprintf(stdout, "%s: FAIL, %d of %d cells out of tolerance or missing, %d moved within it [%s]\n", id, c.Failed, len(c.Cells), c.Moved, mode)
		case c.Moved > 0:
			fmt.Fprintf(stdout, "%s: ok, %d of %d cells moved within tolerance [%s]\n", id, c.Moved, len(c.Cells), mode)
		default:
			fmt.Fprintf(stdout, "%s: ok, all %d cells identical [%s]\n", id, len(c.Cells), mode)
		}
		printMoved(stdout, c)
	}
	if checked == 0 {
		return fmt.Errorf("check: no run under %s has a reference in %s", pos[0], *against)
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d runs differ from their references (refresh them on purpose with `make references`)", errCheckFailed, failed, checked)
	}
	return nil
}

// runDirs returns the run folders under dir: dir itself when it holds a
// manifest.json, else its subfolders that do.
func runDirs(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
		return []string{dir}, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, usageError{fmt.Errorf("check: %w", err)}
	}
	var out []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "manifest.json")); e.IsDir() && err == nil {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	if len(out) == 0 {
		return nil, usagef("check: %s holds no finished run (a folder with manifest.json)", dir)
	}
	return out, nil
}

func readManifest(path string) (results.Manifest, error) {
	var m results.Manifest
	b, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("check: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("check: %s: %w", path, err)
	}
	return m, nil
}

// checkRun compares one run with its reference.
func checkRun(dir, refDir string, z float64) (results.Comparison, string, error) {
	rm, err := readManifest(filepath.Join(refDir, "manifest.json"))
	if err != nil {
		return results.Comparison{}, "", err
	}
	gm, err := readManifest(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return results.Comparison{}, "", err
	}
	ref, err := results.ReadSummaryCSV(filepath.Join(refDir, "summary.csv"))
	if err != nil {
		return results.Comparison{}, "", err
	}
	got, err := results.ReadSummaryCSV(filepath.Join(dir, "summary.csv"))
	if err != nil {
		return results.Comparison{}, "", err
	}
	exact, why := results.SameSetting(rm, gm)
	return results.CompareSummaries(ref, got, exact, z), why, nil
}

// printMoved prints the cells that differ, largest relative move first.
func printMoved(w io.Writer, c results.Comparison) {
	var moved []results.Cell
	for _, cell := range c.Cells {
		if cell.Status != results.CellSame {
			moved = append(moved, cell)
		}
	}
	if len(moved) == 0 {
		return
	}
	rel := func(x results.Cell) float64 {
		if x.Tol > 0 {
			return x.Diff / x.Tol
		}
		return math.Inf(1)
	}
	sort.SliceStable(moved, func(i, j int) bool { return rel(moved[i]) > rel(moved[j]) })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  cell\treference\trun\t|diff|\ttolerance\tstatus")
	for i, x := range moved {
		if i == maxShown {
			fmt.Fprintf(tw, "  … %d more\t\t\t\t\t\n", len(moved)-maxShown)
			break
		}
		fmt.Fprintf(tw, "  %s\t%.6g\t%.6g\t%.3g\t%.3g\t%s\n", x.Key, x.Ref, x.Got, x.Diff, x.Tol, x.Status)
	}
	tw.Flush()
}
