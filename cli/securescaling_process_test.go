package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/experiments"
)

// scalingSpec is a small cv-tuning spec on magic's labelled stand-in
// (synthetic = "always": no data needed), with DATA replaced by the data
// settings under test.
const scalingSpec = `schema = 1
id = "scaling"
kind = "cv-tuning"
seed = 3

[data]
datasets = ["magic"]
synthetic = "always"
subsample = 300
DATA

[cv]
repetitions = 1
folds = 3

[tuning]
lambdas = [0.1]
alphas = [1.0]
methods = ["control"]

[output]
bootstrap = 200
`

// TestProcess_SecureNoiseRefusesDataDependentScaling runs the real
// binary: --secure-noise on a spec with the papers' data-dependent
// scaling (a built-in one, or output.secure_noise in a file) exits 2
// before any work with an error at the spec's key; accepted explicitly,
// or under public bounds, the run goes ahead and its manifest says what
// ε covers.
func TestProcess_SecureNoiseRefusesDataDependentScaling(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	run := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}
	dir := t.TempDir()
	write := func(name, data string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.Replace(scalingSpec, "DATA", data, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	refusal := "data.scaling: secure noise refuses data-dependent scaling: the column and row scale factors and the one-hot levels are computed from the private records, so ε holds for the scaled rows, not for the raw records"

	// A built-in spec: refused at its [data] table (data.scaling is not
	// written: the papers' default), nothing written.
	out := t.TempDir()
	code, _, stderr := run("run", "cv13-magic", "--profile", "quick", "--secure-noise", "--out", out)
	if code != 2 || !strings.Contains(stderr, "dprepro: cv13-magic.toml:34: "+refusal) {
		t.Errorf("cv13-magic --secure-noise: exit %d, stderr:\n%s", code, stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("the refused run wrote %d entries into --out", len(entries))
	}
	// secure_noise in the file: a validation error at that key.
	plain := write("plain.toml", "")
	file := write("file.toml", "")
	if err := os.WriteFile(file, []byte(strings.Replace(strings.Replace(scalingSpec, "DATA", "", 1), "bootstrap = 200", "bootstrap = 200\nsecure_noise = true", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run("run", file, "--out", out)
	if code != 2 || !strings.Contains(stderr, "file.toml:") || !strings.Contains(stderr, "output.secure_noise: secure noise refuses data-dependent scaling") {
		t.Errorf("secure_noise = true in the file: exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = run("run", plain, "--secure-noise", "--out", out)
	if code != 2 || !strings.Contains(stderr, "plain.toml:6: "+refusal) {
		t.Errorf("plain --secure-noise: exit %d, stderr:\n%s", code, stderr)
	}

	// Accepted, or public bounds: the run goes ahead.
	for _, c := range []struct {
		name, data, statement string
	}{
		{"accepted", "accept_data_dependent_scaling = true", experiments.StatementDataDependent},
		{"public", `scaling = "public"`, experiments.StatementPublic},
	} {
		spec := write(c.name+".toml", c.data)
		out := t.TempDir()
		code, stdout, stderr := run("run", spec, "--secure-noise", "--out", out)
		if code != 0 {
			t.Errorf("%s --secure-noise: exit %d\n%s\n%s", c.name, code, stdout, stderr)
			continue
		}
		runs, _ := filepath.Glob(filepath.Join(out, "scaling", "*"))
		if len(runs) != 1 {
			t.Fatalf("%s: run folders %v", c.name, runs)
		}
		_, _, m := readRun(t, runs[0])
		if !m.SecureNoise || len(m.Datasets) != 1 || m.Datasets[0].Scaling != c.statement {
			t.Errorf("%s: manifest secure %v, datasets %+v: want the statement %q", c.name, m.SecureNoise, m.Datasets, c.statement)
		}
		if pub := m.Datasets[0].Public; (c.name == "public") != (pub != nil) || (pub != nil && (len(pub.Ranges) != 10 || pub.Records == 0)) {
			t.Errorf("%s: public bounds in the manifest %+v", c.name, pub)
		}
	}
}
