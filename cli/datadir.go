package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/runner/specdata"
)

// dataDir is the data folder of a command and where it came from
// (datasets.ResolveDataDir: --data-dir, $DPREPRO_DATA, the per-user
// folder).
type dataDir = datasets.DataDir

// resolveData resolves the data folder, prints it as the first line of the
// run ("data: /path (from --data-dir)") and refuses a named folder that does
// not exist (exit 2).
func resolveData(flagValue string, stderr io.Writer) (dataDir, error) {
	d := datasets.ResolveDataDir(flagValue, os.Getenv)
	fmt.Fprintf(stderr, "dprepro: data: %s\n", d)
	if err := d.Check(); err != nil {
		return d, usageError{err}
	}
	return d, nil
}

// checkData checks, before any run starts, that every dataset of every spec
// can be loaded as its data.synthetic policy requires (a stat of each file,
// no reading): a named folder lacking a file a spec needs is exit 2 here,
// naming the folder, the file and `dprepro data fetch`, instead of after
// the specs before it have run; so is a missing data file of data.files.
func checkData(specs []*experiments.Spec, dd dataDir) error {
	for _, s := range specs {
		for _, name := range specDatasets(s) {
			if _, err := specdata.Available(s, name, dd); err != nil {
				return usageError{s.Attribute(err)}
			}
		}
	}
	return nil
}

// specDatasets lists the datasets a spec reads: data.datasets (every kind
// reads its data from there; the histogram kind's attributes must name one
// of them).
func specDatasets(s *experiments.Spec) []string {
	return append([]string(nil), s.Data.Datasets...)
}

// defaultDataDirDoc is the per-user data folder, for the manual.
func defaultDataDirDoc() string {
	c, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join("$XDG_CACHE_HOME", "dprepro", "data")
	}
	return filepath.Join(c, "dprepro", "data")
}
