package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
)

// Unit is one replicate unit of an experiment: a value of the kind's own
// type (its dataset, method, grid point, repetition, …), handed back to
// Experiment.RunUnit as it was returned by Experiment.Units. Key is its
// stable identity: it names the unit in the checkpoint and in rows.csv and
// seeds the unit's random streams ([Env.RNG]), so it must not depend on
// anything but the spec (no pointers, no order of a map).
type Unit interface {
	Key() string
}

// Key is the simplest Unit: a unit that is only its key.
type Key string

// Key returns k.
func (k Key) Key() string { return string(k) }

// Env is what the runner hands a unit besides the unit itself: its random
// streams and the noise mode of the run. An Env is a small value; copy it
// freely. The generators it returns are for one goroutine (the unit's),
// except in secure mode.
//
// # Streams
//
// Env.RNG(names...) is the stream keyed by (root seed, kind, unit key,
// names...), Env.Stream(parts...) the stream keyed by (root seed, kind,
// parts...) for draws that several units share on purpose (common random
// numbers, such as the variability interval's bootstrap fits of the
// ci-coverage kind). Both are ChaCha8 generators seeded by [randx.Seed], so
// a unit's draws depend on nothing but the seed and its identity: results
// are bit-identical for any worker count, shard or order.
//
// # Noise mode
//
// In a run with secure noise (output.secure_noise, --secure-noise) every
// generator an Env returns draws its bits from crypto/rand
// ([mech.SecureStream]); the releases of package mech recognise it
// ([mech.IsSecure], through any wrapping or copy of the generator) and use
// their floating-point-safe constructions. The mode is thus a value that
// travels with the generator a unit hands down: there is no process-wide
// switch.
//
// # Trace
//
// In a traced run (Options.Trace) every generator is a named stream
// traced into the run's [mech.Trace]: its releases are recorded with the
// stream's name, the unit and the scope the kind set ([mech.Scope]). The
// bits are those of the untraced run.
type Env struct {
	seed   uint64
	kind   string
	key    string
	secure bool
	trace  *mech.Trace
	pool   *pool    // the run's worker slots (Parallel's helpers); nil outside a run
	par    *unitPar // what the unit's Parallel calls measured; nil outside a run
	run    string   // the spec's id, naming the unit in a Memo
	memo   *Memo    // the command's shared results (Shared); nil: none
}

// NewEnv returns the Env of the unit with key in a run of spec; secure
// selects secure noise (normally spec.Output.SecureNoise).
func NewEnv(spec *experiments.Spec, key string, secure bool) Env {
	return Env{seed: uint64(spec.Seed), kind: spec.Kind, key: key, secure: secure, run: spec.ID}
}

// WithTrace returns e with its generators traced into t (nil: untraced).
func (e Env) WithTrace(t *mech.Trace) Env {
	e.trace = t
	return e
}

// RNG returns the unit's stream named names (none for the unit's main
// stream): randx.New(seed, kind, key, names...), or a stream of
// crypto/rand bits in secure mode.
func (e Env) RNG(names ...string) *rand.Rand {
	return e.stream(false, append([]string{e.kind, e.key}, names...))
}

// RNGAt returns the unit's stream as if its key were scope: the stream
// keyed by (root seed, kind, scope, names...). It is for a kind that
// splits a unit into several (one per method, say) and keeps each draw
// where the unsplit unit had it, so that the split changes no number;
// scope must then be the unsplit unit's key, which no other unit of the
// run may use for the same names. Traced and secure like RNG.
func (e Env) RNGAt(scope string, names ...string) *rand.Rand {
	return e.stream(false, append([]string{e.kind, scope}, names...))
}

// Stream returns a stream shared by the units that name the same parts:
// randx.New(seed, kind, parts...), or a stream of crypto/rand bits in
// secure mode.
func (e Env) Stream(parts ...string) *rand.Rand {
	return e.stream(true, append([]string{e.kind}, parts...))
}

func (e Env) stream(shared bool, key []string) *rand.Rand {
	if e.secure {
		return mech.SecureStream(strings.Join(key, "/"), e.key, shared, e.trace)
	}
	if e.trace == nil {
		return randx.New(e.seed, key...)
	}
	return mech.NamedStream(rand.NewChaCha8(randx.Seed(e.seed, key...)), strings.Join(key, "/"), e.key, shared, e.trace)
}

// Secure reports whether the run draws secure noise.
func (e Env) Secure() bool { return e.secure }

// Key returns the key of the unit the Env belongs to.
func (e Env) Key() string { return e.key }

// Stream returns the seeded stream randx.New(spec seed, parts...) for the
// draws an experiment makes while it is built, before any unit runs (a
// cross-validation partition, a permutation of the records): these are part
// of the design, not releases, and stay seeded in secure mode too.
func Stream(spec *experiments.Spec, parts ...string) *rand.Rand {
	return randx.New(uint64(spec.Seed), parts...)
}

// RunKey runs the unit of exp whose key is key, with the Env a run of exp's
// spec gives it: for tests and for recomputing one row.
func RunKey(ctx context.Context, exp Experiment, key string) ([]results.Row, error) {
	return RunKeyTraced(ctx, exp, key, nil)
}

// RunKeyTraced is RunKey with the unit's generators traced into t (nil:
// untraced).
func RunKeyTraced(ctx context.Context, exp Experiment, key string, t *mech.Trace) ([]results.Row, error) {
	for _, u := range exp.Units() {
		if u.Key() == key {
			spec := exp.Spec()
			if _, ok := exp.(Opener); ok {
				dir, err := os.MkdirTemp("", "dprepro-unit-")
				if err != nil {
					return nil, err
				}
				defer os.RemoveAll(dir)
				closeExp, err := open(exp, dir, 1)
				if err != nil {
					return nil, err
				}
				defer closeExp()
			}
			return exp.RunUnit(ctx, u, NewEnv(spec, key, spec.Output.SecureNoise).WithTrace(t))
		}
	}
	return nil, fmt.Errorf("runner: %s has no unit %q", exp.Spec().ID, key)
}

// UnitsOf returns the units named by keys, in order: byKey[k] with its key
// set by withKey. It is the Units method of a kind that lays its units out
// by key.
func UnitsOf[U Unit](keys []string, byKey map[string]U, withKey func(U, string) U) []Unit {
	us := make([]Unit, len(keys))
	for i, k := range keys {
		us[i] = withKey(byKey[k], k)
	}
	return us
}

// As returns u as the kind's unit type U, or an error naming the unit when
// it is of another type (a unit of another experiment).
func As[U Unit](u Unit) (U, error) {
	v, ok := u.(U)
	if !ok {
		return v, fmt.Errorf("runner: unit %q is a %T, not a unit of this experiment", u.Key(), u)
	}
	return v, nil
}

// SectionOf returns spec's section as the kind's section type S, or an
// error unless spec is of kind name with such a section (a spec loaded
// without the kind's registry).
func SectionOf[S experiments.Section](spec *experiments.Spec, name string) (S, error) {
	sec, ok := spec.Section.(S)
	if spec.Kind != name || !ok {
		return sec, spec.Attribute(fmt.Errorf("spec of kind %q (section %T), not %s", spec.Kind, spec.Section, name))
	}
	return sec, nil
}
