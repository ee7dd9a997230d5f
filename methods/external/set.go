package external

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/params"
	"github.com/dprepro/dprepro/runner"
)

// Set holds the pools of one experiment's external methods (the [[methods]]
// tables its spec names) and the run's scratch area. A kind creates it
// when it loads the spec, shakes hands with each method it uses (so a
// broken command fails before any unit runs), and hands its experiment's
// Open and Close to it. It is safe for concurrent use.
type Set struct {
	spec *experiments.Spec

	mu      sync.Mutex
	pools   map[string]*Pool
	order   []string
	scratch *Scratch
}

// NewSet returns the external methods of spec (none started).
func NewSet(spec *experiments.Spec) *Set {
	return &Set{spec: spec, pools: map[string]*Pool{}}
}

// Has reports whether the spec declares a [[methods]] table name serving
// serves.
func (s *Set) Has(name, serves string) bool {
	m, ok := s.spec.Method(name)
	return ok && m.Serves == serves && m.External()
}

// Names returns the names of the spec's [[methods]] serving serves.
func (s *Set) Names(serves string) []string { return s.spec.MethodNames(serves) }

// Pool returns the pool of the method name, starting its first worker and
// checking its handshake (the hello's serves and privacy form) the first
// time. The error of a method that fails to start names the spec file,
// line and key (methods[i].command).
func (s *Set) Pool(ctx context.Context, name string) (*Pool, Hello, error) {
	s.mu.Lock()
	p, ok := s.pools[name]
	if !ok {
		m, found := s.spec.Method(name)
		if !found || !m.External() {
			s.mu.Unlock()
			return nil, Hello{}, fmt.Errorf("external: the spec declares no method %q", name)
		}
		var files []FileDigest
		for _, d := range m.Digests() {
			path := d.Path
			if !filepath.IsAbs(path) {
				path = filepath.Join(s.spec.Dir(), path)
			}
			files = append(files, FileDigest{Path: path, SHA256: d.SHA256})
		}
		p = NewPool(Command{Name: m.Name, Serves: m.Serves, Argv: m.Command, Dir: s.spec.Dir(), Timeout: m.CallTimeout(), Files: files})
		s.pools[name] = p
		s.order = append(s.order, name)
	}
	s.mu.Unlock()
	h, err := p.Hello(ctx)
	if err != nil {
		key := fmt.Sprintf("methods[%d].command", s.spec.MethodIndex(name))
		return nil, Hello{}, s.spec.ErrorAt(key, key, err)
	}
	return p, h, nil
}

// Open readies the set for a run: the workers' stderr goes to log and
// data matrices to a scratch area in scratchDir (emptied now).
func (s *Set) Open(scratchDir string, log io.Writer) error {
	sc, err := NewScratch(scratchDir)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scratch = sc
	for _, p := range s.pools {
		p.SetLog(log)
	}
	return nil
}

// ErrNoScratch is returned by Scratch outside a run (before Open).
var ErrNoScratch = errors.New("external: no scratch directory: the experiment was not opened by a run (runner.Run or runner.RunKey)")

// Scratch returns the run's scratch area.
func (s *Set) Scratch() (*Scratch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scratch == nil {
		return nil, ErrNoScratch
	}
	return s.scratch, nil
}

// Release removes the scratch files of scope (Scratch.Release), if the
// set is open.
func (s *Set) Release(scope string) {
	s.mu.Lock()
	sc := s.scratch
	s.mu.Unlock()
	if sc != nil {
		sc.Release(scope)
	}
}

// Peak returns the most bytes of scratch files on disk at once since the
// set was opened (0 when it is not open).
func (s *Set) Peak() int64 {
	s.mu.Lock()
	sc := s.scratch
	s.mu.Unlock()
	if sc == nil {
		return 0
	}
	return sc.Peak()
}

// Versions returns the method versions the workers' hellos stated, by
// method name (for the manifest).
func (s *Set) Versions() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := map[string]string{}
	for name, p := range s.pools {
		p.mu.Lock()
		if p.hello != nil {
			v[name] = p.hello.Version
		}
		p.mu.Unlock()
	}
	return v
}

// Close ends every worker of the set. The set can be opened again (its
// pools start new workers on demand).
func (s *Set) Close() error {
	s.mu.Lock()
	pools := make([]*Pool, 0, len(s.pools))
	for _, name := range s.order {
		pools = append(pools, s.pools[name])
	}
	s.scratch = nil
	s.mu.Unlock()
	for _, p := range pools {
		p.Close()
	}
	return nil
}

// Runs gives an experiment whose spec may declare external methods what
// the runner asks of it for them: embedded in the experiment, it
// implements runner.Opener (the workers log to the run and read data from
// its scratch directory; Close ends them) and runner.Versioner (the
// versions their hellos stated, for the manifest) through Methods.
type Runs struct {
	// Methods are the spec's external methods.
	Methods *Set
}

// Open implements runner.Opener.
func (r Runs) Open(w runner.Workspace) error { return r.Methods.Open(w.Scratch, w.Log) }

// Close implements runner.Opener: it ends the workers.
func (r Runs) Close() error { return r.Methods.Close() }

// MethodVersions implements runner.Versioner.
func (r Runs) MethodVersions() map[string]string { return r.Methods.Versions() }

// ReleaseScratch implements the half of runner.ScratchScoper that Runs can:
// the scratch files of scope go (a kind supplies ScratchScope).
func (r Runs) ReleaseScratch(scope string) {
	if r.Methods != nil {
		r.Methods.Release(scope)
	}
}

// ScratchPeak implements runner.ScratchPeaker.
func (r Runs) ScratchPeak() int64 {
	if r.Methods == nil {
		return 0
	}
	return r.Methods.Peak()
}

// Setting returns the parameter values the spec gives external method
// name (its [methods.params], over the defaults its hello declares in
// attributes.params), for an extension point that runs one setting per
// method (ci, hypothesis): a list is refused, naming the key. The
// values go to every call ([MethodParams]).
func (s *Set) Setting(ctx context.Context, name string) (params.Setting, error) {
	_, h, err := s.Pool(ctx, name)
	if err != nil {
		return params.Setting{}, err
	}
	decl, err := h.Params(name)
	if err != nil {
		return params.Setting{}, err
	}
	i := s.spec.MethodIndex(name)
	key := fmt.Sprintf("methods[%d].params", i)
	set, err := params.Expand("", decl, s.spec.Methods[i].Params)
	if err != nil {
		return params.Setting{}, s.spec.ErrorAt(key, key, err)
	}
	if len(set) != 1 {
		return params.Setting{}, s.spec.ErrorAt(key, key, fmt.Errorf("lists expand into variants for learners only: a %s method takes one value per parameter (declare a [[methods]] table per setting)", s.spec.Methods[i].Serves))
	}
	return set[0], nil
}

// MethodParams returns the params object of a call, p (a struct or map
// that encodes as a JSON object), with "method_params": values added
// when values is not empty: how every call carries the method's
// parameters (docs/worker-protocol.md).
func MethodParams(p any, values map[string]any) (any, error) {
	if len(values) == 0 {
		return p, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("external: call params %s are not an object", b)
	}
	m["method_params"] = values
	return m, nil
}

// SettingOf returns the parameter values of m, an external method of an
// extension point that runs one setting per method (a ci method, a
// hypothesis generator: their Setting method), "k=v,…"; "" for any
// other method, or one without parameters.
func SettingOf(m any) string {
	if x, ok := m.(interface{ Setting() string }); ok {
		return x.Setting()
	}
	return ""
}
