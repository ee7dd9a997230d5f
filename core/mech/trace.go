package mech

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dprepro/dprepro/core/privacy"
)

// # Streams and the privacy trace
//
// A generator the runner hands a unit is a *rand.Rand over a named stream
// ([NamedStream], [SecureStream]): the stream's name (seed, kind, unit and
// the names the kind gave it), whether its bits come from crypto/rand, and,
// in a traced run, the [Trace] that receives its releases. The name and the
// mode are read back from the generator itself ([StreamName], [IsSecure]),
// through any wrapping (rand.New(rng)) or copy (*rng) of it, so that code
// handing a generator down cannot drop the mode.
//
// Every release site of the harness records what it drew with [Record]:
// the mechanism, its scale, the sensitivity it was calibrated to and the
// guarantee it claims, to which the trace adds what the kind said the
// release is and which records it touches ([Scope]), the stream, whether
// every bit came from crypto/rand, whether every noise draw used a
// floating-point-safe construction (the samplers of this package note each
// draw on the stream), and a digest of the stream's bits (two runs that
// replay a release have equal digests). Tests compute from a trace the
// privacy a run actually spent and compare it with the ledger the run
// wrote; a run without a trace pays one atomic load per draw.

// Records names the records a release touched: a part of one data set.
type Records struct {
	// Dataset is the data set's name; Part what the kind calls the part
	// ("T", "V", "fold 3", "sample", "all").
	Dataset, Part string
	// Index holds the record indices of the part (rows of the data set as
	// the kind loaded it); nil when the part is the whole data set (or the
	// kind does not index it), and then N is its size.
	Index []int
	N     int
}

// Release is one release as drawn: what the site that drew it recorded
// (Mechanism to Guarantee) and what the trace added (Unit to Digest).
type Release struct {
	// Mechanism names the construction, e.g. "laplace", "gaussian",
	// "spherical-laplace", "exponential-mechanism",
	// "exponential-noise-max", "noise-reduction", "above-threshold".
	Mechanism string
	// Scale is the noise scale drawn with: Laplace b, Gaussian σ, the γ of
	// spherical Laplace noise (density ∝ exp(−γ‖z‖₂)), the exponential
	// mechanism's λ = ε/(2Δ), the mean of exponential noise.
	Scale float64
	// Sensitivity is the sensitivity the site calibrated Scale to (ℓ₁ for
	// Laplace, ℓ₂ for Gaussian and spherical noise, the score's for a
	// selection), as the site computed it.
	Sensitivity float64
	// Dim is the number of coordinates released (1 for a selection).
	Dim int
	// Guarantee is what the site says the release spends.
	Guarantee privacy.Guarantee
	// Params holds the other public parameters the release's privacy
	// depends on, by the names of the paper the site cites (e.g. "n",
	// "lambda", "c" of objective perturbation).
	Params map[string]float64
	// Scales holds, for a release of several levels (a noise-reduction
	// chain), the noise scale of each level, least private first; Scale
	// is then the last (the most accurate level's).
	Scales []float64

	// Unit is the key of the unit that drew it, Stream the stream's name,
	// Shared whether the stream is one several units share on purpose.
	Unit, Stream string
	Shared       bool
	// Instance numbers the generators opened on Stream in the traced run
	// (0 for the first): a second instance of a seeded stream replays the
	// first's bits.
	Instance int
	// What and Data are the scope the kind set on the stream ([Scope]).
	What string
	Data Records
	// Secure reports that every bit of the stream came from crypto/rand.
	Secure bool
	// FloatSafe reports that every noise draw of the release used a
	// floating-point-safe construction (SecureLaplace, SecureGaussian);
	// Draws counts the noise draws noted since the stream's previous
	// release (0: the release drew its noise outside this package).
	FloatSafe bool
	Draws     int
	// Drawn holds the distinct scales the samplers of this package were
	// called with for those draws, in the order first drawn, in the units
	// of Scale (Laplace b, Gaussian σ, spherical γ, the selection's λ, the
	// exponential mean, randomized response's keep probability): what was
	// drawn, beside what the site says it drew. [Release.ScaleMismatch]
	// compares them.
	Drawn []float64
	// Digest digests every bit the stream had drawn when the release was
	// recorded.
	Digest uint64
}

// Trace collects the releases of a traced run. It is safe for concurrent
// use. Build one with NewTrace and Close it when the run is over.
type Trace struct {
	mu       sync.Mutex
	releases []Release
	opened   map[string]int
	closed   bool
}

// tracing counts the open traces: the draw notes of the samplers are
// skipped (one atomic load) while it is zero.
var tracing atomic.Int32

// NewTrace returns an open trace.
func NewTrace() *Trace {
	tracing.Add(1)
	return &Trace{opened: map[string]int{}}
}

// Close ends the trace: its streams record nothing more.
func (t *Trace) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		tracing.Add(-1)
	}
}

// Releases returns the releases recorded so far, sorted by unit, stream,
// instance and order of drawing (a run's trace is the same for any worker
// count).
func (t *Trace) Releases() []Release {
	t.mu.Lock()
	out := append([]Release(nil), t.releases...)
	t.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Unit != b.Unit {
			return a.Unit < b.Unit
		}
		if a.Stream != b.Stream {
			return a.Stream < b.Stream
		}
		return a.Instance < b.Instance
	})
	return out
}

// Opened returns how many generators were opened on each stream name.
func (t *Trace) Opened() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int, len(t.opened))
	for k, v := range t.opened {
		out[k] = v
	}
	return out
}

// streamSource is the Source of a named stream: src's bits, unchanged,
// with the stream's identity and, when traced, its draw notes.
type streamSource struct {
	src      rand.Source
	name     string
	unit     string
	shared   bool
	secure   bool
	instance int
	trace    *Trace // nil when not traced

	mu          sync.Mutex // guards the fields below (traced streams only)
	digest      uint64
	safe, float int
	drawn       []float64 // the distinct scales noted since the last release
	released    int       // releases recorded since the last Scope
	what        string
	data        Records
}

func (s *streamSource) Uint64() uint64 {
	v := s.src.Uint64()
	if s.trace != nil {
		s.mu.Lock()
		s.digest = (s.digest ^ v) * 0x100000001b3
		s.mu.Unlock()
	}
	return v
}

// NamedStream returns a generator of src's bits, unchanged, named name
// for unit (shared: a stream several units share on purpose), traced into
// t when t is not nil. Without a trace it returns rand.New(src) itself:
// an untraced seeded stream needs no name.
func NamedStream(src rand.Source, name, unit string, shared bool, t *Trace) *rand.Rand {
	if t == nil {
		return rand.New(src)
	}
	return rand.New(open(&streamSource{src: src, name: name, unit: unit, shared: shared}, t))
}

// SecureStream returns a generator whose bits come from crypto/rand,
// named name for unit and traced into t when t is not nil. It is safe for
// concurrent use when t is nil.
func SecureStream(name, unit string, shared bool, t *Trace) *rand.Rand {
	return rand.New(open(&streamSource{src: cryptoSrc, name: name, unit: unit, shared: shared, secure: true}, t))
}

func open(s *streamSource, t *Trace) *streamSource {
	if t != nil {
		t.mu.Lock()
		s.trace, s.instance = t, t.opened[s.name]
		t.opened[s.name]++
		t.mu.Unlock()
	}
	return s
}

// randLayout is math/rand/v2's Rand: one field, its Source. [sourceOf]
// reads it (the package exposes no accessor); init checks the layout, so
// that a Go release that changes it fails every test instead of reading
// garbage.
type randLayout struct{ src rand.Source }

func init() {
	t := reflect.TypeOf(rand.Rand{})
	if t.NumField() != 1 || t.Field(0).Type != reflect.TypeOf((*rand.Source)(nil)).Elem() ||
		t.Size() != reflect.TypeOf(randLayout{}).Size() {
		panic("mech: math/rand/v2.Rand is no longer one Source field; update sourceOf")
	}
}

func sourceOf(r *rand.Rand) rand.Source { return (*randLayout)(unsafe.Pointer(r)).src }

// unwrap follows rng through generators wrapping generators (rand.New of
// a *rand.Rand) to its stream, if it is one, and to the innermost source.
func unwrap(rng *rand.Rand) (*streamSource, rand.Source) {
	for depth := 0; rng != nil && depth < 16; depth++ {
		switch s := sourceOf(rng).(type) {
		case *streamSource:
			return s, s.src
		case *rand.Rand:
			rng = s
		default:
			return nil, s
		}
	}
	return nil, nil
}

// StreamName returns the name of the stream rng draws from ("" for a
// generator that is not a named stream).
func StreamName(rng *rand.Rand) string {
	if s, _ := unwrap(rng); s != nil {
		return s.name
	}
	return ""
}

// Scope labels the releases drawn next from rng: what they are (e.g.
// "training: θ of λ=0.01") and the records they touch. A no-op for an
// untraced generator. The draws noted before it are not counted in the
// next release's.
func Scope(rng *rand.Rand, what string, data Records) {
	if tracing.Load() == 0 {
		return
	}
	if s, _ := unwrap(rng); s != nil && s.trace != nil {
		s.mu.Lock()
		s.what, s.data = what, data
		s.safe, s.float, s.drawn = 0, 0, nil // draws before the scope (a simulation) are not the release's
		s.released = 0
		s.mu.Unlock()
	}
}

// note records one noise draw on rng's stream: floating-point-safe or
// not, and the scale the sampler was called with (in the units of
// [Release.Scale]).
func note(rng *rand.Rand, safe bool, scale float64) {
	if tracing.Load() == 0 {
		return
	}
	if s, _ := unwrap(rng); s != nil && s.trace != nil {
		s.mu.Lock()
		if safe {
			s.safe++
		} else {
			s.float++
		}
		if !slices.Contains(s.drawn, scale) {
			s.drawn = append(s.drawn, scale)
		}
		s.mu.Unlock()
	}
}

// Record records r, drawn from rng, in rng's trace: a no-op for an
// untraced generator. Call it after the release's noise is drawn.
func Record(rng *rand.Rand, r Release) {
	if tracing.Load() == 0 {
		return
	}
	s, base := unwrap(rng)
	if s == nil || s.trace == nil {
		return
	}
	s.mu.Lock()
	r.Unit, r.Stream, r.Shared, r.Instance = s.unit, s.name, s.shared, s.instance
	r.What, r.Data = s.what, s.data
	r.Secure = s.secure && base == rand.Source(cryptoSrc)
	r.Draws = s.safe + s.float
	r.FloatSafe = s.safe > 0 && s.float == 0
	r.Digest = s.digest
	r.Drawn = s.drawn
	s.safe, s.float, s.drawn = 0, 0, nil
	s.released++
	s.mu.Unlock()
	t := s.trace
	t.mu.Lock()
	if !t.closed {
		t.releases = append(t.releases, r)
	}
	t.mu.Unlock()
}

// ScaleMismatch returns the scales the release's noise was drawn at
// (Drawn) that are neither its Scale nor one of its Scales, to a
// relative 10⁻¹²: a site that records one scale and draws at another
// (half the noise it books, say). Nil when every draw matches, or when
// the release drew nothing through this package's samplers.
func (r Release) ScaleMismatch() []float64 {
	var out []float64
	for _, d := range r.Drawn {
		ok := sameScale(d, r.Scale)
		for _, s := range r.Scales {
			ok = ok || sameScale(d, s)
		}
		if !ok {
			out = append(out, d)
		}
	}
	return out
}

func sameScale(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// String formats a release for a test's message.
func (r Release) String() string {
	return fmt.Sprintf("%s %s [%s] scale=%g sens=%g dim=%d %v stream=%q#%d data=%s/%s(%d) secure=%v floatsafe=%v draws=%d drawn=%g",
		r.Unit, r.What, r.Mechanism, r.Scale, r.Sensitivity, r.Dim, r.Guarantee, r.Stream, r.Instance,
		r.Data.Dataset, r.Data.Part, r.Data.N, r.Secure, r.FloatSafe, r.Draws, r.Drawn)
}

// mechanisms names every Mechanism a release site records, with whether
// the site has a floating-point-safe construction in secure mode (its
// noise snapped to a grid plus exact discrete noise: SecureLaplace,
// SecureGaussian). The others draw crypto/rand bits in secure mode but
// keep their floating-point samplers (see "Secure noise").
var mechanisms = map[string]bool{
	"laplace":                      true,
	"gaussian":                     true,
	"laplace-histogram":            true,
	"above-threshold-threshold":    true,
	"above-threshold-query":        true,
	"doubling-test":                true,
	"output-perturbation-laplace":  true,
	"covariance-perturbation":      true,
	"output-perturbation-wkl-zcdp": true,
	"privspdmat-zcdp":              true,
	"exponential-mechanism":        false,
	"report-noisy-max":             false,
	"randomized-response":          false,
	"stability-noisy-max":          false,
	"objective-perturbation":       false,
	"output-perturbation":          false,
	"noise-reduction":              false,
	"objective-perturbation-wkl":   false,
	"output-perturbation-wkl-dp":   false,
	"privspdmat-dp":                false,
	// The mechanism-bounds kind measures the raw samplers themselves
	// (LaplaceNoise, GaussianNoise), never their secure constructions.
	"laplace-raw":  false,
	"gaussian-raw": false,
}

// FloatSafe reports whether the release sites recording mechanism use a
// floating-point-safe construction in secure mode; known is false for a
// name no site records. A declared release ([Declared]) is known and not
// safe: the harness cannot vouch for noise it did not draw.
func FloatSafe(mechanism string) (safe, known bool) {
	if strings.HasPrefix(mechanism, declaredPrefix) && len(mechanism) > len(declaredPrefix) {
		return false, true
	}
	safe, known = mechanisms[mechanism]
	return safe, known
}

const declaredPrefix = "declared-by:"

// Declared returns the mechanism of a release made by a method whose
// privacy is its own word (an external worker, a user's registered Go
// method): "declared-by:NAME". The kinds' runner.Releaser lists name such
// methods so, and [RecordDeclared] records their releases so, so that a
// secure run's manifest lists them among the releases it cannot vouch
// for ([Unhardened]).
func Declared(method string) string { return declaredPrefix + method }

// DeclaredMethod returns the method of a declared mechanism and true, or
// "" and false for a mechanism of the harness.
func DeclaredMethod(mechanism string) (string, bool) {
	m, ok := strings.CutPrefix(mechanism, declaredPrefix)
	return m, ok && m != ""
}

// RecordDeclared records, in rng's trace, one release of a method whose
// noise the harness does not draw or see (an external worker handed a
// seed from rng, a registered Go method): its mechanism is
// Declared(method), its guarantee the one the method declared, its scale
// NaN (unknown), and Draws what the method drew through this package's
// samplers, if anything. Tests take the guarantee at the method's word
// and check the rest: that the release is scoped, that its stream is the
// unit's, and that the ledger books what it declared. When a release was
// recorded on rng since its last [Scope] (the method drew through the
// harness's own mechanisms, which recorded themselves), it records
// nothing: the method's release is already in the trace, as drawn. A
// no-op for an untraced generator.
func RecordDeclared(rng *rand.Rand, method string, g privacy.Guarantee, dim int) {
	if tracing.Load() == 0 {
		return
	}
	if s, _ := unwrap(rng); s != nil && s.trace != nil {
		s.mu.Lock()
		own := s.released > 0
		s.mu.Unlock()
		if own {
			return
		}
	}
	Record(rng, Release{Mechanism: Declared(method), Scale: math.NaN(), Dim: dim, Guarantee: g})
}

// Unhardened returns, sorted and without repeats, the mechanisms of ms
// that have no floating-point-safe construction (and any name no site
// records, which cannot be vouched for).
func Unhardened(ms []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		if safe, _ := FloatSafe(m); !safe && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}
