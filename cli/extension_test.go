package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/results"
)

// TestGoExtension follows the walk-through of the Go extension (docs/methods.md)
// example (examples/go-extension: its own module, registering the learner
// noisy-gd and the dataset credit-sim before calling cli.Main) word for
// word, in a copy of the repository under git: `cd examples/go-extension`,
// `go build -o dprepro-ext .`, `./dprepro-ext run noisygd.toml --profile
// quick …`. The learner runs beside the built-in one under the same
// selection methods, and its guarantee reaches the ledger. The copy's
// `git status` stays clean (the binary and the run's folder are
// git-ignored), so the build the run records is not "+dirty", and the same
// two commands again — a new build, the same run — resume every unit. The
// stock binary refuses the same spec, naming the learner and the line.
func TestGoExtension(t *testing.T) {
	stock := sharedBinary(t)
	repo := repoCopy(t)
	dir := filepath.Join(repo, "examples", "go-extension")
	walk := docBlock(t, "methods.md", "go build -o dprepro-ext .")
	env := walkthroughEnv(t)
	if data := os.Getenv("DPREPRO_DATA"); data == "" {
		// No data folder: the guide's comment says magic then runs on
		// its labelled stand-in.
		walk = regexp.MustCompile(` --data-dir \S+`).ReplaceAllString(walk, "")
	}
	runShell := walkthrough(t, repo, env, walk)
	runDir := filepath.Join(dir, "results", "runs", "ext-noisygd", "quick-seed2024")
	rows, summary, m := readRun(t, runDir)
	if !m.Build.Stamped || m.Build.Modified {
		t.Errorf("the run's build: %+v, want a VCS-stamped build that is not modified", m.Build)
	}
	// The same two commands again: a clean tree builds the same
	// identity, and the run resumes every unit.
	code, stdout, stderr := runShell(walk)
	if code != 0 || !regexp.MustCompile(`(\d+) of (\d+) units already done`).MatchString(stderr) || strings.Contains(stderr, "starting over") {
		t.Errorf("the walk-through again: exit %d, want every unit resumed\n%s\n%s", code, stdout, stderr)
	}
	if m := regexp.MustCompile(`(\d+) of (\d+) units already done`).FindStringSubmatch(stderr); m != nil && m[1] != m[2] {
		t.Errorf("the walk-through again resumed %s of %s units", m[1], m[2])
	}
	if rows2, summary2, _ := readRun(t, runDir); string(rows2) != string(rows) || string(summary2) != string(summary) {
		t.Error("the resumed run's rows or summary differ")
	}
	if st := gitStatus(t, repo); st != "" {
		t.Errorf("after the walk-through again git status is not clean:\n%s", st)
	}
	bin := filepath.Join(dir, "dprepro-ext")
	spec := filepath.Join(dir, "noisygd.toml")

	// The stock command does not know the learner: exit 2, naming it.
	code, _, stderr = runBin(t, stock, nil, "run", spec, "--profile", "quick", "--out", t.TempDir())
	if code != 2 || !strings.Contains(stderr, `noisygd.toml:28: tuning.learners[1]: unknown learner "noisy-gd"`) {
		t.Errorf("stock binary: exit %d\n%s", code, stderr)
	}

	// The extended command lists the dataset and the learner.
	code, stdout, stderr = runBin(t, bin, nil, "list")
	if code != 0 || !strings.Contains(stdout, "credit-sim") || !strings.Contains(stdout, "noisy-gd") {
		t.Errorf("list: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// A claim on a label of the module's learner ("<method>/<learner>"),
	// which the kind declares, is decided by `claims` on the finished run
	// (claims are not part of the run's identity: no unit is recomputed);
	// a label the module's learner does not make is refused, with the
	// labels the kind declares. (The spec is edited after the clean-tree
	// checks above.)
	orig, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	claim := "\n[[claims]]\nid = \"control-auc\"\nsource = \"a test\"\nstatement = \"noisy-gd tuned by Control has an AUC of at least 0.5\"\n" +
		"rule = \"at_least\"\nvalue = 0.5\nmetric = \"auc\"\nmethod = \"control/noisy-gd\"\ndataset = \"credit-sim\"\n"
	if err := os.WriteFile(spec, append(orig, claim...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runBin(t, bin, nil, "claims", runDir); code != 0 {
		t.Fatalf("claims after adding one: exit %d\n%s\n%s", code, stdout, stderr)
	}
	verdicts := readClaimRows(t, mustRead(t, filepath.Join(runDir, "claims.csv")))
	for _, x := range []string{"0.3", "1", "3", "10"} {
		if v := verdicts["control-auc@"+x]; v == "" || strings.HasPrefix(v, "missing") {
			t.Errorf("claim on control/noisy-gd at alpha = %s: %q", x, v)
		}
	}
	if err := os.WriteFile(spec, append(orig, strings.Replace(claim, "control/noisy-gd", "control/noisygd", 1)...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runBin(t, bin, nil, "claims", runDir)
	if code != 2 || !strings.Contains(stderr, `claims[0].method: unknown method "control/noisygd" (the spec runs: alphaSplit/objective-perturbation, alphaSplit/noisy-gd,`) ||
		!strings.Contains(stderr, `did you mean "control/noisy-gd"?`) {
		t.Errorf("claim on an unknown label: exit %d\n%s", code, stderr)
	}
	header := strings.SplitN(string(rows), "\n", 2)[0]
	if !strings.Contains(header, ",learner,") {
		t.Errorf("rows.csv has no learner column: %s", header)
	}
	for _, want := range []string{"alphaSplit/noisy-gd", "control/objective-perturbation", "credit-sim"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.csv lacks %q", want)
		}
	}
	// The ledger composes noisy-gd's pure-ε guarantees: alphaSplit at α
	// spends α in total (k fits at α/k on the same data); Control is not
	// private.
	var sawSplit, sawControl bool
	for _, e := range m.Ledger {
		switch {
		case e.Method == "alphaSplit/noisy-gd" && e.Setting == "alpha=1":
			sawSplit = true
			if !e.Total.Private || float64(e.Total.Epsilon) != 1 {
				t.Errorf("alphaSplit/noisy-gd at α = 1: total %+v, want ε = 1, private", e.Total)
			}
		case e.Method == "control/noisy-gd":
			sawControl = true
			if e.Total.Private {
				t.Errorf("control/noisy-gd booked private: %+v", e.Total)
			}
		}
	}
	if !sawSplit || !sawControl {
		t.Errorf("ledger lacks noisy-gd entries: %+v", m.Ledger)
	}
	var found bool
	for _, d := range m.Datasets {
		if d.Name == "credit-sim" {
			found = true
			if d.Source != "synthetic" || d.Generator != "example-credit-sim/v1" {
				t.Errorf("credit-sim provenance: %+v", d)
			}
		}
	}
	if !found {
		t.Errorf("manifest lacks credit-sim: %+v", m.Datasets)
	}

	// Stability needs stability constants, which noisy-gd does not have.
	b, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	src := strings.Replace(string(b), `methods = ["alphaSplit", "dataSplit", "random", "control"]`, `methods = ["stability"]`, 1)
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runBin(t, bin, nil, "run", bad, "--profile", "quick", "--out", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "noisy-gd") || !strings.Contains(stderr, "stability") {
		t.Errorf("stability with noisy-gd: exit %d\n%s", code, stderr)
	}
}

// TestKindExample follows the walk-through of the example kind (docs/methods.md)
// (examples/kind-example: its own module, registering the experiment kind
// rr-proportion before calling cli.Main) word for word, in a copy of the
// repository under git: `cd examples/kind-example`, `go build -o
// dprepro-kind .`, `./dprepro-kind run rr.toml --profile quick`. The run
// writes the kind's rows, summary and figure, and a ledger of one ε-DP
// entry per ε; the copy's `git status` stays clean (the binary and the
// run's folder are git-ignored), and the same commands again resume every
// unit. The extended command lists the kind; the stock binary refuses the
// spec's unknown kind, naming the line.
func TestKindExample(t *testing.T) {
	stock := sharedBinary(t)
	repo := repoCopy(t)
	dir := filepath.Join(repo, "examples", "kind-example")
	walk := docBlock(t, "methods.md", "go build -o dprepro-kind .")
	env := walkthroughEnv(t)
	runShell := walkthrough(t, repo, env, walk)
	runDir := filepath.Join(dir, "results", "runs", "rr-proportion", "quick-seed1965")
	rows, summary, m := readRun(t, runDir)
	if !m.Build.Stamped || m.Build.Modified {
		t.Errorf("the run's build: %+v, want a VCS-stamped build that is not modified", m.Build)
	}

	// rr.toml's quick profile: 6 ε × 20 replicates, one row each.
	epsilons := []string{"0.1", "0.2", "0.5", "1", "2", "5"}
	lines := strings.Split(strings.TrimSpace(string(rows)), "\n")
	if want := "experiment,dataset,data_source,method,epsilon,rep,unit,n,proportion,estimate,abs_error,sd_theory,mae_theory,status"; lines[0] != want {
		t.Errorf("rows.csv header:\n%s\nwant\n%s", lines[0], want)
	}
	if len(lines) != 1+len(epsilons)*20 {
		t.Errorf("rows.csv has %d rows, want %d", len(lines)-1, len(epsilons)*20)
	}
	if !strings.Contains(string(rows), ",synthetic,randomized-response,0.5,3,eps=0.5/rep=3,1000,0.3,") {
		t.Errorf("rows.csv lacks the unit eps=0.5/rep=3:\n%s", lines[1])
	}
	for _, x := range epsilons {
		if !strings.Contains(string(summary), "synthetic-population,synthetic,randomized-response,epsilon,"+x+",abs_error,") {
			t.Errorf("summary.csv lacks abs_error at ε = %s", x)
		}
	}
	// The ledger: one pure ε-DP entry per ε (parallel composition over
	// the records), whatever the replicates.
	if len(m.Ledger) != len(epsilons) {
		t.Errorf("ledger has %d entries, want one per ε (%d): %+v", len(m.Ledger), len(epsilons), m.Ledger)
	}
	for i, e := range m.Ledger {
		if i >= len(epsilons) {
			break
		}
		if e.Method != "randomized-response" || e.Setting != "epsilon="+epsilons[i] || !e.Total.Private ||
			e.Total.Notion != "pure-dp" || results.FormatFloat(float64(e.Total.Epsilon)) != epsilons[i] {
			t.Errorf("ledger entry %d: %+v, want randomized-response at ε = %s, pure ε-DP", i, e, epsilons[i])
		}
	}
	if len(m.Datasets) != 0 || len(m.Warnings) == 0 || !strings.Contains(m.Warnings[0], "synthetic") {
		t.Errorf("datasets %+v, warnings %q: want no dataset and a warning that the population is synthetic", m.Datasets, m.Warnings)
	}
	if st, err := os.Stat(filepath.Join(runDir, "figures", "abs-error.png")); err != nil || st.Size() == 0 {
		t.Errorf("the figure: %v", err)
	}

	// The same commands again: a clean tree builds the same identity, and
	// the run resumes every unit.
	code, stdout, stderr := runShell(walk)
	done := regexp.MustCompile(`(\d+) of (\d+) units already done`).FindStringSubmatch(stderr)
	if code != 0 || done == nil || done[1] != done[2] || strings.Contains(stderr, "starting over") {
		t.Errorf("the walk-through again: exit %d, want every unit resumed\n%s\n%s", code, stdout, stderr)
	}
	if rows2, summary2, _ := readRun(t, runDir); string(rows2) != string(rows) || string(summary2) != string(summary) {
		t.Error("the resumed run's rows or summary differ")
	}
	if st := gitStatus(t, repo); st != "" {
		t.Errorf("after the walk-through again git status is not clean:\n%s", st)
	}

	// The extended command lists the kind.
	bin := filepath.Join(dir, "dprepro-kind")
	code, stdout, stderr = runBin(t, bin, nil, "list")
	if code != 0 || !regexp.MustCompile(`(?m)^experiment kind\s+kind\s+.*\brr-proportion\b`).MatchString(stdout) {
		t.Errorf("list: exit %d, want the kind rr-proportion among the experiment kinds\n%s\n%s", code, stdout, stderr)
	}
	// The stock command does not know the kind: exit 2, naming it and
	// the line.
	code, _, stderr = runBin(t, stock, nil, "run", filepath.Join(dir, "rr.toml"), "--profile", "quick", "--out", t.TempDir())
	if code != 2 || !strings.Contains(stderr, `rr.toml:6: kind: unknown kind "rr-proportion"`) {
		t.Errorf("stock binary: exit %d\n%s", code, stderr)
	}
}

// repoCopy copies the repository's tracked files, as they are in the
// working tree, into a fresh git repository (one commit) and returns its
// root: a place to follow the guides' instructions and then ask git
// whether they left the tree clean, without touching the real one. The
// copy sits in repo/ of a temporary folder whose shared/datasets is
// $DPREPRO_DATA (the README's ../shared/datasets), when that is set.
func repoCopy(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	src, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ls := exec.Command("git", "ls-files", "-z", "--cached")
	ls.Dir = src
	out, err := ls.Output()
	if err != nil {
		t.Skipf("not in a git checkout (git ls-files: %v)", err)
	}
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		from := filepath.Join(src, name)
		st, err := os.Lstat(from)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		} else if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if st.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(from)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, to); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=dprepro test", "-c", "user.email=test@dprepro.invalid", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "copy"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	if data := os.Getenv("DPREPRO_DATA"); data != "" {
		abs, err := filepath.Abs(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, "shared"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(root, "shared", "datasets")); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

// gitStatus returns `git status --porcelain` of repo ("" when clean).
func gitStatus(t *testing.T, repo string) string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = repo
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("git status: %v", err)
	}
	return string(b)
}

// docBlock returns the ```sh block of the guide docs/<guide> that
// contains line, its comment lines dropped.
func docBlock(t *testing.T, guide, line string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", guide))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```sh\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if !strings.Contains(block, line) {
			continue
		}
		var keep []string
		for _, l := range strings.Split(block, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n") + "\n"
	}
	t.Fatalf("docs/%s has no ```sh block with %q", guide, line)
	return ""
}

// walkthroughEnv is the environment of a guide's walk-through in the copy
// repo: no DPREPRO_DATA (the guide names the folder) and an empty
// per-user cache; -trimpath so that the copy's packages, whose folder is
// new each time, hit the build cache of the previous run (it changes no
// step of the walk-through: the build is still VCS-stamped).
func walkthroughEnv(t *testing.T) []string {
	t.Helper()
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	// The Go build cache stays where it is (it would follow
	// XDG_CACHE_HOME).
	return []string{"DPREPRO_DATA=", "XDG_CACHE_HOME=" + t.TempDir(), "GOCACHE=" + strings.TrimSpace(string(gocache)),
		"GOFLAGS=-trimpath " + os.Getenv("GOFLAGS")}
}

// TestPythonWalkthrough_TreeClean: the external-method
// walk-through runs Python workers in examples/python-method, whose import
// of the dprepro package (python/dprepro, put first on sys.path) writes
// byte code into python/dprepro/__pycache__: it is git-ignored, so the
// tree stays clean (a build after it is not "+dirty"). The import is what
// every worker does first; numpy is not needed for it.
func TestPythonWalkthrough_TreeClean(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the repository")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	repo := repoCopy(t)
	const imp = "import os, sys; sys.path.insert(0, os.path.join(os.pardir, os.pardir, 'python')); import dprepro.worker"
	cmd := exec.Command(python, "-c", imp)
	cmd.Dir = filepath.Join(repo, "examples", "python-method")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=", "PYTHONPYCACHEPREFIX=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("import dprepro.worker: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(repo, "python", "dprepro", "__pycache__")); err != nil {
		t.Fatalf("python wrote no byte code, so this test shows nothing: %v", err)
	}
	if st := gitStatus(t, repo); st != "" {
		t.Errorf("after a Python worker's import git status is not clean:\n%s", st)
	}
}

// walkthrough runs a guide's walk-through walk with sh in the
// repository copy repo (failing the test when it fails) and checks that
// it leaves git status clean (the next build would otherwise be +dirty
// and runs would not resume). It returns the shell runner, to follow
// more commands.
func walkthrough(t *testing.T, repo string, env []string, walk string) func(script string) (int, string, string) {
	t.Helper()
	runShell := func(script string) (int, string, string) {
		t.Helper()
		return runBinIn(t, repo, "sh", env, "-ec", script)
	}
	code, stdout, stderr := runShell(walk)
	if code != 0 {
		t.Fatalf("the guide's walk-through:\n%s\nexit %d\n%s\n%s", walk, code, stdout, stderr)
	}
	if st := gitStatus(t, repo); st != "" {
		t.Errorf("after the guide's walk-through git status is not clean (the next build would be +dirty and runs would not resume):\n%s", st)
	}
	return runShell
}
