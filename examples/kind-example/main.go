// Command dprepro-kind is dprepro with one more experiment kind, made
// outside its repository: rr-proportion (package rrcount), the proportion
// of a population estimated from randomized-response releases. It is the
// whole of what a researcher writes to add a kind: register it, then hand
// over to the command, which then loads, runs, resumes, summarizes, plots
// and books the privacy of its specs like those of a built-in kind.
//
//	go build -o dprepro-kind . && ./dprepro-kind run rr.toml --profile quick
package main

import (
	"fmt"
	"os"

	"github.com/dprepro/dprepro/cli"
	"github.com/dprepro/dprepro/runner"

	"example.com/dprepro-kind/rrcount"
)

func main() {
	if err := runner.RegisterKind(rrcount.Kind); err != nil {
		fmt.Fprintln(os.Stderr, "dprepro-kind:", err)
		os.Exit(2)
	}
	os.Exit(cli.Main())
}
