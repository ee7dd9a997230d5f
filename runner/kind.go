package runner

import (
	"fmt"
	"slices"
	"sync"

	"github.com/dprepro/dprepro/experiments"
)

// Kind is an experiment kind: the part of a spec it owns and how to build
// a runnable Experiment from a resolved spec of that kind. The built-in
// kinds are in packages kinds/<kind> (cv-tuning, histogram-tuning,
// expost-sweep, ci-coverage, mechanism-bounds, privacy-audit,
// learner-comparison); a user's module may register its own with
// RegisterKind before cli.Main.
type Kind interface {
	// Name is the spec's kind value, e.g. "cv-tuning": a safe file name.
	Name() string
	// NewSection returns the kind's spec section with its defaults (see
	// experiments.Section): a new value on every call.
	NewSection() experiments.Section
	// New builds the experiment of a resolved, validated spec of this
	// kind (spec.Section is the kind's section), loading its data as data
	// says. Its errors need not name the spec: where a key of the spec is
	// at fault, return spec.ErrorAt or spec.Errorf (file, line and key);
	// otherwise a plain error, which Registry.New prefixes with the spec
	// id.
	New(spec *experiments.Spec, data DataOptions) (Experiment, error)
}

// DataOptions says where an experiment finds its data files.
type DataOptions struct {
	// DataDir is the data directory; empty means the default search
	// (datasets.ResolveDataDir with no flag).
	DataDir string
	// Named reports that the user named the directory (--data-dir or
	// $DPREPRO_DATA); an absent file is then an error unless the spec
	// allows its synthetic stand-in (data.synthetic).
	Named bool
}

// Registry is a set of experiment kinds by name. It implements
// experiments.Kinds, so specs are loaded and validated against it. It is
// safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	kinds map[string]Kind
	order []string
}

// NewRegistry returns a registry of the kinds ks (an error for a duplicate
// or unsafe name).
func NewRegistry(ks ...Kind) (*Registry, error) {
	r := &Registry{}
	for _, k := range ks {
		if err := r.Register(k); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds k. It returns an error when k's name is empty, not a safe
// file name, or already registered.
func (r *Registry) Register(k Kind) error {
	name := k.Name()
	if !safeName(name) {
		return fmt.Errorf("runner: kind name %q must be letters, digits, '-', '_' and '.', starting with a letter or digit", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.kinds[name]; dup {
		return fmt.Errorf("runner: kind %q is already registered", name)
	}
	if r.kinds == nil {
		r.kinds = map[string]Kind{}
	}
	r.kinds[name] = k
	r.order = append(r.order, name)
	if a, ok := k.(AcrossKind); ok {
		if folder, _ := a.AcrossFolder(); folder != "" {
			experiments.ReserveID(folder)
		}
	}
	return nil
}

// Lookup returns the kind named name.
func (r *Registry) Lookup(name string) (Kind, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	k, ok := r.kinds[name]
	return k, ok
}

// Section implements experiments.Kinds.
func (r *Registry) Section(kind string) (experiments.Section, bool) {
	k, ok := r.Lookup(kind)
	if !ok {
		return nil, false
	}
	return k.NewSection(), true
}

// Names implements experiments.Kinds: the kinds in registration order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.order)
}

// Load loads the spec file at path at the named profile (experiments.Load)
// with this registry's kinds.
func (r *Registry) Load(path, profile string) (*experiments.Spec, error) {
	return experiments.Load(path, profile, r)
}

// LoadWith is Load with the changes of o (experiments.LoadOptions:
// `dprepro run --set`, `--only`).
func (r *Registry) LoadWith(path, profile string, o experiments.LoadOptions) (*experiments.Spec, error) {
	return experiments.LoadWith(path, profile, r, o)
}

// LoadBuiltinWith is LoadBuiltin with the changes of o.
func (r *Registry) LoadBuiltinWith(name, profile string, o experiments.LoadOptions) (*experiments.Spec, error) {
	return experiments.LoadBuiltinWith(name, profile, r, o)
}

// LoadBuiltin loads a built-in spec (experiments.LoadBuiltin) with this
// registry's kinds.
func (r *Registry) LoadBuiltin(name, profile string) (*experiments.Spec, error) {
	return experiments.LoadBuiltin(name, profile, r)
}

// New builds the experiment of spec with the kind its kind names. Its
// error names the spec once (spec.Attribute): by the file and line of the
// key at fault where the kind says which (an *experiments.SpecError), else
// by the spec id.
func (r *Registry) New(spec *experiments.Spec, data DataOptions) (Experiment, error) {
	k, ok := r.Lookup(spec.Kind)
	if !ok {
		return nil, spec.Errorf("kind", "%s", experiments.Unknown("kind", spec.Kind, r.Names()))
	}
	if spec.Section == nil {
		return nil, spec.Attribute(fmt.Errorf("spec has no %s section (load it through the registry)", spec.Kind))
	}
	exp, err := k.New(spec, data)
	if err != nil {
		return nil, spec.Attribute(err)
	}
	return exp, nil
}

// Kinds is the registry of the dprepro command: package cli registers the
// built-in kinds in it, and a user's module adds its own with RegisterKind
// before calling cli.Main.
var Kinds = &Registry{}

// RegisterKind adds k to Kinds.
func RegisterKind(k Kind) error { return Kinds.Register(k) }

func safeName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || i > 0 && (c == '-' || c == '_' || c == '.')
		if !ok {
			return false
		}
	}
	return true
}
