package datasets

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// FileState classifies one data file in a data directory. [Inspect]
// (behind `dprepro list` and `dprepro data verify`) and [Load] (behind
// `dprepro run`) classify through the same code, so they always agree.
type FileState int

const (
	// StateAbsent: neither NAME nor NAME.gz exists (nor a link by either
	// name).
	StateAbsent FileState = iota
	// StateVerified: a regular file, read to the end; its decompressed
	// SHA-256 equals the pinned digest.
	StateVerified
	// StateUnpinned: a regular file, read to the end, with no pinned
	// digest to check it against (twitter, the IPUMS extracts the user
	// supplies). Usable, reported "present, not pinned"; its records are
	// counted and compared with the documented count (FileStatus.Warning).
	StateUnpinned
	// StateMismatch: a regular file whose SHA-256 differs from the pinned
	// digest (Err is a *ChecksumError).
	StateMismatch
	// StateCorrupt: a .gz that fails when read to the end: bad header,
	// truncated stream, CRC or length mismatch in the trailer (Err wraps
	// ErrCorrupt).
	StateCorrupt
	// StateNotRegular: a directory, named pipe (FIFO), socket or device at
	// NAME or NAME.gz. It is never opened, so a FIFO cannot hang a reader
	// (Err wraps ErrNotRegular).
	StateNotRegular
	// StateBadLink: a symbolic link at NAME or NAME.gz that loops or points
	// to nothing (Err wraps ErrBadLink and says which).
	StateBadLink
	// StateUnreadable: the file cannot be examined, opened or read:
	// permission denied, an I/O error, another stat error (Err wraps
	// ErrUnreadable and says which).
	StateUnreadable
	// StateMalformed: a file with no pinned digest whose content does not
	// parse in the dataset's format (Err names the file and line). A
	// pinned file that does not parse is a StateMismatch.
	StateMalformed
)

// String names the state as `dprepro list` and `dprepro data verify` print
// it: lower case for the usable and absent states, upper case for failures.
func (s FileState) String() string {
	switch s {
	case StateAbsent:
		return "absent"
	case StateVerified:
		return "verified"
	case StateUnpinned:
		return "present, not pinned"
	case StateMismatch:
		return "CHECKSUM MISMATCH"
	case StateCorrupt:
		return "CORRUPT"
	case StateNotRegular:
		return "NOT A REGULAR FILE"
	case StateBadLink:
		return "BROKEN SYMLINK"
	case StateUnreadable:
		return "UNREADABLE"
	case StateMalformed:
		return "MALFORMED"
	}
	return "FileState(" + strconv.Itoa(int(s)) + ")"
}

// Usable reports a file that loads as real data: verified, or present and
// not pinned.
func (s FileState) Usable() bool { return s == StateVerified || s == StateUnpinned }

// Failed reports a file that is there but cannot be used: a checksum
// mismatch, a corrupt .gz, something that is not a regular file, a broken
// link, or an unreadable file. Such a file is always an error, never a
// reason to fall back to a synthetic stand-in.
func (s FileState) Failed() bool { return s != StateAbsent && !s.Usable() }

// FileStatus reports one file of a dataset in a data directory.
type FileStatus struct {
	// Name is the registry file name, e.g. "adult.data".
	Name string
	// Path is the path classified: the file read (NAME or NAME.gz), or the
	// one at fault; empty when absent.
	Path string
	// State classifies the file.
	State FileState
	// SHA256 is the digest of the decompressed content, set when the file
	// was read to the end (StateVerified, StateUnpinned, StateMismatch).
	SHA256 string
	// Want is the pinned digest; empty means no pinned checksum.
	Want string
	// Records counts the records of an unpinned file (non-blank lines,
	// minus the header line where the format has one); 0 otherwise.
	Records int
	// Warning, for an unpinned file whose record count is more than 10 %
	// away from the registry's documented count, names both counts, e.g.
	// "ipums-us.txt: 1,000 records, documented 39,928". It is not a
	// failure.
	Warning string
	// Err explains a failure state; it names the path and wraps
	// ErrChecksum, ErrCorrupt, ErrNotRegular, ErrBadLink or ErrUnreadable.
	// Nil for the other states.
	Err error
}

// Inspect classifies each file of the named dataset in dataDir (empty means
// [DefaultDataDir]). Present regular files are read to the end, through
// gzip for NAME.gz, so that the digest covers the whole content and a
// truncated .gz is caught by its trailer; nothing else is opened. The error
// is non-nil only for an unknown name, or a dataset of a Go [Provider]
// (wrapping [ErrNoFiles]: it has no registry files); per-file problems are
// in FileStatus.State and FileStatus.Err.
func Inspect(name, dataDir string) ([]FileStatus, error) {
	e, err := lookup(name)
	if err != nil {
		return nil, fmt.Errorf("datasets: inspect: %w", err)
	}
	if dataDir == "" {
		dataDir = DefaultDataDir()
	}
	out := make([]FileStatus, len(e.Files))
	for i, f := range e.Files {
		out[i] = inspectFile(e, f, dataDir)
	}
	return out, nil
}

// inspectFile classifies file f of e in dir.
//
// A file with no pinned digest is parsed as well (as Load would), so that
// list, data verify and run agree on a malformed one: no digest vouches for
// it.
func inspectFile(e *Entry, f FileSpec, dir string) FileStatus {
	if f.SHA256 == "" && f.Name == e.Files[0].Name && e.format != nil {
		_, st, err := readReal(e, dir, MissingDrop) // probe, read and parse, as Load does
		if err != nil && st.State == StateUnpinned {
			st.State, st.Err = StateMalformed, err
		}
		return st
	}
	st, gz, ok := probe(dir, f)
	if ok {
		readData(&st, gz, e, nil)
	}
	return st
}

// Available reports, without reading any data file, whether loading the
// named dataset from dir with the given synthetic mode (empty means
// SyntheticAuto) would use the synthetic stand-in (standIn), or would fail
// because of the directory or the file's absence or kind (err): the checks
// of [DataDir.Check], then a stat of NAME and NAME.gz classified as
// [Inspect] and [Load] classify them, then the stand-in policy of
// [Options.Synthetic]. A corrupt or mismatching file passes here and fails
// in Load, which reads it. Call it for every spec before running any, so
// that a missing file stops the run in well under a second. A dataset of a
// Go [Provider] reads what it reads: Available reports (false, nil) for it.
func Available(name string, dir DataDir, synthetic string) (standIn bool, err error) {
	if err := dir.Check(); err != nil {
		return false, fmt.Errorf("datasets: load %s: %w", name, err)
	}
	e, err := lookup(name)
	if errors.Is(err, ErrNoFiles) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("datasets: load: %w", err)
	}
	if synthetic == "" {
		synthetic = SyntheticAuto
	}
	if err := checkSynthetic(synthetic); err != nil {
		return false, fmt.Errorf("datasets: load %s: %w", name, err)
	}
	if synthetic == SyntheticAlways {
		return true, nil
	}
	st, _, ok := probe(dir.Path, e.Files[0])
	switch {
	case ok:
		return false, nil
	case st.State != StateAbsent:
		return false, fmt.Errorf("datasets: load %s: %w", name, st.Err)
	}
	if _, err := absentPolicy(e, dir.Path, dir.Named, synthetic); err != nil {
		return false, fmt.Errorf("datasets: load %s: %w", name, err)
	}
	return true, nil
}

// absentPolicy decides what an absent data file means: the reason recorded
// in the stand-in's Source.Params, or an error wrapping ErrNotFound that
// names the file, the directory and how to fill it.
func absentPolicy(e *Entry, dir string, named bool, synthetic string) (reason string, err error) {
	f := e.Files[0]
	missing := fmt.Sprintf("%s or %s.gz in %s", f.Name, f.Name, dir)
	switch {
	case synthetic == SyntheticAllow:
		return "real file absent (" + missing + "); the spec allows the stand-in (synthetic = \"allow\")", nil
	case synthetic == SyntheticAuto && !named:
		return "real file absent (" + missing + "); no data directory was named, so the stand-in is used", nil
	}
	how := fmt.Sprintf("fill it with `dprepro data fetch %s --data-dir %s`", e.Name, dir)
	if f.Manual != "" {
		how = f.Manual
	}
	if synthetic == SyntheticNever {
		return "", fmt.Errorf("%w: %s (synthetic = \"never\"): %s", ErrNotFound, missing, how)
	}
	return "", fmt.Errorf("%w: %s, the data directory you named (--data-dir or $%s): %s; "+
		"or let the spec run on the labelled synthetic stand-in with data.synthetic = \"allow\"",
		ErrNotFound, missing, EnvDataDir, how)
}

// probe classifies what stands at dir/NAME and dir/NAME.gz without opening
// either. ok reports a regular file to read at st.Path (gz: it is NAME.gz;
// the plain file wins when both exist); otherwise st is final: absent, or a
// failure at either name. Something that is not a regular file at either
// name is a failure even when the other name holds a good file: it is
// never taken for absence.
func probe(dir string, f FileSpec) (st FileStatus, gz, ok bool) {
	st = FileStatus{Name: f.Name, Want: f.SHA256}
	plain := filepath.Join(dir, f.Name)
	gzPath := plain + ".gz"
	pReg, pState, pErr := probePath(plain)
	gReg, gState, gErr := probePath(gzPath)
	switch {
	case pErr != nil:
		st.Path, st.State, st.Err = plain, pState, pErr
	case gErr != nil:
		st.Path, st.State, st.Err = gzPath, gState, gErr
	case pReg:
		st.Path = plain
		return st, false, true
	case gReg:
		st.Path = gzPath
		return st, true, true
	default:
		st.State = StateAbsent
	}
	return st, false, false
}

// probePath stats path (following links). regular reports a regular file;
// otherwise state is StateAbsent (err nil) or a failure state with err.
func probePath(path string) (regular bool, state FileState, err error) {
	fi, serr := os.Stat(path)
	if serr == nil {
		if fi.Mode().IsRegular() {
			return true, 0, nil
		}
		return false, StateNotRegular, fmt.Errorf("%s: %w: %s stands where a data file should be "+
			"(not opened; remove or rename it)", path, ErrNotRegular, describeMode(fi.Mode()))
	}
	state, err = statFailure(path, serr)
	return false, state, err
}

// statFailure classifies a failed os.Stat of path: absent, a broken link,
// or unreadable.
func statFailure(path string, err error) (FileState, error) {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// os.Stat follows links, so a link to nothing reads as absent;
		// Lstat tells it apart.
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			return StateBadLink, fmt.Errorf("%s: %w: dangling, its target %s does not exist", path, ErrBadLink, target)
		}
		return StateAbsent, nil
	case errors.Is(err, syscall.ELOOP):
		return StateBadLink, fmt.Errorf("%s: %w: symbolic link loop (%v)", path, ErrBadLink, cause(err))
	case errors.Is(err, fs.ErrPermission):
		return StateUnreadable, fmt.Errorf("%s: %w: stat: %v", path, ErrUnreadable, cause(err))
	}
	return StateUnreadable, fmt.Errorf("%s: %w: stat: %v", path, ErrUnreadable, cause(err))
}

// readFailure classifies an error met while opening or reading the
// regular file path: an error of the file itself (permission, I/O) makes
// it unreadable; anything else comes from the gzip decoder (bad header,
// truncated stream, CRC or size mismatch in the trailer) and makes it
// corrupt.
func readFailure(path string, err error) (FileState, error) {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return StateUnreadable, fmt.Errorf("%s: %w: %s: %v", path, ErrUnreadable, pe.Op, pe.Err)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("%v (truncated)", err)
	}
	return StateCorrupt, fmt.Errorf("%s: %w: %v (a truncated or damaged copy: fetch or copy it again)", path, ErrCorrupt, err)
}

// cause strips the *fs.PathError around err, whose text repeats the path.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readData opens the regular file st.Path that probe found, hands its
// decompressed content to consume (nil: none), reads what consume left to
// the end (so that the digest covers the whole content and gzip checks its
// trailer) and sets st's final state. It returns consume's error, which the
// caller weighs against the state (a checksum mismatch explains a parse
// error; a read error is reported through the state).
//
// The file is opened only after probe found a regular file; a file swapped
// for a FIFO between the stat and the open is not guarded against.
func readData(st *FileStatus, gz bool, e *Entry, consume func(io.Reader) error) error {
	f, err := os.Open(st.Path)
	if err != nil {
		st.State, st.Err = readFailure(st.Path, err)
		return nil
	}
	defer f.Close()
	var r io.Reader = f
	if gz {
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			st.State, st.Err = readFailure(st.Path, err)
			return nil
		}
		defer zr.Close()
		r = zr
	}
	h := sha256.New()
	var w io.Writer = h
	var cnt *recordCounter
	if st.Want == "" {
		cnt = &recordCounter{}
		w = io.MultiWriter(h, cnt)
	}
	tr := io.TeeReader(r, w)
	var cerr error
	if consume != nil {
		cerr = consume(tr)
	}
	if _, err := io.Copy(io.Discard, tr); err != nil {
		st.State, st.Err = readFailure(st.Path, err)
		return cerr
	}
	st.SHA256 = hex.EncodeToString(h.Sum(nil))
	switch {
	case st.Want == "":
		st.State = StateUnpinned
		st.Records = cnt.count()
		if e.format != nil && e.format.header && st.Records > 0 {
			st.Records--
		}
		st.Warning = recordWarning(st.Name, st.Records, e.Records)
	case st.SHA256 == st.Want:
		st.State = StateVerified
	default:
		st.State = StateMismatch
		st.Err = &ChecksumError{File: st.Name, Path: st.Path, Got: st.SHA256, Want: st.Want}
	}
	return cerr
}

// recordWarning names both counts when got is more than 10 % away from the
// documented count doc (0: unknown, no warning).
func recordWarning(file string, got, doc int) string {
	if doc <= 0 {
		return ""
	}
	diff := got - doc
	if diff < 0 {
		diff = -diff
	}
	if 10*diff <= doc {
		return ""
	}
	return fmt.Sprintf("%s: %s records, documented %s", file, thousands(got), thousands(doc))
}

// thousands formats n with comma separators: 39928 → "39,928".
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}

// recordCounter counts the non-blank lines written to it (a line holding
// only spaces, tabs and '\r' is blank, as for the parsers).
type recordCounter struct {
	lines  int
	inLine bool // the current line has a non-blank byte
}

func (c *recordCounter) Write(p []byte) (int, error) {
	for _, b := range p {
		switch b {
		case '\n':
			if c.inLine {
				c.lines++
			}
			c.inLine = false
		case ' ', '\t', '\r':
		default:
			c.inLine = true
		}
	}
	return len(p), nil
}

// count returns the lines counted, including a last line with no newline.
func (c *recordCounter) count() int {
	if c.inLine {
		return c.lines + 1
	}
	return c.lines
}
