package results

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestAttempt_RoundTrip: a record written is read back as it was; a folder
// without one reads as nil; removing it twice is no error; a damaged
// record is an error naming the file.
func TestAttempt_RoundTrip(t *testing.T) {
	dir := t.TempDir()
	if a, err := ReadAttempt(dir); a != nil || err != nil {
		t.Fatalf("no record: %v, %v", a, err)
	}
	want := &Attempt{State: AttemptFailed, Error: "x: 2 of 8 units failed:\nunit a: boom", Spec: SpecInfo{ID: "x", Title: "T"},
		Profile: "quick", Seed: 3, Units: 8, Claims: []AttemptClaim{{ID: "c1", Source: "Table 1", Statement: "s"}},
		Started: time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC), Updated: time.Date(2024, 1, 2, 3, 5, 0, 0, time.UTC), PID: 42, Host: "h"}
	if err := WriteAttempt(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAttempt(dir)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
	for i := 0; i < 2; i++ {
		if err := RemoveAttempt(dir); err != nil {
			t.Fatal(err)
		}
	}
	if a, _ := ReadAttempt(dir); a != nil {
		t.Error("the record is still there")
	}
	os.WriteFile(filepath.Join(dir, AttemptFile), []byte("{"), 0o644)
	if _, err := ReadAttempt(dir); err == nil {
		t.Error("a damaged record read without error")
	}
}

// TestAttempt_Supersedes: an attempt stands for its folder when the
// folder holds no finished run, or when it started after that run and
// touched the folder; a queued or never-started one leaves a finished run
// standing, and a record older than the run (its process died between the
// manifest and removing the record) is superseded by it.
func TestAttempt_Supersedes(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	m := &Manifest{Start: t0}
	for _, c := range []struct {
		state   string
		started time.Time
		m       *Manifest
		want    bool
	}{
		{AttemptFailed, t0.Add(time.Second), nil, true},
		{AttemptQueued, t0, nil, true},
		{AttemptNotStarted, t0, nil, true},
		{AttemptFailed, t0.Add(time.Second), m, true},
		{AttemptNotRun, t0.Add(time.Second), m, true},
		{AttemptRunning, t0.Add(time.Second), m, true},
		{AttemptRunning, t0.Add(-time.Second), m, false},
		{AttemptQueued, t0.Add(time.Second), m, false},
		{AttemptNotStarted, t0.Add(time.Second), m, false},
	} {
		a := &Attempt{State: c.state, Started: c.started}
		if got := a.Supersedes(c.m); got != c.want {
			t.Errorf("%s started %v, manifest %v: %v, want %v", c.state, c.started, c.m != nil, got, c.want)
		}
	}
}

// TestCheckpointProgress counts the complete unit lines after the header
// and leaves the file as it was; a torn last line is not counted.
func TestCheckpointProgress(t *testing.T) {
	dir := t.TempDir()
	if _, _, ok := CheckpointProgress(dir); ok {
		t.Error("no checkpoint: ok")
	}
	h := CheckpointHeader{SpecID: "s", Profile: "quick", Seed: 7}
	cp, _, err := OpenCheckpoint(filepath.Join(dir, ".checkpoint"), h)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"a", "b", "c"} {
		if err := cp.Append(u, []Row{{"x": "1"}}); err != nil {
			t.Fatal(err)
		}
	}
	cp.Close()
	path := filepath.Join(dir, ".checkpoint", "units.jsonl")
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"unit":"d","ro`) // torn
	f.Close()
	before, _ := os.ReadFile(path)
	got, n, ok := CheckpointProgress(dir)
	if !ok || n != 3 || got.SpecID != "s" || got.Seed != 7 {
		t.Errorf("progress %+v, %d, %v; want spec s, seed 7, 3 units", got, n, ok)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("CheckpointProgress changed the checkpoint")
	}
}
