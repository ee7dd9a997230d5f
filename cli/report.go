package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dprepro/dprepro/docs"
	"github.com/dprepro/dprepro/report"
	"github.com/dprepro/dprepro/runner"
)

// cmdReport writes OUT/report/index.html and OUT/report/report.md from the
// finished runs under OUT (see package report).
func cmdReport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stderr)
	readme := fs.Bool("readme", false, "print the README's generated summary of the claims of OUT (Markdown, between the README's claims-summary markers) instead of writing the report")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("report: name one output folder, e.g. the --out of reproduce (got %d arguments)", len(pos))
	}
	if *readme {
		s, err := readmeSummary(pos[0])
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, s)
		return err
	}
	dir, err := writeReport(pos[0], stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: wrote %s and %s\n", filepath.Join(dir, "index.html"), filepath.Join(dir, "report.md"))
	return nil
}

// writeReport writes the report of the runs under out and returns its
// folder; the runs that did not finish, named at the report's top, are
// also named on stderr. A folder that is missing or holds no run is bad
// input (exit 2).
func writeReport(out string, stderr io.Writer) (string, error) {
	if fi, err := os.Stat(out); err != nil || !fi.IsDir() {
		return "", usagef("report: %s is not a folder", out)
	}
	r, err := report.Load(out, report.Options{
		Analyses: report.ParseAnalyses(docs.AnalysisPath, docs.Analysis),
		Extra:    acrossReport(out),
	})
	if errors.Is(err, report.ErrNoRuns) {
		return "", usagef("report: %v", err)
	}
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	dir, err := r.Write()
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	if n := len(r.Unfinished); n > 0 {
		var names []string
		for _, u := range r.Unfinished {
			names = append(names, u.Dir+" ("+u.State+")")
		}
		counted := fmt.Sprintf("their claims, %d, counted as not run", r.Counts.NotRun)
		if k := r.UnknownClaims(); k > 0 {
			counted += fmt.Sprintf("; the claims of %d of them are unknown (no record of the attempt) and counted nowhere", k)
		}
		fmt.Fprintf(stderr, "dprepro: report: %d of the runs in %s did not finish, and the report names them at its top (%s): %s\n",
			n, out, counted, strings.Join(names, ", "))
	}
	return dir, nil
}

// readmeSummary is report.ReadmeSummary of the runs under out, whose
// analyses link to docs/analysis.md.
func readmeSummary(out string) (string, error) {
	if fi, err := os.Stat(out); err != nil || !fi.IsDir() {
		return "", usagef("report: %s is not a folder", out)
	}
	r, err := report.Load(out, report.Options{Analyses: report.ParseAnalyses(docs.AnalysisPath, docs.Analysis)})
	if errors.Is(err, report.ErrNoRuns) {
		return "", usagef("report: %v", err)
	}
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return report.ReadmeSummary(r, docs.AnalysisPath), nil
}

// acrossReport lists the folders of figures drawn across the runs of out
// that the kinds show in the report (runner.AcrossKind with a report
// title): Wang, Kifer & Lee's Figures 1–4 (see acrossFigures).
func acrossReport(out string) []report.ExtraFigures {
	var extra []report.ExtraFigures
	for _, name := range runner.Kinds.Names() {
		k, _ := runner.Kinds.Lookup(name)
		a, ok := k.(runner.AcrossKind)
		if !ok {
			continue
		}
		folder, title := a.AcrossFolder()
		if folder == "" || title == "" {
			continue
		}
		dirs, _ := filepath.Glob(filepath.Join(out, folder, "*"))
		sort.Strings(dirs)
		for _, d := range dirs {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				extra = append(extra, report.ExtraFigures{Kind: name, Dir: d, Title: title + " (" + filepath.Base(d) + ")"})
			}
		}
	}
	return extra
}
