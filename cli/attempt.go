package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// Every command that runs a spec keeps, in the run folder, the record of
// its attempt (results.Attempt, attempt.json) until the run finishes: queued
// when the command locks the folder, running when the run starts, and on
// an end without a manifest the state and the error it ended with. So a
// failed, interrupted, killed or never-started run is told by its folder
// itself to whatever reads it later (dprepro report, the index), and a
// later run of the same spec that finishes removes the record.

// newAttempt is the record of an attempt at the run of s, in state, at now.
func newAttempt(s *experiments.Spec, state string, now time.Time) *results.Attempt {
	host, _ := os.Hostname()
	a := &results.Attempt{
		State:   state,
		Spec:    results.SpecInfo{ID: s.ID, Title: s.Title, Paper: s.Paper, Kind: s.Kind, Hash: s.Hash(), DesignHash: s.DesignHash()},
		Profile: s.Profile, Seed: s.Seed, SecureNoise: s.Output.SecureNoise,
		Claims:  []results.AttemptClaim{},
		Started: now.UTC(), Updated: now.UTC(),
		PID: os.Getpid(), Host: host, Command: strings.Join(os.Args, " "),
		Build: results.ReadBuild().Identity(),
	}
	if s.Source != nil {
		// The absolute path, as the manifest records it.
		a.Spec.File, a.Spec.FileSHA256 = specFile(s), s.Source.SHA256
	}
	for _, c := range s.Claims {
		a.Claims = append(a.Claims, results.AttemptClaim{ID: c.ID, Source: c.Source, Statement: c.Statement, Method: c.Method, Metric: c.Metric})
	}
	return a
}

// specFile is the spec's file as records name it: its absolute path, or
// "builtin:experiments/ID.toml" (as the manifest's spec.file).
func specFile(s *experiments.Spec) string {
	if s.Source == nil {
		return ""
	}
	return cmp.Or(s.Source.Abs, s.Source.Path)
}

// recordFailures makes the error of a run in dir whose units failed
// (runner.UnitsFailedError) say where the error of every failed unit is
// recorded: the attempt record that endAttempt writes, under "failures".
func recordFailures(err error, dir string) {
	var ufe *runner.UnitsFailedError
	if errors.As(err, &ufe) {
		ufe.Record = filepath.Join(dir, results.AttemptFile) + `, under "failures"`
	}
}

// saveAttempt writes a into the run folder dir. A record that cannot be
// written is said on stderr; the run goes on (the record reports on it,
// it decides nothing).
func saveAttempt(dir string, a *results.Attempt, stderr io.Writer) {
	if err := results.WriteAttempt(dir, a); err != nil {
		fmt.Fprintf(stderr, "dprepro: %s: WARNING: could not record the state of the run (%s) in %s: %v; a report of this folder cannot tell how it ended\n", a.Spec.ID, a.State, dir, err)
	}
}

// clearAttempt removes the record of the run folder dir: the folder holds
// a finished run.
func clearAttempt(dir, id string, stderr io.Writer) {
	if err := results.RemoveAttempt(dir); err != nil {
		fmt.Fprintf(stderr, "dprepro: %s: WARNING: could not remove %s: %v; a report of this folder will say its run did not finish\n", id, filepath.Join(dir, results.AttemptFile), err)
	}
}

// restoreAttempt puts back the record the run folder dir held before the
// command (prev; nil: none), for a command that leaves the folder as it
// was (a shard refused because the folder holds a finished run, a run the
// command never started): an earlier attempt that did not finish stays
// told.
func restoreAttempt(dir, id string, prev *results.Attempt, stderr io.Writer) {
	if prev == nil {
		clearAttempt(dir, id, stderr)
		return
	}
	saveAttempt(dir, prev, stderr)
}

// startAttempts records every spec's attempt as queued in its run folder
// under out, once the command holds their locks. It returns the records,
// and those the folders held before (nil where none, or one that cannot
// be read), for restoreAttempt.
func startAttempts(out string, specs []*experiments.Spec, stderr io.Writer) (as, prev []*results.Attempt) {
	now := time.Now()
	as = make([]*results.Attempt, len(specs))
	prev = make([]*results.Attempt, len(specs))
	for i, s := range specs {
		dir := runner.RunDir(out, s)
		prev[i], _ = results.ReadAttempt(dir)
		as[i] = newAttempt(s, results.AttemptQueued, now)
		saveAttempt(dir, as[i], stderr)
	}
	return as, prev
}

// running records that the attempt a at the run in dir starts now.
func running(dir string, a *results.Attempt, stderr io.Writer) {
	now := time.Now().UTC()
	a.State, a.Started, a.Updated = results.AttemptRunning, now, now
	saveAttempt(dir, a, stderr)
}

// notStartedAttempt records that the command was interrupted before it reached
// the run in dir; a folder holding a finished run is left as it was (with
// the record prev it held before the command, if any). It reports whether
// the folder holds no finished run.
func notStartedAttempt(dir string, a, prev *results.Attempt, stderr io.Writer) bool {
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
		restoreAttempt(dir, a.Spec.ID, prev, stderr)
		return false
	}
	a.State, a.Updated = results.AttemptNotStarted, time.Now().UTC()
	saveAttempt(dir, a, stderr)
	return true
}

// endAttempt records how the attempt a at the run in dir ended with err:
// removed when the run finished; put back as it was before the command
// (prev) when it was refused before it touched a folder that holds a
// finished run (a shard aimed at it); otherwise the state (shard done,
// interrupted, not run when its experiment was not built (loaded false),
// else failed), the error, and every failed unit with its error. units is
// the run's number of units, zero when unknown.
func endAttempt(ctx context.Context, dir string, a, prev *results.Attempt, err error, loaded bool, shard runner.Shard, units int, stderr io.Writer) {
	a.Units, a.Updated = units, time.Now().UTC()
	var ufe *runner.UnitsFailedError
	if errors.As(err, &ufe) {
		for _, f := range ufe.Failures {
			a.Failures = append(a.Failures, results.UnitFailure{Unit: f.Unit, Error: f.Err.Error()})
		}
	}
	switch {
	case err == nil && !shard.Sharded():
		clearAttempt(dir, a.Spec.ID, stderr)
		return
	case errors.Is(err, runner.ErrFinishedRun):
		restoreAttempt(dir, a.Spec.ID, prev, stderr)
		return
	case err == nil:
		a.State = results.AttemptShardDone
		a.Error = fmt.Sprintf("shard %d/%d done: this folder holds its checkpoint only; when every shard is done: dprepro merge %s --shards DIR,DIR,...", shard.Index, shard.Count, a.Spec.ID)
	case ctx.Err() != nil:
		a.State, a.Error = results.AttemptInterrupted, err.Error()
	case !loaded:
		a.State, a.Error = results.AttemptNotRun, err.Error()
	default:
		a.State, a.Error = results.AttemptFailed, err.Error()
	}
	saveAttempt(dir, a, stderr)
}
