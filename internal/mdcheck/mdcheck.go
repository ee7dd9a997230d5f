// Package mdcheck finds, for tests, what in a Markdown document would
// reach a reader as something other than text: raw HTML, or a link or
// image to another scheme (javascript:, http:). It reads the document as
// CommonMark with GitHub's tables does where that matters: fenced code
// blocks and code spans are text; everywhere else a '<' or an unescaped
// "](scheme:" is reported. Where the two readings of code spans differ
// (GFM reads each table cell alone, CommonMark a paragraph's lines
// together), it checks both, so that it errs towards a report.
package mdcheck

import (
	"fmt"
	"strings"
)

// Unsafe returns one description per place in md where raw HTML or a link
// to a scheme could reach a reader; none for a document that shows only
// text, its own relative links and images.
func Unsafe(md string) []string {
	var out []string
	var para []string
	var paraStart int
	flush := func() {
		if len(para) > 1 {
			for _, p := range scan(strings.Join(para, "\n")) {
				out = append(out, fmt.Sprintf("paragraph at line %d: %s", paraStart, p))
			}
		}
		para = nil
	}
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	fenceChar, fenceLen := byte(0), 0
	for i, line := range lines {
		trim := strings.TrimLeft(line, " ")
		indent := len(line) - len(trim)
		if fenceLen > 0 {
			if indent <= 3 && run(trim, fenceChar) >= fenceLen && strings.TrimSpace(trim[run(trim, fenceChar):]) == "" {
				fenceLen = 0
			}
			continue
		}
		if indent <= 3 && len(trim) >= 3 && (trim[0] == '`' || trim[0] == '~') {
			if n := run(trim, trim[0]); n >= 3 && !(trim[0] == '`' && strings.Contains(trim[n:], "`")) {
				flush()
				fenceChar, fenceLen = trim[0], n
				continue
			}
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if len(para) == 0 {
			paraStart = i + 1
		}
		para = append(para, line)
		for _, p := range scan(line) {
			out = append(out, fmt.Sprintf("line %d: %s", i+1, p))
		}
	}
	flush()
	return out
}

// run is the number of c at the start of s.
func run(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// escaped reports whether s[i] is preceded by an odd number of
// backslashes.
func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// scan reports raw HTML and scheme links in inline text s, code spans
// skipped (a run of n backticks up to the next run of exactly n; an
// unmatched run is text).
func scan(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '`' && !escaped(s, i):
			n := run(s[i:], '`')
			if end := closing(s, i+n, n); end >= 0 {
				i = end + n - 1
				continue
			}
			i += n - 1
		case s[i] == '<' && !escaped(s, i):
			out = append(out, fmt.Sprintf("raw %q", excerpt(s, i)))
		case s[i] == ']' && !escaped(s, i) && strings.HasPrefix(s[i:], "]("):
			target := s[i+2:]
			if j := strings.IndexAny(target, ") "); j >= 0 {
				target = target[:j]
			}
			if strings.Contains(target, ":") {
				out = append(out, fmt.Sprintf("link to %q", target))
			}
		}
	}
	return out
}

// closing is the index of the first run of exactly n backticks in s at or
// after from, or -1.
func closing(s string, from, n int) int {
	for i := from; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := run(s[i:], '`')
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func excerpt(s string, i int) string {
	end := min(len(s), i+30)
	return s[i:end]
}
