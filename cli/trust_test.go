package cli

// Process tests of the built binary: results whose provenance cannot lie.
// Each runs bin/dprepro as a user would, with its own
// environment, and looks at the files and exit codes.

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dprepro/dprepro/results"
)

var (
	builtOnce sync.Once
	builtBin  string
	builtErr  error
)

// TestMain removes the binary that sharedBinary built.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// sharedBinary builds the command once for all process tests of this file.
func sharedBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dprepro-bin")
		if err != nil {
			builtErr = err
			return
		}
		builtBin = filepath.Join(dir, "dprepro")
		out, err := exec.Command("go", "build", "-buildvcs=true", "-o", builtBin, "../cmd/dprepro").CombinedOutput()
		if err != nil {
			builtErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return builtBin
}

// cleanEnv is the environment of a newcomer: no DPREPRO_DATA, and an empty
// per-user cache, so that no data directory is named or found.
func cleanEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "DPREPRO_DATA=") || strings.HasPrefix(kv, "XDG_CACHE_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_CACHE_HOME="+t.TempDir())
}

type procResult struct {
	code           int
	stdout, stderr string
	took           time.Duration // wall-clock time, which a loaded machine stretches: for logs only
	cpu            time.Duration // user and system CPU time, the process's work
}

func runProc(t *testing.T, env []string, bin string, args ...string) procResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	r := procResult{stdout: o.String(), stderr: e.String(), took: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		r.cpu = ps.UserTime() + ps.SystemTime()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return r
}

func realData(t *testing.T) string {
	t.Helper()
	d := os.Getenv("DPREPRO_DATA")
	if d == "" {
		t.Skip("DPREPRO_DATA is not set: this test needs the real UCI files (CI sets it to ../shared/datasets)")
	}
	return d
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTrust_StandInThenRealData is the newcomer's path: a run
// with no data directory (stand-ins), then the same command with the data
// directory named. Every unit is recomputed (stderr says the data changed),
// summary.csv and manifest.json both say real, and the bytes equal a fresh
// real-data run.
func TestTrust_StandInThenRealData(t *testing.T) {
	bin := sharedBinary(t)
	data := realData(t)
	spec := writeSpec(t, tinySpec)
	out := t.TempDir()
	env := cleanEnv(t)

	r := runProc(t, env, bin, "run", spec, "--out", out, "--workers", "2")
	if r.code != 0 {
		t.Fatalf("stand-in run: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "data: ") || !strings.Contains(r.stderr, "1 of 1 runs used labelled SYNTHETIC stand-ins") {
		t.Errorf("the stand-in run does not print its data folder and the stand-in count:\n%s", r.stderr)
	}
	dir := filepath.Join(out, "tiny", "quick-seed3")
	if !bytes.Contains(mustRead(t, filepath.Join(dir, "summary.csv")), []byte(",synthetic,")) {
		t.Fatal("the stand-in run's summary does not say synthetic")
	}

	r = runProc(t, env, bin, "run", spec, "--out", out, "--workers", "2", "--data-dir", data)
	if r.code != 0 {
		t.Fatalf("real run: exit %d\n%s", r.code, r.stderr)
	}
	if !regexp.MustCompile(`data: magic changed from synthetic \S+ to real magic04\.data sha256 [0-9a-f]{64}`).MatchString(r.stderr) {
		t.Errorf("stderr does not say that the data changed:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "resuming") || strings.Contains(r.stderr, "SYNTHETIC") {
		t.Errorf("the real-data run resumed or used stand-ins:\n%s", r.stderr)
	}
	rows, sum, m := readRun(t, dir)
	if bytes.Contains(sum, []byte("synthetic")) || !bytes.Contains(sum, []byte(",real,")) {
		t.Error("summary.csv of the real-data run still mentions synthetic data")
	}
	if m.Datasets[0].Source != "real" || m.Units.Resumed != 0 || m.Units.Computed != m.Units.Total {
		t.Errorf("manifest: source %q, units %+v: want real and every unit computed", m.Datasets[0].Source, m.Units)
	}

	fresh := t.TempDir()
	if r := runProc(t, env, bin, "run", spec, "--out", fresh, "--workers", "1", "--data-dir", data); r.code != 0 {
		t.Fatalf("fresh real run: exit %d\n%s", r.code, r.stderr)
	}
	frows, fsum, _ := readRun(t, filepath.Join(fresh, "tiny", "quick-seed3"))
	if !bytes.Equal(rows, frows) || !bytes.Equal(sum, fsum) {
		t.Error("the run made after the stand-in run differs from a fresh real-data run")
	}
}

// ipumsSpec is a small ci-coverage run on a user-supplied IPUMS-US extract
// (no pinned checksum), whose file the test swaps.
const ipumsSpec = `schema = 1
id = "swap"
kind = "ci-coverage"
seed = 5

[data]
datasets = ["ipums-us"]
synthetic = "never"
intercept = false

[confidence_intervals]
methods = ["dp-output-lr"]
n1 = 150
d1 = 3
sweep = "eps1"
values = [1.0]
replicates = 2
mc_samples = 50
vi_fits = 4
block_size = 2

[output]
bootstrap = 100
`

// writeIPUMS writes an IPUMS-US-shaped matrix (57 0/1 features and a 0/1
// label) of n seeded rows.
func writeIPUMS(t *testing.T, path string, n int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for i := 0; i < n; i++ {
		for j := 0; j < 57; j++ {
			fmt.Fprintf(&b, "%d ", rng.IntN(2))
		}
		fmt.Fprintf(&b, "%d\n", rng.IntN(2))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTrust_DataFileSwapped: an unpinned data file replaced between runs
// is a new run identity: every unit is recomputed, and the manifest holds
// the new file's digest with the numbers made from it.
func TestTrust_DataFileSwapped(t *testing.T) {
	bin := sharedBinary(t)
	data := t.TempDir()
	file := filepath.Join(data, "ipums-us.txt")
	writeIPUMS(t, file, 300, 1)
	spec := writeSpec(t, ipumsSpec)
	out := t.TempDir()
	env := cleanEnv(t)
	if r := runProc(t, env, bin, "run", spec, "--out", out, "--data-dir", data); r.code != 0 {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	dir := filepath.Join(out, "swap", "quick-seed5")
	_, sum1, m1 := readRun(t, dir)
	writeIPUMS(t, file, 300, 2)
	r := runProc(t, env, bin, "run", spec, "--out", out, "--data-dir", data)
	if r.code != 0 {
		t.Fatalf("second run: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "data: ipums-us changed from real ipums-us.txt sha256 "+m1.Datasets[0].Files[0].SHA256) {
		t.Errorf("stderr does not say the file changed:\n%s", r.stderr)
	}
	_, sum2, m2 := readRun(t, dir)
	if m2.Units.Resumed != 0 || m2.Datasets[0].Files[0].SHA256 == m1.Datasets[0].Files[0].SHA256 || bytes.Equal(sum1, sum2) {
		t.Errorf("after the swap: units %+v, digest %s (was %s), summary changed %v", m2.Units,
			m2.Datasets[0].Files[0].SHA256, m1.Datasets[0].Files[0].SHA256, !bytes.Equal(sum1, sum2))
	}
}

// TestTrust_ConcurrentRuns: a second process aimed at a run folder in use
// is refused at once (exit 2) naming the holder; the first finishes with
// the bytes of a solo run. "At once" without a clock: the first run is
// frozen (SIGSTOP) while it holds the folder, so a second run that waited
// for the lock would wait for ever — it must return while the first is
// frozen (a guard of a minute thaws the first and fails the test).
func TestTrust_ConcurrentRuns(t *testing.T) {
	bin := sharedBinary(t)
	spec := writeSpec(t, processSpec)
	env := cleanEnv(t)
	solo := t.TempDir()
	if r := runProc(t, env, bin, "run", spec, "--out", solo, "--workers", "2"); r.code != 0 {
		t.Fatalf("solo run: exit %d\n%s", r.code, r.stderr)
	}
	out := t.TempDir()
	first := exec.Command(bin, "run", spec, "--out", out, "--workers", "1", "--heartbeat", "1h")
	first.Env = env
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(out, "proc", "quick-seed17", ".checkpoint", "units.jsonl")
	waitFor(t, func() bool { b, _ := os.ReadFile(ckpt); return bytes.Count(b, []byte("\n")) > 2 }, first)
	if err := first.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var waited atomic.Bool
	guard := time.AfterFunc(time.Minute, func() { waited.Store(true); first.Process.Signal(syscall.SIGCONT) })
	r := runProc(t, env, bin, "run", spec, "--out", out, "--workers", "1")
	guard.Stop()
	if err := first.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if r.code != 2 || !strings.Contains(r.stderr, "in use by another dprepro (PID "+strconv.Itoa(first.Process.Pid)) {
		t.Errorf("second run: exit %d, stderr %q; want exit 2 naming PID %d", r.code, r.stderr, first.Process.Pid)
	}
	if waited.Load() {
		t.Errorf("the refusal came only after the holder was thawed (a minute): it waited for the lock")
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first run: %v\n%s", err, firstErr.String())
	}
	rows, sum, _ := readRun(t, filepath.Join(out, "proc", "quick-seed17"))
	srows, ssum, _ := readRun(t, filepath.Join(solo, "proc", "quick-seed17"))
	if !bytes.Equal(rows, srows) || !bytes.Equal(sum, ssum) {
		t.Error("the run that held the folder differs from a solo run")
	}
}

// waitFor polls cond for up to 60 s while cmd runs.
func waitFor(t *testing.T, cond func() bool, cmd *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("condition not reached within 60 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTrust_ProfilesKeptApart: quick, then paper, then quick again into one
// --out: all three runs' outputs are present and intact (the second quick
// run leaves the paper run's files untouched), and the index lists both
// folders.
func TestTrust_ProfilesKeptApart(t *testing.T) {
	bin := sharedBinary(t)
	spec := writeSpec(t, strings.Replace(processSpecSmall, "[profile.quick.output]", "[profile.paper.mechanisms]\nreplicates = 3\n\n[profile.quick.output]", 1))
	env := cleanEnv(t)
	out := t.TempDir()
	snapshot := func(dir string) map[string][]byte {
		files := map[string][]byte{}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.Contains(p, ".checkpoint") && filepath.Base(p) != ".lock" {
				files[p] = mustRead(t, p)
			}
			return nil
		})
		return files
	}
	for _, p := range []string{"quick", "paper"} {
		if r := runProc(t, env, bin, "run", spec, "--out", out, "--profile", p); r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", p, r.code, r.stderr)
		}
	}
	paper := snapshot(filepath.Join(out, "proc", "paper-seed17"))
	quick := snapshot(filepath.Join(out, "proc", "quick-seed17"))
	if len(paper) < 4 || len(quick) < 4 {
		t.Fatalf("outputs missing: paper %d files, quick %d files", len(paper), len(quick))
	}
	if r := runProc(t, env, bin, "run", spec, "--out", out, "--profile", "quick"); r.code != 0 {
		t.Fatalf("quick again: exit %d\n%s", r.code, r.stderr)
	}
	after := snapshot(filepath.Join(out, "proc", "paper-seed17"))
	for p, b := range paper {
		if !bytes.Equal(after[p], b) {
			t.Errorf("%s changed after the second quick run", p)
		}
	}
	_, qsum, qm := readRun(t, filepath.Join(out, "proc", "quick-seed17"))
	if qm.Profile != "quick" || !bytes.Equal(qsum, quick[filepath.Join(out, "proc", "quick-seed17", "summary.csv")]) {
		t.Errorf("the quick run's summary changed between identical runs (profile %q)", qm.Profile)
	}
	index := string(mustRead(t, filepath.Join(out, "index.json")))
	for _, d := range []string{"proc/quick-seed17", "proc/paper-seed17"} {
		if !strings.Contains(index, `"dir": "`+d+`"`) {
			t.Errorf("index.json does not list %s:\n%s", d, index)
		}
	}
}

// TestTrust_NamedDataDirMissing: a named data folder that does not exist is
// exit 2 at once, naming it, through the flag and the environment.
func TestTrust_NamedDataDirMissing(t *testing.T) {
	bin := sharedBinary(t)
	spec := writeSpec(t, tinySpec)
	env := cleanEnv(t)
	r := runProc(t, env, bin, "run", spec, "--out", t.TempDir(), "--data-dir", "/nonexistent/data")
	if r.code != 2 || !strings.Contains(r.stderr, "/nonexistent/data") || !strings.Contains(r.stderr, "dprepro data fetch") {
		t.Errorf("--data-dir /nonexistent/data: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runProc(t, append(env, "DPREPRO_DATA=/nonexistent/env"), bin, "run", spec, "--out", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "/nonexistent/env") || !strings.Contains(r.stderr, "DPREPRO_DATA") {
		t.Errorf("DPREPRO_DATA=/nonexistent/env: exit %d, stderr %q", r.code, r.stderr)
	}
	// A named folder that exists but lacks the file: exit 2 naming both.
	r = runProc(t, env, bin, "run", spec, "--out", t.TempDir(), "--data-dir", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "magic04.data") || !strings.Contains(r.stderr, "dprepro data fetch") {
		t.Errorf("empty named folder: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestTrust_OversizedSpecs: counts far beyond any machine are refused at
// load in under a second of CPU (the process's whole work, start-up
// included; wall-clock time would be stretched by a loaded machine),
// naming the key — never a runtime out-of-memory crash or a silent hang.
func TestTrust_OversizedSpecs(t *testing.T) {
	bin := sharedBinary(t)
	env := cleanEnv(t)
	af, err := os.ReadFile(filepath.Join("..", "experiments", "af17-kdd-logistic.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, spec, key string
	}{
		{"steps", regexp.MustCompile(`(?m)^steps = \d+`).ReplaceAllString(string(af), "steps = 1000000000000"), "accuracy_first.steps"},
		{"bootstrap", strings.Replace(processSpecSmall, "[output]\nbootstrap = 200", "[output]\nbootstrap = 2000000000", 1), "output.bootstrap"},
		{"dim", strings.Replace(processSpecSmall, "replicates = 20", "replicates = 20\ndim = 2000000000", 1), "mechanisms.dim"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runProc(t, env, bin, "run", writeSpec(t, c.spec), "--out", t.TempDir(), "--profile", "paper")
			if r.code != 2 || !strings.Contains(r.stderr, c.key) || r.cpu > time.Second {
				t.Errorf("exit %d after %v of CPU (%v wall-clock), stderr %q; want exit 2 within 1 s of CPU naming %s", r.code, r.cpu, r.took, r.stderr, c.key)
			}
			if strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("runtime crash: %s", r.stderr)
			}
		})
	}
}

// longUnitSpec has 6 units of about 1.5 s each on one worker (7 million
// draws of a 10-coordinate Laplace mechanism per unit), so a signal lands
// in the middle of a unit.
const longUnitSpec = `schema = 1
id = "long"
kind = "mechanism-bounds"
seed = 23

[mechanisms]
mechanisms = ["laplace"]
epsilons = [0.5, 2.0]
levels = [0.1]
replicates = 3
draws = 7000000

[output]
bootstrap = 200
`

// TestTrust_InterruptMidUnit: SIGINT while a long unit runs stops the
// process within 2 s of CPU (exit 130, the message says how to resume);
// the rerun resumes the finished units and writes the bytes of an
// uninterrupted run. A second SIGINT exits at once (within 1 s of CPU).
// Promptness is the process's CPU time after the signal (cpuAfter), not
// wall-clock time, which a loaded machine stretches: the unit is 1.5 s of
// work, so a process that finished it before stopping fails.
func TestTrust_InterruptMidUnit(t *testing.T) {
	bin := sharedBinary(t)
	spec := writeSpec(t, longUnitSpec)
	env := cleanEnv(t)
	whole := t.TempDir()
	if r := runProc(t, env, bin, "run", spec, "--out", whole, "--workers", "1"); r.code != 0 {
		t.Fatalf("uninterrupted run: exit %d\n%s", r.code, r.stderr)
	}
	out := t.TempDir()
	cmd := exec.Command(bin, "run", spec, "--out", out, "--workers", "1", "--heartbeat", "1h")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(out, "long", "quick-seed23", ".checkpoint", "units.jsonl")
	// One unit finished: the next has just started.
	waitFor(t, func() bool { b, _ := os.ReadFile(ckpt); return bytes.Count(b, []byte("\n")) >= 2 }, cmd)
	time.Sleep(300 * time.Millisecond)
	took, err := cpuAfter(cmd, syscall.SIGINT)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("interrupted run: %v, want exit 130\n%s", err, stderr.String())
	}
	if took > 2*time.Second {
		t.Errorf("the run went on for %v of %s after SIGINT (want < 2 s)", took, cpuClock)
	}
	if !strings.Contains(stderr.String(), "run the same command again to resume") {
		t.Errorf("no resume advice:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "long", "quick-seed23", "manifest.json")); err == nil {
		t.Error("an interrupted run wrote manifest.json")
	}
	r := runProc(t, env, bin, "run", spec, "--out", out, "--workers", "1")
	if r.code != 0 || !strings.Contains(r.stderr, "resuming") {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	rows, sum, _ := readRun(t, filepath.Join(out, "long", "quick-seed23"))
	wrows, wsum, _ := readRun(t, filepath.Join(whole, "long", "quick-seed23"))
	if !bytes.Equal(rows, wrows) || !bytes.Equal(sum, wsum) {
		t.Error("the resumed run differs from the uninterrupted run")
	}

	// Two interrupts: the second exits at once.
	againOut := t.TempDir()
	again := exec.Command(bin, "run", spec, "--out", againOut, "--workers", "1", "--heartbeat", "1h")
	again.Env = env
	var e2 bytes.Buffer
	again.Stderr = &e2
	if err := again.Start(); err != nil {
		t.Fatal(err)
	}
	// Running (its checkpoint's header is written, so its signal
	// handler is set): then the first interrupt, then the second.
	againCkpt := filepath.Join(againOut, "long", "quick-seed23", ".checkpoint", "units.jsonl")
	waitFor(t, func() bool { _, err := os.Stat(againCkpt); return err == nil }, again)
	again.Process.Signal(syscall.SIGINT)
	time.Sleep(20 * time.Millisecond)
	took, err = cpuAfter(again, syscall.SIGINT)
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || took > time.Second {
		t.Errorf("second interrupt: %v after %v of %s\n%s", err, took, cpuClock, e2.String())
	}
}

// cpuAfter sends sig to the running cmd, waits for it to exit and returns
// the CPU time (user and system, all threads) the process used after the
// signal — the work it did, which a loaded machine does not inflate the
// way it stretches wall-clock time — and Wait's error. Without procfs it
// returns the wall-clock time instead (cpuClock says which).
func cpuAfter(cmd *exec.Cmd, sig os.Signal) (time.Duration, error) {
	before, ok := procCPU(cmd.Process.Pid)
	sent := time.Now()
	// An error here is a process that has already exited (the first of
	// two interrupts may have ended it): Wait says how.
	_ = cmd.Process.Signal(sig)
	err := cmd.Wait()
	if !ok || cmd.ProcessState == nil {
		return time.Since(sent), err
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() - before, err
}

// cpuClock names cpuAfter's measure.
var cpuClock = func() string {
	if _, ok := procCPU(os.Getpid()); ok {
		return "CPU"
	}
	return "wall-clock time (no procfs)"
}()

// procCPU returns the user and system CPU time process pid has used so
// far (all its threads), from /proc/PID/stat: utime and stime, fields 14
// and 15, in ticks of 1/100 s (USER_HZ, which Linux fixes at 100 for what
// it reports to user space).
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

// TestTrust_CheckRefusesStandInAgainstReal: `check` of a stand-in run
// against a real-data reference is refused (exit 2) and never advises
// refreshing the references; a candidate whose means moved by 0.5 and
// whose CIs were inflated to ±100 fails (exit 1).
func TestTrust_CheckRefusesStandInAgainstReal(t *testing.T) {
	bin := sharedBinary(t)
	data := realData(t)
	spec := writeSpec(t, tinySpec)
	env := cleanEnv(t)
	realOut, standOut := t.TempDir(), t.TempDir()
	if r := runProc(t, env, bin, "run", spec, "--out", realOut, "--data-dir", data); r.code != 0 {
		t.Fatalf("real run: exit %d\n%s", r.code, r.stderr)
	}
	if r := runProc(t, env, bin, "run", spec, "--out", standOut); r.code != 0 {
		t.Fatalf("stand-in run: exit %d\n%s", r.code, r.stderr)
	}
	ref := filepath.Join(t.TempDir(), "ref")
	runDir := filepath.Join(realOut, "tiny", "quick-seed3")
	for _, f := range []string{"summary.csv", "manifest.json"} {
		if err := os.MkdirAll(filepath.Join(ref, "tiny"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(ref, "tiny", f), mustRead(t, filepath.Join(runDir, f)), 0o644)
	}
	r := runProc(t, env, bin, "check", standOut, "--against", ref)
	if r.code != 2 || strings.Contains(r.stdout+r.stderr, "make references") {
		t.Errorf("stand-in vs real reference: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runProc(t, env, bin, "check", realOut, "--against", ref); r.code != 0 {
		t.Errorf("the real run against itself: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// The inflated candidate: a copy of the real run with every mean moved
	// by 0.5 and every CI widened to ±100.
	bad := filepath.Join(t.TempDir(), "tiny", "quick-seed3")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	rows, err := results.ReadSummaryCSV(filepath.Join(runDir, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].Mean += 0.5
		rows[i].CILow, rows[i].CIHigh = rows[i].Mean-100, rows[i].Mean+100
	}
	b, err := results.EncodeSummaryCSV(rows)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bad, "summary.csv"), b, 0o644)
	os.WriteFile(filepath.Join(bad, "manifest.json"), mustRead(t, filepath.Join(runDir, "manifest.json")), 0o644)
	// Another seed, so that check compares in tolerance mode.
	m := string(mustRead(t, filepath.Join(bad, "manifest.json")))
	m = strings.Replace(m, `"seed": 3,`, `"seed": 4,`, 1)
	os.WriteFile(filepath.Join(bad, "manifest.json"), []byte(m), 0o644)
	r = runProc(t, env, bin, "check", filepath.Dir(filepath.Dir(bad)), "--against", ref)
	if r.code != 1 {
		t.Errorf("inflated-CI candidate: exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestTrust_ReproduceGoesOn: `reproduce` runs every spec even when one
// fails (here on a malformed data file, found when its data is read) and
// reports the failure at the end; the other spec's run is complete.
func TestTrust_ReproduceGoesOn(t *testing.T) {
	bin := sharedBinary(t)
	specs := t.TempDir()
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(specs, "a-bad.toml"), []byte(ipumsSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(specs, "b-good.toml"), []byte(processSpecSmall), 0o644); err != nil {
		t.Fatal(err)
	}
	// 57 features and a label of 2, which IPUMS-US does not allow.
	if err := os.WriteFile(filepath.Join(data, "ipums-us.txt"), []byte(strings.Repeat("0 ", 57)+"2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	r := runProc(t, cleanEnv(t), bin, "reproduce", "--specs", specs, "--data-dir", data, "--out", out)
	if r.code == 0 || !strings.Contains(r.stderr, "swap: FAILED") || !strings.Contains(r.stderr, `unknown label "2"`) {
		t.Errorf("exit %d, stderr %q: want a failure naming the bad spec and the file's fault", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "proc", "quick-seed17", "manifest.json")); err != nil {
		t.Errorf("the good spec after the failing one did not run: %v", err)
	}
	index := string(mustRead(t, filepath.Join(out, "index.json")))
	if !strings.Contains(index, `"status": "not run (an earlier run's files, if any, are untouched): `) || !strings.Contains(index, `"status": "complete"`) {
		t.Errorf("index.json does not record both outcomes:\n%s", index)
	}
}
