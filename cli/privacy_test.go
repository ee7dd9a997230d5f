package cli

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dprepro/dprepro/results"
)

// The process tests of issue 23, part 3: a method's privacy claim is
// checked both ways. They run the real binary: the stock one with
// external workers written as shell scripts, and one built from
// testdata/privacyext, a Go extension whose learners and generator claim
// other than the level the harness hands them.

var (
	extOnce sync.Once
	extBin  string
	extErr  error
)

// privacyExtBinary builds testdata/privacyext once for the tests of this
// file (removed with the shared binary's folder by TestMain).
func privacyExtBinary(t *testing.T) string {
	t.Helper()
	bin := sharedBinary(t) // skips under -short; its folder is removed by TestMain
	extOnce.Do(func() {
		extBin = filepath.Join(filepath.Dir(bin), "dprepro-privacyext")
		out, err := exec.Command("go", "build", "-buildvcs=false", "-o", extBin, "./testdata/privacyext").CombinedOutput()
		if err != nil {
			extErr = fmt.Errorf("go build ./testdata/privacyext: %v\n%s", err, out)
		}
	})
	if extErr != nil {
		t.Fatal(extErr)
	}
	return extBin
}

// writeFiles writes name → content into a new temporary folder and
// returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// mustContain reports each of wants that s (named what) lacks.
func mustContain(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

// runReport writes OUT/report with the binary and returns index.html and
// report.md.
func runReport(t *testing.T, bin, out string) (html, md string) {
	t.Helper()
	if code, stdout, stderr := runBin(t, bin, nil, "report", out); code != 0 {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	h, err := os.ReadFile(filepath.Join(out, "report", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile(filepath.Join(out, "report", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(h), string(m)
}

const underLearnerSpec = `schema = 1
id = "underclaim"
kind = "cv-tuning"
seed = 1

[data]
datasets = ["magic"]
synthetic = "always"
subsample = 600

[cv]
repetitions = 1
folds = 4

[tuning]
lambdas = [0.01, 0.1]
alphas = [0.5, 1.0]
delta = 0.01
methods = ["alphaSplit", "random"]
learners = ["objective-perturbation", "go-tenth", "go-double"]

[output]
bootstrap = 100
`

const underGeneratorSpec = `schema = 1
id = "undergen"
kind = "expost-sweep"
seed = 1

[data]
datasets = ["magic"]
synthetic = "always"
column_scale = "none"
intercept = false
row_norm = "l1-max"
subsample = 400

[accuracy_first]
task = "logistic"
generator = "go-hundredth"
grid_generator = "output"
calibration = "paper"
lambda = 0.01
gamma = 0.1
steps = 20
alphas = [0.3, 1.0]
trials = 3
methods = ["noise-reduction", "doubling"]

[output]
bootstrap = 100
`

// TestPrivacy_GoExtensionClaims runs a Go extension whose learners claim
// ε/10 (go-tenth) and 2ε (go-double) of the level they are handed, and
// whose generator's independent releases claim ε/100 of the ε asked
// (go-hundredth), beside the built-ins. A claim below the level gets the
// warning a claim above it gets — the row's status, stderr, the manifest
// and the report — and is booked at the level (what the protocol spends)
// with the claim shown beside it in the ledger; both are declared by the
// method (a Go extension is not audited by the harness), which the
// ledger, the report and the figures' legends say; the figures ring the
// points over their level. The built-ins beside them keep "ok".
func TestPrivacy_GoExtensionClaims(t *testing.T) {
	bin := privacyExtBinary(t)
	dir := writeFiles(t, map[string]string{"lrn.toml": underLearnerSpec, "gen.toml": underGeneratorSpec})
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runBin(t, bin, cleanEnv(t), "run", filepath.Join(dir, "lrn.toml"), "--out", out, "--workers", "2")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	const under = "method alphaSplit/go-tenth: 8 of 8 rows have fits below their level, e.g. learner go-tenth returned ε=0.025 below its level of ε=0.25 (2 of 2 fits below their level); eps_*, delta_* and the ledger book the level, which is what the protocol spends"
	const over = "method random/go-double: 8 of 8 rows have fits over their level, e.g. learner go-double returned ε=1 for a level of ε=0.5 (1 of 1 fits over their level); eps_*, delta_* and the ledger book what the learner returned"
	mustContain(t, "stderr", stderr, "dprepro: underclaim: WARNING: "+under+"\n", "dprepro: underclaim: WARNING: "+over+"\n",
		"WARNING: method random/go-tenth: 8 of 8 rows have fits below their level", "WARNING: method alphaSplit/go-double: 8 of 8 rows have fits over their level")
	run := filepath.Join(out, "underclaim", "quick-seed1")
	rows, _, m := readRun(t, run)
	for _, w := range []string{under, over} {
		if !slices.Contains(m.Warnings, w) {
			t.Errorf("manifest warnings %q lack %q", m.Warnings, w)
		}
	}
	// rows.csv: go-tenth's rows are booked at α, with the note in status.
	recs := parseCSV(t, rows)
	for _, r := range recs {
		switch r["learner"] {
		case "go-tenth":
			if !strings.HasPrefix(r["status"], "warning: learner go-tenth returned ε=") || !strings.Contains(r["status"], " below its level of ") || r["eps_total"] != r["alpha"] {
				t.Errorf("%s: status %q, eps_total %s (α %s)", r["unit"], r["status"], r["eps_total"], r["alpha"])
			}
		case "objective-perturbation":
			if r["status"] != "ok" {
				t.Errorf("%s: status %q", r["unit"], r["status"])
			}
		}
	}
	for _, le := range m.Ledger {
		c := le.Components[0]
		method, learner, _ := strings.Cut(le.Method, "/")
		switch learner {
		case "go-tenth":
			if c.DeclaredBy != "go-tenth" || !strings.Contains(c.Claimed, " below its level of ") || !strings.HasSuffix(c.Claimed, "; booked at the level") ||
				le.Setting == "alpha=1" && float64(le.Total.Epsilon) != 1 {
				t.Errorf("%s %s: charge %+v, total %+v", le.Method, le.Setting, c, le.Total)
			}
		case "go-double":
			if c.DeclaredBy != "go-double" || !strings.HasSuffix(c.Claimed, "; booked as returned") || le.Setting == "alpha=1" && float64(le.Total.Epsilon) != 2 {
				t.Errorf("%s %s: charge %+v, total %+v", le.Method, le.Setting, c, le.Total)
			}
		case "objective-perturbation":
			if c.DeclaredBy != "" || c.Claimed != "" {
				t.Errorf("%s (%s): the built-in's charge %+v is declared or claimed apart", le.Method, method, c)
			}
		}
	}
	svg, err := os.ReadFile(filepath.Join(run, "figures", "fig1a-auc.svg"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "fig1a-auc.svg", string(svg), "alphaSplit/objective-perturbation — pure ε-DP<",
		"alphaSplit/go-tenth — pure ε-DP; declared by the method", "fits over their privacy level (booked as returned)")
	if _, err := os.Stat(filepath.Join(run, "figures", "fig1a-auc.png")); err != nil {
		t.Error(err)
	}

	// The generator: doubling's releases claim ε/100 of the level.
	code, stdout, stderr = runBin(t, bin, cleanEnv(t), "run", filepath.Join(dir, "gen.toml"), "--out", out, "--workers", "2")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	const gen = "method doubling: 6 of 6 trials have releases below their level, e.g. generator go-hundredth returned ε=2.5e-05 below its level of ε=0.0025"
	mustContain(t, "stderr", stderr, "dprepro: undergen: WARNING: "+gen)
	_, _, gm := readRun(t, filepath.Join(out, "undergen", "quick-seed1"))
	if !slices.ContainsFunc(gm.Warnings, func(w string) bool { return strings.HasPrefix(w, gen) }) {
		t.Errorf("manifest warnings %q lack %q…", gm.Warnings, gen)
	}
	for _, le := range gm.Ledger {
		c := le.Components[0]
		if c.DeclaredBy != "go-hundredth" || (le.Method == "doubling") != strings.HasSuffix(c.Claimed, "in 3 of 3 trials; booked at the level") {
			t.Errorf("%s %s: generating charge %+v", le.Method, le.Setting, c)
		}
	}

	// The report says all of it: the warnings, whose word, the claim.
	html, md := runReport(t, bin, out)
	for what, s := range map[string]string{"index.html": html, "report.md": md} {
		mustContain(t, what, s, "method alphaSplit/go-tenth: 8 of 8 rows have fits below their level", "method doubling: 6 of 6 trials have releases below their level",
			"declared by the method go-tenth, not checked by the harness", "claimed: learner go-tenth returned ε=0.05 below its level of ε=0.5 in 4 of 4 rows; booked at the level",
			"claimed: generator go-hundredth returned ε=2.5e-05 below its level of ε=0.0025 in 3 of 3 trials; booked at the level")
	}
}

// parseCSV parses a CSV file with a header into rows.
func parseCSV(t *testing.T, b []byte) []results.Row {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("csv: %v", err)
	}
	var rows []results.Row
	for _, rec := range recs[1:] {
		r := results.Row{}
		for j, col := range recs[0] {
			r[col] = rec[j]
		}
		rows = append(rows, r)
	}
	return rows
}

// learnerWorker is an external learner (a shell script) that releases
// zero weights for Magic's 11 columns and claims ε/100 of the level ε of
// each fit.
const learnerWorker = `read line
echo '{"type":"hello","protocol":1,"serves":"learner","privacy":"pure"}'
while read line; do
  id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  eps=$(echo "$line" | sed 's/.*"epsilon":\([-0-9.eE+]*\).*/\1/')
  claim=$(awk "BEGIN { printf \"%.17g\", $eps / 100 }")
  echo "{\"type\":\"result\",\"id\":$id,\"output\":{\"weights\":[0,0,0,0,0,0,0,0,0,0,0]},\"privacy\":{\"epsilon\":$claim}}"
done
`

// TestPrivacy_ExternalLearnerUnderClaim: an external learner claiming
// ε/100 of its level is flagged (stderr, manifest), booked at the level
// and shown beside its claim, declared by the method.
func TestPrivacy_ExternalLearnerUnderClaim(t *testing.T) {
	bin := sharedBinary(t)
	spec := strings.NewReplacer(`id = "underclaim"`, `id = "extunder"`, "[data]", `[[methods]]
name = "sh-hundredth"
serves = "learner"
command = ["sh", "worker.sh"]
timeout = "20s"

[data]`, `alphas = [0.5, 1.0]`, `alphas = [1.0]`, `methods = ["alphaSplit", "random"]`, `methods = ["alphaSplit"]`,
		`learners = ["objective-perturbation", "go-tenth", "go-double"]`, `learners = ["objective-perturbation", "sh-hundredth"]`).Replace(underLearnerSpec)
	dir := writeFiles(t, map[string]string{"ext.toml": spec, "worker.sh": learnerWorker})
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runBin(t, bin, cleanEnv(t), "run", filepath.Join(dir, "ext.toml"), "--out", out, "--workers", "2")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	const want = "method alphaSplit/sh-hundredth: 4 of 4 rows have fits below their level, e.g. learner sh-hundredth returned ε=0.005 below its level of ε=0.5 (2 of 2 fits below their level); eps_*, delta_* and the ledger book the level, which is what the protocol spends"
	mustContain(t, "stderr", stderr, "dprepro: extunder: WARNING: "+want+"\n")
	_, _, m := readRun(t, filepath.Join(out, "extunder", "quick-seed1"))
	if !slices.Contains(m.Warnings, want) {
		t.Errorf("manifest warnings %q lack %q", m.Warnings, want)
	}
	for _, le := range m.Ledger {
		if le.Method != "alphaSplit/sh-hundredth" {
			continue
		}
		c := le.Components[0]
		if float64(le.Total.Epsilon) != 1 || float64(c.Epsilon) != 1 || c.DeclaredBy != "sh-hundredth" ||
			c.Claimed != "learner sh-hundredth returned ε=0.005 below its level of ε=0.5 in 4 of 4 rows; booked at the level" {
			t.Errorf("ledger %+v: want ε = 1 booked beside the claim, declared by sh-hundredth", le)
		}
	}
}

// ciWorker is an external CI method (a shell script) declaring pure
// ε-DP on all three budget parts that never releases an interval: every
// reply is {"status": "not converged"}, claiming the declared cost
// (ε₁ + ε₂ + ε₃ = 1 for an interval, ε₁ = 0.5 for an estimate). While the
// file $FLAKY_MARK exists it answers with a Python traceback on stdout
// instead, a protocol fault.
const ciWorker = `read line
echo '{"type":"hello","protocol":1,"serves":"ci","privacy":"pure","attributes":{"model":"lr","spends":["eps1","eps2","eps3"]}}'
while read line; do
  id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  if [ -n "$FLAKY_MARK" ] && [ -e "$FLAKY_MARK" ]; then echo "Traceback (most recent call last):"; continue; fi
  case "$line" in
    *'"op":"interval"'*) eps=1 ;;
    *) eps=0.5 ;;
  esac
  echo "{\"type\":\"result\",\"id\":$id,\"output\":{\"status\":\"not converged\"},\"privacy\":{\"epsilon\":$eps}}"
done
`

const ciNeverSpec = `schema = 1
id = "cinever"
kind = "ci-coverage"
seed = 3

[[methods]]
name = "ext-ci"
serves = "ci"
command = ["sh", "worker.sh"]
timeout = "20s"

[data]
datasets = ["adult"]
synthetic = "always"
intercept = false

[confidence_intervals]
methods = ["dp-obj-lr", "ext-ci"]
n1 = 400
d1 = 2
eps1 = 0.5
eps2 = 0.25
eps3 = 0.25
sweep = "n"
values = [200, 400]
replicates = 4
mc_samples = 50
vi_fits = 4
block_size = 2

[output]
bootstrap = 100
`

// TestPrivacy_CIMethodWithoutIntervals: an external CI method that never
// releases an interval is a warning on stderr, in the manifest and the
// report, and its table cells say "no interval in 4 of 4 replicates"
// (summary.csv keeps NaN with n = 0). A bad reply of the method fails its
// own units only: the built-in method of the same replicates is
// checkpointed, and the same command again (the fault gone) computes only
// the failed units; the built-in's rows are those of a run without the
// external method.
func TestPrivacy_CIMethodWithoutIntervals(t *testing.T) {
	bin := sharedBinary(t)
	dir := writeFiles(t, map[string]string{"ci.toml": ciNeverSpec, "worker.sh": ciWorker,
		"alone.toml": strings.NewReplacer(`id = "cinever"`, `id = "cialone"`, `methods = ["dp-obj-lr", "ext-ci"]`, `methods = ["dp-obj-lr"]`).Replace(ciNeverSpec)})
	out := filepath.Join(dir, "out")
	spec := filepath.Join(dir, "ci.toml")
	code, stdout, stderr := runBin(t, bin, cleanEnv(t), "run", spec, "--out", out, "--workers", "2")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	const never = `method ext-ci never released an interval: no interval in 8 of 8 replicates ("not converged" ×8); its coverage and CI length are NaN (n = 0) in summary.csv`
	mustContain(t, "stderr", stderr, "dprepro: cinever: WARNING: "+never+"\n", "dprepro: cinever: WARNING: method ext-ci: no variability interval at dataset adult, n = 200")
	run := filepath.Join(out, "cinever", "quick-seed3")
	_, summary, m := readRun(t, run)
	if !slices.Contains(m.Warnings, never) {
		t.Errorf("manifest warnings %q lack %q", m.Warnings, never)
	}
	for _, r := range parseCSV(t, summary) {
		if r["method"] == "ext-ci" && r["metric"] != "vi_length" && (r["mean"] != "NaN" || r["n"] != "0") {
			t.Errorf("summary row %v: want NaN with n = 0", r)
		}
	}
	for _, name := range []string{"coverage.md", "coverage.csv", "ci_length.md"} {
		b, err := os.ReadFile(filepath.Join(run, "tables", name))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "no interval in 4 of 4 replicates"); n != 2 || strings.Contains(string(b), "NaN") {
			t.Errorf("%s: %d cells say no interval (want 2), or a NaN:\n%s", name, n, b)
		}
	}
	html, md := runReport(t, bin, out)
	for what, s := range map[string]string{"index.html": html, "report.md": md} {
		mustContain(t, what, s, "method ext-ci never released an interval: no interval in 8 of 8 replicates", "no interval in 4 of 4 replicates",
			"declared by the method ext-ci", "not checked by the harness")
	}

	// A bad reply fails ext-ci's units only; the rerun computes only them.
	mark := filepath.Join(dir, "mark")
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	flaky := filepath.Join(dir, "flaky")
	env := append(cleanEnv(t), "FLAKY_MARK="+mark)
	code, stdout, stderr = runBin(t, bin, env, "run", spec, "--out", flaky, "--workers", "2")
	if code != 1 {
		t.Fatalf("run with a faulty worker: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	mustContain(t, "stderr", stderr, "6 of 12 units failed (the others are checkpointed; no results written)", "external method ext-ci: the reply is not a protocol reply")
	for _, line := range strings.Split(stderr, "\n") {
		if key, _, ok := strings.Cut(strings.TrimPrefix(line, "unit "), ": "); strings.HasPrefix(line, "unit ") && ok && !strings.HasSuffix(key, "/ext-ci") {
			t.Errorf("a unit of the built-in failed: %s", line)
		}
	}
	if _, err := os.Stat(filepath.Join(flaky, "cinever", "quick-seed3", "manifest.json")); err == nil {
		t.Error("a failed run wrote a manifest")
	}
	if err := os.Remove(mark); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runBin(t, bin, env, "run", spec, "--out", flaky, "--workers", "2")
	if code != 0 {
		t.Fatalf("rerun: exit %d\n%s\n%s", code, stdout, stderr)
	}
	mustContain(t, "stderr", stderr, "dprepro: cinever: resuming, 6 of 12 units already done")
	code, stdout, stderr = runBin(t, bin, cleanEnv(t), "run", filepath.Join(dir, "alone.toml"), "--out", flaky, "--workers", "2")
	if code != 0 {
		t.Fatalf("run alone: exit %d\n%s\n%s", code, stdout, stderr)
	}
	builtin := func(id string) []string {
		b, err := os.ReadFile(filepath.Join(flaky, id, "quick-seed3", "rows.csv"))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, ",dp-obj-lr,") {
				out = append(out, strings.TrimPrefix(line, id))
			}
		}
		return out
	}
	if got, want := builtin("cinever"), builtin("cialone"); len(got) == 0 || !slices.Equal(got, want) {
		t.Errorf("dp-obj-lr rows after the resumed run differ from its rows alone:\n%q\n%q", got, want)
	}
}
