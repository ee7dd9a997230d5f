package cli

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/dprepro/dprepro/claims"
	"github.com/dprepro/dprepro/report"
	"github.com/dprepro/dprepro/results"
)

// errCheckFailed marks a check that ran and found results out of
// tolerance: exit status 1.
var errCheckFailed = errors.New("check failed")

// maxShown bounds the rows of the table of moved cells per run.
const maxShown = 40

// maxRunDepth is how many folders below RUN_DIR check looks for runs:
// OUT/<spec id>/<profile>-seed<seed>/ is two.
const maxRunDepth = 3

// builtinReferences describes the references built into the binary.
const builtinReferences = "built-in (results/reference at build time)"

// cmdCheck compares the runs under RUN_DIR with the reference results:
// those built into the binary, or --against DIR (one folder per spec id
// holding summary.csv and manifest.json). A run is matched to its
// reference by its manifest's spec id; it is refused (exit 2) when the
// two differ in spec, profile, design or data, compared bit for bit when
// they were made the same way, else within the tolerance of
// results.CompareSummaries. Every run is reported before the exit status,
// the worst of them: 2 (refused or unusable input) > 1 (a regression) > 0.
func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fset := newFlagSet("check", stderr)
	against := fset.String("against", "", "folder of reference runs, one per spec id (default: the references built into the binary)")
	z := fset.Float64("z", 3, "when the setting differs, a mean may move by z·√2 times the half-width of the reference's 95% CI")
	pos, err := parseInterleaved(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("check: name one run folder (got %d arguments)", len(pos))
	}
	if !(*z > 0) || math.IsInf(*z, 1) {
		return usagef("check: --z must be > 0 and finite (got %v)", *z)
	}
	refs, label := results.ReferenceFS(), builtinReferences
	if *against != "" {
		if fi, err := os.Stat(*against); err != nil || !fi.IsDir() {
			return usagef("check: --against %s is not a folder", *against)
		}
		refs, label = os.DirFS(*against), *against
	}
	return checkRuns(stdout, pos[0], refs, label, *z)
}

// checkOutcome is the outcome of checking one run, ordered by severity.
type checkOutcome int

const (
	checkUnchecked checkOutcome = iota // no reference for its spec id
	checkOK                            // identical or within tolerance
	checkRegressed                     // a cell out of tolerance, missing or new: exit 1
	checkUnusable                      // refused or unusable input: exit 2
)

// checkRuns checks every run under root against the references in refs
// (label names them in the output) and returns the error of the worst
// outcome.
func checkRuns(w io.Writer, root string, refs fs.FS, label string, z float64) error {
	// A folder whose latest attempt did not finish (failed, interrupted,
	// killed: report.Folder.Unfinished) is never skipped without a word,
	// nor compared by the finished run it may still hold from before.
	folders, err := report.FindFolders(root, maxRunDepth)
	if err != nil {
		return usageError{fmt.Errorf("check: %w", err)}
	}
	var unfinished []string
	for _, d := range folders {
		// An unreadable manifest is checkRun's to report as unusable.
		if f, err := report.ReadFolder(d); err == nil && f.Unfinished() {
			unfinished = append(unfinished, d)
		}
	}
	runs, err := findRuns(root)
	if err != nil && len(unfinished) == 0 {
		return err
	}
	runs = slices.DeleteFunc(runs, func(d string) bool { return slices.Contains(unfinished, d) })
	fmt.Fprintf(w, "references: %s\n", label)
	count := map[checkOutcome]int{}
	// A run folder named directly is checked whatever its profile; found
	// by scanning (an --out holding quick and paper runs side by side), a
	// run of a profile the reference is not of is not checked.
	named := isRun(root) || len(unfinished) == 1 && unfinished[0] == root
	tolFailed := 0 // failed runs compared in tolerance mode (not replays of their references)
	for _, dir := range runs {
		count[checkRun(w, dir, refs, label, z, named, &tolFailed)]++
	}
	notFinished := 0
	for _, dir := range unfinished {
		o := checkUnfinished(w, dir, refs, label)
		count[o]++
		if o == checkRegressed {
			notFinished++
		}
	}
	compared := len(runs) + len(unfinished) - count[checkUnchecked]
	switch {
	case count[checkUnusable] > 0:
		msg := fmt.Sprintf("check: %d of %d runs refused or unusable (see above)", count[checkUnusable], compared)
		if n := count[checkRegressed]; n > 0 {
			msg += fmt.Sprintf(", %d differ from their references", n)
		}
		return usageError{errors.New(msg)}
	case compared == 0:
		return usagef("check: no run under %s has a reference in %s", root, label)
	case notFinished > 0:
		msg := fmt.Sprintf("%d of %d runs did not finish (see above): their results are not there to compare", notFinished, compared)
		if n := count[checkRegressed] - notFinished; n > 0 {
			msg += fmt.Sprintf("; %d others differ from their references", n)
		}
		return fmt.Errorf("%w: %s", errCheckFailed, msg)
	case count[checkRegressed] > 0 && tolFailed == count[checkRegressed]:
		return fmt.Errorf("%w: %d of %d runs differ from their references beyond the tolerance; they were compared in tolerance mode (a setting differs, e.g. --secure-noise or another seed, so they cannot replay the references): never refresh the references from them — `make references` makes exact-mode runs", errCheckFailed, count[checkRegressed], compared)
	case count[checkRegressed] > 0:
		return fmt.Errorf("%w: %d of %d runs differ from their references (if the change is intended, refresh them on purpose with `make references`)", errCheckFailed, count[checkRegressed], compared)
	}
	return nil
}

// findRuns returns the run folders under root: root itself when it holds a
// manifest.json, else the folders that do up to maxRunDepth levels down
// (report.FindRuns), in lexical order.
func findRuns(root string) ([]string, error) {
	out, err := report.FindRuns(root, maxRunDepth)
	if err != nil {
		return nil, usageError{fmt.Errorf("check: %w", err)}
	}
	if len(out) == 0 {
		return nil, usagef("check: %s holds no finished run (a folder with manifest.json, at most %d levels down)", root, maxRunDepth)
	}
	return out, nil
}

// isRun reports whether dir holds a manifest.json (written last by a
// finished run).
func isRun(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "manifest.json"))
	return err == nil && !fi.IsDir()
}

// checkRun checks one run folder, prints its outcome, and returns it.
func checkRun(w io.Writer, dir string, refs fs.FS, label string, z float64, named bool, tolFailed *int) checkOutcome {
	unusable := func(name string, err error) checkOutcome {
		fmt.Fprintf(w, "%s: unusable: %v\n", name, err)
		return checkUnusable
	}
	run, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		return unusable(dir, err)
	}
	id := run.Spec.ID
	name := fmt.Sprintf("%s (%s)", id, dir)
	got, err := results.ReadSummaryCSV(filepath.Join(dir, "summary.csv"))
	if err != nil {
		return unusable(name, err)
	}
	// The spec id names a folder of refs: one valid path element.
	if !fs.ValidPath(id) || strings.Contains(id, "/") || id == "." {
		return unusable(name, fmt.Errorf("spec id %q cannot name a reference folder", id))
	}
	refDir := refName(label, id)
	if _, err := fs.Stat(refs, id); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, "%s: no reference in %s (not checked)\n", name, label)
		return checkUnchecked
	}
	ref, err := results.ReadManifestFS(refs, path.Join(id, "manifest.json"))
	if err != nil {
		return unusable(name, fmt.Errorf("reference %s: %w", refDir, err))
	}
	if !named && run.Profile != ref.Profile {
		fmt.Fprintf(w, "%s: not checked: the reference %s is of profile %q, this run of %q (name the run folder to compare it anyway)\n", name, refDir, ref.Profile, run.Profile)
		return checkUnchecked
	}
	set, err := results.CompareSettings(ref, run)
	if err != nil {
		return unusable(name, fmt.Errorf("against %s: %w", refDir, err))
	}
	if len(set.Refused) > 0 {
		// Not a regression: the reference measures something else, and
		// refreshing it would hide that.
		fmt.Fprintf(w, "%s: refused against %s: %s\n", name, refDir, strings.Join(set.Refused, "; "))
		return checkUnusable
	}
	want, err := results.ReadSummaryCSVFS(refs, path.Join(id, "summary.csv"))
	if err != nil {
		return unusable(name, fmt.Errorf("reference %s: %w", refDir, err))
	}
	c, err := results.CompareSummaries(want, got, set.Exact(), z)
	if err != nil {
		return unusable(name, fmt.Errorf("against %s: %w", refDir, err))
	}
	mode := "exact"
	if !c.Exact {
		mode = fmt.Sprintf("tolerance z = %v; %s", z, strings.Join(set.Differs, "; "))
	}
	out := checkOK
	switch {
	case c.Failed > 0:
		out = checkRegressed
		if !c.Exact {
			*tolFailed++
		}
		fmt.Fprintf(w, "%s: FAIL against %s, %d of %d cells out of tolerance, spread grown, missing or new, %d moved within it [%s]\n", name, refDir, c.Failed, len(c.Cells), c.Moved, mode)
	case c.Moved > 0 || c.Unjudged > 0:
		fmt.Fprintf(w, "%s: ok, %d of %d cells moved within tolerance [%s]\n", name, c.Moved, len(c.Cells), mode)
	default:
		fmt.Fprintf(w, "%s: ok, all %d cells identical [%s]\n", name, len(c.Cells), mode)
	}
	if flips := compareVerdicts(w, dir, refs, id); flips > 0 {
		fmt.Fprintf(w, "%s: FAIL against %s: %d claim verdict(s) of the paper went from held to not held\n", name, refDir, flips)
		out = checkRegressed
	}
	if c.Unjudged > 0 {
		fmt.Fprintf(w, "  %d cells moved that cannot be judged: their reference has one value (no CI), so no move can be told from sampling noise; they are listed as %q and do not fail the check\n", c.Unjudged, results.CellUnjudged)
	}
	printMoved(w, c)
	return out
}

// checkUnfinished reports a run folder whose latest attempt did not finish
// (report.Folder.Unfinished): a regression when its spec has a reference
// (the results the reference guards are not there), else not checked.
func checkUnfinished(w io.Writer, dir string, refs fs.FS, label string) checkOutcome {
	f, err := report.ReadFolder(dir)
	if err != nil {
		fmt.Fprintf(w, "%s: unusable: %v\n", dir, err)
		return checkUnusable
	}
	id, state, why := filepath.Base(filepath.Dir(dir)), "unfinished", ""
	switch {
	case f.Attempt != nil:
		// A record that says running is the report's to read: is a
		// process still at work in the folder (its lock), or was it
		// killed?
		id, state, why = f.Attempt.Spec.ID, f.Describe(dir, dir).StateNote(), f.Attempt.Error
	case f.AttemptErr != nil:
		state, why = "unknown", fmt.Sprintf("its attempt record cannot be read: %v", f.AttemptErr)
		if f.Manifest != nil {
			id = f.Manifest.Spec.ID
		}
	case f.HasCheckpoint:
		id, why = f.Checkpoint.SpecID, fmt.Sprintf("a checkpoint of %d units and no manifest.json", f.CheckpointUnits)
	case f.CheckpointDamaged:
		why = "a damaged checkpoint (no readable header), no manifest.json and no record of the attempt"
	}
	if i := strings.IndexByte(why, '\n'); i >= 0 {
		why = why[:i] + " …"
	}
	if why != "" {
		why = ": " + why
	}
	name := fmt.Sprintf("%s (%s)", id, dir)
	if f.Manifest != nil {
		why += " (the finished run it still holds from before is not compared)"
	}
	if _, err := fs.Stat(refs, id); id == "" || !fs.ValidPath(id) || errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, "%s: did not finish (%s)%s; no reference in %s (not checked)\n", name, state, why, label)
		return checkUnchecked
	}
	fmt.Fprintf(w, "%s: FAIL: the run did not finish (%s)%s; its reference %s is not compared\n", name, state, why, refName(label, id))
	return checkRegressed
}

// compareVerdicts compares the run's claims.csv with the reference's,
// printing every verdict that changed, and returns how many went from held
// to not held (which fail the check even when the summaries are
// identical: a refresh of the references must not hide a flipped
// conclusion).
func compareVerdicts(w io.Writer, dir string, refs fs.FS, id string) int {
	refB, err := fs.ReadFile(refs, path.Join(id, "claims.csv"))
	if err != nil {
		return 0 // a reference without claims
	}
	runB, err := os.ReadFile(filepath.Join(dir, "claims.csv"))
	if err != nil {
		fmt.Fprintf(w, "  the reference has claims.csv and the run none: its claims are not compared\n")
		return 0
	}
	ref, err1 := readVerdicts(refB)
	run, err2 := readVerdicts(runB)
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintf(w, "  claims.csv: %v\n", err)
		return 0
	}
	flips := 0
	keys := make([]string, 0, len(ref))
	for k := range ref {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		was, now := ref[k], run[k]
		if now == "" {
			now = "absent"
		}
		if was == now {
			continue
		}
		mark := ""
		if was == claims.Held && now == claims.NotHeld {
			flips++
			mark = " (FAIL)"
		}
		fmt.Fprintf(w, "  claim %s: %s in the reference, %s now%s\n", k, was, now, mark)
	}
	return flips
}

// readVerdicts reads claims.csv into claim_id/dataset/x → verdict.
func readVerdicts(b []byte) (map[string]string, error) {
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("not a claims.csv of this build (empty)")
	}
	col, ok := claims.Header(recs[0])
	if !ok {
		return nil, fmt.Errorf("not a claims.csv of this build (header %v)", recs[0])
	}
	out := map[string]string{}
	for _, r := range recs[1:] {
		key := r[col("claim_id")] + " [" + r[col("dataset")]
		if x := r[col("x")]; x != "NaN" && x != "" {
			key += ", x = " + x
		}
		out[key+"]"] = r[col("verdict")]
	}
	return out, nil
}

// refName names the reference folder of spec id in messages.
func refName(label, id string) string {
	if label == builtinReferences {
		return "built-in reference/" + id
	}
	return filepath.Join(label, id)
}

// printMoved prints the cells that differ, furthest beyond their
// tolerance first.
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
	// excess is how far a cell is beyond its tolerance, as a ratio; +Inf
	// for missing, new and exact-mode cells.
	excess := func(x results.Cell) float64 {
		r := math.Inf(1)
		if x.Tol > 0 {
			r = x.Diff / x.Tol
		}
		if x.Status == results.CellSpread && x.SDLimit > 0 {
			r = x.GotSD / x.SDLimit
		}
		return r
	}
	sort.SliceStable(moved, func(i, j int) bool { return excess(moved[i]) > excess(moved[j]) })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  cell\treference\trun\t|diff|\ttolerance\tsd ref\tsd run\tsd limit\tstatus")
	for i, x := range moved {
		if i == maxShown {
			fmt.Fprintf(tw, "  … %d more\t\t\t\t\t\t\t\t\n", len(moved)-maxShown)
			break
		}
		fmt.Fprintf(tw, "  %s\t%.6g\t%.6g\t%.3g\t%.3g\t%.3g\t%.3g\t%.3g\t%s\n", x.Key, x.Ref, x.Got, x.Diff, x.Tol, x.RefSD, x.GotSD, x.SDLimit, x.Status)
	}
	tw.Flush()
}
