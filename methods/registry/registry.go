// Package registry is the one registry type of the harness's extension
// points (learners, selection methods, confidence-interval methods,
// hypothesis generators): a name → value table with one name rule
// ([CheckName]), built-ins first, registration order kept, duplicates
// refused, and an unknown name answered with the known ones and a "did
// you mean" (experiments.Unknown) — never a default.
package registry

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dprepro/dprepro/experiments"
)

// ErrBadName is returned by [Registry.Register] for a nil value or a name
// that breaks [CheckName].
var ErrBadName = errors.New("bad name")

// ErrDuplicate is returned by [Registry.Register] for a name already
// registered (built-in names included).
var ErrDuplicate = errors.New("name already registered")

// MaxName is the longest name a registry accepts, in bytes.
const MaxName = 64

// CheckName checks the one rule of every registered name: 1 to 64 bytes,
// a letter or a digit, then letters, digits, '_', '.' or '-'. A name
// becomes a path segment of unit keys ("…/alpha=0.5/<method>/<learner>/
// rep=1/fold=1"), a file name, a CSV cell and a row label, so it has no
// '/', '=', ',', quotes or spaces. (The rule of the external methods'
// [[methods]] names, experiments' safe names, with the length bound.)
// what names the kind of value for the message ("learner").
func CheckName(what, name string) error {
	ok := len(name) > 0 && len(name) <= MaxName
	for i, r := range name {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || r != '_' && r != '.' && r != '-') {
			ok = false
			break
		}
	}
	if !ok {
		return fmt.Errorf("%w: %s name %q: want 1–%d bytes, a letter or digit, then letters, digits, '_', '.' or '-'", ErrBadName, what, name, MaxName)
	}
	return nil
}

// Named is what a registry holds.
type Named interface{ Name() string }

// Registry is one extension point's table. Entries are added, never
// replaced or removed (except by tests, [Registry.Remove]); it is safe
// for concurrent use.
type Registry[T Named] struct {
	what   string
	check  func(T) error
	mu     sync.RWMutex
	order  []T // registration order
	byName map[string]int
	nBuilt int // the first nBuilt entries are the built-ins
}

// New returns a registry of values called what ("learner", "method")
// holding builtins, in order. check, when not nil, is the extension
// point's own validation of a value (its declared tasks, its
// attributes), run on every registration after the name rule. A bad or
// duplicate built-in is a broken invariant of the caller: New panics.
func New[T Named](what string, check func(T) error, builtins ...T) *Registry[T] {
	r := &Registry[T]{what: what, check: check, byName: map[string]int{}}
	for _, b := range builtins {
		if err := r.Register(b); err != nil {
			panic(fmt.Sprintf("registry: built-in %s: %v", what, err))
		}
	}
	r.nBuilt = len(r.order)
	return r
}

// What names the registry's values ("learner").
func (r *Registry[T]) What() string { return r.what }

// Register adds v. It returns an error wrapping [ErrBadName] for a nil v
// or a bad name, the check's error, or one wrapping [ErrDuplicate] for a
// name already registered; the registry is then unchanged.
func (r *Registry[T]) Register(v T) error {
	if any(v) == nil {
		return fmt.Errorf("%w: nil %s", ErrBadName, r.what)
	}
	name := v.Name()
	if err := CheckName(r.what, name); err != nil {
		return err
	}
	if r.check != nil {
		if err := r.check(v); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byName[name]; ok {
		return fmt.Errorf("%w: %s %q", ErrDuplicate, r.what, name)
	}
	r.byName[name] = len(r.order)
	r.order = append(r.order, v)
	return nil
}

// Lookup returns the value called name.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	v, _, ok := r.Rank(name)
	return v, ok
}

// Rank returns the value called name and its place in registration
// order (the built-ins first).
func (r *Registry[T]) Rank(name string) (T, int, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	i, ok := r.byName[name]
	if !ok {
		var zero T
		return zero, -1, false
	}
	return r.order[i], i, true
}

// Get returns the value called name, or an error naming the known names
// and the nearest one ("did you mean").
func (r *Registry[T]) Get(name string) (T, error) {
	v, ok := r.Lookup(name)
	if !ok {
		return v, errors.New(experiments.Unknown(r.what, name, r.Names()))
	}
	return v, nil
}

// Names returns the registered names in registration order.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, len(r.order))
	for i, v := range r.order {
		out[i] = v.Name()
	}
	return out
}

// All returns the registered values in registration order.
func (r *Registry[T]) All() []T {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.order)
}

// BuiltinName reports whether name is the name of a built-in.
func (r *Registry[T]) BuiltinName(name string) bool {
	_, i, ok := r.Rank(name)
	r.mu.RLock()
	defer r.mu.RUnlock()
	return ok && i < r.nBuilt
}

// Builtin reports whether v is a built-in: its name is a built-in's
// (no other value can take that name).
func (r *Registry[T]) Builtin(v T) bool {
	return any(v) != nil && r.BuiltinName(v.Name())
}

// Remove deletes name; only tests use it, to undo their registrations.
// Removing a built-in panics.
func (r *Registry[T]) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, ok := r.byName[name]
	if !ok {
		return
	}
	if i < r.nBuilt {
		panic("registry: Remove of the built-in " + r.what + " " + name)
	}
	r.order = slices.Delete(r.order, i, i+1)
	delete(r.byName, name)
	for k, v := range r.order {
		r.byName[v.Name()] = k
	}
}
