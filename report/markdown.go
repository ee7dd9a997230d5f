package report

import (
	"html"
	"html/template"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// mdHTML renders the small part of Markdown that the project's written
// analyses (docs/analysis.md) and a run's tables (tables/*.md) use:
// headings, paragraphs, "-" lists, pipe tables, fenced code, and inline
// `code`, **bold** and [links](target). Anything else is shown as text,
// escaped: the output is safe HTML whatever the input.
type mdHTML struct {
	// shift is added to a heading's level (# is h1+shift, capped at h6).
	shift int
	// idPrefix starts the id of every heading (the rest is its slug).
	idPrefix string
	// link maps a link's target to the href to use, or reports false to
	// show the link's text alone (a target that would not resolve).
	link func(target string) (string, bool)
}

var (
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	listRE    = regexp.MustCompile(`^\s*[-*]\s+(.*)$`)
	tableSep  = regexp.MustCompile(`^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$`)
	inlineRE  = regexp.MustCompile("`[^`]+`|\\*\\*[^*]+\\*\\*|\\[[^\\]]+\\]\\([^)\\s]+\\)")
)

// render returns src as HTML.
func (m mdHTML) render(src string) template.HTML {
	var b strings.Builder
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var para []string
	flush := func() {
		if len(para) > 0 {
			b.WriteString("<p>" + m.inline(strings.Join(para, " ")) + "</p>\n")
			para = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trim := strings.TrimSpace(line)
		switch {
		case trim == "":
			flush()
		case strings.HasPrefix(trim, "```"):
			flush()
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				code = append(code, lines[i])
			}
			b.WriteString("<pre>" + html.EscapeString(strings.Join(code, "\n")) + "</pre>\n")
		case headingRE.MatchString(trim):
			flush()
			g := headingRE.FindStringSubmatch(trim)
			level := min(len(g[1])+m.shift, 6)
			b.WriteString("<h" + strconv.Itoa(level) + ` id="` + html.EscapeString(m.idPrefix+slug(g[2])) + `">` + m.inline(g[2]) + "</h" + strconv.Itoa(level) + ">\n")
		case strings.HasPrefix(trim, "|") && i+1 < len(lines) && tableSep.MatchString(lines[i+1]):
			flush()
			head := cells(trim)
			b.WriteString(`<div class="wrap"><table class="md"><thead><tr>`)
			for _, c := range head {
				b.WriteString("<th>" + m.inline(c) + "</th>")
			}
			b.WriteString("</tr></thead><tbody>\n")
			for i += 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				b.WriteString("<tr>")
				for _, c := range cells(strings.TrimSpace(lines[i])) {
					b.WriteString("<td>" + m.inline(c) + "</td>")
				}
				b.WriteString("</tr>\n")
			}
			i--
			b.WriteString("</tbody></table></div>\n")
		case listRE.MatchString(line):
			flush()
			b.WriteString("<ul>\n")
			for i < len(lines) && listRE.MatchString(lines[i]) {
				item := []string{listRE.FindStringSubmatch(lines[i])[1]}
				// Continuation lines: indented, not a new item.
				for i+1 < len(lines) && strings.HasPrefix(lines[i+1], " ") && strings.TrimSpace(lines[i+1]) != "" && !listRE.MatchString(lines[i+1]) {
					i++
					item = append(item, strings.TrimSpace(lines[i]))
				}
				b.WriteString("<li>" + m.inline(strings.Join(item, " ")) + "</li>\n")
				i++
			}
			i--
			b.WriteString("</ul>\n")
		default:
			para = append(para, trim)
		}
	}
	flush()
	return template.HTML(b.String())
}

// inline renders the inline markup of one block of text.
func (m mdHTML) inline(s string) string {
	var b strings.Builder
	last := 0
	for _, loc := range inlineRE.FindAllStringIndex(s, -1) {
		b.WriteString(html.EscapeString(s[last:loc[0]]))
		tok := s[loc[0]:loc[1]]
		switch {
		case strings.HasPrefix(tok, "`"):
			b.WriteString("<code>" + html.EscapeString(strings.Trim(tok, "`")) + "</code>")
		case strings.HasPrefix(tok, "**"):
			b.WriteString("<strong>" + m.inline(strings.Trim(tok, "*")) + "</strong>")
		default:
			text, target, _ := strings.Cut(tok[1:len(tok)-1], "](")
			if href, ok := m.link(target); ok {
				b.WriteString(`<a href="` + html.EscapeString(href) + `">` + m.inline(text) + "</a>")
			} else {
				b.WriteString(m.inline(text))
			}
		}
		last = loc[1]
	}
	b.WriteString(html.EscapeString(s[last:]))
	return b.String()
}

// cells splits a pipe-table row into its cells (a "\|" stays in its cell).
func cells(row string) []string {
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	row = strings.ReplaceAll(row, `\|`, "\x00")
	parts := strings.Split(row, "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(strings.ReplaceAll(p, "\x00", "|"))
	}
	return parts
}

// slug is the anchor GitHub gives a heading: lower case, letters, digits,
// '-' and '_' kept, each space a '-', everything else dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
