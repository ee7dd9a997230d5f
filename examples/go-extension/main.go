// Command dprepro-ext is dprepro with two additions made outside its
// repository: the private learner noisy-gd (package noisygd) and the dataset
// credit-sim (package mydata). It is the whole of what a researcher writes
// to put a Go method beside the published baselines: register, then hand
// over to the command.
//
//	go build -o dprepro-ext . && ./dprepro-ext run noisygd.toml --profile quick
package main

import (
	"fmt"
	"os"

	"github.com/dprepro/dprepro/cli"
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/methods/learners"

	"example.com/dprepro-ext/mydata"
	"example.com/dprepro-ext/noisygd"
)

func main() {
	if err := learners.Register(noisygd.Learner{Steps: 30}); err != nil {
		fmt.Fprintln(os.Stderr, "dprepro-ext:", err)
		os.Exit(2)
	}
	if err := datasets.Register(mydata.Credit{}); err != nil {
		fmt.Fprintln(os.Stderr, "dprepro-ext:", err)
		os.Exit(2)
	}
	os.Exit(cli.Main())
}
