package cvtune

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dprepro/dprepro/experiments"
)

// ErrBadName is returned by [RegisterLearner] and [RegisterSelector] for a
// nil value or a name that is empty or not safe in unit keys and row
// labels (see [RegisterLearner]).
var ErrBadName = errors.New("cvtune: bad name")

// ErrDuplicate is returned by [RegisterLearner] and [RegisterSelector] for
// a name that is already registered (built-in names included).
var ErrDuplicate = errors.New("cvtune: name already registered")

// safeName reports whether name has the form of a registered name: a
// letter, then at most 63 letters, digits, '_', '.' or '-'. A name becomes
// a path segment of unit keys ("…/alpha=0.5/<method>/<learner>/rep=1/
// fold=1") and part of a row's method label, so it has no '/', '=', ','
// or spaces. (A function rather than a regexp variable: the registries
// are package-level variables initialized through it.)
func safeName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i, r := range name {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if i == 0 && !letter {
			return false
		}
		if !letter && !(r >= '0' && r <= '9') && r != '_' && r != '.' && r != '-' {
			return false
		}
	}
	return true
}

// named is what a registry holds.
type named interface{ Name() string }

// registry is one extension point's name → value table. Entries are
// added, never removed (except by tests) or replaced; it is safe for
// concurrent use.
type registry[T named] struct {
	what   string // "learner" or "method" (a selector), for messages
	mu     sync.RWMutex
	names  []string // registration order
	byName map[string]T
	nBuilt int // the first nBuilt names are the built-ins
}

// newRegistry returns a registry holding builtins, in order. A bad or
// duplicate built-in is a broken internal invariant: it panics.
func newRegistry[T named](what string, builtins ...T) *registry[T] {
	r := &registry[T]{what: what, byName: map[string]T{}}
	for _, b := range builtins {
		if err := r.register(b); err != nil {
			panic("cvtune: built-in " + err.Error())
		}
	}
	r.nBuilt = len(r.names)
	return r
}

// builtin reports whether v is the built-in entry of its name (not one a
// user's module registered, nor another value of the same name).
func (r *registry[T]) builtin(v T) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	i := slices.Index(r.names, v.Name())
	return i >= 0 && i < r.nBuilt
}

func (r *registry[T]) register(v T) error {
	if any(v) == nil {
		return fmt.Errorf("%w: nil %s", ErrBadName, r.what)
	}
	name := v.Name()
	if !safeName(name) {
		return fmt.Errorf("%w: %s name %q: want a letter, then up to 63 letters, digits, '_', '.' or '-'", ErrBadName, r.what, name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byName[name]; ok {
		return fmt.Errorf("%w: %s %q", ErrDuplicate, r.what, name)
	}
	r.byName[name] = v
	r.names = append(r.names, name)
	return nil
}

func (r *registry[T]) lookup(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.byName[name]
	return v, ok
}

func (r *registry[T]) list() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.names)
}

// get returns the entry for name, or an error naming the known names.
func (r *registry[T]) get(name string) (T, error) {
	v, ok := r.lookup(name)
	if !ok {
		return v, errors.New(experiments.Unknown(r.what, name, r.list()))
	}
	return v, nil
}

// remove deletes name; only tests use it, to undo their registrations.
func (r *registry[T]) remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byName, name)
	r.names = slices.DeleteFunc(r.names, func(n string) bool { return n == name })
}
