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
// as .npy (float64, C order), the first time a call needs it. A file
// written for a scope (the units of one fold, say: [Scratch.MatrixIn]) is
// removed by [Scratch.Release] once the run has no pending unit of that
// scope; the others stay until the run ends. It is safe for concurrent
// use.
type Scratch struct {
	dir string

	mu      sync.Mutex
	files   map[string]*scratchFile
	byScope map[string][]string // scope → the keys written or read for it
	bytes   int64               // every byte written
	cur     int64               // the bytes on disk now
	peak    int64               // the most on disk at once
}

type scratchFile struct {
	once   sync.Once
	path   string
	err    error
	size   int64
	done   bool            // written (once.Do returned)
	scopes map[string]bool // the scopes that may still read it ("" for none: kept to the end)
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
	return &Scratch{dir: dir, files: map[string]*scratchFile{}, byScope: map[string][]string{}}, nil
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
	return s.write("", key, func() any { return fill() })
}

// MatrixIn is Matrix for the units of scope (runner.ScratchScopeOf of
// the unit's context; "" for none): the file goes when the scope is
// released ([Scratch.Release]).
func (s *Scratch) MatrixIn(scope, key string, fill func() *mat.Dense) (string, error) {
	return s.write(scope, key, func() any { return fill() })
}

// VectorIn is Vector for the units of scope (see MatrixIn).
func (s *Scratch) VectorIn(scope, key string, fill func() []float64) (string, error) {
	return s.write(scope, key, func() any { return fill() })
}

// Vector is Matrix for a vector (a 1-D array).
func (s *Scratch) Vector(key string, fill func() []float64) (string, error) {
	return s.write("", key, func() any { return fill() })
}

func (s *Scratch) write(scope, key string, fill func() any) (string, error) {
	if !scratchKey.MatchString(key) {
		return "", fmt.Errorf("external: scratch key %q is not a safe file name", key)
	}
	s.mu.Lock()
	f, ok := s.files[key]
	if !ok {
		f = &scratchFile{scopes: map[string]bool{}}
		s.files[key] = f
	}
	if !f.scopes[scope] {
		f.scopes[scope] = true
		if scope != "" {
			s.byScope[scope] = append(s.byScope[scope], key)
		}
	}
	s.mu.Unlock()
	f.once.Do(func() {
		path := filepath.Join(s.dir, key+".npy")
		n, err := writeNPY(path, fill())
		s.mu.Lock()
		defer s.mu.Unlock()
		f.done = true
		if err != nil {
			f.err = fmt.Errorf("external: writing %s: %w", path, err)
			return
		}
		f.path, f.size = path, n
		s.bytes += n
		s.cur += n
		s.peak = max(s.peak, s.cur)
	})
	return f.path, f.err
}

// Release removes the files written for scope that no other scope still
// reads: the runner calls it (through the experiment, runner.ScratchScoper)
// once no pending unit of the run has that scope. A key needed again
// afterwards is written again.
func (s *Scratch) Release(scope string) {
	if scope == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, key := range s.byScope[scope] {
		f := s.files[key]
		if f == nil {
			continue
		}
		delete(f.scopes, scope)
		if len(f.scopes) > 0 || !f.done {
			continue
		}
		delete(s.files, key)
		if f.err == nil {
			os.Remove(f.path)
			s.cur -= f.size
		}
	}
	delete(s.byScope, scope)
}

// Peak returns the most bytes of .npy files s held at once.
func (s *Scratch) Peak() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
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
