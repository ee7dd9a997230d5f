package datasets

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// EnvDataDir names the environment variable that [ResolveDataDir] reads.
const EnvDataDir = "DPREPRO_DATA"

// Where a [DataDir] came from, for [DataDir.From].
const (
	FromFlag      = "--data-dir"
	FromEnv       = "$" + EnvDataDir
	FromUserCache = "default: user cache"
	FromTemp      = "default: temporary directory (no user cache directory)"
)

// DataDir is the directory holding the real data files, and how it was
// chosen.
type DataDir struct {
	// Path is the directory, as given (it may be relative).
	Path string
	// From says where Path came from: FromFlag, FromEnv, FromUserCache or
	// FromTemp.
	From string
	// Named reports that the user named the directory (--data-dir or
	// $DPREPRO_DATA). A named directory must exist and hold every file a
	// run needs: a missing file is then an error, not a reason to use a
	// synthetic stand-in (see [Options.Named]).
	Named bool
}

// ResolveDataDir returns the data directory by the one search order of the
// binary and the scripts:
//
//  1. flagValue (the --data-dir flag), when non-empty;
//  2. getenv("DPREPRO_DATA"), when non-empty;
//  3. os.UserCacheDir()/dprepro/data, where `dprepro data fetch` downloads;
//  4. os.TempDir()/dprepro/data, when there is no user cache directory
//     ($HOME unset).
//
// The first two are named by the user (DataDir.Named); the defaults are not.
// getenv is os.Getenv outside tests. ResolveDataDir does not look at the
// file system beyond os.UserCacheDir; [DataDir.Check] does.
func ResolveDataDir(flagValue string, getenv func(string) string) DataDir {
	if flagValue != "" {
		return DataDir{Path: flagValue, From: FromFlag, Named: true}
	}
	if d := getenv(EnvDataDir); d != "" {
		return DataDir{Path: d, From: FromEnv, Named: true}
	}
	if c, err := os.UserCacheDir(); err == nil {
		return DataDir{Path: filepath.Join(c, "dprepro", "data"), From: FromUserCache}
	}
	return DataDir{Path: filepath.Join(os.TempDir(), "dprepro", "data"), From: FromTemp}
}

// String returns the line a run prints first, e.g.
// "/data (from --data-dir)".
func (d DataDir) String() string {
	return fmt.Sprintf("%s (from %s)", d.Path, d.From)
}

// Check returns an error wrapping [ErrDataDir] when the user named the
// directory and it does not exist, is not a directory or cannot be
// examined. The error names the directory, where it was named, and the
// command that fills it. A default directory (not named) that does not
// exist is no error: every dataset is then absent and runs use the
// synthetic stand-ins.
func (d DataDir) Check() error {
	if !d.Named {
		return nil
	}
	fi, err := os.Stat(d.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s (from %s) does not exist: create it with `dprepro data fetch --data-dir %s` "+
			"(the IPUMS extracts you place there yourself), or name the directory that holds the data",
			ErrDataDir, d.Path, d.From, d.Path)
	case err != nil:
		return fmt.Errorf("%w: %s (from %s): %v", ErrDataDir, d.Path, d.From, err)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s (from %s) is not a directory (%s): name the directory that holds the data, "+
			"or fill a new one with `dprepro data fetch --data-dir DIR`", ErrDataDir, d.Path, d.From, describeMode(fi.Mode()))
	}
	return nil
}

// DefaultDataDir returns the path [ResolveDataDir] gives when no --data-dir
// flag is given: $DPREPRO_DATA if set and non-empty, else
// os.UserCacheDir()/dprepro/data, else os.TempDir()/dprepro/data.
func DefaultDataDir() string {
	return ResolveDataDir("", os.Getenv).Path
}

// describeMode names the kind of a file that is not a regular file.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file (" + m.Type().String() + ")"
}
