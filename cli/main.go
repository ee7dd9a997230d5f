// Package cli is the dprepro command as a library: [Main] runs it, and
// command dprepro (cmd/dprepro) is a main package that calls only Main.
// dprepro reproduces the experiments of differential-privacy machine
// learning papers from TOML specs, in parallel and deterministically.
//
// `dprepro help` prints the manual below; `dprepro help CMD` and
// `dprepro CMD -h` print one command's synopsis, arguments and flags. The
// examples of the usage text are run by TestUsageExamples.
//
// Exit status: 0 on success, 1 when a run fails, a check finds a
// regression or a download fails, 2 for a bad flag, spec, data file or data
// directory, an --out that cannot hold runs, a run directory in use, shards
// that merge refuses, a list that shows an ERROR or INVALID row, or
// unusable input to check (with a one-line message naming the file and the
// key, line or row at fault), 130 when interrupted (Ctrl-C or SIGTERM; what
// finished is checkpointed).
//
// Noise is drawn from seeded pseudo-random streams so that runs replay
// exactly: right for research, wrong for protecting real data.
package cli

import (
	"sync"

	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/dprepro/dprepro/kinds"
	"github.com/dprepro/dprepro/runner"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// usageError marks errors in flags, specs or data files: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// errHelp is returned after help was printed: exit status 0.
var errHelp = errors.New("help requested")

// errInterrupted marks a run stopped by Ctrl-C or SIGTERM: exit status 130.
var errInterrupted = errors.New("interrupted")

// helpRequest is returned by parseInterleaved on -h: the command's flag set,
// fully registered, so that its help lists exactly the flags it accepts.
type helpRequest struct{ fs *flag.FlagSet }

func (helpRequest) Error() string { return "help requested" }

// Main runs the dprepro command with the process's arguments, standard
// streams and signals, and returns its exit status (0, 1, 2 or 130; see the
// package documentation). A module that wants a dprepro knowing its own
// methods calls it from its main package:
//
//	func main() { os.Exit(cli.Main()) }
func Main() int {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "\ndprepro: %v: stopping; finished units are checkpointed (press Ctrl-C again to exit at once)\n", s)
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "dprepro: second interrupt: exiting at once")
		os.Exit(130)
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	return code
}

// command documents one command for `dprepro help`.
type command struct {
	name     string // "run", "data fetch"
	synopsis string // after "dprepro "
	summary  string
	args     string // the positional arguments, one per line "NAME\tmeaning"
	run      func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands []command

func init() {
	commands = []command{
		{"run", "run SPEC... [flags]", "run specs: CSVs, figures, tables, manifest",
			"SPEC\ta spec file (*.toml), or the id of a built-in spec (see dprepro list)", cmdRun},
		{"reproduce", "reproduce [flags]", "run every spec (the built-in ones, or those in --specs DIR) and index them",
			"", cmdReproduce},
		{"merge", "merge SPEC... --shards DIR,DIR,... [flags]", "finish a sharded run from its shards' checkpoints",
			"SPEC\tthe spec the shards ran (file or built-in id)", cmdMerge},
		{"audit", "audit [MECHANISM...] [flags]", "empirical privacy audit: lower bounds on ε against the claims (the harness's mechanisms, or --learner NAME of a --spec)",
			"MECHANISM\tmechanisms to audit (default: every one of the audit spec)", cmdAudit},
		{"check", "check RUN_DIR [flags]", "compare runs with the reference results",
			"RUN_DIR\ta run folder, or a folder holding runs (e.g. the --out of reproduce)",
			func(_ context.Context, args []string, stdout, stderr io.Writer) error {
				return cmdCheck(args, stdout, stderr)
			}},
		{"report", "report OUT", "write OUT/report/index.html and report.md: claims, paper vs ours, figures, ledger, provenance",
			"OUT\ta folder holding runs (e.g. the --out of reproduce)", cmdReport},
		{"claims", "claims RUN_DIR...", "re-decide finished runs' claims against their specs' current [[claims]] (rewrites claims.csv; no unit recomputed)",
			"RUN_DIR\ta run folder, or a folder holding runs (from any folder: a run's spec is the file its manifest names)", cmdClaims},
		{"list", "list [flags]", "the specs, and the state of each dataset's files", "", cmdList},
		{"data fetch", "data fetch [NAME...] [flags]", "download the real data files, verify SHA-256",
			"NAME\tdatasets to fetch (default: all)", cmdDataFetch},
		{"data verify", "data verify [NAME...] [flags]", "re-check the data files present",
			"NAME\tdatasets to verify (default: all)", cmdDataVerify},
		{"version", "version", "print the build (module version, VCS revision, dirty flag)", "", cmdVersion},
		{"help", "help [COMMAND]", "print this manual, or one command's synopsis and flags",
			"COMMAND\ta command, e.g. run or \"data fetch\"", nil},
	}
}

// usage is the manual printed by `dprepro help`; its Examples are run by
// TestUsageExamples (in a temporary directory: built-in specs and
// references make them work from anywhere).
const usage = `dprepro reproduces differential-privacy machine-learning experiments
from TOML specs, deterministically and in parallel.

Usage:
  dprepro COMMAND [ARGUMENTS] [FLAGS]    (flags may stand before or after arguments)

Commands:
%s
Data directory (one search order, printed at the start of every run):
  1. --data-dir DIR           named: must exist and hold every file a spec needs
  2. $DPREPRO_DATA            named: the same
  3. the per-user directory   (%s), where "dprepro data fetch" downloads;
                              not named: a missing file runs on a labelled
                              synthetic stand-in, counted at the end of the run
Runs go to OUT/<spec id>/<profile>-seed<seed>/ (default OUT: results/runs):
spec.toml, rows.csv, summary.csv, claims.csv, figures/, tables/,
manifest.json (written last); until then attempt.json says how the latest
attempt stands or ended (queued, running, failed, not run, interrupted, not
started). One process writes a run folder at a time;
an interrupted run resumes from its checkpoint when started again with the
same spec, seed, data and build, and starts over (saying what changed)
otherwise; in cv-tuning, histogram-tuning and learner-comparison an edit of
one method, learner, α or ε (or an external method's files) recomputes only
its units. A finished run stays in its folder until a new run of it has
every unit (one that fails or is stopped leaves it as it was, not counted). "dprepro report OUT" (run by reproduce at its end) writes
OUT/report/index.html and report.md: at the top every run that did not
finish, with its error (its claims counted as not run); per paper the
claims and their verdicts, each "not held" linked to its written analysis,
the published values beside ours, the figures, the privacy ledger and the
provenance.

Memory: a spec whose estimated peak memory (with each dataset's n and d as
read) exceeds the machine's physical memory, or $DPREPRO_MEMORY_BUDGET
(bytes, or e.g. 8GiB), is refused before it runs (exit 2), naming what can
bring it under: a key to lower, or, when the fixed 64 MiB every run holds
is over the budget, a larger budget.

Profiling: run, reproduce, merge and audit take --cpuprofile FILE and
--memprofile FILE (pprof profiles of the command: go tool pprof FILE); a
path that cannot be written is refused (exit 2) before any work. Every
manifest.json records what the units cost (unit_times: count, total,
quantiles, longest units, critical path); times are never compared by check.

Exit status: 0 ok; 1 a run failed, check found a regression or a download
failed; 2 a bad flag, spec, data file or data directory, an unusable --out, a
run folder in use, shards merge refuses, a list with an ERROR or INVALID
row, or unusable input to check; 130 interrupted (finished units are
checkpointed).

Examples:
  dprepro version
  dprepro list
  dprepro run mechanisms --profile quick --out runs
  dprepro check runs/mechanisms
  dprepro report runs
  dprepro audit laplace --out runs
  dprepro help run
`

func printUsage(w io.Writer) {
	var b strings.Builder
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, usage, b.String(), defaultDataDirDoc())
}

// printCommandHelp prints a command's synopsis, arguments and the flags of
// fs, which are exactly those the command accepts.
func printCommandHelp(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: dprepro %s\n\n%s.\n", c.synopsis, strings.ToUpper(c.summary[:1])+c.summary[1:])
	if c.args != "" {
		fmt.Fprintln(w, "\nArguments:")
		for _, line := range strings.Split(c.args, "\n") {
			name, what, _ := strings.Cut(line, "\t")
			fmt.Fprintf(w, "  %-10s %s\n", name, what)
		}
	}
	n := 0
	if fs != nil {
		fs.VisitAll(func(*flag.Flag) { n++ })
	}
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// run dispatches a command line and maps its error to an exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if err := registerBuiltins(); err != nil {
		fmt.Fprintf(stderr, "dprepro: %v\n", err)
		return 2
	}
	err := dispatch(ctx, args, stdout, stderr)
	if err != nil && ctx.Err() != nil && !errors.Is(err, errInterrupted) && !errors.Is(err, errHelp) {
		// Any command cut short by Ctrl-C or SIGTERM (a download, a check)
		// ends as interrupted, whatever error the cancellation caused.
		err = fmt.Errorf("%w: %v", errInterrupted, err)
	}
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errInterrupted):
		fmt.Fprintf(stderr, "dprepro: %v\n", err)
		return 130
	case errors.As(err, new(usageError)):
		fmt.Fprintf(stderr, "dprepro: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "dprepro: %v\n", err)
		return 1
	}
}

func isHelpFlag(a string) bool {
	return a == "-h" || a == "-help" || a == "--help" || a == "help"
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stderr)
		return usagef("no command given")
	}
	name := args[0]
	rest := args[1:]
	if name == "data" {
		if len(rest) == 0 || isHelpFlag(rest[0]) {
			if len(rest) == 0 {
				return usagef("data: want a subcommand: fetch or verify (see dprepro help data)")
			}
			return helpFor(stdout, "data")
		}
		name, rest = "data "+rest[0], rest[1:]
		if _, ok := lookupCommand(name); !ok {
			return usagef("data: unknown subcommand %q (want fetch or verify)", strings.TrimPrefix(name, "data "))
		}
	}
	if isHelpFlag(name) {
		if len(rest) == 0 {
			printUsage(stdout)
			return errHelp
		}
		if isHelpFlag(rest[0]) {
			return helpFor(stdout, "help")
		}
		return helpFor(stdout, strings.Join(rest, " "))
	}
	c, ok := lookupCommand(name)
	if !ok || c.run == nil {
		return usagef("unknown command %q (want %s; see dprepro help)", name, commandNames())
	}
	err := c.run(ctx, rest, stdout, stderr)
	var hr helpRequest
	if errors.As(err, &hr) {
		printCommandHelp(stdout, c, hr.fs)
		return errHelp
	}
	return err
}

// helpFor prints the help of the named command (or of the data group) by
// running it with -h, so that the flags listed are the ones it registers.
func helpFor(stdout io.Writer, name string) error {
	if name == "data" {
		fmt.Fprintln(stdout, "usage: dprepro data fetch|verify [NAME...] [flags]")
		fmt.Fprintln(stdout)
		for _, c := range commands {
			if strings.HasPrefix(c.name, "data ") {
				fmt.Fprintf(stdout, "  %-13s %s\n", c.name, c.summary)
			}
		}
		fmt.Fprintln(stdout, "\nSee dprepro help \"data fetch\" and dprepro help \"data verify\".")
		return errHelp
	}
	c, ok := lookupCommand(name)
	if !ok {
		return usagef("help: unknown command %q (want %s)", name, commandNames())
	}
	if c.run == nil { // help itself
		printCommandHelp(stdout, c, nil)
		return errHelp
	}
	err := c.run(context.Background(), []string{"-h"}, io.Discard, io.Discard)
	var hr helpRequest
	if errors.As(err, &hr) {
		printCommandHelp(stdout, c, hr.fs)
		return errHelp
	}
	printCommandHelp(stdout, c, nil)
	return errHelp
}

func commandNames() string {
	seen := map[string]bool{}
	var names []string
	for _, c := range commands {
		n, _, _ := strings.Cut(c.name, " ")
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// registerBuiltins adds the built-in experiment kinds (package kinds) to
// runner.Kinds, once per process: the command's composition of the
// harness, beside whatever kinds a user's module registered before calling
// Main. A user's kind with a built-in name is refused here, naming it.
var registerBuiltins = sync.OnceValue(func() error { return kinds.Register(runner.Kinds) })
