package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
)

func cmdList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlagSet("list", stderr)
	fs.StringVar(&f.specs, "specs", "experiments", "directory of spec files")
	fs.StringVar(&f.dataDir, "data-dir", "", "data directory (default $DPREPRO_DATA, else the user cache)")
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("list: unexpected argument %q", rest[0])
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SPEC\tKIND\tFILE\tTITLE")
	files, _ := filepath.Glob(filepath.Join(f.specs, "*.toml"))
	for _, file := range files {
		s, err := experiments.Load(file, "paper")
		if err != nil {
			fmt.Fprintf(tw, "?\t?\t%s\tINVALID: %v\n", file, err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, s.Kind, file, s.Title)
	}
	if len(files) == 0 {
		fmt.Fprintf(tw, "(no specs in %s)\n", f.specs)
	}
	fmt.Fprintln(tw)
	dir := f.dataDirectory()
	fmt.Fprintf(tw, "DATASET\tSTATUS\tFILES (in %s)\n", dir)
	for _, name := range datasets.Names() {
		st, err := datasets.Status(name, dir)
		status, files := describeStatus(st, err)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, status, files)
	}
	return tw.Flush()
}

// describeStatus summarizes a dataset's files: real and verified, present
// but failing verification, or absent (the synthetic stand-in is used).
func describeStatus(st []datasets.FileStatus, err error) (status, files string) {
	if err != nil {
		return "error: " + err.Error(), ""
	}
	present, verified, bad := 0, 0, 0
	for i, s := range st {
		if i > 0 {
			files += ", "
		}
		files += s.Name
		if s.Present {
			present++
			if s.Verified {
				verified++
			} else {
				bad++
			}
		}
	}
	switch {
	case bad > 0:
		return "real file present but FAILS verification", files
	case present == len(st) && verified == len(st):
		return "real, verified", files
	case present == 0:
		return "missing: synthetic stand-in only", files
	default:
		return "partly present: synthetic stand-in only", files
	}
}

func cmdDataFetch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	names, dir, err := dataArgs("data fetch", args, stderr)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 30 * time.Minute}
	all := len(names) == len(datasets.Names()) && !slices.ContainsFunc(args, func(a string) bool { return slices.Contains(names, a) })
	var failed int
	for _, n := range names {
		fmt.Fprintf(stderr, "dprepro: fetching %s into %s\n", n, dir)
		if err := datasets.Fetch(ctx, client, n, dir, stderr); err != nil {
			fmt.Fprintf(stderr, "dprepro: %s: %v\n", n, err)
			if all && errors.Is(err, datasets.ErrNoDownload) {
				// Fetching everything skips the datasets the user must
				// supply (IPUMS); naming one makes its absence an error.
				fmt.Fprintf(stdout, "%s: not downloadable; supply the file yourself (see above)\n", n)
				continue
			}
			failed++
			continue
		}
		fmt.Fprintf(stdout, "%s: fetched and verified\n", n)
	}
	if failed > 0 {
		return fmt.Errorf("data fetch: %d of %d datasets failed", failed, len(names))
	}
	return nil
}

func cmdDataVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	names, dir, err := dataArgs("data verify", args, stderr)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "DATASET\tFILE\tSTATE\tSHA-256\n")
	var bad []string
	for _, n := range names {
		st, err := datasets.Status(n, dir)
		if err != nil {
			return usageError{err}
		}
		for _, s := range st {
			state := "absent"
			switch {
			case s.Present && s.Verified:
				state = "verified"
			case s.Present && s.Want == "":
				state = "present (no pinned checksum)"
			case s.Present:
				state = "CHECKSUM MISMATCH (want " + s.Want + ")"
				if s.Err != nil {
					state = "ERROR: " + s.Err.Error()
				}
				bad = append(bad, s.Path)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n, s.Name, state, s.SHA256)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(bad) > 0 {
		return usagef("data verify: %d file(s) fail verification: %v", len(bad), bad)
	}
	return nil
}

// dataArgs parses the flags and dataset names of a data subcommand: no
// names means every registered dataset.
func dataArgs(cmd string, args []string, stderr io.Writer) (names []string, dir string, err error) {
	var f runFlags
	fs := newFlagSet(cmd, stderr)
	fs.StringVar(&f.dataDir, "data-dir", "", "data directory (default $DPREPRO_DATA, else the user cache)")
	if names, err = parseInterleaved(fs, args); err != nil {
		return nil, "", err
	}
	if len(names) == 0 {
		names = datasets.Names()
	}
	for _, n := range names {
		if _, ok := datasets.Lookup(n); !ok {
			return nil, "", usagef("%s: unknown dataset %q", cmd, n)
		}
	}
	return names, f.dataDirectory(), nil
}
