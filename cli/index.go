package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/report"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// indexEntry is one run in an output folder's index (OUT/index.json and
// OUT/index.md): what ran, where its files are, and how it ended.
type indexEntry struct {
	Dir      string    `json:"dir"` // relative to OUT
	SpecID   string    `json:"spec_id"`
	SpecFile string    `json:"spec_file"`
	Title    string    `json:"title"`
	Kind     string    `json:"kind"`
	Profile  string    `json:"profile"`
	Seed     int64     `json:"seed"`
	Secure   bool      `json:"secure_noise"`
	Status   string    `json:"status"`          // complete, failed: …, not run …: …, interrupted, not started: …, unfinished: …, queued: …, running: …, shard i/N done; "; the folder still holds the earlier run …" when it does
	Error    string    `json:"error,omitempty"` // the error the run ended with, in full (of failed units, the first few and where every one is)
	Data     string    `json:"data"`
	Build    string    `json:"build"`
	Finished time.Time `json:"finished"`
	Seconds  float64   `json:"wall_seconds"`
}

func newIndexEntry(out string, s *experiments.Spec) indexEntry {
	rel, err := filepath.Rel(out, runner.RunDir(out, s))
	if err != nil {
		rel = runner.RunDir(out, s)
	}
	e := indexEntry{Dir: filepath.ToSlash(rel), SpecID: s.ID, Title: s.Title, Kind: s.Kind,
		Profile: s.Profile, Seed: s.Seed, Secure: s.Output.SecureNoise, Build: results.ReadBuild().Identity()}
	e.SpecFile = specFile(s)
	return e
}

// updateIndex merges entries into OUT/index.json (one entry per run
// folder, the newest wins), makes every entry say what its folder holds
// now (reconcile), and rewrites OUT/index.md from it, under a lock shared
// by every process writing into OUT.
func updateIndex(out string, entries []indexEntry) error {
	if len(entries) == 0 {
		return nil
	}
	lock, err := runner.LockWait(filepath.Join(out, ".index"))
	if err != nil {
		return err
	}
	defer lock.Release()
	path := filepath.Join(out, "index.json")
	var all []indexEntry
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &all); err != nil {
			return fmt.Errorf("%s: %w (remove it; it is rebuilt by the next run)", path, err)
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	byDir := map[string]indexEntry{}
	for _, e := range all {
		byDir[e.Dir] = e
	}
	for _, e := range entries {
		byDir[e.Dir] = e
	}
	reconcile(out, byDir)
	all = all[:0]
	for _, e := range byDir {
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Dir < all[j].Dir })
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := results.WriteFileAtomic(path, append(b, '\n')); err != nil {
		return err
	}
	var md bytes.Buffer
	md.WriteString("# Runs in this folder\n\nWritten by dprepro after every run into this folder; `index.json` holds the same.\n\n")
	md.WriteString("| run folder | spec | profile | seed | status | data | finished, or last changed (UTC) |\n|---|---|---|---|---|---|---|\n")
	for _, e := range all {
		seed := fmt.Sprint(e.Seed)
		if e.Secure {
			seed += " (secure noise)"
		}
		// Statuses carry errors, which quote spec text: escaped as in
		// report.md (no HTML, no Markdown of their own).
		fmt.Fprintf(&md, "| [%s](%s/) | %s | %s | %s | %s | %s | %s |\n", report.MarkdownText(e.Dir), e.Dir, report.MarkdownText(e.SpecID), report.MarkdownText(e.Profile), seed,
			report.MarkdownText(e.Status), report.MarkdownText(e.Data), e.Finished.Format("2006-01-02 15:04:05"))
	}
	return results.WriteFileAtomic(filepath.Join(out, "index.md"), md.Bytes())
}

// reconcile makes the index entries byDir (by folder relative to out) say
// what their folders hold now, where a process could not say it itself:
// a run folder whose latest attempt was stopped without a word (SIGKILL, a
// crash), or is running now, is "unfinished" whatever an earlier entry
// said; an entry "complete" whose folder no longer holds a manifest is
// "unfinished"; and a folder whose attempt record (report.Folder) is not
// in the index at all (a command killed before it wrote the index) gets an
// entry from that record.
func reconcile(out string, byDir map[string]indexEntry) {
	dirs, err := report.FindUnfinished(out, 3)
	if err != nil {
		return // the entries stand as written
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		rel, err := filepath.Rel(out, d)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		f, err := report.ReadFolder(d)
		if err != nil {
			continue
		}
		e, ok := byDir[rel]
		a := f.Attempt
		switch {
		case f.AttemptErr != nil:
			if !ok {
				e = indexEntry{Dir: rel, SpecID: filepath.Base(filepath.Dir(d))}
			}
			e.Status = "unfinished: unknown whether it finished, its attempt record is unreadable: " + firstLine(f.AttemptErr.Error())
		case !ok && a != nil:
			e = indexEntry{Dir: rel, SpecID: a.Spec.ID, SpecFile: a.Spec.File, Title: a.Spec.Title, Kind: a.Spec.Kind,
				Profile: a.Profile, Seed: a.Seed, Secure: a.SecureNoise, Build: a.Build, Finished: a.Updated.Truncate(time.Second),
				Status: attemptStatus(f), Error: a.Error}
		case !ok:
			h := f.Checkpoint
			e = indexEntry{Dir: rel, SpecID: h.SpecID, Profile: h.Profile, Seed: h.Seed, Build: h.Build,
				Status: fmt.Sprintf("unfinished: a checkpoint of %d units and no manifest.json (interrupted or killed; no record of the attempt)", f.CheckpointUnits)}
		case a != nil && (a.Unfinished() || e.Status == "complete"):
			// Stopped without a word (or running now), or ended after
			// the entry was written by a process killed before it wrote
			// the index.
			e.Status, e.Error = attemptStatus(f), a.Error
			e.Finished = a.Updated.Truncate(time.Second)
		case e.Status == "complete" && f.Manifest == nil:
			e.Status = fmt.Sprintf("unfinished: the folder holds no manifest.json, only a checkpoint of %d units (a later run of it was stopped)", f.CheckpointUnits)
		default:
			continue
		}
		byDir[rel] = e
	}
	for rel, e := range byDir {
		if seen[rel] || e.Status != "complete" {
			continue
		}
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(rel), "manifest.json")); os.IsNotExist(err) {
			e.Status = "unfinished: the folder holds no manifest.json (a later run of it was stopped, or its files were removed)"
			byDir[rel] = e
		}
	}
}

// attemptStatus is the index status of a run folder f from the record of
// its latest attempt (f.Attempt, not nil), with the earlier finished run
// the folder still holds, if any; for a record that says queued or
// running, whether a process is at work in the folder (its lock, as the
// report tells it).
func attemptStatus(f report.Folder) string {
	s := attemptState(f)
	if f.Manifest != nil && f.Attempt.State != results.AttemptNotRun {
		s += "; " + earlierNote(f.Manifest)
	}
	return s
}

// attemptState is attemptStatus without the earlier run.
func attemptState(f report.Folder) string {
	a := f.Attempt
	switch {
	case a.State == results.AttemptQueued && f.Holder != nil:
		return fmt.Sprintf("queued: by PID %d on %s at %s; %s holds the folder now", a.PID, a.Host, a.Started.Format(time.RFC3339), holderName(f.Holder))
	case a.State == results.AttemptRunning && f.Holder != nil:
		return fmt.Sprintf("running: started by PID %d on %s at %s; %s holds the folder now", a.PID, a.Host, a.Started.Format(time.RFC3339), holderName(f.Holder))
	case a.State == results.AttemptQueued && f.LockErr == nil:
		return fmt.Sprintf("unfinished: queued by PID %d on %s at %s, %s", a.PID, a.Host, a.Started.Format(time.RFC3339), report.NoHolder)
	case a.State == results.AttemptRunning && f.LockErr == nil:
		return fmt.Sprintf("unfinished: started by PID %d on %s at %s, %s", a.PID, a.Host, a.Started.Format(time.RFC3339), report.NoHolder)
	}
	switch a.State {
	case results.AttemptQueued:
		return fmt.Sprintf("unfinished: queued by PID %d on %s at %s, which stopped before it began (killed, or crashed) or is still running", a.PID, a.Host, a.Started.Format(time.RFC3339))
	case results.AttemptRunning:
		return fmt.Sprintf("unfinished: started by PID %d on %s at %s, which stopped without a word (killed, or crashed) or is still running", a.PID, a.Host, a.Started.Format(time.RFC3339))
	case results.AttemptNotStarted:
		return "not started: the command was interrupted before it (run the same command again to run it)"
	case results.AttemptInterrupted:
		return "interrupted"
	case results.AttemptNotRun:
		return "not run (an earlier run's files, if any, are untouched): " + firstLine(a.Error)
	case results.AttemptShardDone:
		return "shard done"
	}
	return "failed: " + firstLine(a.Error)
}

// holderName names the process that holds a run folder's lock.
func holderName(h *runner.Holder) string {
	if h.PID == 0 {
		return "a process"
	}
	return fmt.Sprintf("PID %d on %s", h.PID, h.Host)
}
