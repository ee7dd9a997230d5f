package results

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Checkpoint is the append-only record of finished replicate units of a run
// in progress (OUT/<id>/.checkpoint/units.jsonl). Its first line is a header
// holding the spec hash, seed and the program's hash; each further line holds one unit's rows and
// a SHA-256 of them. A run started again with the same header skips the units
// found; a different header starts the run over. A torn last line (a crash
// mid-write) is dropped; a damaged line elsewhere is an error, never silently
// used.
type Checkpoint struct {
	torn bool // the file ended in a torn record, dropped
	path string
	f    *os.File
	done map[string][]Row
}

// CheckpointHeader identifies the configuration a checkpoint belongs to.
type CheckpointHeader struct {
	Format   int    `json:"format"`
	SpecHash string `json:"spec_hash"`
	Seed     int64  `json:"seed"`
	Binary   string `json:"binary"` // SHA-256 of the program that wrote it
}

type checkpointLine struct {
	Unit string `json:"unit"`
	Rows []Row  `json:"rows"`
	Sum  string `json:"sum"`
}

func rowsSum(unit string, rows []Row) (string, error) {
	b, err := json.Marshal(struct {
		U string `json:"u"`
		R []Row  `json:"r"`
	}{unit, rows})
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:16]), nil
}

// OpenCheckpoint opens (or creates) the checkpoint in dir for header h and
// returns it with the units already finished. stale reports that a
// checkpoint for another configuration was found and discarded.
func OpenCheckpoint(dir string, h CheckpointHeader) (cp *Checkpoint, stale bool, err error) {
	h.Format = 1
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("results: %w", err)
	}
	path := filepath.Join(dir, "units.jsonl")
	cp = &Checkpoint{path: path, done: map[string][]Row{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, false, fmt.Errorf("results: reading checkpoint: %w", err)
	default:
		ok, err := cp.parse(data, h, false)
		if err != nil {
			return nil, false, err
		}
		stale = !ok
	}
	if stale || len(data) == 0 || errors.Is(err, os.ErrNotExist) {
		cp.done = map[string][]Row{}
		hb, _ := json.Marshal(h)
		if err := WriteFileAtomic(path, append(hb, '\n')); err != nil {
			return nil, false, err
		}
	} else if err := cp.rewriteValid(h); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("results: opening checkpoint: %w", err)
	}
	cp.f = f
	return cp, stale, nil
}

// parse loads data; it returns false when the header does not match h.
// strict (for merging a shard, which must be finished) refuses a torn final
// line, and a unit recorded twice with different rows, instead of
// dropping or overwriting them.
func (cp *Checkpoint) parse(data []byte, h CheckpointHeader, strict bool) (bool, error) {
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines) == 0 || len(bytes.TrimSpace(lines[0])) == 0 {
		return false, nil
	}
	var got CheckpointHeader
	if err := json.Unmarshal(lines[0], &got); err != nil || got != h {
		return false, nil
	}
	last := len(lines) - 1
	for last > 0 && len(bytes.TrimSpace(lines[last])) == 0 {
		last--
	}
	for i := 1; i <= last; i++ {
		var cl checkpointLine
		err := json.Unmarshal(lines[i], &cl)
		var sum string
		if err == nil {
			sum, err = rowsSum(cl.Unit, cl.Rows)
		}
		if err == nil && sum != cl.Sum {
			err = fmt.Errorf("checksum mismatch")
		}
		if err != nil {
			if i == last && !bytes.HasSuffix(data, []byte{'\n'}) && !strict {
				cp.torn = true
				break // torn final write: the unit is recomputed
			}
			return false, fmt.Errorf("results: checkpoint %s line %d is damaged (%v); remove the .checkpoint folder to start the run over", cp.path, i+1, err)
		}
		if prev, dup := cp.done[cl.Unit]; dup && strict {
			if a, _ := rowsSum(cl.Unit, prev); a != cl.Sum {
				return false, fmt.Errorf("results: checkpoint %s line %d: unit %s recorded twice with different rows", cp.path, i+1, cl.Unit)
			}
		}
		cp.done[cl.Unit] = cl.Rows
	}
	return true, nil
}

// rewriteValid rewrites the file with only the valid lines, dropping a torn
// tail so that appends start on a fresh line. Units are written in sorted
// order so that the file's bytes do not depend on map iteration.
func (cp *Checkpoint) rewriteValid(h CheckpointHeader) error {
	var buf bytes.Buffer
	hb, _ := json.Marshal(h)
	buf.Write(hb)
	buf.WriteByte('\n')
	units := make([]string, 0, len(cp.done))
	for unit := range cp.done {
		units = append(units, unit)
	}
	slices.Sort(units)
	for _, unit := range units {
		if err := writeLine(&buf, unit, cp.done[unit]); err != nil {
			return err
		}
	}
	return WriteFileAtomic(cp.path, buf.Bytes())
}

func writeLine(w io.Writer, unit string, rows []Row) error {
	sum, err := rowsSum(unit, rows)
	if err != nil {
		return err
	}
	b, err := json.Marshal(checkpointLine{Unit: unit, Rows: rows, Sum: sum})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Torn reports that the checkpoint ended in a torn record (a write cut
// short by a crash), which was dropped: that unit is computed again.
func (cp *Checkpoint) Torn() bool { return cp.torn }

// Done returns the rows of a finished unit.
func (cp *Checkpoint) Done(unit string) ([]Row, bool) {
	r, ok := cp.done[unit]
	return r, ok
}

// Len is the number of finished units.
func (cp *Checkpoint) Len() int { return len(cp.done) }

// Append records a finished unit durably. It is not safe for concurrent use.
func (cp *Checkpoint) Append(unit string, rows []Row) error {
	w := bufio.NewWriter(cp.f)
	if err := writeLine(w, unit, rows); err != nil {
		return fmt.Errorf("results: checkpoint: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("results: checkpoint: %w", err)
	}
	if err := cp.f.Sync(); err != nil {
		return fmt.Errorf("results: checkpoint: %w", err)
	}
	cp.done[unit] = rows
	return nil
}

// Close closes the file.
func (cp *Checkpoint) Close() error {
	if cp.f == nil {
		return nil
	}
	err := cp.f.Close()
	cp.f = nil
	return err
}

// ErrIncompleteMerge reports shards that do not hold every unit of a run.
var ErrIncompleteMerge = errors.New("results: a shard is missing or unfinished")

// MergeCheckpoints writes to the checkpoint folder dst the union of the
// units recorded in the checkpoint folders srcs (the shards of one run),
// every one of which must carry header h: made for the same spec, seed and
// build, and be intact (no torn or damaged line). A unit found twice must
// have the same rows. The union must be exactly the units want; otherwise
// nothing is written and the error names the missing or unexpected units.
// Lines are written sorted by unit, atomically. It returns the number of
// units.
func MergeCheckpoints(dst string, h CheckpointHeader, srcs []string, want []string) (int, error) {
	h.Format = 1
	union := map[string][]Row{}
	for _, src := range srcs {
		path := filepath.Join(src, "units.jsonl")
		data, err := os.ReadFile(path)
		if err != nil {
			return 0, fmt.Errorf("results: shard: %w", err)
		}
		cp := &Checkpoint{path: path, done: map[string][]Row{}}
		ok, err := cp.parse(data, h, true)
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, fmt.Errorf("results: shard %s was made for another spec, seed or build (its header differs)", path)
		}
		for unit, rows := range cp.done {
			if prev, dup := union[unit]; dup {
				a, _ := rowsSum(unit, prev)
				b, _ := rowsSum(unit, rows)
				if a != b {
					return 0, fmt.Errorf("results: unit %s differs between shards (%s)", unit, path)
				}
			}
			union[unit] = rows
		}
	}
	units := make([]string, 0, len(union))
	for u := range union {
		units = append(units, u)
	}
	slices.Sort(units)
	wantSet := map[string]bool{}
	var missing, extra []string
	for _, u := range want {
		wantSet[u] = true
		if _, ok := union[u]; !ok {
			missing = append(missing, u)
		}
	}
	for _, u := range units {
		if !wantSet[u] {
			extra = append(extra, u)
		}
	}
	if len(extra) > 0 {
		return 0, fmt.Errorf("results: the shards hold %d units the run does not have (e.g. %s)", len(extra), extra[0])
	}
	if len(missing) > 0 {
		return 0, fmt.Errorf("%w: the shards hold %d of %d units (missing e.g. %s)", ErrIncompleteMerge, len(want)-len(missing), len(want), missing[0])
	}
	var buf bytes.Buffer
	hb, _ := json.Marshal(h)
	buf.Write(hb)
	buf.WriteByte('\n')
	for _, u := range units {
		if err := writeLine(&buf, u, union[u]); err != nil {
			return 0, err
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return 0, fmt.Errorf("results: %w", err)
	}
	return len(units), WriteFileAtomic(filepath.Join(dst, "units.jsonl"), buf.Bytes())
}
