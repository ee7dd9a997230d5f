// Command dprepro reproduces the experiments of differential-privacy machine
// learning papers from TOML specs, in parallel and deterministically.
//
// Usage:
//
//	dprepro run SPEC.toml... [--profile quick|paper] [--out DIR] [--workers N] [--seed S] [--data-dir DIR]
//	dprepro reproduce [--specs DIR] [same flags]   run every spec in DIR (default experiments/)
//	dprepro list [--specs DIR] [--data-dir DIR]     the specs, and each dataset's status
//	dprepro check RUN_DIR [--against DIR] [--z 3]   compare runs with the reference summaries
//	dprepro run SPEC... --shard i/N                  one deterministic 1/N of the units (Slurm/Kubernetes index from the environment)
//	dprepro merge SPEC... --shards DIR,DIR,...       finish a run from its shards' checkpoints
//	dprepro audit [MECHANISM...] [--thorough]        empirical privacy audit: lower bounds on ε vs the claims
//	dprepro data fetch [NAME...] [--data-dir DIR]   download the real files from UCI, verify SHA-256
//	dprepro data verify [--data-dir DIR]            re-check the files present
//
// The data directory is --data-dir, else $DPREPRO_DATA, else a per-user cache
// directory. Runs go to --out (default results/runs), one folder per spec:
// spec.toml, rows.csv, summary.csv, figures/ and manifest.json (written last).
// An interrupted run resumes from its finished units when started again.
//
// Example (the quick profile of the Chaudhuri & Vinterbo reproduction on the
// Magic data):
//
//	dprepro run experiments/cv13-magic.toml --profile quick --data-dir ../shared/datasets
//
// Exit status: 0 on success, 1 when a run fails, 2 for a bad flag, spec or
// data file (with a one-line message naming the file and the key, line or
// row at fault).
//
// Noise is drawn from seeded pseudo-random streams so that runs replay
// exactly: right for research, wrong for protecting real data.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// usageError marks errors in flags, specs or data files: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// errHelp is returned after -h printed the usage: exit status 0.
var errHelp = errors.New("help requested")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  dprepro run SPEC.toml... [--profile quick|paper] [--out DIR] [--workers N] [--seed S] [--data-dir DIR]
  dprepro reproduce [--specs DIR] [--profile quick|paper] [--out DIR] [--workers N] [--seed S] [--data-dir DIR]
  dprepro list [--specs DIR] [--data-dir DIR]
  dprepro check RUN_DIR [--against results/reference] [--z 3]
  dprepro run SPEC.toml... --shard i/N [same flags]   (or from SLURM_ARRAY_TASK_ID/COUNT, JOB_COMPLETION_INDEX with --shard-count N)
  dprepro merge SPEC.toml... --shards DIR,DIR,... [--out DIR] [same flags]
  dprepro audit [MECHANISM...] [--thorough] [--spec experiments/audit.toml] [--out DIR] [--workers N] [--seed S]
  dprepro data fetch [NAME...] [--data-dir DIR]
  dprepro data verify [--data-dir DIR]
`

// run dispatches a command line and maps its error to an exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(stderr, "dprepro: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "dprepro: %v\n", err)
		return 1
	}
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("no command given")
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "reproduce":
		return cmdReproduce(ctx, args[1:], stdout, stderr)
	case "list":
		return cmdList(ctx, args[1:], stdout, stderr)
	case "check":
		return cmdCheck(args[1:], stdout, stderr)
	case "merge":
		return cmdMerge(ctx, args[1:], stdout, stderr)
	case "audit":
		return cmdAudit(ctx, args[1:], stdout, stderr)
	case "data":
		if len(args) < 2 {
			return usagef("data: want a subcommand: fetch or verify")
		}
		switch args[1] {
		case "fetch":
			return cmdDataFetch(ctx, args[2:], stdout, stderr)
		case "verify":
			return cmdDataVerify(ctx, args[2:], stdout, stderr)
		}
		return usagef("data: unknown subcommand %q (want fetch or verify)", args[1])
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return errHelp
	}
	return usagef("unknown command %q (want run, reproduce, list, check, merge, audit or data)", args[0])
}
