package datasets

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stateCase is one file state built in a fresh data directory. The same
// cases drive Inspect, Load and Available here, and `dprepro list`,
// `dprepro data verify` and `dprepro run`'s loader in package cli
// (TestDataCommands_FileStates), so that every consumer classifies a state
// the same way.
type stateCase struct {
	name    string
	dataset string
	setup   func(t *testing.T, dir string)
	want    FileState
	wantErr error  // the sentinel of FileStatus.Err and of Load's error
	warning string // FileStatus.Warning and Dataset.Warnings
	// statOnly: Available (a stat, no read) passes it; Load fails.
	statOnly bool
}

func stateCases(t *testing.T) []stateCase {
	t.Helper()
	magic := fixture(t, "magic_ok.data")
	ipums := fixture(t, "ipums_ok.txt")
	cases := []stateCase{
		{name: "absent", dataset: "magic", setup: func(*testing.T, string) {}, want: StateAbsent, wantErr: ErrNotFound},
		{name: "directory", dataset: "magic", want: StateNotRegular, wantErr: ErrNotRegular,
			setup: func(t *testing.T, dir string) { mkdir(t, filepath.Join(dir, "magic04.data")) }},
		// A directory at NAME.gz is not absence either, even with no NAME.
		{name: "directory .gz", dataset: "magic", want: StateNotRegular, wantErr: ErrNotRegular,
			setup: func(t *testing.T, dir string) { mkdir(t, filepath.Join(dir, "magic04.data.gz")) }},
		// A good NAME does not excuse a directory at NAME.gz.
		{name: "directory .gz beside a file", dataset: "ipums-us", want: StateNotRegular, wantErr: ErrNotRegular,
			setup: func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "ipums-us.txt"), ipums)
				mkdir(t, filepath.Join(dir, "ipums-us.txt.gz"))
			}},
		{name: "fifo", dataset: "magic", want: StateNotRegular, wantErr: ErrNotRegular,
			setup: func(t *testing.T, dir string) { mkfifo(t, filepath.Join(dir, "magic04.data")) }},
		{name: "symlink loop", dataset: "magic", want: StateBadLink, wantErr: ErrBadLink,
			setup: func(t *testing.T, dir string) {
				symlink(t, "loop", filepath.Join(dir, "magic04.data"))
				symlink(t, "magic04.data", filepath.Join(dir, "loop"))
			}},
		{name: "dangling symlink", dataset: "magic", want: StateBadLink, wantErr: ErrBadLink,
			setup: func(t *testing.T, dir string) { symlink(t, "nowhere", filepath.Join(dir, "magic04.data.gz")) }},
		{name: "checksum mismatch", dataset: "magic", want: StateMismatch, wantErr: ErrChecksum, statOnly: true,
			setup: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "magic04.data"), magic) }},
		// The last 8 bytes of a gzip stream are the CRC-32 and length of
		// the content: cutting them leaves every record readable, and only
		// reading to the end catches it.
		{name: "truncated gz", dataset: "magic", want: StateCorrupt, wantErr: ErrCorrupt, statOnly: true,
			setup: func(t *testing.T, dir string) {
				z := gz(t, magic)
				write(t, filepath.Join(dir, "magic04.data.gz"), z[:len(z)-8])
			}},
		{name: "gz with a bad CRC", dataset: "ipums-us", want: StateCorrupt, wantErr: ErrCorrupt, statOnly: true,
			setup: func(t *testing.T, dir string) {
				z := gz(t, ipums)
				z[len(z)-8] ^= 0xff // first byte of the CRC-32
				write(t, filepath.Join(dir, "ipums-us.txt.gz"), z)
			}},
		{name: "not gzip", dataset: "magic", want: StateCorrupt, wantErr: ErrCorrupt, statOnly: true,
			setup: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "magic04.data.gz"), magic) }},
		// ipums_ok.txt: 3 records (and a blank line), against the documented
		// 39,928 (docs/datasets.md): present, not pinned, a warning.
		{name: "unpinned, few records", dataset: "ipums-us", want: StateUnpinned,
			warning: "ipums-us.txt: 3 records, documented 39,928",
			setup:   func(t *testing.T, dir string) { write(t, filepath.Join(dir, "ipums-us.txt"), ipums) }},
		{name: "unpinned gz via symlink", dataset: "ipums-us", want: StateUnpinned,
			warning: "ipums-us.txt: 3 records, documented 39,928",
			setup: func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "extract.gz"), gz(t, ipums))
				symlink(t, "extract.gz", filepath.Join(dir, "ipums-us.txt.gz"))
			}},
	}
	if real := os.Getenv(EnvDataDir); real != "" {
		if _, err := os.Stat(filepath.Join(real, "magic04.data.gz")); err == nil {
			abs, _ := filepath.Abs(filepath.Join(real, "magic04.data.gz"))
			cases = append(cases, stateCase{name: "verified (real, via symlink)", dataset: "magic", want: StateVerified,
				setup: func(t *testing.T, dir string) { symlink(t, abs, filepath.Join(dir, "magic04.data.gz")) }})
		}
	}
	return cases
}

// TestFileStates_OneClassification: Inspect, Load (from a named directory,
// synthetic "auto") and Available agree on every file state, and the
// errors name the file and wrap the state's sentinel.
func TestFileStates_OneClassification(t *testing.T) {
	t.Parallel()
	for _, tt := range stateCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tt.setup(t, dir)
			file := builtinEntry(tt.dataset).Files[0].Name

			var st []FileStatus
			var err error
			within(t, func() { st, err = Inspect(tt.dataset, dir) })
			if err != nil {
				t.Fatal(err)
			}
			got := st[0]
			if got.State != tt.want || got.Warning != tt.warning {
				t.Errorf("Inspect: state %v, warning %q; want %v, %q (err %v)", got.State, got.Warning, tt.want, tt.warning, got.Err)
			}
			if got.State.Failed() != (tt.wantErr != nil && tt.want != StateAbsent) {
				t.Errorf("Inspect: %v.Failed() = %t", got.State, got.State.Failed())
			}
			if tt.want != StateAbsent && tt.wantErr != nil {
				if !errors.Is(got.Err, tt.wantErr) || !strings.Contains(got.Err.Error(), filepath.Join(dir, file)) {
					t.Errorf("Inspect: Err = %v, want %v naming %s", got.Err, tt.wantErr, filepath.Join(dir, file))
				}
			}

			var ds *Dataset
			within(t, func() { ds, err = Load(tt.dataset, Options{DataDir: dir, Named: true}) })
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), dir) {
					t.Errorf("Load: error = %v, want %v naming %s and %s", err, tt.wantErr, file, dir)
				}
				if tt.want != StateAbsent && err.Error() != "datasets: load "+tt.dataset+": "+got.Err.Error() &&
					!strings.HasPrefix(err.Error(), "datasets: load "+tt.dataset+": "+got.Err.Error()+"\n") {
					t.Errorf("Load: error %q is not Inspect's %q", err, got.Err)
				}
			case err != nil:
				t.Errorf("Load: %v", err)
			default:
				f := ds.Source.Files[0]
				if ds.Source.Kind != KindReal || f.Verified != (tt.want == StateVerified) || f.SHA256 != got.SHA256 || f.Path != got.Path {
					t.Errorf("Load: source %+v; Inspect %+v", ds.Source, got)
				}
				if tt.warning == "" && len(ds.Warnings) != 0 || tt.warning != "" && (len(ds.Warnings) != 1 || ds.Warnings[0] != tt.warning) {
					t.Errorf("Load: warnings %q, want %q", ds.Warnings, tt.warning)
				}
			}

			var standIn bool
			within(t, func() { standIn, err = Available(tt.dataset, DataDir{Path: dir, From: FromFlag, Named: true}, "") })
			switch {
			case tt.wantErr != nil && !tt.statOnly:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Available: error = %v, want %v", err, tt.wantErr)
				}
			case err != nil || standIn:
				t.Errorf("Available = %t, %v; want false, nil", standIn, err)
			}
		})
	}
}

// TestLoad_SyntheticPolicy: what an absent file means for each mode, from
// a named directory and from the default one.
func TestLoad_SyntheticPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		dataset, synthetic string
		named              bool
		wantStandIn        bool
		wantErr            []string // substrings of the error
	}{
		{"magic", SyntheticAuto, true, false, []string{"magic04.data or magic04.data.gz", dir, "dprepro data fetch magic --data-dir " + dir, `data.synthetic = "allow"`}},
		{"magic", SyntheticAuto, false, true, nil},
		{"magic", SyntheticAllow, true, true, nil},
		{"magic", SyntheticAllow, false, true, nil},
		{"magic", SyntheticNever, false, false, []string{"magic04.data", "never", "dprepro data fetch magic"}},
		{"magic", SyntheticAlways, true, true, nil},
		// No download for IPUMS: the error says how to obtain the extract.
		{"ipums-us", SyntheticAuto, true, false, []string{"ipums-us.txt or ipums-us.txt.gz", dir, "https://usa.ipums.org"}},
		{"ipums-us", SyntheticAllow, true, true, nil},
	}
	for _, tt := range tests {
		ds, err := Load(tt.dataset, Options{DataDir: dir, Named: tt.named, Synthetic: tt.synthetic})
		standIn, aerr := Available(tt.dataset, DataDir{Path: dir, Named: tt.named}, tt.synthetic)
		what := tt.dataset + "/" + tt.synthetic
		if tt.named {
			what += "/named"
		}
		if tt.wantErr != nil {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: Load error = %v, want ErrNotFound", what, err)
				continue
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: Load error %q does not mention %q", what, err, s)
				}
			}
			if aerr == nil || aerr.Error() != err.Error() {
				t.Errorf("%s: Available error %v, Load's %v", what, aerr, err)
			}
			continue
		}
		if err != nil || aerr != nil {
			t.Errorf("%s: Load error %v, Available error %v", what, err, aerr)
			continue
		}
		if ds.Source.Kind != KindSynthetic || !standIn {
			t.Errorf("%s: source %s, Available stand-in %t; want the stand-in", what, ds.Source.Kind, standIn)
		}
		if tt.synthetic == SyntheticAllow && !strings.Contains(ds.Source.Params["reason"], `"allow"`) {
			t.Errorf("%s: reason %q does not say the spec allows it", what, ds.Source.Params["reason"])
		}
	}
}

func TestResolveDataDir_Order(t *testing.T) {
	t.Parallel()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache directory: %v", err)
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvDataDir {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		flag, env string
		want      DataDir
	}{
		{"/flag", "/env", DataDir{Path: "/flag", From: FromFlag, Named: true}},
		{"", "/env", DataDir{Path: "/env", From: FromEnv, Named: true}},
		{"", "", DataDir{Path: filepath.Join(cache, "dprepro", "data"), From: FromUserCache}},
	}
	for _, tt := range tests {
		if got := ResolveDataDir(tt.flag, env(tt.env)); got != tt.want {
			t.Errorf("ResolveDataDir(%q) with $%s=%q = %+v, want %+v", tt.flag, EnvDataDir, tt.env, got, tt.want)
		}
	}
	if got := (DataDir{Path: "/d", From: FromFlag}).String(); got != "/d (from --data-dir)" {
		t.Errorf("String() = %q", got)
	}
}

func TestDefaultDataDir(t *testing.T) {
	t.Setenv(EnvDataDir, "/some/where")
	if got := DefaultDataDir(); got != "/some/where" {
		t.Errorf("DefaultDataDir() = %q with %s set", got, EnvDataDir)
	}
	t.Setenv(EnvDataDir, "")
	if got := DefaultDataDir(); !strings.HasSuffix(got, filepath.Join("dprepro", "data")) {
		t.Errorf("DefaultDataDir() = %q, want …/dprepro/data", got)
	}
}

func TestDataDir_Check(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	missing := filepath.Join(root, "missing")
	file := filepath.Join(root, "file")
	write(t, file, []byte("x"))
	tests := []struct {
		name    string
		dir     DataDir
		wantErr []string
	}{
		{"named, missing", DataDir{Path: missing, From: FromFlag, Named: true},
			[]string{missing, "does not exist", "--data-dir", "dprepro data fetch --data-dir " + missing}},
		{"named by env, missing", DataDir{Path: missing, From: FromEnv, Named: true}, []string{missing, "$DPREPRO_DATA"}},
		{"named, a file", DataDir{Path: file, From: FromFlag, Named: true}, []string{file, "not a directory"}},
		{"named, exists", DataDir{Path: root, From: FromFlag, Named: true}, nil},
		{"default, missing", DataDir{Path: missing, From: FromUserCache}, nil},
	}
	for _, tt := range tests {
		err := tt.dir.Check()
		if tt.wantErr == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrDataDir) {
			t.Errorf("%s: error = %v, want ErrDataDir", tt.name, err)
			continue
		}
		for _, s := range tt.wantErr {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not mention %q", tt.name, err, s)
			}
		}
		if _, aerr := Available("magic", tt.dir, SyntheticAlways); !errors.Is(aerr, ErrDataDir) {
			t.Errorf("%s: Available error = %v, want ErrDataDir", tt.name, aerr)
		}
	}
}

// TestFileStates_Unreadable: a file its reader may not open. The tests run
// as root in CI, where permission bits do not stop a read: then only the
// classification of the errors the system would return is tested
// (TestReadFailure_Classify).
func TestFileStates_Unreadable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("running as root: permission bits do not stop reads (see TestReadFailure_Classify)")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "ipums-us.txt")
	write(t, p, fixture(t, "ipums_ok.txt"))
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	st, _ := Inspect("ipums-us", dir)
	_, err := Load("ipums-us", Options{DataDir: dir, Named: true})
	if st[0].State != StateUnreadable || !errors.Is(st[0].Err, ErrUnreadable) || !errors.Is(err, ErrUnreadable) {
		t.Errorf("Inspect %+v; Load error %v; want unreadable", st[0], err)
	}
}

// TestReadFailure_Classify classifies the errors os.Stat, os.Open and a
// read return, as the system would return them.
func TestReadFailure_Classify(t *testing.T) {
	t.Parallel()
	const p = "/d/x.gz"
	perm := &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES}
	tests := []struct {
		name    string
		state   FileState
		err     error
		want    FileState
		wantErr error
	}{
		{"open: permission", 0, perm, StateUnreadable, ErrUnreadable},
		{"read: I/O error", 0, &fs.PathError{Op: "read", Path: p, Err: syscall.EIO}, StateUnreadable, ErrUnreadable},
		{"gzip: truncated", 0, io.ErrUnexpectedEOF, StateCorrupt, ErrCorrupt},
		{"gzip: empty", 0, io.EOF, StateCorrupt, ErrCorrupt},
		{"gzip: CRC", 0, gzip.ErrChecksum, StateCorrupt, ErrCorrupt},
		{"gzip: header", 0, gzip.ErrHeader, StateCorrupt, ErrCorrupt},
	}
	for _, tt := range tests {
		got, err := readFailure(p, tt.err)
		if got != tt.want || !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: readFailure = %v, %v; want %v wrapping %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
	stats := []struct {
		name    string
		err     error
		want    FileState
		wantErr error
	}{
		{"stat: permission", &fs.PathError{Op: "stat", Path: p, Err: syscall.EACCES}, StateUnreadable, ErrUnreadable},
		{"stat: loop", &fs.PathError{Op: "stat", Path: p, Err: syscall.ELOOP}, StateBadLink, ErrBadLink},
		{"stat: other", &fs.PathError{Op: "stat", Path: p, Err: syscall.ENAMETOOLONG}, StateUnreadable, ErrUnreadable},
	}
	for _, tt := range stats {
		got, err := statFailure(p, tt.err)
		if got != tt.want || !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: statFailure = %v, %v; want %v wrapping %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestInspect_VerifiedFixture: a pinned file that matches, plain and
// gzipped, read by Inspect's and Load's common path (a fixture entry, so
// that no real data is needed).
func TestInspect_VerifiedFixture(t *testing.T) {
	t.Parallel()
	e := fixtureEntry(t, "magic", "m.data", magicOKSHA256)
	for _, name := range []string{"m.data", "m.data.gz"} {
		dir := t.TempDir()
		content := fixture(t, "magic_ok.data")
		if strings.HasSuffix(name, ".gz") {
			content = gz(t, content)
		}
		write(t, filepath.Join(dir, name), content)
		st := inspectFile(e, e.Files[0], dir)
		tb, err := readTable(e, dir)
		if st.State != StateVerified || st.Err != nil || st.Records != 0 || err != nil || !tb.Files[0].Verified {
			t.Errorf("%s: Inspect %+v; readTable error %v", name, st, err)
		}
	}
}

func TestRecordWarning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		got, doc int
		want     string
	}{
		{39928, 39928, ""},
		{35936, 39928, ""}, // 3,992 below: within 10 % (3,992.8)
		{35935, 39928, "f: 35,935 records, documented 39,928"},
		{43920, 39928, ""}, // 3,992 above
		{43921, 39928, "f: 43,921 records, documented 39,928"},
		{1000, 0, ""}, // documented count unknown
		{0, 583250, "f: 0 records, documented 583,250"},
		{1234567, 100, "f: 1,234,567 records, documented 100"},
	}
	for _, tt := range tests {
		if got := recordWarning("f", tt.got, tt.doc); got != tt.want {
			t.Errorf("recordWarning(%d, %d) = %q, want %q", tt.got, tt.doc, got, tt.want)
		}
	}
}

// TestRecordCounter counts non-blank lines across write boundaries.
func TestRecordCounter(t *testing.T) {
	t.Parallel()
	const text = "a b\n\n \t\r\nc\r\n  d  \n\ne" // 4 records, the last without a newline
	for chunk := 1; chunk <= len(text); chunk++ {
		var c recordCounter
		for i := 0; i < len(text); i += chunk {
			c.Write([]byte(text[i:min(i+chunk, len(text))]))
		}
		if c.count() != 4 {
			t.Errorf("chunk %d: count = %d, want 4", chunk, c.count())
		}
	}
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gz(t *testing.T, content []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(content)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

// within runs fn and fails the test if it has not returned after a
// minute: a consumer that opened a FIFO would block forever. (A hang
// guard: the reads take milliseconds, so no load reaches a minute.)
func within(t *testing.T, fn func()) {
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

// TestFetch_RefusesNotRegular: Fetch does not download over a directory or
// a broken link at NAME or NAME.gz (nor remove it); it says what is there.
// No request is made (client nil would mean http.DefaultClient).
func TestFetch_RefusesNotRegular(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		setup   func(t *testing.T, dir string)
		wantErr error
	}{
		{"directory", func(t *testing.T, dir string) { mkdir(t, filepath.Join(dir, "magic04.data")) }, ErrNotRegular},
		{"symlink loop", func(t *testing.T, dir string) {
			symlink(t, "magic04.data.gz", filepath.Join(dir, "magic04.data.gz"))
		}, ErrBadLink},
	} {
		dir := t.TempDir()
		tt.setup(t, dir)
		err := Fetch(t.Context(), nil, "magic", dir, nil)
		if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), "remove it") {
			t.Errorf("%s: error = %v, want %v saying to remove it", tt.name, err, tt.wantErr)
		}
	}
}

// TestInspect_MalformedUnpinned: a file with no pinned digest is parsed by
// Inspect as Load parses it, so list and data verify report a malformed
// one (naming the line) instead of "present, not pinned".
func TestInspect_MalformedUnpinned(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ipums-us.txt"), []byte(strings.Repeat("0 ", 57)+"2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := Inspect("ipums-us", dir)
	if err != nil {
		t.Fatal(err)
	}
	if st[0].State != StateMalformed || !st[0].State.Failed() || st[0].Err == nil || !strings.Contains(st[0].Err.Error(), "ipums-us.txt:1") {
		t.Errorf("state %v, err %v: want MALFORMED naming line 1", st[0].State, st[0].Err)
	}
	if _, err := Load("ipums-us", Options{DataDir: dir, Named: true}); err == nil || !strings.Contains(err.Error(), "ipums-us.txt:1") {
		t.Errorf("Load: %v", err)
	}
}
