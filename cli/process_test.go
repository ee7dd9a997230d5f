package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dprepro/dprepro/results"
)

// processSpec is a data-free spec (the mechanism-bounds kind) of 240 units
// that takes a few seconds on one worker, long enough to kill part-way.
const processSpec = `schema = 1
id = "proc"
kind = "mechanism-bounds"
seed = 17

[mechanisms]
mechanisms = ["randomized-response", "laplace", "exponential", "gaussian"]
epsilons = [0.2, 1.0, 4.0]
levels = [0.1, 0.01]
replicates = 20
draws = 6000

[output]
bootstrap = 200

[profile.quick.output]
bootstrap = 200
`

// processSpecSmall is processSpec with fewer draws, for in-process tests.
var processSpecSmall = strings.Replace(processSpec, "draws = 6000", "draws = 500", 1)

// buildBinary builds the command into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dprepro")
	cmd := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "../cmd/dprepro")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func readRun(t *testing.T, dir string) (rows, summary []byte, m results.Manifest) {
	t.Helper()
	var err error
	if rows, err = os.ReadFile(filepath.Join(dir, "rows.csv")); err != nil {
		t.Fatal(err)
	}
	if summary, err = os.ReadFile(filepath.Join(dir, "summary.csv")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return rows, summary, m
}

// TestProcess_WorkersAndKill runs the real binary: rows.csv and
// summary.csv are bit-identical for --workers 1 and 8; a run killed part-way
// with SIGKILL leaves no result, and run again it resumes from its
// checkpoint, computes only the units that were not finished, and writes the
// same bytes as the uninterrupted run.
func TestProcess_WorkersAndKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	spec := writeSpec(t, processSpec)
	run := func(out string, workers int) *exec.Cmd {
		return exec.Command(bin, "run", spec, "--out", out, "--workers", strconv.Itoa(workers), "--heartbeat", "1h")
	}
	var ref [2][]byte
	for _, w := range []int{1, 8} {
		out := t.TempDir()
		if b, err := run(out, w).CombinedOutput(); err != nil {
			t.Fatalf("workers %d: %v\n%s", w, err, b)
		}
		rows, sum, m := readRun(t, filepath.Join(out, "proc", "quick-seed17"))
		if m.Units.Total != 240 || m.Units.Computed != 240 {
			t.Fatalf("workers %d: units %+v", w, m.Units)
		}
		if ref[0] == nil {
			ref = [2][]byte{rows, sum}
		} else if !bytes.Equal(rows, ref[0]) || !bytes.Equal(sum, ref[1]) {
			t.Error("rows.csv or summary.csv differ between --workers 1 and --workers 8")
		}
	}

	// Kill part-way: wait until the checkpoint holds some finished units.
	out := t.TempDir()
	cmd := run(out, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(out, "proc", "quick-seed17", ".checkpoint", "units.jsonl")
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(ckpt)
		if n := bytes.Count(b, []byte("\n")); n > 30 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no checkpoint progress within 60 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the killed run exited cleanly: it finished before the kill; make the spec longer")
	}
	if _, err := os.Stat(filepath.Join(out, "proc", "quick-seed17", "manifest.json")); !os.IsNotExist(err) {
		t.Fatalf("a killed run left a manifest.json (%v)", err)
	}
	b, _ := os.ReadFile(ckpt)
	lines := bytes.Count(b, []byte("\n")) - 1 // the header line
	if lines >= 240 {
		t.Fatalf("the checkpoint holds all %d units: the kill came too late", lines)
	}

	var stderr bytes.Buffer
	again := run(out, 2)
	again.Stderr = &stderr
	if err := again.Run(); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, stderr.String())
	}
	// A unit whose line was torn by the kill is dropped and recomputed.
	m := regexp.MustCompile(`resuming, (\d+) of 240 units already done`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no resume message in %q", stderr.String())
	}
	resumed, _ := strconv.Atoi(m[1])
	if resumed < lines-1 || resumed > lines {
		t.Errorf("resumed %d units, the checkpoint had %d complete lines", resumed, lines)
	}
	rows, sum, man := readRun(t, filepath.Join(out, "proc", "quick-seed17"))
	if man.Units.Resumed != resumed || man.Units.Computed != 240-resumed {
		t.Errorf("manifest units %+v: want %d resumed and only the other %d computed", man.Units, resumed, 240-resumed)
	}
	if !bytes.Equal(rows, ref[0]) || !bytes.Equal(sum, ref[1]) {
		t.Error("the resumed run's rows.csv or summary.csv differ from the uninterrupted run")
	}
}

// fakeSbatch stands in for Slurm's sbatch: it runs the --wrap command at
// once, for every task of an --array=0-K job with the environment Slurm
// sets (SLURM_ARRAY_TASK_ID, _MIN, _COUNT), and prints a job id.
const fakeSbatch = `#!/usr/bin/env bash
set -euo pipefail
array=""; wrap=""
while [ $# -gt 0 ]; do
  case "$1" in
    --parsable) ;;
    --array=*) array="${1#--array=}" ;;
    --wrap) wrap="$2"; shift ;;
    --*) ;;
  esac
  shift
done
if [ -n "$array" ]; then
  lo="${array%-*}"; hi="${array#*-}"
  for ((i = lo; i <= hi; i++)); do
    SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=$lo SLURM_ARRAY_TASK_COUNT=$((hi - lo + 1)) bash -c "$wrap" >/dev/null 2>&1
  done
else
  bash -c "$wrap" >/dev/null 2>&1
fi
echo $RANDOM
`

// TestSlurmArrayScript runs scripts/slurm-array.sh against a fake sbatch:
// three array tasks each run their shard, the dependent job merges them, and
// the merged rows.csv and summary.csv are the unsharded run's bytes.
func TestSlurmArrayScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "proc.toml")
	if err := os.WriteFile(spec, []byte(processSpecSmall), 0o644); err != nil {
		t.Fatal(err)
	}
	fakeBin := filepath.Join(tmp, "fakebin")
	if err := os.MkdirAll(fakeBin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fakeBin, "sbatch"), []byte(fakeSbatch), 0o755); err != nil {
		t.Fatal(err)
	}
	out, shardDir := filepath.Join(tmp, "runs"), filepath.Join(tmp, "shards")
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "slurm-array.sh"), spec, "3", "quick")
	cmd.Env = append(os.Environ(), "PATH="+fakeBin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"OUT="+out, "SHARD_DIR="+shardDir, "CPUS=1")
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "3 shards") {
		t.Fatalf("slurm-array.sh: %v\n%s", err, b)
	}
	for i := 0; i < 3; i++ {
		if _, err := os.Stat(filepath.Join(shardDir, strconv.Itoa(i), "proc", "manifest.json")); err == nil {
			t.Errorf("shard %d wrote a final result", i)
		}
	}
	whole := filepath.Join(tmp, "whole")
	run := exec.Command(filepath.Join(root, "bin", "dprepro"), "run", spec, "--profile", "quick", "--out", whole)
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("unsharded run: %v\n%s", err, b)
	}
	rows, summary, _ := readRun(t, filepath.Join(whole, "proc", "quick-seed17"))
	mrows, msummary, m := readRun(t, filepath.Join(out, "proc", "quick-seed17"))
	if !bytes.Equal(rows, mrows) || !bytes.Equal(summary, msummary) {
		t.Error("the merged run of the Slurm array differs from the unsharded run")
	}
	if m.Units.Resumed != m.Units.Total || m.Units.Total == 0 {
		t.Errorf("merged manifest units %+v: want every unit from the shards", m.Units)
	}
}
