//go:build unix

package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dprepro/dprepro/report"
	"github.com/dprepro/dprepro/results"
)

// startBlocked starts `dprepro reproduce` of specs into out in a process
// group of its own and waits until the external worker of extSpec blocks
// (modeWorker with "hang"): the run cannot finish, whatever the machine's
// speed. The group is killed when the test ends. It returns the command
// and the PID of the blocked worker (a process group of its own).
func startBlocked(t *testing.T, bin string, env []string, specs, out string) (*exec.Cmd, int) {
	t.Helper()
	os.Remove(filepath.Join(specs, "blocked"))
	cmd := exec.Command(bin, "reproduce", "--specs", specs, "--out", out, "--workers", "1", "--heartbeat", "1h")
	cmd.Env = env
	cmd.Stderr = new(bytes.Buffer)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	waitFor(t, func() bool { _, err := os.Stat(filepath.Join(specs, "blocked")); return err == nil }, cmd)
	worker, err := strconv.Atoi(strings.TrimSpace(string(mustRead(t, filepath.Join(specs, "blocked")))))
	if err != nil {
		t.Fatal(err)
	}
	return cmd, worker
}

// TestReport_StoppedRuns: reproduce stopped by Ctrl-C while its first spec
// runs (it still writes its report) — and, in another folder, killed with
// SIGKILL — leaves folders that tell by themselves what became of each
// spec: `dprepro report OUT`, a new process, names the interrupted (or killed) run and the one never
// started at its top, and says how many units are checkpointed; the index
// says the same (after a SIGKILL, once the next command writes it). Run
// again, the same command resumes and the report is whole.
func TestReport_StoppedRuns(t *testing.T) {
	bin := sharedBinary(t)
	env := cleanEnv(t)
	specs := t.TempDir()
	writeFilesIn(t, specs, map[string]string{"a-ext.toml": extSpec, "worker.sh": modeWorker, "hang": "", "b-proc.toml": processSpecSmall})

	// Ctrl-C.
	out := t.TempDir()
	cmd, _ := startBlocked(t, bin, env, specs, out) // the command stops its worker
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("interrupted reproduce: %v, want exit 130\n%s", err, cmd.Stderr)
	}
	// Its count of runs on stand-ins counts the one that ran, and says
	// that the other did not run.
	if s := cmd.Stderr.(*bytes.Buffer).String(); !strings.Contains(s, "dprepro: 1 of the 1 runs that ran used labelled SYNTHETIC stand-ins") || !strings.Contains(s, "(1 more did not run: 1 not started)") {
		t.Errorf("the stand-in count of the interrupted reproduce:\n%s", s)
	}
	// The interrupted reproduce wrote its report, naming both.
	if md := string(mustRead(t, filepath.Join(out, "report", "report.md"))); !strings.Contains(md, "## ⛔ 2 runs did not finish") {
		t.Error("the report of the interrupted reproduce does not name the 2 runs that did not finish")
	}
	r := runProc(t, env, bin, "report", out)
	if r.code != 0 || !strings.Contains(r.stderr, "ext/quick-seed1 (interrupted), proc/quick-seed17 (not started)") {
		t.Errorf("report after Ctrl-C: exit %d\n%s", r.code, r.stderr)
	}
	page := string(mustRead(t, filepath.Join(out, "report", "index.html")))
	for _, want := range []string{"2 runs did not finish", "interrupted (Ctrl-C or SIGTERM) at", "units are checkpointed",
		"not started: the command that was to run it was interrupted before it began", `<div class="total notrun"><b>1</b>not run</div>`} {
		if !strings.Contains(page, want) {
			t.Errorf("report after Ctrl-C lacks %q", want)
		}
	}
	idx := readIndex(t, out)
	if e := idx["ext/quick-seed1"]; e.Status != "interrupted" || !strings.Contains(e.Error, "interrupted with") {
		t.Errorf("index entry of ext: %+v", e)
	}
	if e := idx["proc/quick-seed17"]; !strings.HasPrefix(e.Status, "not started") {
		t.Errorf("index entry of proc: %+v", e)
	}

	// SIGKILL: nothing runs in the process after the signal, so the
	// records say queued and running, by a process that is gone.
	out = t.TempDir()
	cmd, worker := startBlocked(t, bin, env, specs, out)
	pid := strconv.Itoa(cmd.Process.Pid)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	syscall.Kill(worker, syscall.SIGKILL) // orphaned, still in its sleep
	cmd.Wait()
	_, units, ok := results.CheckpointProgress(filepath.Join(out, "ext", "quick-seed1"))
	if !ok || units == 0 {
		t.Fatalf("no checkpointed unit before the kill (%v)", ok)
	}
	r = runProc(t, env, bin, "report", out)
	if r.code != 0 || !strings.Contains(r.stderr, "ext/quick-seed1 (running), proc/quick-seed17 (queued)") {
		t.Errorf("report after SIGKILL: exit %d\n%s", r.code, r.stderr)
	}
	page = string(mustRead(t, filepath.Join(out, "report", "index.html")))
	for _, want := range []string{"2 runs did not finish", "by PID " + pid + " on", report.NoHolder,
		"its 1 claim; rows.csv, summary.csv, figures and tables; " + strconv.Itoa(units) + " units are checkpointed",
		"not started: queued at"} {
		if !strings.Contains(page, want) {
			t.Errorf("report after SIGKILL lacks %q", want)
		}
	}
	// check says that no process holds the folder of the run whose
	// record says running.
	r = runProc(t, env, bin, "check", out)
	if want := "ext (" + filepath.Join(out, "ext", "quick-seed1") + "): did not finish (its record says running, " + report.NoHolder + ")"; !strings.Contains(r.stdout, want) {
		t.Errorf("check after SIGKILL: exit %d, stdout lacks %q:\n%s", r.code, want, r.stdout)
	}
	// The killed command wrote no index; the next command into the
	// folder does, and says what the killed one left.
	if _, err := os.Stat(filepath.Join(out, "index.json")); !os.IsNotExist(err) {
		t.Fatalf("the killed command wrote an index (%v)", err)
	}
	other := writeSpec(t, strings.Replace(processSpecSmall, `id = "proc"`, `id = "other"`, 1))
	if r = runProc(t, env, bin, "run", other, "--out", out); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	idx = readIndex(t, out)
	if e := idx["ext/quick-seed1"]; !strings.HasPrefix(e.Status, "unfinished: started by PID "+pid) || !strings.Contains(e.Status, report.NoHolder) {
		t.Errorf("index entry of the killed run: %+v", e)
	}
	if e := idx["proc/quick-seed17"]; !strings.HasPrefix(e.Status, "unfinished: queued by PID "+pid) {
		t.Errorf("index entry of the run never started: %+v", e)
	}

	// Unblocked, the same command resumes and finishes both.
	os.Remove(filepath.Join(specs, "hang"))
	r = runProc(t, env, bin, "reproduce", "--specs", specs, "--out", out, "--workers", "1")
	if r.code != 0 || !strings.Contains(r.stderr, "ext: resuming, "+strconv.Itoa(units)+" of 8 units already done") {
		t.Fatalf("resumed reproduce: exit %d\n%s", r.code, r.stderr)
	}
	page = string(mustRead(t, filepath.Join(out, "report", "index.html")))
	if strings.Contains(page, `id="unfinished"`) {
		t.Error("the report of the finished runs names runs that did not finish")
	}
	for dir, e := range readIndex(t, out) {
		if e.Status != "complete" {
			t.Errorf("index entry of %s: %+v", dir, e)
		}
	}
}
