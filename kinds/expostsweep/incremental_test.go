package expostsweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/runner"
)

// TestRun_RecomputesOnlyWhatChanged: a unit's identity is its method
// (with its generator), α and trial and what every unit reads; so an α
// added, trials raised or a method added computes only the new units and
// resumes the others (stderr says how many are new), and the rows of the
// units resumed are byte-identical to a fresh run's; a change every unit
// reads (γ) recomputes them all, naming what changed.
func TestRun_RecomputesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	src := strings.NewReplacer("subsample = 3000", "subsample = 600", "steps = 200", "steps = 40",
		"trials = 5", "trials = 2", `methods = ["noise-reduction", "doubling", "theory"]`, `methods = ["noise-reduction", "doubling"]`).Replace(logisticSpec)
	runOnce := func(src string) string {
		t.Helper()
		e := load(t, src, "authors-code")
		var stderr strings.Builder
		dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: out, Workers: 2, Stderr: &stderr})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := os.ReadFile(filepath.Join(dir, "rows.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return stderr.String() + "\n--rows--\n" + string(rows)
	}
	first := runOnce(src) // 1 dataset × 2 methods × 2 α × 2 trials = 8 units
	if !strings.Contains(first, "8 units") {
		t.Fatalf("first run:\n%s", first)
	}
	for _, c := range []struct {
		name, from, to, want string
	}{
		{"an α added", "alphas = [0.05, 0.1]", "alphas = [0.05, 0.1, 0.2]", "4 units are new"},
		{"trials raised", "trials = 2", "trials = 3", "6 units are new"},
		{"a method added", `methods = ["noise-reduction", "doubling"]`, `methods = ["noise-reduction", "doubling", "theory"]`, "9 units are new"},
	} {
		src = strings.Replace(src, c.from, c.to, 1)
		got := runOnce(src)
		if !strings.Contains(got, c.want) || strings.Contains(got, "recomputing the units whose inputs changed") {
			t.Errorf("%s: stderr does not say %q (and nothing recomputed):\n%s", c.name, c.want, got[:strings.Index(got, "--rows--")])
		}
	}
	// Every unit resumed equals a fresh run of the final spec.
	fresh := load(t, src, "authors-code")
	freshRows, _, _ := run(t, fresh, 1)
	final := runOnce(src)
	if rows := final[strings.Index(final, "--rows--\n")+len("--rows--\n"):]; rows != string(freshRows) {
		t.Error("the incrementally grown run's rows.csv differs from a fresh run's")
	}
	// γ is read by every unit: all recomputed.
	got := runOnce(strings.Replace(src, "gamma = 0.1", "gamma = 0.2", 1))
	if strings.Contains(got, "resuming") {
		t.Errorf("γ changed: units resumed:\n%s", got[:strings.Index(got, "--rows--")])
	}
}
