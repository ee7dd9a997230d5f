//go:build unix

package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dprepro/dprepro/results"
)

// tailSpec is a ci-coverage spec (Adult's stand-in: no data directory is
// named) whose variability interval is one long unit of 30,000 bootstrap
// fits and whose 4 coverage blocks are short: on 2 workers the VI starts
// first (longest first), the other worker takes the blocks and then helps
// the VI (tail help, runner.Env.Parallel).
const tailSpec = `schema = 1
id = "tail"
kind = "ci-coverage"
seed = 29

[data]
datasets = ["adult"]
intercept = false

[confidence_intervals]
methods = ["dp-output-lr", "zcdp-output-lr"]
n1 = 2000
d1 = 3
sweep = "eps1"
values = [0.5]
replicates = 8
mc_samples = 200
vi_fits = 30000
block_size = 2

[output]
bootstrap = 200
`

// TestTailHelp_Process runs the real binary: on 2 workers the long VI
// unit is helped (its record in the manifest counts the helpers and its
// 30,000 tasks) and its rows equal a 1-worker run's; SIGINT while the
// helper and the unit's own goroutine work through its fits stops the
// process within 2 s of CPU (exit 130), and the rerun resumes and writes
// the bytes of the uninterrupted run.
func TestTailHelp_Process(t *testing.T) {
	bin := sharedBinary(t)
	spec := writeSpec(t, tailSpec)
	env := cleanEnv(t)
	run := func(workers string) string {
		out := t.TempDir()
		if r := runProc(t, env, bin, "run", spec, "--out", out, "--workers", workers); r.code != 0 {
			t.Fatalf("%s workers: exit %d\n%s", workers, r.code, r.stderr)
		}
		return filepath.Join(out, "tail", "quick-seed29")
	}
	one, two := run("1"), run("2")
	rows1, sum1, _ := readRun(t, one)
	rows2, sum2, m := readRun(t, two)
	if !bytes.Equal(rows1, rows2) || !bytes.Equal(sum1, sum2) {
		t.Fatal("rows.csv or summary.csv differ between 1 and 2 workers")
	}
	// The VI unit's own record: its tasks, and a helper on the second
	// worker once the 4 blocks were done.
	b, err := os.ReadFile(filepath.Join(two, ".checkpoint", "units.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var vi *results.UnitTime
	for _, line := range bytes.Split(b, []byte("\n")) {
		var rec struct {
			Unit string            `json:"unit"`
			Time *results.UnitTime `json:"time"`
		}
		if json.Unmarshal(line, &rec) == nil && strings.Contains(rec.Unit, "/vi/") {
			vi = rec.Time
		}
	}
	if vi == nil || vi.Helpers < 1 {
		t.Errorf("the VI unit was not helped: %+v", vi)
	} else if vi.Measure == results.MeasureThreadCPU && vi.Tasks != 30000 {
		t.Errorf("VI tasks %d, want 30000", vi.Tasks)
	}
	if m.UnitTimes == nil || m.UnitTimes.Scaling == nil {
		t.Error("no scaling record in the manifest")
	}

	// Interrupted in the tail: the 4 blocks are in the checkpoint (after
	// its header line), the VI is being helped.
	out := t.TempDir()
	cmd := exec.Command(bin, "run", spec, "--out", out, "--workers", "2", "--heartbeat", "1h")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(out, "tail", "quick-seed29", ".checkpoint", "units.jsonl")
	waitFor(t, func() bool { b, _ := os.ReadFile(ckpt); return bytes.Count(b, []byte("\n")) >= 5 }, cmd)
	time.Sleep(300 * time.Millisecond)
	took, err := cpuAfter(cmd, syscall.SIGINT)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("interrupted run: %v, want exit 130\n%s", err, stderr.String())
	}
	if took > 2*time.Second {
		t.Errorf("the run went on for %v of %s after SIGINT (want < 2 s)", took, cpuClock)
	}
	r := runProc(t, env, bin, "run", spec, "--out", out, "--workers", "2")
	if r.code != 0 || !strings.Contains(r.stderr, "resuming") {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	rows, sum, _ := readRun(t, filepath.Join(out, "tail", "quick-seed29"))
	if !bytes.Equal(rows, rows1) || !bytes.Equal(sum, sum1) {
		t.Error("the resumed run differs from the uninterrupted run")
	}
}
