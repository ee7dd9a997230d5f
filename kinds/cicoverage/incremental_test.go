package cicoverage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/runner"
)

// TestRun_RecomputesOnlyWhatChanged: a unit's identity is the methods it
// computes (one model's in-process methods together, each external
// method alone) beside what every unit reads, so a method added to one
// model recomputes that model's units and resumes the other model's; the
// grown run's rows equal a fresh run's (the draws are keyed by replicate
// and step, not by unit); a change every unit reads (the replicates)
// starts over.
func TestRun_RecomputesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	src := strings.Replace(smallSpec, `methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-svm", "zcdp-output-svm"]`, `methods = ["dp-obj-lr", "dp-output-svm"]`, 1)
	runOnce := func(src string) (string, []byte) {
		t.Helper()
		var stderr strings.Builder
		dir, err := runner.Run(context.Background(), load(t, src), runner.Options{OutDir: out, Workers: 2, Stderr: &stderr})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := os.ReadFile(filepath.Join(dir, "rows.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return stderr.String(), rows
	}
	runOnce(src) // 2 models × (2 values × 2 replicate blocks + 2 VI units) = 12 units
	src = strings.Replace(src, `methods = ["dp-obj-lr", "dp-output-svm"]`, `methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-svm"]`, 1)
	stderr, rows := runOnce(src)
	if !strings.Contains(stderr, "resuming, 6 of 12 units already done") || !strings.Contains(stderr, "recomputing the units whose inputs changed") {
		t.Errorf("zcdp-obj-lr added: want the 6 svm units resumed and the 6 lr units recomputed; stderr:\n%s", stderr)
	}
	fresh, _ := run(t, load(t, src), 1)
	if string(rows) != string(fresh) {
		t.Error("the grown run's rows.csv differs from a fresh run's")
	}
	stderr, _ = runOnce(strings.Replace(src, "replicates = 6", "replicates = 5", 1))
	if strings.Contains(stderr, "resuming") {
		t.Errorf("replicates changed: units resumed:\n%s", stderr)
	}
}
