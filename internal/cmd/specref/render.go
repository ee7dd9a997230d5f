package main

import (
	"fmt"
	"go/doc/comment"
	"slices"
	"strings"
)

// Command is the command that regenerates the reference, from the
// repository's root.
const Command = "go run ./internal/cmd/specref -o docs/spec-reference.md"

// markdown renders a Go doc comment as Markdown. Doc links are left as
// text: the reference is read beside the code, not on pkg.go.dev.
func markdown(text string) string {
	p := comment.Parser{
		LookupPackage: func(string) (string, bool) { return "", false },
		LookupSym:     func(string, string) bool { return false },
	}
	pr := comment.Printer{HeadingLevel: 5, HeadingID: func(*comment.Heading) string { return "" }}
	out := strings.Split(strings.TrimSpace(string(pr.Markdown(p.Parse(text)))), "\n")
	for i, l := range out {
		// The printer leaves a paragraph line that starts with '>' or
		// '#' as it is, which Markdown reads as a quote or a heading
		// (a line comment ">= 1"); code lines start with a tab, and the
		// printer's own headings with "##### " (HeadingLevel).
		if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, ">") || (strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "##### ")) {
			out[i] = l[:len(l)-len(t)] + "\\" + t
		}
	}
	return strings.Join(out, "\n")
}

// anchors computes GitHub's heading anchors, numbered when repeated.
type anchors map[string]int

func (a anchors) of(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		}
	}
	id := b.String()
	n := a[id]
	a[id] = n + 1
	if n > 0 {
		id = fmt.Sprintf("%s-%d", id, n)
	}
	return id
}

// tableHeading is the heading of a table's section.
func tableHeading(t *Table) string {
	if len(t.Path) == 0 {
		return "Top level"
	}
	return "`" + t.header() + "`"
}

// Markdown writes the reference.
func (r *Reference) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	// The anchors, in the order of the headings below.
	ids := anchors{}
	ids.of("Spec key reference")
	ids.of("Shared part")
	shared := map[*Table]string{}
	for _, t := range r.Shared {
		shared[t] = ids.of(tableHeading(t))
		for _, k := range t.Keys {
			ids.of("`" + display(k.Path) + "`")
		}
	}
	profileID := ids.of("`[profile.NAME]`")
	ids.of("Kinds")
	kindID := map[*Table]string{}
	for _, t := range r.KindTables {
		kindID[t] = ids.of(tableHeading(t))
		for _, k := range t.Keys {
			ids.of("`" + display(k.Path) + "`")
		}
	}

	w("# Spec key reference\n\n")
	w("Generated from the code by `%s`; do not edit: a test fails when this file is stale.\n\n", Command)
	w("Every key a spec file may hold: the shared part (package `experiments`: `experiments.Spec` and the `[[claims]]` tables) and the section of each built-in kind (`kinds.Builtin`), walked by reflection over their `toml` tags. ")
	w("Each key has its TOML type, the kinds that read it, its Go field, and the field's doc comment (or, where the field has none, the key's comment in the annotated example of its type's doc comment). ")
	w("A default is the value the code decodes a file over (`experiments.DefaultSpec` for the shared part, the kind's `NewSection` for its tables); a key without one starts from its zero value (0, \"\", false, an empty array), whose meaning the key's text states. ")
	w("`NAME` and `KEY` stand for names the spec chooses.\n\n")

	w("Contents:\n\n")
	w("- [Shared part](#shared-part), read by every kind:")
	for i, t := range r.Shared {
		sep := ","
		if i == 0 {
			sep = ""
		}
		w("%s [%s](#%s)", sep, linkText(t), shared[t])
	}
	w(", [`[profile.NAME]`](#%s)\n", profileID)
	w("- [Kinds](#kinds):\n")
	for _, k := range r.Kinds {
		var links []string
		for _, t := range r.KindTables {
			if slices.Contains(t.Kinds, k) {
				links = append(links, fmt.Sprintf("[%s](#%s)", linkText(t), kindID[t]))
			}
		}
		w("  - `%s`: %s\n", k, strings.Join(links, ", "))
	}
	w("\n## Shared part\n\n")
	w("Every kind decodes these keys (`experiments.Spec`).\n\n")
	for _, t := range r.Shared {
		r.writeTable(&b, t)
	}
	w("### `[profile.NAME]`\n\n")
	w("Read by every kind. A profile's keys are `profile.NAME.` followed by any key of this reference that the spec's kind reads. From the doc of package `experiments`:\n\n")
	w("%s\n\n", markdown(r.Profiles))
	w("## Kinds\n\n")
	w("The tables of the kinds' sections (`experiments.Section`), in the order of the kinds (%s).\n\n", codeList(r.Kinds))
	for _, t := range r.KindTables {
		r.writeTable(&b, t)
	}
	return b.String()
}

// linkText is a table's name in the contents.
func linkText(t *Table) string {
	if len(t.Path) == 0 {
		return "top level"
	}
	return "`" + t.header() + "`"
}

// codeList writes names as a list of code spans.
func codeList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return strings.Join(out, ", ")
}

// writeTable writes the section of one table.
func (r *Reference) writeTable(b *strings.Builder, t *Table) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("### %s\n\n", tableHeading(t))
	switch {
	case t.Kinds != nil:
		w("Read by: %s.\n\n", codeList(t.Kinds))
	case len(t.Path) > 0 && t.Path[0] == "methods":
		var servers []string
		for _, k := range r.Kinds {
			if s, ok := r.Servers[k]; ok {
				servers = append(servers, fmt.Sprintf("`%s` (%s)", k, strings.Join(s, ", ")))
			}
		}
		w("Read by the kinds whose section runs external methods (`experiments.Server`), with what they serve: %s. Another kind refuses a `[[methods]]` table.\n\n", strings.Join(servers, ", "))
	}
	for _, in := range t.Intros {
		if len(t.Kinds) > 1 && in.Kinds != nil && len(in.Kinds) < len(t.Kinds) {
			w("For %s (`%s`):\n\n", codeList(in.Kinds), in.Decl)
		} else {
			w("From `%s`:\n\n", in.Decl)
		}
		w("%s\n\n", markdown(in.Text))
	}
	for _, k := range t.Keys {
		w("#### `%s`\n\n", display(k.Path))
		for _, d := range k.Decls {
			var facts []string
			if t.Kinds != nil {
				facts = append(facts, "read by "+codeList(d.Kinds))
			}
			facts = append(facts, d.Type)
			if def := defaults(d); def != "" {
				facts = append(facts, def)
			}
			facts = append(facts, "`"+d.GoName+"`")
			w("%s.\n\n", upperFirst(strings.Join(facts, " · ")))
			switch {
			case d.GroupOf != "":
				w("Documented with `%s`:\n\n", d.GroupOf)
			case d.FromExample:
				w("From the example in the doc of the type:\n\n")
			}
			if strings.TrimSpace(d.Doc) == "" {
				w("Not documented in the code.\n\n")
			} else {
				w("%s\n\n", markdown(d.Doc))
			}
		}
	}
}

// defaults describes d's defaults: "default `x`", or one per kind where
// they differ.
func defaults(d *Decl) string {
	if len(d.Defaults) == 0 {
		return ""
	}
	if len(d.Kinds) == 0 {
		return "default `" + d.Defaults[""] + "`"
	}
	same := true
	for _, k := range d.Kinds {
		if d.Defaults[k] != d.Defaults[d.Kinds[0]] {
			same = false
		}
	}
	if same {
		return "default `" + d.Defaults[d.Kinds[0]] + "`"
	}
	var parts []string
	for _, k := range d.Kinds {
		v, ok := d.Defaults[k]
		if !ok {
			parts = append(parts, "none for `"+k+"`")
		} else {
			parts = append(parts, "`"+v+"` for `"+k+"`")
		}
	}
	return "default " + strings.Join(parts, ", ")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
