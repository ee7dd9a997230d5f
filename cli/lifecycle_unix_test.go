//go:build unix

package cli

// Process tests of a run folder's lifecycle (issue 23, follow-up A): a
// finished run is never lost to a run of another identity that does not
// finish.

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// syncBuffer is a buffer that a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// resultFiles returns the files of the run folder dir with their bytes,
// leaving out what is not a result (the checkpoint, one set aside, the lock, the attempt
// record, the workers' log).
func resultFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir() && (rel == ".checkpoint" || rel == runner.KeptCheckpoint):
			return filepath.SkipDir
		case d.IsDir(), rel == runner.LockFile, rel == results.AttemptFile, rel == "workers.log":
			return nil
		}
		files[filepath.ToSlash(rel)] = string(mustRead(t, p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestLifecycle_FinishedRunKeptUntilReplaced: a finished run stays in its
// folder, byte for byte, while a run of another identity (the spec's
// design edited) is interrupted with Ctrl-C once its units have started:
// stderr says at the start what differs and that the old run stays until
// replaced; check fails the folder as not finished without comparing the
// old run; the report shows the interrupted attempt at its top and the
// old run as earlier, not counted; the index says both; `claims` refuses
// the old run (its spec no longer resolves to its design) and leaves its
// claims.csv; a shard is still refused, and the interrupted attempt's
// record and index entry are kept. Unblocked, the new run finishes and replaces the old one
// wholly: the folder holds exactly the new manifest's outputs (the old
// Adult figure is gone) and no record.
func TestLifecycle_FinishedRunKeptUntilReplaced(t *testing.T) {
	bin := sharedBinary(t)
	env := cleanEnv(t)
	src := t.TempDir()
	spec := filepath.Join(src, "life.toml")
	writeFilesIn(t, src, map[string]string{"life.toml": lifeSpec, "worker.sh": modeWorker})
	out := t.TempDir()
	run := filepath.Join(out, "life", "quick-seed1")
	if r := runProc(t, env, bin, "run", spec, "--out", out, "--workers", "1"); r.code != 0 {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	old := resultFiles(t, run)
	if _, ok := old["figures/accuracy-adult.png"]; !ok {
		t.Fatalf("the first run drew no Adult figure: %v", slices.Sorted(maps.Keys(old)))
	}
	// The finished run as a reference, for check.
	ref := filepath.Join(t.TempDir(), "life")
	mkdirT(t, ref)
	for _, f := range []string{"manifest.json", "summary.csv", "claims.csv"} {
		writeT(t, filepath.Join(ref, f), []byte(old[f]))
	}
	same := func(when string) {
		t.Helper()
		now := resultFiles(t, run)
		for _, name := range slices.Sorted(maps.Keys(old)) {
			if now[name] != old[name] {
				t.Errorf("%s: %s of the finished run changed or is gone", when, name)
			}
		}
		if len(now) != len(old) {
			t.Errorf("%s: the folder holds %d result files, the finished run %d", when, len(now), len(old))
		}
	}

	// Another identity, whose external learner blocks at its second call:
	// it cannot finish before the interrupt, whatever the machine's speed.
	writeFilesIn(t, src, map[string]string{"life.toml": lifeSpecEdited, "hang": ""})
	cmd := exec.Command(bin, "run", spec, "--out", out, "--workers", "1", "--heartbeat", "1h")
	cmd.Env = env
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	waitFor(t, func() bool {
		_, err := os.Stat(filepath.Join(src, "blocked"))
		return err == nil && strings.Contains(stderr.String(), startedUnits)
	}, cmd)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("interrupted run: %v, want exit 130\n%s", err, stderr)
	}
	for _, want := range []string{
		"dprepro: life: " + run + " holds a finished run (finished ",
		") of another identity:\n",
		"dprepro: life:   spec: a setting every unit reads changed (sha256 ",
		"dprepro: life:   data: adult is no longer read",
		"dprepro: life: it stays in place until this run has all its units, and is then replaced; if this run fails or is stopped, the folder keeps it as it is\n",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr of the interrupted run lacks %q:\n%s", want, stderr)
		}
	}
	same("after the interrupt")
	if a, err := results.ReadAttempt(run); err != nil || a == nil || a.State != results.AttemptInterrupted {
		t.Fatalf("the attempt record: %+v, %v; want interrupted", a, err)
	}

	r := runProc(t, env, bin, "check", run, "--against", filepath.Dir(ref))
	if want := "life (" + run + "): FAIL: the run did not finish (interrupted): life: interrupted with 3 of 20 units done; run the same command again to resume (the finished run it still holds from before is not compared)"; r.code != 1 || !strings.Contains(r.stdout, want) {
		t.Errorf("check: exit %d, want 1 and %q:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	if r = runProc(t, env, bin, "report", out); r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	md := string(mustRead(t, filepath.Join(out, "report", "report.md")))
	page := string(mustRead(t, filepath.Join(out, "report", "index.html")))
	for _, want := range []string{"## ⛔ 1 run did not finish", "**interrupted (Ctrl-C or SIGTERM) at ", "The earlier run in its folder is shown, not counted.",
		"Not counted: the latest attempt at this run was interrupted (see the top of the report); these are the results of the earlier run, finished at "} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, want := range []string{`<div class="total notrun"><b>1</b>not run</div>`, `<div class="total held"><b>0</b>held</div>`} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q (the claim counts as not run, the earlier run's verdict not at all)", want)
		}
	}
	if e := readIndex(t, out)["life/quick-seed1"]; !strings.HasPrefix(e.Status, "interrupted; the folder still holds the earlier run finished at ") {
		t.Errorf("index entry: %+v", e)
	}
	r = runProc(t, env, bin, "claims", run)
	if r.code != 2 || !strings.Contains(r.stderr, "no longer resolves to the run's design") {
		t.Errorf("claims of the earlier run, whose spec was edited: exit %d\n%s", r.code, r.stderr)
	}
	// Unblocked from here on: a shard wrongly let in would finish, not hang.
	os.Remove(filepath.Join(src, "hang"))
	os.Remove(filepath.Join(src, "blocked"))
	r = runProc(t, env, bin, "run", spec, "--out", out, "--shard", "0/2")
	if r.code != 2 || !strings.Contains(r.stderr, run+" holds a finished run; write the shards to their own --out folders") {
		t.Errorf("a shard into the folder: exit %d\n%s", r.code, r.stderr)
	}
	if a, err := results.ReadAttempt(run); err != nil || a == nil || a.State != results.AttemptInterrupted {
		t.Errorf("after the refused shard, the attempt record is %+v, %v; want the interrupted attempt's", a, err)
	}
	if e := readIndex(t, out)["life/quick-seed1"]; !strings.HasPrefix(e.Status, "interrupted; the folder still holds the earlier run finished at ") {
		t.Errorf("index entry after the refused shard: %+v", e)
	}
	same("after check, report, claims and a refused shard")

	// The run of the edited spec finishes and replaces the old run wholly.
	r = runProc(t, env, bin, "run", spec, "--out", out, "--workers", "1")
	if r.code != 0 || !strings.Contains(r.stderr, "of another identity") {
		t.Fatalf("the edited spec's run: exit %d\n%s", r.code, r.stderr)
	}
	m, err := results.ReadManifestFS(os.DirFS(run), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(resultFiles(t, run))), slices.Sorted(slices.Values(m.Outputs)); !slices.Equal(got, want) {
		t.Errorf("the folder holds %v, want exactly the new run's outputs %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(run, results.AttemptFile)); !os.IsNotExist(err) {
		t.Errorf("the finished run left its attempt record (%v)", err)
	}
	if sum := string(mustRead(t, filepath.Join(run, "summary.csv"))); strings.Contains(sum, "adult") || !strings.Contains(sum, ",ext,") {
		t.Error("summary.csv is not the edited spec's")
	}
	if r = runProc(t, env, bin, "report", out); r.code != 0 || strings.Contains(string(mustRead(t, filepath.Join(out, "report", "index.html"))), `id="unfinished"`) {
		t.Errorf("report of the finished run: exit %d, or it names a run that did not finish\n%s", r.code, r.stderr)
	}
	if e := readIndex(t, out)["life/quick-seed1"]; e.Status != "complete" {
		t.Errorf("index entry: %+v", e)
	}
}
