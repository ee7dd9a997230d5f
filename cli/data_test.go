package cli

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dprepro/dprepro/datasets"
)

// TestDataCommands_FileStates: one table of file states, three consumers:
// `dprepro list`, `dprepro data verify` and the loader of `dprepro run`
// (datasets.Load from a named directory, as the kinds call it, and the
// datasets.Available pre-check). They must agree: a failure in one is a
// failure in all, and an unpinned file is "present, not pinned" everywhere,
// never a verification failure. The datasets package tests the same
// states in more detail (TestFileStates_OneClassification).
func TestDataCommands_FileStates(t *testing.T) {
	t.Parallel()
	magic := readFixture(t, "magic_ok.data")
	ipums := readFixture(t, "ipums_ok.txt")
	tests := []struct {
		name, dataset string
		setup         func(t *testing.T, dir string)
		state         datasets.FileState
		list          string // the list's STATUS
		verifyExit    int
		verifyStderr  string
		loadErr       error
	}{
		{"absent", "magic", func(*testing.T, string) {},
			datasets.StateAbsent, `absent: runs need data.synthetic = "allow"`, 0, "", datasets.ErrNotFound},
		{"directory", "magic", func(t *testing.T, dir string) { mkdirT(t, filepath.Join(dir, "magic04.data")) },
			datasets.StateNotRegular, "ERROR: NOT A REGULAR FILE", 2, "fail verification", datasets.ErrNotRegular},
		{"fifo", "magic", func(t *testing.T, dir string) { mkfifoT(t, filepath.Join(dir, "magic04.data.gz")) },
			datasets.StateNotRegular, "ERROR: NOT A REGULAR FILE", 2, "fail verification", datasets.ErrNotRegular},
		{"symlink loop", "magic", func(t *testing.T, dir string) {
			symlinkT(t, "b", filepath.Join(dir, "magic04.data"))
			symlinkT(t, "magic04.data", filepath.Join(dir, "b"))
		}, datasets.StateBadLink, "ERROR: BROKEN SYMLINK", 2, "fail verification", datasets.ErrBadLink},
		{"checksum mismatch", "magic", func(t *testing.T, dir string) { writeT(t, filepath.Join(dir, "magic04.data"), magic) },
			datasets.StateMismatch, "ERROR: CHECKSUM MISMATCH", 2, "fail verification", datasets.ErrChecksum},
		// Without its 8-byte trailer (CRC-32, length) every record is still
		// readable: only reading to the end catches it.
		{"truncated gz", "magic", func(t *testing.T, dir string) {
			z := gzipT(t, magic)
			writeT(t, filepath.Join(dir, "magic04.data.gz"), z[:len(z)-8])
		}, datasets.StateCorrupt, "ERROR: CORRUPT", 2, "fail verification", datasets.ErrCorrupt},
		// 3 records against the documented 39,928: a warning, not a failure.
		{"unpinned, few records", "ipums-us", func(t *testing.T, dir string) { writeT(t, filepath.Join(dir, "ipums-us.txt"), ipums) },
			datasets.StateUnpinned, "real, present, not pinned; warning: ipums-us.txt: 3 records, documented 39,928", 0,
			"warning: ipums-us.txt: 3 records, documented 39,928", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tt.setup(t, dir)
			var code int
			var stdout, stderr string

			// dprepro list
			// (exit 2 when a row says ERROR, as data verify.)
			inTime(t, func() { code, stdout, stderr = dprepro(t, "list", "--data-dir", dir, "--specs", t.TempDir()) })
			if code != tt.verifyExit || !strings.HasPrefix(stdout, "data: "+dir+" (from --data-dir)\n") {
				t.Errorf("list: exit %d, want %d\n%s%s", code, tt.verifyExit, stdout, stderr)
			}
			if wantErr := "list: 1 dataset(s) in ERROR: " + tt.dataset; (code == 2) != strings.Contains(stderr, wantErr) {
				t.Errorf("list: exit %d, stderr %q; want %q exactly when it exits 2", code, stderr, wantErr)
			}
			line := lineOf(stdout, tt.dataset)
			if !strings.Contains(line, tt.list) || tt.state == datasets.StateUnpinned && strings.Contains(line, "FAIL") {
				t.Errorf("list: %q, want %q", line, tt.list)
			}

			// dprepro data verify
			inTime(t, func() { code, stdout, stderr = dprepro(t, "data", "verify", "--data-dir", dir, tt.dataset) })
			vline := lineOf(stdout, tt.dataset)
			if code != tt.verifyExit || !strings.Contains(vline, " "+tt.state.String()+" ") && !strings.HasSuffix(vline, " "+tt.state.String()) ||
				!strings.Contains(stderr, tt.verifyStderr) {
				t.Errorf("data verify: exit %d, line %q, stderr %q; want exit %d, state %q, stderr with %q",
					code, vline, stderr, tt.verifyExit, tt.state, tt.verifyStderr)
			}

			// dprepro run's loader, from the named directory.
			var ds *datasets.Dataset
			var err error
			inTime(t, func() { ds, err = datasets.Load(tt.dataset, datasets.Options{DataDir: dir, Named: true}) })
			switch {
			case tt.state.Usable() && err != nil:
				t.Errorf("Load: %v", err)
			case tt.state.Usable():
				if ds.Source.Kind != datasets.KindReal || (len(ds.Warnings) != 0) != (tt.verifyStderr != "") {
					t.Errorf("Load: source %s, warnings %q", ds.Source.Kind, ds.Warnings)
				}
			case !errors.Is(err, tt.loadErr):
				t.Errorf("Load: error = %v, want %v", err, tt.loadErr)
			}
			_, aerr := datasets.Available(tt.dataset, datasets.DataDir{Path: dir, From: datasets.FromFlag, Named: true}, "auto")
			if stat := tt.state == datasets.StateAbsent || tt.state == datasets.StateNotRegular || tt.state == datasets.StateBadLink; stat != (aerr != nil) {
				t.Errorf("Available: %v (state %v)", aerr, tt.state)
			}
		})
	}
}

// TestDataCommands_NamedDirMissing: a data directory the user named that
// does not exist is an error (exit 2) naming it, where it was named, and
// `dprepro data fetch`; the default directory missing is not.
func TestDataCommands_NamedDirMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	for _, args := range [][]string{{"list", "--specs", t.TempDir()}, {"data", "verify"}} {
		code, _, stderr := dprepro(t, append(args, "--data-dir", missing)...)
		if code != 2 || !strings.Contains(stderr, missing+" (from --data-dir) does not exist") ||
			!strings.Contains(stderr, "dprepro data fetch --data-dir "+missing) {
			t.Errorf("%q --data-dir: exit %d, stderr %q", args, code, stderr)
		}
		t.Setenv(datasets.EnvDataDir, missing)
		code, _, stderr = dprepro(t, args...)
		if code != 2 || !strings.Contains(stderr, missing+" (from $DPREPRO_DATA) does not exist") {
			t.Errorf("%q $DPREPRO_DATA: exit %d, stderr %q", args, code, stderr)
		}
		t.Setenv(datasets.EnvDataDir, "")
	}
	// Not named: the user cache, wherever it is; verify reports and exits 0
	// unless a file there is bad, which this test cannot know.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	code, stdout, stderr := dprepro(t, "data", "verify", "magic")
	if code != 0 || !strings.Contains(stdout, "(from default: user cache)") || !strings.Contains(lineOf(stdout, "magic"), "absent") {
		t.Errorf("default dir: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = dprepro(t, "list", "--specs", t.TempDir())
	if code != 0 || !strings.Contains(lineOf(stdout, "magic"), "absent: runs use the synthetic stand-in") {
		t.Errorf("list, default dir: exit %d\n%s", code, stdout)
	}
}

// TestDataVerifyAndList_Real: the shared real files verify and list as
// real; the twitter and IPUMS files, absent there, list as needing
// data.synthetic = "allow".
func TestDataVerifyAndList_Real(t *testing.T) {
	t.Parallel()
	data := os.Getenv(datasets.EnvDataDir)
	if data == "" {
		t.Skip("DPREPRO_DATA not set: set it to ../shared/datasets to verify the real files")
	}
	code, stdout, stderr := dprepro(t, "data", "verify", "--data-dir", data, "magic", "adult")
	if code != 0 || !strings.Contains(lineOf(stdout, "magic"), "verified") || !strings.Contains(lineOf(stdout, "adult"), "verified") {
		t.Errorf("verify: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = dprepro(t, "list", "--data-dir", data, "--specs", "../experiments")
	if code != 0 || !strings.Contains(stdout, "cv13-adult") || !strings.Contains(lineOf(stdout, "magic"), "real, verified") {
		t.Errorf("list: exit %d\n%s", code, stdout)
	}
	if _, err := os.Stat(filepath.Join(data, "Twitter.data")); err != nil && !strings.Contains(lineOf(stdout, "twitter"), "absent") {
		t.Errorf("list: twitter: %q", lineOf(stdout, "twitter"))
	}
}

// TestDescribeStatus: list's summary of a dataset's file states.
func TestDescribeStatus(t *testing.T) {
	t.Parallel()
	bad := datasets.FileStatus{Name: "a", State: datasets.StateCorrupt, Err: errors.New("/d/a.gz: corrupt")}
	tests := []struct {
		name  string
		st    []datasets.FileStatus
		named bool
		want  string
	}{
		{"verified", []datasets.FileStatus{{State: datasets.StateVerified}}, true, "real, verified"},
		{"unpinned", []datasets.FileStatus{{State: datasets.StateUnpinned}}, true, "real, present, not pinned"},
		{"failure", []datasets.FileStatus{bad}, false, "ERROR: CORRUPT: /d/a.gz: corrupt"},
		{"absent, named", []datasets.FileStatus{{}}, true, `absent: runs need data.synthetic = "allow" for the stand-in`},
		{"absent, default", []datasets.FileStatus{{}}, false, "absent: runs use the synthetic stand-in"},
		{"partly", []datasets.FileStatus{{State: datasets.StateVerified}, {}}, false, "partly present: the real data cannot be loaded"},
	}
	for _, tt := range tests {
		if got, _ := describeStatus(tt.st, nil, tt.named); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// lineOf returns the first line of out that starts with the word name.
func lineOf(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return strings.TrimRight(l, " ")
		}
	}
	return ""
}

// inTime fails the test when fn has not returned within a minute: a
// command that opened a FIFO would block forever. (A hang guard: the
// commands take milliseconds, so no load reaches a minute.)
func inTime(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("blocked for a minute: a FIFO was opened?")
	}
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "datasets", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipT(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeT(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdirT(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlinkT(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlink: %v", err)
	}
}
