package cli

// Process tests: a run that did not finish is never hidden by the report
// or the index, whichever process writes them (issue 23, part 2).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/internal/mdcheck"
	"github.com/dprepro/dprepro/results"
)

// modeWorker is an external learner (the worker protocol, in sh) whose
// behaviour is set by files in its folder (the spec's): "crash" exits 3
// on its first call, after a line on stderr holding HTML — so every unit
// that calls it fails, however the pool spreads a unit's calls over fresh
// processes; "hang" writes its PID to "blocked" and sleeps from its
// second call on; otherwise it replies.
const modeWorker = `read line; echo '{"type":"hello","protocol":1,"serves":"learner","privacy":"pure"}'
n=0
while read line; do
  n=$((n+1)); id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  if [ -f hang ] && [ $n -ge 2 ]; then echo $$ > blocked.tmp; mv blocked.tmp blocked; exec sleep 600; fi
  if [ -f crash ]; then echo "boom <script>alert(1)</script>" >&2; exit 3; fi
  echo "{\"type\":\"result\",\"id\":$id,\"output\":{\"weights\":[0,0,0,0,0,0,0,0,0,0,0]},\"privacy\":{\"epsilon\":0.1}}"
done
`

// extSpec runs modeWorker beside objective perturbation (8 units, 4 of
// them the worker's); its text tries to reach a Markdown viewer as HTML.
const extSpec = `schema = 1
id = "ext"
title = "Ext 2020 <script>alert('title')</script>"
paper = "A paper with ` + "`" + `backticks` + "`" + ` and <img src=x onerror=alert(1)>"
kind = "cv-tuning"
seed = 1
notes = """
Deviation: none.
` + "```" + `
<script>alert("notes")</script>
"""

[[methods]]
name = "ext"
serves = "learner"
command = ["sh", "worker.sh"]
timeout = "1h"

[data]
datasets = ["magic"]
synthetic = "always"
subsample = 600

[cv]
repetitions = 1
folds = 4

[tuning]
lambdas = [0.01, 0.1]
alphas = [1.0]
delta = 0.01
methods = ["alphaSplit"]
learners = ["objective-perturbation", "ext"]

[output]
bootstrap = 100

[[claims]]
id = "ext-auc"
source = "Table <b>1</b>"
statement = "ext reaches an AUC of 0.1 [x](javascript:alert(1)) | pipe"
rule = "at_least"
metric = "auc"
method = "alphaSplit/ext"
value = 0.1
`

// swapClaim gives ipumsSpec a claim.
const swapClaim = `
[[claims]]
id = "swap-coverage"
source = "Table 5"
statement = "coverage at least 0.5"
rule = "at_least"
metric = "coverage"
method = "dp-output-lr"
value = 0.5
`

// writeFilesIn writes name → content into dir.
func writeFilesIn(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readIndex reads OUT/index.json.
func readIndex(t *testing.T, out string) map[string]indexEntry {
	t.Helper()
	var es []indexEntry
	if err := json.Unmarshal(mustRead(t, filepath.Join(out, "index.json")), &es); err != nil {
		t.Fatal(err)
	}
	m := map[string]indexEntry{}
	for _, e := range es {
		m[e.Dir] = e
	}
	return m
}

// checkSafeMarkdown fails t for anything in the Markdown file path that
// would reach a reader as HTML or a scheme link.
func checkSafeMarkdown(t *testing.T, path string) {
	t.Helper()
	for _, p := range mdcheck.Unsafe(string(mustRead(t, path))) {
		t.Errorf("%s: %s", path, p)
	}
}

// TestReport_FailedRuns: reproduce --specs DIR with a spec whose run fails
// (its external worker crashes), one that cannot be built (a malformed
// data file) and one that runs: the command fails, and the report it
// writes names both failures at its top, in red, with their errors and
// what did not run, their claims counted as not run — and so does
// `dprepro report OUT` in a new process, byte for byte. The index records
// both with their full errors. Fixed, the same command finishes them: the
// records are gone and the report is whole. A spec that then cannot be
// built again, after a finished run of it, is named as not run, its
// earlier run shown but not counted.
func TestReport_FailedRuns(t *testing.T) {
	bin := sharedBinary(t)
	env := cleanEnv(t)
	specs, data, out := t.TempDir(), t.TempDir(), t.TempDir()
	writeFilesIn(t, specs, map[string]string{"a-ext.toml": extSpec, "worker.sh": modeWorker, "crash": "",
		"b-swap.toml": ipumsSpec + swapClaim, "c-proc.toml": processSpecSmall})
	// 57 features and a label IPUMS-US does not allow, which the error
	// quotes (and the index's status with it).
	bad := strings.Repeat("0 ", 57) + "<script>\n"
	writeFilesIn(t, data, map[string]string{"ipums-us.txt": bad})
	reproduce := func() procResult {
		return runProc(t, env, bin, "reproduce", "--specs", specs, "--data-dir", data, "--out", out, "--workers", "2", "--heartbeat", "1h")
	}
	r := reproduce()
	// The exit status of a mix of a failed run and bad input is not this
	// test's (it is 2 today: joinFailures' errors.Join lets errors.As
	// find the usage error).
	if r.code == 0 || !strings.Contains(r.stderr, "ext: FAILED") || !strings.Contains(r.stderr, "swap: FAILED") {
		t.Fatalf("reproduce: exit %d, want a failure naming both\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "2 of the runs in "+out+" did not finish") {
		t.Errorf("stderr does not say the report names 2 runs that did not finish:\n%s", r.stderr)
	}
	ext, swap := filepath.Join(out, "ext", "quick-seed1"), filepath.Join(out, "swap", "quick-seed5")
	for dir, want := range map[string]string{ext: results.AttemptFailed, swap: results.AttemptNotRun} {
		a, err := results.ReadAttempt(dir)
		if err != nil || a == nil || a.State != want || len(a.Claims) != 1 {
			t.Errorf("%s: attempt %+v (%v), want %s with 1 claim", dir, a, err, want)
		}
	}
	if a, _ := results.ReadAttempt(filepath.Join(out, "proc", "quick-seed17")); a != nil {
		t.Errorf("the finished run keeps a record: %+v", a)
	}

	page := string(mustRead(t, filepath.Join(out, "report", "index.html")))
	md := string(mustRead(t, filepath.Join(out, "report", "report.md")))
	top, glance := strings.Index(page, `<section class="failed" id="unfinished">`), strings.Index(page, `id="overview"`)
	if top < 0 || top > glance {
		t.Fatalf("index.html: no list of the runs that did not finish before the overview (%d, %d)", top, glance)
	}
	for _, want := range []string{
		"2 runs did not finish: this report is incomplete",
		`<div class="total notrun"><b>2</b>not run</div>`,
		"failed at", "4 of 8 units failed", "boom &lt;script&gt;alert(1)&lt;/script&gt;", "its 1 claim; rows.csv, summary.csv, figures and tables; 4 of 8 units are checkpointed",
		"not run: its experiment could not be built", "unknown label &#34;&lt;script&gt;&#34;", "no unit of this attempt ran",
	} {
		if !strings.Contains(page[top:glance], want) {
			t.Errorf("index.html's top lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Error("index.html holds a <script")
	}
	mtop, mglance := strings.Index(md, "## ⛔ 2 runs did not finish: this report is incomplete"), strings.Index(md, "## At a glance")
	if mtop < 0 || mtop > mglance {
		t.Fatalf("report.md: no list of the runs that did not finish before the overview (%d, %d)", mtop, mglance)
	}
	for _, want := range []string{"**Claims:** ⛔ 2 not run", "| `ext-auc` | Table &lt;b&gt;1&lt;/b&gt; |", "| `swap-coverage` | Table 5 | coverage at least 0.5 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	checkSafeMarkdown(t, filepath.Join(out, "report", "report.md"))
	checkSafeMarkdown(t, filepath.Join(out, "index.md"))
	if !strings.Contains(string(mustRead(t, filepath.Join(out, "index.md"))), `unknown label "&lt;script&gt;"`) {
		t.Error("index.md does not show the error as written")
	}

	// The report written later by another process: the same.
	r = runProc(t, env, bin, "report", out)
	if r.code != 0 || !strings.Contains(r.stderr, "ext/quick-seed1 (failed), swap/quick-seed5 (not run)") {
		t.Errorf("report: exit %d\n%s", r.code, r.stderr)
	}
	if again := string(mustRead(t, filepath.Join(out, "report", "report.md"))); again != md {
		t.Error("dprepro report OUT wrote another report.md than reproduce")
	}

	idx := readIndex(t, out)
	if e := idx["ext/quick-seed1"]; !strings.HasPrefix(e.Status, "failed: ") || !strings.Contains(e.Error, "boom <script>") {
		t.Errorf("index entry of ext: %+v", e)
	}
	if e := idx["swap/quick-seed5"]; !strings.HasPrefix(e.Status, "not run (an earlier run's files, if any, are untouched): ") || !strings.Contains(e.Error, `unknown label "<script>"`) {
		t.Errorf("index entry of swap: %+v", e)
	}

	// Fixed: the same command finishes both, and the report is whole.
	os.Remove(filepath.Join(specs, "crash"))
	writeIPUMS(t, filepath.Join(data, "ipums-us.txt"), 400, 1)
	if r = reproduce(); r.code != 0 || !strings.Contains(r.stderr, "ext: resuming, 4 of 8 units already done") {
		t.Fatalf("fixed: exit %d\n%s", r.code, r.stderr)
	}
	for _, d := range []string{ext, swap} {
		if _, err := os.Stat(filepath.Join(d, results.AttemptFile)); !os.IsNotExist(err) {
			t.Errorf("%s: the record of the failed attempt is still there (%v)", d, err)
		}
	}
	page = string(mustRead(t, filepath.Join(out, "report", "index.html")))
	if strings.Contains(page, `id="unfinished"`) || !strings.Contains(page, `<div class="total notrun"><b>0</b>not run</div>`) {
		t.Error("the report of the finished runs still names runs that did not finish")
	}
	for dir, e := range readIndex(t, out) {
		if e.Status != "complete" || e.Error != "" {
			t.Errorf("index entry of %s: %+v", dir, e)
		}
	}

	// Broken again after a finished run: not run, the earlier run shown,
	// not counted.
	writeFilesIn(t, data, map[string]string{"ipums-us.txt": bad})
	if r = reproduce(); r.code != 2 {
		t.Fatalf("broken again: exit %d, want 2\n%s", r.code, r.stderr)
	}
	page = string(mustRead(t, filepath.Join(out, "report", "index.html")))
	for _, want := range []string{"1 run did not finish", "(and 1 earlier one, shown but not counted)", `<div class="total notrun"><b>1</b>not run</div>`,
		"Not counted: the latest attempt at this run could not be built"} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(swap, "manifest.json")); err != nil {
		t.Errorf("the earlier run's files were touched: %v", err)
	}
}
