// Package mutants is the project's mutation testing of privacy bugs: it
// applies each mutant of a list — a realistic privacy bug written as one
// exact text replacement in one source file (a noise scale, a
// sensitivity, a conversion, a shared random stream, a dropped branch) —
// to a private copy of the source tree, one at a time, runs the tests the
// list names for it, and reports which mutants the tests kill.
//
// A mutant is killed when its tests fail while the unmutated tree's pass;
// it survives when they pass. A mutant that does not compile is an error
// of the list (it tests the compiler, not the tests), as is one whose text
// is not found exactly once (the list has gone stale). `make mutants` runs
// mutants/mutants.toml; docs/privacy.md records the kill rate.
package mutants

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Mutant is one realistic bug: in File, the text Old (exactly once) is
// replaced by New.
type Mutant struct {
	// ID names the mutant in reports; unique in its list.
	ID string `toml:"id"`
	// Bug says what the mutation does and why it is realistic, e.g.
	// "Laplace scale Δ/ε with Δ one √p too small".
	Bug string `toml:"bug"`
	// File is the path of the source file, relative to the module root.
	File string `toml:"file"`
	// Old is the text replaced; it must occur exactly once in File.
	Old string `toml:"old"`
	// New is its replacement.
	New string `toml:"new"`
	// Packages are the go test package patterns that should kill it, e.g.
	// "./core/dpci".
	Packages []string `toml:"packages"`
	// Run, when set, is the go test -run pattern.
	Run string `toml:"run"`
}

// List is a mutants file: [[mutant]] tables.
type List struct {
	Mutants []Mutant `toml:"mutant"`
}

// Load reads and checks a mutants file.
func Load(path string) (*List, error) {
	var l List
	md, err := toml.DecodeFile(path, &l)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return nil, fmt.Errorf("%s: unknown key %s", path, u[0])
	}
	seen := map[string]bool{}
	for i, m := range l.Mutants {
		at := fmt.Sprintf("%s: mutant[%d]", path, i)
		if m.ID != "" {
			at += " (" + m.ID + ")"
		}
		switch {
		case m.ID == "":
			return nil, fmt.Errorf("%s: id: must be set", at)
		case seen[m.ID]:
			return nil, fmt.Errorf("%s: id: duplicate", at)
		case m.Bug == "":
			return nil, fmt.Errorf("%s: bug: must say what the mutation does", at)
		case m.File == "" || filepath.IsAbs(m.File) || strings.HasPrefix(filepath.Clean(m.File), ".."):
			return nil, fmt.Errorf("%s: file: must be a path inside the module (got %q)", at, m.File)
		case m.Old == "" || m.Old == m.New:
			return nil, fmt.Errorf("%s: old: must be set and differ from new", at)
		case len(m.Packages) == 0:
			return nil, fmt.Errorf("%s: packages: must name the tests that should kill it", at)
		}
		seen[m.ID] = true
	}
	if len(l.Mutants) == 0 {
		return nil, fmt.Errorf("%s: no [[mutant]]", path)
	}
	return &l, nil
}

// Outcome is what running a mutant's tests gave.
type Outcome string

const (
	Killed   Outcome = "killed"   // the tests failed
	Survived Outcome = "survived" // the tests passed: a bug the tests miss
	Broken   Outcome = "broken"   // the mutated tree does not compile: an error of the list
	Stale    Outcome = "stale"    // Old is not in File exactly once: an error of the list
	TimedOut Outcome = "timeout"  // the tests ran past the limit (counted as killed: a hang is caught)
)

// Result is one mutant's outcome.
type Result struct {
	Mutant   Mutant
	Outcome  Outcome
	Elapsed  time.Duration
	Evidence string // the first failing test or error lines
}

// Options configure Run.
type Options struct {
	// Root is the module root of the source tree (its files are copied,
	// never changed).
	Root string
	// Timeout bounds one mutant's tests. Zero means 10 minutes.
	Timeout time.Duration
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Env is added to the tests' environment (e.g. DPREPRO_DATA=…).
	Env []string
}

// Run copies the tree, checks that the unmutated tests of every listed
// package pass, then applies each mutant alone and runs its tests. It
// returns an error when the copy or the baseline fails; each mutant's
// fate is in its Result.
func Run(ctx context.Context, l *List, o Options) ([]Result, error) {
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	work, err := os.MkdirTemp("", "dprepro-mutants-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	if err := copyTree(o.Root, work); err != nil {
		return nil, fmt.Errorf("copying the source tree: %w", err)
	}
	var pkgs []string
	seen := map[string]bool{}
	for _, m := range l.Mutants {
		for _, p := range m.Packages {
			if !seen[p] {
				seen[p] = true
				pkgs = append(pkgs, p)
			}
		}
	}
	sort.Strings(pkgs)
	fmt.Fprintf(o.Log, "mutants: baseline: go test %s\n", strings.Join(pkgs, " "))
	if out, err := goTest(ctx, work, pkgs, "", o); err != nil {
		return nil, fmt.Errorf("the unmutated tree's tests fail, so no mutant can be judged: %v\n%s", err, tail(out, 30))
	}
	var res []Result
	for i, m := range l.Mutants {
		r := runOne(ctx, work, m, o)
		fmt.Fprintf(o.Log, "mutants: %d/%d %s: %s (%s)\n", i+1, len(l.Mutants), m.ID, r.Outcome, r.Elapsed.Round(time.Second))
		res = append(res, r)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	return res, nil
}

func runOne(ctx context.Context, work string, m Mutant, o Options) Result {
	start := time.Now()
	r := Result{Mutant: m}
	path := filepath.Join(work, filepath.FromSlash(m.File))
	orig, err := os.ReadFile(path)
	if err != nil {
		r.Outcome, r.Evidence = Stale, err.Error()
		return r
	}
	if n := bytes.Count(orig, []byte(m.Old)); n != 1 {
		r.Outcome, r.Evidence = Stale, fmt.Sprintf("%s: the text to replace occurs %d times (want exactly 1)", m.File, n)
		return r
	}
	mutated := bytes.Replace(orig, []byte(m.Old), []byte(m.New), 1)
	if err := os.WriteFile(path, mutated, 0o644); err != nil {
		r.Outcome, r.Evidence = Broken, err.Error()
		return r
	}
	defer os.WriteFile(path, orig, 0o644)
	out, err := goTest(ctx, work, m.Packages, m.Run, o)
	r.Elapsed = time.Since(start)
	switch {
	case err == nil:
		r.Outcome = Survived
	case errors.Is(err, context.DeadlineExceeded):
		r.Outcome, r.Evidence = TimedOut, "no result within "+o.Timeout.String()
	case buildFailed(out):
		r.Outcome, r.Evidence = Broken, tail(out, 8)
	default:
		r.Outcome, r.Evidence = Killed, failures(out)
	}
	return r
}

// goTest runs go test -count=1 on pkgs in dir.
func goTest(ctx context.Context, dir string, pkgs []string, run string, o Options) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	args := []string{"test", "-count=1"}
	if run != "" {
		args = append(args, "-run", run)
	}
	args = append(args, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOFLAGS=-buildvcs=false"), o.Env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return out, context.DeadlineExceeded
	}
	return out, err
}

// buildFailed reports whether go test's output says a package did not
// build (rather than a test failing).
func buildFailed(out []byte) bool {
	s := string(out)
	return strings.Contains(s, "[build failed]") || strings.Contains(s, "[setup failed]")
}

// failures returns the names of the failed tests and their first message
// lines, briefly.
func failures(out []byte) string {
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "panic:") || strings.HasPrefix(t, "FAIL\t") {
			keep = append(keep, t)
		}
		if len(keep) >= 4 {
			break
		}
	}
	if len(keep) == 0 {
		return tail(out, 4)
	}
	return strings.Join(keep, "; ")
}

func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// copyTree copies the module's files (those git tracks, as they are in
// the working tree, plus untracked files not ignored) from root to dst.
func copyTree(root, dst string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files in %s: %w", root, err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		src := filepath.Join(root, f)
		fi, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(to, b, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// Summary counts the outcomes.
type Summary struct {
	Total, Killed, Survived, Errors int
}

// Summarize counts results: a timeout counts as killed; broken and stale
// mutants are errors of the list.
func Summarize(res []Result) Summary {
	s := Summary{Total: len(res)}
	for _, r := range res {
		switch r.Outcome {
		case Killed, TimedOut:
			s.Killed++
		case Survived:
			s.Survived++
		default:
			s.Errors++
		}
	}
	return s
}

// Markdown writes the results as a table with the kill rate.
func Markdown(w io.Writer, res []Result) {
	s := Summarize(res)
	fmt.Fprintf(w, "Mutation testing of privacy bugs: %d of %d mutants killed", s.Killed, s.Total)
	if s.Survived > 0 {
		fmt.Fprintf(w, ", %d survived", s.Survived)
	}
	if s.Errors > 0 {
		fmt.Fprintf(w, ", %d errors in the list", s.Errors)
	}
	fmt.Fprintf(w, ".\n\n| mutant | bug | file | outcome | evidence |\n|---|---|---|---|---|\n")
	cell := func(s string) string {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", "\\|")
		if len(s) > 160 {
			s = s[:157] + "..."
		}
		return s
	}
	for _, r := range res {
		fmt.Fprintf(w, "| `%s` | %s | `%s` | %s | %s |\n", r.Mutant.ID, cell(r.Mutant.Bug), r.Mutant.File, r.Outcome, cell(r.Evidence))
	}
}
