package runner

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/results"
)

// runFiles returns the files of the run folder dir with their bytes,
// leaving out those that are not the run's results (the checkpoint, the
// lock, the attempt record).
func runFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == ".checkpoint" || rel == KeptCheckpoint {
				return filepath.SkipDir
			}
			return nil
		}
		if rel != LockFile && rel != results.AttemptFile {
			files[filepath.ToSlash(rel)] = string(readFile(t, p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRun_FinishedRunKeptUntilReplaced: a run folder's finished run stays,
// byte for byte, while a run of another identity (here: on the real file
// instead of a stand-in) fails or is interrupted — stderr says at the
// start what differs and that it stays until replaced; once a run has
// every unit its files replace the old run's, with none of the old left
// (its figure, which the new run does not draw, is gone).
func TestRun_FinishedRunKeptUntilReplaced(t *testing.T) {
	out := t.TempDir()
	stand := []results.DatasetInfo{{Name: "d", Source: "synthetic", Generator: "planted-logistic/v1", Params: map[string]string{"n": "100"}}}
	real := []results.DatasetInfo{{Name: "d", Source: "real", Files: []results.FileInfo{{Name: "d.data", SHA256: "318f00aa"}}}}
	first := newFake(6)
	first.data = stand
	dir, err := Run(context.Background(), first, Options{OutDir: out, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	old := runFiles(t, dir)
	if _, ok := old["figures/f.png"]; !ok {
		t.Fatalf("the first run drew no figures/f.png: %v", slices.Sorted(maps.Keys(old)))
	}
	wantNote := []string{
		"holds a finished run (finished ",
		") of another identity:\n",
		"data: d changed from synthetic planted-logistic/v1 to real d.data sha256 318f00aa\n",
		"it stays in place until this run has all its units, and is then replaced; if this run fails or is stopped, the folder keeps it as it is\n",
	}

	// Units that fail, then an interrupt: the finished run stays as it was.
	failing := newFake(6)
	failing.data, failing.failIf = real, func(k string) bool { return k == failing.units[2] }
	var stderr bytes.Buffer
	if _, err := Run(context.Background(), failing, Options{OutDir: out, Workers: 1, Stderr: &stderr}); err == nil {
		t.Fatal("the failing run succeeded")
	}
	for _, w := range wantNote {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr of the failing run lacks %q:\n%s", w, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "belongs to another run") {
		t.Errorf("the checkpoint of the finished run was announced twice:\n%s", stderr.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := newFake(6)
	stopped.data, stopped.onRun = real, func(string) { cancel() }
	if _, err := Run(ctx, stopped, Options{OutDir: out, Workers: 1}); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("interrupted run: %v", err)
	}
	for name, b := range runFiles(t, dir) {
		if old[name] != b {
			t.Errorf("%s changed while runs of another identity failed and were interrupted", name)
		}
	}
	if len(runFiles(t, dir)) != len(old) {
		t.Errorf("files added beside the finished run: %d, were %d", len(runFiles(t, dir)), len(old))
	}

	// Fixed, it resumes what was checkpointed and replaces the old run.
	fixed := newFake(6)
	fixed.data, fixed.figure = real, "g"
	stderr.Reset()
	if _, err := Run(context.Background(), fixed, Options{OutDir: out, Workers: 1, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), wantNote[2]) || fixed.calls.Load() == 6 {
		t.Errorf("the fixed run (%d units computed) did not resume or say what differs:\n%s", fixed.calls.Load(), stderr.String())
	}
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(maps.Keys(runFiles(t, dir)))
	want := slices.Sorted(slices.Values(m.Outputs))
	if !slices.Equal(names, want) {
		t.Errorf("the run folder holds %v, want its manifest's outputs %v (nothing of the old run)", names, want)
	}
	if m.Datasets[0].Source != "real" || m.Build.Binary == "" {
		t.Errorf("manifest: data %q, binary %q", m.Datasets[0].Source, m.Build.Binary)
	}
	// Its identity, read back from the manifest, is the run's own: the
	// same run made again says nothing of another identity.
	if ch := Header(fixed).Changes(m.Identity()); len(ch) > 0 {
		t.Errorf("the manifest's identity differs from the run's: %v", ch)
	}
	again := newFake(6)
	again.data, again.figure = real, "g"
	stderr.Reset()
	if _, err := Run(context.Background(), again, Options{OutDir: out, Workers: 1, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "another identity") {
		t.Errorf("a run made again was called one of another identity:\n%s", stderr.String())
	}
}

// TestRun_EveryFailureKept: with more failed units than the message names,
// the error (a UnitsFailedError) names the first MaxShownFailures and how
// many more, where they are recorded when the caller says it, and holds
// every one with its error.
func TestRun_EveryFailureKept(t *testing.T) {
	e := newFake(14)
	e.failIf = func(k string) bool { return k != e.units[0] && k != e.units[1] }
	_, err := Run(context.Background(), e, Options{OutDir: t.TempDir(), Workers: 2})
	var ufe *UnitsFailedError
	if !errors.As(err, &ufe) {
		t.Fatalf("got %v, want a UnitsFailedError", err)
	}
	if len(ufe.Failures) != 12 || ufe.Units != 14 {
		t.Fatalf("%d failures of %d units, want 12 of 14", len(ufe.Failures), ufe.Units)
	}
	msg := err.Error()
	if strings.Count(msg, "\nunit ") != MaxShownFailures || !strings.Contains(msg, "12 of 14 units failed") || !strings.HasSuffix(msg, "\n… and 2 more units") {
		t.Errorf("message:\n%s", msg)
	}
	for i, f := range ufe.Failures {
		if f.Err == nil || f.Err.Error() != "boom" || i > 0 && "unit "+ufe.Failures[i-1].Unit+": " > "unit "+f.Unit+": " {
			t.Errorf("failure %d: %+v (want every unit's error, in order)", i, f)
		}
	}
	ufe.Record = "RUN/attempt.json"
	if !strings.HasSuffix(err.Error(), "\n… and 2 more units (the error of every failed unit is in RUN/attempt.json)") {
		t.Errorf("message with the record:\n%s", err.Error())
	}
}

// TestRun_FinishedCheckpointSetAside: a run of another identity started in
// a folder holding a finished run sets the finished run's checkpoint
// aside (KeptCheckpoint) instead of discarding it, so that when that
// attempt is stopped, the finished run's own command resumes every unit
// (none computed again) rather than recomputing a run that is there; a run
// that writes its outputs removes what was set aside.
func TestRun_FinishedCheckpointSetAside(t *testing.T) {
	out := t.TempDir()
	stand := []results.DatasetInfo{{Name: "d", Source: "synthetic", Generator: "planted-logistic/v1", Params: map[string]string{"n": "100"}}}
	real := []results.DatasetInfo{{Name: "d", Source: "real", Files: []results.FileInfo{{Name: "d.data", SHA256: "318f00aa"}}}}
	first := newFake(6)
	first.data = stand
	dir, err := Run(context.Background(), first, Options{OutDir: out, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, KeptCheckpoint)

	// Another identity, stopped after its first unit.
	ctx, cancel := context.WithCancel(context.Background())
	other := newFake(6)
	other.data, other.onRun = real, func(string) { cancel() }
	var stderr bytes.Buffer
	if _, err := Run(ctx, other, Options{OutDir: out, Workers: 1, Stderr: &stderr}); err == nil {
		t.Fatal("the stopped run succeeded")
	}
	if _, err := os.Stat(kept); err != nil || !strings.Contains(stderr.String(), "the finished run's checkpoint is set aside") {
		t.Fatalf("the finished run's checkpoint was not set aside (%v):\n%s", err, stderr.String())
	}

	// The finished run's own command: every unit resumes.
	again := newFake(6)
	again.data = stand
	stderr.Reset()
	if _, err := Run(context.Background(), again, Options{OutDir: out, Workers: 1, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if n := again.calls.Load(); n != 0 || !strings.Contains(stderr.String(), "is taken back") || !strings.Contains(stderr.String(), "6 of 6 units already done") {
		t.Errorf("the finished run's command again computed %d units:\n%s", n, stderr.String())
	}
	if _, err := os.Stat(kept); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the set-aside checkpoint is still there after it was taken back: %v", err)
	}

	// The other identity again, to the end: the set-aside checkpoint goes
	// with the run it belonged to.
	done := newFake(6)
	done.data = real
	if _, err := Run(context.Background(), done, Options{OutDir: out, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kept); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a finished run of another identity left the old checkpoint set aside: %v", err)
	}
	if m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json"); err != nil || m.Datasets[0].Source != "real" {
		t.Errorf("the folder's run: %v, %+v", err, m.Datasets)
	}
}
