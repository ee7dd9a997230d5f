// Package doccmds runs, as a test, every command the documentation's
// shell blocks show (README.md, docs/*.md, python/README.md,
// R/README.md): the dprepro commands from the repository's root
// (TestGuides_CommandsRun), every other block in a copy of it
// (TestGuides_ShellBlocksRun), so that a guide cannot show a command that
// fails or a count that is wrong.
package doccmds

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/internal/pyenv"
	"github.com/dprepro/dprepro/internal/testdeps"
)

// root is the repository's root, the working directory of every command
// (the guides' commands name files relative to it).
const root = "../.."

// command is one `bin/dprepro …` line of a guide's code block.
type command struct {
	file string // the guide
	line int    // 1-based
	args []string
}

// commands returns every line of a shell code block in the guides that
// runs bin/dprepro, its trailing comment dropped.
func commands(t *testing.T) []command {
	t.Helper()
	var out []command
	for _, f := range guides(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		lang, in := "", false
		for i, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "```") {
				if in = !in; in {
					lang = strings.TrimSpace(strings.TrimPrefix(l, "```"))
				}
				continue
			}
			l = strings.TrimSpace(l)
			if !in || (lang != "sh" && lang != "bash" && lang != "") || !strings.HasPrefix(l, "bin/dprepro ") {
				continue
			}
			if j := strings.Index(l, " #"); j >= 0 {
				l = strings.TrimSpace(l[:j])
			}
			out = append(out, command{file: rel, line: i + 1, args: shellFields(t, l)})
		}
	}
	return out
}

// shellFields splits a command line as sh would for the guides' commands:
// words, with single-quoted words kept whole.
func shellFields(t *testing.T, l string) []string {
	var out []string
	var cur strings.Builder
	in, started := false, false
	for _, r := range l {
		switch {
		case r == '\'':
			in, started = !in, true
		case r == ' ' && !in:
			if started {
				out = append(out, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if in {
		t.Fatalf("unbalanced quote in %q", l)
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}

// notRun are the commands a guide shows that this test does not run,
// each with the reason and where it is covered instead.
var notRun = map[string]string{
	"bin/dprepro merge wkl-table2-kdd": "a paper-profile merge of Slurm shards: cli TestSlurmArrayScript_RealScheduler and the merge tests run the same on small specs",
}

// exitCode is the exit status a command is documented to end with (0
// unless listed): the broken learner's audit fails by design.
var exitCode = map[string]int{
	"bin/dprepro audit --learner py-broken-output-perturbation": 1,
}

// TestGuides_CommandsRun: every bin/dprepro command of the guides runs
// from the repository's root and exits as documented — with the data
// folder the test suite uses in place of the guide's (DIR,
// ../shared/datasets) and its own --out, so that it writes nothing into
// the tree. A command that names the quick profile, or none, runs as
// shown; the paper-scale ones are in notRun, with the test that covers
// them.
func TestGuides_CommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command the guides show (about a minute)")
	}
	data := os.Getenv("DPREPRO_DATA")
	if data == "" {
		data, _ = filepath.Abs(filepath.Join(root, "..", "shared", "datasets"))
	}
	if _, err := os.Stat(data); err != nil {
		testdeps.Missing(t, "no data folder "+data+" (set DPREPRO_DATA): the guides' commands read the real files")
	}
	bin := filepath.Join(t.TempDir(), "dprepro")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dprepro/dprepro/cmd/dprepro").CombinedOutput(); err != nil {
		t.Fatalf("building dprepro: %v\n%s", err, out)
	}
	path := pyenv.Require(t)
	if _, err := exec.LookPath("Rscript"); err != nil {
		testdeps.Missing(t, "no Rscript on $PATH; install Debian's r-base-core and r-cran-jsonlite")
	}
	cmds := commands(t)
	if len(cmds) < 8 {
		t.Fatalf("only %d bin/dprepro commands in the guides: the parser lost some", len(cmds))
	}
	ran := 0
	for _, c := range cmds {
		line := strings.Join(c.args, " ")
		if why, skip := match(notRun, line); skip {
			t.Logf("%s:%d: not run (%s): %s", c.file, c.line, why, line)
			continue
		}
		args := append([]string(nil), c.args[1:]...)
		hasOut := false
		for i, a := range args {
			switch {
			case a == "--data-dir" && i+1 < len(args):
				args[i+1] = data
			case a == "--out":
				hasOut = true
			}
		}
		if strings.Contains(line, "--profile paper") {
			t.Errorf("%s:%d: a paper-profile command not in notRun: %s", c.file, c.line, line)
			continue
		}
		if !hasOut {
			args = append(args, "--out", t.TempDir())
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PATH="+path, "DPREPRO_DATA="+data)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s:%d: %s: %v", c.file, c.line, line, err)
		}
		want, _ := match(exitCode, line)
		if want == "" {
			want = "0"
		}
		if got := []string{"0", "1", "2"}; code > 2 || got[code] != want {
			t.Errorf("%s:%d: %s: exit %d, want %s\n%s", c.file, c.line, line, code, want, lastLines(stderr.String(), 6))
		}
		ran++
	}
	t.Logf("%d of %d commands run", ran, len(cmds))
}

// match returns the value of the first key of m that line starts with.
func match[V any](m map[string]V, line string) (string, bool) {
	for k, v := range m {
		if strings.HasPrefix(line, k) {
			return strings.TrimSpace(strings.Trim(strings.ReplaceAll(fmtAny(v), "\n", " "), " ")), true
		}
	}
	return "", false
}

func fmtAny(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return string(rune('0' + x))
	}
	return ""
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}
