package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/dprepro/dprepro/results"
)

// cmdVersion prints the build: module version, VCS revision, commit time
// and dirty flag (as manifest.json records them), Go version and platform.
func cmdVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("version: unexpected argument %q", rest[0])
	}
	fmt.Fprintf(stdout, "dprepro %s\n%s %s/%s\n", results.ReadBuild(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
