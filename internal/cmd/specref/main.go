// Command specref writes docs/spec-reference.md, the reference of every
// key a spec file may hold, generated from the code:
//
//	go run ./internal/cmd/specref -o docs/spec-reference.md
//
// or `go generate ./internal/cmd/specref` (without -o it writes to
// standard output). It walks the shared part of
// a spec (experiments.Spec, decoded over experiments.DefaultSpec, and the
// [[claims]] tables) and the section of every built-in kind
// (kinds.Registry, each decoded over its NewSection) by reflection over
// their toml tags, and reads each field's doc comment from the source
// files with go/parser, so it must run inside the repository. A test of
// this package fails when the committed file differs from what the
// generator writes, and when a key of a built-in spec file is missing from
// it.
//
// It exits 1 when the reference cannot be built (e.g. a package's source
// is not found) or written.
package main

//go:generate go run . -o ../../../docs/spec-reference.md

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dprepro/dprepro/kinds"
)

func main() {
	out := flag.String("o", "", "write the reference to this file (default: standard output)")
	flag.Parse()
	md, err := generate(".")
	if err == nil {
		if *out == "" {
			_, err = os.Stdout.WriteString(md)
		} else {
			err = writeFile(*out, md)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "specref:", err)
		os.Exit(1)
	}
}

// generate returns the reference of the built-in kinds, reading the doc
// comments from the module that holds dir.
func generate(dir string) (string, error) {
	ref, err := build(dir)
	if err != nil {
		return "", err
	}
	return ref.Markdown(), nil
}

// build returns the reference of the built-in kinds.
func build(dir string) (*Reference, error) {
	root, module, err := findModule(dir)
	if err != nil {
		return nil, err
	}
	return Build(kinds.Registry(), newDocIndex(root, module))
}

// writeFile writes s to path through a temporary file in its directory,
// so that a failed write leaves the old file.
func writeFile(path, s string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".specref-*")
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
