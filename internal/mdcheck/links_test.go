package mdcheck

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDocs_LinksResolve: every relative link of the README, the guides in
// docs/ and the front ends' READMEs names a file of the tree and, into
// Markdown, one of its headings — so a moved section cannot leave a dead
// link behind.
func TestDocs_LinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	rel := []string{"README.md", "python/README.md", "R/README.md", "examples/python-method/README.md"}
	for _, f := range files {
		r, _ := filepath.Rel(root, f)
		rel = append(rel, r)
	}
	var present []string
	for _, f := range rel {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			present = append(present, f)
		}
	}
	broken, n, err := BrokenLinks(root, present)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
	if n < 100 {
		t.Errorf("only %d relative links checked in %v", n, present)
	}
}

// TestBrokenLinks: a missing file, a missing anchor and a repeated
// heading's suffix are told apart; links in code blocks and URLs are not
// checked.
func TestBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.md", "# Top\n## Same\n## Same\n### A `code` heading, too\n")
	write("a.md", "[ok](b.md#top) [dup](b.md#same-1) [code](b.md#a-code-heading-too) [url](https://x/y#z)\n"+
		"[gone](c.md) [bad](b.md#nope) [self](#local)\n```\n[in code](nowhere.md)\n```\n# Local\n")
	broken, n, err := BrokenLinks(dir, []string{"a.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.md:2: c.md: no such file", "a.md:2: b.md#nope: no such anchor in b.md"}
	if !slices.Equal(broken, want) || n != 6 {
		t.Errorf("broken %q (%d checked), want %q (6 checked)", broken, n, want)
	}
}
