package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/internal/pyenv"
)

// runBin runs the binary bin with args and env (added to the process's),
// returning its exit code and output.
func runBin(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	return runBinIn(t, "", bin, env, args...)
}

// runBinIn is runBin in the working directory dir ("" = the test's).
func runBinIn(t *testing.T, dir, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
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

// TestPythonMethod runs the external-method walk-through (docs/methods.md) with the
// real binary: examples/python-method/cv-tuning.toml, whose Python
// output-perturbation learner runs beside objective perturbation through
// the worker protocol. Its guarantee reaches the ledger as declared by the
// method, the worker's stderr the run's workers.log; the scratch
// directory is gone afterwards; a second run resumes every unit.
func TestPythonMethod(t *testing.T) {
	bin := sharedBinary(t)
	path := pyenv.Require(t)
	spec, err := filepath.Abs(filepath.Join("..", "examples", "python-method", "cv-tuning.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// A relative --out, run from another directory than the spec's: the
	// data paths handed to the worker (which runs in the spec's folder)
	// must still resolve.
	cwd := t.TempDir()
	out := filepath.Join(cwd, "runs")
	env := []string{"PATH=" + path}
	args := []string{"run", spec, "--profile", "quick", "--out", "runs", "--workers", "2"}
	if d := os.Getenv("DPREPRO_DATA"); d != "" {
		args = append(args, "--data-dir", d)
	}
	runBin := func(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
		return runBinIn(t, cwd, bin, env, args...)
	}
	code, stdout, stderr := runBin(t, bin, env, args...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	dir := filepath.Join(out, "py-cv-tuning", "quick-seed2013")
	rows, summary, m := readRun(t, dir)
	// stability/py-output-perturbation: the worker states its stability
	// constants through the protocol's "stability" op.
	for _, want := range []string{"alphaSplit/py-output-perturbation", "control/py-output-perturbation", "alphaSplit/objective-perturbation", "stability/py-output-perturbation"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.csv lacks %q", want)
		}
	}
	if n := strings.Count(string(rows), ",py-output-perturbation,"); n == 0 {
		t.Error("rows.csv has no row of the Python learner")
	}
	declared := false
	for _, e := range m.Ledger {
		if e.Method == "dataSplit/py-output-perturbation" && e.Setting == "alpha=1" {
			for _, c := range e.Components {
				if c.Part == "training" && c.DeclaredBy == "py-output-perturbation" && float64(c.Epsilon) == 1 {
					declared = true
				}
			}
		}
	}
	if !declared {
		t.Errorf("the ledger does not book the Python learner's training as declared by the method at ε = 1: %+v", m.Ledger)
	}
	if len(m.ExternalMethods) != 1 || m.ExternalMethods[0].Name != "py-output-perturbation" ||
		!strings.HasPrefix(m.ExternalMethods[0].Version, "output_perturbation.py 1") || len(m.ExternalMethods[0].Files) != 3 {
		t.Errorf("the manifest's external_methods: %+v", m.ExternalMethods)
	}
	logb, err := os.ReadFile(filepath.Join(dir, "workers.log"))
	if err != nil || !strings.Contains(string(logb), "run of py-cv-tuning started") || !strings.Contains(string(logb), "] dprepro.worker: py-output-perturbation serving learner") {
		t.Errorf("workers.log: %v %q", err, logb)
	}
	if _, err := os.Stat(filepath.Join(dir, "scratch")); !os.IsNotExist(err) {
		t.Errorf("the scratch directory outlived the run: %v", err)
	}
	// The scratch files: each fold's training set T (8 of 10 folds) is
	// written once and kept until the fold's last unit; dataSplit's parts
	// of T are their unit's alone and go with it. At most the 10 folds'
	// T and a few units' parts are on disk at once — not the 30 dataSplit
	// units' parts as well (≈ 4× as much).
	if len(m.Datasets) == 1 {
		n, d := float64(m.Datasets[0].N), float64(m.Datasets[0].D)
		folds := 10 * 0.8 * n * (d + 1) * 8
		if p := float64(m.ScratchPeakBytes); p < 0.8*n*(d+1)*8 || p > 2*folds {
			t.Errorf("scratch peak %.0f bytes: want at least one fold's T (%.0f) and at most twice every fold's (%.0f)", p, 0.8*n*(d+1)*8, 2*folds)
		}
	}
	// The same command again: nothing to compute, same files.
	code, _, stderr = runBin(t, bin, env, args...)
	if code != 0 || !strings.Contains(stderr, "300 of 300 units already done") {
		t.Fatalf("rerun: exit %d\n%s", code, stderr)
	}
	rows2, summary2, _ := readRun(t, dir)
	if string(rows2) != string(rows) || string(summary2) != string(summary) {
		t.Error("the resumed run's rows or summary differ")
	}

	// The accuracy-vs-ε comparison with the same learner.
	spec = filepath.Join(filepath.Dir(spec), "compare.toml")
	args[1] = spec
	code, stdout, stderr = runBin(t, bin, env, args...)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s\n%s", code, stdout, stderr)
	}
	_, summary, m = readRun(t, filepath.Join(out, "py-compare", "quick-seed2011"))
	if !strings.Contains(string(summary), "py-output-perturbation,epsilon,0.5,auc,") {
		t.Errorf("compare: summary.csv lacks the Python learner's AUC at ε = 0.5")
	}
	declared = false
	for _, e := range m.Ledger {
		if e.Method == "py-output-perturbation" && e.Setting == "epsilon=0.5" && len(e.Components) == 1 &&
			strings.Contains(e.Components[0].Release, "declared by the method") && float64(e.Total.Epsilon) == 0.5 {
			declared = true
		}
	}
	if !declared {
		t.Errorf("compare: the ledger does not book py-output-perturbation at ε = 0.5 as declared by the method: %+v", m.Ledger)
	}
}

// TestExternalFaults runs the real binary with external learners that
// break in each way the protocol names — a worker that crashes mid-run,
// one that hangs past its timeout, one that writes garbage, one whose
// command does not exist, one that claims a guarantee of the wrong form —
// and checks that each fails its units (exit 1, the method and the fault
// named, the worker's stderr quoted) or the spec (exit 2, file:line), never
// hangs, and leaves no results presented as whole. The workers are shell
// scripts (no Python needed).
func TestExternalFaults(t *testing.T) {
	bin := sharedBinary(t)
	hello := `read line; echo '{"type":"hello","protocol":1,"serves":"learner","privacy":"pure"}'`
	reply := `echo "{\"type\":\"result\",\"id\":$id,\"output\":{\"weights\":[0,0,0,0,0,0,0,0,0,0,0]},\"privacy\":{\"epsilon\":0.1}}"`
	loop := func(onCall string) string {
		return hello + "\nn=0\nwhile read line; do n=$((n+1)); id=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/'); " + onCall + "; done\n"
	}
	tests := []struct {
		name, script, timeout string
		command               string // default: ["sh", "worker.sh"]
		code                  int
		want                  []string
	}{
		{name: "crash", script: loop(`if [ $n -ge 3 ]; then echo "boom: simulated crash" >&2; exit 3; fi; ` + reply),
			code: 1, want: []string{"units failed", "external method ext: the worker exited before replying (exit status 3)", "boom: simulated crash", "the workers' stderr is in "}},
		// The timeout is also the handshake's and the first call's: 3 s
		// leaves a shell's start-up room on a loaded machine.
		{name: "hang", script: loop(`if [ $n -ge 2 ]; then sleep 600; fi; ` + reply), timeout: "3s",
			code: 1, want: []string{"units failed", "no reply within 3s"}},
		{name: "garbage", script: loop(`echo "Traceback (most recent call last):"`),
			code: 1, want: []string{"units failed", "the reply is not a protocol reply", "write logs and debug output to stderr"}},
		{name: "shape", script: loop(`echo "{\"type\":\"result\",\"id\":$id,\"output\":{\"weights\":[1,2]},\"privacy\":{\"epsilon\":0.1}}"`),
			code: 1, want: []string{"the output has 2 weights for d = 11 columns"}},
		{name: "claim", script: loop(`echo "{\"type\":\"result\",\"id\":$id,\"output\":{\"weights\":[0,0,0,0,0,0,0,0,0,0,0]},\"privacy\":{\"rho\":0.1}}"`),
			code: 1, want: []string{`"rho" does not belong to the "pure" form`}},
		{name: "nocommand", command: `["./no-such-method"]`,
			code: 2, want: []string{"ext.toml:", "methods[0].command", `cannot start "./no-such-method"`}},
		{name: "nohello", script: `read line; echo "ModuleNotFoundError: No module named 'numpy'" >&2; exit 1`,
			code: 2, want: []string{"methods[0].command", "exited before replying (exit status 1)", "No module named 'numpy'"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tc.script != "" {
				if err := os.WriteFile(filepath.Join(dir, "worker.sh"), []byte(tc.script), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			command := tc.command
			if command == "" {
				command = `["sh", "worker.sh"]`
			}
			timeout := tc.timeout
			if timeout == "" {
				timeout = "20s"
			}
			spec := filepath.Join(dir, "ext.toml")
			src := `schema = 1
id = "ext"
kind = "cv-tuning"
seed = 1

[[methods]]
name = "ext"
serves = "learner"
command = ` + command + `
timeout = "` + timeout + `"

[data]
datasets = ["magic"]
synthetic = "always"
subsample = 600

[cv]
repetitions = 1
folds = 4

[tuning]
lambdas = [0.01, 0.1]
alphas = [1.0]
delta = 0.01
methods = ["alphaSplit"]
learners = ["objective-perturbation", "ext"]

[output]
bootstrap = 100
`
			if err := os.WriteFile(spec, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			code, stdout, stderr := runBin(t, bin, nil, "run", spec, "--out", out, "--workers", "2")
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(out, "ext", "paper-seed1", "manifest.json")); err == nil {
				t.Error("a failed run wrote a manifest")
			}
		})
	}
}
