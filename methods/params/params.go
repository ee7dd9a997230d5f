// Package params is the parameters of a method: what a method — built-in,
// a Go extension or an external worker — declares ([Param]: a name, a
// type and a default), what a spec sets in a method's table
//
//	[[methods]]
//	name = "py-dp-gd"
//	serves = "learner"
//	command = ["python3", "dp_gd.py"]
//	[methods.params]
//	steps = [50, 100]   # a list: one variant per value
//	clip = 1.0
//
// and how the lists expand into labelled variants ([Expand]): the
// Cartesian product of the listed values, in declaration order, each
// labelled by the listed parameters alone, "py-dp-gd[steps=50]" and
// "py-dp-gd[steps=100]" ([Label]). A kind runs each variant as a method
// of its own (its own curve, rows and ledger entry), or selects among
// them per fold (the [[methods]] table's grid key).
//
// Values are normalized to four Go types: int64 ("int"), float64
// ("float"), bool ("bool") and string ("string"). A string value is a
// safe token (letters, digits, '_', '.', '-'): it becomes part of a
// label, a unit key and a CSV cell.
package params

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dprepro/dprepro/experiments"
)

// The types of a parameter.
const (
	Float  = "float"
	Int    = "int"
	Bool   = "bool"
	String = "string"
)

// Types lists the accepted values of Param.Type.
var Types = []string{Float, Int, Bool, String}

// Param is one parameter a method declares.
type Param struct {
	// Name is the key a spec sets it by: a letter, then letters, digits
	// and '_' (at most 32 bytes).
	Name string `json:"name"`
	// Type is Float, Int, Bool or String.
	Type string `json:"type"`
	// Default is the value a spec that does not set it gets, of Type
	// (an int64 for Int; any Go integer or float is accepted and
	// normalized by [Check]).
	Default any `json:"default"`
	// Doc says what it is, for `dprepro list` and the docs (optional).
	Doc string `json:"doc,omitempty"`
}

// Setting is one variant: a value for every declared parameter.
type Setting struct {
	// Label names the listed parameters' values, "steps=50,clip=1" ("" when
	// the spec lists none: the method's only setting).
	Label string
	// Names are the declared parameters, in declaration order.
	Names []string
	// Values holds every declared parameter's value (the spec's, else the
	// default), normalized (int64, float64, bool or string).
	Values map[string]any
}

// Float returns the value of parameter name as a float64 (an Int value
// converted); 0 when it is not declared or of another type.
func (s Setting) Float(name string) float64 {
	switch v := s.Values[name].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	}
	return 0
}

// Int returns the value of parameter name (an Int); 0 otherwise.
func (s Setting) Int(name string) int64 { v, _ := s.Values[name].(int64); return v }

// Bool returns the value of parameter name (a Bool); false otherwise.
func (s Setting) Bool(name string) bool { v, _ := s.Values[name].(bool); return v }

// String returns the value of parameter name (a String); "" otherwise.
func (s Setting) String(name string) string { v, _ := s.Values[name].(string); return v }

// Canonical is every value of s in declaration order, "k=v,…" ("" for a
// method without parameters): what identifies the setting, for a unit's
// inputs (runner.UnitReader).
func (s Setting) Canonical() string {
	parts := make([]string, len(s.Names))
	for i, n := range s.Names {
		parts[i] = n + "=" + Format(s.Values[n])
	}
	return strings.Join(parts, ",")
}

// Label returns the label of a variant of method name: name, or
// "name[<setting label>]".
func Label(name string, s Setting) string {
	if s.Label == "" {
		return name
	}
	return name + "[" + s.Label + "]"
}

// Format formats a normalized value as labels and unit keys show it:
// strconv's shortest 'g' for a float, decimal for an int, true/false, the
// string itself.
func Format(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	case string:
		return v
	}
	return fmt.Sprint(v)
}

// Check checks a method's declaration and returns it with its defaults
// normalized: names well formed and distinct, types known, defaults
// present and of their type. what names the method for the message.
func Check(what string, decl []Param) ([]Param, error) {
	out := make([]Param, len(decl))
	var errs []error
	seen := map[string]bool{}
	for i, p := range decl {
		if !nameOK(p.Name) {
			errs = append(errs, fmt.Errorf("%s: parameter %d: name %q: want a letter, then letters, digits or '_' (at most 32 bytes)", what, i+1, p.Name))
			continue
		}
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("%s: parameter %q declared twice", what, p.Name))
			continue
		}
		seen[p.Name] = true
		if !slices.Contains(Types, p.Type) {
			errs = append(errs, fmt.Errorf("%s: parameter %s: type %q: want one of %s", what, p.Name, p.Type, strings.Join(Types, ", ")))
			continue
		}
		if p.Default == nil {
			errs = append(errs, fmt.Errorf("%s: parameter %s: no default", what, p.Name))
			continue
		}
		v, err := normalize(p.Type, p.Default)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: parameter %s: default: %w", what, p.Name, err))
			continue
		}
		p.Default = v
		out[i] = p
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// MaxVariants bounds the variants one method's lists expand into.
const MaxVariants = 256

// Expand returns the settings that the values set (a spec's
// [methods.params]: name → value or list of values) give a method that
// declares decl (checked by [Check]): one per element of the Cartesian
// product of the listed values, the first declared parameter varying
// slowest, each labelled by the listed parameters alone in declaration
// order ("steps=50,clip=1"); a single setting labelled "" when nothing is
// listed. An undeclared name, a value of the wrong type, an empty list or
// a list with a value twice is an error naming the key (prefix + name,
// e.g. "methods[0].params.steps").
func Expand(prefix string, decl []Param, set map[string]any) ([]Setting, error) {
	names := make([]string, len(decl))
	for i, p := range decl {
		names[i] = p.Name
	}
	var errs []error
	var unknown []string
	for k := range set {
		if !slices.Contains(names, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		what := "the method declares no parameters"
		if len(names) > 0 {
			what = experiments.Unknown("parameter", k, names)
		}
		errs = append(errs, &KeyError{Key: k, Err: fmt.Errorf("%s%s: %s", prefix, k, what)})
	}
	choices := make([][]any, len(decl)) // the values of each parameter
	listed := make([]bool, len(decl))
	for i, p := range decl {
		raw, ok := set[p.Name]
		if !ok {
			choices[i] = []any{p.Default}
			continue
		}
		list, isList := raw.([]any)
		if !isList {
			v, err := normalize(p.Type, raw)
			if err != nil {
				errs = append(errs, &KeyError{Key: p.Name, Err: fmt.Errorf("%s%s: %w", prefix, p.Name, err)})
				continue
			}
			choices[i] = []any{v}
			continue
		}
		listed[i] = true
		if len(list) == 0 {
			errs = append(errs, &KeyError{Key: p.Name, Err: fmt.Errorf("%s%s: an empty list (give one value, or a list of the values to run)", prefix, p.Name)})
			continue
		}
		for j, x := range list {
			v, err := normalize(p.Type, x)
			if err != nil {
				errs = append(errs, &KeyError{Key: p.Name, Err: fmt.Errorf("%s%s[%d]: %w", prefix, p.Name, j, err)})
				continue
			}
			if slices.Contains(choices[i], v) {
				errs = append(errs, &KeyError{Key: p.Name, Err: fmt.Errorf("%s%s[%d]: %s listed twice", prefix, p.Name, j, Format(v))})
				continue
			}
			choices[i] = append(choices[i], v)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	total := 1
	for _, c := range choices {
		total *= len(c)
		if total > MaxVariants {
			return nil, fmt.Errorf("%s: the lists expand into more than %d variants", strings.TrimSuffix(prefix, "."), MaxVariants)
		}
	}
	out := make([]Setting, 0, total)
	pick := make([]int, len(decl))
	for {
		s := Setting{Names: names, Values: make(map[string]any, len(decl))}
		var label []string
		for i, p := range decl {
			v := choices[i][pick[i]]
			s.Values[p.Name] = v
			if listed[i] {
				label = append(label, p.Name+"="+Format(v))
			}
		}
		s.Label = strings.Join(label, ",")
		out = append(out, s)
		// The next combination: the last parameter varies fastest.
		i := len(decl) - 1
		for ; i >= 0; i-- {
			pick[i]++
			if pick[i] < len(choices[i]) {
				break
			}
			pick[i] = 0
		}
		if i < 0 {
			return out, nil
		}
	}
}

// Defaults returns the setting of decl's defaults (labelled "").
func Defaults(decl []Param) Setting {
	s, err := Expand("", decl, nil)
	if err != nil || len(s) != 1 {
		panic(fmt.Sprintf("params: Defaults of an unchecked declaration: %v", err))
	}
	return s[0]
}

func nameOK(n string) bool {
	if len(n) == 0 || len(n) > 32 {
		return false
	}
	for i, r := range n {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r != '_' && (r < '0' || r > '9')) {
			return false
		}
	}
	return true
}

// normalize returns x as a value of type typ: an int64 for Int (from any
// Go integer, or a float with an integral value, as JSON decodes
// numbers), a float64 for Float (from any Go number; finite), a bool, a
// safe string.
func normalize(typ string, x any) (any, error) {
	switch typ {
	case Int:
		switch v := x.(type) {
		case int:
			return int64(v), nil
		case int64:
			return v, nil
		case int32:
			return int64(v), nil
		case float64:
			if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
				return int64(v), nil
			}
		}
		return nil, fmt.Errorf("%v is not an int", show(x))
	case Float:
		var f float64
		switch v := x.(type) {
		case float64:
			f = v
		case float32:
			f = float64(v)
		case int:
			f = float64(v)
		case int64:
			f = float64(v)
		case int32:
			f = float64(v)
		default:
			return nil, fmt.Errorf("%v is not a float", show(x))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%v is not finite", f)
		}
		return f, nil
	case Bool:
		if v, ok := x.(bool); ok {
			return v, nil
		}
		return nil, fmt.Errorf("%v is not a bool", show(x))
	case String:
		v, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%v is not a string", show(x))
		}
		if !tokenOK(v) {
			return nil, fmt.Errorf("string %q: want 1–64 letters, digits, '_', '.' or '-' (it becomes part of a label and a unit key)", v)
		}
		return v, nil
	}
	return nil, fmt.Errorf("unknown type %q", typ)
}

func tokenOK(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// show formats a value as the spec wrote it, with its TOML type.
func show(x any) string {
	switch v := x.(type) {
	case string:
		return strconv.Quote(v)
	case float64, float32:
		return fmt.Sprintf("%v (a float)", v)
	case int, int64, int32:
		return fmt.Sprintf("%v (an integer)", v)
	case bool:
		return fmt.Sprintf("%v (a boolean)", v)
	}
	return fmt.Sprintf("%v", x)
}

// KeyError is an error of one key of a spec's params (Expand): Key is
// the parameter's name, as the table writes it.
type KeyError struct {
	Key string
	Err error
}

// Error implements error: the message, which names the key.
func (e *KeyError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *KeyError) Unwrap() error { return e.Err }

// Base returns the method name of a variant's label: label up to its
// "[" ([Label]), or label itself.
func Base(label string) string {
	if i := strings.IndexByte(label, '['); i > 0 && strings.HasSuffix(label, "]") {
		return label[:i]
	}
	return label
}

// Labels returns the labels of settings, in order.
func Labels(settings []Setting) []string {
	out := make([]string, len(settings))
	for i, s := range settings {
		out[i] = s.Label
	}
	return out
}

// Canonicals returns the canonical values of settings, in order
// ([Setting.Canonical]).
func Canonicals(settings []Setting) []string {
	out := make([]string, len(settings))
	for i, s := range settings {
		out[i] = s.Canonical()
	}
	return out
}
