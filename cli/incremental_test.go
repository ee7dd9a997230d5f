package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/results"
)

// incrWorker is an external learner releasing fixed weights; the comment
// line lets a test edit the script without changing what it computes.
const incrWorker = `# version 1
read line; echo '{"type":"hello","protocol":1,"serves":"learner","privacy":"pure"}'
while read line; do
  id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  eps=$(echo "$line" | sed 's/.*"epsilon":\([0-9.e+-]*\).*/\1/')
  echo "{\"type\":\"result\",\"id\":$id,\"output\":{\"weights\":[0.1,0,0,0,0,0,0,0,0,0,0]},\"privacy\":{\"epsilon\":$eps}}"
done
`

// incrSpec is a learner-comparison run on Magic's stand-in: the worker
// beside objective perturbation at two ε, and the reference, on 3 folds:
// 3 × (2 + 2 + 1) = 15 units.
const incrSpec = `schema = 1
id = "incr"
kind = "learner-comparison"
seed = 3

[[methods]]
name = "ext"
serves = "learner"
command = ["sh", "worker.sh"]
timeout = "1m"

[data]
datasets = ["magic"]
synthetic = "always"
subsample = 300

[cv]
repetitions = 1
folds = 3

[comparison]
learners = ["objective-perturbation", "ext"]
epsilons = [0.5, 1.0]
lambda = 0.01

[output]
bootstrap = 100
`

// TestRun_RecomputesOnlyWhatChanged follows a researcher's loop with the
// built binary: run, edit the method's script, add an ε, add a learner,
// change a setting every unit reads. Each rerun recomputes exactly the
// units whose inputs changed — naming what changed — and resumes the
// others, and its rows.csv is byte-identical to a fresh run of the same
// spec in another folder (the resumed units' numbers depend only on the
// seed and their key). A change of a shared setting starts over.
func TestRun_RecomputesOnlyWhatChanged(t *testing.T) {
	bin := sharedBinary(t)
	env := cleanEnv(t)
	src := t.TempDir()
	out := t.TempDir()
	write := func(spec, worker string) {
		t.Helper()
		writeFilesIn(t, src, map[string]string{"incr.toml": spec, "worker.sh": worker})
	}
	done := regexp.MustCompile(`resuming, (\d+) of (\d+) units already done`)
	step := func(what, spec, worker string, resumed, total int, changes ...string) {
		t.Helper()
		write(spec, worker)
		r := runIn(t, src, bin, "run", "incr.toml", "--out", out, "--workers", "2")
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, r.code, r.stderr)
		}
		got := 0
		if m := done.FindStringSubmatch(r.stderr); m != nil {
			got = atoi(t, m[1])
			if atoi(t, m[2]) != total {
				t.Errorf("%s: %s units, want %d", what, m[2], total)
			}
		}
		if got != resumed {
			t.Errorf("%s: %d units resumed, want %d\n%s", what, got, resumed, r.stderr)
		}
		for _, c := range changes {
			if !strings.Contains(r.stderr, c) {
				t.Errorf("%s: stderr lacks %q:\n%s", what, c, r.stderr)
			}
		}
		// The manifest keeps what stderr said: units new, and recomputed
		// per changed input.
		var m results.Manifest
		if err := json.Unmarshal(mustRead(t, filepath.Join(out, "incr", "quick-seed3", "manifest.json")), &m); err != nil {
			t.Fatal(err)
		}
		if m.Units.Resumed != got || m.Units.Computed != total-got {
			t.Errorf("%s: manifest units %+v, want %d resumed of %d", what, m.Units, got, total)
		}
		recomputed := 0
		for name, n := range m.Units.Changed {
			recomputed += n
			if !strings.Contains(r.stderr, fmt.Sprintf("%s (%d units)", name, n)) {
				t.Errorf("%s: the manifest's changed input %q (%d units) is not what stderr said", what, name, n)
			}
		}
		if got > 0 && m.Units.New+recomputed != m.Units.Computed {
			t.Errorf("%s: manifest units %+v: new + recomputed ≠ computed", what, m.Units)
		}
		// The same spec from scratch, in another folder: the same rows.
		fresh := t.TempDir()
		if r := runProc(t, env, bin, "run", filepath.Join(src, "incr.toml"), "--out", fresh, "--workers", "1"); r.code != 0 {
			t.Fatalf("%s: fresh run: exit %d\n%s", what, r.code, r.stderr)
		}
		a := mustRead(t, filepath.Join(out, "incr", "quick-seed3", "rows.csv"))
		b := mustRead(t, filepath.Join(fresh, "incr", "quick-seed3", "rows.csv"))
		if string(a) != string(b) {
			t.Errorf("%s: rows.csv differs from a fresh run's", what)
		}
	}
	step("first run", incrSpec, incrWorker, 0, 15)
	step("the method's script edited", incrSpec, strings.Replace(incrWorker, "# version 1", "# version 2", 1), 9, 15,
		"recomputing the units whose inputs changed since they were computed:", "learner ext changed (6 units)")
	withEps := strings.Replace(incrSpec, "epsilons = [0.5, 1.0]", "epsilons = [0.5, 1.0, 2.0]", 1)
	worker2 := strings.Replace(incrWorker, "# version 1", "# version 2", 1)
	step("an ε added", withEps, worker2, 15, 21, "6 units are new or were not finished")
	withLearner := strings.Replace(withEps, `learners = ["objective-perturbation", "ext"]`, `learners = ["objective-perturbation", "ext", "output-perturbation"]`, 1)
	step("a learner added", withLearner, worker2, 21, 30)
	withLambda := strings.Replace(withLearner, "lambda = 0.01", "lambda = 0.01\n\n[comparison.lambdas]\noutput-perturbation = 0.1", 1)
	step("one learner's λ changed", withLambda, worker2, 21, 30, "learner output-perturbation changed (9 units)")
	shared := strings.Replace(withLambda, "subsample = 300", "subsample = 280", 1)
	step("a setting every unit reads changed", shared, worker2, 0, 30, "spec: a setting every unit reads changed")
	if _, err := os.Stat(filepath.Join(out, "incr", "quick-seed3", "manifest.json")); err != nil {
		t.Error(err)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
