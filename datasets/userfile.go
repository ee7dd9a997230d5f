package datasets

import (
	"bufio"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Formats of a user's data file, for [FileOptions.Format].
const (
	// FileCSV: comma-separated text, RFC 4180 quoting, a header line naming
	// the columns.
	FileCSV = "csv"
	// FileTSV: tab-separated text, a header line naming the columns.
	FileTSV = "tsv"
	// FileNPY: a NumPy .npy array (read with github.com/sbinet/npyio).
	FileNPY = "npy"
)

// FileFormats lists the accepted values of [FileOptions.Format].
var FileFormats = []string{FileCSV, FileTSV, FileNPY}

// FileOptions describes a user's own data file, loaded as a dataset with
// [LoadFile] or [NewFileProvider]: a spec's [data.files.NAME] table. The
// file is always read; there is never a synthetic stand-in for it
// ([Options.Synthetic] does not apply), and a missing, unreadable or
// malformed file, or one whose SHA-256 differs from the pin, is an error
// naming it.
//
// # csv and tsv
//
// The first non-blank line names the columns. Label names the label
// column; every other column is an attribute, numeric unless listed in
// Categorical (one-hot encoded like the categorical attributes of the
// built-in datasets: one indicator per observed level, "column=level").
// Fields are trimmed of spaces. A record with an empty field or a field
// "?" (the missing-value marks of pandas and of the UCI files) is dropped
// and counted (FileRecord.Dropped); anything else that does not parse is an
// error naming file:line, the field and the column. csv fields may be
// quoted as in RFC 4180; in tsv a quote is an ordinary character unless it
// opens a field.
//
// # npy
//
// Path holds a 2-D array, n rows by its columns, of dtype float64,
// float32, an integer type or bool (any byte order, C or Fortran order);
// object, string and complex arrays, and arrays of another rank, are
// refused naming the file. The label is either
//   - one column of Path: Label is its 0-based index, negative from the
//     end ("0" the first column, "-1" the last), or
//   - a separate file: Labels names a .npy vector of n values (shape (n,)
//     or (n, 1)), and Path holds only the features.
//
// The remaining columns are the attributes f1 … fd in column order (the
// label column skipped); Categorical may name some of them ("f3"), whose
// levels are then the distinct values. A row with a NaN (the missing value
// of NumPy) is dropped and counted; ±Inf is an error naming the row and
// column.
//
// # Label
//
// With Positive set the task is classification: a label equal to Positive
// (as text for csv and tsv, as a number for npy) is +1, every other label
// −1; at least one record of each class is required. Without Positive the
// label must be numeric and the task is regression.
type FileOptions struct {
	// Path is the data file, as written; a relative path is relative to
	// Dir. Required.
	Path string
	// Dir is the directory relative paths are resolved against (a spec's
	// directory); empty means the working directory.
	Dir string
	// Format is FileCSV, FileTSV or FileNPY; empty means from the extension
	// of Path (.csv; .tsv or .tab; .npy).
	Format string
	// Label names the label: the header name of its column (csv, tsv;
	// required), or its column index in Path (npy, when Labels is empty).
	Label string
	// Labels is, for npy only, a separate .npy vector of labels (relative
	// to Dir like Path). Exactly one of Label and Labels is set for npy.
	Labels string
	// Positive is the label value mapped to +1 (others −1); empty means a
	// numeric label, kept as the regression target.
	Positive string
	// Categorical names the attributes to one-hot encode.
	Categorical []string
	// SHA256 optionally pins the SHA-256 of Path's bytes (64 hex digits); a
	// file that differs is an error wrapping [ErrChecksum].
	SHA256 string
	// LabelsSHA256 optionally pins the SHA-256 of Labels.
	LabelsSHA256 string
}

// FileOptionError is one problem with a [FileOptions] field. Field is the
// field's key in a spec's [data.files.NAME] table, with an index for a
// list element ("label", "categorical[1]").
type FileOptionError struct {
	Field string
	Msg   string
}

// Error returns "FIELD: MSG".
func (e *FileOptionError) Error() string { return e.Field + ": " + e.Msg }

// FileFieldError is an error about the file that one [FileOptions] field
// names: absent, not a regular file, unreadable. Field is the field's key
// in a spec's [data.files.NAME] table ("path" or "labels"), so that a spec
// can name the line at fault; Err says what is wrong (errors.Is sees
// through it, e.g. to [ErrNotFound]).
type FileFieldError struct {
	Name  string // the data file's dataset name
	Field string
	Err   error
}

// Error returns "datasets: data file NAME: ERR".
func (e *FileFieldError) Error() string {
	return "datasets: data file " + e.Name + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *FileFieldError) Unwrap() error { return e.Err }

var (
	hexDigest = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	npyColumn = regexp.MustCompile(`^f[1-9][0-9]*$`)
)

// Validate checks the options without reading any file. The error joins
// one *FileOptionError per problem.
func (f FileOptions) Validate() error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &FileOptionError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if f.Path == "" {
		add("path", "required: the data file (relative to the spec's directory)")
	}
	format, ferr := f.format()
	if ferr != nil && (f.Path != "" || f.Format != "") {
		add("format", "%v", ferr)
	}
	switch format {
	case FileCSV, FileTSV:
		if f.Label == "" {
			add("label", "required: the header name of the label column")
		}
		if f.Labels != "" {
			add("labels", "only for npy (a separate label vector); a %s file holds its label column (label = NAME)", format)
		}
	case FileNPY:
		switch {
		case f.Label == "" && f.Labels == "":
			add("label", `required for npy: the label's column index ("0" the first, "-1" the last), or labels = "y.npy"`)
		case f.Label != "" && f.Labels != "":
			add("label", "set either label (a column of path) or labels (a separate file), not both")
		case f.Label != "":
			if _, err := strconv.Atoi(f.Label); err != nil {
				add("label", `for npy, a column index ("0" the first, "-1" the last) (got %q)`, f.Label)
			}
		}
		if f.Positive != "" {
			if _, ok := parseNumber([]byte(f.Positive)); !ok {
				add("positive", "for npy, a finite number compared with the label values (got %q)", f.Positive)
			}
		}
	}
	if f.LabelsSHA256 != "" && f.Labels == "" {
		add("labels_sha256", "pins the labels file; set labels too")
	}
	for _, pin := range []struct{ field, v string }{{"sha256", f.SHA256}, {"labels_sha256", f.LabelsSHA256}} {
		if pin.v != "" && !hexDigest.MatchString(pin.v) {
			add(pin.field, "must be 64 hex digits (a SHA-256, as sha256sum prints it) (got %q)", pin.v)
		}
	}
	seen := map[string]bool{}
	for i, c := range f.Categorical {
		field := fmt.Sprintf("categorical[%d]", i)
		switch {
		case c == "":
			add(field, "empty column name")
		case seen[c]:
			add(field, "duplicate column %q", c)
		case format != FileNPY && c == f.Label:
			add(field, "%q is the label column", c)
		case format == FileNPY && !npyColumn.MatchString(c):
			add(field, "npy attributes are named f1 … fd in column order (got %q)", c)
		}
		seen[c] = true
	}
	return errors.Join(errs...)
}

// format returns the file's format: Format, or the one of Path's extension.
func (f FileOptions) format() (string, error) {
	if f.Format != "" {
		if !slices.Contains(FileFormats, f.Format) {
			return "", fmt.Errorf("unknown format %q (want %s)", f.Format, oneOf(FileFormats))
		}
		return f.Format, nil
	}
	switch strings.ToLower(filepath.Ext(f.Path)) {
	case ".csv":
		return FileCSV, nil
	case ".tsv", ".tab":
		return FileTSV, nil
	case ".npy":
		return FileNPY, nil
	}
	return "", fmt.Errorf("cannot tell the format from the name %q: set format = %s", f.Path, strings.Join(quoteAll(FileFormats), " or "))
}

func quoteAll(xs []string) []string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return q
}

// resolve returns the absolute form of p, relative to f.Dir.
func (f FileOptions) resolve(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(f.Dir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// fileProvider is the Provider of a user's data file.
type fileProvider struct {
	name   string
	f      FileOptions
	format string
}

// NewFileProvider returns the [Provider] of a user's data file: a Provider
// whose Read reads the file as f describes (whatever the Request says: a
// data file has no stand-in and does not live in the data directory). Its
// Source is [KindReal] with one FileRecord per file read (Name the base
// name, Path the absolute path, SHA256 the digest of its bytes, Verified
// when it matched the pin) and Params "path" (absolute), "path_as_written",
// "format", and for npy labels "labels_path" and "labels_path_as_written".
// The error is that of [CheckName] or [FileOptions.Validate].
func NewFileProvider(name string, f FileOptions) (Provider, error) {
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("datasets: data file: %w", err)
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("datasets: data file %s: %w", name, err)
	}
	format, _ := f.format()
	return &fileProvider{name: name, f: f, format: format}, nil
}

// LoadFile loads a user's data file as dataset name, preprocessed as opts
// says (opts.DataDir, Named, Synthetic and Seed do not apply: see
// [FileOptions]). A name that a registered dataset has is an error naming
// both: a data file does not shadow a dataset.
func LoadFile(name string, f FileOptions, opts Options) (*Dataset, error) {
	if p, ok := Registered(name); ok {
		return nil, fmt.Errorf("datasets: data file %s (%s): the name is the registered dataset %q (%s); give the file another name",
			name, f.Path, name, p.Description())
	}
	p, err := NewFileProvider(name, f)
	if err != nil {
		return nil, err
	}
	return load(p, opts)
}

// CheckFile reports, without reading it, whether a user's data file can
// be opened: each file f names is a regular file (absent, a directory, a
// FIFO, a broken link, an unreadable path are errors naming it, as
// [Available] classifies the files of the registry). Call it before a
// run, so that a missing file stops the run at once.
func CheckFile(name string, f FileOptions) error {
	if err := f.Validate(); err != nil {
		return fmt.Errorf("datasets: data file %s: %w", name, err)
	}
	for _, fl := range f.files() {
		if err := statUserFile(fl.abs, fl.key, fl.written); err != nil {
			return &FileFieldError{Name: name, Field: fl.key, Err: err}
		}
	}
	return nil
}

// userFile is one file of a FileOptions: the key naming it in a spec, the
// path as written and resolved, and its pin.
type userFile struct {
	key, written, abs, pin string
}

func (f FileOptions) files() []userFile {
	out := []userFile{{key: "path", written: f.Path, abs: f.resolve(f.Path), pin: f.SHA256}}
	if f.Labels != "" {
		out = append(out, userFile{key: "labels", written: f.Labels, abs: f.resolve(f.Labels), pin: f.LabelsSHA256})
	}
	return out
}

// statUserFile classifies what stands at abs without opening it.
func statUserFile(abs, key, written string) error {
	regular, state, err := probePath(abs)
	switch {
	case regular:
		return nil
	case state == StateAbsent:
		return fmt.Errorf("%w: %s (%s = %q); a data file has no synthetic stand-in", ErrNotFound, abs, key, written)
	}
	return err
}

func (p *fileProvider) Name() string { return p.name }

func (p *fileProvider) Description() string {
	return fmt.Sprintf("data file %s (%s)", p.f.Path, p.format)
}

func (*fileProvider) trusted() {}

// Read reads the file(s); the Request is not used.
func (p *fileProvider) Read(Request) (*Raw, error) {
	files := p.f.files()
	params := map[string]string{
		"path":            files[0].abs,
		"path_as_written": files[0].written,
		"format":          p.format,
	}
	var t *Table
	var st parseStats
	var recs []FileRecord
	switch p.format {
	case FileCSV, FileTSV:
		comma := ','
		if p.format == FileTSV {
			comma = '\t'
		}
		rec, err := readUserFile(files[0], func(r io.Reader, _ int64) error {
			var err error
			t, st, err = parseDelimited(r, files[0].abs, comma, p.f)
			return err
		})
		if err != nil {
			return nil, err
		}
		rec.Records, rec.Dropped = t.N(), st.dropped
		recs = append(recs, rec)
	case FileNPY:
		var x, y *npyArray
		rec, err := readUserFile(files[0], func(r io.Reader, size int64) error {
			var err error
			x, err = readNPY(bufio.NewReader(r), files[0].abs, size, false)
			return err
		})
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
		if len(files) > 1 {
			params["labels_path"], params["labels_path_as_written"] = files[1].abs, files[1].written
			lrec, err := readUserFile(files[1], func(r io.Reader, size int64) error {
				var err error
				y, err = readNPY(bufio.NewReader(r), files[1].abs, size, true)
				return err
			})
			if err != nil {
				return nil, err
			}
			recs = append(recs, lrec)
		}
		if t, st, err = npyTable(x, y, p.f); err != nil {
			return nil, err
		}
		for i := range recs {
			recs[i].Records, recs[i].Dropped = t.N(), st.dropped
		}
	}
	task := TaskRegression
	var warnings []string
	if p.f.Positive != "" {
		task = TaskClassification
		if err := checkClasses(t, st, files[0].abs, p.f); err != nil {
			return nil, err
		}
		warnings = st.labels.nearMisses(p.f.labelName(), p.f.Positive)
	}
	t.Files = recs
	return &Raw{Table: t, Task: task, Source: Source{Kind: KindReal, Files: recs, Params: params}, Warnings: warnings}, nil
}

// checkClasses refuses a classification table with one class only: a
// positive value that no record has is most likely a typo.
func checkClasses(t *Table, st parseStats, path string, f FileOptions) error {
	pos := 0
	for _, y := range t.Y {
		if y > 0 {
			pos++
		}
	}
	switch {
	case pos == 0:
		near := ""
		if w := st.labels.nearMisses(f.labelName(), f.Positive); len(w) > 0 {
			near = "; " + strings.Join(w, "; ")
		}
		return fmt.Errorf("%s: label %s: no record has the positive value %q (positive = %q); values seen: %s%s",
			path, f.labelName(), f.Positive, f.Positive, strings.Join(st.labels.quoted(maxLabelSample), ", "), near)
	case pos == t.N():
		return fmt.Errorf("%s: label %s: every record has the positive value %q: there is nothing to classify", path, f.labelName(), f.Positive)
	}
	return nil
}

func (f FileOptions) labelName() string {
	if f.Labels != "" {
		return f.Labels
	}
	return strconv.Quote(f.Label)
}

// readUserFile opens the user's file uf (a regular file, else an error
// naming it), hands its content to consume, reads it to the end for the
// SHA-256 and checks the pin. A pin mismatch is reported first (joined with
// consume's error), as for the registry's files: a file that is not the
// expected one is reported as such rather than by its first odd line.
// consume gets the content and the file's size in bytes.
func readUserFile(uf userFile, consume func(r io.Reader, size int64) error) (FileRecord, error) {
	rec := FileRecord{Name: filepath.Base(uf.abs), Path: uf.abs}
	if err := statUserFile(uf.abs, uf.key, uf.written); err != nil {
		return rec, err
	}
	fh, err := os.Open(uf.abs)
	if err != nil {
		_, err = readFailure(uf.abs, err)
		return rec, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		_, err = readFailure(uf.abs, err)
		return rec, err
	}
	h := sha256.New()
	tr := io.TeeReader(fh, h)
	cerr := consume(tr, fi.Size())
	if _, err := io.Copy(io.Discard, tr); err != nil {
		_, err = readFailure(uf.abs, err)
		return rec, err
	}
	rec.SHA256 = hex.EncodeToString(h.Sum(nil))
	if uf.pin != "" {
		if want := strings.ToLower(uf.pin); rec.SHA256 != want {
			return rec, errors.Join(&ChecksumError{File: rec.Name + " (" + uf.key + "_sha256 pin)", Path: uf.abs, Got: rec.SHA256, Want: want}, cerr)
		}
		rec.Verified = true
	}
	return rec, cerr
}

// maxLabelSample bounds the label values quoted in an error.
const maxLabelSample = 5

// parseStats is what a parse of a user's file counts besides the table.
type parseStats struct {
	dropped int        // records dropped for a missing value
	labels  labelTally // the label values and their counts (classification)
}

// parseDelimited parses a csv (comma ',') or tsv ('\t') file with a header
// line; see [FileOptions].
func parseDelimited(r io.Reader, path string, comma rune, f FileOptions) (*Table, parseStats, error) {
	var st parseStats
	perr := func(line int, format string, args ...any) error {
		return &ParseError{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	rd := newRecordReader(r, path, comma)
	var header []string
	headerLine := 0
	for header == nil {
		rec, line, err := rd.next()
		if err == io.EOF {
			return nil, st, perr(line, "missing header line")
		}
		if err != nil {
			return nil, st, err
		}
		if line == 1 && len(rec) > 0 {
			rec[0] = strings.TrimPrefix(rec[0], "\ufeff") // a byte-order mark
		}
		header, headerLine = slices.Clone(rec), line
	}
	col := map[string]int{}
	for i, h := range header {
		switch _, dup := col[h]; {
		case h == "":
			return nil, st, perr(headerLine, "header: field %d is empty (every column needs a name)", i+1)
		case dup:
			return nil, st, perr(headerLine, "header: column %q appears twice (fields %d and %d)", h, col[h]+1, i+1)
		}
		col[h] = i
	}
	labelCol, ok := col[f.Label]
	if !ok {
		return nil, st, perr(headerLine, "label: no column %q in the header (columns: %s)", f.Label, strings.Join(header, ", "))
	}
	isCat := make([]bool, len(header))
	for _, c := range f.Categorical {
		j, ok := col[c]
		if !ok {
			return nil, st, perr(headerLine, "categorical: no column %q in the header (columns: %s)", c, strings.Join(header, ", "))
		}
		isCat[j] = true
	}

	nf := len(header)
	num := make(map[int][]float64)
	codes := make(map[int][]int32)
	levels := make(map[int]*levelIndex)
	for j := range header {
		switch {
		case j == labelCol:
		case isCat[j]:
			levels[j] = newLevelIndex()
		default:
			num[j] = nil
		}
	}
	var y []float64
	for {
		rec, line, err := rd.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, st, err
		}
		if len(rec) != nf {
			return nil, st, perr(line, "wrong field count: got %d, want %d (the header's)", len(rec), nf)
		}
		if slices.ContainsFunc(rec, func(s string) bool { return s == "" || s == "?" }) {
			st.dropped++
			continue
		}
		lab := rec[labelCol]
		var yi float64
		if f.Positive != "" {
			yi = -1
			if lab == f.Positive {
				yi = 1
			}
			st.labels.add([]byte(lab), yi)
		} else {
			v, ok := parseNumber([]byte(lab))
			if !ok {
				return nil, st, perr(line, "field %d (%s): bad number %s (a text label needs positive = \"…\", the value read as +1)", labelCol+1, f.Label, quote([]byte(lab)))
			}
			yi = v
		}
		for j, s := range rec {
			switch {
			case j == labelCol:
			case isCat[j]:
				codes[j] = append(codes[j], levels[j].code([]byte(s)))
			default:
				v, ok := parseNumber([]byte(s))
				if !ok {
					return nil, st, perr(line, "field %d (%s): bad number %s (list the column in categorical to one-hot encode it)", j+1, header[j], quote([]byte(s)))
				}
				num[j] = append(num[j], v)
			}
		}
		y = append(y, yi)
	}
	if len(y) == 0 {
		return nil, st, perr(rd.line, "no records (%d dropped for an empty or \"?\" field)", st.dropped)
	}
	t := &Table{Target: f.Label, Y: y}
	if f.Positive != "" {
		t.Labels = st.labels.list()
	}
	for j, h := range header {
		switch {
		case j == labelCol:
			continue
		case isCat[j]:
			t.Categorical = append(t.Categorical, CategoricalColumn{Name: h, Levels: levels[j].sortLevels(codes[j]), Codes: codes[j]})
		default:
			t.Numeric = append(t.Numeric, NumericColumn{Name: h, Values: num[j]})
		}
		t.Attributes = append(t.Attributes, h)
	}
	t.check()
	return t, st, nil
}

// recordReader reads the records of a csv or tsv file through
// encoding/csv, with the line of each record, fields trimmed of spaces and
// blank lines skipped.
type recordReader struct {
	cr   *csv.Reader
	path string
	line int // line of the last record read
}

func newRecordReader(r io.Reader, path string, comma rune) *recordReader {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.Comma = comma
	cr.FieldsPerRecord = -1 // counted here, for the message of the built-in loaders
	cr.ReuseRecord = true
	cr.LazyQuotes = comma == '\t'
	return &recordReader{cr: cr, path: path}
}

// next returns the next non-blank record and its line, io.EOF at the end,
// or a *ParseError naming the file and line.
func (r *recordReader) next() ([]string, int, error) {
	for {
		rec, err := r.cr.Read()
		if err == io.EOF {
			return nil, r.line, io.EOF
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, pe.Line, &ParseError{Path: r.path, Line: pe.Line, Msg: fmt.Sprintf("column %d: %v", pe.Column, pe.Err)}
			}
			return nil, r.line, fmt.Errorf("%s: read: %w", r.path, err)
		}
		r.line, _ = r.cr.FieldPos(0)
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		if len(rec) == 1 && rec[0] == "" {
			continue // a line of spaces
		}
		return rec, r.line, nil
	}
}
