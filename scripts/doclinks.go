//go:build ignore

// doclinks checks the relative links of the documentation: every link in
// README.md, docs/*.md, python/README.md and R/README.md that is not a URL
// must name a file or folder of the tree, and its #anchor, when the target is
// Markdown, one of the target's headings (GitHub's anchors: lower case,
// letters, digits, spaces, '-' and '_' kept, spaces turned to '-', a repeated
// heading suffixed -1, -2, …). Links inside fenced code blocks are skipped.
// It prints each broken link as file:line: target: reason and exits 1 when
// there is one.
//
//	go run scripts/doclinks.go
package main

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

// lines returns the lines of a Markdown file outside fenced code blocks,
// with their numbers (others are empty).
func lines(path string) ([]string, error) {
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

func anchors(path string) (map[string]bool, error) {
	ls, err := lines(path)
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

func main() {
	files, _ := filepath.Glob("docs/*.md")
	files = append([]string{"README.md", "python/README.md", "R/README.md"}, files...)
	bad, n := 0, 0
	for _, f := range files {
		ls, err := lines(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for i, l := range ls {
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				t := m[1]
				if schemeRE.MatchString(t) {
					continue
				}
				n++
				path, anchor, _ := strings.Cut(t, "#")
				target := f
				if path != "" {
					target = filepath.Join(filepath.Dir(f), path)
				}
				if _, err := os.Stat(target); err != nil {
					fmt.Printf("%s:%d: %s: no such file\n", f, i+1, t)
					bad++
					continue
				}
				if anchor == "" || !strings.HasSuffix(target, ".md") {
					continue
				}
				as, err := anchors(target)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				if !as[anchor] {
					fmt.Printf("%s:%d: %s: no such anchor in %s\n", f, i+1, t, target)
					bad++
				}
			}
		}
	}
	fmt.Printf("%d relative links checked, %d broken\n", n, bad)
	if bad > 0 {
		os.Exit(1)
	}
}
