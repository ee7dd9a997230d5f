package datasets

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// locate returns the path of file name in dir: dir/name if it exists, else
// dir/name.gz. When both exist the plain file is preferred (it is cheaper to
// read); both are checked against the same decompressed digest.
func locate(dir, name string) (path string, gz bool, err error) {
	plain := filepath.Join(dir, name)
	if st, err := os.Stat(plain); err == nil && st.Mode().IsRegular() {
		return plain, false, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	gzPath := plain + ".gz"
	if st, err := os.Stat(gzPath); err == nil && st.Mode().IsRegular() {
		return gzPath, true, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	return "", false, fmt.Errorf("%w: %s (looked for %s and %s.gz in %s)", ErrNotFound, name, name, name, dir)
}

// hashingReader hashes every byte read through it.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	h.n += int64(n)
	return n, err
}

func (h *hashingReader) sum() string { return hex.EncodeToString(h.h.Sum(nil)) }

// dataFile is an open data file whose decompressed content is hashed as it
// is read.
type dataFile struct {
	path string
	f    *os.File
	gz   *gzip.Reader
	hr   *hashingReader
}

// openData opens path (gzip-decompressing when gz) behind a hashing reader.
func openData(path string, gz bool) (*dataFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	d := &dataFile{path: path, f: f}
	var r io.Reader = f
	if gz {
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		d.gz = zr
		r = zr
	}
	d.hr = &hashingReader{r: r, h: sha256.New()}
	return d, nil
}

// finish reads what is left (so the digest covers the whole file), closes
// the file and returns the hex digest of the decompressed content.
func (d *dataFile) finish() (string, error) {
	_, err := io.Copy(io.Discard, d.hr)
	if d.gz != nil {
		if cerr := d.gz.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := d.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", d.path, err)
	}
	return d.hr.sum(), nil
}

func (d *dataFile) close() {
	if d.gz != nil {
		d.gz.Close()
	}
	d.f.Close()
}

// hashFile returns the SHA-256 of the decompressed content of path.
func hashFile(path string, gz bool) (string, error) {
	d, err := openData(path, gz)
	if err != nil {
		return "", err
	}
	return d.finish()
}

// readTable reads and verifies the data file of e (e.Files[0]) from dir.
//
// The SHA-256 of the decompressed content is computed while parsing. If it
// differs from the pinned digest the result is a *ChecksumError, joined
// with the first parse error if parsing also failed: a file that is not the
// expected file is reported as such rather than by its first odd line.
func readTable(e *Entry, dir string) (*Table, error) {
	spec := e.Files[0]
	path, gz, err := locate(dir, spec.Name)
	if err != nil {
		return nil, err
	}
	d, err := openData(path, gz)
	if err != nil {
		return nil, err
	}
	t, rec, perr := e.format.parse(d.hr, path, e.Records)
	got, ferr := d.finish()
	if ferr != nil {
		return nil, errors.Join(perr, ferr)
	}
	if spec.SHA256 != "" && got != spec.SHA256 {
		return nil, errors.Join(&ChecksumError{File: spec.Name, Path: path, Got: got, Want: spec.SHA256}, perr)
	}
	if perr != nil {
		return nil, perr
	}
	rec.Name = spec.Name
	rec.Path = path
	rec.SHA256 = got
	rec.Verified = spec.SHA256 != ""
	t.Files = []FileRecord{rec}
	return t, nil
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
