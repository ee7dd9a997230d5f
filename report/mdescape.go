package report

import (
	"strings"
)

// Text from specs, manifests, claims and errors reaches report.md escaped,
// as html/template escapes it in index.html: whatever it holds is shown as
// written, and none of it becomes HTML, a link, an image, a heading or a
// table cell of its own in a Markdown viewer (GitHub's or one that passes
// HTML through). Inline text goes through [MarkdownText], code through
// mdCode, multi-line text through mdBlock (a fenced block no line of the
// text can close), and the Markdown tables a run writes through mdNoHTML.

// mdSpecial are the characters MarkdownText escapes with a backslash:
// those that open inline code, emphasis, strikethrough, links and images,
// and the backslash itself (so that no escape of ours is undone).
const mdSpecial = "\\`*_[]~"

// MarkdownText escapes s for inline Markdown (a paragraph, a heading, a
// list item or a table cell), so that it shows as written: '<', '>' and
// an '&' that could start an entity as HTML entities (no raw HTML, no
// autolink, no entity), the characters of
// inline markup with a backslash, '|' as `\|` (no cell of its own in a
// table), line breaks as spaces (no block of its own), and a leading
// '#', '+', '-', '=' or "1." with a backslash (no heading or list).
func MarkdownText(s string) string {
	s = oneLineMD(s)
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '&' && i+1 < len(s) && (isAlnum(s[i+1]) || s[i+1] == '#'):
			// It could start an entity ("&lt;"): shown as written. A
			// lone '&' ("Doe & Roe") is literal as it is.
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '|':
			b.WriteString(`\|`)
		case strings.ContainsRune(mdSpecial, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case i == 0 && strings.ContainsRune("#+-=", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	// "1. " or "1) " at the start would open an ordered list.
	if n := leadingDigits(out); n > 0 && n < len(out) && (out[n] == '.' || out[n] == ')') {
		out = out[:n] + `\` + out[n:]
	}
	return out
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// oneLineMD joins the lines of s with spaces.
func oneLineMD(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

func leadingDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// mdCode is s as an inline code span, shown as written: delimited by more
// backticks than any run of them in s (so none of s closes it), padded
// with a space where s starts or ends with a backtick, on one line. An
// empty s is "". In a table cell use cellCode.
func mdCode(s string) string {
	s = oneLineMD(s)
	if s == "" {
		return ""
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// cellCode is mdCode for a table cell: '|' as `\|`, which GFM unescapes
// in a cell before it reads the code span (outside a table the backslash
// would show).
func cellCode(s string) string {
	return strings.ReplaceAll(mdCode(s), "|", `\|`)
}

// mdBlock is s as a fenced code block with the info string info: its
// fence is longer than any run of backticks in s, so that no line of s
// closes it; it ends with a newline.
func mdBlock(info, s string) string {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + info + "\n" + strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n") + "\n" + fence + "\n"
}

// mdNoHTML returns Markdown s (a table a run wrote) with every '<' outside
// code spans and fenced blocks written as "&lt;", so that it holds no raw
// HTML; its Markdown is otherwise kept.
func mdNoHTML(s string) string {
	var b strings.Builder
	fence := "" // the fence of the open fenced block
	for _, line := range strings.SplitAfter(s, "\n") {
		trim := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trim, fence) && strings.Trim(strings.TrimSpace(trim), "`") == "" {
				fence = ""
			}
			b.WriteString(line)
			continue
		case strings.HasPrefix(trim, "```"):
			fence = strings.Repeat("`", longestRun(trim[:len(trim)-len(strings.TrimLeft(trim, "`"))], '`'))
			b.WriteString(line)
			continue
		}
		b.WriteString(escapeOutsideCode(line))
	}
	return b.String()
}

// escapeOutsideCode writes '<' as "&lt;" in line except inside code spans
// (a run of n backticks up to the next run of exactly n; a run with no
// match is literal text, CommonMark 6.1).
func escapeOutsideCode(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] == '`' {
			n := runAt(line, i)
			if end := closingRun(line, i+n, n); end >= 0 {
				b.WriteString(line[i : end+n])
				i = end + n
				continue
			}
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		if line[i] == '<' {
			b.WriteString("&lt;")
		} else {
			b.WriteByte(line[i])
		}
		i++
	}
	return b.String()
}

// runAt is the length of the run of backticks at s[i].
func runAt(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// closingRun is the index of the first run of exactly n backticks in s at
// or after from, or -1.
func closingRun(s string, from, n int) int {
	for i := from; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := runAt(s, i)
		if m == n {
			return i
		}
		i += m
	}
	return -1
}
