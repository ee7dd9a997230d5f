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
	"strings"
)

// Checkpoint is the append-only record of finished replicate units of a run
// in progress (RUN_DIR/.checkpoint/units.jsonl). Its first line is a header
// holding the run's identity (CheckpointHeader: resolved spec, seed,
// profile, the data actually read, the build and the program's hash); each
// further line holds one unit's rows and a SHA-256 of them. A run started
// again with the same identity skips the units found; any difference starts
// the run over, and [OpenCheckpoint] says what changed. A torn last line (a
// crash mid-write) is dropped; a damaged line elsewhere is an error, never
// silently used.
type Checkpoint struct {
	torn bool // the file ended in a torn record, dropped
	path string
	f    *os.File
	done map[string][]Row
	// in holds what each finished unit read (AppendInputs), for units
	// of experiments that say (runner.UnitReader); absent for others.
	in map[string]map[string]string
	// times holds each finished unit's measured time (AppendTimed),
	// absent for units recorded without one (an older build).
	times map[string]UnitTime
}

// CheckpointFormat is the version of the checkpoint header written by this
// build. Format 1 (before data and build were recorded) is never resumed.
const CheckpointFormat = 2

// CheckpointHeader is a run's identity: everything that decides the numbers
// its units compute. Two runs with equal headers compute the same rows, so
// one may resume the other's units; the worker count and the shard are not
// part of it (they do not change any row).
type CheckpointHeader struct {
	Format int `json:"format"`
	// SpecID and SpecHash identify the resolved spec (profile and every
	// override applied: experiments.Spec.Hash).
	SpecID   string `json:"spec_id"`
	SpecHash string `json:"spec_hash"`
	// PerUnit reports that SpecHash covers only what every unit reads
	// (runner.UnitReader: the spec without its method lists, grids and
	// method files); each unit's own inputs are on its line, and a unit
	// is resumed only when they are unchanged.
	PerUnit bool   `json:"per_unit,omitempty"`
	Seed    int64  `json:"seed"`
	Profile string `json:"profile"`
	// Data is the data actually read, one entry per dataset in the spec's
	// order: for a real file its name and SHA-256, for a stand-in its
	// generator and parameters (see [DataIdentities]).
	Data []DataIdentity `json:"data"`
	// Build is the module version, VCS revision and dirty flag
	// (BuildInfo.Identity); Binary the SHA-256 of the program file, which
	// tells two builds of one dirty tree apart.
	Build  string `json:"build"`
	Binary string `json:"binary"`
	// SpecFile is where the spec came from, as the manifest records it
	// (SpecInfo.File: an absolute path, or "builtin:experiments/ID.toml"),
	// so that a folder holding only a checkpoint still tells which claims
	// its run was to decide. Not part of the identity ([Changes]): the
	// same spec read from another path is the same run.
	SpecFile string `json:"spec_file,omitempty"`
	// SpecKeys are the resolved spec's settings (FlattenSpec), so that a
	// run of another spec can name the keys that changed. Not part of the
	// identity (SpecHash is): wording only.
	SpecKeys map[string]string `json:"spec_keys,omitempty"`
}

// ReadCheckpointHeader reads the header of the checkpoint in the run
// folder dir (its first line) without reading its units; ok is false when
// dir holds no checkpoint with a readable header.
func ReadCheckpointHeader(dir string) (h CheckpointHeader, ok bool) {
	f, err := os.Open(filepath.Join(dir, ".checkpoint", "units.jsonl"))
	if err != nil {
		return h, false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &h) != nil {
		return CheckpointHeader{}, false
	}
	return h, true
}

// DataIdentity is what a run read for one dataset.
type DataIdentity struct {
	Name string `json:"name"`
	// Source is "real FILE sha256 HEX[ missing=level][, FILE sha256 HEX]" or "synthetic
	// GENERATOR (k=v, …)".
	Source string `json:"source"`
}

// DataIdentities returns the identity of the datasets of a run: for real
// data the files and their SHA-256 (not their paths: the same bytes
// elsewhere are the same data), for a stand-in its generator and
// parameters (not the reason it was used).
func DataIdentities(ds []DatasetInfo) []DataIdentity {
	out := make([]DataIdentity, 0, len(ds))
	for _, d := range ds {
		var src string
		if d.Source == "real" {
			parts := make([]string, len(d.Files))
			for i, f := range d.Files {
				parts[i] = f.Name + " sha256 " + f.SHA256
				if f.Missing != "" && f.Missing != "drop" {
					// Another reading of the same bytes (data.missing =
					// "level"); "drop", the default, keeps the identity
					// of the manifests written before the policy existed.
					parts[i] += " missing=" + f.Missing
				}
			}
			src = "real " + strings.Join(parts, ", ")
		} else {
			keys := make([]string, 0, len(d.Params))
			for k := range d.Params {
				if k != "reason" {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			kv := make([]string, len(keys))
			for i, k := range keys {
				kv[i] = k + "=" + d.Params[k]
			}
			src = d.Source + " " + d.Generator
			if len(kv) > 0 {
				src += " (" + strings.Join(kv, ", ") + ")"
			}
		}
		out = append(out, DataIdentity{Name: d.Name, Source: src})
	}
	return out
}

// sourceBrief shortens a DataIdentity.Source for messages: a stand-in by
// its generator alone (its parameters are in the manifest).
func sourceBrief(src string) string {
	if strings.HasPrefix(src, "synthetic ") {
		if gen, _, ok := strings.Cut(src, " ("); ok {
			return gen
		}
	}
	return src
}

// keysNote is ": " and the keys that differ between old's and h's spec
// settings (keyChanges), or "" when a header lacks them.
func keysNote(old, h CheckpointHeader) string {
	if k := keyChanges(old.SpecKeys, h.SpecKeys, 6); k != "" {
		return ": " + k
	}
	return ""
}

// Changes lists, in words, what differs between an old header and h, the
// current one: e.g. "data: magic changed from synthetic
// planted-logistic/v1 (…) to real magic04.data sha256 318f…". It is empty
// when they are equal.
func (h CheckpointHeader) Changes(old CheckpointHeader) []string {
	var ch []string
	if old.Format != h.Format {
		return []string{fmt.Sprintf("format: the checkpoint was written in format %d by an older dprepro that did not record the data and build (this one writes %d)", old.Format, h.Format)}
	}
	if old.SpecID != h.SpecID {
		ch = append(ch, fmt.Sprintf("spec: id %q changed to %q", old.SpecID, h.SpecID))
	}
	if old.Seed != h.Seed {
		ch = append(ch, fmt.Sprintf("seed: %d changed to %d", old.Seed, h.Seed))
	}
	if old.Profile != h.Profile {
		ch = append(ch, fmt.Sprintf("profile: %q changed to %q", old.Profile, h.Profile))
	}
	switch {
	case old.PerUnit != h.PerUnit:
		ch = append(ch, "spec: the checkpoint identifies its units another way (written by another version of the kind)")
	case old.SpecHash != h.SpecHash && old.Seed == h.Seed && old.Profile == h.Profile && h.PerUnit:
		ch = append(ch, fmt.Sprintf("spec: a setting every unit reads changed (sha256 %s to %s; a change of one method, grid value or method file recomputes only its units)%s", short(old.SpecHash), short(h.SpecHash), keysNote(old, h)))
	case old.SpecHash != h.SpecHash && old.Seed == h.Seed && old.Profile == h.Profile:
		ch = append(ch, fmt.Sprintf("spec: the resolved spec changed (sha256 %s to %s)%s", short(old.SpecHash), short(h.SpecHash), keysNote(old, h)))
	}
	oldData := map[string]string{}
	for _, d := range old.Data {
		oldData[d.Name] = d.Source
	}
	newData := map[string]bool{}
	for _, d := range h.Data {
		newData[d.Name] = true
		prev, ok := oldData[d.Name]
		switch {
		case !ok:
			ch = append(ch, fmt.Sprintf("data: %s was not read before (now %s)", d.Name, d.Source))
		case prev != d.Source && sourceBrief(prev) == sourceBrief(d.Source):
			ch = append(ch, fmt.Sprintf("data: %s: the parameters of its stand-in changed (%s)", d.Name, sourceBrief(d.Source)))
		case prev != d.Source:
			ch = append(ch, fmt.Sprintf("data: %s changed from %s to %s", d.Name, sourceBrief(prev), sourceBrief(d.Source)))
		}
	}
	for _, d := range old.Data {
		if !newData[d.Name] {
			ch = append(ch, fmt.Sprintf("data: %s is no longer read (was %s)", d.Name, d.Source))
		}
	}
	if old.Build != h.Build {
		ch = append(ch, fmt.Sprintf("build: %s changed to %s", old.Build, h.Build))
	} else if old.Binary != h.Binary && old.Binary != "" {
		// (An empty Binary is a manifest's that does not record it.)
		ch = append(ch, fmt.Sprintf("build: the program changed (binary sha256 %s to %s; same revision, rebuilt)", short(old.Binary), short(h.Binary)))
	}
	return ch
}

type checkpointLine struct {
	Unit string `json:"unit"`
	Rows []Row  `json:"rows"`
	Sum  string `json:"sum"`
	// In is what the unit read (runner.UnitReader), by name; omitted for
	// an experiment that does not say.
	In map[string]string `json:"in,omitempty"`
	// Time is the unit's measured time (a measurement, not a result: it
	// is not covered by Sum, and a unit's rows never depend on it).
	Time *UnitTime `json:"time,omitempty"`
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
// returns it with the units already finished. changes is non-empty when a
// checkpoint of another run identity was found and discarded, and says what
// differed (CheckpointHeader.Changes).
func OpenCheckpoint(dir string, h CheckpointHeader) (cp *Checkpoint, changes []string, err error) {
	h.Format = CheckpointFormat
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	path := filepath.Join(dir, "units.jsonl")
	cp = &Checkpoint{path: path, done: map[string][]Row{}, in: map[string]map[string]string{}, times: map[string]UnitTime{}}
	data, err := os.ReadFile(path)
	fresh := len(data) == 0
	switch {
	case errors.Is(err, os.ErrNotExist):
		fresh = true
	case err != nil:
		return nil, nil, fmt.Errorf("results: reading checkpoint: %w", err)
	default:
		changes, err = cp.parse(data, h, false)
		if err != nil {
			return nil, nil, err
		}
	}
	if len(changes) > 0 || fresh {
		cp.done = map[string][]Row{}
		cp.in = map[string]map[string]string{}
		cp.times = map[string]UnitTime{}
		hb, _ := json.Marshal(h)
		if err := WriteFileAtomic(path, append(hb, '\n')); err != nil {
			return nil, nil, err
		}
	} else if err := cp.rewriteValid(h); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("results: opening checkpoint: %w", err)
	}
	cp.f = f
	return cp, changes, nil
}

// parse loads data; when its header is not h it returns what differs and
// loads nothing. strict (for merging a shard, which must be finished)
// refuses a torn final line, and a unit recorded twice with different rows,
// instead of dropping or overwriting them.
func (cp *Checkpoint) parse(data []byte, h CheckpointHeader, strict bool) ([]string, error) {
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines) == 0 || len(bytes.TrimSpace(lines[0])) == 0 {
		return []string{"the checkpoint has no header"}, nil
	}
	var got CheckpointHeader
	if err := json.Unmarshal(lines[0], &got); err != nil {
		return []string{fmt.Sprintf("the checkpoint header is unreadable (%v)", err)}, nil
	}
	if ch := h.Changes(got); len(ch) > 0 {
		return ch, nil
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
			return nil, fmt.Errorf("results: checkpoint %s line %d is damaged (%v); remove the .checkpoint folder to start the run over", cp.path, i+1, err)
		}
		if prev, dup := cp.done[cl.Unit]; dup && strict {
			if a, _ := rowsSum(cl.Unit, prev); a != cl.Sum {
				return nil, fmt.Errorf("results: checkpoint %s line %d: unit %s recorded twice with different rows", cp.path, i+1, cl.Unit)
			}
		}
		cp.done[cl.Unit] = cl.Rows
		if cp.in != nil {
			if cl.In != nil {
				cp.in[cl.Unit] = cl.In
			} else {
				delete(cp.in, cl.Unit)
			}
		}
		if cp.times != nil {
			if cl.Time != nil {
				cp.times[cl.Unit] = *cl.Time
			} else {
				delete(cp.times, cl.Unit)
			}
		}
	}
	return nil, nil
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
		if err := writeLine(&buf, unit, cp.done[unit], cp.in[unit], timeOf(cp.times, unit)); err != nil {
			return err
		}
	}
	return WriteFileAtomic(cp.path, buf.Bytes())
}

// timeOf returns a pointer to the time of unit in times, nil when absent.
func timeOf(times map[string]UnitTime, unit string) *UnitTime {
	if t, ok := times[unit]; ok {
		return &t
	}
	return nil
}

func writeLine(w io.Writer, unit string, rows []Row, in map[string]string, t *UnitTime) error {
	sum, err := rowsSum(unit, rows)
	if err != nil {
		return err
	}
	b, err := json.Marshal(checkpointLine{Unit: unit, Rows: rows, Sum: sum, In: in, Time: t})
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

// Inputs returns what a finished unit read, as AppendInputs recorded it
// (nil when it recorded none).
func (cp *Checkpoint) Inputs(unit string) map[string]string { return cp.in[unit] }

// Time returns the measured time a finished unit was recorded with
// (AppendTimed); false when it has none.
func (cp *Checkpoint) Time(unit string) (UnitTime, bool) {
	t, ok := cp.times[unit]
	return t, ok
}

// Append records a finished unit durably. It is not safe for concurrent use.
func (cp *Checkpoint) Append(unit string, rows []Row) error {
	return cp.AppendInputs(unit, rows, nil)
}

// AppendInputs is Append for a unit that read the inputs in (name →
// identity, runner.UnitReader): a later run resumes the unit only when
// it reads the same.
func (cp *Checkpoint) AppendInputs(unit string, rows []Row, in map[string]string) error {
	return cp.AppendTimed(unit, rows, in, nil)
}

// AppendTimed is AppendInputs with the unit's measured time t (nil for
// none), kept beside its rows so that a run resuming the unit, or merging
// the shard that computed it, reports the time it took.
func (cp *Checkpoint) AppendTimed(unit string, rows []Row, in map[string]string, t *UnitTime) error {
	w := bufio.NewWriter(cp.f)
	if err := writeLine(w, unit, rows, in, t); err != nil {
		return fmt.Errorf("results: checkpoint: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("results: checkpoint: %w", err)
	}
	if err := cp.f.Sync(); err != nil {
		return fmt.Errorf("results: checkpoint: %w", err)
	}
	cp.done[unit] = rows
	if in != nil {
		cp.in[unit] = in
	} else {
		delete(cp.in, unit)
	}
	if t != nil {
		cp.times[unit] = *t
	} else {
		delete(cp.times, unit)
	}
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

// MergeRefusal is the error of [MergeCheckpoints] and [CheckShards] when the shards cannot
// be merged as they are — a shard's checkpoint missing, unreadable,
// damaged, made for another run, unfinished ([ErrIncompleteMerge]), or
// disagreeing with another shard — as opposed to a failure to write the
// merged checkpoint. It is bad input: nothing was written.
type MergeRefusal struct{ Err error }

func (e *MergeRefusal) Error() string { return e.Err.Error() }

// Unwrap returns the reason.
func (e *MergeRefusal) Unwrap() error { return e.Err }

// MergeCheckpoints writes to the checkpoint folder dst the union of the
// units recorded in the checkpoint folders srcs (the shards of one run),
// every one of which must carry header h: made for the same spec, seed,
// profile, data and build, and be intact (no torn or damaged line). A unit found twice must
// have the same rows. The union must be exactly the units want; otherwise
// nothing is written and the error names the missing or unexpected units.
// Every such refusal is a *[MergeRefusal]. Lines are written sorted by
// unit, atomically. It returns the number of units.
func MergeCheckpoints(dst string, h CheckpointHeader, srcs []string, want []string) (n int, err error) {
	h.Format = CheckpointFormat
	union, inputs, times, units, err := mergeShards(h, srcs, want)
	if err != nil {
		return 0, &MergeRefusal{Err: err}
	}
	var buf bytes.Buffer
	hb, _ := json.Marshal(h)
	buf.Write(hb)
	buf.WriteByte('\n')
	for _, u := range units {
		if err := writeLine(&buf, u, union[u], inputs[u], timeOf(times, u)); err != nil {
			return 0, err
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return 0, fmt.Errorf("results: %w", err)
	}
	return len(units), WriteFileAtomic(filepath.Join(dst, "units.jsonl"), buf.Bytes())
}

// CheckShards checks, writing nothing, that the shards' checkpoint
// folders srcs can be merged for header h into exactly the units want, as
// [MergeCheckpoints] does; a refusal is a *[MergeRefusal]. A command checks
// every merge before it writes anything, so that a refused merge leaves
// no file behind.
func CheckShards(h CheckpointHeader, srcs []string, want []string) error {
	h.Format = CheckpointFormat
	if _, _, _, _, err := mergeShards(h, srcs, want); err != nil {
		return &MergeRefusal{Err: err}
	}
	return nil
}

// mergeShards reads the shards' checkpoint folders srcs and returns the
// union of their units (and its keys, sorted), or why they cannot be
// merged for header h into exactly the units want. The units' recorded
// times are kept (a unit two shards computed keeps the later shard's).
func mergeShards(h CheckpointHeader, srcs []string, want []string) (map[string][]Row, map[string]map[string]string, map[string]UnitTime, []string, error) {
	union := map[string][]Row{}
	inputs := map[string]map[string]string{}
	times := map[string]UnitTime{}
	for _, src := range srcs {
		path := filepath.Join(src, "units.jsonl")
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("results: shard: %w", err)
		}
		cp := &Checkpoint{path: path, done: map[string][]Row{}, in: map[string]map[string]string{}, times: map[string]UnitTime{}}
		changes, err := cp.parse(data, h, true)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if len(changes) > 0 {
			return nil, nil, nil, nil, fmt.Errorf("results: shard %s was made for another run (another spec, seed, profile, data or build): %s", path, strings.Join(changes, "; "))
		}
		for unit, rows := range cp.done {
			if prev, dup := union[unit]; dup {
				a, _ := rowsSum(unit, prev)
				b, _ := rowsSum(unit, rows)
				if a != b {
					return nil, nil, nil, nil, fmt.Errorf("results: unit %s differs between shards (%s)", unit, path)
				}
			}
			union[unit] = rows
			if in := cp.in[unit]; in != nil {
				inputs[unit] = in
			}
			if t, ok := cp.times[unit]; ok {
				times[unit] = t
			}
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
		return nil, nil, nil, nil, fmt.Errorf("results: the shards hold %d units the run does not have (e.g. %s)", len(extra), extra[0])
	}
	if len(missing) > 0 {
		return nil, nil, nil, nil, fmt.Errorf("%w: the shards hold %d of %d units (missing e.g. %s)", ErrIncompleteMerge, len(want)-len(missing), len(want), missing[0])
	}
	return union, inputs, times, units, nil
}
