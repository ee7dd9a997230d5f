package main

import (
	"fmt"
	"io"
	"os"

	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
)

// dataDir is the data directory of a command and where it came from.
// (Provisional: replaced by datasets.DataDir.)
type dataDir struct {
	Path, From string
	Named      bool
}

func (d dataDir) String() string { return d.Path + " (from " + d.From + ")" }

func resolveData(flagValue string, stderr io.Writer) (dataDir, error) {
	d := dataDir{Path: flagValue, From: "--data-dir", Named: true}
	if d.Path == "" {
		if v := os.Getenv(datasets.EnvDataDir); v != "" {
			d = dataDir{Path: v, From: "$" + datasets.EnvDataDir, Named: true}
		} else {
			d = dataDir{Path: datasets.DefaultDataDir(), From: "default: the per-user directory"}
		}
	}
	fmt.Fprintf(stderr, "dprepro: data: %s\n", d)
	return d, nil
}

func checkData(specs []*experiments.Spec, dd dataDir) error { return nil }

func defaultDataDirDoc() string {
	c, err := os.UserCacheDir()
	if err != nil {
		return "$XDG_CACHE_HOME/dprepro/data"
	}
	return c + "/dprepro/data"
}

// dataDirectory is the data directory of the list and data commands.
// (Provisional: replaced by datasets.ResolveDataDir.)
func (f *runFlags) dataDirectory() string {
	if f.dataDir != "" {
		return f.dataDir
	}
	return datasets.DefaultDataDir()
}
