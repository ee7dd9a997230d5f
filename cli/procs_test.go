package cli

// Process tests of exit codes, leftovers and processes (issue 23, section
// 5): each runs the built binary as a user would and looks at its exit
// status, its stderr and what it leaves behind.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dprepro/dprepro/experiments"
)

// startedUnits is what the runner prints when a run starts its units
// ("proc: 240 units (0 already done)"): a refusal "before any unit runs"
// must not have printed it.
const startedUnits = " units ("

// TestProcess_UnusableOut: an --out that cannot hold runs — a file, a
// folder below a file, /proc, a name longer than a file name may be, a
// read-only file system, a run folder on a read-only file system — and a
// spec id longer than a file name are refused with exit 2, naming --out (or
// the spec's file, line and id), before any unit runs, for run, reproduce,
// audit and merge.
func TestProcess_UnusableOut(t *testing.T) {
	bin := sharedBinary(t)
	env := cleanEnv(t)
	spec := writeSpec(t, processSpecSmall)
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	writeT(t, file, []byte("not a folder\n"))
	long := filepath.Join(dir, strings.Repeat("x", 300))
	cases := []struct {
		name, out, want string
	}{
		{"a file", file, "--out " + file + ": not a directory"},
		{"below a file", filepath.Join(file, "runs"), "--out " + filepath.Join(file, "runs") + ": cannot create it: mkdir " + file + ": not a directory"},
		{"/proc", "/proc", "--out /proc: cannot create a file in it"},
		{"a name longer than NAME_MAX", long, "--out " + long + ": cannot create it: mkdir " + long + ": file name too long"},
		{"empty", "", "--out must name a folder"},
	}
	for _, tc := range cases {
		for _, args := range [][]string{
			{"run", spec, "--out", tc.out},
			{"reproduce", "--specs", filepath.Dir(spec), "--out", tc.out},
			{"audit", "laplace", "--out", tc.out},
			{"merge", spec, "--shards", dir, "--out", tc.out},
		} {
			r := runProc(t, env, bin, args...)
			if r.code != 2 || !strings.Contains(r.stderr, "dprepro: "+tc.want) || strings.Contains(r.stderr, startedUnits) {
				t.Errorf("%s: %s: exit %d, stderr:\n%s\nwant exit 2 and %q before any unit", tc.name, args[0], r.code, r.stderr, tc.want)
			}
		}
	}
	if st, err := os.Stat(file); err != nil || st.IsDir() {
		t.Errorf("the file given as --out was changed: %v", err)
	}

	// A spec id longer than a file name: refused at load, naming the
	// file, line and key.
	longID := writeSpec(t, strings.Replace(processSpecSmall, `id = "proc"`, `id = "`+strings.Repeat("p", experiments.MaxIDBytes+1)+`"`, 1))
	out := t.TempDir()
	r := runProc(t, env, bin, "run", longID, "--out", out)
	if r.code != 2 || !strings.Contains(r.stderr, filepath.Base(longID)+":2: id: the id names the run's folder (OUT/<id>/): at most 255 bytes") {
		t.Errorf("a 256-byte id: exit %d\n%s", r.code, r.stderr)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("a refused spec left %d entries in --out", len(ents))
	}

	// Read-only file systems, in a mount namespace of the command's own
	// (unshare -m) so that nothing outside it sees the mounts: as --out,
	// and as the spec's folder under a writable --out.
	if os.Geteuid() != 0 {
		t.Skip("mounting a read-only file system needs root")
	}
	if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
		t.Skipf("unshare -m (a mount namespace) is not available here: %v", err)
	}
	ro := t.TempDir()
	roRun := func(mountAt string, args ...string) procResult {
		t.Helper()
		script := `mkdir -p "$1" && mount -t tmpfs -o ro dprepro-test-ro "$1" && shift && exec "$@"`
		return runProc(t, env, "unshare", append([]string{"-m", "sh", "-c", script, "sh", mountAt, bin}, args...)...)
	}
	r = roRun(ro, "run", spec, "--out", ro)
	if r.code != 2 || !strings.Contains(r.stderr, "dprepro: --out "+ro+": cannot create a file in it: read-only file system") || strings.Contains(r.stderr, startedUnits) {
		t.Errorf("read-only --out: exit %d\n%s", r.code, r.stderr)
	}
	out = t.TempDir()
	r = roRun(filepath.Join(out, "proc"), "run", spec, "--out", out)
	want := "dprepro: --out " + out + ": cannot create the run folder " + filepath.Join(out, "proc", "quick-seed17") + " of proc: mkdir " + filepath.Join(out, "proc", "quick-seed17") + ": read-only file system"
	if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, startedUnits) {
		t.Errorf("run folder on a read-only file system: exit %d\n%s\nwant %q", r.code, r.stderr, want)
	}
}

// TestProcess_MergeRefusals: every refusal of `merge` — a shard folder
// that does not exist, a shard missing, a shard of another run (another
// seed), a shard whose checkpoint is damaged — exits 2 like every other
// bad input, names the shard or what is missing, and writes nothing: no
// --out folder when there was none; in one holding a finished run, not a
// byte changed (no attempt record, no index). A spec whose data file does
// not load is refused the same way.
func TestProcess_MergeRefusals(t *testing.T) {
	bin := sharedBinary(t)
	env := cleanEnv(t)
	spec := writeSpec(t, strings.Replace(processSpecSmall, "replicates = 20", "replicates = 2", 1))
	var shards []string
	for i := 0; i < 2; i++ {
		d := t.TempDir()
		if r := runProc(t, env, bin, "run", spec, "--out", d, "--shard", fmt.Sprintf("%d/2", i)); r.code != 0 {
			t.Fatalf("shard %d: exit %d\n%s", i, r.code, r.stderr)
		}
		shards = append(shards, d)
	}
	other := t.TempDir()
	if r := runProc(t, env, bin, "run", spec, "--out", other, "--shard", "1/2", "--seed", "99"); r.code != 0 {
		t.Fatalf("shard of seed 99: exit %d\n%s", r.code, r.stderr)
	}
	// Seed 99's shard, renamed into seed 17's place: its header says seed 99.
	if err := os.Rename(filepath.Join(other, "proc", "quick-seed99"), filepath.Join(other, "proc", "quick-seed17")); err != nil {
		t.Fatal(err)
	}
	damaged := t.TempDir()
	if err := os.CopyFS(damaged, os.DirFS(shards[1])); err != nil {
		t.Fatal(err)
	}
	units := filepath.Join(damaged, "proc", "quick-seed17", ".checkpoint", "units.jsonl")
	b := mustRead(t, units)
	lines := bytes.SplitN(b, []byte("\n"), 3)
	writeT(t, units, bytes.Join([][]byte{lines[0], []byte(`{"unit": "damaged`), lines[2]}, []byte("\n")))
	missing := filepath.Join(t.TempDir(), "no-such-shard")

	cases := []struct {
		name   string
		shards []string
		want   string
	}{
		{"a shard folder that does not exist", []string{shards[0], missing}, filepath.Join(missing, "proc", "quick-seed17", ".checkpoint", "units.jsonl") + ": no such file or directory"},
		{"a shard missing", shards[:1], "a shard is missing or unfinished: the shards hold 12 of 24 units"},
		{"a shard of another run", []string{shards[0], other}, "was made for another run"},
		{"a damaged shard", []string{shards[0], damaged}, units + " line 2 is damaged"},
	}
	for _, tc := range cases {
		out := filepath.Join(t.TempDir(), "mo", "runs")
		r := runProc(t, env, bin, "merge", spec, "--out", out, "--shards", strings.Join(tc.shards, ","))
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, want 2 and %q:\n%s", tc.name, r.code, tc.want, r.stderr)
		}
		if _, err := os.Stat(filepath.Dir(out)); !os.IsNotExist(err) {
			t.Errorf("%s: a refused merge created its --out folder (%v)", tc.name, err)
		}
	}
	// A spec whose data file does not load: refused before anything is
	// written too.
	dataDir := t.TempDir()
	dataSpec := filepath.Join(dataDir, "my-data.toml")
	writeT(t, dataSpec, []byte(readmeSpec(t)))
	writeT(t, filepath.Join(dataDir, "mydata.csv"), []byte("age,colour,income,outcome\n39,red,1.5,yes\n4O,red,2,no\n"))
	out := filepath.Join(t.TempDir(), "mo")
	if r := runProc(t, env, bin, "merge", dataSpec, "--out", out, "--shards", shards[0]); r.code != 2 || !strings.Contains(r.stderr, `field 1 (age): bad number "4O"`) {
		t.Errorf("merge of a spec whose data does not load: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a merge refused for its data created its --out folder (%v)", err)
	}
	// The two good shards merge (exit 0): the refusals above were the
	// shards', not the command's.
	merged := t.TempDir()
	if r := runProc(t, env, bin, "merge", spec, "--out", merged, "--shards", strings.Join(shards, ",")); r.code != 0 {
		t.Errorf("merge of both shards: exit %d\n%s", r.code, r.stderr)
	}
	// A refused merge into a folder holding that finished run changes
	// nothing in it.
	snapshot := func() map[string]string {
		files := map[string]string{}
		filepath.WalkDir(merged, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files[p] = string(mustRead(t, p))
			}
			return nil
		})
		return files
	}
	before := snapshot()
	if r := runProc(t, env, bin, "merge", spec, "--out", merged, "--shards", shards[0]); r.code != 2 {
		t.Errorf("a refused merge into a finished run's folder: exit %d\n%s", r.code, r.stderr)
	}
	after := snapshot()
	for p, b := range after {
		if before[p] != b {
			t.Errorf("a refused merge wrote %s", p)
		}
	}
	if len(after) != len(before) {
		t.Errorf("a refused merge left %d files, there were %d", len(after), len(before))
	}
}

// TestProcess_ListExitCodes: `list` exits 2 when it shows an ERROR row (a
// corrupt data file) or an INVALID spec, naming them on stderr, and 0 when
// every row is sound (absent files included).
func TestProcess_ListExitCodes(t *testing.T) {
	bin := sharedBinary(t)
	env := cleanEnv(t)
	data, specs := t.TempDir(), t.TempDir()
	writeT(t, filepath.Join(specs, "proc.toml"), []byte(processSpecSmall))
	r := runProc(t, env, bin, "list", "--data-dir", data, "--specs", specs)
	if r.code != 0 || strings.Contains(r.stdout, "ERROR") || strings.Contains(r.stdout, "INVALID") {
		t.Fatalf("list of sound rows: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	writeT(t, filepath.Join(data, "magic04.data"), readFixture(t, "magic_ok.data")) // not the pinned file
	r = runProc(t, env, bin, "list", "--data-dir", data, "--specs", specs)
	if r.code != 2 || !strings.Contains(lineOf(r.stdout, "magic"), "ERROR: CHECKSUM MISMATCH") ||
		!strings.Contains(r.stderr, "dprepro: list: 1 dataset(s) in ERROR: magic (dprepro data verify magic --data-dir "+data+" says which file and why)") {
		t.Errorf("list with a corrupt file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	bad := filepath.Join(specs, "bad.toml")
	writeT(t, bad, []byte(strings.Replace(processSpecSmall, "draws = 500", "draws = -1", 1)))
	r = runProc(t, env, bin, "list", "--data-dir", data, "--specs", specs)
	if r.code != 2 || !strings.Contains(r.stdout, "INVALID: ") ||
		!strings.Contains(r.stderr, "dprepro: list: 1 INVALID spec(s): "+bad) || !strings.Contains(r.stderr, "1 dataset(s) in ERROR: magic") {
		t.Errorf("list with an invalid spec: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestProcess_DataFetchOffline: `data fetch` with no network (a proxy that
// refuses every connection) fails (exit 1) and says, per dataset, that its
// files can be copied into the data folder by hand: which file, from where,
// and how to check it.
func TestProcess_DataFetchOffline(t *testing.T) {
	bin := sharedBinary(t)
	env := append(cleanEnv(t), "HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1", "NO_PROXY=", "no_proxy=")
	data := filepath.Join(t.TempDir(), "data")
	r := runProc(t, env, bin, "data", "fetch", "magic", "--data-dir", data)
	for _, want := range []string{
		"dprepro: magic: the download failed; the files can also be copied into " + data + " by hand:",
		"  magic04.data (or magic04.data.gz), from plain https://archive.ics.uci.edu/ml/machine-learning-databases/magic/magic04.data",
		"  then `dprepro data verify magic --data-dir " + data + "` checks them",
		"dprepro: data fetch: 1 of 1 datasets failed: magic (offline, or behind a proxy? each file can also be copied into " + data + " by hand, as said above)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", r.stderr)
	}
	if ents, _ := os.ReadDir(data); len(ents) != 0 {
		t.Errorf("a failed fetch left %d files in the data folder", len(ents))
	}
}

// TestProcess_WorkerChildrenAndLogCap: an external learner whose worker
// forks a child that holds its stdout and stderr (`sleep 1000 &` in a
// shell) and writes 3 MB to stderr: when the run ends every child is gone
// (checked by pid, not by time), and workers.log holds at most
// DefaultLogLimit bytes per worker, with a note of what was cut.
func TestProcess_WorkerChildrenAndLogCap(t *testing.T) {
	bin := sharedBinary(t)
	dir := t.TempDir()
	script := `sleep 1000 &
echo $! >> children.pid
yes "progress line of a worker that logs too much" | head -c 3000000 >&2
read line; echo '{"type":"hello","protocol":1,"serves":"learner","privacy":"pure"}'
while read line; do id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/'); echo "{\"type\":\"result\",\"id\":$id,\"output\":{\"weights\":[0,0,0,0,0,0,0,0,0,0,0]},\"privacy\":{\"epsilon\":0.1}}"; done
`
	writeT(t, filepath.Join(dir, "worker.sh"), []byte(script))
	spec := filepath.Join(dir, "ext.toml")
	writeT(t, spec, []byte(`schema = 1
id = "ext"
kind = "cv-tuning"
seed = 1

[[methods]]
name = "ext"
serves = "learner"
command = ["sh", "worker.sh"]
timeout = "1m"

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
`))
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runBin(t, bin, nil, "run", spec, "--out", out, "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var pids []int
	for _, f := range strings.Fields(string(mustRead(t, filepath.Join(dir, "children.pid")))) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if len(pids) == 0 {
		t.Fatal("no worker started a child")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: cannot tell a process's liveness by its pid here")
	}
	// The command has exited: each child must be gone. Signals take
	// effect asynchronously, so wait — with a guard of a minute against a
	// child that nobody killed (it sleeps 1000 s).
	guard := time.Now().Add(time.Minute)
	for _, pid := range pids {
		for processAlive(pid) {
			if time.Now().After(guard) {
				t.Errorf("the worker's child %d still runs after the run ended", pid)
				exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	log := string(mustRead(t, filepath.Join(out, "ext", "quick-seed1", "workers.log")))
	notes := strings.Count(log, "[workers.log: this worker's stderr reached its cap of 1048576 bytes: ")
	if notes != len(pids) {
		t.Errorf("%d notes of a cut for %d workers", notes, len(pids))
	}
	// Each worker: at most the cap of its lines, then the note with its 8
	// last lines; and a header line per run.
	if max := len(pids)*(1<<20+2000) + 200; len(log) > max {
		t.Errorf("workers.log has %d bytes, want at most %d (%d workers' caps)", len(log), max, len(pids))
	}
}

// processAlive reports whether process pid exists and is not a zombie (a
// killed orphan is a zombie until init reaps it, which a container's init
// may never do).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || (b[i+2] != 'Z' && b[i+2] != 'X')
}

// TestTestScript_RunsEveryPass runs scripts/test.sh with stand-in go,
// gofmt and Debian-packages scripts: when go test, the race detector and
// gofmt fail, every pass still runs (the Go extension's and the example
// kind's go vet and go test after the failed go test, the race pass after
// that), the failed passes
// are listed at the end, and the exit status is 1; when nothing fails it
// is 0.
func TestTestScript_RunsEveryPass(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not on PATH")
	}
	root := t.TempDir()
	script := mustRead(t, filepath.Join("..", "scripts", "test.sh"))
	for name, body := range map[string]string{
		"scripts/test.sh":         string(script),
		"scripts/debian-deps.sh":  "#!/bin/sh\necho debian-deps >> \"$LOG\"\n",
		"examples/go-extension/x": "",
		"examples/kind-example/x": "",
		// The stand-ins log every call; FAIL_RE names the calls that fail.
		"stub/go": `#!/bin/sh
echo "go $* ($(basename "$(pwd)"))" >> "$LOG"
case "$1 $2" in
"env CGO_ENABLED") echo 1; exit 0 ;;
"env CC") echo cc-stub; exit 0 ;;
esac
if [ -n "$FAIL_RE" ] && echo "go $*" | grep -Eq "$FAIL_RE"; then exit 1; fi
exit 0
`,
		"stub/gofmt":   "#!/bin/sh\necho \"gofmt $*\" >> \"$LOG\"\n[ -n \"$GOFMT_LISTS\" ] && echo \"$GOFMT_LISTS\"\nexit 0\n",
		"stub/cc-stub": "#!/bin/sh\nexit 0\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(failRE, gofmtLists string) (int, string, string) {
		t.Helper()
		log := filepath.Join(t.TempDir(), "log")
		env := []string{"PATH=" + filepath.Join(root, "stub") + ":" + os.Getenv("PATH"), "LOG=" + log,
			"FAIL_RE=" + failRE, "GOFMT_LISTS=" + gofmtLists, "DPREPRO_DATA=/data"}
		code, _, stderr := runBinIn(t, root, "bash", env, filepath.Join(root, "scripts", "test.sh"))
		b, _ := os.ReadFile(log)
		return code, string(b), stderr
	}

	code, calls, stderr := run(`^go test -timeout 20m|^go test -race`, "bad.go")
	for _, want := range []string{
		"go mod download",
		"debian-deps",
		"gofmt -l .",
		"go vet ./... (" + filepath.Base(root) + ")",
		"go test -timeout 20m ./... (" + filepath.Base(root) + ")",
		"go vet ./... (go-extension)",
		"go test -timeout 10m ./... (go-extension)",
		"go vet ./... (kind-example)",
		"go test -timeout 10m ./... (kind-example)",
		"go test -race -timeout 10m ./runner ./core/mech ./results ./methods/external",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("the pass %q did not run; the calls:\n%s", want, calls)
		}
	}
	want := "test.sh: 3 pass(es) failed:\n  - gofmt -l .\n  - go test ./...\n  - the race detector (go test -race)\n"
	if code != 1 || !strings.HasSuffix(stderr, want) {
		t.Errorf("exit %d, stderr ending\n%s\nwant exit 1 and the end\n%s", code, stderr, want)
	}

	code, _, stderr = run("", "")
	if code != 0 || !strings.HasSuffix(stderr, "test.sh: every pass succeeded\n") {
		t.Errorf("nothing failing: exit %d\n%s", code, stderr)
	}
}
