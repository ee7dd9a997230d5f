package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dprepro/dprepro/experiments"
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
	Status   string    `json:"status"` // complete, failed: …, interrupted, shard i/N done
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
	if s.Source != nil {
		e.SpecFile = s.Source.Path
	}
	return e
}

// updateIndex merges entries into OUT/index.json (one entry per run
// folder, the newest wins) and rewrites OUT/index.md from it, under a lock
// shared by every process writing into OUT.
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
	md.WriteString("| run folder | spec | profile | seed | status | data | finished (UTC) |\n|---|---|---|---|---|---|---|\n")
	for _, e := range all {
		seed := fmt.Sprint(e.Seed)
		if e.Secure {
			seed += " (secure noise)"
		}
		fmt.Fprintf(&md, "| [%s](%s/) | %s | %s | %s | %s | %s | %s |\n", e.Dir, e.Dir, e.SpecID, e.Profile, seed,
			strings.ReplaceAll(e.Status, "|", "/"), strings.ReplaceAll(e.Data, "|", "/"), e.Finished.Format("2006-01-02 15:04:05"))
	}
	return results.WriteFileAtomic(filepath.Join(out, "index.md"), md.Bytes())
}
