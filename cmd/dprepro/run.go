package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/cicoverage"
	"github.com/dprepro/dprepro/internal/cvtune"
	"github.com/dprepro/dprepro/internal/expostsweep"
	"github.com/dprepro/dprepro/internal/mechbounds"
	"github.com/dprepro/dprepro/internal/runner"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
)

func init() {
	experiments.DatasetNames = datasets.Names
}

// runFlags are the flags shared by run and reproduce.
type runFlags struct {
	profile  string
	out      string
	workers  int
	seed     string
	dataDir  string
	specs    string
	interval time.Duration
}

func (f *runFlags) register(fs *flag.FlagSet, withSpecs bool) {
	fs.StringVar(&f.profile, "profile", "quick", "profile: quick or paper")
	fs.StringVar(&f.out, "out", filepath.Join("results", "runs"), "output directory")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "parallel workers")
	fs.StringVar(&f.seed, "seed", "", "root seed overriding the spec's (non-negative integer)")
	fs.StringVar(&f.dataDir, "data-dir", "", "data directory (default $DPREPRO_DATA, else the user cache)")
	fs.DurationVar(&f.interval, "heartbeat", 5*time.Second, "progress line interval when stderr is not a terminal")
	if withSpecs {
		fs.StringVar(&f.specs, "specs", "experiments", "directory of spec files")
	}
}

func (f *runFlags) dataDirectory() string {
	if f.dataDir != "" {
		return f.dataDir
	}
	return datasets.DefaultDataDir()
}

// parseInterleaved parses flags that may stand before, between or after the
// positional arguments, which it returns.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, usageError{err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlagSet("run", stderr)
	f.register(fs, false)
	specs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(specs) == 0 {
		return usagef("run: name at least one spec file")
	}
	return runSpecs(ctx, specs, &f, stdout, stderr)
}

func cmdReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlagSet("reproduce", stderr)
	f.register(fs, true)
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("reproduce: unexpected argument %q (it runs every spec in --specs)", rest[0])
	}
	specs, err := specFiles(f.specs)
	if err != nil {
		return err
	}
	return runSpecs(ctx, specs, &f, stdout, stderr)
}

func specFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil {
		return nil, usagef("specs: %v", err)
	}
	if len(files) == 0 {
		return nil, usagef("specs: no *.toml files in %s", dir)
	}
	sort.Strings(files)
	return files, nil
}

// runSpecs loads and validates every spec first (so a bad spec fails before
// any work), then runs them one after the other.
func runSpecs(ctx context.Context, files []string, f *runFlags, stdout, stderr io.Writer) error {
	if f.workers < 1 {
		return usagef("--workers must be >= 1 (got %d)", f.workers)
	}
	if f.profile != "quick" && f.profile != "paper" {
		return usagef("--profile must be quick or paper (got %q)", f.profile)
	}
	var seed int64 = -1
	if f.seed != "" {
		s, err := strconv.ParseInt(f.seed, 10, 64)
		if err != nil || s < 0 {
			return usagef("--seed must be a non-negative integer (got %q)", f.seed)
		}
		seed = s
	}
	var specs []*experiments.Spec
	ids := map[string]string{}
	for _, file := range files {
		s, err := experiments.Load(file, f.profile)
		if err != nil {
			return usageError{err}
		}
		if prev, ok := ids[s.ID]; ok {
			return usagef("%s and %s have the same id %q", prev, file, s.ID)
		}
		ids[s.ID] = file
		if seed >= 0 {
			s.Seed = seed
		}
		specs = append(specs, s)
	}
	dataDir := f.dataDirectory()
	var ciDirs []string // runs of ci-coverage specs, for the figures across them
	for _, s := range specs {
		exp, err := load(s, dataDir)
		if err != nil {
			return usageError{err}
		}
		for _, w := range exp.Warnings() {
			fmt.Fprintf(stderr, "dprepro: %s: WARNING: %s\n", s.ID, w)
		}
		dir, err := runner.Run(ctx, exp, runner.Options{OutDir: f.out, Workers: f.workers, Stderr: stderr, Interval: f.interval})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: wrote %s\n", s.ID, dir)
		if s.Kind == experiments.KindCICoverage {
			ciDirs = append(ciDirs, dir)
		}
	}
	if len(ciDirs) > 1 {
		dir, err := ciFigures(ciDirs, f.out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Wang, Kifer & Lee Figures 1-4 across %d runs: wrote %s\n", len(ciDirs), dir)
	}
	return nil
}

// ciFigures draws Figures 1–4 of Wang, Kifer & Lee from the summaries of
// the ci-coverage runs in dirs into out/wkl-figures.
func ciFigures(dirs []string, out string) (string, error) {
	var rows []results.SummaryRow
	for _, d := range dirs {
		r, err := results.ReadSummaryCSV(filepath.Join(d, "summary.csv"))
		if err != nil {
			return "", err
		}
		rows = append(rows, r...)
	}
	dir := filepath.Join(out, "wkl-figures")
	for _, fs := range cicoverage.PaperFigures() {
		has := false
		for _, r := range rows {
			has = has || slices.Contains(fs.Methods, r.Method)
		}
		if !has {
			continue // no run requested these methods
		}
		if err := plots.Render(dir, fs, rows); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// load builds the runnable experiment of a spec.
func load(s *experiments.Spec, dataDir string) (runner.Experiment, error) {
	switch s.Kind {
	case experiments.KindCVTuning:
		return cvtune.New(s, cvtune.Options{DataDir: dataDir})
	case experiments.KindExPost:
		return expostsweep.New(s, expostsweep.Options{DataDir: dataDir})
	case experiments.KindCICoverage:
		return cicoverage.New(s, cicoverage.Options{DataDir: dataDir})
	case experiments.KindHistogram:
		return cvtune.NewHist(s, cvtune.Options{DataDir: dataDir})
	case experiments.KindMechanisms:
		return mechbounds.New(s)
	}
	return nil, fmt.Errorf("%s: kind %q has no runner", s.ID, s.Kind)
}
