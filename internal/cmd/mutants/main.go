// Command mutants runs the project's mutation testing of privacy bugs
// (package internal/mutants): `make mutants`, or
//
//	go run ./internal/cmd/mutants [-list mutants/mutants.toml] [-out mutants/report.md] [-only id,id]
//
// It exits 0 when every mutant is killed, 1 when one survives, and 2 for
// an error in the list or a failing baseline.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/dprepro/dprepro/internal/mutants"
)

func main() {
	list := flag.String("list", "mutants/mutants.toml", "the mutants file")
	out := flag.String("out", "", "also write the Markdown report to this file")
	only := flag.String("only", "", "comma-separated mutant ids to run (default all)")
	timeout := flag.Duration("timeout", 10*time.Minute, "time limit of one mutant's tests")
	flag.Parse()
	l, err := mutants.Load(*list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(2)
	}
	if *only != "" {
		want := map[string]bool{}
		for _, id := range strings.Split(*only, ",") {
			want[strings.TrimSpace(id)] = true
		}
		var keep []mutants.Mutant
		for _, m := range l.Mutants {
			if want[m.ID] {
				keep = append(keep, m)
				delete(want, m.ID)
			}
		}
		for id := range want {
			fmt.Fprintf(os.Stderr, "mutants: -only: no mutant %q in %s\n", id, *list)
			os.Exit(2)
		}
		l.Mutants = keep
	}
	root, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := mutants.Run(ctx, l, mutants.Options{Root: root, Timeout: *timeout, Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(2)
	}
	var b strings.Builder
	mutants.Markdown(&b, res)
	fmt.Print(b.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mutants:", err)
			os.Exit(2)
		}
	}
	s := mutants.Summarize(res)
	switch {
	case s.Errors > 0:
		os.Exit(2)
	case s.Survived > 0:
		os.Exit(1)
	}
}
