package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
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
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// runFlags are the flags of the commands that run specs; each command
// registers the groups it accepts, so its help lists only those.
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
	trace    bool     // --trace-privacy
	report   bool     // write OUT/report/ at the end (reproduce)
	set      []string // --set key=value (run), in order
	only     string   // --only m1,m2 (run)
	prof     profiler // --cpuprofile, --memprofile: started by check
}

// stopProfiles ends the profiles check started (a no-op when none was),
// joining a failure to write them into *err. Every command that
// registers the run flags defers it.
func (f *runFlags) stopProfiles(stderr io.Writer, err *error) {
	if perr := f.prof.stop(stderr); perr != nil {
		*err = errors.Join(*err, perr)
	}
}

// options returns the spec changes of --set and --only.
func (f *runFlags) options() experiments.LoadOptions {
	var o experiments.LoadOptions
	o.Set = f.set
	for _, m := range strings.Split(f.only, ",") {
		if m = strings.TrimSpace(m); m != "" {
			o.Only = append(o.Only, m)
		}
	}
	return o
}

// repeated is a flag.Value that collects every use of a repeatable flag.
type repeated struct{ vals *[]string }

func (r repeated) String() string {
	if r.vals == nil {
		return ""
	}
	return strings.Join(*r.vals, " ")
}

func (r repeated) Set(v string) error { *r.vals = append(*r.vals, v); return nil }

// registerOverrides registers run's --set and --only.
func (f *runFlags) registerOverrides(fs *flag.FlagSet) {
	fs.Var(repeated{&f.set}, "set", "change the spec for this run: `key=value`, a dotted key and a TOML value (e.g. tuning.epsilons=[0.1,1], cv.folds=5); repeatable; validated like the file; the run's profile becomes <profile>.set-<hash>")
	fs.StringVar(&f.only, "only", "", "run only these `methods` (comma-separated names from the spec's method lists, e.g. its learners); the run's profile becomes <profile>.set-<hash>")
}

// registerRun registers the flags every running command has.
func (f *runFlags) registerRun(fs *flag.FlagSet) {
	fs.StringVar(&f.profile, "profile", "quick", "profile: quick, paper, or another `name` the spec defines (a spec without a quick profile runs as written)")
	fs.StringVar(&f.out, "out", filepath.Join("results", "runs"), "output `dir`: runs go to DIR/<spec id>/<profile>-seed<seed>/")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "parallel `workers`")
	fs.StringVar(&f.seed, "seed", "", "root `seed` overriding the spec's (an integer from 0 to 2^63−1 = 9223372036854775807)")
	fs.DurationVar(&f.interval, "heartbeat", 5*time.Second, "progress line `interval` when stderr is not a terminal")
	fs.BoolVar(&f.secure, "secure-noise", false, "draw every release's noise from crypto/rand through floating-point-safe constructions where available (results do not replay; see the manifest's noise)")
	fs.StringVar(&f.prof.cpuPath, "cpuprofile", "", "write a pprof CPU profile of the whole command to `file` (read it with go tool pprof FILE)")
	fs.StringVar(&f.prof.memPath, "memprofile", "", "write a pprof heap profile to `file` at the end of the command, after a garbage collection (go tool pprof FILE)")
	fs.BoolVar(&f.trace, "trace-privacy", false, "write privacy-trace.csv beside each run: every release its units drew (mechanism, scale, sensitivity, guarantee, records, stream), to audit the ledger against the draws (no bit of the results changes)")
}

// registerData registers --data-dir.
func (f *runFlags) registerData(fs *flag.FlagSet) {
	fs.StringVar(&f.dataDir, "data-dir", "", "data `dir` (default $DPREPRO_DATA, else the per-user directory; see dprepro help)")
}

// registerShard registers the sharding flags of run.
func (f *runFlags) registerShard(fs *flag.FlagSet) {
	fs.StringVar(&f.shard, "shard", "", "run shard `i/N` of the units only (0-based), or \"auto\": the index from the scheduler (SLURM_ARRAY_TASK_ID/_MIN/_COUNT, or JOB_COMPLETION_INDEX with --shard-count)")
	fs.IntVar(&f.shards, "shard-count", 0, "number of shards when the index comes from JOB_COMPLETION_INDEX (Kubernetes indexed jobs)")
}

// check validates the flags every running command shares and returns the
// --seed override (−1 when not given), and applies $DPREPRO_MEMORY_BUDGET
// (before any spec is loaded: Load checks the memory estimate). The
// profile name is checked against the spec when it is loaded. Last, it
// creates the --cpuprofile and --memprofile files (a bad path: exit 2,
// before any work) and starts the CPU profile; the command's deferred
// stopProfiles ends them.
func (f *runFlags) check() (seed int64, err error) {
	seed, err = f.checkRun()
	if err != nil {
		return 0, err
	}
	if err := f.prof.start(); err != nil {
		return 0, err
	}
	return seed, nil
}

func (f *runFlags) checkRun() (seed int64, err error) {
	if err := applyMemoryBudget(os.Getenv); err != nil {
		return 0, err
	}
	if f.workers < 1 {
		return 0, usagef("--workers must be >= 1 (got %d)", f.workers)
	}
	if f.profile == "" {
		return 0, usagef("--profile must name a profile (quick, paper, or one the spec defines)")
	}
	if f.seed == "" {
		return -1, nil
	}
	seed, err = strconv.ParseInt(f.seed, 10, 64)
	if err != nil || seed < 0 {
		return 0, usagef("--seed must be an integer from 0 to 2^63−1 = %d (got %q)", int64(math.MaxInt64), f.seed)
	}
	return seed, nil
}

// shardOf returns the shard to run: --shard i/N; with --shard auto, Slurm's
// array task (SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN of
// SLURM_ARRAY_TASK_COUNT), else a Kubernetes indexed job's
// JOB_COMPLETION_INDEX of --shard-count (an error when neither is set); the
// zero Shard (all units) without --shard. The scheduler's variables are read
// only on request: an array job that sweeps seeds (run --seed
// $SLURM_ARRAY_TASK_ID) must not be sharded behind the user's back.
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
	case f.shard == "":
		return sh, nil
	case f.shard != "auto":
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
		return sh, usagef("--shard auto: no scheduler index (SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT, or JOB_COMPLETION_INDEX with --shard-count N)")
	}
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return sh, usagef("shard %d/%d: want 0 <= i < N", sh.Index, sh.Count)
	}
	return sh, nil
}

// parseInterleaved parses flags that may stand before, between or after the
// positional arguments, which it returns. -h returns a helpRequest holding
// fs, so that the command's help lists exactly its flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, helpRequest{fs}
			}
			return nil, usagef("%v (see dprepro help %s)", err, fs.Name())
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

// newFlagSet returns a flag set that reports errors only through
// parseInterleaved's return value (no usage dump on stderr).
func newFlagSet(name string, _ io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var f runFlags
	defer f.stopProfiles(stderr, &err)
	fs := newFlagSet("run", stderr)
	f.registerRun(fs)
	f.registerData(fs)
	f.registerShard(fs)
	f.registerOverrides(fs)
	names, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return usagef("run: name at least one spec file or built-in spec id (see dprepro list)")
	}
	if !f.options().Empty() && len(names) > 1 {
		return usagef("run: --set and --only change one spec: name one (got %d)", len(names))
	}
	return runSpecs(ctx, names, &f, stdout, stderr)
}

func cmdReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var f runFlags
	defer f.stopProfiles(stderr, &err)
	fs := newFlagSet("reproduce", stderr)
	f.registerRun(fs)
	f.registerData(fs)
	fs.StringVar(&f.specs, "specs", "", "`dir` of spec files to run instead of the built-in specs")
	noReport := fs.Bool("no-report", false, "do not write OUT/report/ at the end (dprepro report OUT writes it later)")
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("reproduce: unexpected argument %q (it runs every built-in spec, or every spec in --specs DIR)", rest[0])
	}
	f.report = !*noReport
	var names []string
	if f.specs == "" {
		names = experiments.BuiltinIDs()
		fmt.Fprintf(stderr, "dprepro: specs: the %d built-in specs (experiments/ at build time; --specs DIR runs others)\n", len(names))
	} else if names, err = specFiles(f.specs); err != nil {
		return err
	}
	return runSpecs(ctx, names, &f, stdout, stderr)
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

// loadSpec loads a spec named on the command line: a file when one exists
// at that path, else the built-in spec of that id.
func loadSpec(name, profile string, o experiments.LoadOptions) (*experiments.Spec, error) {
	if st, err := os.Stat(name); err == nil && !st.IsDir() {
		return runner.Kinds.LoadWith(name, profile, o)
	}
	if experiments.IsBuiltin(name) {
		return runner.Kinds.LoadBuiltinWith(name, profile, o)
	}
	return nil, fmt.Errorf("spec: %s: no such file, and no built-in spec of that id (built in: %s)%s", name, strings.Join(experiments.BuiltinIDs(), ", "), experiments.Hint(name, experiments.BuiltinIDs()))
}

// loadSpecs loads and validates every named spec with the flags applied, so
// that a bad spec fails before any work.
func loadSpecs(names []string, f *runFlags, seed int64, stderr io.Writer) ([]*experiments.Spec, error) {
	var specs []*experiments.Spec
	ids := map[string]string{}
	for _, name := range names {
		s, err := loadSpec(name, f.profile, f.options())
		if err != nil {
			return nil, usageError{err}
		}
		if prev, ok := ids[s.ID]; ok {
			return nil, usagef("%s and %s have the same id %q", prev, name, s.ID)
		}
		ids[s.ID] = name
		if seed >= 0 {
			s.Seed = seed
		}
		if f.secure {
			s.Output.SecureNoise = true
			if err := s.CheckSecureNoise(); err != nil {
				return nil, usageError{err}
			}
		}
		if s.ProfileFallback {
			fmt.Fprintf(stderr, "dprepro: %s: the spec has no quick profile: --profile quick runs it as written\n", s.ID)
		}
		if err := s.CheckResources(f.workers); err != nil {
			return nil, usageError{err}
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// runSpecs runs the named specs one after the other. Before any work it
// loads and validates every spec, checks the data directory and every data
// file the specs need, and locks every run folder (so a second process
// aimed at one of them is refused at once, before it computes anything).
// A spec whose run fails does not stop the others; the failures are
// reported together at the end.
func runSpecs(ctx context.Context, names []string, f *runFlags, stdout, stderr io.Writer) error {
	seed, err := f.check()
	if err != nil {
		return err
	}
	specs, err := loadSpecs(names, f, seed, stderr)
	if err != nil {
		return err
	}
	dd, err := resolveData(f.dataDir, stderr)
	if err != nil {
		return err
	}
	if err := checkData(specs, dd); err != nil {
		return err
	}
	var shard runner.Shard
	merging := len(f.merge) > 0
	if !merging {
		if shard, err = f.shardOf(os.Getenv); err != nil {
			return err
		}
		if shard.Sharded() && f.trace {
			// A shard writes only its checkpoint, and the merge resumes
			// every unit: no process would write the trace.
			return usagef("--trace-privacy cannot be combined with --shard: a shard writes its checkpoint only, and the run that merges the shards computes no unit, so no trace would be written; trace the run unsharded")
		}
	} else if err := checkMerges(specs, f, dd); err != nil {
		return err
	}
	locks, err := lockRuns(f.out, specs, stderr)
	if err != nil {
		return err
	}
	defer func() {
		for _, l := range locks {
			l.Release()
		}
	}()
	attempts, prevAttempts := startAttempts(f.out, specs, stderr)

	var (
		across   []acrossRun // finished runs drawn in figures across runs (runner.AcrossRuns)
		failures []error
		entries  []indexEntry
		stand    standIns
	)
	var notStarted []string
	notBuilt := 0 // runs whose experiment could not be built
	// The command's runs share the units they would compute identically
	// (runner.Memo: the variability intervals of the WKL tables and sweeps).
	memo := runner.NewMemo()
	for i, s := range specs {
		runDir := runner.RunDir(f.out, s)
		if ctx.Err() != nil {
			notStarted = append(notStarted, s.ID)
			if notStartedAttempt(runDir, attempts[i], prevAttempts[i], stderr) {
				// The index lists it; a folder holding a finished run
				// keeps that run's entry (the folder is untouched).
				entry := newIndexEntry(f.out, s)
				entry.Finished = time.Now().UTC().Truncate(time.Second)
				entry.Status = "not started: the command was interrupted before it (run the same command again to run it)"
				entries = append(entries, entry)
			}
			continue
		}
		start := time.Now()
		entry := newIndexEntry(f.out, s)
		running(runDir, attempts[i], stderr)
		dir, exp, err := runOne(ctx, s, f, dd, shard, memo, stdout, stderr)
		units := 0
		if exp != nil {
			units = len(exp.Units())
		}
		endAttempt(ctx, runDir, attempts[i], prevAttempts[i], err, exp != nil, shard, units, stderr)
		entry.Finished = time.Now().UTC().Truncate(time.Second)
		entry.Seconds = time.Since(start).Round(time.Millisecond).Seconds()
		if exp != nil {
			entry.Data = describeData(exp.Datasets())
			stand.add(s.ID, exp.Datasets())
		}
		entry.Status = runStatus(ctx, err, exp != nil)
		if err != nil {
			entry.Error = err.Error()
			if exp == nil {
				notBuilt++
			} else if note := earlierRun(runDir); note != "" && !shard.Sharded() {
				entry.Status += "; " + note
			}
		}
		if err == nil && shard.Sharded() {
			entry.Status = fmt.Sprintf("shard %d/%d done", shard.Index, shard.Count)
		}
		// A shard refused because the folder holds a finished run left
		// the folder as it was: its entry stays too.
		if !errors.Is(err, runner.ErrFinishedRun) {
			entries = append(entries, entry)
		}
		switch {
		case err != nil && ctx.Err() != nil:
			failures = append(failures, err)
		case err != nil:
			failures = append(failures, err)
			if len(specs) > 1 {
				fmt.Fprintf(stderr, "dprepro: %s: FAILED: %v\n", s.ID, withoutID(s, err))
			}
		case shard.Sharded():
			fmt.Fprintf(stdout, "%s: shard %d/%d done in %s; when every shard is done: dprepro merge SPEC --shards DIR,DIR,...\n", s.ID, shard.Index, shard.Count, filepath.Join(dir, ".checkpoint"))
		default:
			fmt.Fprintf(stdout, "%s: wrote %s\n", s.ID, dir)
			// The papers' figures across runs are drawn from the runs of
			// the papers' calibration and preprocessing: a variant of a
			// table (sigma_floor, public bounds) would put a second curve
			// of the same method into its panels (its own figures are in
			// its run folder).
			if a, ok := exp.(runner.AcrossRuns); ok {
				if g, ok := a.Across(); ok {
					across = append(across, acrossRun{dir, exp, g})
				}
			}
		}
	}
	if ierr := updateIndex(f.out, entries); ierr != nil {
		fmt.Fprintf(stderr, "dprepro: WARNING: could not update the index of %s: %v\n", f.out, ierr)
	}
	if !shard.Sharded() && len(failures) == 0 && ctx.Err() == nil {
		if err := acrossFigures(across, f.out, seed, f.secure, stdout); err != nil {
			return err
		}
	}
	stand.report(stderr, len(specs)-len(notStarted)-notBuilt, len(notStarted), notBuilt, dd)
	var reportErr error
	if f.report {
		// The report of every run in the folder, those of this command
		// and any before it; those that did not finish are named at its
		// top, their claims counted as not run. Written after an
		// interrupt too: a report of an earlier command must not stand
		// for a folder whose runs are now unfinished.
		if dir, err := writeReport(f.out, stderr); err != nil {
			reportErr = err
		} else {
			fmt.Fprintf(stdout, "report: wrote %s (and report.md beside it)\n", filepath.Join(dir, "index.html"))
		}
	}
	if ctx.Err() != nil && reportErr != nil {
		fmt.Fprintf(stderr, "dprepro: %v\n", reportErr)
	}
	if ctx.Err() != nil && (len(failures) > 0 || len(notStarted) > 0) {
		msg := errors.Join(failures...).Error()
		if len(notStarted) > 0 {
			msg += fmt.Sprintf("\nnot started: %s (run the same command again to run them)", strings.Join(notStarted, ", "))
		}
		return fmt.Errorf("%w: %s", errInterrupted, strings.TrimPrefix(msg, "\n"))
	}
	if err := joinFailures(failures, len(specs)); err != nil {
		if reportErr != nil {
			fmt.Fprintf(stderr, "dprepro: %v\n", reportErr)
		}
		return err
	}
	return reportErr
}

// runStatus is the index status of a run that ended with err; loaded
// reports that its data loaded (otherwise its folder was not touched).
func runStatus(ctx context.Context, err error, loaded bool) string {
	switch {
	case err == nil:
		return "complete"
	case ctx.Err() != nil:
		return "interrupted"
	case !loaded:
		return "not run (an earlier run's files, if any, are untouched): " + firstLine(err.Error())
	}
	return "failed: " + firstLine(err.Error())
}

// runOne loads the data of one spec and runs it (or merges its shards),
// sharing identical units' results through memo. Its error names the spec
// once (Spec.Attribute): by the file, line and key at fault where one is
// known, else by the spec id.
func runOne(ctx context.Context, s *experiments.Spec, f *runFlags, dd dataDir, shard runner.Shard, memo *runner.Memo, stdout, stderr io.Writer) (string, runner.Experiment, error) {
	exp, err := load(s, dd)
	if err != nil {
		return "", nil, usageError{s.Attribute(err)}
	}
	// The estimate again, now with the n and d of every dataset as read
	// (each was checked with one worker before its matrix was built).
	if err := s.CheckResources(f.workers); err != nil {
		return "", nil, usageError{err}
	}
	for _, w := range slices.Concat(s.Warnings(), exp.Warnings()) {
		fmt.Fprintf(stderr, "dprepro: %s: WARNING: %s\n", s.ID, w)
	}
	if len(f.merge) > 0 {
		if err := mergeShards(s, exp, f.merge, f.out, stdout); err != nil {
			return "", exp, s.Attribute(err)
		}
	}
	dir, err := runSecure(s, func() (string, error) {
		return runner.Run(ctx, exp, runner.Options{OutDir: f.out, Workers: f.workers, Stderr: stderr, Interval: f.interval, Shard: shard, Locked: true, TracePrivacy: f.trace, Memo: memo})
	}, stderr)
	recordFailures(err, runner.RunDir(f.out, s))
	err = s.Attribute(err)
	if errors.Is(err, runner.ErrFinishedRun) {
		err = usageError{err}
	}
	return dir, exp, err
}

// joinFailures is the error of a command whose runs failed: exit 2 when
// every failure was bad input (a data file), else 1.
func joinFailures(failures []error, total int) error {
	if len(failures) == 0 {
		return nil
	}
	err := fmt.Errorf("%d of %d runs failed:\n%w", len(failures), total, errors.Join(failures...))
	if len(failures) == 1 {
		err = failures[0]
	}
	for _, e := range failures {
		if !errors.As(e, new(usageError)) {
			return err
		}
	}
	return usageError{err}
}

// withoutID returns err of spec s without its leading spec id, for a line
// that names the spec already ("dprepro: ID: FAILED: …"); an error at a
// key of the spec's file keeps its position.
func withoutID(s *experiments.Spec, err error) error {
	var se *experiments.SpecError
	if errors.As(err, &se) && se.Path == "" && se.Where == s.ID {
		return se.Err
	}
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// lockRuns takes the lock of every run folder of specs under out, or none:
// a folder in use by another process refuses the whole command at once
// (exit 2), naming the holder. An output folder that cannot be written (a
// file, a read-only file system, /proc, a path too long) is refused the
// same way, naming --out, before any unit runs.
func lockRuns(out string, specs []*experiments.Spec, stderr io.Writer) ([]*runner.DirLock, error) {
	if err := checkOut(out); err != nil {
		return nil, err
	}
	var locks []*runner.DirLock
	release := func() {
		for _, l := range locks {
			l.Release()
		}
	}
	for _, s := range specs {
		dir := runner.RunDir(out, s)
		l, err := runner.Lock(dir)
		if err != nil {
			release()
			if errors.Is(err, runner.ErrLocked) {
				return nil, usageError{s.Attribute(err)}
			}
			return nil, usagef("--out %s: cannot create the run folder %s of %s: %v", out, dir, s.ID, unwrapRunner(err))
		}
		locks = append(locks, l)
		if err := probeWrite(dir); err != nil {
			release()
			return nil, usagef("--out %s: cannot create a file in the run folder %s of %s: %v", out, dir, s.ID, err)
		}
		if l.TookOver != nil {
			fmt.Fprintf(stderr, "dprepro: %s: took over the lock of %s, left by a process that is no longer running (%s)\n", s.ID, dir, l.TookOver)
		}
	}
	return locks, nil
}

// checkOut refuses an output folder that cannot hold runs: an empty name,
// a path that is not a directory, one that cannot be created, or one in
// which no file can be created (a read-only file system, /proc, a folder
// without write permission). The folder is created if needed, as a run
// would.
func checkOut(out string) error {
	if out == "" {
		return usagef("--out must name a folder")
	}
	if st, err := os.Stat(out); err == nil && !st.IsDir() {
		return usagef("--out %s: not a directory (a file is there; name a folder)", out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return usagef("--out %s: cannot create it: %v", out, unwrapRunner(err))
	}
	if err := probeWrite(out); err != nil {
		return usagef("--out %s: cannot create a file in it: %v", out, err)
	}
	return nil
}

// probeWrite creates and removes a file in dir: whether a run can write
// there at all (permissions alone do not say it: a read-only mount, a
// pseudo file system, or root, whom permission bits do not stop).
func probeWrite(dir string) error {
	f, err := os.CreateTemp(dir, ".dprepro-probe-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	name := f.Name()
	err = f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	return err
}

// unwrapRunner returns the cause of a file-system error without the
// operation's own prefix (runner's "runner: mkdir X: …" reads "mkdir X: …").
func unwrapRunner(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe
	}
	return err
}

// cmdMerge combines the checkpoints of the shard runs of each spec (their
// --out folders, in --shards) into the run folder under --out and finishes
// the run there from them: rows.csv and summary.csv are those of the
// unsharded run, byte for byte. The shards must all be done, by the same
// build, on the same data.
func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var f runFlags
	defer f.stopProfiles(stderr, &err)
	fs := newFlagSet("merge", stderr)
	f.registerRun(fs)
	f.registerData(fs)
	shards := fs.String("shards", "", "comma-separated output `dirs` of the shard runs (their --out)")
	specs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(specs) == 0 {
		return usagef("merge: name at least one spec file or built-in spec id")
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

// checkMerges checks, before the command writes anything, every merge it
// is asked for: the --out folder, each spec's data (its experiment is
// built) and its shards (results.CheckShards). A merge it refuses is bad
// input (exit 2) and leaves nothing behind: no run folder, attempt record
// or index, and not --out itself when the command created it.
func checkMerges(specs []*experiments.Spec, f *runFlags, dd dataDir) (err error) {
	created := missingFrom(f.out)
	defer func() {
		if err != nil {
			unmake(f.out, created)
		}
	}()
	if err := checkOut(f.out); err != nil {
		return err
	}
	for _, s := range specs {
		exp, err := load(s, dd)
		if err != nil {
			return usageError{s.Attribute(err)}
		}
		err = results.CheckShards(runner.Header(exp), shardCheckpoints(s, f.merge), unitKeys(exp))
		if err != nil {
			return usageError{s.Attribute(mergeRefused(err))}
		}
	}
	return nil
}

// missingFrom returns the outermost folder of path that does not exist
// (what os.MkdirAll(path) would create first), or "" when path exists.
func missingFrom(path string) string {
	first := ""
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			return first
		}
		first = p
		if filepath.Dir(p) == p {
			return first
		}
	}
}

// unmake removes the folders from path up to top (missingFrom(path)
// before a command created them), those that are empty: what a refused
// command created.
func unmake(path, top string) {
	if top == "" {
		return
	}
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if os.Remove(p) != nil || p == top || filepath.Dir(p) == p {
			return
		}
	}
}

// shardCheckpoints returns the checkpoint folders of spec s's shard runs
// under the shards' output folders.
func shardCheckpoints(s *experiments.Spec, shards []string) []string {
	var srcs []string
	for _, d := range shards {
		srcs = append(srcs, filepath.Join(runner.RunDir(d, s), ".checkpoint"))
	}
	return srcs
}

// mergeRefused is the error of a merge whose shards were refused
// (results.MergeRefusal), as the command reports it: bad input (exit 2),
// like every other refusal, with advice for an unfinished shard.
func mergeRefused(err error) error {
	if errors.Is(err, results.ErrIncompleteMerge) {
		err = fmt.Errorf("%w (run the unfinished shard again, then merge)", err)
	}
	if errors.As(err, new(*results.MergeRefusal)) {
		return usageError{err}
	}
	return err
}

// mergeShards writes the union of the shards' checkpoints of spec s into
// its run folder's checkpoint and checks that it holds every unit.
func mergeShards(s *experiments.Spec, exp runner.Experiment, shards []string, out string, stdout io.Writer) error {
	n, err := results.MergeCheckpoints(filepath.Join(runner.RunDir(out, s), ".checkpoint"), runner.Header(exp), shardCheckpoints(s, shards), unitKeys(exp))
	if err != nil {
		// A refusal here (checkMerges accepted the shards) means that
		// they changed since: nothing was written all the same.
		return mergeRefused(err)
	}
	fmt.Fprintf(stdout, "%s: merged %d units from %d shards\n", s.ID, n, len(shards))
	return nil
}

// acrossName names the folder of figures across runs:
// <profile>[-seed<S>][-secure].
func acrossName(profile string, seed int64, secure bool) string {
	name := profile
	if seed >= 0 {
		name += fmt.Sprintf("-seed%d", seed)
	}
	if secure {
		name += "-secure"
	}
	return name
}

// acrossRun is a finished run drawn in figures across runs.
type acrossRun struct {
	dir   string
	exp   runner.Experiment
	group runner.AcrossGroup
}

// acrossFigures draws the figures across runs of each group of two runs or
// more (runner.AcrossRuns), in the order the groups first ran, from the
// runs' summaries, into out/<Folder>/<profile>[-seed<S>][-secure]/<Sub>:
// the papers' figures that put several specs' sweeps in one panel. The
// captions are completed from the group's first spec (profile, CI level);
// the legends' privacy notions come from the runs' ledgers.
func acrossFigures(runs []acrossRun, out string, seed int64, secure bool, stdout io.Writer) error {
	var order []runner.AcrossGroup
	byGroup := map[runner.AcrossGroup][]acrossRun{}
	for _, r := range runs {
		if byGroup[r.group] == nil {
			order = append(order, r.group)
		}
		byGroup[r.group] = append(byGroup[r.group], r)
	}
	for _, g := range order {
		group := byGroup[g]
		if len(group) < 2 {
			continue
		}
		var rows []results.SummaryRow
		var exps []runner.Experiment
		var dirs []string
		for _, r := range group {
			rs, err := results.ReadSummaryCSV(filepath.Join(r.dir, "summary.csv"))
			if err != nil {
				return err
			}
			rows, exps, dirs = append(rows, rs...), append(exps, r.exp), append(dirs, r.dir)
		}
		notions, err := ledgerNotions(dirs)
		if err != nil {
			return err
		}
		figs, title := group[0].exp.(runner.AcrossRuns).AcrossFigures(exps, rows)
		for i := range figs {
			figs[i].Notions = notions
		}
		spec := exps[0].Spec()
		dir := filepath.Join(out, g.Folder, acrossName(spec.Profile, seed, secure), g.Sub)
		if err := renderLocked(dir, figs, spec, rows); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: wrote %s\n", title, dir)
	}
	return nil
}

// ledgerNotions returns the privacy notion of each method of the runs in
// dirs, from their manifests' ledgers (plots.LedgerNotions), for the
// legends of figures drawn across runs.
func ledgerNotions(dirs []string) (map[string]string, error) {
	var ledger []results.LedgerEntry
	for _, d := range dirs {
		m, err := results.ReadManifestFS(os.DirFS(d), "manifest.json")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(d, "manifest.json"), err)
		}
		ledger = append(ledger, m.Ledger...)
	}
	return plots.LedgerNotions(ledger), nil
}

// renderLocked renders figs into dir under the folder's lock, their
// captions completed from spec (profile, CI level).
func renderLocked(dir string, figs []plots.FigureSpec, spec *experiments.Spec, rows []results.SummaryRow) error {
	lock, err := runner.Lock(dir)
	if err != nil {
		return err
	}
	defer lock.Release()
	for _, fs := range figs {
		fs.Caption = runner.FigureCaption(spec, fs.Caption)
		if err := plots.Render(dir, fs, rows); err != nil {
			return err
		}
	}
	return nil
}

// runSecure runs fn, first saying on stderr what a run with secure noise
// (output.secure_noise, or --secure-noise) means. The mode itself travels
// in the spec: the runner hands the units of such a run mech.CryptoRand
// (runner.Env).
func runSecure(s *experiments.Spec, fn func() (string, error), stderr io.Writer) (string, error) {
	if s.Output.SecureNoise {
		fmt.Fprintf(stderr, "dprepro: %s: secure noise: releases draw from crypto/rand through floating-point-safe constructions where available; the results will not replay (manifest.json lists the constructions)\n", s.ID)
	}
	return fn()
}

// load builds the runnable experiment of a spec with its kind.
func load(s *experiments.Spec, dd dataDir) (runner.Experiment, error) {
	return runner.Kinds.New(s, runner.DataOptions{DataDir: dd.Path, Named: dd.Named})
}

// standIns counts the runs that used synthetic stand-ins, and of them
// those whose every stand-in their spec asked for (data.synthetic =
// "always").
type standIns struct {
	runs     []string
	asked    int // runs whose stand-ins were all asked for
	datasets map[string]bool
}

func (s *standIns) add(id string, ds []results.DatasetInfo) {
	used, asked := false, true
	for _, d := range ds {
		// A stand-in replaces a real file (stand_in_for); simulated data
		// by design (the histogram kind's known densities) is not one.
		if for_ := d.Params["stand_in_for"]; d.Source != "real" && for_ != "" {
			used = true
			asked = asked && d.Params["reason"] == datasets.ReasonSyntheticAlways
			if s.datasets == nil {
				s.datasets = map[string]bool{}
			}
			s.datasets[for_] = true
		}
	}
	if used {
		s.runs = append(s.runs, id)
		if asked {
			s.asked++
		}
	}
}

// report prints the one line that counts the runs on stand-ins among the
// runs that ran, whose data were loaded, and says why they used them: their
// specs asked (data.synthetic = "always"), or a real file was absent and the
// spec allowed a stand-in, or no data directory was named (then how to name
// or fill one); and how many of the command's runs did not run
// (notStarted: the command was interrupted before them; notBuilt: their
// experiment could not be built), whose data are unknown.
func (s *standIns) report(w io.Writer, ran, notStarted, notBuilt int, dd dataDir) {
	if len(s.runs) == 0 {
		return
	}
	var names []string
	for n := range s.datasets {
		names = append(names, n)
	}
	sort.Strings(names)
	const asked = `their specs ask for them (data.synthetic = "always")`
	why := "no data directory was named: name one with --data-dir or $DPREPRO_DATA, or download into " + dd.Path + " with `dprepro data fetch`"
	if dd.Named {
		why = `a real file is absent and their specs allow a stand-in (data.synthetic = "allow")`
	}
	switch {
	case s.asked == len(s.runs):
		why = asked
	case s.asked > 0:
		spec := "their specs ask for them"
		if s.asked == 1 {
			spec = "its spec asks for it"
		}
		why = fmt.Sprintf("%d of them because %s (data.synthetic = \"always\"); the other %d because %s", s.asked, spec, len(s.runs)-s.asked, why)
	}
	var didNot []string
	if notStarted > 0 {
		didNot = append(didNot, fmt.Sprintf("%d not started", notStarted))
	}
	if notBuilt > 0 {
		didNot = append(didNot, fmt.Sprintf("%d could not be built", notBuilt))
	}
	others := ""
	if len(didNot) > 0 {
		others = fmt.Sprintf(" (%d more did not run: %s)", notStarted+notBuilt, strings.Join(didNot, ", "))
	}
	runs := fmt.Sprintf("%d runs", ran)
	if others != "" {
		runs = fmt.Sprintf("the %d runs that ran", ran)
	}
	fmt.Fprintf(w, "dprepro: %d of %s used labelled SYNTHETIC stand-ins, not real data (%s): %s%s\n", len(s.runs), runs, strings.Join(names, ", "), why, others)
}

// earlierRun is the note of an index entry whose run ended without
// finishing in the folder dir that still holds an earlier finished run
// (kept until a run finishes): "" when it holds none.
func earlierRun(dir string) string {
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		return ""
	}
	return earlierNote(&m)
}

// earlierNote says that a run folder still holds the earlier finished run
// m, which does not count while its latest attempt has not finished.
func earlierNote(m *results.Manifest) string {
	return fmt.Sprintf("the folder still holds the earlier run finished at %s, not counted", m.End.UTC().Format(time.RFC3339))
}

// describeData summarizes a run's data for the index.
func describeData(ds []results.DatasetInfo) string {
	if len(ds) == 0 {
		return "none"
	}
	var parts []string
	for _, d := range ds {
		parts = append(parts, d.Name+": "+d.Source)
	}
	return strings.Join(parts, ", ")
}

// unitKeys returns the keys of exp's units, in order.
func unitKeys(exp runner.Experiment) []string {
	us := exp.Units()
	keys := make([]string, len(us))
	for i, u := range us {
		keys[i] = u.Key()
	}
	return keys
}
