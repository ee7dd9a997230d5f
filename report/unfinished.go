package report

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// NotRun is the count of a claim whose run did not finish (failed, was
// interrupted or killed, or never started): no data decided it. It is
// not a verdict of package claims, which decides the claims of finished
// runs only.
const NotRun = "not run"

// Folder is what a run folder holds: a finished run (manifest.json), the
// record of its latest attempt while that has not finished
// (results.Attempt), a checkpoint, or several of these.
type Folder struct {
	// Manifest is the finished run's, nil when the folder holds none.
	Manifest *results.Manifest
	// Attempt is the latest attempt when it did not finish and is newer
	// than the finished run (results.Attempt.Supersedes); nil otherwise.
	Attempt *results.Attempt
	// AttemptErr is why the folder's attempt record could not be read
	// (a damaged attempt.json): whether its latest attempt finished is
	// not known, and it counts as one that did not.
	AttemptErr error
	// Checkpoint is the header of the folder's checkpoint and
	// CheckpointUnits the units it records, when HasCheckpoint.
	Checkpoint      results.CheckpointHeader
	CheckpointUnits int
	HasCheckpoint   bool
	// CheckpointDamaged reports a checkpoint file (.checkpoint/units.jsonl)
	// with no readable header (cut short, overwritten): units were
	// checkpointed, but whose is not known.
	CheckpointDamaged bool
	// Holder is the process that holds the folder's lock now
	// (runner.HeldBy), looked at only when the attempt record says
	// queued or running: nil when none does, so the process that wrote
	// the record was stopped without a word (killed, crashed). LockErr
	// says why that could not be told.
	Holder  *runner.Holder
	LockErr error
}

// ReadFolder reads what the run folder dir holds. An unreadable manifest
// is an error; an unreadable attempt record is Folder.AttemptErr.
func ReadFolder(dir string) (Folder, error) {
	var f Folder
	if isRun(dir) {
		m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
		if err != nil {
			return f, fmt.Errorf("%s: %w", dir, err)
		}
		f.Manifest = &m
	}
	a, err := results.ReadAttempt(dir)
	if err != nil {
		f.AttemptErr = err
	}
	if a != nil && a.Supersedes(f.Manifest) {
		f.Attempt = a
	}
	if f.Attempt != nil && f.Attempt.Unfinished() {
		f.Holder, f.LockErr = runner.HeldBy(dir)
	}
	f.Checkpoint, f.CheckpointUnits, f.HasCheckpoint = results.CheckpointProgress(dir)
	if !f.HasCheckpoint {
		if fi, err := os.Stat(filepath.Join(dir, ".checkpoint", "units.jsonl")); err == nil && fi.Mode().IsRegular() {
			f.CheckpointDamaged = true
		}
	}
	return f, nil
}

// Unfinished reports whether the folder's latest attempt did not finish:
// a record of an attempt newer than its finished run, if any, or a
// checkpoint with neither a finished run nor a record (an attempt by a
// build that kept none, stopped before it finished).
func (f Folder) Unfinished() bool {
	return f.Attempt != nil || f.AttemptErr != nil || f.Manifest == nil && (f.HasCheckpoint || f.CheckpointDamaged)
}

// isFolder reports whether dir is a run folder in any state: a finished
// run, an attempt record or a checkpoint.
func isFolder(dir string) bool {
	if isRun(dir) {
		return true
	}
	if _, err := os.Stat(filepath.Join(dir, results.AttemptFile)); err == nil {
		return true
	}
	fi, err := os.Stat(filepath.Join(dir, ".checkpoint"))
	return err == nil && fi.IsDir()
}

// FindFolders returns the run folders under root in any state (a finished
// run, an attempt record or a checkpoint), searched as FindRuns does.
func FindFolders(root string, maxDepth int) ([]string, error) {
	return walkRuns(root, maxDepth, isFolder)
}

// FindUnfinished returns the run folders under root whose latest attempt
// did not finish (Folder.Unfinished), searched as FindRuns does.
func FindUnfinished(root string, maxDepth int) ([]string, error) {
	dirs, err := walkRuns(root, maxDepth, isFolder)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		f, err := ReadFolder(d)
		if err != nil {
			return nil, err
		}
		if f.Unfinished() {
			out = append(out, d)
		}
	}
	return out, nil
}

// runName is the name of a run folder (runner.RunName).
var runName = regexp.MustCompile(`^(.+)-seed(\d+)(-secure)?$`)

// Unfinished is a run folder whose latest attempt did not finish: the
// report names it at its top, with its error and what did not run, and
// counts its spec's claims as not run.
type Unfinished struct {
	ID  string // an HTML id
	Dir string // relative to OUT, slash-separated
	// State is the attempt's (results.Attempt*), or "unfinished" for a
	// checkpoint without a record.
	State string
	// Attempt is the record; nil for a checkpoint without one, or an
	// unreadable one (RecordErr).
	Attempt *results.Attempt
	// RecordErr is why the attempt record could not be read.
	RecordErr error
	SpecID    string
	Title     string
	Paper     string
	Kind      string
	Profile   string
	Seed      int64
	// Error is the error the attempt ended with, in full ("" for none).
	Error string
	// Claims are the spec's claims, counted as not run; nil when unknown
	// (a checkpoint without a record).
	Claims []results.AttemptClaim
	// Units is the run's number of units (0: unknown); Checkpointed the
	// units its checkpoint holds (-1: no checkpoint).
	Units, Checkpointed int
	// Earlier is the finished run the folder still holds from before the
	// attempt, shown but not counted; nil when there is none.
	Earlier *Run
	// Holder and LockErr are the folder's (Folder.Holder): for a record
	// that says queued or running, whether a process is at work in the
	// folder now.
	Holder  *runner.Holder
	LockErr error

	checkpointBuild string // the build its checkpoint names, without a record
	// specFile is the spec file its checkpoint names, without a record
	// ("" for a checkpoint of a build that did not record it).
	specFile string
	// ClaimsFromSpec reports that Claims were read from the spec file the
	// checkpoint names (its current claims), there being no record.
	ClaimsFromSpec bool
	// checkpointDamaged reports a checkpoint with no readable header
	// (Folder.CheckpointDamaged), without a record.
	checkpointDamaged bool
}

// Describe is the folder dir's unfinished attempt as a report of out
// shows it (its Dir relative to out); Folder.Unfinished must hold. dprepro
// check words its state with its StateNote.
func (f Folder) Describe(out, dir string) *Unfinished { return f.unfinished(out, dir) }

// unfinished is the folder's unfinished attempt, for a report of out;
// Folder.Unfinished must hold.
func (f Folder) unfinished(out, dir string) *Unfinished {
	rel, err := filepath.Rel(out, dir)
	if err != nil || rel == "." {
		rel = filepath.Base(dir)
	}
	u := &Unfinished{Dir: filepath.ToSlash(rel), Checkpointed: -1, Attempt: f.Attempt, Holder: f.Holder, LockErr: f.LockErr, checkpointDamaged: f.CheckpointDamaged}
	u.ID = "unfinished-" + htmlSafe(u.Dir)
	if f.HasCheckpoint {
		u.Checkpointed = f.CheckpointUnits
	}
	if a := f.Attempt; a != nil {
		u.State, u.Error, u.Claims, u.Units = a.State, a.Error, a.Claims, a.Units
		u.SpecID, u.Title, u.Paper, u.Kind = a.Spec.ID, a.Spec.Title, a.Spec.Paper, a.Spec.Kind
		u.Profile, u.Seed = a.Profile, a.Seed
		if u.Claims == nil {
			u.Claims = []results.AttemptClaim{}
		}
		return u
	}
	u.State, u.RecordErr = "unfinished", f.AttemptErr
	if h := f.Checkpoint; f.HasCheckpoint {
		u.SpecID, u.Profile, u.Seed, u.checkpointBuild, u.specFile = h.SpecID, h.Profile, h.Seed, h.Build, h.SpecFile
		return u
	}
	// Named by its folder: OUT/<spec id>/<profile>-seed<seed>[-secure].
	u.SpecID = filepath.Base(filepath.Dir(dir))
	if g := runName.FindStringSubmatch(filepath.Base(dir)); g != nil {
		u.Profile = g[1]
		u.Seed, _ = strconv.ParseInt(g[2], 10, 64)
	}
	return u
}

// ClaimsKnown reports whether the spec's claims are known (from the
// attempt's record), none or some.
func (u *Unfinished) ClaimsKnown() bool { return u.Claims != nil }

// Headline says in one line how the attempt ended.
func (u *Unfinished) Headline() string {
	a := u.Attempt
	switch {
	case a == nil && u.RecordErr != nil:
		return "unknown whether it finished: its attempt record is unreadable (" + u.RecordErr.Error() + ")"
	case a == nil && u.checkpointDamaged:
		return "did not finish: its folder holds a damaged checkpoint (no readable header: whose units it held is not known), no manifest.json and no record of the attempt"
	case a == nil:
		return "did not finish: its folder holds a checkpoint but no manifest.json, and no record of the attempt (a run by an older build, interrupted or killed)"
	}
	who := fmt.Sprintf("PID %d on %s", a.PID, a.Host)
	switch {
	case a.State == results.AttemptQueued && u.Holder != nil && u.Holder.PID == a.PID && u.Holder.Host == a.Host:
		return fmt.Sprintf("not started yet: queued at %s by %s, which holds the folder (%s): it is at work", stamp(a.Started), who, u.Holder.Command)
	case a.State == results.AttemptRunning && u.Holder != nil && u.Holder.PID == a.PID && u.Holder.Host == a.Host:
		return fmt.Sprintf("not finished yet: started at %s by %s, which holds the folder (%s): it is at work", stamp(a.Started), who, u.Holder.Command)
	case a.State == results.AttemptQueued && u.Holder != nil:
		return fmt.Sprintf("not started yet: queued at %s by %s; %s", stamp(a.Started), who, u.heldBy())
	case a.State == results.AttemptRunning && u.Holder != nil:
		return fmt.Sprintf("not finished yet: started at %s by %s; %s", stamp(a.Started), who, u.heldBy())
	case a.State == results.AttemptQueued && u.LockErr == nil:
		return fmt.Sprintf("not started: queued at %s by %s, %s", stamp(a.Started), who, NoHolder)
	case a.State == results.AttemptRunning && u.LockErr == nil:
		return fmt.Sprintf("did not finish: started at %s by %s, %s", stamp(a.Started), who, NoHolder)
	}
	switch a.State {
	case results.AttemptQueued:
		return fmt.Sprintf("not started: queued at %s by %s, which stopped before it began (killed, crashed, or the machine went down) or is still running the specs before it", stamp(a.Started), who)
	case results.AttemptRunning:
		return fmt.Sprintf("did not finish: started at %s by %s, which stopped without a word (killed, crashed, or the machine went down) or is still running", stamp(a.Started), who)
	case results.AttemptNotStarted:
		return "not started: the command that was to run it was interrupted before it began"
	case results.AttemptInterrupted:
		return "interrupted (Ctrl-C or SIGTERM) at " + stamp(a.Updated)
	case results.AttemptNotRun:
		return "not run: its experiment could not be built (at " + stamp(a.Updated) + ")"
	case results.AttemptShardDone:
		return "only a shard of it was run here: the run is finished by merging every shard (dprepro merge)"
	}
	return "failed at " + stamp(a.Updated)
}

// NoHolder is what the report and dprepro check say of a run folder
// whose attempt record says queued or running while no process holds the
// folder's lock (runner.HeldBy): the process that wrote the record is
// gone.
const NoHolder = "but no process holds the folder now: it was killed, crashed or lost its machine before it could record how it ended"

// heldBy names the process at work in the folder now.
func (u *Unfinished) heldBy() string {
	h := u.Holder
	if h.PID == 0 {
		return "a process holds the folder (it has not named itself yet): it is at work"
	}
	return fmt.Sprintf("PID %d on %s holds the folder (%s): it is at work", h.PID, h.Host, h.Command)
}

// StateNote says in a few words how the folder's latest attempt stands,
// for dprepro check: its State, or, for a record that says queued or
// running, whether a process holds the folder now.
func (u *Unfinished) StateNote() string {
	a := u.Attempt
	switch {
	case a == nil || !a.Unfinished() || u.LockErr != nil:
		return u.State
	case u.Holder != nil:
		return fmt.Sprintf("%s: %s", a.State, u.heldBy())
	}
	return fmt.Sprintf("its record says %s, %s", a.State, NoHolder)
}

// stamp formats a time for the report.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "an unknown time"
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
}

// NotRunText says what of the run did not run: its claims, its results
// and how far its checkpoint got.
func (u *Unfinished) NotRunText() string {
	var claimsText string
	switch {
	case u.Claims == nil:
		claimsText = "its claims (unknown: no record of its spec; they are not counted)"
	case u.ClaimsFromSpec && len(u.Claims) == 0:
		claimsText = "no claims (its spec file " + u.specFile + " transcribes none now)"
	case u.ClaimsFromSpec:
		claimsText = fmt.Sprintf("the %d claims its spec file %s transcribes now", len(u.Claims), u.specFile)
	case len(u.Claims) == 0:
		claimsText = "no claims (the spec transcribes none)"
	case len(u.Claims) == 1:
		claimsText = "its 1 claim"
	default:
		claimsText = fmt.Sprintf("its %d claims", len(u.Claims))
	}
	s := claimsText + "; rows.csv, summary.csv, figures and tables"
	switch {
	case u.State == results.AttemptNotRun || u.State == results.AttemptNotStarted || u.State == results.AttemptQueued:
		s += "; no unit of this attempt ran"
		if u.Checkpointed > 0 && u.Earlier == nil {
			s += fmt.Sprintf(" (the checkpoint holds %d units from before)", u.Checkpointed)
		}
	case u.Checkpointed >= 0 && u.Units > 0:
		s += fmt.Sprintf("; %d of %d units are checkpointed", u.Checkpointed, u.Units)
	case u.Checkpointed >= 0:
		s += fmt.Sprintf("; %d units are checkpointed", u.Checkpointed)
	}
	return s
}

// Advice says how to finish the run.
func (u *Unfinished) Advice() string {
	if a := u.Attempt; a != nil && a.Unfinished() && u.Holder != nil {
		// At work now: running the command again would be refused (the
		// folder is in use), and removing the folder would lose its work.
		return "Wait for it to finish (write this report again then), or stop that process first (Ctrl-C: its finished units are checkpointed)."
	}
	switch u.State {
	case results.AttemptShardDone:
		return "Merge the shards (dprepro merge SPEC --shards DIR,DIR,…) into a folder of its own."
	case results.AttemptNotRun:
		return "Fix what the error names and run the same command again; or remove the folder."
	}
	return "Run the same command again to finish it (finished units resume from the checkpoint), or remove the folder."
}

// FailuresNote says, when the attempt's error names only some of the
// units that failed (it names the first few), how many it names and where
// the error of every one is: the run folder's attempt.json, under
// "failures"; "" otherwise.
func (u *Unfinished) FailuresNote() string {
	if u.Attempt == nil || len(u.Attempt.Failures) == 0 {
		return ""
	}
	named := 0
	for _, f := range u.Attempt.Failures {
		if strings.Contains(u.Error, "unit "+f.Unit+": ") {
			named++
		}
	}
	if named == len(u.Attempt.Failures) {
		return ""
	}
	return fmt.Sprintf("The error above names %d of the %d units that failed; the error of every one is in %s/%s (its \"failures\" list).",
		named, len(u.Attempt.Failures), u.Dir, results.AttemptFile)
}

// EarlierNote says, for an attempt whose folder still holds an earlier
// finished run, why that run is shown but not counted; "" when there is
// none.
func (u *Unfinished) EarlierNote() string {
	if u.Earlier == nil {
		return ""
	}
	return fmt.Sprintf("The folder still holds the run finished at %s, before this attempt: it is shown below, but its claims are not counted (they are the results of the spec, data and build of that run, not of the latest attempt).",
		stamp(u.Earlier.Manifest.End))
}

// SupersededNote is the note shown with a finished run whose folder's
// latest attempt did not finish; "" for any other run.
func (run *Run) SupersededNote() string {
	u := run.Superseded
	if u == nil {
		return ""
	}
	return "Not counted: the latest attempt at this run " + u.Verb() + " (see the top of the report); these are the results of the earlier run, finished at " + stamp(run.Manifest.End) + "."
}

// Verb says in a few words what became of the attempt: "failed", "was
// interrupted", …
func (u *Unfinished) Verb() string {
	switch u.State {
	case results.AttemptQueued, results.AttemptNotStarted:
		return "never started"
	case results.AttemptInterrupted:
		return "was interrupted"
	case results.AttemptNotRun:
		return "could not be built"
	case results.AttemptShardDone:
		return "ran one shard only"
	case results.AttemptFailed:
		return "failed"
	}
	return "did not finish"
}

// claimsFromSpec fills the claims of an unfinished run that left no record
// of its attempt from the spec file its checkpoint names, read with read
// (Options.Claims); they stay unknown when there is none or it cannot be
// read.
func (u *Unfinished) claimsFromSpec(read func(string) ([]experiments.ClaimSpec, error)) {
	if u.Claims != nil || u.specFile == "" || read == nil {
		return
	}
	cs, err := read(u.specFile)
	if err != nil {
		return
	}
	u.Claims = make([]results.AttemptClaim, 0, len(cs))
	for _, c := range cs {
		u.Claims = append(u.Claims, results.AttemptClaim{ID: c.ID, Source: c.Source, Statement: c.Statement, Method: c.Method, Metric: c.Metric})
	}
	u.ClaimsFromSpec = true
}

// UnknownClaims counts the runs that did not finish whose claims are not
// known (no record of the attempt, and no spec file to read them from):
// they are counted nowhere, and the report says so.
func (r *Report) UnknownClaims() int {
	n := 0
	for _, u := range r.Unfinished {
		if !u.ClaimsKnown() {
			n++
		}
	}
	return n
}
