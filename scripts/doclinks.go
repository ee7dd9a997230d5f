//go:build ignore

// doclinks checks the relative links of the documentation (README.md,
// docs/*.md, python/README.md, R/README.md), as the test
// internal/mdcheck TestDocs_LinksResolve does: it prints each broken link
// as file:line: target: reason and exits 1 when there is one.
//
//	go run scripts/doclinks.go
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dprepro/dprepro/internal/mdcheck"
)

func main() {
	files, _ := filepath.Glob("docs/*.md")
	files = append([]string{"README.md", "python/README.md", "R/README.md"}, files...)
	broken, n, err := mdcheck.BrokenLinks(".", files)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, b := range broken {
		fmt.Println(b)
	}
	fmt.Printf("%d relative links checked, %d broken\n", n, len(broken))
	if len(broken) > 0 {
		os.Exit(1)
	}
}
