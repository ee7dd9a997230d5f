// Command dprepro reproduces the experiments of differential-privacy machine
// learning papers from TOML specs, in parallel and deterministically. Its
// manual is the documentation of package [github.com/dprepro/dprepro/cli]
// (`dprepro help` prints it).
package main

import (
	"os"

	"github.com/dprepro/dprepro/cli"
)

func main() { os.Exit(cli.Main()) }
