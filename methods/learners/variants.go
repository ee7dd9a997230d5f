package learners

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/methods/params"
)

// Parameterized is implemented by a Learner that declares parameters
// (methods/params) a spec sets in a [[methods]] table of its name:
//
//	[[methods]]
//	name = "noisy-gd"        # a registered learner: no command
//	serves = "learner"
//	[methods.params]
//	steps = [50, 100]        # two variants, "noisy-gd[steps=50]" and "noisy-gd[steps=100]"
//
// An external learner ([External]) is one when its hello declares
// attributes.params.
type Parameterized interface {
	Learner
	// Params declares the parameters: names, types, defaults.
	Params() []params.Param
	// WithParams returns the learner of one setting (a value for every
	// declared parameter), named name — the variant's label, e.g.
	// "noisy-gd[steps=50]" — which its Name must return. A setting the
	// learner cannot run (a value out of its range) is an error saying
	// why.
	WithParams(name string, s params.Setting) (Learner, error)
}

// Variants is one learner a spec names, with its settings: one learner
// per setting (a single one when the spec lists no parameter values).
type Variants struct {
	// Name is the name the spec lists.
	Name string
	// Grid is how the settings run: experiments.GridVariants (each its
	// own learner), GridPrivate or GridOracle (selected per fold).
	Grid string
	// Learners holds one learner per setting, named by its label
	// (params.Label: Name, or "Name[steps=50]").
	Learners []Learner
	// Settings are the settings, in the order of Learners.
	Settings []params.Setting
}

// Label is the label of the variants run together (a grid): Name with
// "[grid=private]" or "[grid=oracle]".
func (v Variants) Label() string {
	if v.Grid == experiments.GridVariants {
		return v.Name
	}
	return v.Name + "[grid=" + v.Grid + "]"
}

// LookupVariants returns learner name as [Lookup] does, with the settings
// the spec's [[methods]] table of that name gives it (its params and
// grid; none: the learner's defaults). A table that sets parameters a
// learner does not declare, values of the wrong type, or a grid without a
// list, is an error naming the key.
func LookupVariants(spec *experiments.Spec, ext *external.Set, name string, cfg Config) (Variants, error) {
	l, err := Lookup(ext, name, cfg)
	if err != nil {
		return Variants{}, err
	}
	v := Variants{Name: name, Grid: experiments.GridVariants}
	i := spec.MethodIndex(name)
	var table experiments.MethodSpec
	if i >= 0 {
		table = spec.Methods[i]
		if table.Serves != experiments.ServesLearner {
			i = -1 // another extension point's method of that name: not this learner's table
			table = experiments.MethodSpec{}
		}
	}
	at := func(key string, err error) error {
		k := fmt.Sprintf("methods[%d].%s", i, key)
		return spec.ErrorAt(k, k, err)
	}
	if table.Grid != "" {
		v.Grid = table.Grid
	}
	p, ok := l.(Parameterized)
	if !ok {
		if len(table.Params) > 0 {
			return Variants{}, at("params", fmt.Errorf("learner %s declares no parameters", name))
		}
		if v.Grid != experiments.GridVariants {
			return Variants{}, at("grid", fmt.Errorf("grid = %q selects among the variants of list-valued params, and learner %s declares no parameters", v.Grid, name))
		}
		v.Learners, v.Settings = []Learner{l}, []params.Setting{{}}
		return v, nil
	}
	decl, err := params.Check("learner "+name, p.Params())
	if err != nil {
		return Variants{}, err
	}
	settings, err := params.Expand("", decl, table.Params)
	if err != nil {
		return Variants{}, paramErrors(spec, i, err)
	}
	if v.Grid != experiments.GridVariants && len(settings) < 2 {
		return Variants{}, at("grid", fmt.Errorf("grid = %q selects among the variants of list-valued params, and methods[%d].params lists none", v.Grid, i))
	}
	var errs []error
	for _, s := range settings {
		label := params.Label(name, s)
		lv, err := p.WithParams(label, s)
		switch {
		case err != nil:
			errs = append(errs, at("params", fmt.Errorf("learner %s: %w", label, err)))
			continue
		case lv == nil || lv.Name() != label:
			errs = append(errs, fmt.Errorf("learner %s: WithParams returned %v, not a learner named %q", name, lv, label))
			continue
		}
		v.Learners = append(v.Learners, lv)
		v.Settings = append(v.Settings, s)
	}
	if err := errors.Join(errs...); err != nil {
		return Variants{}, err
	}
	return v, nil
}

// paramErrors places the errors of methods[i]'s params at their keys
// (file:line of "methods[i].params.<name>"), each params.KeyError on its
// own line.
func paramErrors(spec *experiments.Spec, i int, err error) error {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	var out []error
	for _, e := range list {
		key := fmt.Sprintf("methods[%d].params", i)
		var ke *params.KeyError
		if errors.As(e, &ke) {
			k := key + "." + ke.Key
			if spec.Pos(k) != "" {
				key = k
			}
		}
		out = append(out, spec.ErrorAt(key, fmt.Sprintf("methods[%d].params", i), e))
	}
	return errors.Join(out...)
}

// Signatures returns the registered learners as `dprepro list` shows
// them: the name, followed by the parameters a [Parameterized] learner
// declares, "noisy-gd(steps int = 30)".
func Signatures() []string {
	var out []string
	for _, l := range registered.All() {
		s := l.Name()
		if p, ok := l.(Parameterized); ok {
			var ps []string
			for _, d := range p.Params() {
				ps = append(ps, fmt.Sprintf("%s %s = %v", d.Name, d.Type, d.Default))
			}
			s += "(" + strings.Join(ps, ", ") + ")"
		}
		out = append(out, s)
	}
	return out
}

// UnusedTables returns a warning for each [[methods]] table of spec
// serving learners that names none of names (the learners the spec runs,
// listed at key): its command, params and grid would be ignored without
// a word — most likely a name misspelt in one of the two places, or a
// learner left out by --only.
func UnusedTables(spec *experiments.Spec, names []string, key string) []string {
	var w []string
	for i, m := range spec.Methods {
		if m.Serves != experiments.ServesLearner || slices.Contains(names, m.Name) {
			continue
		}
		at := fmt.Sprintf("methods[%d].name", i)
		where := spec.Pos(at)
		if where == "" {
			where = spec.ID
		}
		w = append(w, fmt.Sprintf("%s: %s: no %s entry names learner %q: its table (command, params, grid) is not used", where, at, key, m.Name))
	}
	return w
}
