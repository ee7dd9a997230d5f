package report

import (
	"html/template"
	"strings"
)

// Analyses is a Markdown document of written analyses (docs/analysis.md in
// this repository): its sections are the targets of the claims' analysis
// links (experiments.ClaimSpec.Analysis), by their GitHub anchors.
type Analyses struct {
	// Path is where the document lives relative to the repository's
	// root, as the links name it: "docs/analysis.md".
	Path string
	// Source is the Markdown.
	Source []byte
	// anchors maps the slug of each heading to its gist: the bold
	// sentence its first paragraph starts with, or "".
	anchors map[string]string
}

// ParseAnalyses returns the analyses document src, which lives at path
// (relative to the repository's root).
func ParseAnalyses(path string, src []byte) *Analyses {
	a := &Analyses{Path: path, Source: src, anchors: map[string]string{}}
	fence := false
	lines := strings.Split(string(src), "\n")
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			fence = !fence
		}
		if g := headingRE.FindStringSubmatch(t); g != nil && !fence {
			a.anchors[slug(g[2])] = gist(lines[i+1:])
		}
	}
	return a
}

// gist returns the bold text that the first paragraph of lines starts
// with ("**…**"), or "".
func gist(lines []string) string {
	var para []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" && len(para) == 0 {
			continue
		}
		if t == "" || headingRE.MatchString(t) {
			break
		}
		para = append(para, t)
	}
	p := strings.Join(para, " ")
	if rest, ok := strings.CutPrefix(p, "**"); ok {
		if g, _, ok := strings.Cut(rest, "**"); ok {
			return g
		}
	}
	return ""
}

// Gist returns the gist of the section of anchor: the bold sentence its
// first paragraph starts with ("" when it has none).
func (a *Analyses) Gist(anchor string) string {
	if a == nil {
		return ""
	}
	return a.anchors[anchor]
}

// Resolve returns the anchor of the section that link names, when link is
// "<Path>#<anchor>" and the document has a heading of that anchor.
func (a *Analyses) Resolve(link string) (anchor string, ok bool) {
	if a == nil {
		return "", false
	}
	p, frag, _ := strings.Cut(strings.TrimSpace(link), "#")
	if p != a.Path || frag == "" {
		return "", false
	}
	_, ok = a.anchors[frag]
	return frag, ok
}

// htmlID is the id of the analysis section of anchor in index.html.
func htmlID(anchor string) string { return "analysis-" + anchor }

// html renders the document for index.html: its title dropped (the
// report heads it), its headings one level down with ids "analysis-…",
// its links to its own sections kept in the page, and links elsewhere
// shown as text (they would not resolve beside the report).
func (a *Analyses) html() template.HTML {
	src := string(a.Source)
	if strings.HasPrefix(src, "# ") {
		_, src, _ = strings.Cut(src, "\n")
	}
	m := mdHTML{shift: 1, idPrefix: "analysis-", link: func(target string) (string, bool) {
		if frag, ok := strings.CutPrefix(target, "#"); ok && a.has(frag) {
			return "#" + htmlID(frag), true
		}
		return "", false
	}}
	return m.render(src)
}

func (a *Analyses) has(anchor string) bool {
	_, ok := a.anchors[anchor]
	return ok
}
