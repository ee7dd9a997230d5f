package lint

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/dprepro/dprepro"

// goPackage is what `go list -json` says of a package that the layer
// rules read: its path and the imports of its non-test files.
type goPackage struct {
	ImportPath string
	Imports    []string
}

// listPackages returns every package of the module (its non-test
// imports), by `go list -json ./...` at the module root.
func listPackages(t *testing.T) []goPackage {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the packages")
	}
	cmd := exec.Command(gobin, "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -json ./...: %v", err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// rel returns p relative to the module ("kinds/cvtune"), or "" for a
// package outside it.
func rel(p string) string {
	if p == module {
		return "."
	}
	r, ok := strings.CutPrefix(p, module+"/")
	if !ok {
		return ""
	}
	return r
}

// concreteKind returns the kind package p is part of ("kinds/cvtune"),
// or "" when p is not one (the aggregator "kinds" is not a concrete kind).
func concreteKind(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) >= 2 && parts[0] == "kinds" {
		return "kinds/" + parts[1]
	}
	return ""
}

// TestLayers: the import rules of the house style (STYLE.md, Layout):
// imports flow cmd → cli → kinds → methods → runner → {experiments,
// datasets, core, results, plots}. A kind imports no other kind (they
// share code through methods/ and runner); methods import no kind; no
// package below kinds imports kinds or methods; nothing above kinds names
// a concrete kind (cli reaches the built-in kinds only through the
// package kinds, which lists them, and draws, audits and lists through
// runner's hooks and the method registries); methods/ is a directory of
// packages with no Go files of its own.
func TestLayers(t *testing.T) {
	below := []string{"runner", "experiments", "datasets", "core", "results", "plots", "claims", "comparison", "report"}
	for _, p := range listPackages(t) {
		from := rel(p.ImportPath)
		if from == "" || strings.HasPrefix(from, "internal/") || strings.HasPrefix(from, "examples/") {
			continue
		}
		top := strings.Split(from, "/")[0]
		for _, imp := range p.Imports {
			to := rel(imp)
			if to == "" {
				continue
			}
			toTop := strings.Split(to, "/")[0]
			switch {
			case concreteKind(from) != "" && concreteKind(to) != "" && concreteKind(from) != concreteKind(to):
				t.Errorf("%s imports %s: a kind imports no other kind (share code through methods/ or runner)", from, to)
			case concreteKind(from) != "" && to == "kinds":
				t.Errorf("%s imports the kinds list", from)
			case top == "methods" && (toTop == "kinds" || toTop == "cli"):
				t.Errorf("%s imports %s: methods import no kind", from, to)
			case contains(below, top) && (toTop == "kinds" || toTop == "methods" || toTop == "cli"):
				t.Errorf("%s imports %s: %s is below the kinds and the methods", from, to, top)
			case (top == "cli" || top == "cmd") && concreteKind(to) != "":
				t.Errorf("%s imports the concrete kind %s: above kinds, only the package kinds names them", from, to)
			}
		}
	}
	entries, err := os.ReadDir(filepath.Join("..", "..", "methods"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			t.Errorf("methods/%s: methods/ holds packages only, no Go files of its own", e.Name())
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
