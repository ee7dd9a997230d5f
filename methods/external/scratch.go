package external

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"
)

// Scratch is a run's scratch directory, where the harness writes the data
// matrices external methods read: each once per key (a dataset and fold),
// as .npy (float64, C order), the first time a call needs it. It is safe
// for concurrent use.
type Scratch struct {
	dir string

	mu    sync.Mutex
	files map[string]*scratchFile
	bytes int64
}

type scratchFile struct {
	once sync.Once
	path string
	err  error
}

var scratchKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._=-]*$`)

// NewScratch returns the scratch area in dir, which it empties (files of an
// earlier run in dir are never reused: their data may have changed).
func NewScratch(dir string) (*Scratch, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("external: clearing the scratch directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("external: creating the scratch directory: %w", err)
	}
	return &Scratch{dir: dir, files: map[string]*scratchFile{}}, nil
}

// Dir returns the scratch directory.
func (s *Scratch) Dir() string { return s.dir }

// Bytes returns how many bytes of .npy files s has written.
func (s *Scratch) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Matrix returns the path of key.npy holding the matrix that fill
// returns, writing it the first time key is asked for. key must be a safe
// file name (letters, digits, '.', '_', '=', '-') and name everything the
// matrix depends on: a key always means the same matrix within a run.
func (s *Scratch) Matrix(key string, fill func() *mat.Dense) (string, error) {
	return s.write(key, func() any { return fill() })
}

// Vector is Matrix for a vector (a 1-D array).
func (s *Scratch) Vector(key string, fill func() []float64) (string, error) {
	return s.write(key, func() any { return fill() })
}

func (s *Scratch) write(key string, fill func() any) (string, error) {
	if !scratchKey.MatchString(key) {
		return "", fmt.Errorf("external: scratch key %q is not a safe file name", key)
	}
	s.mu.Lock()
	f, ok := s.files[key]
	if !ok {
		f = &scratchFile{}
		s.files[key] = f
	}
	s.mu.Unlock()
	f.once.Do(func() {
		path := filepath.Join(s.dir, key+".npy")
		n, err := writeNPY(path, fill())
		if err != nil {
			f.err = fmt.Errorf("external: writing %s: %w", path, err)
			return
		}
		f.path = path
		s.mu.Lock()
		s.bytes += n
		s.mu.Unlock()
	})
	return f.path, f.err
}

// writeNPY writes v (a *mat.Dense or a []float64) to path in the .npy
// format (float64, C order; github.com/sbinet/npyio) through a temporary
// file, so that a reader never sees half a file, and returns the file's
// size. Throughput here is about 200–300 MB/s, bound by the file system
// as much as by the encoder.
func writeNPY(path string, v any) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*.npy")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = npy.Write(w, v)
	if err == nil {
		err = w.Flush()
	}
	var size int64
	if err == nil {
		var st os.FileInfo
		if st, err = tmp.Stat(); err == nil {
			size = st.Size()
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return size, os.Rename(tmp.Name(), path)
}
