package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/methods/generators"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/methods/selection"
	"github.com/dprepro/dprepro/runner"
)

func cmdList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlagSet("list", stderr)
	fs.StringVar(&f.specs, "specs", "", "`dir` of spec files to list instead of the built-in specs")
	f.registerData(fs)
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("list: unexpected argument %q", rest[0])
	}
	dir := datasets.ResolveDataDir(f.dataDir, os.Getenv)
	if err := dir.Check(); err != nil {
		return usageError{fmt.Errorf("list: %w", err)}
	}
	fmt.Fprintf(stdout, "data: %s\n\n", dir)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SPEC\tKIND\tFILE\tTITLE")
	var files []string
	load := func(file string) (*experiments.Spec, error) { return runner.Kinds.Load(file, "paper") }
	if f.specs == "" {
		files = experiments.BuiltinIDs()
		load = func(id string) (*experiments.Spec, error) { return runner.Kinds.LoadBuiltin(id, "paper") }
	} else {
		files, _ = filepath.Glob(filepath.Join(f.specs, "*.toml"))
	}
	var invalid, broken []string // the rows that say something is wrong
	for _, file := range files {
		s, err := load(file)
		if err == nil && s.Source != nil {
			file = s.Source.Path
		}
		if err != nil {
			fmt.Fprintf(tw, "?\t?\t%s\tINVALID: %v\n", file, err)
			invalid = append(invalid, file)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, s.Kind, file, s.Title)
	}
	if len(files) == 0 {
		fmt.Fprintf(tw, "(no specs in %s)\n", f.specs)
	} else if f.specs == "" {
		fmt.Fprintf(tw, "(built in: `dprepro run ID` runs one; --specs DIR lists the files of DIR)\n")
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "DATASET\tSTATUS\tFILES")
	for _, name := range datasets.Names() {
		st, err := datasets.Inspect(name, dir.Path)
		status, files := describeStatus(st, err, dir.Named)
		if p, ok := datasets.Registered(name); ok && errors.Is(err, datasets.ErrNoFiles) {
			status, files = "Go provider: "+p.Description(), "(read by its code)"
		} else if err != nil || strings.HasPrefix(status, "ERROR") {
			broken = append(broken, name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, status, files)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "EXTENSION POINT\tSPEC KEY\tREGISTERED NAMES")
	for _, e := range extensionPoints() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.what, e.key, strings.Join(e.names, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return listFailure(invalid, broken, dir.Path)
}

// listFailure is the error of a list that showed an INVALID spec or a
// dataset in ERROR (exit 2, as data verify and run refuse them): a script
// or CI step that lists the specs and data must not read such a table as
// a pass.
func listFailure(invalid, broken []string, dataDir string) error {
	var parts []string
	if len(invalid) > 0 {
		parts = append(parts, fmt.Sprintf("%d INVALID spec(s): %s (dprepro run names the file, line and key)", len(invalid), strings.Join(invalid, ", ")))
	}
	if len(broken) > 0 {
		parts = append(parts, fmt.Sprintf("%d dataset(s) in ERROR: %s (dprepro data verify %s --data-dir %s says which file and why)", len(broken), strings.Join(broken, ", "), strings.Join(broken, " "), dataDir))
	}
	if len(parts) == 0 {
		return nil
	}
	return usagef("list: %s", strings.Join(parts, "; "))
}

// extensionPoint is one registry as `dprepro list` shows it.
type extensionPoint struct {
	what, key string
	names     []string
}

// extensionPoints lists the registries of the harness with the names they
// hold now: the built-ins and whatever a module registered before
// cli.Main.
func extensionPoints() []extensionPoint {
	return []extensionPoint{
		{"experiment kind", "kind", runner.Kinds.Names()},
		{"dataset (see above)", "data.datasets", datasets.Names()},
		{"private learner (cv-tuning, learner-comparison)", "tuning.learners, comparison.learners (parameters: [[methods]] without command)", learners.Signatures()},
		{"tuning method (cv-tuning, histogram-tuning)", "tuning.methods", selection.Names()},
		{"hypothesis generator (expost-sweep)", "accuracy_first.generator", generators.Names()},
		{"confidence-interval method (ci-coverage)", "confidence_intervals.methods", cimethods.Names()},
	}
}

// describeStatus summarizes a dataset's files as `dprepro list` shows
// them, from the states datasets.Inspect gives (those `data verify` and
// `run` use): real and verified; real, present and not pinned (with any
// record-count warning); an error naming the state and the path; or absent,
// with what a run then does (named: whether the directory was named).
func describeStatus(st []datasets.FileStatus, err error, named bool) (status, files string) {
	if err != nil {
		return "error: " + err.Error(), ""
	}
	var names, failures, warnings []string
	verified, unpinned, absent := 0, 0, 0
	for _, s := range st {
		names = append(names, s.Name)
		switch {
		case s.State.Failed():
			failures = append(failures, s.State.String()+": "+s.Err.Error())
		case s.State == datasets.StateVerified:
			verified++
		case s.State == datasets.StateUnpinned:
			unpinned++
		default:
			absent++
		}
		if s.Warning != "" {
			warnings = append(warnings, "warning: "+s.Warning)
		}
	}
	files = strings.Join(names, ", ")
	switch {
	case len(failures) > 0:
		return "ERROR: " + strings.Join(failures, "; "), files
	case verified == len(st):
		return "real, verified", files
	case verified+unpinned == len(st):
		return strings.Join(append([]string{"real, present, not pinned"}, warnings...), "; "), files
	case absent == len(st) && named:
		return "absent: runs need data.synthetic = \"allow\" for the stand-in", files
	case absent == len(st):
		return "absent: runs use the synthetic stand-in", files
	}
	return "partly present: the real data cannot be loaded", files
}

func cmdDataFetch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	names, d, err := dataArgs("data fetch", args, stderr)
	if err != nil {
		return err
	}
	dir := d.Path
	fmt.Fprintf(stderr, "dprepro: data: %s\n", d)
	client := &http.Client{Timeout: 30 * time.Minute}
	all := len(names) == len(fileDatasets()) && !slices.ContainsFunc(args, func(a string) bool { return slices.Contains(names, a) })
	var failed []string
	byHand := false
	for _, n := range names {
		if ctx.Err() != nil {
			break // interrupted: the datasets not fetched yet are left alone
		}
		fmt.Fprintf(stderr, "dprepro: fetching %s into %s\n", n, dir)
		if err := datasets.Fetch(ctx, client, n, dir, stderr); err != nil {
			fmt.Fprintf(stderr, "dprepro: %s: %v\n", n, err)
			if all && errors.Is(err, datasets.ErrNoDownload) {
				// Fetching everything skips the datasets the user must
				// supply (IPUMS); naming one makes its absence an error.
				fmt.Fprintf(stdout, "%s: not downloadable; supply the file yourself (see above)\n", n)
				continue
			}
			failed = append(failed, n)
			if ctx.Err() == nil && !errors.Is(err, datasets.ErrNoDownload) {
				byHand = printByHand(stderr, n, dir) || byHand
			}
			continue
		}
		fmt.Fprintf(stdout, "%s: fetched and verified\n", n)
	}
	if len(failed) > 0 {
		msg := fmt.Sprintf("data fetch: %d of %d datasets failed: %s", len(failed), len(names), strings.Join(failed, ", "))
		if byHand {
			msg += fmt.Sprintf(" (offline, or behind a proxy? each file can also be copied into %s by hand, as said above)", dir)
		}
		return errors.New(msg)
	}
	return nil
}

// printByHand says, for a dataset whose download failed (no network, a
// proxy, a moved URL), that its files can be copied into the data folder
// by hand instead: each file not yet there, where to get it, and how to
// check it. It reports whether it named a file.
func printByHand(w io.Writer, name, dir string) bool {
	e, ok := datasets.Lookup(name)
	if !ok {
		return false
	}
	present := map[string]bool{}
	if st, err := datasets.Inspect(name, dir); err == nil {
		for _, s := range st {
			present[s.Name] = s.State.Usable()
		}
	}
	named := false
	for _, f := range e.Files {
		if present[f.Name] || len(f.Sources) == 0 {
			continue
		}
		if !named {
			fmt.Fprintf(w, "dprepro: %s: the download failed; the files can also be copied into %s by hand:\n", name, dir)
			named = true
		}
		fmt.Fprintf(w, "  %s (or %s.gz), from %s\n", f.Name, f.Name, f.Sources[0])
	}
	if named {
		fmt.Fprintf(w, "  then `dprepro data verify %s --data-dir %s` checks them (against the pinned SHA-256 where the registry has one)\n", name, dir)
	}
	return named
}

// cmdDataVerify classifies every file of the named datasets (all by
// default) as datasets.Inspect does, reading each present file to the end.
// It fails (exit status 2) only for a file that is there but bad: a
// checksum mismatch, a corrupt .gz, something that is not a regular file, a
// broken link, an unreadable file. Absent files and files with no pinned
// checksum are reported, not failures; a record count far from the
// documented one is a warning on stderr.
func cmdDataVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	names, dir, err := dataArgs("data verify", args, stderr)
	if err != nil {
		return err
	}
	if err := dir.Check(); err != nil {
		return usageError{fmt.Errorf("data verify: %w", err)}
	}
	fmt.Fprintf(stdout, "data: %s\n\n", dir)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "DATASET\tFILE\tSTATE\tDETAIL\n")
	var bad, warnings []string
	for _, n := range names {
		st, err := datasets.Inspect(n, dir.Path)
		if err != nil {
			return usageError{err}
		}
		for _, s := range st {
			var detail string
			switch {
			case s.State.Failed():
				detail = s.Err.Error()
				bad = append(bad, s.Path)
			case s.State == datasets.StateVerified:
				detail = "sha256 " + s.SHA256 + " (" + s.Path + ")"
			case s.State == datasets.StateUnpinned:
				detail = fmt.Sprintf("sha256 %s (%s), %d records, no pinned checksum to verify against", s.SHA256, s.Path, s.Records)
			}
			if s.Warning != "" {
				warnings = append(warnings, s.Warning)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n, s.Name, s.State, detail)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "dprepro: data verify: warning: %s\n", w)
	}
	if len(bad) > 0 {
		return usagef("data verify: %d file(s) fail verification: %s", len(bad), strings.Join(bad, ", "))
	}
	return nil
}

// dataArgs parses the flags and dataset names of a data subcommand: no
// names means every dataset with registry files (a Go provider's dataset
// has none). The data directory comes from datasets.ResolveDataDir
// (--data-dir, $DPREPRO_DATA, the user cache).
func dataArgs(cmd string, args []string, stderr io.Writer) (names []string, dir datasets.DataDir, err error) {
	var f runFlags
	fs := newFlagSet(cmd, stderr)
	fs.StringVar(&f.dataDir, "data-dir", "", "data directory (default $DPREPRO_DATA, else the user cache)")
	if names, err = parseInterleaved(fs, args); err != nil {
		return nil, dir, err
	}
	if len(names) == 0 {
		names = fileDatasets()
	}
	for _, n := range names {
		if _, ok := datasets.Lookup(n); ok {
			continue
		}
		if _, ok := datasets.Registered(n); ok {
			return nil, dir, usagef("%s: dataset %q comes from a Go provider: it has no files to %s", cmd, n, strings.TrimPrefix(cmd, "data "))
		}
		return nil, dir, usagef("%s: %s", cmd, experiments.Unknown("dataset", n, fileDatasets()))
	}
	return names, datasets.ResolveDataDir(f.dataDir, os.Getenv), nil
}

// fileDatasets lists the registered datasets that have files (the
// built-in ones; not those of Go providers).
func fileDatasets() []string {
	var names []string
	for _, n := range datasets.Names() {
		if _, ok := datasets.Lookup(n); ok {
			names = append(names, n)
		}
	}
	return names
}
