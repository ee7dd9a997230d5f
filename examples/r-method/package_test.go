package rmethod_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackage_Installs installs R/dprepro into a fresh user library with
// R CMD INSTALL (offline, as R/README.md says) and uses it from there:
// library(dprepro) exports read_npy, dprepro_worker, dprepro_seed and
// load_run, and read_npy reads a file Go wrote.
func TestPackage_Installs(t *testing.T) {
	rs := requireR(t)
	r := filepath.Join(filepath.Dir(rs), "R")
	lib := t.TempDir()
	if out, err := exec.Command(r, "CMD", "INSTALL", "--no-test-load", "-l", lib, pkgDir).CombinedOutput(); err != nil {
		t.Fatalf("R CMD INSTALL: %v\n%s", err, out)
	}
	x := filepath.Join(t.TempDir(), "x.npy")
	writeNPY(t, x, docX)
	cmd := exec.Command(rs, "-e", `library(dprepro); cat(sort(getNamespaceExports("dprepro")), dim(read_npy(commandArgs(TRUE)[1])))`, x)
	cmd.Env = append(os.Environ(), "R_LIBS_USER="+lib, "R_LIBS="+lib)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("library(dprepro): %v\n%s", err, stderr.String())
	}
	if got, want := strings.TrimSpace(string(out)), "dprepro_seed dprepro_worker load_run read_npy subsampled_gaussian 4 2"; got != want {
		t.Errorf("the installed package: %q, want %q", got, want)
	}
}
