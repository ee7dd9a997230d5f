package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/runner"
)

// Reference is every key a spec file can hold, as the code declares it:
// the shared part (experiments.Spec and the [[claims]] tables) and the
// section of every registered kind.
type Reference struct {
	// Shared are the tables of the shared part, in the order of the
	// fields of experiments.Spec, then [[claims]].
	Shared []*Table
	// Kinds are the registered kinds, in the registry's order.
	Kinds []string
	// KindTables are the tables of the kinds' sections, in the order they
	// first appear (kinds in registry order, fields in declaration order).
	KindTables []*Table
	// Servers maps a kind whose section runs external methods
	// (experiments.Server) to what they serve.
	Servers map[string][]string
	// Profiles is the package experiments doc's section "Profiles".
	Profiles string
}

// Table is one TOML table of a spec, or the top level.
type Table struct {
	// Path is the table's key path; "*" stands for a name the user
	// chooses (a map key), e.g. ["data", "files", "*"].
	Path []string
	// Array is set for an array of tables ([[methods]]).
	Array bool
	// Kinds are the kinds that read the table; nil for the shared part.
	Kinds []string
	// Intros are the table's descriptions: the doc comment of the field
	// that holds it and of its Go type, one per distinct text.
	Intros []Intro
	// Keys are the table's keys, in declaration order.
	Keys []*Key
}

// Intro is a description of a table, from the declarations of kinds.
type Intro struct {
	Kinds []string // nil for the shared part
	Decl  string   // the Go field or type it comes from
	Text  string
}

// Key is one key of a table with its declarations: one per Go field that
// decodes it (the kinds' sections may declare the same key apart, e.g.
// cv.folds).
type Key struct {
	Path  []string
	Decls []*Decl
}

// Decl is one Go field that decodes a key.
type Decl struct {
	GoName  string // e.g. "experiments.DataSpec.Synthetic"
	Type    string // the TOML type
	Doc     string
	GroupOf string // the TOML key whose doc comment this field shares
	// FromExample says that Doc is the key's comment in the annotated
	// example of its type's doc comment (the field has none of its own).
	FromExample bool
	Kinds       []string
	// Defaults holds the non-zero default per kind ("" for the shared
	// part); a kind without an entry starts from the zero value.
	Defaults map[string]string
}

// header returns how the table is written in a file: "[data]",
// "[[methods]]", "[data.files.NAME]", or "top level".
func (t *Table) header() string {
	if len(t.Path) == 0 {
		return "top level"
	}
	if t.Array {
		return "[[" + display(t.Path) + "]]"
	}
	return "[" + display(t.Path) + "]"
}

// display writes a key path with its placeholders: the first "*" is
// NAME, the next KEY.
func display(path []string) string {
	out := make([]string, len(path))
	n := 0
	for i, p := range path {
		if p == "*" {
			out[i] = []string{"NAME", "KEY"}[min(n, 1)]
			n++
		} else {
			out[i] = p
		}
	}
	return strings.Join(out, ".")
}

// builder walks spec types by reflection into tables.
type builder struct {
	docs   *docIndex
	tables []*Table
	byPath map[string]*Table
}

func newBuilder(docs *docIndex) *builder {
	return &builder{docs: docs, byPath: map[string]*Table{}}
}

// table returns the table at path, created on first use; kind ("" for
// the shared part) is added to its readers.
func (b *builder) table(path []string, array bool, kind string) *Table {
	id := strings.Join(path, ".")
	t, ok := b.byPath[id]
	if !ok {
		t = &Table{Path: slices.Clone(path), Array: array}
		b.byPath[id] = t
		b.tables = append(b.tables, t)
	}
	if kind != "" && !slices.Contains(t.Kinds, kind) {
		t.Kinds = append(t.Kinds, kind)
	}
	return t
}

// intro adds text (from decl) to t's descriptions, or kind to the kinds
// of the same text.
func (t *Table) intro(kind, decl, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	for i := range t.Intros {
		if t.Intros[i].Decl == decl && t.Intros[i].Text == text {
			if kind != "" && !slices.Contains(t.Intros[i].Kinds, kind) {
				t.Intros[i].Kinds = append(t.Intros[i].Kinds, kind)
			}
			return
		}
	}
	in := Intro{Decl: decl, Text: text}
	if kind != "" {
		in.Kinds = []string{kind}
	}
	t.Intros = append(t.Intros, in)
}

// key adds the declaration of the key at path by field goName to t.
func (t *Table) key(path []string, kind string, d Decl, def string) {
	var k *Key
	for _, x := range t.Keys {
		if slices.Equal(x.Path, path) {
			k = x
		}
	}
	if k == nil {
		k = &Key{Path: slices.Clone(path)}
		t.Keys = append(t.Keys, k)
	}
	var decl *Decl
	for _, x := range k.Decls {
		if x.GoName == d.GoName && x.Doc == d.Doc && x.Type == d.Type && x.GroupOf == d.GroupOf {
			decl = x
		}
	}
	if decl == nil {
		decl = &d
		decl.Defaults = map[string]string{}
		k.Decls = append(k.Decls, decl)
	}
	if kind != "" && !slices.Contains(decl.Kinds, kind) {
		decl.Kinds = append(decl.Kinds, kind)
	}
	if def != "" {
		decl.Defaults[kind] = def
	}
}

// goName returns "pkg.Type" for a named type.
func goName(t reflect.Type) string {
	pkg := t.PkgPath()
	if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
		pkg = pkg[i+1:]
	}
	return pkg + "." + t.Name()
}

// walkStruct adds the keys of struct type t (defaults from v, when valid)
// to the table at path, and its tables below it.
func (b *builder) walkStruct(t reflect.Type, v reflect.Value, path []string, array bool, kind, fieldDecl, fieldText string) error {
	tbl := b.table(path, array, kind)
	tbl.intro(kind, fieldDecl, fieldText)
	td, err := b.docs.typ(t)
	if err != nil {
		return err
	}
	if td != nil {
		tbl.intro(kind, goName(t), td.Doc)
	}
	return b.fields(tbl, t, v, path, kind)
}

// fields adds the fields of struct type t to tbl.
func (b *builder) fields(tbl *Table, t reflect.Type, v reflect.Value, path []string, kind string) error {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "-" {
			continue
		}
		var fv reflect.Value
		if v.IsValid() {
			fv = v.Field(i)
		}
		if f.Anonymous && name == "" && deref(f.Type).Kind() == reflect.Struct {
			// The decoder reads an embedded struct's fields as the
			// outer table's.
			if fv.IsValid() && fv.Kind() == reflect.Pointer {
				fv = fv.Elem()
			}
			if err := b.fields(tbl, deref(f.Type), fv, path, kind); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = f.Name // the decoder matches the field name
		}
		fd, err := b.docs.field(t, f.Name)
		if err != nil {
			return err
		}
		if fd.Text == "" {
			// Types documented by an annotated example (MethodSpec,
			// ClaimSpec, DataFile) comment each key there.
			if td, err := b.docs.typ(t); err == nil && td != nil {
				if c := exampleComment(td.Doc, name); c != "" {
					fd.Text = c + "\n"
					fd.FromExample = true
				}
			}
		}
		group := ""
		if fd.GroupOf != "" {
			gf, ok := t.FieldByName(fd.GroupOf)
			if ok {
				group, _, _ = strings.Cut(gf.Tag.Get("toml"), ",")
				if group == "" {
					group = gf.Name
				}
			}
		}
		d := Decl{GoName: goName(t) + "." + f.Name, Doc: fd.Text, GroupOf: group, FromExample: fd.FromExample}
		if err := b.value(tbl, f.Type, fv, append(slices.Clone(path), name), kind, d); err != nil {
			return err
		}
	}
	return nil
}

// deref returns the type a pointer type points to, or t.
func deref(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// value adds the field d of type ft (default fv) at path: a key of tbl,
// or a table below it.
func (b *builder) value(tbl *Table, ft reflect.Type, fv reflect.Value, path []string, kind string, d Decl) error {
	if ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
		if fv.IsValid() {
			if fv.IsNil() {
				fv = reflect.Value{}
			} else {
				fv = fv.Elem()
			}
		}
	}
	switch {
	case ft.Kind() == reflect.Struct:
		return b.walkStruct(ft, fv, path, false, kind, d.GoName, d.Doc)
	case (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && deref(ft.Elem()).Kind() == reflect.Struct:
		return b.walkStruct(deref(ft.Elem()), reflect.Value{}, path, true, kind, d.GoName, d.Doc)
	case ft.Kind() == reflect.Map:
		if ft.Key().Kind() != reflect.String {
			return fmt.Errorf("%s: a map key must be a string (got %s)", d.GoName, ft.Key())
		}
		elem := deref(ft.Elem())
		sub := append(slices.Clone(path), "*")
		switch elem.Kind() {
		case reflect.Struct:
			return b.walkStruct(elem, reflect.Value{}, sub, false, kind, d.GoName, d.Doc)
		case reflect.Map:
			// A table of tables of values: [data.bounds.NAME] KEY = ….
			inner := b.table(sub, false, kind)
			inner.intro(kind, d.GoName, d.Doc)
			return b.value(inner, elem, reflect.Value{}, sub, kind, d)
		}
		t := b.table(path, false, kind)
		t.intro(kind, d.GoName, d.Doc)
		t.key(sub, kind, Decl{
			GoName: d.GoName, Type: tomlType(elem),
			Doc: "A key of any name (see the table's text).",
		}, "")
		return nil
	}
	d.Type = tomlType(ft)
	def := ""
	if fv.IsValid() && !fv.IsZero() {
		var err error
		if def, err = tomlValue(fv); err != nil {
			return fmt.Errorf("%s: encoding its default: %w", d.GoName, err)
		}
	}
	tbl.key(path, kind, d, def)
	return nil
}

// tomlType names the TOML type a Go type decodes.
func tomlType(t reflect.Type) string {
	t = deref(t)
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.Slice, reflect.Array:
		return "array of " + tomlType(t.Elem())
	case reflect.Interface:
		return "any value (a value or an array)"
	case reflect.Map:
		return "table of " + tomlType(t.Elem())
	case reflect.Struct:
		return "table"
	}
	return t.String()
}

// tomlValue writes v as a TOML value.
func tomlValue(v reflect.Value) (string, error) {
	b, err := toml.Marshal(map[string]any{"v": v.Interface()})
	if err != nil {
		return "", err
	}
	s, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "v = ")
	if !ok {
		return "", fmt.Errorf("unexpected encoding %q", b)
	}
	return s, nil
}

// Build returns the reference of the shared part and of every kind of
// reg, with the doc comments read from the module's source at root.
func Build(reg *runner.Registry, docs *docIndex) (*Reference, error) {
	ref := &Reference{Kinds: reg.Names(), Servers: map[string][]string{}}

	shared := newBuilder(docs)
	spec := experiments.DefaultSpec()
	st := reflect.TypeOf(spec)
	if err := shared.walkStruct(st, reflect.ValueOf(spec), nil, false, "", "", ""); err != nil {
		return nil, err
	}
	// The [[claims]] tables are decoded apart from the spec (the field
	// Spec.Claims is toml:"-": claims are outside the spec's identity).
	cf, _ := st.FieldByName("Claims")
	cd, err := docs.field(st, "Claims")
	if err != nil {
		return nil, err
	}
	if err := shared.value(nil, cf.Type, reflect.Value{}, []string{"claims"}, "", Decl{GoName: goName(st) + ".Claims", Doc: cd.Text}); err != nil {
		return nil, err
	}
	// The top level: the spec's intro is the type's doc, which says
	// little; the package doc says more in its sections (see Profiles).
	ref.Shared = shared.tables

	kinds := newBuilder(docs)
	for _, name := range ref.Kinds {
		sec, ok := reg.Section(name)
		if !ok {
			return nil, fmt.Errorf("kind %s: no section", name)
		}
		if sv, ok := sec.(experiments.Server); ok {
			ref.Servers[name] = sv.Serves()
		}
		v := reflect.ValueOf(sec)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return nil, fmt.Errorf("kind %s: its section is a %s, not a pointer to a struct", name, v.Type())
		}
		if err := kinds.walkStruct(v.Elem().Type(), v.Elem(), nil, false, name, "", ""); err != nil {
			return nil, fmt.Errorf("kind %s: %w", name, err)
		}
	}
	for _, t := range kinds.tables {
		if len(t.Path) == 0 {
			if len(t.Keys) > 0 {
				return nil, fmt.Errorf("kinds %s: a section holds tables only, not top-level keys", strings.Join(t.Kinds, ", "))
			}
			continue
		}
		ref.KindTables = append(ref.KindTables, t)
	}

	ref.Profiles, err = docs.pkgSection(st.PkgPath(), "Profiles")
	if err != nil {
		return nil, err
	}
	return ref, nil
}

// Pattern is a key path of the reference ("*" for a name the user
// chooses) and the kinds that read it (nil: every kind).
type Pattern struct {
	Path  []string
	Kinds []string
}

// Patterns returns the key paths of every table and key of the
// reference.
func (r *Reference) Patterns() []Pattern {
	var out []Pattern
	for _, t := range append(slices.Clone(r.Shared), r.KindTables...) {
		if len(t.Path) > 0 {
			out = append(out, Pattern{Path: t.Path, Kinds: t.Kinds})
			// The tables a path passes through ("data.files" of
			// [data.files.NAME]).
			for i := 1; i < len(t.Path); i++ {
				out = append(out, Pattern{Path: t.Path[:i], Kinds: t.Kinds})
			}
		}
		for _, k := range t.Keys {
			var kinds []string
			for _, d := range k.Decls {
				kinds = append(kinds, d.Kinds...)
			}
			out = append(out, Pattern{Path: k.Path, Kinds: kinds})
		}
	}
	return out
}

// Match returns the patterns that match key (a key path of a file,
// "profile.NAME." stripped).
func Match(patterns []Pattern, key []string) []Pattern {
	var out []Pattern
	for _, p := range patterns {
		if len(p.Path) != len(key) {
			continue
		}
		ok := true
		for i := range key {
			if p.Path[i] != "*" && p.Path[i] != key[i] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}
