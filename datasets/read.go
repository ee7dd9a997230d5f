package datasets

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// readTable reads and verifies the data file of e (e.Files[0]) from dir.
// An absent file is an error wrapping ErrNotFound; a file in a failure
// state is the error [Inspect] reports for it (FileStatus.Err).
func readTable(e *Entry, dir string) (*Table, error) {
	t, st, err := readReal(e, dir, MissingDrop)
	if err == nil {
		return t, nil
	}
	if st.State == StateAbsent {
		f := e.Files[0]
		return nil, fmt.Errorf("%w: %s or %s.gz in %s", ErrNotFound, f.Name, f.Name, dir)
	}
	return nil, err
}

// readReal reads the data file of e from dir through probe and readData,
// the classification [Inspect] uses, and parses it on the way.
//
// The SHA-256 of the decompressed content is computed while parsing. If it
// differs from the pinned digest the result is a *ChecksumError, joined
// with the first parse error if parsing also failed: a file that is not the
// expected file is reported as such rather than by its first odd line. When
// the file is absent, st.State is StateAbsent and err is non-nil.
//
// missing is the missing-value policy of the parse (see [Options.Missing]).
func readReal(e *Entry, dir, missing string) (t *Table, st FileStatus, err error) {
	spec := e.Files[0]
	st, gz, ok := probe(dir, spec)
	if !ok {
		if st.State == StateAbsent {
			return nil, st, ErrNotFound
		}
		return nil, st, st.Err
	}
	var rec FileRecord
	perr := readData(&st, gz, e, func(r io.Reader) error {
		var err error
		t, rec, err = e.format.parse(r, st.Path, e.Records, missing)
		return err
	})
	switch {
	case st.State == StateMismatch:
		return nil, st, errors.Join(st.Err, perr)
	case !st.State.Usable():
		// A read error: the parser saw it too, but the state says what it
		// means (a truncated .gz, permission denied).
		return nil, st, st.Err
	case perr != nil:
		return nil, st, perr
	}
	rec.Name = spec.Name
	rec.Path = st.Path
	rec.SHA256 = st.SHA256
	rec.Verified = st.State == StateVerified
	rec.Warning = st.Warning
	t.Files = []FileRecord{rec}
	return t, st, nil
}

// LoadTable reads the real data file of the named dataset from dataDir
// (NAME or NAME.gz), verifies its SHA-256 against the registry and returns
// the raw table, without one-hot encoding or scaling. An empty dataDir means
// [DefaultDataDir]. It never falls back to synthetic data.
func LoadTable(name, dataDir string) (*Table, error) {
	e, err := lookup(name)
	if err != nil {
		return nil, fmt.Errorf("datasets: load table: %w", err)
	}
	if dataDir == "" {
		dataDir = DefaultDataDir()
	}
	t, err := readTable(e, dataDir)
	if err != nil {
		return nil, fmt.Errorf("datasets: load table %s: %w", name, err)
	}
	return t, nil
}

// trimSpaceBytes trims ASCII spaces and tabs.
func trimSpaceBytes(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// isBlank reports whether a line holds only spaces, tabs or '\r'.
func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// splitFields splits line at sep into dst (reused) without allocating.
func splitFields(dst [][]byte, line []byte, sep byte) [][]byte {
	dst = dst[:0]
	start := 0
	for i, c := range line {
		if c == sep {
			dst = append(dst, line[start:i])
			start = i + 1
		}
	}
	return append(dst, line[start:])
}

// splitWhitespace splits line into dst (reused) at runs of spaces, tabs
// and '\r', dropping empty fields, without allocating.
func splitWhitespace(dst [][]byte, line []byte) [][]byte {
	dst = dst[:0]
	start := -1
	for i, c := range line {
		blank := c == ' ' || c == '\t' || c == '\r'
		switch {
		case blank && start >= 0:
			dst = append(dst, line[start:i])
			start = -1
		case !blank && start < 0:
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, line[start:])
	}
	return dst
}

// quote renders a field for an error message, shortened if long.
func quote(b []byte) string {
	const max = 40
	s := string(b)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// oneOf renders a list of accepted values for an error message.
func oneOf(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
