package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/dprepro/dprepro/core/mech"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/cicoverage"
	"github.com/dprepro/dprepro/internal/cvtune"
	"github.com/dprepro/dprepro/internal/expostsweep"
	"github.com/dprepro/dprepro/internal/mechbounds"
	"github.com/dprepro/dprepro/internal/privaudit"
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
	shard    string   // "i/N", or from the scheduler's environment
	shards   int      // the declared count with JOB_COMPLETION_INDEX
	merge    []string // merge: the shards' output folders
	secure   bool     // --secure-noise
}

func (f *runFlags) register(fs *flag.FlagSet, withSpecs bool) {
	fs.StringVar(&f.profile, "profile", "quick", "profile: quick or paper")
	fs.StringVar(&f.out, "out", filepath.Join("results", "runs"), "output directory")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "parallel workers")
	fs.StringVar(&f.seed, "seed", "", "root seed overriding the spec's (non-negative integer)")
	fs.StringVar(&f.dataDir, "data-dir", "", "data directory (default $DPREPRO_DATA, else the user cache)")
	fs.DurationVar(&f.interval, "heartbeat", 5*time.Second, "progress line interval when stderr is not a terminal")
	fs.StringVar(&f.shard, "shard", "", "run shard i/N of the units only (0-based; default from SLURM_ARRAY_TASK_ID/COUNT or JOB_COMPLETION_INDEX with --shard-count)")
	fs.IntVar(&f.shards, "shard-count", 0, "number of shards when the index comes from JOB_COMPLETION_INDEX (Kubernetes indexed jobs)")
	fs.BoolVar(&f.secure, "secure-noise", false, "draw every release's noise from crypto/rand through floating-point-safe constructions where available (results do not replay; see the manifest's noise)")
	if withSpecs {
		fs.StringVar(&f.specs, "specs", "experiments", "directory of spec files")
	}
}

// check validates the flags every running command shares and returns the
// --seed override (−1 when not given).
func (f *runFlags) check() (seed int64, err error) {
	if f.workers < 1 {
		return 0, usagef("--workers must be >= 1 (got %d)", f.workers)
	}
	if f.profile != "quick" && f.profile != "paper" {
		return 0, usagef("--profile must be quick or paper (got %q)", f.profile)
	}
	if f.seed == "" {
		return -1, nil
	}
	seed, err = strconv.ParseInt(f.seed, 10, 64)
	if err != nil || seed < 0 {
		return 0, usagef("--seed must be a non-negative integer (got %q)", f.seed)
	}
	return seed, nil
}

// shardOf returns the shard to run: --shard i/N, else Slurm's array task
// (SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT),
// else a Kubernetes indexed job's JOB_COMPLETION_INDEX of --shard-count; the
// zero Shard (all units) when none is set.
func (f *runFlags) shardOf(getenv func(string) string) (runner.Shard, error) {
	parse := func(what, v string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, usagef("%s: %q is not an integer", what, v)
		}
		return n, nil
	}
	var sh runner.Shard
	var err error
	switch {
	case f.shard != "":
		i, n, ok := strings.Cut(f.shard, "/")
		if !ok {
			return sh, usagef("--shard must be i/N (got %q)", f.shard)
		}
		if sh.Index, err = parse("--shard", i); err != nil {
			return sh, err
		}
		if sh.Count, err = parse("--shard", n); err != nil {
			return sh, err
		}
	case getenv("SLURM_ARRAY_TASK_ID") != "" && getenv("SLURM_ARRAY_TASK_COUNT") != "":
		if sh.Index, err = parse("SLURM_ARRAY_TASK_ID", getenv("SLURM_ARRAY_TASK_ID")); err != nil {
			return sh, err
		}
		if m := getenv("SLURM_ARRAY_TASK_MIN"); m != "" {
			lo, err := parse("SLURM_ARRAY_TASK_MIN", m)
			if err != nil {
				return sh, err
			}
			sh.Index -= lo
		}
		if sh.Count, err = parse("SLURM_ARRAY_TASK_COUNT", getenv("SLURM_ARRAY_TASK_COUNT")); err != nil {
			return sh, err
		}
	case getenv("JOB_COMPLETION_INDEX") != "" && f.shards > 0:
		if sh.Index, err = parse("JOB_COMPLETION_INDEX", getenv("JOB_COMPLETION_INDEX")); err != nil {
			return sh, err
		}
		sh.Count = f.shards
	default:
		return sh, nil
	}
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return sh, usagef("shard %d/%d: want 0 <= i < N", sh.Index, sh.Count)
	}
	return sh, nil
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
	seed, err := f.check()
	if err != nil {
		return err
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
		if f.secure {
			s.Output.SecureNoise = true
		}
		specs = append(specs, s)
	}
	dataDir := f.dataDirectory()
	var shard runner.Shard
	switch {
	case len(f.merge) > 0 && f.shard != "":
		return usagef("merge: --shard does not apply")
	case len(f.merge) == 0:
		var err error
		if shard, err = f.shardOf(os.Getenv); err != nil {
			return err
		}
	}
	var ciDirs []string // runs of ci-coverage specs, for the figures across them
	for _, s := range specs {
		exp, err := load(s, dataDir)
		if err != nil {
			return usageError{err}
		}
		for _, w := range exp.Warnings() {
			fmt.Fprintf(stderr, "dprepro: %s: WARNING: %s\n", s.ID, w)
		}
		if len(f.merge) > 0 {
			if err := mergeShards(s, exp, f.merge, f.out, stdout); err != nil {
				return err
			}
		}
		dir, err := runSecure(s, func() (string, error) {
			return runner.Run(ctx, exp, runner.Options{OutDir: f.out, Workers: f.workers, Stderr: stderr, Interval: f.interval, Shard: shard})
		}, stderr)
		if err != nil {
			return err
		}
		if shard.Sharded() {
			fmt.Fprintf(stdout, "%s: shard %d/%d done in %s; when every shard is done: dprepro merge SPEC --shards DIR,DIR,...\n", s.ID, shard.Index, shard.Count, filepath.Join(dir, ".checkpoint"))
			continue
		}
		fmt.Fprintf(stdout, "%s: wrote %s\n", s.ID, dir)
		if s.Kind == experiments.KindCICoverage {
			ciDirs = append(ciDirs, dir)
		}
	}
	if len(ciDirs) > 1 && !shard.Sharded() {
		dir, err := ciFigures(ciDirs, f.out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Wang, Kifer & Lee Figures 1-4 across %d runs: wrote %s\n", len(ciDirs), dir)
	}
	return nil
}

// cmdMerge combines the checkpoints of the shard runs of each spec (their
// --out folders, in --shards) into OUT/<id> and finishes the run there from
// them: rows.csv and summary.csv are those of the unsharded run, byte for
// byte. The shards must all be done, by the same build.
func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlagSet("merge", stderr)
	f.register(fs, false)
	shards := fs.String("shards", "", "comma-separated output folders of the shard runs")
	specs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(specs) == 0 {
		return usagef("merge: name at least one spec file")
	}
	for _, d := range strings.Split(*shards, ",") {
		if d = strings.TrimSpace(d); d != "" {
			f.merge = append(f.merge, d)
		}
	}
	if len(f.merge) == 0 {
		return usagef("merge: --shards must name the shard runs' output folders")
	}
	return runSpecs(ctx, specs, &f, stdout, stderr)
}

// mergeShards writes the union of the shards' checkpoints of spec s into
// out/<id>/.checkpoint and checks that it holds every unit.
func mergeShards(s *experiments.Spec, exp runner.Experiment, shards []string, out string, stdout io.Writer) error {
	var srcs []string
	for _, d := range shards {
		srcs = append(srcs, filepath.Join(d, s.ID, ".checkpoint"))
	}
	n, err := results.MergeCheckpoints(filepath.Join(out, s.ID, ".checkpoint"), runner.Header(s), srcs, exp.Units())
	if errors.Is(err, results.ErrIncompleteMerge) {
		return fmt.Errorf("%s: %w (run the unfinished shard again, then merge)", s.ID, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.ID, err)
	}
	fmt.Fprintf(stdout, "%s: merged %d units from %d shards\n", s.ID, n, len(shards))
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

// runSecure runs fn with core/mech's secure mode set as the spec asks
// (output.secure_noise, or --secure-noise), and restores the mode after.
func runSecure(s *experiments.Spec, fn func() (string, error), stderr io.Writer) (string, error) {
	if s.Output.SecureNoise {
		fmt.Fprintf(stderr, "dprepro: %s: secure noise: releases draw from crypto/rand through floating-point-safe constructions where available; the results will not replay (manifest.json lists the constructions)\n", s.ID)
	}
	prev := mech.SetSecureNoise(s.Output.SecureNoise)
	defer mech.SetSecureNoise(prev)
	return fn()
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
	case experiments.KindAudit:
		return privaudit.New(s)
	}
	return nil, fmt.Errorf("%s: kind %q has no runner", s.ID, s.Kind)
}
