package datasets

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Fetch downloads the files of the named dataset into dataDir (created if
// needed; empty means [DefaultDataDir]), trying each canonical URL of a
// file in turn. Each file is extracted as its registry entry says (gzip,
// zip, zip inside zip, tar.gz), checked against the pinned SHA-256 and
// written atomically as plain NAME: it is streamed to a temporary file in
// dataDir, which is renamed only after the digest matches, and removed on
// any failure. Files are classified as [Inspect] classifies them: one
// verified, or present and not pinned, is skipped; one with a wrong digest,
// corrupt or unreadable is replaced; a directory, FIFO, socket, device or
// broken link at NAME or NAME.gz is an error (it is not removed). A file
// with no pinned checksum (twitter) is written unverified, with its digest
// reported on progress. A file with
// no download source (the IPUMS extracts, which may not be redistributed)
// is skipped when present; when absent Fetch returns an error wrapping
// [ErrNoDownload] that says how to obtain it (FileSpec.Manual).
//
// client nil means http.DefaultClient; progress nil discards messages.
// Cancelling ctx aborts the download.
func Fetch(ctx context.Context, client *http.Client, name, dataDir string, progress io.Writer) error {
	e, err := lookup(name)
	if err != nil {
		return fmt.Errorf("datasets: fetch: %w", err)
	}
	if dataDir == "" {
		dataDir = DefaultDataDir()
	}
	urls := make([][]Download, len(e.Files))
	for i, f := range e.Files {
		urls[i] = f.Sources
	}
	return fetchFrom(ctx, client, e, urls, dataDir, progress)
}

// fetchFrom is Fetch with the download list of e.Files[i] given by urls[i],
// so tests can point it at an httptest server.
func fetchFrom(ctx context.Context, client *http.Client, e *Entry, urls [][]Download, dir string, progress io.Writer) error {
	if client == nil {
		client = http.DefaultClient
	}
	if progress == nil {
		progress = io.Discard
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("datasets: fetch %s: %w", e.Name, err)
	}
	for i, f := range e.Files {
		st := inspectFile(e, f, dir)
		switch st.State {
		case StateVerified:
			fmt.Fprintf(progress, "%s: present at %s, sha256 verified\n", f.Name, st.Path)
			continue
		case StateUnpinned:
			fmt.Fprintf(progress, "%s: present at %s, not pinned (no checksum to verify against; sha256 %s)\n", f.Name, st.Path, st.SHA256)
			if st.Warning != "" {
				fmt.Fprintf(progress, "%s: warning: %s\n", f.Name, st.Warning)
			}
			continue
		case StateNotRegular, StateBadLink:
			return fmt.Errorf("datasets: fetch %s: %w (remove it, then fetch again)", e.Name, st.Err)
		case StateAbsent:
		default:
			fmt.Fprintf(progress, "%s: %v; downloading again\n", f.Name, st.Err)
		}
		if len(urls[i]) == 0 {
			if f.Manual != "" {
				return fmt.Errorf("datasets: fetch %s: %s: %w: %s (data directory: %s)", e.Name, f.Name, ErrNoDownload, f.Manual, dir)
			}
			return fmt.Errorf("datasets: fetch %s: %w for %s", e.Name, ErrNoDownload, f.Name)
		}
		var errs []error
		ok := false
		for _, d := range urls[i] {
			fmt.Fprintf(progress, "%s: downloading %s\n", f.Name, d)
			sum, n, err := fetchOne(ctx, client, f, d, dir)
			if err != nil {
				fmt.Fprintf(progress, "%s: failed: %v\n", f.Name, err)
				errs = append(errs, err)
				if ctx.Err() != nil {
					break
				}
				continue
			}
			if f.SHA256 == "" {
				fmt.Fprintf(progress, "%s: wrote %d bytes, sha256 %s (no pinned checksum: NOT verified)\n", f.Name, n, sum)
			} else {
				fmt.Fprintf(progress, "%s: wrote %d bytes, sha256 verified\n", f.Name, n)
			}
			ok = true
			break
		}
		if !ok {
			return fmt.Errorf("datasets: fetch %s: %s: %w", e.Name, f.Name, errors.Join(errs...))
		}
	}
	return nil
}

// fetchOne downloads d, extracts f, verifies it and renames it into place.
// On any error nothing is left behind in dir.
func fetchOne(ctx context.Context, client *http.Client, f FileSpec, d Download, dir string) (sum string, n int64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.URL, nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("GET %s: %s", d.URL, resp.Status)
	}

	// Temporary files live in dir so the final rename stays on one file
	// system; the leading dot and suffix keep them out of probe's way.
	var temps []string
	defer func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}()
	newTemp := func(suffix string) (*os.File, error) {
		t, err := os.CreateTemp(dir, "."+f.Name+".*"+suffix)
		if err == nil {
			temps = append(temps, t.Name())
		}
		return t, err
	}

	var src io.Reader
	switch d.Format {
	case FormatPlain:
		src = resp.Body
	case FormatGzip:
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return "", 0, fmt.Errorf("%s: %w", d.URL, err)
		}
		defer zr.Close()
		src = zr
	case FormatZip:
		// zip needs random access: spool the archive to disk first.
		spool, err := newTemp(".download")
		if err != nil {
			return "", 0, err
		}
		defer spool.Close()
		size, err := io.Copy(spool, resp.Body)
		if err != nil {
			return "", 0, fmt.Errorf("%s: %w", d.URL, err)
		}
		rc, err := openZipChain(spool, size, d.Members)
		if err != nil {
			return "", 0, fmt.Errorf("%s: %w", d.URL, err)
		}
		defer rc.Close()
		src = rc
	case FormatTarGz:
		if len(d.Members) != 1 {
			return "", 0, fmt.Errorf("%s: tar.gz download needs exactly one member, got %d", d.URL, len(d.Members))
		}
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return "", 0, fmt.Errorf("%s: %w", d.URL, err)
		}
		defer zr.Close()
		r, err := tarMember(tar.NewReader(zr), d.Members[0])
		if err != nil {
			return "", 0, fmt.Errorf("%s: %w", d.URL, err)
		}
		src = r
	default:
		return "", 0, fmt.Errorf("%s: unknown download format %q", d.URL, d.Format)
	}

	tmp, err := newTemp(".part")
	if err != nil {
		return "", 0, err
	}
	h := sha256.New()
	n, err = io.Copy(io.MultiWriter(tmp, h), src)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", d.URL, err)
	}
	sum = hex.EncodeToString(h.Sum(nil))
	if f.SHA256 != "" && sum != f.SHA256 {
		return "", 0, &ChecksumError{File: f.Name, Path: d.URL, Got: sum, Want: f.SHA256}
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, f.Name)); err != nil {
		return "", 0, err
	}
	temps = temps[:len(temps)-1] // tmp is now dir/NAME: keep it
	return sum, n, nil
}

// maxInnerZip caps the size of a zip nested in a zip, which is read into
// memory (bank.zip is about 0.6 MB).
const maxInnerZip = 1 << 30

// openZipChain opens members[last] inside the zip r, where every earlier
// member is itself a zip nested in the previous one.
func openZipChain(r io.ReaderAt, size int64, members []string) (io.ReadCloser, error) {
	if len(members) == 0 {
		return nil, errors.New("zip download names no member")
	}
	for k, m := range members {
		zr, err := zip.NewReader(r, size)
		if err != nil {
			return nil, err
		}
		zf, err := zipMember(zr, m)
		if err != nil {
			return nil, err
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		if k == len(members)-1 {
			return rc, nil
		}
		if zf.UncompressedSize64 > maxInnerZip {
			rc.Close()
			return nil, fmt.Errorf("%s: nested zip too large (%d bytes)", m, zf.UncompressedSize64)
		}
		b, err := io.ReadAll(io.LimitReader(rc, maxInnerZip))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		r, size = bytes.NewReader(b), int64(len(b))
	}
	panic("unreachable")
}

// matchMember reports whether archive entry name is want: equal after
// removing a leading "./", or (fallback, if the layout changed) equal in
// base name.
func matchMember(name, want string, byBase bool) bool {
	name = strings.TrimPrefix(name, "./")
	if byBase {
		return path.Base(name) == path.Base(want)
	}
	return name == strings.TrimPrefix(want, "./")
}

func zipMember(zr *zip.Reader, want string) (*zip.File, error) {
	for _, byBase := range []bool{false, true} {
		var found []*zip.File
		for _, zf := range zr.File {
			if !zf.FileInfo().IsDir() && matchMember(zf.Name, want, byBase) {
				found = append(found, zf)
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
		if len(found) > 1 {
			return nil, fmt.Errorf("zip member %q is ambiguous (%d matches)", want, len(found))
		}
	}
	names := make([]string, 0, len(zr.File))
	for _, zf := range zr.File {
		names = append(names, zf.Name)
	}
	return nil, fmt.Errorf("zip member %q not found (have %s)", want, strings.Join(names, ", "))
}

// tarMember advances tr to the regular file want (exact path match; a tar
// stream cannot be searched twice, so there is no base-name fallback).
func tarMember(tr *tar.Reader, want string) (io.Reader, error) {
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("tar member %q not found", want)
		}
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag == tar.TypeReg && matchMember(hdr.Name, want, false) {
			return tr, nil
		}
	}
}
