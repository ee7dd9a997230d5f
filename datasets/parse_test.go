package datasets

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// Digests of the fixtures (sha256sum testdata/FILE).
const (
	adultOKSHA256   = "ed05ad7a48efca6b36087acd4e090a647b0efc468405d5c7c71e47c1d38aabd3"
	magicOKSHA256   = "01b366518f594a3fcad2ae894f00d60e9c4fa84ffddf9aa00a1b62d887216420"
	twitterOKSHA256 = "b9dcfc8962245d7bf558fda3286acfa8cdaecc20c57651eef2c1b8031895c4a6"
)

// fixtureEntry returns a copy of the registry entry dataset whose data file
// is testdata/file with pinned digest sha ("" = no pinned checksum).
func fixtureEntry(t *testing.T, dataset, file, sha string) *Entry {
	t.Helper()
	e, ok := Lookup(dataset)
	if !ok {
		t.Fatalf("no registry entry %q", dataset)
	}
	e.Files = e.Files[:1]
	e.Files[0].Name = file
	e.Files[0].SHA256 = sha
	return &e
}

func readFixture(t *testing.T, dataset, file, sha string) (*Table, error) {
	t.Helper()
	return readTable(fixtureEntry(t, dataset, file, sha), "testdata")
}

func numCol(t *testing.T, tb *Table, name string) []float64 {
	t.Helper()
	c := tb.numeric(name)
	if c == nil {
		t.Fatalf("no numeric column %q", name)
	}
	return c.Values
}

func catCol(t *testing.T, tb *Table, name string) *CategoricalColumn {
	t.Helper()
	c := tb.categorical(name)
	if c == nil {
		t.Fatalf("no categorical column %q", name)
	}
	return c
}

func wantFloats(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestReadTable_Adult(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "adult", "adult_ok.data", adultOKSHA256)
	if err != nil {
		t.Fatal(err)
	}
	// Lines 3 and 5 contain '?'; line 7 is the trailing empty line.
	rec := tb.Files[0]
	if rec.Records != 4 || rec.Dropped != 2 || !rec.Verified || rec.SHA256 != adultOKSHA256 {
		t.Errorf("file record = %+v, want 4 records, 2 dropped, verified", rec)
	}
	if rec.Path != filepath.Join("testdata", "adult_ok.data") {
		t.Errorf("path = %q", rec.Path)
	}
	wantFloats(t, "Y", tb.Y, []float64{-1, -1, 1, 1})
	wantFloats(t, "age", numCol(t, tb, "age"), []float64{39, 50, 31, 42})
	wantFloats(t, "fnlwgt", numCol(t, tb, "fnlwgt"), []float64{77516, 83311, 45781, 159449})
	wantFloats(t, "capital-gain", numCol(t, tb, "capital-gain"), []float64{2174, 0, 14084, 5178})
	wantFloats(t, "hours-per-week", numCol(t, tb, "hours-per-week"), []float64{40, 13, 50, 40})
	wc := catCol(t, tb, "workclass")
	if !slices.Equal(wc.Levels, []string{"Private", "Self-emp-not-inc", "State-gov"}) {
		t.Errorf("workclass levels = %q", wc.Levels)
	}
	if !slices.Equal(wc.Codes, []int32{2, 1, 0, 0}) {
		t.Errorf("workclass codes = %v", wc.Codes)
	}
	if got := catCol(t, tb, "native-country").Levels; !slices.Equal(got, []string{"United-States"}) {
		t.Errorf("native-country levels = %q", got)
	}
	if len(tb.Numeric) != 6 || len(tb.Categorical) != 8 {
		t.Errorf("got %d numeric, %d categorical, want 6 and 8", len(tb.Numeric), len(tb.Categorical))
	}
	// 6 numeric + workclass 3 + education 2 + marital 2 + occupation 3 +
	// relationship 2 + race 1 + sex 2 + native-country 1.
	if got := tb.Dim(); got != 22 {
		t.Errorf("Dim = %d, want 22", got)
	}
}

func TestReadTable_Magic(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "magic", "magic_ok.data", "")
	if err != nil {
		t.Fatal(err)
	}
	if tb.Files[0].Verified {
		t.Error("file with no pinned checksum reported as verified")
	}
	wantFloats(t, "Y", tb.Y, []float64{1, 1, -1, -1})
	wantFloats(t, "fLength", numCol(t, tb, "fLength"), []float64{28.7967, 31.6036, 93.7035, 102.0005})
	wantFloats(t, "fAsym", numCol(t, tb, "fAsym"), []float64{27.7004, 26.2722, 53.2566, -54.0862})
	wantFloats(t, "fDist", numCol(t, tb, "fDist"), []float64{81.8828, 205.261, 231.9028, 274.9392})
	if len(tb.Categorical) != 0 || tb.Dim() != 10 {
		t.Errorf("magic: %d categorical, dim %d; want 0 and 10", len(tb.Categorical), tb.Dim())
	}
}

func TestReadTable_KDD(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "kddcup99", "kdd_ok.data", "")
	if err != nil {
		t.Fatal(err)
	}
	wantFloats(t, "Y", tb.Y, []float64{-1, 1, 1, -1}) // normal, smurf, neptune, normal
	wantFloats(t, "src_bytes", numCol(t, tb, "src_bytes"), []float64{181, 1032, 0, 33})
	wantFloats(t, "serror_rate", numCol(t, tb, "serror_rate"), []float64{0, 0, 0.83, 0})
	wantFloats(t, "dst_host_count", numCol(t, tb, "dst_host_count"), []float64{9, 148, 5, 78})
	for _, c := range []struct {
		name   string
		levels []string
		codes  []int32
	}{
		{"protocol_type", []string{"icmp", "tcp", "udp"}, []int32{1, 0, 1, 2}},
		{"service", []string{"domain_u", "ecr_i", "http", "telnet"}, []int32{2, 1, 3, 0}},
		{"flag", []string{"S0", "SF"}, []int32{1, 1, 0, 1}},
	} {
		got := catCol(t, tb, c.name)
		if !slices.Equal(got.Levels, c.levels) || !slices.Equal(got.Codes, c.codes) {
			t.Errorf("%s: levels %q codes %v, want %q %v", c.name, got.Levels, got.Codes, c.levels, c.codes)
		}
	}
	if len(tb.Numeric) != 38 || len(tb.Categorical) != 3 {
		t.Errorf("got %d numeric, %d categorical, want 38 and 3", len(tb.Numeric), len(tb.Categorical))
	}
}

func TestReadTable_Bank(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "bank", "bank_ok.csv", "")
	if err != nil {
		t.Fatal(err)
	}
	wantFloats(t, "Y", tb.Y, []float64{-1, -1, 1})
	wantFloats(t, "age", numCol(t, tb, "age"), []float64{58, 44, 59})
	wantFloats(t, "balance", numCol(t, tb, "balance"), []float64{2143, 29, 2343})
	wantFloats(t, "pdays", numCol(t, tb, "pdays"), []float64{-1, -1, -1})
	job := catCol(t, tb, "job")
	if !slices.Equal(job.Levels, []string{"admin.", "management", "technician"}) || !slices.Equal(job.Codes, []int32{1, 2, 0}) {
		t.Errorf("job: levels %q codes %v", job.Levels, job.Codes)
	}
	if got := catCol(t, tb, "poutcome").Levels; !slices.Equal(got, []string{"unknown"}) {
		t.Errorf("poutcome levels = %q (\"unknown\" is an ordinary level)", got)
	}
	if len(tb.Numeric) != 7 || len(tb.Categorical) != 9 {
		t.Errorf("got %d numeric, %d categorical, want 7 and 9", len(tb.Numeric), len(tb.Categorical))
	}
}

func TestReadTable_Twitter(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "twitter", "twitter_ok.data", "")
	if err != nil {
		t.Fatal(err)
	}
	wantFloats(t, "Y", tb.Y, []float64{0, 3, 12.5})
	if len(tb.Numeric) != 77 || tb.Attributes[0] != "NCD_0" || tb.Attributes[76] != "NAD_6" || tb.Attributes[14] != "AS(NA)_0" {
		t.Errorf("twitter attributes: %d numeric, %q", len(tb.Numeric), tb.Attributes)
	}
	if got := numCol(t, tb, "NCD_0")[0]; got != 20 {
		t.Errorf("NCD_0[0] = %v, want 20", got)
	}
}

func TestReadTable_Errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dataset, file string
		want          string
	}{
		{"adult", "adult_fieldcount.data", "testdata/adult_fieldcount.data:3: wrong field count: got 14, want 15"},
		// Line 2 is blank and skipped, but still counted.
		{"adult", "adult_badnum.data", `testdata/adult_badnum.data:3: field 3 (fnlwgt): bad number "83x11"`},
		{"adult", "adult_badlabel.data", `testdata/adult_badlabel.data:1: field 15 (income): unknown label "<=50K." (want ">50K" or "<=50K")`},
		{"magic", "magic_badlabel.data", `testdata/magic_badlabel.data:2: field 11 (class): unknown label "x" (want "g" or "h")`},
		{"magic", "magic_nan.data", `testdata/magic_nan.data:2: field 7 (fM3Long): bad number "NaN"`},
		{"kddcup99", "kdd_badlabel.data", `testdata/kdd_badlabel.data:2: field 42 (label): unknown label "normal" ` +
			`(want "normal." or one of the 22 attack classes of the training data, e.g. "smurf.")`},
		{"bank", "bank_badheader.csv", `testdata/bank_badheader.csv:1: header: field 17 is "class", want "y"`},
		{"bank", "bank_badnum.csv", `testdata/bank_badnum.csv:3: field 14 (pdays): bad number ""`},
		{"twitter", "twitter_badnum.data", `testdata/twitter_badnum.data:2: field 78 (Annotation): bad number "1e"`},
		{"magic", "adult_ok.data", "testdata/adult_ok.data:1: wrong field count: got 15, want 11"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			_, err := readFixture(t, tt.dataset, tt.file, "")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v, want a *ParseError", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error =\n\t%s\nwant\n\t%s", err, tt.want)
			}
		})
	}
}

func TestReadTable_ChecksumMismatch(t *testing.T) {
	t.Parallel()
	const wrong = "0000000000000000000000000000000000000000000000000000000000000000"
	_, err := readFixture(t, "magic", "magic_ok.data", wrong)
	var ce *ChecksumError
	if !errors.As(err, &ce) || !errors.Is(err, ErrChecksum) {
		t.Fatalf("error = %v, want a *ChecksumError", err)
	}
	if ce.Got != magicOKSHA256 || ce.Want != wrong || ce.File != "magic_ok.data" {
		t.Errorf("ChecksumError = %+v", ce)
	}
	want := "testdata/magic_ok.data: checksum mismatch for magic_ok.data: got sha256 " + magicOKSHA256 + ", want " + wrong
	if err.Error() != want {
		t.Errorf("error =\n\t%s\nwant\n\t%s", err, want)
	}

	// A file that is both the wrong file and malformed reports both, the
	// checksum first.
	_, err = readFixture(t, "adult", "adult_badnum.data", wrong)
	var pe *ParseError
	if !errors.Is(err, ErrChecksum) || !errors.As(err, &pe) || pe.Line != 3 {
		t.Errorf("error = %v, want checksum mismatch joined with the parse error of line 3", err)
	}
}

func writeGzip(t *testing.T, dst string, content []byte) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(content)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadTable_GzipTransparent(t *testing.T) {
	t.Parallel()
	content, err := os.ReadFile("testdata/magic_ok.data")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeGzip(t, filepath.Join(dir, "magic_ok.data.gz"), content)
	e := fixtureEntry(t, "magic", "magic_ok.data", magicOKSHA256)

	gz, err := readTable(e, dir)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := readTable(e, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gz.Y, plain.Y) || !slices.Equal(gz.Numeric[0].Values, plain.Numeric[0].Values) {
		t.Error("gzip and plain reads differ")
	}
	if !gz.Files[0].Verified || filepath.Base(gz.Files[0].Path) != "magic_ok.data.gz" {
		t.Errorf("gz record = %+v, want verified read of magic_ok.data.gz", gz.Files[0])
	}

	// With both present the plain file is read.
	if err := os.WriteFile(filepath.Join(dir, "magic_ok.data"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	both, err := readTable(e, dir)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(both.Files[0].Path) != "magic_ok.data" {
		t.Errorf("read %s, want the plain file when both exist", both.Files[0].Path)
	}
}

func TestReadTable_Missing(t *testing.T) {
	t.Parallel()
	_, err := readFixture(t, "magic", "no_such_file.data", "")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("error = %v, want ErrNotFound", err)
	}
}

func TestParseNumber_MatchesStrconv(t *testing.T) {
	t.Parallel()
	fixed := []string{"0", "-0", "+7", "0.00", "1.00", "0.83", "28.7967", "-54.0862", "693375640",
		"123456789012345", "1234567890123456", "0.1234567890123456", "1e5", "2.5E-3", ".5", "5.", "-.5",
		"0000000000000001", "99999999999999.9"}
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	for range 20000 {
		var b []byte
		if rng.IntN(2) == 0 {
			b = append(b, '-')
		}
		nd := 1 + rng.IntN(17)
		dot := rng.IntN(nd + 2)
		for k := 0; k < nd; k++ {
			if k == dot {
				b = append(b, '.')
			}
			b = append(b, byte('0'+rng.IntN(10)))
		}
		fixed = append(fixed, string(b))
	}
	for _, s := range fixed {
		want, err := strconv.ParseFloat(s, 64)
		got, ok := parseNumber([]byte(s))
		if !ok || err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseNumber(%q) = %v, %v; strconv gives %v, %v", s, got, ok, want, err)
		}
	}
	for _, s := range []string{"", "-", ".", "1.2.3", "abc", "NaN", "Inf", "-Inf", "1e400", "1,5", " 1"} {
		if v, ok := parseNumber([]byte(s)); ok {
			t.Errorf("parseNumber(%q) = %v, accepted; want rejected", s, v)
		}
	}
}
