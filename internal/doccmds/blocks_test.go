package doccmds

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/internal/pyenv"
	"github.com/dprepro/dprepro/internal/testdeps"
)

// block is a shell code block of a guide: its commands other than the
// bin/dprepro ones (TestGuides_CommandsRun runs those), with comment lines
// dropped and continuation lines kept.
type block struct {
	file  string // the guide, relative to the root
	line  int    // 1-based line of the opening fence
	lines []string
}

// shellBlocks returns every shell code block of the guides that has a
// command other than bin/dprepro.
func shellBlocks(t *testing.T) []block {
	t.Helper()
	var out []block
	for _, f := range guides(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		var cur *block
		for i, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "```") {
				lang := strings.TrimSpace(strings.TrimPrefix(l, "```"))
				switch {
				case cur != nil:
					if len(cur.lines) > 0 {
						out = append(out, *cur)
					}
					cur = nil
				case lang == "sh" || lang == "bash":
					cur = &block{file: rel, line: i + 1}
				default:
					// Another language, or a fence without one (output,
					// tables): skip to its end.
					cur = &block{file: "-"}
				}
				continue
			}
			if cur == nil || cur.file == "-" {
				continue
			}
			s := strings.TrimSpace(l)
			if s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "bin/dprepro ") {
				continue
			}
			cur.lines = append(cur.lines, s)
		}
	}
	return out
}

// guides are the files whose commands are run: the README, docs/*.md and
// the front ends' READMEs.
func guides(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "python", "README.md"), filepath.Join(root, "R", "README.md")}, files...)
}

// runElsewhere are the blocks this test does not run, keyed by the start
// of a line of the block: each names the test that runs the same block
// word for word (its source must pass that line to docBlock), or says why
// it is not run and which source runs the same command (its source must
// name the command).
var runElsewhere = map[string]struct{ by, source, why string }{
	"go build -o dprepro-ext .":  {"cli TestGoExtension", "cli/extension_test.go", ""},
	"go build -o dprepro-kind .": {"cli TestKindExample", "cli/extension_test.go", ""},
	"sbatch --array=":            {"", "scripts/slurm-array.sh", "a paper-profile job array needs a Slurm cluster: scripts/slurm-array.sh submits a job array of the same form (sbatch --array, dprepro run --shard auto, then the merge), and cli TestSlurmArrayScript_RealScheduler runs it on a real single-node Slurm with a small spec"},
	"scripts/reproduce.sh":       {"", ".ci/run", "the README's two commands are CI's own: .ci/run runs both (scripts/test.sh runs this test)"},
}

// TestGuides_ShellBlocksRun runs every other shell block of the guides —
// installing the Python and R front ends, verifying the data files,
// regenerating the synthetic schema, building the binary — word for word
// in a copy of the repository with a scratch HOME, DIR standing for the
// data folder the suite uses. A trailing comment that starts with a
// number ("# 32561 2399 30162 7508") states the command's output: each of
// its numbers must appear in the block's output. An apt-get line is not
// run (it needs root): each package it names must be installed, as
// scripts/debian-deps.sh installs them under CI. A block that regenerates
// a committed file must leave it unchanged.
func TestGuides_ShellBlocksRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every shell block the guides show (about a minute)")
	}
	data := os.Getenv("DPREPRO_DATA")
	if data == "" {
		data, _ = filepath.Abs(filepath.Join(root, "..", "shared", "datasets"))
	}
	if _, err := os.Stat(data); err != nil {
		testdeps.Missing(t, "no data folder "+data+" (set DPREPRO_DATA): the guides' blocks read the real files")
	}
	path := pyenv.Require(t)
	if _, err := exec.LookPath("Rscript"); err != nil {
		testdeps.Missing(t, "no Rscript on $PATH; install Debian's r-base-core and r-cran-jsonlite")
	}
	blocks := shellBlocks(t)
	if len(blocks) < 6 {
		t.Fatalf("only %d shell blocks with other commands in the guides: the parser lost some", len(blocks))
	}
	repo := copyRepo(t)
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	env := append(os.Environ(), "HOME="+t.TempDir(), "PATH="+path, "DPREPRO_DATA="+data,
		"GOCACHE="+strings.TrimSpace(string(gocache)),
		// The copy's packages are in a new folder each time: -trimpath
		// lets them hit the build cache (it changes nothing the blocks
		// check).
		"GOFLAGS=-trimpath "+os.Getenv("GOFLAGS"))
	numbers := regexp.MustCompile(`\d+`)
	ran := 0
	for _, b := range blocks {
		where := fmt.Sprintf("%s:%d", b.file, b.line)
		if skip := elsewhere(t, b); skip != "" {
			t.Logf("%s: not run here: %s", where, skip)
			continue
		}
		var script []string
		var want []string // numbers the block's output must show
		for _, l := range b.lines {
			cmd, comment, _ := strings.Cut(l, " #")
			comment = strings.TrimSpace(comment)
			if f := strings.Fields(cmd); len(f) > 0 && (f[0] == "apt-get" || f[0] == "sudo" && len(f) > 1 && f[1] == "apt-get") {
				checkInstalled(t, where, f)
				continue
			}
			if c := strings.TrimSpace(comment); c != "" && c[0] >= '0' && c[0] <= '9' {
				want = append(want, numbers.FindAllString(c, -1)...)
			}
			script = append(script, strings.ReplaceAll(l, "DIR", data))
		}
		if len(script) == 0 {
			continue
		}
		before := snapshot(t, repo)
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(script, "\n"))
		cmd.Dir = repo
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("%s: the block fails: %v\n%s\n%s", where, err, strings.Join(script, "\n"), lastLines(stderr.String(), 8))
			continue
		}
		got := map[string]bool{}
		for _, n := range numbers.FindAllString(stdout.String(), -1) {
			got[n] = true
		}
		for _, n := range want {
			if !got[n] {
				t.Errorf("%s: the guide says the output shows %s; it does not:\n%s", where, n, lastLines(stdout.String(), 12))
			}
		}
		for f, sum := range snapshot(t, repo) {
			if old, ok := before[f]; ok && old != sum {
				t.Errorf("%s: the block changed the committed file %s: it is stale (run the block and commit the result)", where, f)
			}
		}
		ran++
	}
	if ran < 4 {
		t.Errorf("ran %d blocks; the guides have more (the parser or runElsewhere lost some)", ran)
	}
	t.Logf("%d of %d blocks run", ran, len(blocks))
}

// elsewhere returns why block b is not run here ("" when it is), after
// checking that the test named to run it passes one of its lines to
// docBlock — so that the block and the test cannot drift apart unseen.
func elsewhere(t *testing.T, b block) string {
	for _, l := range b.lines {
		l = strings.TrimSpace(strings.SplitN(l, " #", 2)[0])
		key, ok := "", false
		for k := range runElsewhere {
			if strings.HasPrefix(l, k) {
				key, ok = k, true
			}
		}
		if !ok {
			continue
		}
		e := runElsewhere[key]
		src, err := os.ReadFile(filepath.Join(root, e.source))
		if err != nil {
			t.Fatal(err)
		}
		if e.by == "" {
			if !strings.Contains(string(src), l[:strings.IndexByte(l+" ", ' ')]) {
				t.Errorf("%s:%d: %s does not run %q", b.file, b.line, e.source, l)
			}
			return e.why
		}
		if !strings.Contains(string(src), fmt.Sprintf("docBlock(t, %q, %q)", filepath.Base(b.file), key)) {
			t.Errorf("%s:%d: %s is said to run this block, but %s does not pass %q to docBlock", b.file, b.line, e.by, e.source, l)
		}
		return "run word for word by " + e.by
	}
	return ""
}

// checkInstalled checks that every package an apt-get install line names
// is installed (dpkg-query), ending the test as for a missing dependency
// otherwise.
func checkInstalled(t *testing.T, where string, f []string) {
	t.Helper()
	for _, p := range f {
		if p == "sudo" || p == "apt-get" || p == "install" || strings.HasPrefix(p, "-") {
			continue
		}
		out, err := exec.Command("dpkg-query", "-W", "-f", "${Status}", p).Output()
		if err != nil || !strings.HasSuffix(string(out), " installed") {
			testdeps.Missing(t, fmt.Sprintf("%s: the guide installs Debian's %s, which is not installed here (scripts/debian-deps.sh installs it)", where, p))
		}
	}
}

// copyRepo copies the repository's tracked files to a scratch folder.
func copyRepo(t *testing.T) string {
	t.Helper()
	ls := exec.Command("git", "ls-files", "-z", "--cached")
	ls.Dir = root
	out, err := ls.Output()
	if err != nil {
		t.Skipf("not in a git checkout (git ls-files: %v)", err)
	}
	repo := filepath.Join(t.TempDir(), "repo")
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		from := filepath.Join(root, name)
		st, err := os.Lstat(from)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		} else if err != nil {
			t.Fatal(err)
		}
		if !st.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

// snapshot returns the contents of the repository copy's Go files (what
// a block may regenerate), by path.
func snapshot(t *testing.T, repo string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(repo, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(repo, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
