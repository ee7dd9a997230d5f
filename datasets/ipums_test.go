package datasets

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ipumsOKSHA256 is sha256sum testdata/ipums_ok.txt.
const ipumsOKSHA256 = "4bb46ac004ef44c688e4a288c989b48b0e025ad314ac0bb3d0a3cb1df00d5fa2"

// TestReadTable_IPUMS reads a 3-record US matrix with mixed separators
// (single and double spaces, tabs, a CRLF line, a blank line, a trailing
// blank, one "27.0").
func TestReadTable_IPUMS(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "ipums-us", "ipums_ok.txt", "")
	if err != nil {
		t.Fatal(err)
	}
	rec := tb.Files[0]
	if rec.Records != 3 || rec.Verified || rec.SHA256 != ipumsOKSHA256 {
		t.Errorf("file record = %+v, want 3 records, unverified", rec)
	}
	wantFloats(t, "Y", tb.Y, []float64{1, -1, -1})
	wantFloats(t, "f1", numCol(t, tb, "f1"), []float64{39, 52, 27})
	wantFloats(t, "f3", numCol(t, tb, "f3"), []float64{3, 2, 1})
	wantFloats(t, "f5", numCol(t, tb, "f5"), []float64{1, 0, 0})
	wantFloats(t, "f57", numCol(t, tb, "f57"), []float64{0, 0, 1})
	if len(tb.Numeric) != 57 || len(tb.Categorical) != 0 || tb.Target != "label" ||
		tb.Attributes[0] != "f1" || tb.Attributes[56] != "f57" {
		t.Errorf("ipums-us table: %d numeric, %d categorical, target %q, attributes %q",
			len(tb.Numeric), len(tb.Categorical), tb.Target, tb.Attributes)
	}
	// The US fixture has 58 fields, so the 53-field BR format rejects it.
	_, err = readFixture(t, "ipums-br", "ipums_ok.txt", "")
	if err == nil || err.Error() != "testdata/ipums_ok.txt:1: wrong field count: got 58, want 53" {
		t.Errorf("ipums-br on a US file: error = %v", err)
	}
}

func TestReadTable_IPUMSErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, want string
	}{
		{"ipums_fieldcount.txt", "testdata/ipums_fieldcount.txt:2: wrong field count: got 57, want 58"},
		// Line 2 is blank and skipped, but still counted.
		{"ipums_badnum.txt", `testdata/ipums_badnum.txt:3: field 3 (f3): bad number "3x"`},
		{"ipums_badlabel.txt", `testdata/ipums_badlabel.txt:2: field 58 (label): unknown label "2" (want "0" or "1")`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			_, err := readFixture(t, "ipums-us", tt.file, "")
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

func TestSplitWhitespace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line string
		want       []string
	}{
		{"single", "1 0 1", []string{"1", "0", "1"}},
		{"runs", "  1 \t 0\t\t1  ", []string{"1", "0", "1"}},
		{"crlf", "1 0\r", []string{"1", "0"}},
		{"one", "7", []string{"7"}},
		{"blank", " \t\r", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, f := range splitWhitespace(nil, []byte(tt.line)) {
				got = append(got, string(f))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("splitWhitespace(%q) = %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}

// TestLoad_IPUMSMissing: with no file, "never" is an error that says how to
// obtain the extract, and "auto" gives the synthetic stand-in at real n, d.
func TestLoad_IPUMSMissing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, site string
		n, d             int
	}{
		{"ipums-us", "ipums-us.txt", "https://usa.ipums.org", 39928, 57},
		{"ipums-br", "ipums-br.txt", "https://international.ipums.org", 38000, 52},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			_, err := Load(tt.name, Options{DataDir: dir, Synthetic: SyntheticNever})
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("never: error = %v, want ErrNotFound", err)
			}
			for _, s := range []string{tt.file, tt.site, "forbid redistributing", "data directory"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("never: error %q does not mention %q", err, s)
				}
			}
			ds, err := Load(tt.name, Options{DataDir: dir, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			n, d := ds.X.Dims()
			if n != tt.n || d != tt.d || len(ds.Y) != tt.n || ds.Task != TaskClassification {
				t.Errorf("auto: %d×%d (%d labels, %s), want %d×%d classification", n, d, len(ds.Y), ds.Task, tt.n, tt.d)
			}
			if ds.Source.Kind != KindSynthetic || ds.Source.Generator != GeneratorPlantedLogisticCensus ||
				!strings.Contains(ds.Source.Params["reason"], tt.file) || !strings.HasPrefix(ds.Source.String(), "SYNTHETIC") {
				t.Errorf("auto: source = %v, want synthetic with the missing file as reason", ds.Source)
			}
		})
	}
}

// TestLoad_IPUMSUnverified: a user-supplied file loads as real data, marked
// unverified (no pinned checksum), and Status agrees.
func TestLoad_IPUMSUnverified(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if st, err := Inspect("ipums-us", dir); err != nil || len(st) != 1 || st[0].State != StateAbsent || st[0].Err != nil ||
		st[0].Name != "ipums-us.txt" || st[0].Want != "" {
		t.Errorf("Inspect (absent) = %+v, %v", st, err)
	}
	content, err := os.ReadFile("testdata/ipums_ok.txt")
	if err != nil {
		t.Fatal(err)
	}
	writeGzip(t, filepath.Join(dir, "ipums-us.txt.gz"), content)
	ds, err := Load("ipums-us", Options{DataDir: dir, Synthetic: SyntheticNever})
	if err != nil {
		t.Fatal(err)
	}
	f := ds.Source.Files[0]
	if ds.Source.Kind != KindReal || f.Verified || f.SHA256 != ipumsOKSHA256 || f.Records != 3 {
		t.Errorf("source = %+v", ds.Source)
	}
	if n, d := ds.X.Dims(); n != 3 || d != 57 || ds.FeatureNames[0] != "f1" || !slices.Equal(ds.Y, []float64{1, -1, -1}) {
		t.Errorf("X %d×%d, names %q, Y %v", n, d, ds.FeatureNames, ds.Y)
	}
	st, _ := Inspect("ipums-us", dir)
	if st[0].State != StateUnpinned || st[0].Err != nil || st[0].SHA256 != ipumsOKSHA256 || st[0].Records != 3 {
		t.Errorf("Inspect = %+v", st[0])
	}
}

// TestFetch_IPUMSRefuses: Fetch never downloads an IPUMS extract; absent,
// it explains why and how to obtain it; present, it leaves it alone.
func TestFetch_IPUMSRefuses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, file, site string }{
		{"ipums-us", "ipums-us.txt", "https://usa.ipums.org"},
		{"ipums-br", "ipums-br.txt", "https://international.ipums.org"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			// client nil would mean http.DefaultClient; no request is made.
			err := Fetch(context.Background(), nil, tt.name, dir, nil)
			if !errors.Is(err, ErrNoDownload) {
				t.Fatalf("error = %v, want ErrNoDownload", err)
			}
			for _, s := range []string{"IPUMS terms of use forbid redistributing", tt.site, tt.file, dir, "0/1 label"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Errorf("refused fetch left %q", names)
			}

			content, rerr := os.ReadFile("testdata/ipums_ok.txt")
			if rerr != nil {
				t.Fatal(rerr)
			}
			if tt.name == "ipums-br" { // a well-formed BR record: 52 features and the label
				content = []byte(strings.Repeat("0 ", 52) + "1\n")
			}
			if err := os.WriteFile(filepath.Join(dir, tt.file), content, 0o644); err != nil {
				t.Fatal(err)
			}
			var progress bytes.Buffer
			if err := Fetch(context.Background(), nil, tt.name, dir, &progress); err != nil {
				t.Errorf("present file: error = %v", err)
			}
			if !strings.Contains(progress.String(), "not pinned") {
				t.Errorf("progress = %q", progress.String())
			}
		})
	}
}

// TestSynthetic_IPUMS checks the census stand-ins: shape, names, integer
// columns in range, one-hot blocks with exactly one 1 per record, labels
// ±1 and the class balance.
//
// Tolerance: as in TestSynthetic_ShapeAndBalance, the number of positives
// has mean n·p given the features and variance ≤ n·p(1−p), here > 7,900
// (n = 38,000, p = 0.3), so |K/n − p| ≤ zTol·√(p(1−p)/n) fails with
// probability below 1e-5 for any seed.
func TestSynthetic_IPUMS(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"ipums-us", "ipums-br"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := builtinEntry(name)
			lay := e.synth.census
			if lay.columns() != e.Dim {
				t.Fatalf("layout has %d columns, registry Dim %d", lay.columns(), e.Dim)
			}
			tb, src := synthesize(e, 20240601)
			if tb.N() != e.Records || tb.Dim() != e.Dim || !slices.Equal(tb.Attributes, e.Attributes) {
				t.Fatalf("stand-in %d×%d, attributes %q", tb.N(), tb.Dim(), tb.Attributes)
			}
			if src.Kind != KindSynthetic || src.Generator != GeneratorPlantedLogisticCensus || len(src.Files) != 0 {
				t.Errorf("source = %+v", src)
			}
			for _, k := range []string{"stand_in_for", "seed", "n", "d", "positive_rate_target", "positives",
				"intercept", "signal_sd", "layout", "marginals"} {
				if src.Params[k] == "" {
					t.Errorf("Source.Params[%q] missing", k)
				}
			}
			j := 0
			for _, b := range lay.blocks {
				cols := tb.Numeric[j : j+b.columns()]
				j += b.columns()
				for i := 0; i < tb.N(); i++ {
					sum := 0.0
					for _, c := range cols {
						v := c.Values[i]
						if v != math.Round(v) || v < 0 {
							t.Fatalf("%s (%s) record %d: %v, want a non-negative integer", c.Name, b.label, i, v)
						}
						sum += v
					}
					switch b.kind {
					case blockOneHot:
						if sum != 1 {
							t.Fatalf("%s block at %s, record %d: %v ones, want 1", b.label, cols[0].Name, i, sum)
						}
					case blockBinary:
						if sum > 1 {
							t.Fatalf("%s record %d: %v, want 0 or 1", b.label, i, sum)
						}
					default:
						if sum < b.lo || sum > b.hi {
							t.Fatalf("%s record %d: %v outside [%v, %v]", b.label, i, sum, b.lo, b.hi)
						}
					}
				}
			}
			pos := 0
			for _, y := range tb.Y {
				switch y {
				case 1:
					pos++
				case -1:
				default:
					t.Fatalf("label %v, want ±1", y)
				}
			}
			if src.Params["positives"] != strconv.Itoa(pos) {
				t.Errorf("Params[positives] = %s, counted %d", src.Params["positives"], pos)
			}
			p, n := lay.positiveRate, float64(tb.N())
			tol := zTol * math.Sqrt(p*(1-p)/n)
			if got := float64(pos) / n; math.Abs(got-p) > tol {
				t.Errorf("positive rate %v, want %v ± %v", got, p, tol)
			}
			again, _ := synthesize(e, 20240601)
			if !slices.Equal(again.Y, tb.Y) || !slices.Equal(again.Numeric[0].Values, tb.Numeric[0].Values) {
				t.Error("same seed gave different stand-ins")
			}
		})
	}
}
