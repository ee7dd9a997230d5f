package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"unicode/utf8"
)

// fieldDoc is the documentation of one struct field.
type fieldDoc struct {
	// Text is the field's doc comment, or its line comment when it has
	// none, or the doc comment of the group it belongs to (GroupOf).
	Text string
	// GroupOf is the Go name of the field whose doc comment this field
	// shares: a field without a comment of its own, written on the line
	// right after a documented field (the Go convention of one comment
	// above a group of fields, e.g. "Eps1, Eps2, Eps3 are …"). Empty for
	// a field documented by its own comment.
	GroupOf string
	// FromExample says that Text is the field's comment in the annotated
	// example of its type's doc comment (exampleComment).
	FromExample bool
}

// typeDoc is the documentation of one struct type.
type typeDoc struct {
	Doc    string
	Fields map[string]fieldDoc
}

// docIndex reads the doc comments of the module's struct types from their
// source files, one package directory at a time.
type docIndex struct {
	root   string // the module's directory
	module string // the module path, from go.mod
	pkgs   map[string]*pkgDoc
}

// pkgDoc is what docIndex keeps of one package.
type pkgDoc struct {
	doc   string // the package doc comment
	types map[string]*typeDoc
}

// findModule returns the directory of the go.mod at or above dir and its
// module path.
func findModule(dir string) (root, module string, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					f.Close()
					return dir, strings.Trim(strings.TrimSpace(m), `"`), nil
				}
			}
			f.Close()
			return "", "", fmt.Errorf("%s: no module line", filepath.Join(dir, "go.mod"))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", fmt.Errorf("no go.mod at or above the working directory: run the generator inside the repository")
		}
		dir = parent
	}
}

func newDocIndex(root, module string) *docIndex {
	return &docIndex{root: root, module: module, pkgs: map[string]*pkgDoc{}}
}

// pkg returns the documentation of the package with import path path,
// parsing its non-test Go files on first use.
func (x *docIndex) pkg(path string) (*pkgDoc, error) {
	if p, ok := x.pkgs[path]; ok {
		return p, nil
	}
	rel, ok := strings.CutPrefix(path, x.module)
	if !ok || (rel != "" && rel[0] != '/') {
		return nil, fmt.Errorf("package %s is not in module %s: its doc comments cannot be read", path, x.module)
	}
	dir := filepath.Join(x.root, filepath.FromSlash(strings.TrimPrefix(rel, "/")))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the source of %s: %w", path, err)
	}
	p := &pkgDoc{types: map[string]*typeDoc{}}
	fset := token.NewFileSet()
	for _, e := range entries { // os.ReadDir sorts by name
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if f.Doc != nil && p.doc == "" {
			p.doc = f.Doc.Text()
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				td := &typeDoc{Fields: map[string]fieldDoc{}}
				switch {
				case ts.Doc != nil:
					td.Doc = ts.Doc.Text()
				case gd.Doc != nil && !gd.Lparen.IsValid():
					td.Doc = gd.Doc.Text()
				}
				structFields(fset, st, td.Fields)
				p.types[ts.Name.Name] = td
			}
		}
	}
	x.pkgs[path] = p
	return p, nil
}

// structFields records the documentation of the fields of st in out.
func structFields(fset *token.FileSet, st *ast.StructType, out map[string]fieldDoc) {
	// group is the doc comment of the group the next field may belong
	// to, and groupEnd the line the group's last field ends on (0: no
	// group open).
	var group fieldDoc
	groupEnd := 0
	for _, f := range st.Fields.List {
		var d fieldDoc
		line := fset.Position(f.Pos()).Line
		switch {
		case f.Doc != nil:
			d.Text = f.Doc.Text()
		case f.Comment != nil:
			d.Text = f.Comment.Text()
		case groupEnd > 0 && line == groupEnd+1:
			d = group
		}
		for i, n := range f.Names {
			nd := d
			if i > 0 && nd.GroupOf == "" && nd.Text != "" {
				nd.GroupOf = f.Names[0].Name // "Units, Rows float64" under one comment
			}
			out[n.Name] = nd
		}
		switch {
		case len(f.Names) == 0:
			groupEnd = 0
		case f.Doc != nil:
			// A documented field opens a group: a following field without
			// a comment, on the next line, shares its doc comment.
			group = fieldDoc{Text: d.Text, GroupOf: f.Names[0].Name}
			groupEnd = fset.Position(f.End()).Line
		case f.Comment == nil && d.Text != "":
			groupEnd = fset.Position(f.End()).Line
		default:
			groupEnd = 0
		}
	}
}

// field returns the documentation of field name of struct type t.
func (x *docIndex) field(t reflect.Type, name string) (fieldDoc, error) {
	td, err := x.typ(t)
	if err != nil || td == nil {
		return fieldDoc{}, err
	}
	d := td.Fields[name]
	if d.GroupOf == name {
		d.GroupOf = ""
	}
	return d, nil
}

// typ returns the documentation of the named struct type t (nil for an
// unnamed type).
func (x *docIndex) typ(t reflect.Type) (*typeDoc, error) {
	if t.Name() == "" || t.PkgPath() == "" {
		return nil, nil
	}
	p, err := x.pkg(t.PkgPath())
	if err != nil {
		return nil, err
	}
	td, ok := p.types[t.Name()]
	if !ok {
		return nil, fmt.Errorf("type %s.%s: no struct declaration found in the source of %s", t.PkgPath(), t.Name(), t.PkgPath())
	}
	return td, nil
}

// pkgSection returns the text of the section under the heading "# name"
// of the doc comment of package path, up to the next heading.
func (x *docIndex) pkgSection(path, name string) (string, error) {
	p, err := x.pkg(path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	in := false
	for _, l := range strings.SplitAfter(p.doc, "\n") {
		if h, ok := strings.CutPrefix(l, "# "); ok {
			if in {
				break
			}
			in = strings.TrimSpace(h) == name
			continue
		}
		if in {
			b.WriteString(l)
		}
	}
	if !in {
		return "", fmt.Errorf("package %s: its doc comment has no section %q", path, "# "+name)
	}
	return strings.TrimSpace(b.String()) + "\n", nil
}

// exampleComment returns the comment of key in the annotated example of a
// type's doc comment: the text after '#' on the indented line
// "key = value  # comment", with the comment lines indented under it, or
// "" when the doc has no such line.
func exampleComment(doc, key string) string {
	lines := strings.Split(doc, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "\t") {
			continue
		}
		k, rest, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		hash := commentStart(rest)
		if hash < 0 {
			return ""
		}
		// The column of the '#' in runes, as the example aligns it.
		col := utf8.RuneCountInString(l[:strings.Index(l, "=")+1+hash])
		parts := []string{strings.TrimSpace(rest[hash+1:])}
		for _, next := range lines[i+1:] {
			// A continuation: only a comment, its '#' in the same column.
			t := strings.TrimLeft(next, " \t")
			if !strings.HasPrefix(t, "#") || utf8.RuneCountInString(next[:len(next)-len(t)]) != col {
				break
			}
			parts = append(parts, strings.TrimSpace(t[1:]))
		}
		return strings.Join(parts, " ")
	}
	return ""
}

// commentStart returns the index of the '#' that starts a TOML comment in
// s (a value and its comment), outside strings, or -1.
func commentStart(s string) int {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\' && quote == '"':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#':
			return i
		}
	}
	return -1
}
