package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// AttemptFile is the name of a run folder's record of its latest attempt
// while that attempt has not finished (see [Attempt]).
const AttemptFile = "attempt.json"

// The states of an [Attempt].
const (
	// AttemptQueued: a command has locked the folder and will run it
	// after the specs before it.
	AttemptQueued = "queued"
	// AttemptRunning: the run has started.
	AttemptRunning = "running"
	// AttemptFailed: the run ended with an error (units that failed, an
	// I/O error); its finished units are checkpointed.
	AttemptFailed = "failed"
	// AttemptNotRun: the spec's experiment could not be built (a data
	// file that does not load, a learner that refuses the spec); the
	// folder's other files are untouched.
	AttemptNotRun = "not run"
	// AttemptInterrupted: stopped by Ctrl-C or SIGTERM; its finished units
	// are checkpointed.
	AttemptInterrupted = "interrupted"
	// AttemptNotStarted: the command was interrupted before it reached
	// this spec.
	AttemptNotStarted = "not started"
	// AttemptShardDone: one shard of the run is done here (a checkpoint);
	// the run is finished by merging every shard (dprepro merge).
	AttemptShardDone = "shard done"
)

// Attempt is the record, in RUN_DIR/attempt.json, of the latest attempt
// at a run that has not finished: written when a command queues or starts
// the run, updated with its outcome when it ends without finishing, and
// removed once the run's manifest.json is written. A folder whose record
// says queued or running while no process works in it was stopped without
// a word (SIGKILL, a crash, a machine that went down). So a folder tells by
// itself whether its latest attempt finished, whatever process reads it
// later (dprepro report, the index). A record older than the folder's
// manifest (Started before Manifest.Start) is superseded by that run.
type Attempt struct {
	State string `json:"state"` // one of the Attempt* states
	// Error is the error the attempt ended with, in full; empty for
	// queued, running and not started. For units that failed it names
	// the first few of them (stderr stays short); Failures lists every one.
	Error string `json:"error,omitempty"`
	// Failures lists every unit that failed, with its error in full, in
	// the order the error lists them (by key); empty when no unit failed.
	Failures []UnitFailure `json:"failures,omitempty"`

	Spec        SpecInfo `json:"spec"`
	Profile     string   `json:"profile"`
	Seed        int64    `json:"seed"`
	SecureNoise bool     `json:"secure_noise"`
	// Units is the number of units of the run (of the shard, for a
	// shard); zero when its experiment was not built.
	Units int `json:"units,omitempty"`
	// Claims are the spec's [[claims]]: none is decided by an attempt
	// that did not finish.
	Claims []AttemptClaim `json:"claims"`
	// Started is when the attempt was queued or started; Updated when its
	// state was last written.
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
	// PID, Host and Command name the process that made the attempt.
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	Command string `json:"command"`
	// Build is the identity of the build that made it (BuildInfo.Identity).
	Build string `json:"build"`
}

// UnitFailure is one failed unit of an attempt: its key and its error in
// full.
type UnitFailure struct {
	Unit  string `json:"unit"`
	Error string `json:"error"`
}

// AttemptClaim is one claim of a spec whose run did not finish: enough to
// say which claims were not run.
type AttemptClaim struct {
	ID        string `json:"id"`
	Source    string `json:"source"`
	Statement string `json:"statement"`
	Method    string `json:"method,omitempty"`
	Metric    string `json:"metric,omitempty"`
}

// Unfinished reports whether the attempt's process may still be working
// (queued or running); once it exits the record says how it ended, so
// such a record in a folder no process works in was left by one that was
// stopped without a word.
func (a *Attempt) Unfinished() bool {
	return a.State == AttemptQueued || a.State == AttemptRunning
}

// Supersedes reports whether the attempt, not the finished run m that its
// folder holds (nil: none), is what the folder stands for: always when
// there is no m; else when the attempt started after m did (so it did not
// produce m) and touched the folder (a queued or not-started attempt never
// did, and leaves m standing).
func (a *Attempt) Supersedes(m *Manifest) bool {
	switch {
	case m == nil:
		return true
	case a.State == AttemptQueued || a.State == AttemptNotStarted:
		return false
	}
	return a.Started.After(m.Start)
}

// WriteAttempt writes a into dir's AttemptFile (atomically).
func WriteAttempt(dir string, a *Attempt) error {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return WriteFileAtomic(filepath.Join(dir, AttemptFile), append(b, '\n'))
}

// ReadAttempt reads dir's AttemptFile; nil and no error when there is none.
func ReadAttempt(dir string) (*Attempt, error) {
	path := filepath.Join(dir, AttemptFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var a Attempt
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if a.State == "" {
		return nil, fmt.Errorf("%s: no state", path)
	}
	return &a, nil
}

// RemoveAttempt removes dir's AttemptFile, if any.
func RemoveAttempt(dir string) error {
	err := os.Remove(filepath.Join(dir, AttemptFile))
	if err == nil || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// CheckpointProgress reads the checkpoint of the run folder dir without
// changing it: its header and the number of units it records (complete
// lines; a torn last line is not counted). ok is false when dir holds no
// readable checkpoint.
func CheckpointProgress(dir string) (h CheckpointHeader, units int, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, ".checkpoint", "units.jsonl"))
	if err != nil {
		return h, 0, false
	}
	head, rest, found := bytes.Cut(b, []byte{'\n'})
	if !found || json.Unmarshal(head, &h) != nil {
		return h, 0, false
	}
	return h, bytes.Count(rest, []byte{'\n'}), true
}
