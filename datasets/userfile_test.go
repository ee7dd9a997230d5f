package datasets

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"
)

// raw is the preprocessing that leaves the values as read, so that the
// tests can compare X with the fixtures.
var rawPreprocess = Preprocessing{ColumnScale: ScaleNone, RowNorm: RowNone}

// The records the csv, tsv and npy fixtures keep (testdata/userfile_ok.*,
// userfile_f8.npy): age and income of the 5 complete records, their class
// (y = "yes" / label 1) and the tsv's regression target.
var (
	fixtureAge    = []float64{39, 50, 53, 28, 45}
	fixtureIncome = []float64{1.5, 2.5, 0.5, 3, 2}
	fixtureClass  = []float64{1, -1, 1, -1, 1}
	fixtureTarget = []float64{12.5, 7, -1.25, 0, 4}
)

func column(x *mat.Dense, j int) []float64 {
	return mat.Col(nil, j, x)
}

func sha(t *testing.T, path string) string {
	t.Helper()
	s, err := FileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLoadFile_Formats loads each fixture format and checks the table,
// the task, the provenance and the preprocessing applied afterwards.
func TestLoadFile_Formats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		f        FileOptions
		pre      Preprocessing
		features []string
		cols     [][]float64 // X's columns
		y        []float64
		task     string
		dropped  int
		files    []string // base names read
	}{
		{"csv classification, categorical",
			FileOptions{Path: "userfile_ok.csv", Label: "y", Positive: "yes", Categorical: []string{"colour"}}, rawPreprocess,
			[]string{"age", "colour=blue", "colour=green", "colour=red", "income"},
			[][]float64{fixtureAge, {0, 1, 0, 1, 0}, {0, 0, 1, 0, 0}, {1, 0, 0, 0, 1}, fixtureIncome},
			fixtureClass, TaskClassification, 2, []string{"userfile_ok.csv"}},
		{"csv, columns selected",
			FileOptions{Path: "userfile_ok.csv", Label: "y", Positive: "yes", Categorical: []string{"colour"}},
			Preprocessing{Columns: []string{"age", "income"}, ColumnScale: ScaleNone, RowNorm: RowNone},
			[]string{"age", "income"}, [][]float64{fixtureAge, fixtureIncome},
			fixtureClass, TaskClassification, 2, []string{"userfile_ok.csv"}},
		{"tsv regression (numeric label, no positive)",
			FileOptions{Path: "userfile_ok.tsv", Label: "target", Categorical: []string{"colour"}},
			Preprocessing{Columns: []string{"age", "income"}, ColumnScale: ScaleNone, RowNorm: RowNone},
			[]string{"age", "income"}, [][]float64{fixtureAge, fixtureIncome},
			fixtureTarget, TaskRegression, 2, []string{"userfile_ok.tsv"}},
		{"tsv, label compared as text",
			FileOptions{Path: "userfile_ok.tsv", Format: FileTSV, Label: "colour", Positive: "red"},
			Preprocessing{Columns: []string{"age"}, ColumnScale: ScaleNone, RowNorm: RowNone},
			[]string{"age"}, [][]float64{fixtureAge},
			[]float64{1, -1, -1, -1, 1}, TaskClassification, 2, []string{"userfile_ok.tsv"}},
		{"npy, label the last column",
			FileOptions{Path: "userfile_f8.npy", Label: "-1", Positive: "1"}, rawPreprocess,
			[]string{"f1", "f2"}, [][]float64{fixtureAge, fixtureIncome},
			fixtureClass, TaskClassification, 1, []string{"userfile_f8.npy"}},
		{"npy, label by its index from the front",
			FileOptions{Path: "userfile_f8.npy", Format: FileNPY, Label: "2", Positive: "1"}, rawPreprocess,
			[]string{"f1", "f2"}, [][]float64{fixtureAge, fixtureIncome},
			fixtureClass, TaskClassification, 1, []string{"userfile_f8.npy"}},
		{"npy, numeric label kept for regression",
			FileOptions{Path: "userfile_f8.npy", Label: "-1"}, rawPreprocess,
			[]string{"f1", "f2"}, [][]float64{fixtureAge, fixtureIncome},
			[]float64{1, 0, 1, 0, 1}, TaskRegression, 1, []string{"userfile_f8.npy"}},
		{"npy, label column 0 (the age as target)",
			FileOptions{Path: "userfile_f8.npy", Label: "0"}, rawPreprocess,
			[]string{"f1", "f2"}, [][]float64{fixtureIncome, {1, 0, 1, 0, 1}},
			fixtureAge, TaskRegression, 1, []string{"userfile_f8.npy"}},
		// int32 features, int64 labels in a second file: 6 records, none
		// dropped; income stored ×10.
		{"npy, separate labels file",
			FileOptions{Path: "userfile_i4.npy", Labels: "userfile_labels.npy", Positive: "1"}, rawPreprocess,
			[]string{"f1", "f2"}, [][]float64{{39, 50, 53, 28, 45, 61}, {15, 25, 5, 30, 20, 7}},
			[]float64{1, -1, 1, -1, 1, -1}, TaskClassification, 0, []string{"userfile_i4.npy", "userfile_labels.npy"}},
		{"npy, categorical attribute",
			FileOptions{Path: "userfile_i4.npy", Labels: "userfile_labels.npy", Positive: "1", Categorical: []string{"f2"}},
			Preprocessing{ColumnScale: ScaleNone, RowNorm: RowNone, Columns: []string{"f2"}},
			// levels sorted as text: "15" "20" "25" "30" "5" "7"
			[]string{"f2=15", "f2=20", "f2=25", "f2=30", "f2=5", "f2=7"},
			[][]float64{{1, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 1, 0}, {0, 1, 0, 0, 0, 0}, {0, 0, 0, 1, 0, 0}, {0, 0, 1, 0, 0, 0}, {0, 0, 0, 0, 0, 1}},
			[]float64{1, -1, 1, -1, 1, -1}, TaskClassification, 0, []string{"userfile_i4.npy", "userfile_labels.npy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.f.Dir = "testdata"
			ds, err := LoadFile("mine", tt.f, Options{Preprocess: tt.pre, Synthetic: SyntheticAlways})
			if err != nil {
				t.Fatal(err)
			}
			if ds.Name != "mine" || ds.Task != tt.task || !slices.Equal(ds.FeatureNames, tt.features) {
				t.Errorf("name %s, task %s, features %q; want mine, %s, %q", ds.Name, ds.Task, ds.FeatureNames, tt.task, tt.features)
			}
			for j, want := range tt.cols {
				if got := column(ds.X, j); !slices.Equal(got, want) {
					t.Errorf("column %d (%s) = %v, want %v", j, tt.features[j], got, want)
				}
			}
			if !slices.Equal(ds.Y, tt.y) {
				t.Errorf("Y = %v, want %v", ds.Y, tt.y)
			}
			// Synthetic "always" does not apply to a data file: it is read.
			src := ds.Source
			if src.Kind != KindReal || len(src.Files) != len(tt.files) {
				t.Fatalf("source %+v", src)
			}
			for i, f := range src.Files {
				abs, _ := filepath.Abs(filepath.Join("testdata", tt.files[i]))
				if f.Name != tt.files[i] || f.Path != abs || f.SHA256 != sha(t, abs) || f.Verified ||
					f.Records != len(tt.y) || f.Dropped != tt.dropped {
					t.Errorf("file record %+v; want %s at %s, %d records, %d dropped, not verified", f, tt.files[i], abs, len(tt.y), tt.dropped)
				}
			}
			abs, _ := filepath.Abs(filepath.Join("testdata", tt.f.Path))
			if src.Params["path"] != abs || src.Params["path_as_written"] != tt.f.Path {
				t.Errorf("params %v", src.Params)
			}
		})
	}
}

// TestLoadFile_Pin: a matching pin verifies the file; a different one is
// an error wrapping ErrChecksum naming the file and both digests.
func TestLoadFile_Pin(t *testing.T) {
	t.Parallel()
	abs, _ := filepath.Abs("testdata/userfile_ok.csv")
	sum := sha(t, abs)
	other := strings.Repeat("0", 64)
	f := FileOptions{Path: "userfile_ok.csv", Dir: "testdata", Label: "y", Positive: "yes", Categorical: []string{"colour"}}
	tests := []struct {
		name, pin string
		verified  bool
		wantErr   string
	}{
		{"no pin", "", false, ""},
		{"pin verified", sum, true, ""},
		{"pin in upper case", strings.ToUpper(sum), true, ""},
		{"pin mismatch", other, false, abs + ": checksum mismatch for userfile_ok.csv (path_sha256 pin): got sha256 " + sum + ", want " + other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := f
			f.SHA256 = tt.pin
			ds, err := LoadFile("mine", f, Options{})
			if tt.wantErr != "" {
				if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want ErrChecksum with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := ds.Source.Files[0]; got.Verified != tt.verified || got.SHA256 != sum {
				t.Errorf("record %+v, want verified %v", got, tt.verified)
			}
		})
	}
}

// npyFile writes a version 1.0 .npy file by hand (header dictionary and
// data bytes), for the cases npyio does not write: Fortran order,
// big-endian, damaged headers.
func npyFile(t *testing.T, dict string, data []byte) string {
	t.Helper()
	hdr := dict
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	var b bytes.Buffer
	b.Write(npy.Magic[:])
	b.Write([]byte{1, 0})
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	b.Write(data)
	return writeTemp(t, "x.npy", b.Bytes())
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func npyWrite(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	if err := npy.Write(&b, v); err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, "x.npy", b.Bytes())
}

// TestLoadFile_NPYLayouts: Fortran order and big-endian data read as the
// same matrix as C order, little-endian (numpy.asfortranarray,
// x.astype('>f8')).
func TestLoadFile_NPYLayouts(t *testing.T) {
	t.Parallel()
	// The 3 × 2 matrix [[1, 10], [2, 20], [3, 30]]; label column 1 (≥ 0).
	cOrder := []float64{1, 10, 2, 20, 3, 30}
	fOrder := []float64{1, 2, 3, 10, 20, 30}
	enc := func(order binary.ByteOrder, xs []float64) []byte {
		var b bytes.Buffer
		binary.Write(&b, order, xs)
		return b.Bytes()
	}
	f32 := func(xs []float64) []byte {
		var b bytes.Buffer
		for _, x := range xs {
			binary.Write(&b, binary.LittleEndian, float32(x))
		}
		return b.Bytes()
	}
	tests := []struct {
		name, dict string
		data       []byte
	}{
		{"C order", "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", enc(binary.LittleEndian, cOrder)},
		{"Fortran order", "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 2), }", enc(binary.LittleEndian, fOrder)},
		{"big-endian", "{'descr': '>f8', 'fortran_order': False, 'shape': (3, 2), }", enc(binary.BigEndian, cOrder)},
		{"float32", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", f32(cOrder)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := npyFile(t, tt.dict, tt.data)
			ds, err := LoadFile("m", FileOptions{Path: p, Label: "1"}, Options{Preprocess: rawPreprocess})
			if err != nil {
				t.Fatal(err)
			}
			if got := column(ds.X, 0); !slices.Equal(got, []float64{1, 2, 3}) || !slices.Equal(ds.Y, []float64{10, 20, 30}) {
				t.Errorf("X[:,0] = %v, Y = %v", got, ds.Y)
			}
		})
	}
}

// TestLoadFile_Errors: every bad file or option is an error naming the
// file (and the line, field and column of a malformed text file); none
// falls back to a stand-in.
func TestLoadFile_Errors(t *testing.T) {
	t.Parallel()
	td := func(name string) string { p, _ := filepath.Abs(filepath.Join("testdata", name)); return p }
	csv := func(path string) FileOptions {
		return FileOptions{Path: path, Dir: "testdata", Label: "y", Positive: "yes", Categorical: []string{"colour"}}
	}
	withLabels := func(n int) FileOptions {
		return FileOptions{Path: td("userfile_i4.npy"), Labels: npyWrite(t, make([]int64, n)), Positive: "1"}
	}
	tests := []struct {
		name string
		f    FileOptions
		is   error  // errors.Is target, or nil
		want string // substring of the message
	}{
		{"missing file", csv("nope.csv"), ErrNotFound, td("nope.csv") + ` (path = "nope.csv"); a data file has no synthetic stand-in`},
		{"a directory", FileOptions{Path: t.TempDir(), Format: FileCSV, Label: "y"}, ErrNotRegular, "not a regular file"},
		{"missing labels file", FileOptions{Path: "userfile_i4.npy", Labels: "nope.npy", Dir: "testdata"}, ErrNotFound, `(labels = "nope.npy")`},
		{"bad number", csv("userfile_badnum.csv"), nil, td("userfile_badnum.csv") + `:3: field 1 (age): bad number "5O" (list the column in categorical to one-hot encode it)`},
		{"wrong field count", csv("userfile_fieldcount.csv"), nil, td("userfile_fieldcount.csv") + ":3: wrong field count: got 3, want 4"},
		{"bad quote", csv("userfile_badquote.csv"), nil, td("userfile_badquote.csv") + ":3: column"},
		{"label not in the header", FileOptions{Path: "userfile_ok.csv", Dir: "testdata", Label: "z"}, nil, `userfile_ok.csv:1: label: no column "z" in the header (columns: age, colour, income, y)`},
		{"categorical not in the header", FileOptions{Path: "userfile_ok.csv", Dir: "testdata", Label: "y", Positive: "yes", Categorical: []string{"color"}}, nil, `userfile_ok.csv:1: categorical: no column "color"`},
		{"text column not categorical", FileOptions{Path: "userfile_ok.csv", Dir: "testdata", Label: "y", Positive: "yes"}, nil, `userfile_ok.csv:2: field 2 (colour): bad number "red"`},
		{"text label without positive", FileOptions{Path: "userfile_ok.csv", Dir: "testdata", Label: "y", Categorical: []string{"colour"}}, nil, `userfile_ok.csv:2: field 4 (y): bad number "yes" (a text label needs positive`},
		{"positive value absent", FileOptions{Path: "userfile_ok.csv", Dir: "testdata", Label: "y", Positive: "Yes", Categorical: []string{"colour"}}, nil, `no record has the positive value "Yes" (positive = "Yes"); values seen: "yes", "no"`},
		{"npy 3-D", FileOptions{Path: "userfile_3d.npy", Dir: "testdata", Label: "0"}, nil, td("userfile_3d.npy") + ": want a 2-D array (rows × columns), got 3 dimensions, shape [2 2 2]"},
		{"npy vector as matrix", FileOptions{Path: "userfile_labels.npy", Dir: "testdata", Label: "0"}, nil, "want a 2-D array (rows × columns), got 1 dimensions"},
		{"npy object dtype", FileOptions{Path: "userfile_object.npy", Dir: "testdata", Label: "0"}, nil, td("userfile_object.npy") + `: dtype "|O" is an object array`},
		{"npy string dtype", FileOptions{Path: "userfile_str.npy", Dir: "testdata", Label: "0"}, nil, td("userfile_str.npy") + `: dtype "<U3" is not supported`},
		{"npy labels not a vector", FileOptions{Path: "userfile_i4.npy", Labels: "userfile_i4.npy", Dir: "testdata"}, nil, "the labels must be a vector, shape (n,) or (n, 1) (got shape [6 2]"},
		{"npy labels of another length", withLabels(4), nil, "has 4 labels, but " + td("userfile_i4.npy") + " has 6 rows"},
		{"npy label index out of range", FileOptions{Path: "userfile_f8.npy", Dir: "testdata", Label: "3"}, nil, `label = "3": no such column (the array has 3 columns`},
		{"npy truncated", FileOptions{Path: func() string { b, _ := os.ReadFile(td("userfile_f8.npy")); return writeTemp(t, "t.npy", b[:len(b)-8]) }(), Label: "0"}, nil, "the header says shape [6 3] of dtype <f8, but the file has 136 bytes of data"},
		{"npy trailing bytes", FileOptions{Path: func() string { b, _ := os.ReadFile(td("userfile_f8.npy")); return writeTemp(t, "t.npy", append(b, 0)) }(), Label: "0"}, nil, "but the file has 145 bytes of data"},
		{"npy damaged header", FileOptions{Path: npyFile(t, "{'descr' '<f8'", nil), Label: "0"}, nil, "not a valid .npy file"},
		{"npy header without newline", FileOptions{Path: writeTemp(t, "h.npy", append(append(npy.Magic[:], 1, 0, 4, 0), "{}}}"...)), Label: "0"}, nil, "not a valid .npy file"},
		{"not an npy file", FileOptions{Path: "userfile_ok.csv", Dir: "testdata", Format: FileNPY, Label: "0"}, nil, "not a .npy file (it does not start with the \\x93NUMPY magic)"},
		{"npy infinite value", FileOptions{Path: npyWrite(t, mat.NewDense(2, 2, []float64{1, math.Inf(1), 2, 3})), Label: "0"}, nil, "row index 0, column index 1 (f1): infinite value +Inf"},
		{"npy all rows NaN", FileOptions{Path: npyWrite(t, mat.NewDense(1, 2, []float64{1, math.NaN()})), Label: "0"}, nil, "no records (1 rows, 1 dropped for a NaN)"},
		{"npy categorical beyond d", FileOptions{Path: "userfile_f8.npy", Dir: "testdata", Label: "-1", Categorical: []string{"f3"}}, nil, `categorical: no attribute "f3" (the attributes are f1 … f2)`},
		{"options: csv without label", FileOptions{Path: "userfile_ok.csv", Dir: "testdata"}, nil, "label: required: the header name of the label column"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadFile("mine", tt.f, Options{Synthetic: SyntheticAllow})
			if err == nil {
				t.Fatalf("no error; want %q", tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not wrap %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n%v\ndoes not contain\n%s", err, tt.want)
			}
		})
	}
}

// TestLoadFile_MalformedIsParseError: a malformed text line is a
// *ParseError with the file and line, as for the built-in loaders.
func TestLoadFile_MalformedIsParseError(t *testing.T) {
	t.Parallel()
	_, err := LoadFile("mine", FileOptions{Path: "userfile_badnum.csv", Dir: "testdata", Label: "y", Positive: "yes", Categorical: []string{"colour"}}, Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || filepath.Base(pe.Path) != "userfile_badnum.csv" || pe.Line != 3 || !strings.HasPrefix(pe.Msg, "field 1 (age)") {
		t.Errorf("error %v (%#v), want a ParseError at userfile_badnum.csv:3 on field 1 (age)", err, pe)
	}
}

// TestLoadFile_Shadowing: a data file may not take the name of a
// registered dataset; the error names both.
func TestLoadFile_Shadowing(t *testing.T) {
	t.Parallel()
	_, err := LoadFile("adult", FileOptions{Path: "userfile_ok.csv", Dir: "testdata", Label: "y"}, Options{})
	if err == nil || !strings.Contains(err.Error(), `data file adult (userfile_ok.csv): the name is the registered dataset "adult" (UCI Adult`) {
		t.Errorf("error %v", err)
	}
}

// TestFileOptions_Validate: each option problem is one *FileOptionError
// whose Field is the spec key.
func TestFileOptions_Validate(t *testing.T) {
	t.Parallel()
	pin := strings.Repeat("a", 64)
	tests := []struct {
		name   string
		f      FileOptions
		fields []string
	}{
		{"csv ok", FileOptions{Path: "a.csv", Label: "y", Positive: "1", Categorical: []string{"c"}, SHA256: pin}, nil},
		{"npy column ok", FileOptions{Path: "a.npy", Label: "-1", Positive: "1", Categorical: []string{"f2"}}, nil},
		{"npy labels ok", FileOptions{Path: "a.npy", Labels: "y.npy", LabelsSHA256: pin}, nil},
		{"tab extension", FileOptions{Path: "a.TAB", Label: "y"}, nil},
		{"no path", FileOptions{Label: "y", Format: FileCSV}, []string{"path"}},
		{"unknown extension", FileOptions{Path: "a.parquet", Label: "y"}, []string{"format"}},
		{"unknown format", FileOptions{Path: "a.csv", Format: "xlsx", Label: "y"}, []string{"format"}},
		{"csv without label", FileOptions{Path: "a.csv"}, []string{"label"}},
		{"csv with labels", FileOptions{Path: "a.csv", Label: "y", Labels: "y.npy"}, []string{"labels"}},
		{"npy without label", FileOptions{Path: "a.npy"}, []string{"label"}},
		{"npy with both", FileOptions{Path: "a.npy", Label: "0", Labels: "y.npy"}, []string{"label"}},
		{"npy label a name", FileOptions{Path: "a.npy", Label: "y"}, []string{"label"}},
		{"npy positive a word", FileOptions{Path: "a.npy", Label: "0", Positive: "yes"}, []string{"positive"}},
		{"bad pin", FileOptions{Path: "a.csv", Label: "y", SHA256: "abc"}, []string{"sha256"}},
		{"labels pin alone", FileOptions{Path: "a.csv", Label: "y", LabelsSHA256: pin}, []string{"labels_sha256"}},
		{"categorical problems", FileOptions{Path: "a.csv", Label: "y", Categorical: []string{"c", "", "c", "y"}}, []string{"categorical[1]", "categorical[2]", "categorical[3]"}},
		{"npy categorical name", FileOptions{Path: "a.npy", Label: "0", Categorical: []string{"age"}}, []string{"categorical[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.f.Validate()
			var fields []string
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var fe *FileOptionError
					if !errors.As(e, &fe) {
						t.Fatalf("%v is not a *FileOptionError", e)
					}
					fields = append(fields, fe.Field)
				}
			}
			if !slices.Equal(fields, tt.fields) {
				t.Errorf("fields %q, want %q (error %v)", fields, tt.fields, err)
			}
		})
	}
}

// TestCheckFile: the pre-run check stats the files without reading them.
func TestCheckFile(t *testing.T) {
	t.Parallel()
	ok := FileOptions{Path: "userfile_i4.npy", Labels: "userfile_labels.npy", Dir: "testdata", Positive: "1"}
	if err := CheckFile("m", ok); err != nil {
		t.Errorf("CheckFile: %v", err)
	}
	bad := ok
	bad.Labels = "gone.npy"
	if err := CheckFile("m", bad); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "gone.npy") {
		t.Errorf("CheckFile: %v, want ErrNotFound naming gone.npy", err)
	}
}

// FuzzReadNPY: arbitrary bytes never crash the .npy reader (npyio slices
// the header without checks; readNPY recovers), and an error names the
// file.
func FuzzReadNPY(f *testing.F) {
	for _, name := range []string{"userfile_f8.npy", "userfile_i4.npy", "userfile_labels.npy", "userfile_3d.npy", "userfile_object.npy", "userfile_str.npy"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(append(npy.Magic[:], 1, 0, 4, 0, '{', '}', '}', '}'))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, vector := range []bool{false, true} {
			a, err := readNPY(bufio.NewReader(bytes.NewReader(data)), "fuzz.npy", int64(len(data)), vector)
			if err == nil && (a == nil || len(a.data) != a.rows*a.cols) {
				t.Fatalf("array %+v without error", a)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "fuzz.npy") {
				t.Errorf("error %q does not name the file", err)
			}
		}
	})
}

// FuzzParseDelimited: arbitrary text never crashes the csv/tsv parser, and
// a table it returns is consistent.
func FuzzParseDelimited(f *testing.F) {
	for _, name := range []string{"userfile_ok.csv", "userfile_ok.tsv", "userfile_badnum.csv", "userfile_badquote.csv"} {
		b, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(b)
	}
	f.Add([]byte("y\n1\n"))
	f.Add([]byte("\ufeffa,y\n1,2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, comma := range []rune{',', '\t'} {
			tb, _, err := parseDelimited(bytes.NewReader(data), "fuzz.csv", comma, FileOptions{Label: "y", Categorical: []string{"c"}})
			if err == nil {
				if err := tb.validate(TaskRegression); err != nil {
					t.Fatalf("inconsistent table: %v", err)
				}
			}
		}
	})
}
