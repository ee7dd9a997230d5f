package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoExtension builds the Go extension example (examples/go-extension:
// its own module, registering the learner noisy-gd and the dataset
// credit-sim before calling cli.Main) as a user would, and runs its spec at
// the quick profile: the learner runs beside the built-in one under the
// same selection methods, and its guarantee reaches the ledger. The stock
// binary refuses the same spec, naming the learner and the line.
func TestGoExtension(t *testing.T) {
	stock := sharedBinary(t)
	dir, err := filepath.Abs(filepath.Join("..", "examples", "go-extension"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "dprepro-ext")
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", dir, err, out)
	}
	spec := filepath.Join(dir, "noisygd.toml")
	// The run is of a copy with a claim on a label of the module's
	// learner ("<method>/<learner>"), which the kind declares.
	orig, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	claimed := filepath.Join(t.TempDir(), "noisygd.toml")
	claim := "\n[[claims]]\nid = \"control-auc\"\nsource = \"a test\"\nstatement = \"noisy-gd tuned by Control has an AUC of at least 0.5\"\n" +
		"rule = \"at_least\"\nvalue = 0.5\nmetric = \"auc\"\nmethod = \"control/noisy-gd\"\ndataset = \"credit-sim\"\n"
	if err := os.WriteFile(claimed, append(orig, claim...), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(bin string, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}

	// The stock command does not know the learner: exit 2, naming it.
	code, _, stderr := run(stock, "run", claimed, "--profile", "quick", "--out", t.TempDir())
	if code != 2 || !strings.Contains(stderr, `noisygd.toml:28: tuning.learners[1]: unknown learner "noisy-gd"`) {
		t.Errorf("stock binary: exit %d\n%s", code, stderr)
	}

	// The extended command lists the dataset and runs the spec.
	code, stdout, stderr := run(bin, "list")
	if code != 0 || !strings.Contains(stdout, "credit-sim") || !strings.Contains(stdout, "noisy-gd") {
		t.Errorf("list: exit %d\n%s\n%s", code, stdout, stderr)
	}
	out := t.TempDir()
	code, stdout, stderr = run(bin, "run", claimed, "--profile", "quick", "--out", out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	verdicts := readClaimRows(t, mustRead(t, filepath.Join(out, "ext-noisygd", "quick-seed2024", "claims.csv")))
	for _, x := range []string{"0.3", "1", "3", "10"} {
		if v := verdicts["control-auc@"+x]; v == "" || strings.HasPrefix(v, "missing") {
			t.Errorf("claim on control/noisy-gd at alpha = %s: %q", x, v)
		}
	}
	// A label the module's learner does not make is refused, with the
	// labels the kind declares.
	if err := os.WriteFile(claimed, append(orig, strings.Replace(claim, "control/noisy-gd", "control/noisygd", 1)...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(bin, "claims", out)
	if code != 2 || !strings.Contains(stderr, `claims[0].method: unknown method "control/noisygd" (the spec runs: alphaSplit/objective-perturbation, alphaSplit/noisy-gd,`) ||
		!strings.Contains(stderr, `did you mean "control/noisy-gd"?`) {
		t.Errorf("claim on an unknown label: exit %d\n%s", code, stderr)
	}
	rows, summary, m := readRun(t, filepath.Join(out, "ext-noisygd", "quick-seed2024"))
	header := strings.SplitN(string(rows), "\n", 2)[0]
	if !strings.Contains(header, ",learner,") {
		t.Errorf("rows.csv has no learner column: %s", header)
	}
	for _, want := range []string{"alphaSplit/noisy-gd", "control/objective-perturbation", "credit-sim"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.csv lacks %q", want)
		}
	}
	// The ledger composes noisy-gd's pure-ε guarantees: alphaSplit at α
	// spends α in total (k fits at α/k on the same data); Control is not
	// private.
	var sawSplit, sawControl bool
	for _, e := range m.Ledger {
		switch {
		case e.Method == "alphaSplit/noisy-gd" && e.Setting == "alpha=1":
			sawSplit = true
			if !e.Total.Private || float64(e.Total.Epsilon) != 1 {
				t.Errorf("alphaSplit/noisy-gd at α = 1: total %+v, want ε = 1, private", e.Total)
			}
		case e.Method == "control/noisy-gd":
			sawControl = true
			if e.Total.Private {
				t.Errorf("control/noisy-gd booked private: %+v", e.Total)
			}
		}
	}
	if !sawSplit || !sawControl {
		t.Errorf("ledger lacks noisy-gd entries: %+v", m.Ledger)
	}
	var found bool
	for _, d := range m.Datasets {
		if d.Name == "credit-sim" {
			found = true
			if d.Source != "synthetic" || d.Generator != "example-credit-sim/v1" {
				t.Errorf("credit-sim provenance: %+v", d)
			}
		}
	}
	if !found {
		t.Errorf("manifest lacks credit-sim: %+v", m.Datasets)
	}

	// Stability needs stability constants, which noisy-gd does not have.
	b, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	src := strings.Replace(string(b), `methods = ["alphaSplit", "dataSplit", "random", "control"]`, `methods = ["stability"]`, 1)
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(bin, "run", bad, "--profile", "quick", "--out", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "noisy-gd") || !strings.Contains(stderr, "stability") {
		t.Errorf("stability with noisy-gd: exit %d\n%s", code, stderr)
	}
}
