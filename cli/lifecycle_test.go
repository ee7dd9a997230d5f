package cli

// Process tests of what a run that did not finish records (issue 23,
// follow-up A).

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprepro/dprepro/report"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// lifeSpec is a data-free learner-comparison run on the stand-ins of
// Adult and Magic (8 folds, 40 units: a unit per fit), which draws one
// figure per dataset.
const lifeSpec = `schema = 1
id = "life"
title = "Run lifecycle"
kind = "learner-comparison"
seed = 1

[data]
datasets = ["adult", "magic"]
synthetic = "always"
subsample = 400
column_scale = "maxabs"
intercept = true
row_norm = "l2-max"

[cv]
repetitions = 1
folds = 4

[comparison]
learners = ["objective-perturbation", "output-perturbation"]
reference = "non-private"
epsilons = [0.5, 1.0]
delta = 0.0
lambda = 0.01
loss = "logistic"
objective_perturbation = "cms11"

[output]
bootstrap = 100

[[claims]]
id = "op-auc"
source = "Section 5"
statement = "objective perturbation reaches an AUC of 0.1"
rule = "at_least"
metric = "auc"
dataset = "magic"
method = "objective-perturbation"
value = 0.1
`

// lifeSpecEdited is lifeSpec with its design edited — Magic only (so no
// Adult figure), and modeWorker's external learner in place of output
// perturbation — the same id, profile and seed: the same run folder, a
// run of another identity.
var lifeSpecEdited = strings.NewReplacer(
	`datasets = ["adult", "magic"]`, `datasets = ["magic"]`,
	`learners = ["objective-perturbation", "output-perturbation"]`, `learners = ["objective-perturbation", "ext"]`,
).Replace(lifeSpec) + `
[[methods]]
name = "ext"
serves = "learner"
command = ["sh", "worker.sh"]
timeout = "1h"
`

// refuseWorker is an external learner that answers every call with an
// error reply: every unit that calls it fails.
const refuseWorker = `read line; echo '{"type":"hello","protocol":1,"serves":"learner","privacy":"pure"}'
while read line; do
  id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  echo "{\"type\":\"error\",\"id\":$id,\"message\":\"refuses call $id\"}"
done
`

// failsSpec runs refuseWorker beside objective perturbation on 3 × 4
// folds of Magic's stand-in: 60 units (a unit per fit: learner, ε and
// fold, the reference's included), of which the worker's 24 fail and the
// others are kept.
var failsSpec = strings.NewReplacer(`id = "life"`, `id = "fails"`, "repetitions = 1", "repetitions = 3").Replace(lifeSpecEdited)

// TestLifecycle_EveryFailedUnitRecorded: with 24 failed units (of 60) the error
// (stderr, attempt.json's error, index.json's) names 10 and says where the
// error of every one is: attempt.json's "failures", which lists all 24;
// the report says how many its error shows and where the rest are. The
// spec file, given relative to the folder the command ran in, is recorded
// by its absolute path in attempt.json and index.json, as in a manifest.
func TestLifecycle_EveryFailedUnitRecorded(t *testing.T) {
	bin := sharedBinary(t)
	src := t.TempDir()
	writeFilesIn(t, src, map[string]string{"fails.toml": failsSpec, "worker.sh": refuseWorker})
	out := t.TempDir()
	run := filepath.Join(out, "fails", "quick-seed1")
	r := runIn(t, src, bin, "run", "fails.toml", "--out", out, "--workers", "1")
	pointer := `… and 14 more units (the error of every failed unit is in ` + filepath.Join(run, results.AttemptFile) + `, under "failures")`
	if r.code != 1 || !strings.Contains(r.stderr, "24 of 60 units failed") || !strings.Contains(r.stderr, pointer) {
		t.Fatalf("exit %d, want 1 with 24 of 60 units failed and %q:\n%s", r.code, pointer, r.stderr)
	}
	a, err := results.ReadAttempt(run)
	if err != nil || a == nil {
		t.Fatalf("attempt record: %v", err)
	}
	if a.State != results.AttemptFailed || len(a.Failures) != 24 || strings.Count(a.Error, "\nunit ") != 10 || !strings.Contains(a.Error, pointer) {
		t.Errorf("attempt: state %q, %d failures, error:\n%s", a.State, len(a.Failures), a.Error)
	}
	seen := map[string]bool{}
	for _, f := range a.Failures {
		if f.Unit == "" || seen[f.Unit] || !strings.Contains(f.Error, "refuses call") {
			t.Errorf("failure %+v: want each unit once, with its error in full", f)
		}
		seen[f.Unit] = true
	}
	e := readIndex(t, out)["fails/quick-seed1"]
	if !strings.HasPrefix(e.Status, "failed: ") || !strings.Contains(e.Error, pointer) {
		t.Errorf("index entry: %+v", e)
	}
	// Absolute, as the manifest records it.
	abs := filepath.Join(src, "fails.toml")
	for what, file := range map[string]string{"attempt.json": a.Spec.File, "index.json": e.SpecFile} {
		st1, err1 := os.Stat(file)
		st2, err2 := os.Stat(abs)
		if !filepath.IsAbs(file) || err1 != nil || err2 != nil || !os.SameFile(st1, st2) {
			t.Errorf("%s records the spec as %q, want its absolute path %s", what, file, abs)
		}
	}

	if r = runProc(t, cleanEnv(t), bin, "report", out); r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	note := `The error above names 10 of the 24 units that failed; the error of every one is in fails/quick-seed1/attempt.json (its "failures" list).`
	if md := string(mustRead(t, filepath.Join(out, "report", "report.md"))); strings.Count(md, report.MarkdownText(note)) != 2 {
		t.Errorf("report.md does not say twice (top, section) %q", note)
	}
}

// TestLifecycle_ClaimsOfAFolderInUse: `dprepro claims RUN` holds the run
// folder's lock while it rewrites claims.csv, so a folder another process
// holds (a run that replaces its files once it has every unit) is refused,
// exit 2, naming the holder, and claims.csv left as it was; over a folder
// whose latest attempt did not finish, it says that these are the claims
// of the earlier run the folder still holds, which the report does not
// count.
func TestLifecycle_ClaimsOfAFolderInUse(t *testing.T) {
	bin := sharedBinary(t)
	dir, out := t.TempDir(), t.TempDir()
	writeFilesIn(t, dir, map[string]string{"spec.toml": claimsSpec})
	if r := runIn(t, dir, bin, "run", "spec.toml", "--profile", "quick", "--out", out); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	run := filepath.Join(out, "claimed", "quick-seed5")
	before := mustRead(t, filepath.Join(run, "claims.csv"))
	l, err := runner.Lock(run)
	if err != nil {
		t.Fatal(err)
	}
	r := runIn(t, dir, bin, "claims", run)
	l.Release()
	if want := fmt.Sprintf("in use by another dprepro (PID %d", os.Getpid()); r.code != 2 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "--out") {
		t.Errorf("claims of a folder in use: exit %d, want 2 and %q:\n%s", r.code, want, r.stderr)
	}
	if got := mustRead(t, filepath.Join(run, "claims.csv")); !bytes.Equal(got, before) {
		t.Error("claims of a folder in use rewrote claims.csv")
	}

	_, _, m := readRun(t, run)
	if err := results.WriteAttempt(run, &results.Attempt{State: results.AttemptInterrupted, Error: "interrupted",
		Spec: results.SpecInfo{ID: "claimed"}, Profile: "quick", Seed: 5, Started: m.End.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	r = runIn(t, dir, bin, "claims", run)
	if want := "note: the folder's latest attempt (interrupted) did not finish, so these are the claims of the earlier run it still holds, which the report does not count"; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("claims of a folder whose latest attempt was interrupted: exit %d, want 0 and %q:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}
