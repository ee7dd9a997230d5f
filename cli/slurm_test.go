package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dprepro/dprepro/internal/slurm"
)

// slurmSpec is processSpec (data-free, 240 units) with draws such that a
// shard of 80 units takes about 3 s on one core: long enough to cancel a
// shard part-way, short enough for the test to stay under a minute or so.
var slurmSpec = strings.Replace(processSpec, "draws = 6000", "draws = 100000", 1)

// slurmShards is the number of array tasks, as the issue asks.
const slurmShards = 3

// TestSlurmArrayScript_RealScheduler runs scripts/slurm-array.sh on a real
// single-node Slurm (internal/slurm: munged, slurmctld and slurmd started
// by the test, everything in a temporary folder) with three shards of one
// CPU each, and waits for its merge job:
//   - uninterrupted, the merged rows.csv and summary.csv are the bytes of
//     the unsharded run;
//   - one array task cancelled (scancel) part-way and requeued (scontrol
//     requeue) while the others still run: the merge job waits for it, the
//     task resumes from its checkpoint, and the merge is the same bytes;
//   - one array task cancelled and left until the array has ended: the
//     merge job runs, refuses the unfinished shard and writes nothing;
//     the task and then the merge job requeued give the same bytes.
func TestSlurmArrayScript_RealScheduler(t *testing.T) {
	if testing.Short() {
		t.Skip("brings up Slurm and runs the binary")
	}
	start := time.Now()
	cluster := slurm.Start(t)
	t.Logf("Slurm up in %v (%d CPUs)", time.Since(start).Round(time.Millisecond), cluster.CPUs)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "proc.toml")
	if err := os.WriteFile(spec, []byte(slurmSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	const runPath = "proc/quick-seed17"
	const unitsPerShard = 240 / slurmShards

	// The unsharded run, by a binary built apart from the script's.
	t0 := time.Now()
	whole := filepath.Join(tmp, "whole")
	run := exec.Command(sharedBinary(t), "run", spec, "--profile", "quick", "--workers", strconv.Itoa(cluster.CPUs), "--heartbeat", "1h", "--out", whole)
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("unsharded run: %v\n%s", err, b)
	}
	wantRows, wantSummary, _ := readRun(t, filepath.Join(whole, runPath))
	t.Logf("unsharded run in %v", time.Since(t0).Round(time.Millisecond))

	// submit runs the script and returns the array and merge job ids and
	// the shards' and the merged run's folders.
	submit := func(t *testing.T, name string) (array, merge, shardDir, out string) {
		t.Helper()
		shardDir, out = filepath.Join(tmp, name, "shards"), filepath.Join(tmp, name, "runs")
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "slurm-array.sh"), spec, strconv.Itoa(slurmShards), "quick")
		// --time bounds every job (minutes), should a run hang.
		cmd.Env = append(cluster.Env(), "OUT="+out, "SHARD_DIR="+shardDir, "CPUS=1", "SBATCH_ARGS=--time=5")
		b, err := cmd.CombinedOutput()
		m := regexp.MustCompile(`submitted array job (\d+) \(3 shards .*\) and merge job (\d+)`).FindSubmatch(b)
		if err != nil || m == nil {
			t.Fatalf("slurm-array.sh: %v\n%s", err, b)
		}
		return string(m[1]), string(m[2]), shardDir, out
	}
	// finished waits for job id to end and fails unless it ended as want.
	finished := func(t *testing.T, id, want string, logs ...string) {
		t.Helper()
		j := cluster.WaitJob(t, id, 2*time.Minute, slurm.Job.Finished)
		if j.State != want {
			var b strings.Builder
			for _, l := range logs {
				data, _ := os.ReadFile(l)
				b.WriteString("==== " + l + "\n" + string(data))
			}
			t.Fatalf("job %s ended %s, want %s: %s\n%s", id, j.State, want, j.Line, b.String())
		}
	}
	mergeLog := func(shardDir, merge string) string {
		return filepath.Join(shardDir, "slurm-merge-"+merge+".log")
	}
	taskLog := func(shardDir, array string, i int) string {
		return filepath.Join(shardDir, "slurm-"+array+"_"+strconv.Itoa(i)+".log")
	}
	// sameAsUnsharded compares the merged run with the unsharded one.
	sameAsUnsharded := func(t *testing.T, out string) {
		t.Helper()
		rows, summary, m := readRun(t, filepath.Join(out, runPath))
		if !bytes.Equal(rows, wantRows) {
			t.Error("the merged rows.csv differs from the unsharded run's")
		}
		if !bytes.Equal(summary, wantSummary) {
			t.Error("the merged summary.csv differs from the unsharded run's")
		}
		if m.Units.Total != 240 || m.Units.Resumed != m.Units.Total {
			t.Errorf("merged manifest units %+v: want all 240 from the shards", m.Units)
		}
	}
	// cancelPartWay waits until shard i's checkpoint holds a few units,
	// cancels its array task and returns how many units it had finished.
	cancelPartWay := func(t *testing.T, array, shardDir string, i int) int {
		t.Helper()
		task := array + "_" + strconv.Itoa(i)
		ckpt := filepath.Join(shardDir, strconv.Itoa(i), runPath, ".checkpoint", "units.jsonl")
		deadline := time.Now().Add(time.Minute)
		for {
			b, _ := os.ReadFile(ckpt)
			if bytes.Count(b, []byte("\n")) > 3 { // the header and three units
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no progress in %s within a minute", ckpt)
			}
			time.Sleep(10 * time.Millisecond)
		}
		cluster.MustCommand(t, "scancel", task)
		finished(t, task, "CANCELLED", taskLog(shardDir, array, i))
		if _, err := os.Stat(filepath.Join(shardDir, strconv.Itoa(i), runPath, "manifest.json")); !os.IsNotExist(err) {
			t.Fatalf("the cancelled shard left a manifest.json (%v)", err)
		}
		b, _ := os.ReadFile(ckpt)
		done := bytes.Count(b, []byte("\n")) - 1
		if done >= unitsPerShard {
			t.Fatalf("shard %d had finished all %d units when cancelled: make slurmSpec longer", i, done)
		}
		return done
	}
	// resumed checks that the requeued task i resumed from the done units
	// of its checkpoint (one fewer when the cancel tore the last line).
	resumed := func(t *testing.T, shardDir, array string, i, done int) {
		t.Helper()
		b, _ := os.ReadFile(taskLog(shardDir, array, i))
		m := regexp.MustCompile(`resuming, (\d+) of ` + strconv.Itoa(unitsPerShard) + ` units already done`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("the requeued task did not resume from its checkpoint:\n%s", b)
		}
		if n, _ := strconv.Atoi(string(m[1])); n < done-1 || n > done || n == 0 {
			t.Errorf("the requeued task resumed %d units, its checkpoint held %d", n, done)
		}
		if j, _ := cluster.Job(array + "_" + strconv.Itoa(i)); j.Restarts != 1 {
			t.Errorf("task %s_%d: Restarts=%d, want 1 (%s)", array, i, j.Restarts, j.Line)
		}
	}

	t.Run("uninterrupted", func(t *testing.T) {
		t0 := time.Now()
		array, merge, shardDir, out := submit(t, "uninterrupted")
		finished(t, merge, "COMPLETED", mergeLog(shardDir, merge))
		for i := range slurmShards {
			if j, _ := cluster.Job(array + "_" + strconv.Itoa(i)); j.State != "COMPLETED" {
				t.Errorf("task %s_%d: %s", array, i, j.Line)
			}
			if _, err := os.Stat(filepath.Join(shardDir, strconv.Itoa(i), runPath, "manifest.json")); err == nil {
				t.Errorf("shard %d wrote a final result", i)
			}
		}
		sameAsUnsharded(t, out)
		t.Logf("submitted to merged in %v", time.Since(t0).Round(time.Millisecond))
	})

	t.Run("cancelled and requeued", func(t *testing.T) {
		t0 := time.Now()
		array, merge, shardDir, out := submit(t, "requeued")
		done := cancelPartWay(t, array, shardDir, 0)
		// The other tasks still run (each takes seconds): the array has
		// not ended, so the merge (afterany) still waits.
		cluster.Requeue(t, array+"_0")
		finished(t, merge, "COMPLETED", mergeLog(shardDir, merge), taskLog(shardDir, array, 0))
		resumed(t, shardDir, array, 0, done)
		sameAsUnsharded(t, out)
		t.Logf("cancelled after %d units; submitted to merged in %v", done, time.Since(t0).Round(time.Millisecond))
	})

	t.Run("cancelled, merge refused, both requeued", func(t *testing.T) {
		t0 := time.Now()
		array, merge, shardDir, out := submit(t, "late")
		done := cancelPartWay(t, array, shardDir, 1)
		finished(t, merge, "FAILED", mergeLog(shardDir, merge))
		if b, _ := os.ReadFile(mergeLog(shardDir, merge)); !bytes.Contains(b, []byte("run the unfinished shard again")) {
			t.Errorf("the merge did not say why it refused:\n%s", b)
		}
		if _, err := os.Stat(filepath.Join(out, runPath, "rows.csv")); !os.IsNotExist(err) {
			t.Fatalf("the refused merge wrote rows.csv (%v)", err)
		}
		cluster.Requeue(t, array+"_1")
		finished(t, array+"_1", "COMPLETED", taskLog(shardDir, array, 1))
		resumed(t, shardDir, array, 1, done)
		cluster.Requeue(t, merge)
		finished(t, merge, "COMPLETED", mergeLog(shardDir, merge))
		sameAsUnsharded(t, out)
		t.Logf("cancelled after %d units; submitted to merged in %v", done, time.Since(t0).Round(time.Millisecond))
	})
	t.Logf("in all %v", time.Since(start).Round(time.Millisecond))
}
