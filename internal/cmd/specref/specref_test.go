package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/internal/mdcheck"
	"github.com/dprepro/dprepro/kinds"
)

// moduleRoot returns the repository's root.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, _, err := findModule(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestReference_UpToDate fails when docs/spec-reference.md is not what
// the generator writes from the current code.
func TestReference_UpToDate(t *testing.T) {
	got, err := generate(".")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(moduleRoot(t), "docs", "spec-reference.md")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: generate it with `%s`", err, Command)
	}
	if got == string(want) {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	line := 0
	for line < len(g) && line < len(w) && g[line] == w[line] {
		line++
	}
	at := func(ls []string) string {
		if line < len(ls) {
			return ls[line]
		}
		return "(end of file)"
	}
	t.Errorf("docs/spec-reference.md is stale: refresh it from the repository's root with\n\t%s\nfirst difference at line %d:\n\tfile:      %s\n\tgenerated: %s", Command, line+1, at(w), at(g))
}

// specKeys returns the key paths a TOML file holds (tables included) and
// its kind.
func specKeys(t *testing.T, path string) (keys [][]string, kind string) {
	t.Helper()
	var v map[string]any
	md, err := toml.DecodeFile(path, &v)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, k := range md.Keys() {
		keys = append(keys, []string(k))
	}
	kind, _ = v["kind"].(string)
	return keys, kind
}

// uncovered returns the keys of a spec of kind that no pattern of the
// reference read by that kind matches; known says whether the kind is
// one of the reference's (the tables of another kind's section are then
// not checked, only the shared part's keys). skipped counts those.
func uncovered(patterns []Pattern, kind string, known bool, keys [][]string) (missing []string, skipped int) {
	for _, k := range keys {
		key := k
		if key[0] == "profile" {
			if len(key) <= 2 {
				continue // the [profile] and [profile.NAME] tables
			}
			key = key[2:]
		}
		ok := false
		for _, p := range Match(patterns, key) {
			if p.Kinds == nil || slices.Contains(p.Kinds, kind) {
				ok = true
			}
		}
		switch {
		case ok:
		case !known && !sharedTop(patterns, key[0]):
			skipped++ // a table of the other kind's own section
		default:
			missing = append(missing, strings.Join(k, "."))
		}
	}
	return missing, skipped
}

// sharedTop reports whether name is a top-level key or table of the
// shared part.
func sharedTop(patterns []Pattern, name string) bool {
	for _, p := range patterns {
		if p.Kinds == nil && p.Path[0] == name {
			return true
		}
	}
	return false
}

// builtinSpecs returns the spec files of the repository: experiments/*.toml
// and examples/**/*.toml.
func builtinSpecs(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "experiments", "*.toml"))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(filepath.Join(root, "examples"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".toml") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestReference_CoversBuiltinSpecs checks that every key of every spec
// file of the repository is in the reference, as a key or table its kind
// reads, and that the reference shows it.
func TestReference_CoversBuiltinSpecs(t *testing.T) {
	ref, err := build(".")
	if err != nil {
		t.Fatal(err)
	}
	md := ref.Markdown()
	patterns := ref.Patterns()
	root := moduleRoot(t)
	files := builtinSpecs(t, root)
	// experiments/ holds one spec per paper figure or table (over 40 at
	// the time of writing), examples/ a few more.
	if len(files) < 40 {
		t.Fatalf("found %d spec files under %s; the walk is broken", len(files), root)
	}
	checked := 0
	for _, f := range files {
		keys, kind := specKeys(t, f)
		known := slices.Contains(ref.Kinds, kind)
		missing, skipped := uncovered(patterns, kind, known, keys)
		rel, _ := filepath.Rel(root, f)
		for _, m := range missing {
			t.Errorf("%s: key %s (kind %s) is not in the reference: document the field that reads it, or fix the spec", rel, m, kind)
		}
		if skipped > 0 {
			t.Logf("%s: %d keys of kind %q, not a built-in kind, not checked", rel, skipped, kind)
		}
		checked += len(keys) - skipped
	}
	t.Logf("%d keys of %d spec files checked", checked, len(files))
	if checked < 500 {
		t.Errorf("checked %d keys in %d files; expected hundreds", checked, len(files))
	}
	// Every pattern the keys match is written in the reference.
	for _, p := range patterns {
		if !strings.Contains(md, display(p.Path)) {
			t.Errorf("%s: in the patterns but not in the Markdown", display(p.Path))
		}
	}
}

// TestUncovered_Rejects checks that the coverage check fails for keys
// the reference does not hold or the spec's kind does not read.
func TestUncovered_Rejects(t *testing.T) {
	ref, err := build(".")
	if err != nil {
		t.Fatal(err)
	}
	patterns := ref.Patterns()
	split := func(keys ...string) [][]string {
		var out [][]string
		for _, k := range keys {
			out = append(out, strings.Split(k, "."))
		}
		return out
	}
	tests := []struct {
		name  string
		kind  string
		known bool
		keys  [][]string
		want  []string
	}{
		{"shared", "cv-tuning", true, split("id", "data", "data.datasets", "data.files.mine.path", "data.bounds.adult.age", "methods.params.steps", "claims.rule"), nil},
		{"profile", "cv-tuning", true, split("profile", "profile.quick", "profile.quick.cv.folds", "profile.quick.tuning"), nil},
		{"unknown key", "cv-tuning", true, split("data.nosuch", "profile.quick.data.nosuch"), []string{"data.nosuch", "profile.quick.data.nosuch"}},
		{"other kind's table", "privacy-audit", true, split("tuning.lambdas", "cv"), []string{"tuning.lambdas", "cv"}},
		{"other kind's key", "learner-comparison", true, split("cv.folds", "tuning.lambdas"), []string{"tuning.lambdas"}},
		{"not a map", "cv-tuning", true, split("data.intercept.x"), []string{"data.intercept.x"}},
		{"unknown kind", "rr-proportion", false, split("rr.epsilons", "data.nosuch", "id"), []string{"data.nosuch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := uncovered(patterns, tt.kind, tt.known, tt.keys)
			if !slices.Equal(got, tt.want) {
				t.Errorf("uncovered = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestReference_EveryKeyDocumented checks that every key has a text and a
// type, and that the reference is plain Markdown (no raw HTML: a doc's
// "<method>" would vanish).
func TestReference_EveryKeyDocumented(t *testing.T) {
	ref, err := build(".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tb := range append(slices.Clone(ref.Shared), ref.KindTables...) {
		for _, k := range tb.Keys {
			for _, d := range k.Decls {
				n++
				if strings.TrimSpace(d.Doc) == "" {
					t.Errorf("%s (%s): no doc comment", display(k.Path), d.GoName)
				}
				if d.Type == "" {
					t.Errorf("%s (%s): no type", display(k.Path), d.GoName)
				}
			}
		}
	}
	if n < 100 {
		t.Errorf("%d keys in the reference; expected over 100", n)
	}
	for _, p := range mdcheck.Unsafe(ref.Markdown()) {
		t.Errorf("spec reference: %s", p)
	}
}

// TestReference_Facts checks what the reference says of keys whose type,
// default, group and readers the code states.
func TestReference_Facts(t *testing.T) {
	ref, err := build(".")
	if err != nil {
		t.Fatal(err)
	}
	find := func(key string) *Key {
		for _, tb := range append(slices.Clone(ref.Shared), ref.KindTables...) {
			for _, k := range tb.Keys {
				if display(k.Path) == key {
					return k
				}
			}
		}
		t.Fatalf("key %s not in the reference", key)
		return nil
	}
	def, err := tomlValue(reflect.ValueOf(experiments.DefaultSpec().Data.Synthetic))
	if err != nil {
		t.Fatal(err)
	}
	if d := find("data.synthetic").Decls[0]; d.Defaults[""] != def || d.Type != "string" || d.Kinds != nil {
		t.Errorf("data.synthetic: %+v, want the shared default %s", d, def)
	}
	if d := find("data.intercept").Decls[0]; d.Defaults[""] != "true" || d.Type != "boolean" {
		t.Errorf("data.intercept: %+v", d)
	}
	// A zero default is not printed.
	if d := find("data.subsample").Decls[0]; len(d.Defaults) != 0 || d.Type != "integer" {
		t.Errorf("data.subsample: %+v", d)
	}
	// cv.folds: two declarations, each with its kinds.
	folds := find("cv.folds")
	if len(folds.Decls) != 2 || !slices.Equal(folds.Decls[0].Kinds, []string{"cv-tuning", "histogram-tuning"}) ||
		!slices.Equal(folds.Decls[1].Kinds, []string{"learner-comparison"}) {
		t.Errorf("cv.folds: %d declarations, kinds %v", len(folds.Decls), folds.Decls[0].Kinds)
	}
	// The group of fields under one comment (Eps1, Eps2, Eps3), and
	// fields with their own line comments (Replicates, Draws).
	if d := find("confidence_intervals.eps3").Decls[0]; d.GroupOf != "eps1" || !strings.HasPrefix(d.Doc, "Eps1, Eps2, Eps3") {
		t.Errorf("confidence_intervals.eps3: group %q, doc %q", d.GroupOf, d.Doc)
	}
	if d := find("mechanisms.draws").Decls[0]; d.GroupOf != "" || strings.TrimSpace(d.Doc) != ">= 1" {
		t.Errorf("mechanisms.draws: group %q, doc %q", d.GroupOf, d.Doc)
	}
	// Keys documented by the annotated example of their type.
	if d := find("methods.serves").Decls[0]; !d.FromExample || !strings.Contains(d.Doc, `"learner", "ci" or "hypothesis"`) {
		t.Errorf("methods.serves: %+v", d)
	}
	if d := find("data.bounds.NAME.KEY").Decls[0]; d.Type != "array of float" {
		t.Errorf("data.bounds.NAME.KEY: type %q", d.Type)
	}
	// Every built-in kind has its tables in the reference.
	for _, k := range kinds.Registry().Names() {
		n := 0
		for _, tb := range ref.KindTables {
			if slices.Contains(tb.Kinds, k) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("kind %s: no tables in the reference", k)
		}
	}
}

func TestExampleComment(t *testing.T) {
	doc := "T is a table:\n\n" +
		"\t[t]\n" +
		"\tpath = \"a#b.csv\"   # required; a '#' in a string is no comment\n" +
		"\tlabel = \"x\"        # first line;\n" +
		"\t                   # second line\n" +
		"\tnext = 1           # alone\n" +
		"\t                     # not aligned: not a continuation\n" +
		"\tbare = 2\n" +
		"label = \"y\"  # not in the example block\n"
	tests := []struct{ key, want string }{
		{"path", "required; a '#' in a string is no comment"},
		{"label", "first line; second line"},
		{"next", "alone"},
		{"bare", ""},
		{"none", ""},
	}
	for _, tt := range tests {
		if got := exampleComment(doc, tt.key); got != tt.want {
			t.Errorf("exampleComment(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestMarkdown_Escapes(t *testing.T) {
	tests := []struct{ doc, want string }{
		{">= 1\n", `\>= 1`},
		{"Lo < Hi; a <method> label\n", "Lo \\< Hi; a \\<method> label"},
		{"Text:\n\n\tx = 1 # code\n", "Text:\n\n\tx = 1 # code"},
	}
	for _, tt := range tests {
		if got := markdown(tt.doc); got != tt.want {
			t.Errorf("markdown(%q) = %q, want %q", tt.doc, got, tt.want)
		}
	}
}
