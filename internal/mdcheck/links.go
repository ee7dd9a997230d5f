package mdcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^#{1,6} (.*)$`)
	schemeRE  = regexp.MustCompile(`^[a-z]+:`)
)

// BrokenLinks checks the relative links of the Markdown files (paths
// relative to root): every link that is not a URL must name a file or
// folder of the tree, and its #anchor, when the target is Markdown, one of
// the target's headings (GitHub's anchors: lower case; letters, digits,
// '-' and '_' kept; spaces turned to '-'; a repeated heading suffixed -1,
// -2, …). Links inside fenced code blocks are skipped. It returns one
// "file:line: target: reason" per broken link and the number of links
// checked; an unreadable file is an error.
func BrokenLinks(root string, files []string) (broken []string, checked int, err error) {
	cache := map[string]map[string]bool{}
	for _, f := range files {
		ls, err := mdLines(filepath.Join(root, f))
		if err != nil {
			return nil, 0, err
		}
		for i, l := range ls {
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				t := m[1]
				if schemeRE.MatchString(t) {
					continue
				}
				checked++
				path, anchor, _ := strings.Cut(t, "#")
				target := f
				if path != "" {
					target = filepath.Join(filepath.Dir(f), path)
				}
				if _, err := os.Stat(filepath.Join(root, target)); err != nil {
					broken = append(broken, fmt.Sprintf("%s:%d: %s: no such file", f, i+1, t))
					continue
				}
				if anchor == "" || !strings.HasSuffix(target, ".md") {
					continue
				}
				as, ok := cache[target]
				if !ok {
					if as, err = mdAnchors(filepath.Join(root, target)); err != nil {
						return nil, 0, err
					}
					cache[target] = as
				}
				if !as[anchor] {
					broken = append(broken, fmt.Sprintf("%s:%d: %s: no such anchor in %s", f, i+1, t, target))
				}
			}
		}
	}
	return broken, checked, nil
}

// mdLines returns the lines of a Markdown file, those inside fenced code
// blocks (and the fences) emptied, so that line numbers are kept.
func mdLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ls := strings.Split(string(b), "\n")
	fence := false
	for i, l := range ls {
		if strings.HasPrefix(l, "```") {
			fence = !fence
			ls[i] = ""
		} else if fence {
			ls[i] = ""
		}
	}
	return ls, nil
}

// slug is GitHub's anchor of a heading's text.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// mdAnchors returns the anchors of a Markdown file's headings.
func mdAnchors(path string) (map[string]bool, error) {
	ls, err := mdLines(path)
	if err != nil {
		return nil, err
	}
	seen, out := map[string]int{}, map[string]bool{}
	for _, l := range ls {
		if m := headingRE.FindStringSubmatch(l); m != nil {
			s := slug(m[1])
			if n := seen[s]; n > 0 {
				out[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				out[s] = true
			}
			seen[s]++
		}
	}
	return out, nil
}
