package datasets

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func zipBytes(t *testing.T, name string, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	if _, err := zw.Create("README"); err != nil { // a distractor entry
		t.Fatal(err)
	}
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func tarGzBytes(t *testing.T, name string, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	tw.WriteHeader(&tar.Header{Name: "./regression/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))})
	tw.Write(b)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return gzipBytes(t, out.Bytes())
}

// fetchServer serves the magic fixture in every supported packaging, plus
// failure cases, and counts requests.
func fetchServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	content, err := os.ReadFile("testdata/magic_ok.data")
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{
		"/plain":       content,
		"/file.gz":     gzipBytes(t, content),
		"/nested.zip":  zipBytes(t, "bank/inner.zip", zipBytes(t, "data/magic_ok.data", content)),
		"/flat.zip":    zipBytes(t, "magic_ok.data", content),
		"/arch.tar.gz": tarGzBytes(t, "./regression/Twitter/magic_ok.data", content),
		"/wrong":       append([]byte("x"), content...),
		"/wrong.gz":    gzipBytes(t, content[:len(content)-1]),
	}
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/truncated" {
			// Promise more than is sent: the client sees an unexpected EOF
			// after half the file.
			w.Header().Set("Content-Length", strconv.Itoa(len(content)))
			w.Write(content[:len(content)/2])
			return
		}
		b, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// fetchEntry is a test-only registry entry whose single file is the magic
// fixture, with its real digest pinned.
func fetchEntry() *Entry {
	return &Entry{Name: "fixture", Files: []FileSpec{{Name: "magic_ok.data", SHA256: magicOKSHA256}}}
}

// dirNames lists dir, hidden temporaries included.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestFetchFrom(t *testing.T) {
	t.Parallel()
	srv, _ := fetchServer(t)
	u := srv.URL
	tests := []struct {
		name    string
		sources []Download
		wantErr string
	}{
		{"plain", []Download{{URL: u + "/plain", Format: FormatPlain}}, ""},
		{"gzip", []Download{{URL: u + "/file.gz", Format: FormatGzip}}, ""},
		{"zip in zip", []Download{{URL: u + "/nested.zip", Format: FormatZip, Members: []string{"bank/inner.zip", "data/magic_ok.data"}}}, ""},
		{"zip by base name", []Download{{URL: u + "/flat.zip", Format: FormatZip, Members: []string{"moved/magic_ok.data"}}}, ""},
		{"tar.gz", []Download{{URL: u + "/arch.tar.gz", Format: FormatTarGz, Members: []string{"regression/Twitter/magic_ok.data"}}}, ""},
		{"fallback after 404 and mismatch", []Download{
			{URL: u + "/missing", Format: FormatPlain},
			{URL: u + "/wrong", Format: FormatPlain},
			{URL: u + "/plain", Format: FormatPlain},
		}, ""},
		{"checksum mismatch", []Download{{URL: u + "/wrong", Format: FormatPlain}}, "checksum mismatch for magic_ok.data"},
		{"checksum mismatch gz", []Download{{URL: u + "/wrong.gz", Format: FormatGzip}}, "checksum mismatch for magic_ok.data"},
		{"truncated", []Download{{URL: u + "/truncated", Format: FormatPlain}}, "unexpected EOF"},
		{"404", []Download{{URL: u + "/missing", Format: FormatPlain}}, "404 Not Found"},
		{"missing member", []Download{{URL: u + "/flat.zip", Format: FormatZip, Members: []string{"other.data"}}}, `zip member "other.data" not found`},
		{"missing tar member", []Download{{URL: u + "/arch.tar.gz", Format: FormatTarGz, Members: []string{"x/other.data"}}}, `tar member "x/other.data" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "data") // created by fetch
			var progress bytes.Buffer
			err := fetchFrom(context.Background(), srv.Client(), fetchEntry(), [][]Download{tt.sources}, dir, &progress)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(tt.wantErr, "checksum") && !errors.Is(err, ErrChecksum) {
					t.Errorf("error %v is not ErrChecksum", err)
				}
				// Atomic write: no file and no temporary left behind.
				if names := dirNames(t, dir); len(names) != 0 {
					t.Errorf("failed fetch left %q in the data directory", names)
				}
				return
			}
			if err != nil {
				t.Fatalf("fetch: %v\nprogress:\n%s", err, progress.String())
			}
			if names := dirNames(t, dir); len(names) != 1 || names[0] != "magic_ok.data" {
				t.Errorf("data directory holds %q, want only magic_ok.data", names)
			}
			tb, err := readTable(fixtureEntry(t, "magic", "magic_ok.data", magicOKSHA256), dir)
			if err != nil || tb.N() != 4 {
				t.Errorf("reading the fetched file: %v", err)
			}
			if !strings.Contains(progress.String(), "sha256 verified") {
				t.Errorf("progress does not report verification:\n%s", progress.String())
			}
		})
	}
}

func TestFetchFrom_SkipsVerifiedAndReplacesCorrupt(t *testing.T) {
	t.Parallel()
	srv, hits := fetchServer(t)
	dir := t.TempDir()
	src := [][]Download{{{URL: srv.URL + "/plain", Format: FormatPlain}}}
	// A corrupt copy is replaced.
	if err := os.WriteFile(filepath.Join(dir, "magic_ok.data"), []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fetchFrom(context.Background(), srv.Client(), fetchEntry(), src, dir, nil); err != nil {
		t.Fatal(err)
	}
	if st := inspectFile(fetchEntry(), fetchEntry().Files[0], dir); st.State != StateVerified {
		t.Errorf("after refetch: %+v", st)
	}
	// A verified copy is not downloaded again.
	before := hits.Load()
	var progress bytes.Buffer
	if err := fetchFrom(context.Background(), srv.Client(), fetchEntry(), src, dir, &progress); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != before || !strings.Contains(progress.String(), "present") {
		t.Errorf("verified file fetched again (progress %q)", progress.String())
	}
}

// TestFetchFrom_FailureKeepsExisting: a failed download leaves an existing
// (corrupt) file untouched rather than half-overwritten.
func TestFetchFrom_FailureKeepsExisting(t *testing.T) {
	t.Parallel()
	srv, _ := fetchServer(t)
	dir := t.TempDir()
	old := []byte("old content\n")
	if err := os.WriteFile(filepath.Join(dir, "magic_ok.data"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	err := fetchFrom(context.Background(), srv.Client(), fetchEntry(), [][]Download{{{URL: srv.URL + "/truncated", Format: FormatPlain}}}, dir, nil)
	if err == nil {
		t.Fatal("truncated download succeeded")
	}
	got, _ := os.ReadFile(filepath.Join(dir, "magic_ok.data"))
	if !bytes.Equal(got, old) || len(dirNames(t, dir)) != 1 {
		t.Errorf("directory after failed fetch: %q, file %q", dirNames(t, dir), got)
	}
}

func TestFetchFrom_NoPinnedChecksum(t *testing.T) {
	t.Parallel()
	srv, _ := fetchServer(t)
	dir := t.TempDir()
	e := &Entry{Name: "fixture", Files: []FileSpec{{Name: "magic_ok.data"}}}
	var progress bytes.Buffer
	if err := fetchFrom(context.Background(), srv.Client(), e, [][]Download{{{URL: srv.URL + "/wrong", Format: FormatPlain}}}, dir, &progress); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "NOT verified") {
		t.Errorf("progress = %q, want it to say NOT verified", progress.String())
	}
}

func TestFetchFrom_Cancelled(t *testing.T) {
	t.Parallel()
	srv, _ := fetchServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	err := fetchFrom(ctx, srv.Client(), fetchEntry(), [][]Download{{{URL: srv.URL + "/plain", Format: FormatPlain}}}, dir, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("cancelled fetch left %q", names)
	}
}

func TestFetch_UnknownDataset(t *testing.T) {
	t.Parallel()
	if err := Fetch(context.Background(), nil, "nope", t.TempDir(), nil); !errors.Is(err, ErrUnknownDataset) {
		t.Errorf("error = %v, want ErrUnknownDataset", err)
	}
}
