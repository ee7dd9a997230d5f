package datasets

import (
	"errors"
	"fmt"
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrUnknownDataset: the name is not in the registry.
	ErrUnknownDataset = errors.New("unknown dataset")
	// ErrDuplicateDataset: [Register] was given a name already registered
	// (a built-in dataset or an earlier provider).
	ErrDuplicateDataset = errors.New("dataset name already registered")
	// ErrNoFiles: the dataset comes from a Go [Provider] registered with
	// [Register]; it has no files for [Inspect], [Fetch] or [Available] to
	// look at (its Read reads whatever it reads).
	ErrNoFiles = errors.New("dataset has no registry files")
	// ErrProvider: a [Provider]'s Read returned something the harness
	// refuses: a table whose columns disagree, labels that are not ±1, or
	// provenance that is not honest (Source.Kind "real" without the
	// SHA-256 of every file read, a digest that is not the file's).
	ErrProvider = errors.New("invalid provider result")
	// ErrNotFound: a real data file is in neither NAME nor NAME.gz form in
	// the data directory.
	ErrNotFound = errors.New("data file not found")
	// ErrChecksum: a file's SHA-256 differs from the pinned digest. The
	// concrete error is a *ChecksumError.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrNoDownload: a file has no download source and must be supplied by
	// the user (the IPUMS extracts); the error text says how.
	ErrNoDownload = errors.New("no download source")
	// ErrDataDir: a data directory the user named (--data-dir or
	// $DPREPRO_DATA) does not exist or is not a directory.
	ErrDataDir = errors.New("data directory unusable")
	// ErrNotRegular: a directory, named pipe (FIFO), socket or device stands
	// where a data file (NAME or NAME.gz) should be. It is never opened.
	ErrNotRegular = errors.New("not a regular file")
	// ErrBadLink: a symbolic link at NAME or NAME.gz loops or points
	// nowhere.
	ErrBadLink = errors.New("broken symbolic link")
	// ErrUnreadable: a data file could not be examined or read (permission
	// denied, an I/O error, any other stat error); the text says which.
	ErrUnreadable = errors.New("data file unreadable")
	// ErrCorrupt: a compressed data file fails when read to the end (a
	// truncated .gz, a bad gzip header, a CRC or length mismatch in the
	// trailer).
	ErrCorrupt = errors.New("corrupt data file")
)

// ParseError reports a malformed line in a data file.
type ParseError struct {
	// Path is the file as opened (it may end in .gz).
	Path string
	// Line is the 1-based line number in the decompressed content.
	Line int
	// Msg says what was wrong, e.g. `wrong field count: got 14, want 15`.
	Msg string
}

// Error formats the error as "PATH:LINE: MSG".
func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
}

// ChecksumError reports a file whose decompressed SHA-256 differs from the
// registry. errors.Is(err, ErrChecksum) holds for it.
type ChecksumError struct {
	// File is the registry file name, e.g. "adult.data".
	File string
	// Path is the file as opened, or the download URL.
	Path string
	// Got and Want are lowercase hex SHA-256 digests.
	Got, Want string
}

// Error names the path, the file and both digests.
func (e *ChecksumError) Error() string {
	return fmt.Sprintf("%s: checksum mismatch for %s: got sha256 %s, want %s", e.Path, e.File, e.Got, e.Want)
}

// Is reports whether target is ErrChecksum.
func (e *ChecksumError) Is(target error) bool { return target == ErrChecksum }
