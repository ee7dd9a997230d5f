package cli

// Errors found after a spec loads (when its kind builds the experiment, or
// when a run fails) name the spec once: by the file, line and key at fault
// where one is known, else by the spec id; never "ID: ID: …".

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/learners"
)

// posSpec is a cv-tuning spec reading the data file mydata.csv beside it.
const posSpec = `schema = 1
id = "pos"
kind = "cv-tuning"
seed = 1

[data]
datasets = ["mydata"]

[data.files.mydata]
path = "mydata.csv"
label = "y"
positive = "1"

[cv]
repetitions = 1
folds = 3

[tuning]
lambdas = [0.1, 1.0]
alphas = [1.0]
methods = ["random"]
`

// specLine returns the 1-based line of src that starts with prefix.
func specLine(t *testing.T, src, prefix string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	t.Fatalf("no line %q", prefix)
	return 0
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestRun_SpecErrorPositions runs the binary on specs that load but whose
// experiment cannot be built, and checks the whole error line and exit 2.
func TestRun_SpecErrorPositions(t *testing.T) {
	bin := sharedBinary(t)
	twitter := strings.Replace(posSpec, `datasets = ["mydata"]`, "datasets = [\"twitter\"]\nsynthetic = \"always\"", 1)
	learner := posSpec + "learners = [\"objective-perturbaton\"]\n"
	tests := []struct {
		name string
		spec string
		csv  string // mydata.csv; "" for none
		want func(t *testing.T, dir string) string
	}{
		{"missing data file", posSpec, "", func(t *testing.T, dir string) string {
			return fmt.Sprintf(`dprepro: s.toml:%d: data.files.mydata.path: data file not found: %s (path = "mydata.csv"); a data file has no synthetic stand-in`,
				specLine(t, posSpec, "path ="), filepath.Join(dir, "mydata.csv"))
		}},
		{"malformed data file", posSpec, "a,b,z\n1,2,3\n", func(t *testing.T, dir string) string {
			return fmt.Sprintf(`dprepro: s.toml:%d: data.files.mydata: datasets: load mydata: %s:1: label: no column "y" in the header (columns: a, b, z)`,
				specLine(t, posSpec, "[data.files.mydata]"), filepath.Join(dir, "mydata.csv"))
		}},
		{"dataset of the wrong task", twitter, "", func(t *testing.T, _ string) string {
			return fmt.Sprintf(`dprepro: s.toml:%d: data.datasets[0]: dataset twitter: a regression dataset; cv-tuning needs classification`, specLine(t, twitter, "datasets ="))
		}},
		{"unknown learner", learner, "", func(t *testing.T, _ string) string {
			return fmt.Sprintf(`dprepro: s.toml:%d: tuning.learners[0]: unknown learner "objective-perturbaton" (known: objective-perturbation, output-perturbation, non-private); did you mean "objective-perturbation"?`,
				specLine(t, learner, "learners ="))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			spec := filepath.Join(dir, "s.toml")
			writeT(t, spec, []byte(tt.spec))
			if tt.csv != "" {
				writeT(t, filepath.Join(dir, "mydata.csv"), []byte(tt.csv))
			}
			r := runProc(t, cleanEnv(t), bin, "run", spec, "--out", t.TempDir())
			if want := tt.want(t, dir); r.code != 2 || lastLine(r.stderr) != want {
				t.Errorf("exit %d, stderr\n%s\nwant exit 2 and the last line\n%s", r.code, r.stderr, want)
			}
			if strings.Contains(r.stderr, "pos: pos:") {
				t.Errorf("the spec id is repeated:\n%s", r.stderr)
			}
		})
	}

	// Two specs that fail when their experiments are built: each FAILED
	// line names its spec once, and the final error lists both failures
	// at their keys (bad input: exit 2).
	dir := t.TempDir()
	writeT(t, filepath.Join(dir, "mydata.csv"), []byte("a,b,z\n1,2,3\n"))
	a := filepath.Join(dir, "a.toml")
	writeT(t, a, []byte(strings.Replace(posSpec, `id = "pos"`, `id = "pos-a"`, 1)))
	b := filepath.Join(dir, "b.toml")
	writeT(t, b, []byte(strings.Replace(twitter, `id = "pos"`, `id = "pos-b"`, 1)))
	r := runProc(t, cleanEnv(t), bin, "run", a, b, "--out", t.TempDir())
	errA := fmt.Sprintf(`a.toml:%d: data.files.mydata: datasets: load mydata: %s:1: label: no column "y" in the header (columns: a, b, z)`,
		specLine(t, posSpec, "[data.files.mydata]"), filepath.Join(dir, "mydata.csv"))
	errB := fmt.Sprintf(`b.toml:%d: data.datasets[0]: dataset twitter: a regression dataset; cv-tuning needs classification`, specLine(t, twitter, "datasets ="))
	for _, want := range []string{
		"dprepro: pos-a: FAILED: " + errA + "\n",
		"dprepro: pos-b: FAILED: " + errB + "\n",
		"dprepro: 2 of 2 runs failed:\n" + errA + "\n" + errB + "\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr\n%s\nwant\n%s", r.stderr, want)
		}
	}
	if r.code != 2 {
		t.Errorf("exit %d, want 2", r.code)
	}
}

// failingLearner fails every fit: a run failure, found by the runner.
type failingLearner struct{}

func (failingLearner) Name() string { return "cli-test-fails" }
func (failingLearner) Fit(context.Context, *rand.Rand, *learners.Data, float64, learners.Level) (learners.Model, privacy.Guarantee, error) {
	return nil, privacy.Guarantee{}, errors.New("always fails")
}

// TestRun_UnitFailuresNamedOnce: a run whose units fail reports them under
// the spec id once (the runner's error), with exit 1. The learner stays
// registered for the rest of this test binary (the registry has no
// removal); no other test lists the learners.
func TestRun_UnitFailuresNamedOnce(t *testing.T) {
	if err := learners.Register(failingLearner{}); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(strings.Replace(tinySpec, `methods = ["stability", "random"]`, "methods = [\"random\"]\nlearners = [\"cli-test-fails\"]", 1),
		"subsample = 800", "subsample = 800\nsynthetic = \"always\"", 1)
	code, _, stderr := dprepro(t, "run", writeSpec(t, src), "--out", t.TempDir(), "--workers", "1")
	want := "dprepro: tiny: 3 of 3 units failed (no unit of this run succeeded; no results written):\n" +
		"unit magic/alpha=1/random/cli-test-fails/rep=1/fold=1: learner cli-test-fails: always fails\n"
	if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "tiny: tiny:") {
		t.Errorf("exit %d, stderr\n%s\nwant exit 1 and\n%s", code, stderr, want)
	}
}
