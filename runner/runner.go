// Package runner executes an experiment's replicate units in parallel,
// deterministically, with a checkpoint that lets an interrupted run resume,
// and writes the run's files.
//
// # Determinism
//
// Each unit draws its randomness from a stream derived from (root seed, unit
// key) alone, and its rows are written in the order of Experiment.Units, not
// in completion order, so the output is bit-identical for any worker count,
// shard or dispatch order.
//
// # Scheduling
//
// The units start most expensive first (longest processing time first),
// by the experiment's estimates ([UnitCoster]) or the times an earlier
// attempt measured, so that no long unit starts last and holds the run;
// a sharded run splits the estimated cost, not the unit count. The
// manifest's unit_times.scaling simulates the schedule on 2 to 32
// workers from the measured times (results.Schedule).
//
// # Failures
//
// A unit that returns an error or panics is reported as that unit's failure;
// the other units go on and are checkpointed, and the run then ends with an
// error naming the failed units ([UnitsFailedError]) and writes no final
// files (a finished run the folder held before stays as it was). A fit that does not
// converge is not a failure: it is a row with a status.
package runner

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dprepro/dprepro/comparison"
	"github.com/dprepro/dprepro/core/mech"

	"golang.org/x/sync/errgroup"

	"github.com/dprepro/dprepro/claims"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
)

// Experiment is one resolved spec ready to run. An experiment kind
// (package kinds/<kind>, or a user's module) implements it; [Run] executes
// it.
type Experiment interface {
	// Spec returns the resolved spec.
	Spec() *experiments.Spec
	// Units returns the replicate units, in output order. Their keys must
	// be distinct and stable: they name the unit in the checkpoint and
	// seed its streams.
	Units() []Unit
	// RunUnit computes one unit u (a value from Units). It must draw
	// randomness only from env's streams, or from streams derived with
	// [Stream] from the spec's seed, and be safe to call concurrently for
	// distinct units.
	RunUnit(ctx context.Context, u Unit, env Env) ([]results.Row, error)
	// Columns is the rows.csv schema.
	Columns() []string
	// Summary summarizes all rows (in unit order).
	Summary(rows []results.Row) []results.SummaryRow
	// Figures lists the figures drawn from the summary.
	Figures() []plots.FigureSpec
	// Datasets is the provenance of the data used.
	Datasets() []results.DatasetInfo
	// Ledger is the privacy ledger, from the rows of all units.
	Ledger(rows []results.Row) []results.LedgerEntry
	// Warnings are notes for the manifest (e.g. synthetic data in use).
	Warnings() []string
}

// RowWarner is implemented by experiments with warnings that only the rows
// of a run show (for example that a method's fits returned more privacy
// loss than the level they were handed). Run adds them to the manifest's
// warnings, after Warnings, and prints them to stderr.
type RowWarner interface {
	// RowWarnings returns the warnings of the run's rows (all units, in
	// unit order).
	RowWarnings(rows []results.Row) []string
}

// FigureMarker is implemented by experiments whose figures mark points
// that only the rows show to be special: Run draws the points it returns
// with a distinct mark (plots.FigureSpec.Marks) in every figure of the
// run, labelled label in the legend — for a kind that hands methods a
// privacy level, the points whose fits returned more than the level on
// the x axis.
type FigureMarker interface {
	FigureMarks(rows []results.Row) (marks []plots.Mark, label string)
}

// Tabler is implemented by experiments that also write tables laid out
// like the paper's (e.g. one row per method, one column per swept value).
// They are computed from the summary only and written under tables/.
type Tabler interface {
	// Tables returns file names (plain, no directories) and contents.
	Tables(summary []results.SummaryRow) (map[string][]byte, error)
}

// Timer is implemented by an experiment whose rows carry measurements
// that are not results, such as the wall-clock seconds of a unit's fits:
// they differ from run to run and machine to machine, so the runner
// writes them to timings.csv (the keys columns, then the measured ones,
// one line per row) and never to rows.csv, whose bytes stay the same for
// any worker count, shard or machine. A resumed unit keeps the times it
// was measured with (the checkpoint holds them).
type Timer interface {
	TimingColumns() (keys, measured []string)
}

// TimingsFile is the file of a [Timer]'s measurements.
const TimingsFile = "timings.csv"

// UnitReader is implemented by an experiment whose units each read only
// part of the spec — one method, one grid value — so that a run after an
// edit recomputes only the units whose inputs changed and resumes the
// others from the checkpoint, bit-identical to a fresh run (their draws
// depend only on the seed and their key). SharedHash is the identity of
// what every unit reads (the resolved spec without the method lists, the
// grids the units are keyed by and the methods' files): a change there
// starts the run over, as does one of the seed, profile, data or build.
// UnitInputs names what else unit u reads, each with its identity (e.g.
// "learner" → the learner's name and, for an external one, the digests
// of its command and files); a unit whose recorded inputs differ is
// computed again, and the run says which inputs changed.
type UnitReader interface {
	SharedHash() string
	UnitInputs(u Unit) map[string]string
}

// Comparer is implemented by an experiment whose spec may name a
// baseline method: the run then compares every other method with it,
// paired by replicate (package comparison), and writes comparison.csv,
// tables/comparison.md and one figure per metric, "comparison-<metric>"
// (the difference method − baseline against x with its interval and a
// line at zero), laid out like fig (its XLabel, LogX, Styles, Columns;
// Name, Title, Metric, YLabel and RefLines are the runner's).
type Comparer interface {
	// Comparison returns what to compare and the figures' layout, or
	// false when the spec names no baseline.
	Comparison() (o comparison.Options, fig plots.FigureSpec, ok bool)
}

// MethodAuditor is implemented by an experiment some of whose units are
// empirical privacy audits of its methods (the learner-comparison kind's
// [comparison.audit]): units like any other — checkpointed, resumed, run
// in parallel with the others — whose rows are not results of the spec's
// sweep. Run writes them to results.AuditFile with AuditColumns, never to
// rows.csv, and keeps them out of the summary, claims, comparison,
// figures, warnings and ledger the experiment computes from the other
// rows, so a spec that audits nothing writes the same bytes as before.
// Audits turns them into one results.MethodAudit per audited method and
// setting: the manifest records them (Manifest.Audits), each stands
// beside the ledger entry it audits (results.AnnotateLedger), and a
// violated claim is a warning of the manifest and on stderr.
type MethodAuditor interface {
	// AuditUnit reports whether u is an audit unit.
	AuditUnit(u Unit) bool
	// AuditColumns is the schema of results.AuditFile.
	AuditColumns() []string
	// Audits summarizes the audit units' rows (in unit order).
	Audits(rows []results.Row) []results.MethodAudit
}

// Workspace is what Run lends an experiment that implements [Opener]
// while its units run.
type Workspace struct {
	// Dir is the run's folder.
	Dir string
	// Scratch is Dir/scratch, for files the units share with other
	// processes (the data matrices of external methods); the experiment
	// empties it when it opens, and Run removes it when the run ends.
	Scratch string
	// Log is Dir/workers.log (appended to by every run of the folder), for
	// the output of the processes the experiment starts.
	Log io.Writer
	// Workers is the number of units that run at once.
	Workers int
}

// Opener is implemented by an experiment that holds resources while its
// units run, such as the worker processes of external methods (package
// external). Run calls Open before the first unit and Close after the
// last, whether the run succeeds, fails or is interrupted.
type Opener interface {
	Open(w Workspace) error
	Close() error
}

// Pairer is implemented by an experiment whose rows pair across methods:
// PairKey names the rows.csv columns that identify a replicate at one
// dataset and x (e.g. rep and fold), so that the paper's claims comparing
// two methods are decided on paired differences (package claims).
type Pairer interface {
	PairKey() []string
}

// Releaser is implemented by an experiment that declares the mechanisms
// (mech.Release.Mechanism) its spec's releases use, for the manifest's
// list of releases without a floating-point-safe construction in a run
// with secure noise (results.Manifest.Unhardened). Tests check the
// declaration against a traced run.
type Releaser interface {
	Mechanisms() []string
}

// Versioner is implemented by an experiment whose external methods state
// versions (their workers' hello), recorded in the manifest.
type Versioner interface {
	MethodVersions() map[string]string
}

// open opens exp when it is an Opener, with the workspace of dir; the
// returned function closes it (and removes the scratch directory).
func open(exp Experiment, dir string, workers int) (func(), error) {
	op, ok := exp.(Opener)
	if !ok {
		return func() {}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	log := &lazyLog{path: filepath.Join(dir, "workers.log"),
		header: fmt.Sprintf("== %s: run of %s started\n", time.Now().UTC().Format(time.RFC3339), exp.Spec().ID)}
	// Absolute: the paths go to processes that run in other directories
	// (an external method runs in its spec's folder).
	scratch, err := filepath.Abs(filepath.Join(dir, "scratch"))
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	if err := op.Open(Workspace{Dir: dir, Scratch: scratch, Log: log, Workers: workers}); err != nil {
		log.Close()
		return nil, fmt.Errorf("%s: opening the experiment: %w", exp.Spec().ID, err)
	}
	return func() {
		op.Close()
		os.RemoveAll(scratch)
		log.Close()
	}, nil
}

// lazyLog is the run's workers.log: created (appended to, after a header
// line) on the first write, so that a run whose experiment starts no
// process writes none. It serializes writes from several goroutines.
type lazyLog struct {
	path, header string

	mu  sync.Mutex
	f   *os.File
	err error
}

func (l *lazyLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil && l.err == nil {
		l.f, l.err = os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if l.err == nil {
			_, l.err = l.f.WriteString(l.header)
		}
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.f.Write(p)
}

// Close closes the file if it was created.
func (l *lazyLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// Options configures Run.
type Options struct {
	OutDir   string        // the run goes to RunDir(OutDir, spec)
	Workers  int           // >= 1
	Stderr   io.Writer     // progress and notices; nil discards
	Interval time.Duration // heartbeat interval when stderr is not a terminal; zero means 5 s
	// Shard, when Count > 1, runs only the units at positions p of
	// exp.Units() with p mod Count == Index and writes only the checkpoint:
	// no final files. The shards' checkpoints are combined by
	// results.MergeCheckpoints and finished by a Run that resumes them all.
	Shard Shard
	// Locked says that the caller already holds the run directory's lock
	// (Lock(RunDir(OutDir, spec))), e.g. because it locked every run of a
	// reproduction before starting any; otherwise Run takes it itself.
	Locked bool
	// Trace, when set, receives every release the units draw (see Env,
	// "Trace"): for tests and --trace-privacy. The bits drawn are those of
	// the untraced run.
	Trace *mech.Trace
	// TracePrivacy writes the run's privacy trace beside its rows
	// (TraceFile, --trace-privacy): every release the units computed by
	// this process drew, as drawn (with Trace when set, else a trace of
	// its own), and a summary in the manifest (results.TraceSummary),
	// which counts the units resumed from a checkpoint as untraced.
	TracePrivacy bool
	// Memo, when set, is shared by the runs of one command: a unit whose
	// computation an earlier unit already did, bit for bit, takes its
	// result (Env.Shared; not in secure mode or traced runs). Nil: every
	// unit computes its own.
	Memo *Memo
}

// Shard is one of Count deterministic parts of a run's units (0-based).
type Shard struct {
	Index, Count int
}

// Sharded reports whether s selects a part of the units.
func (s Shard) Sharded() bool { return s.Count > 1 }

// Header returns the identity of a run of exp by this program, which its
// checkpoint (and a shard's) carries: the resolved spec, seed, profile, the
// data the experiment loaded (exp.Datasets) and the build. A checkpoint
// with another identity is never resumed or merged.
func Header(exp Experiment) results.CheckpointHeader {
	spec := exp.Spec()
	var file string
	if spec.Source != nil {
		file = cmp.Or(spec.Source.Abs, spec.Source.Path)
	}
	hash, perUnit := spec.Hash(), false
	if ur, ok := exp.(UnitReader); ok {
		hash, perUnit = ur.SharedHash(), true
	}
	var keys map[string]string
	if canon, err := spec.Canonical(); err == nil {
		keys, _ = results.FlattenSpec(canon)
	}
	return results.CheckpointHeader{
		SpecKeys: keys,
		SpecFile: file,
		Format:   results.CheckpointFormat,
		SpecID:   spec.ID,
		SpecHash: hash,
		PerUnit:  perUnit,
		Seed:     spec.Seed,
		Profile:  spec.Profile,
		Data:     results.DataIdentities(exp.Datasets()),
		Build:    results.ReadBuild().Identity(),
		Binary:   binaryHash(),
	}
}

// RunName is the name of a run's folder below OUT/<spec id>:
// "<profile>-seed<seed>", with "-secure" for a run with secure noise (which
// does not replay, so it never shares a folder with a seeded run). Runs of
// other profiles or seeds of one spec therefore never collide.
func RunName(spec *experiments.Spec) string {
	name := fmt.Sprintf("%s-seed%d", spec.Profile, spec.Seed)
	if spec.Output.SecureNoise {
		name += "-secure"
	}
	return name
}

// RunDir is the folder of a run of spec under out: out/<spec id>/RunName.
func RunDir(out string, spec *experiments.Spec) string {
	return filepath.Join(out, spec.ID, RunName(spec))
}

// ErrFinishedRun is returned by a sharded Run aimed at a folder holding a
// finished run.
var ErrFinishedRun = errors.New("runner: refusing to shard into a finished run")

// Final files of a run. A finished run's stay in its folder while another
// run of it computes its units (a run of another identity, e.g. on other
// data, that may fail or be stopped); they are removed only once the new
// run has every unit, just before it writes its own (writeOutputs), so
// that no file of the old run is left beside the new one. manifest.json
// goes first, so that a crash midway never leaves a manifest beside mixed
// files, and is written last.
var finalFiles = []string{"manifest.json", "summary.csv", "rows.csv", "claims.csv", ComparisonFile, TimingsFile, "spec.toml", "figures", "tables", TraceFile, results.AuditFile}

// MaxShownFailures is how many failed units the message of a
// [UnitsFailedError] names; its Failures hold every one.
const MaxShownFailures = 10

// UnitFailure is one failed unit of a run: its key and its error.
type UnitFailure struct {
	Unit string
	Err  error
}

// UnitsFailedError is the error of a Run whose units failed: the other
// units are checkpointed and no results are written. Its message names
// the first MaxShownFailures units with their errors, and how many more
// failed; Failures holds every one, so that a caller can record them all
// (the command's attempt.json).
type UnitsFailedError struct {
	// Failures are the failed units, ordered by their messages ("unit
	// KEY: …"), so by key.
	Failures []UnitFailure
	// Units is the number of units of the run (of the shard).
	Units int
	// Note says what became of the others ("the others are
	// checkpointed; no results written", …).
	Note string
	// Record, when set by the caller, says where the error of every
	// failed unit is recorded (e.g. a file); the message names it after
	// the count of the units it leaves out.
	Record string
}

// Error counts the failed units and names the first MaxShownFailures,
// each with its error, then how many more failed (and, with Record, where
// all are).
func (e *UnitsFailedError) Error() string {
	shown := make([]string, 0, MaxShownFailures+1)
	for i, f := range e.Failures {
		if i == MaxShownFailures {
			more := fmt.Sprintf("… and %d more units", len(e.Failures)-MaxShownFailures)
			if e.Record != "" {
				more += " (the error of every failed unit is in " + e.Record + ")"
			}
			shown = append(shown, more)
			break
		}
		shown = append(shown, "unit "+f.Unit+": "+f.Err.Error())
	}
	return fmt.Sprintf("%d of %d units failed (%s):\n%s", len(e.Failures), e.Units, e.Note, strings.Join(shown, "\n"))
}

// Unwrap returns the units' errors.
func (e *UnitsFailedError) Unwrap() []error {
	errs := make([]error, len(e.Failures))
	for i, f := range e.Failures {
		errs[i] = f.Err
	}
	return errs
}

// announceFinished says on stderr, before a run of header h starts in
// dir, that dir holds a finished run of another identity (its manifest's:
// what differs), which stays in place until this run has every unit and
// is then replaced. It returns what differs (nil when dir holds no
// finished run, or one of this identity: a run made again).
func announceFinished(stderr io.Writer, id, dir string, h results.CheckpointHeader) []string {
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		fmt.Fprintf(stderr, "dprepro: %s: %s holds a manifest.json that cannot be read (%v); the run's files stay in place until this run has all its units, and are then replaced\n", id, dir, err)
		return nil
	}
	old := m.Identity()
	if b, err := os.ReadFile(filepath.Join(dir, "spec.toml")); err == nil {
		old.SpecKeys, _ = results.FlattenSpec(b) // to name the keys that changed
	}
	changes := h.Changes(old)
	if len(changes) == 0 {
		return nil
	}
	fmt.Fprintf(stderr, "dprepro: %s: %s holds a finished run (finished %s) of another identity:\n", id, dir, m.End.UTC().Format(time.RFC3339))
	for _, c := range changes {
		fmt.Fprintf(stderr, "dprepro: %s:   %s\n", id, c)
	}
	fmt.Fprintf(stderr, "dprepro: %s: it stays in place until this run has all its units, and is then replaced; if this run fails or is stopped, the folder keeps it as it is\n", id)
	return changes
}

// KeptCheckpoint is the folder, inside a run folder, where the checkpoint
// of the finished run the folder holds is set aside while a run of
// another identity computes its units (keepFinishedCheckpoint): running
// the finished run's own command again then resumes every unit instead of
// computing them again. It is removed once a run writes its outputs.
const KeptCheckpoint = ".checkpoint-finished"

// keepFinishedCheckpoint looks after the checkpoint of the finished run
// that dir holds, before a run of header h opens its own: when h is of
// another identity and the folder's checkpoint is the finished run's, it
// is set aside (KeptCheckpoint) rather than discarded; when h is the
// finished run's own identity and its checkpoint was set aside, it is
// taken back, in place of the checkpoint of the attempt of another
// identity made since. Failures to move it only cost a recomputation
// (the checkpoint is then discarded, as before), so they are said and not
// fatal.
func keepFinishedCheckpoint(stderr io.Writer, id, dir string, h results.CheckpointHeader) {
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		return // no finished run (an unreadable manifest is announced)
	}
	finished := m.Identity()
	cpDir, kept := filepath.Join(dir, ".checkpoint"), filepath.Join(dir, KeptCheckpoint)
	cur, curOK := results.ReadCheckpointHeader(dir)
	curIsFinished := curOK && len(cur.Changes(finished)) == 0
	_, keptErr := os.Stat(kept)
	hasKept := keptErr == nil
	mine := len(h.Changes(finished)) == 0
	switch {
	case !mine && curIsFinished && !hasKept:
		if err := os.Rename(cpDir, kept); err != nil {
			fmt.Fprintf(stderr, "dprepro: %s: the finished run's checkpoint could not be set aside (%v); it is discarded\n", id, err)
			return
		}
		fmt.Fprintf(stderr, "dprepro: %s: the finished run's checkpoint is set aside in %s: its own command, run again, resumes it\n", id, kept)
	case mine && hasKept && !curIsFinished:
		if err := os.RemoveAll(cpDir); err == nil {
			err = os.Rename(kept, cpDir)
			if err == nil {
				fmt.Fprintf(stderr, "dprepro: %s: %s holds this very run, finished; its checkpoint, set aside while a run of another identity was attempted, is taken back (that attempt's units are discarded)\n", id, dir)
				return
			}
		} else {
			fmt.Fprintf(stderr, "dprepro: %s: the set-aside checkpoint of the finished run could not be taken back (%v)\n", id, err)
		}
	}
}

// Run executes exp and writes its files; it returns the run directory.
// A finished run the directory already holds stays in place, untouched,
// until every unit of this run is done: only then are its files removed
// (manifest.json first) and this run's written (manifest.json last). When
// that run is of another identity (Header) stderr says so at the start,
// with what differs. A run that fails or is interrupted therefore leaves
// the earlier run's files as they were.
func Run(ctx context.Context, exp Experiment, o Options) (string, error) {
	start := time.Now()
	spec := exp.Spec()
	if o.Workers < 1 {
		return "", fmt.Errorf("runner: workers must be >= 1 (got %d)", o.Workers)
	}
	// Secure noise on data-dependent scaling that the spec does not
	// accept: refused before any work (the command refuses it earlier,
	// as a spec error; this catches a spec switched in code).
	if err := spec.CheckSecureNoise(); err != nil {
		return "", err
	}
	stderr := o.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	dir := RunDir(o.OutDir, spec)
	if !o.Locked {
		lock, err := Lock(dir)
		if err != nil {
			return "", err
		}
		defer lock.Release()
		if lock.TookOver != nil {
			fmt.Fprintf(stderr, "dprepro: %s: took over the lock of %s, left by a process that is no longer running (%s)\n", spec.ID, dir, lock.TookOver)
		}
	}
	if o.Shard.Sharded() {
		if !(o.Shard.Index >= 0 && o.Shard.Index < o.Shard.Count) {
			return "", fmt.Errorf("runner: shard %d/%d: want 0 <= index < count", o.Shard.Index, o.Shard.Count)
		}
		// A shard writes only its checkpoint: it must not clear (or mix
		// its checkpoint into) a folder that holds a finished run.
		if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
			return "", fmt.Errorf("%w: %s holds a finished run; write the shards to their own --out folders and merge them", ErrFinishedRun, dir)
		}
	}
	// A finished run in the folder stays until this one has every unit
	// (writeOutputs replaces it).
	header := Header(exp)
	finished := announceFinished(stderr, spec.ID, dir, header)
	if !o.Shard.Sharded() {
		keepFinishedCheckpoint(stderr, spec.ID, dir, header)
	}
	cp, changes, err := results.OpenCheckpoint(filepath.Join(dir, ".checkpoint"), header)
	if err != nil {
		return "", err
	}
	defer cp.Close()
	// The checkpoint of the finished run just announced is discarded
	// without a second word; one of another run (an attempt since) is
	// said.
	if len(changes) > 0 && !slices.Equal(changes, finished) {
		fmt.Fprintf(stderr, "dprepro: %s: the checkpoint in %s belongs to another run; starting over:\n", spec.ID, dir)
		for _, c := range changes {
			fmt.Fprintf(stderr, "dprepro: %s:   %s\n", spec.ID, c)
		}
	}
	if cp.Torn() {
		fmt.Fprintf(stderr, "dprepro: %s: the checkpoint's last record was torn (a write cut short); it was dropped and its unit is computed again\n", spec.ID)
	}
	units := exp.Units()
	if dup := firstDuplicate(units); dup != "" {
		return "", fmt.Errorf("runner: duplicate unit key %q", dup)
	}
	secure := spec.Output.SecureNoise
	mine := units
	coster, _ := exp.(UnitCoster)
	if o.Shard.Sharded() {
		// By the estimates alone (no measured time): every shard, on any
		// machine, computes the same assignment.
		var est []float64
		if coster != nil {
			est = unitCosts(units, coster, func(string) (float64, bool) { return 0, false }, nil)
		}
		mine = shardUnits(units, est, o.Shard)
	}
	ur, _ := exp.(UnitReader)
	inputs := func(u Unit) map[string]string {
		if ur == nil {
			return nil
		}
		return ur.UnitInputs(u)
	}
	var todo []Unit
	changed := map[string]int{} // input name → units recomputed for it
	fresh := 0                  // units the checkpoint does not hold
	for _, u := range mine {
		_, ok := cp.Done(u.Key())
		if !ok {
			fresh++
		}
		if ok && ur != nil {
			if diff := inputChanges(cp.Inputs(u.Key()), inputs(u)); len(diff) > 0 {
				ok = false
				for _, d := range diff {
					changed[d]++
				}
			}
		}
		if !ok {
			todo = append(todo, u)
		}
	}
	resumed := len(mine) - len(todo)
	units = mine
	if resumed > 0 {
		fmt.Fprintf(stderr, "dprepro: %s: resuming, %d of %d units already done\n", spec.ID, resumed, len(units))
	}
	if resumed > 0 && fresh > 0 {
		what := "units are new or were"
		if fresh == 1 {
			what = "unit is new or was"
		}
		fmt.Fprintf(stderr, "dprepro: %s: %d %s not finished (e.g. a method, a parameter value or a grid value added, or an interrupted attempt)\n", spec.ID, fresh, what)
	}
	if len(changed) > 0 {
		fmt.Fprintf(stderr, "dprepro: %s: recomputing the units whose inputs changed since they were computed:\n", spec.ID)
		for _, name := range slices.Sorted(maps.Keys(changed)) {
			fmt.Fprintf(stderr, "dprepro: %s:   %s (%d units)\n", spec.ID, name, changed[name])
		}
	}
	trace := o.Trace
	if o.TracePrivacy {
		if trace == nil {
			trace = mech.NewTrace()
			defer trace.Close()
		}
		if resumed > 0 {
			fmt.Fprintf(stderr, "dprepro: %s: --trace-privacy: the %d units resumed from the checkpoint were computed earlier and are not in %s (the manifest counts them)\n", spec.ID, resumed, TraceFile)
		}
	}
	prog := NewProgress(stderr, spec.ID, len(units), resumed, o.Interval)
	if len(todo) > 0 {
		closeExp, err := open(exp, dir, o.Workers)
		if err != nil {
			return "", err
		}
		defer closeExp()
	}

	var (
		mu       sync.Mutex
		failures []UnitFailure
	)
	// The order the units run in: the most expensive first
	// (dispatchOrder, by the kind's estimates, UnitCoster, or the times
	// an earlier attempt measured), and for a kind with scratch scopes
	// scope by scope, so that few scopes are open at once (a scope's
	// files go once its last unit has returned). The rows are gathered in
	// the units' order below, and every unit draws from its own stream,
	// so the order they run in changes no result.
	scoper, _ := exp.(ScratchScoper)
	measured := func(k string) (float64, bool) {
		t, ok := cp.Time(k)
		return t.Seconds, ok
	}
	costs := unitCosts(units, coster, measured, units)
	costOf := map[string]float64{}
	for i, u := range units {
		if costs != nil {
			costOf[u.Key()] = costs[i]
		}
	}
	var todoCosts []float64
	if costs != nil {
		for _, u := range todo {
			todoCosts = append(todoCosts, costOf[u.Key()])
		}
	}
	todo = dispatchOrder(todo, todoCosts, scoper)
	pendingScope := map[string]int{}
	if scoper != nil {
		for _, u := range todo {
			pendingScope[scoper.ScratchScope(u)]++
		}
	}
	unitDone := func(u Unit) {
		if scoper == nil {
			return
		}
		scope := scoper.ScratchScope(u)
		mu.Lock()
		pendingScope[scope]--
		last := pendingScope[scope] == 0
		mu.Unlock()
		if last && scope != "" {
			scoper.ReleaseScratch(scope)
		}
	}
	// Each computed unit's time (timeUnit), recorded with its rows in the
	// checkpoint and summarised in the manifest (results.UnitTimes).
	timed := map[string]results.UnitTime{}
	unitsStart := time.Now()
	attempt := start.UTC().Format(time.RFC3339Nano)
	// The workers' slots: one per running unit, and after the last unit
	// has started, free ones help the running units' Parallel tasks.
	slots := newPool(o.Workers)
	g, gctx := errgroup.WithContext(ctx)
	for _, u := range todo {
		if !slots.acquire(gctx) {
			break
		}
		g.Go(func() error {
			defer slots.release()
			if gctx.Err() != nil {
				return gctx.Err()
			}
			uctx := gctx
			if scoper != nil {
				uctx = WithScratchScope(gctx, scoper.ScratchScope(u))
			}
			var rows []results.Row
			var err error
			env := NewEnv(spec, u.Key(), secure).WithTrace(trace)
			env.pool, env.par, env.memo = slots, new(unitPar), o.Memo
			ut := timeUnit(func() {
				rows, err = runUnit(uctx, exp, u, env)
			})
			addPar(&ut, env.par)
			ut.EndSeconds = time.Since(unitsStart).Seconds()
			ut.Attempt, ut.Shard, ut.Workers = attempt, shardLabel(o.Shard), o.Workers
			unitDone(u)
			if err != nil {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				mu.Lock()
				failures = append(failures, UnitFailure{Unit: u.Key(), Err: err})
				mu.Unlock()
				return nil
			}
			in := inputs(u)
			mu.Lock()
			err = cp.AppendTimed(u.Key(), rows, in, &ut)
			timed[u.Key()] = ut
			mu.Unlock()
			if err != nil {
				return err // I/O: cancel the run
			}
			prog.Add(1)
			return nil
		})
	}
	slots.drain()
	err = g.Wait()
	unitsWall := time.Since(unitsStart).Seconds()
	prog.Finish()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return "", spec.Attribute(fmt.Errorf("interrupted with %d of %d units done; run the same command again to resume", cp.Len(), len(units)))
		}
		return "", err
	}
	if len(failures) > 0 {
		msg := func(f UnitFailure) string { return "unit " + f.Unit + ": " + f.Err.Error() }
		sort.Slice(failures, func(i, j int) bool { return msg(failures[i]) < msg(failures[j]) })
		done := "the others are checkpointed; no results written"
		if len(failures) == len(todo) {
			done = "no unit of this run succeeded; no results written"
		}
		if _, err := os.Stat(filepath.Join(dir, "workers.log")); err == nil {
			done += "; the workers' stderr is in " + filepath.Join(dir, "workers.log")
		}
		return "", spec.Attribute(&UnitsFailedError{Failures: failures, Units: len(units), Note: done})
	}

	if o.Shard.Sharded() {
		return dir, nil // the shard's product is its checkpoint
	}
	var rows []results.Row
	var audited *auditedRun
	ma, _ := exp.(MethodAuditor)
	for _, u := range units {
		r, _ := cp.Done(u.Key())
		if ma != nil && ma.AuditUnit(u) {
			if audited == nil {
				audited = &auditedRun{}
			}
			audited.rows = append(audited.rows, r...)
			continue
		}
		rows = append(rows, r...)
	}
	var rowWarnings []string
	if rw, ok := exp.(RowWarner); ok {
		rowWarnings = rw.RowWarnings(rows)
	}
	if audited != nil {
		audited.audits = ma.Audits(audited.rows)
		for _, a := range audited.audits {
			if w := a.Warning(); w != "" {
				rowWarnings = append(rowWarnings, w)
			}
		}
	}
	counts := results.UnitCounts{Total: len(units), Resumed: resumed, Computed: len(todo)}
	if resumed > 0 {
		counts.New = fresh
		if len(changed) > 0 {
			counts.Changed = changed
		}
	}
	recorded := map[string]results.UnitTime{} // the resumed units' times
	for _, u := range units {
		if _, now := timed[u.Key()]; now {
			continue
		}
		if t, ok := cp.Time(u.Key()); ok {
			recorded[u.Key()] = t
		}
	}
	var scope func(string) string
	if scoper != nil {
		byKey := make(map[string]Unit, len(todo))
		for _, u := range todo {
			byKey[u.Key()] = u
		}
		scope = func(k string) string { return scoper.ScratchScope(byKey[k]) }
	}
	if len(todo) == 0 {
		unitsWall = 0 // no units phase
	}
	unitTimes := unitTimesOf(spec.Kind, timed, o.Workers, unitsWall, resumed, recorded, scope)
	if n := len(unitTimes.Reused); n > 0 {
		// Never silent: the units this run did not compute itself.
		from := map[string]bool{}
		for _, r := range unitTimes.Reused {
			id, _, _ := strings.Cut(r.From, ": ")
			from[id] = true
		}
		fmt.Fprintf(stderr, "dprepro: %s: %d of %d units took the result of an identical unit of an earlier run of this command (%s), bit for bit what they would have computed; manifest.json unit_times.reused names each\n",
			spec.ID, n, len(todo), strings.Join(slices.Sorted(maps.Keys(from)), ", "))
	}
	// The simulated schedules of every unit with a time (computed here,
	// or resumed with a recorded one).
	all := make(map[string]results.SimUnit, len(timed)+len(recorded))
	for k, t := range recorded {
		all[k] = t.Sim()
	}
	for k, t := range timed {
		all[k] = t.Sim()
	}
	unitOrder := units
	if scoper != nil {
		unitOrder = groupByScope(units, scoper)
	}
	unitTimes.Scaling = scheduleOf(unitOrder, dispatchOrder(units, costs, scoper), all, coster)
	var traced *tracedRun
	if o.TracePrivacy {
		traced = &tracedRun{releases: trace.Releases(), units: len(todo), untraced: resumed}
	}
	if err := writeOutputs(dir, exp, rows, rowWarnings, start, o.Workers, counts, unitTimes, traced, audited); err != nil {
		return dir, err
	}
	// The finished run whose checkpoint was set aside is replaced.
	if err := os.RemoveAll(filepath.Join(dir, KeptCheckpoint)); err != nil {
		return dir, fmt.Errorf("runner: %w", err)
	}
	for _, w := range rowWarnings {
		fmt.Fprintf(stderr, "dprepro: %s: WARNING: %s\n", spec.ID, w)
	}
	return dir, nil
}

// runUnit calls RunUnit, turning a panic into that unit's error.
func runUnit(ctx context.Context, exp Experiment, u Unit, env Env) (rows []results.Row, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return exp.RunUnit(ctx, u, env)
}

func firstDuplicate(units []Unit) string {
	seen := make(map[string]bool, len(units))
	for _, u := range units {
		k := u.Key()
		if seen[k] {
			return k
		}
		seen[k] = true
	}
	return ""
}

// auditedRun is what the audit units of a MethodAuditor's run wrote:
// their rows and the audits they make.
type auditedRun struct {
	rows   []results.Row
	audits []results.MethodAudit
}

// tracedRun is the privacy trace a run writes (Options.TracePrivacy).
type tracedRun struct {
	releases        []mech.Release
	units, untraced int
}

func writeOutputs(dir string, exp Experiment, rows []results.Row, rowWarnings []string, start time.Time, workers int, counts results.UnitCounts, unitTimes *results.UnitTimes, traced *tracedRun, audited *auditedRun) error {
	spec := exp.Spec()
	// What can be computed without writing is computed first, while the
	// folder still holds the files of the run it had (if any).
	canon, err := spec.Canonical()
	if err != nil {
		return fmt.Errorf("runner: encoding spec: %w", err)
	}
	var timingsCSV []byte
	if t, ok := exp.(Timer); ok {
		keys, measured := t.TimingColumns()
		cols := slices.Concat(keys, measured)
		if timingsCSV, err = results.EncodeCSV(cols, results.Project(rows, cols)); err != nil {
			return fmt.Errorf("runner: timings: %w", err)
		}
		rows = results.Without(rows, measured) // results only from here on
	}
	rowsCSV, err := results.EncodeCSV(exp.Columns(), rows)
	if err != nil {
		return err
	}
	summary := exp.Summary(rows)
	sumCSV, err := results.EncodeSummaryCSV(summary)
	if err != nil {
		return err
	}
	var claimsCSV []byte
	if len(spec.Claims) > 0 {
		var o claims.Options
		if p, ok := exp.(Pairer); ok {
			o.PairKey = p.PairKey()
		}
		if claimsCSV, err = claims.CSV(claims.Evaluate(spec, rows, summary, o)); err != nil {
			return err
		}
	}
	var tables map[string][]byte
	var tableNames []string
	if t, ok := exp.(Tabler); ok {
		if tables, err = t.Tables(summary); err != nil {
			return fmt.Errorf("runner: tables: %w", err)
		}
	}
	comp, err := compareBaseline(exp, rows)
	if err != nil {
		return err
	}
	var auditCSV []byte
	if audited != nil {
		// Projected on the schema: the rows may hold measurements (wall
		// time) for the manifest only.
		cols := exp.(MethodAuditor).AuditColumns()
		if auditCSV, err = results.EncodeCSV(cols, results.Project(audited.rows, cols)); err != nil {
			return fmt.Errorf("runner: %s: %w", results.AuditFile, err)
		}
	}
	if comp != nil {
		if tables == nil {
			tables = map[string][]byte{}
		}
		if _, dup := tables[ComparisonTable]; dup {
			return fmt.Errorf("runner: the kind's tables include %s, the comparison's", ComparisonTable)
		}
		tables[ComparisonTable] = comp.table
	}
	for name := range tables {
		if name == "" || strings.ContainsAny(name, `/\`) {
			return fmt.Errorf("runner: table name %q must be a plain file name", name)
		}
		tableNames = append(tableNames, name)
	}
	sort.Strings(tableNames)
	// The files of the run the folder held go now, manifest.json first:
	// nothing of it is left beside this run's files.
	for _, f := range finalFiles {
		if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("runner: clearing %s: %w", dir, err)
		}
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, "spec.toml"), canon); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, "rows.csv"), rowsCSV); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, "summary.csv"), sumCSV); err != nil {
		return err
	}
	outputs := []string{"spec.toml", "rows.csv", "summary.csv"}
	if claimsCSV != nil {
		if err := results.WriteFileAtomic(filepath.Join(dir, "claims.csv"), claimsCSV); err != nil {
			return err
		}
		outputs = append(outputs, "claims.csv")
	}
	if timingsCSV != nil {
		if err := results.WriteFileAtomic(filepath.Join(dir, TimingsFile), timingsCSV); err != nil {
			return err
		}
		outputs = append(outputs, TimingsFile)
	}
	if comp != nil {
		if err := results.WriteFileAtomic(filepath.Join(dir, ComparisonFile), comp.csv); err != nil {
			return err
		}
		outputs = append(outputs, ComparisonFile)
	}
	if auditCSV != nil {
		if err := results.WriteFileAtomic(filepath.Join(dir, results.AuditFile), auditCSV); err != nil {
			return err
		}
		outputs = append(outputs, results.AuditFile)
	}
	figDir := filepath.Join(dir, "figures")
	ledger := exp.Ledger(rows)
	if audited != nil {
		// Before the figures: a curve whose method was audited says so
		// in its legend (plots.LedgerNotions), a violated claim above all.
		results.AnnotateLedger(ledger, audited.audits)
	}
	var marks []plots.Mark
	var markLabel string
	if fm, ok := exp.(FigureMarker); ok {
		marks, markLabel = fm.FigureMarks(rows)
	}
	for _, fs := range exp.Figures() {
		fs.Caption = FigureCaption(spec, fs.Caption)
		if fs.Notions == nil {
			// What each curve's numbers are: its privacy notion, from
			// the ledger the manifest records.
			fs.Notions = plots.LedgerNotions(ledger)
		}
		if fs.Marks == nil && len(marks) > 0 {
			fs.Marks, fs.MarkLabel = marks, markLabel
		}
		if err := plots.Render(figDir, fs, summary); err != nil {
			return fmt.Errorf("runner: figure %s: %w", fs.Name, err)
		}
		outputs = append(outputs, "figures/"+fs.Name+".png", "figures/"+fs.Name+".svg")
	}
	if comp != nil {
		for _, fs := range comp.figures {
			fs.Caption = FigureCaption(spec, fs.Caption)
			if err := plots.Render(figDir, fs, comp.rows); err != nil {
				return fmt.Errorf("runner: figure %s: %w", fs.Name, err)
			}
			outputs = append(outputs, "figures/"+fs.Name+".png", "figures/"+fs.Name+".svg")
		}
	}
	if len(tableNames) > 0 {
		if err := os.MkdirAll(filepath.Join(dir, "tables"), 0o755); err != nil {
			return err
		}
	}
	for _, name := range tableNames {
		if err := results.WriteFileAtomic(filepath.Join(dir, "tables", name), tables[name]); err != nil {
			return err
		}
		outputs = append(outputs, "tables/"+name)
	}
	end := time.Now()
	m := results.Manifest{
		Tool: "dprepro",
		Spec: results.SpecInfo{
			ID: spec.ID, Title: spec.Title, Paper: spec.Paper, Kind: spec.Kind, Hash: spec.Hash(), DesignHash: spec.DesignHash(), Overrides: spec.Overrides, SharedHash: sharedHash(exp),
		},
		Seed: spec.Seed, Profile: spec.Profile, Workers: workers,
		Start: start.UTC(), End: end.UTC(), WallSeconds: end.Sub(start).Seconds(),
		Units: counts, Datasets: exp.Datasets(), Ledger: ledger,
		Outputs: append(outputs, "manifest.json"), Notes: spec.Notes, Warnings: slices.Concat(spec.Warnings(), exp.Warnings(), rowWarnings),
		Noise: noiseReport(spec), SecureNoise: spec.Output.SecureNoise,
		UnitTimes: unitTimes,
	}
	if audited != nil {
		m.Audits = audited.audits // the ledger was annotated above
	}
	if r, ok := exp.(Releaser); ok && spec.Output.SecureNoise {
		m.Unhardened = mech.Unhardened(r.Mechanisms())
	}
	if traced != nil {
		b, err := EncodeTrace(traced.releases)
		if err != nil {
			return fmt.Errorf("runner: encoding the privacy trace: %w", err)
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, TraceFile), b); err != nil {
			return err
		}
		m.Outputs = slices.Insert(m.Outputs, len(m.Outputs)-1, TraceFile)
		m.PrivacyTrace = &results.TraceSummary{File: TraceFile, Releases: len(traced.releases), UnitsTraced: traced.units, UnitsUntraced: traced.untraced}
	}
	if spec.Source != nil {
		// The absolute path where there is one, so that the spec is
		// found again from any folder (dprepro claims).
		m.Spec.File, m.Spec.FileSHA256 = cmp.Or(spec.Source.Abs, spec.Source.Path), spec.Source.SHA256
	}
	var versions map[string]string
	if v, ok := exp.(Versioner); ok {
		versions = v.MethodVersions()
	}
	if sp, ok := exp.(ScratchPeaker); ok {
		m.ScratchPeakBytes = sp.ScratchPeak()
	}
	for _, em := range spec.Methods {
		if !em.External() {
			continue // a registered method's params: in spec.toml
		}
		rec := results.ExternalMethod{Name: em.Name, Serves: em.Serves, Command: em.Command, Version: versions[em.Name]}
		for _, d := range em.Digests() {
			rec.Files = append(rec.Files, results.FileDigest{Path: d.Path, SHA256: d.SHA256})
		}
		m.ExternalMethods = append(m.ExternalMethods, rec)
	}
	m.FillBuild()
	m.Build.Binary = binaryHash()
	mb, err := m.Encode()
	if err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, "manifest.json"), mb); err != nil {
		return err
	}
	return nil
}

// noiseReport is the manifest's account of the run's noise: that of
// package mech (mech.NoiseReport) for the releases the harness draws, and,
// in a run with secure noise of a spec with external methods
// ([[methods]]), a line saying that those draw their own noise: the
// harness hands each call a seed from crypto/rand, but the samplers, and
// whether the seed is used at all, are the method's; none of mech's
// hardening applies to them.
func noiseReport(spec *experiments.Spec) []string {
	noise := mech.NoiseReport(spec.Output.SecureNoise)
	if !spec.Output.SecureNoise || len(spec.Methods) == 0 {
		return noise
	}
	names := make([]string, len(spec.Methods))
	for i, m := range spec.Methods {
		names[i] = m.Name
	}
	return append(noise, fmt.Sprintf("external methods (%s): draw their own noise in their own processes from each call's seed, which comes from crypto/rand (results do not replay); their samplers are the methods' own, NOT hardened by the harness (none of the constructions above applies to them)", strings.Join(names, ", ")))
}

// binaryHash identifies the running program, so that a checkpoint written by
// another build (whose code may compute other numbers) is never resumed. The
// program file is read once per process (tens of MB), not once per run.
var binaryHash = sync.OnceValue(hashExecutable)

func hashExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(exe)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// builtinSpec reports whether spec is one of the built-in specs (parsed
// from the binary's bytes, not a file): its settings as written are the
// paper's.
func builtinSpec(spec *experiments.Spec) bool {
	return slices.Contains(experiments.BuiltinIDs(), spec.ID) && (spec.Source == nil || spec.Source.Abs == "")
}

// FigureCaption completes the caption of a figure of spec's run: the
// profile applied (marked when a quick profile fell back to the paper's
// settings) and the level of the summary's intervals, where the kind left
// them empty.
func FigureCaption(spec *experiments.Spec, c plots.Caption) plots.Caption {
	if c.Profile == "" {
		c.Profile = spec.Profile
		if spec.ProfileFallback {
			// No such profile: the spec's own settings ran — a built-in
			// spec's are the paper's, a user's are what it says.
			c.Profile = plots.AsWritten
			if builtinSpec(spec) {
				c.Profile = "paper"
			}
		}
	}
	if c.CILevel == 0 {
		c.CILevel = spec.Output.CILevel
	}
	return c
}

// sharedHash is the UnitReader's SharedHash of exp, or "".
func sharedHash(exp Experiment) string {
	if ur, ok := exp.(UnitReader); ok {
		return ur.SharedHash()
	}
	return ""
}

// inputChanges returns, in words, how a unit's inputs now differ from
// those it was computed with: "<name> changed", "<name> is new" or
// "<name> is no longer read", sorted; "inputs not recorded" for a unit
// recorded without them.
func inputChanges(old, now map[string]string) []string {
	if old == nil {
		return []string{"inputs not recorded"}
	}
	var out []string
	for k, v := range now {
		switch o, ok := old[k]; {
		case !ok:
			out = append(out, k+" is new")
		case o != v:
			out = append(out, k+" changed")
		}
	}
	for k := range old {
		if _, ok := now[k]; !ok {
			out = append(out, k+" is no longer read")
		}
	}
	slices.Sort(out)
	return out
}

// ScratchScoper is implemented by an experiment whose units share scratch
// files (the data matrices of external methods) by scope — the units of
// one fold read its training set — so that the files of a scope go as
// soon as no unit of the run still to run needs them, not at the run's
// end. Run hands each unit's context its scope ([ScratchScopeOf]) and
// calls ReleaseScratch(scope) once every unit of that scope it runs has
// returned (done or failed).
type ScratchScoper interface {
	ScratchScope(u Unit) string
	ReleaseScratch(scope string)
}

// groupByScope orders units scope by scope, the scopes in the order of
// their first unit and each scope's units in their own order.
func groupByScope(units []Unit, scoper ScratchScoper) []Unit {
	var order []string
	by := map[string][]Unit{}
	for _, u := range units {
		sc := scoper.ScratchScope(u)
		if _, ok := by[sc]; !ok {
			order = append(order, sc)
		}
		by[sc] = append(by[sc], u)
	}
	out := make([]Unit, 0, len(units))
	for _, sc := range order {
		out = append(out, by[sc]...)
	}
	return out
}

// ScratchPeaker is implemented by an experiment that reports the most
// bytes of scratch files it held at once during the run, for the
// manifest (results.Manifest.ScratchPeakBytes).
type ScratchPeaker interface {
	ScratchPeak() int64
}

type scratchScopeKey struct{}

// WithScratchScope returns ctx carrying scope, the scratch scope of the
// unit it runs.
func WithScratchScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, scratchScopeKey{}, scope)
}

// ScratchScopeOf returns the scratch scope ctx carries ("" for none): what
// a method writing scratch files for a unit passes to
// external.Scratch.MatrixIn.
func ScratchScopeOf(ctx context.Context) string {
	s, _ := ctx.Value(scratchScopeKey{}).(string)
	return s
}
