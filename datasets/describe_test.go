package datasets

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// writeCSV writes lines under a header into a temporary .csv and returns
// its path.
func writeCSV(t *testing.T, header string, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.csv")
	if err := os.WriteFile(path, []byte(header+"\n"+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadTable_Labels: a built-in format counts each label value it maps
// (adult's fixture: records 1–2 "<=50K", 3–4 ">50K"), sorted by value.
func TestReadTable_Labels(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "adult", "adult_ok.data", adultOKSHA256)
	if err != nil {
		t.Fatal(err)
	}
	want := []LabelCount{{"<=50K", 2, -1}, {">50K", 2, 1}}
	if !slices.Equal(tb.Labels, want) {
		t.Errorf("labels %+v, want %+v", tb.Labels, want)
	}
}

// TestLoadFile_Labels: the label mapping of a data file is counted per
// value (kept records only); a value that differs from positive only by
// case or surrounding space is a warning naming both spellings and counts;
// a regression target has no label list; a stand-in lists its classes.
func TestLoadFile_Labels(t *testing.T) {
	t.Parallel()
	lines := []string{"1,yes", "2,Yes", "3,no", "4,yes", "5,YES", "6,no", "7,?", "8,yes"}
	path := writeCSV(t, "x,y", lines)
	ds, err := LoadFile("mine", FileOptions{Path: path, Label: "y", Positive: "yes"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []LabelCount{{"YES", 1, -1}, {"Yes", 1, -1}, {"no", 2, -1}, {"yes", 3, 1}}
	if !slices.Equal(ds.Labels, want) {
		t.Errorf("labels %+v, want %+v", ds.Labels, want)
	}
	wantW := []string{
		`label "y": value "Yes" (1 records) differs from positive = "yes" (3 records) only by case: its records were read as −1, not +1`,
		`label "y": value "YES" (1 records) differs from positive = "yes" (3 records) only by case: its records were read as −1, not +1`,
	}
	if !slices.Equal(ds.Warnings, wantW) {
		t.Errorf("warnings\n%q\nwant\n%q", ds.Warnings, wantW)
	}

	// positive written with a space: no record has it; the error names the
	// near miss.
	_, err = LoadFile("mine", FileOptions{Path: path, Label: "y", Positive: "yes "}, Options{})
	if err == nil || !strings.Contains(err.Error(), `no record has the positive value "yes "`) ||
		!strings.Contains(err.Error(), `value "yes" (3 records) differs from positive = "yes " (0 records) only by surrounding space`) ||
		!strings.Contains(err.Error(), `value "Yes" (1 records) differs from positive = "yes " (0 records) only by case and surrounding space`) {
		t.Errorf("positive with a space: %v", err)
	}

	// Exact spellings only: no warning.
	clean := writeCSV(t, "x,y", []string{"1,yes", "2,no", "3,yes"})
	ds, err = LoadFile("mine", FileOptions{Path: clean, Label: "y", Positive: "yes"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Warnings) != 0 || !slices.Equal(ds.Labels, []LabelCount{{"no", 1, -1}, {"yes", 2, 1}}) {
		t.Errorf("clean file: warnings %q, labels %+v", ds.Warnings, ds.Labels)
	}

	// Regression: no label list.
	ds, err = LoadFile("mine", FileOptions{Path: writeCSV(t, "x,y", []string{"1,0.5", "2,1.5"}), Label: "y"}, Options{})
	if err != nil || ds.Labels != nil {
		t.Errorf("regression: labels %+v, err %v", ds.Labels, err)
	}

	// A stand-in has no label text: its classes, counted.
	ds, err = Load("magic", Options{Synthetic: SyntheticAlways, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	for _, y := range ds.Y {
		if y > 0 {
			pos++
		}
	}
	if wantL := []LabelCount{{"+1", pos, 1}, {"-1", len(ds.Y) - pos, -1}}; !slices.Equal(ds.Labels, wantL) {
		t.Errorf("stand-in labels %+v, want %+v", ds.Labels, wantL)
	}
}

// TestLoadFile_LabelsNPY: npy labels are counted as numbers, as compared.
func TestLoadFile_LabelsNPY(t *testing.T) {
	t.Parallel()
	path := npyWrite(t, mat.NewDense(4, 2, []float64{1, 0, 2, 1, 3, 1, 4, 2}))
	ds, err := LoadFile("mine", FileOptions{Path: path, Label: "-1", Positive: "1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []LabelCount{{"0", 1, -1}, {"1", 2, 1}, {"2", 1, -1}}
	if !slices.Equal(ds.Labels, want) {
		t.Errorf("labels %+v, want %+v", ds.Labels, want)
	}
}

// TestLabelTally_ManyValues: beyond maxLabelValues distinct values the
// rest are folded into one entry per class, and the counts still add up.
func TestLabelTally_ManyValues(t *testing.T) {
	var lt labelTally
	n := 0
	for i := range maxLabelValues + 50 {
		class := -1.0
		if i%3 == 0 {
			class = 1
		}
		for range i%4 + 1 {
			lt.add(fmt.Appendf(nil, "v%04d", i), class)
			n++
		}
	}
	got := lt.list()
	if len(got) != maxLabelValues+2 {
		t.Fatalf("%d entries, want %d", len(got), maxLabelValues+2)
	}
	sum := 0
	for _, c := range got {
		sum += c.Records
	}
	if sum != n || got[maxLabelValues].Value != "(16 other values)" || got[maxLabelValues].Class != 1 ||
		got[maxLabelValues+1].Value != "(34 other values)" || got[maxLabelValues+1].Class != -1 {
		t.Errorf("folded entries %+v, %d records of %d", got[maxLabelValues:], sum, n)
	}
}

// TestLoad_Admit: Admit sees the shape of the design matrix before it is
// built (records kept; one column per numeric attribute and per observed
// level, after data.columns, without the intercept; the declared levels
// under public scaling), its error stops the load as it is, and the
// matrix then built has exactly that shape.
func TestLoad_Admit(t *testing.T) {
	t.Parallel()
	// colour: 3 levels; size: 2; one record dropped ('?').
	path := writeCSV(t, "a,colour,size,b,y", []string{
		"1,red,S,5,yes", "2,blue,M,6,no", "3,green,S,7,yes", "4,red,?,8,no", "5,red,M,9,no",
	})
	f := FileOptions{Path: path, Label: "y", Positive: "yes", Categorical: []string{"colour", "size"}}
	cases := []struct {
		name string
		pp   Preprocessing
		want Shape
	}{
		{"all", Preprocessing{Intercept: true}, Shape{N: 4, D: 7, Categorical: []LevelCount{{"colour", 3}, {"size", 2}}}},
		{"columns", Preprocessing{Columns: []string{"colour", "b"}}, Shape{N: 4, D: 4, Categorical: []LevelCount{{"colour", 3}}}},
		{"public", Preprocessing{Scaling: ScalingPublic, Columns: []string{"a", "size"}, Domain: Domain{
			Ranges: map[string]Range{"a": {0, 10}}, Levels: map[string][]string{"size": {"L", "M", "S", "XL"}}}},
			Shape{N: 4, D: 5, Categorical: []LevelCount{{"size", 4}}}},
	}
	for _, c := range cases {
		var got Shape
		calls := 0
		opts := Options{Preprocess: c.pp, Admit: func(sh Shape) error { got = sh; calls++; return nil }}
		ds, err := LoadFile("mine", f, opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if calls != 1 || got.N != c.want.N || got.D != c.want.D || !slices.Equal(got.Categorical, c.want.Categorical) {
			t.Errorf("%s: Admit got %+v (%d calls), want %+v", c.name, got, calls, c.want)
		}
		n, d := ds.X.Dims()
		if c.pp.Intercept {
			d--
		}
		if n != got.N || d != got.D {
			t.Errorf("%s: X is %d × %d (without the intercept), Admit was told %d × %d", c.name, n, d, got.N, got.D)
		}
	}
	refuse := errors.New("too large")
	_, err := LoadFile("mine", f, Options{Admit: func(Shape) error { return refuse }})
	if err != refuse {
		t.Errorf("Admit's error came back as %v, want it as it is", err)
	}
	if s := (Shape{N: 300, D: 305, Categorical: []LevelCount{{"colour", 3}, {"id", 300}}}).String(); s != "n = 300, d = 305 after one-hot encoding (id: 300 levels, colour: 3 levels)" {
		t.Errorf("Shape.String() = %q", s)
	}
}

// TestLoadFile_WideCategorical: a categorical attribute in which most
// records have a level of their own (an identifier) is a warning naming it
// and its level count; an ordinary one, or one left out by data.columns,
// is not.
func TestLoadFile_WideCategorical(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf("u%03d,%s,%d,%s", i, []string{"red", "blue"}[i%2], i, []string{"yes", "no"}[i%3%2]))
	}
	path := writeCSV(t, "id,colour,x,y", lines)
	f := FileOptions{Path: path, Label: "y", Positive: "yes", Categorical: []string{"id", "colour"}}
	ds, err := LoadFile("mine", f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `categorical attribute "id" has 40 levels in 40 records (one level per record)`
	if len(ds.Warnings) != 1 || !strings.HasPrefix(ds.Warnings[0], want) {
		t.Errorf("warnings %q, want one starting %q", ds.Warnings, want)
	}
	if _, d := ds.X.Dims(); d != 40+2+1 {
		t.Errorf("d = %d, want 43 (40 + 2 levels, x)", d)
	}
	ds, err = LoadFile("mine", f, Options{Preprocess: Preprocessing{Columns: []string{"colour", "x"}}})
	if err != nil || len(ds.Warnings) != 0 {
		t.Errorf("id left out: warnings %q, err %v", ds.Warnings, err)
	}
	// A level shared by most records, 3 levels in 4 records: no warning.
	tb := &Table{Attributes: []string{"c"}, Categorical: []CategoricalColumn{{Name: "c", Levels: []string{"a", "b", "c"}, Codes: []int32{0, 1, 2, 2}}}, Y: []float64{1, -1, 1, -1}}
	if w := (Preprocessing{}).wideCategorical(tb); len(w) != 0 {
		t.Errorf("3 levels in 4 records: %q", w)
	}
}

// TestPreprocess_Overflow: a value that a scaling cannot carry out in
// float64 is refused naming the file, the column (or record) and the
// scaling, never a design matrix of NaN, ±Inf or silent zeros.
func TestPreprocess_Overflow(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 20 {
		x := "0.5"
		if i < 3 {
			x = "1e308" // their sum is +Inf
		}
		lines = append(lines, fmt.Sprintf("%s,%d,%d,%s", x, i, i%5, []string{"yes", "no"}[i%2]))
	}
	path := writeCSV(t, "x,z,w,y", lines)
	// |deviations| of 1e200 square to +Inf: zscore only.
	var big []string
	for i := range 10 {
		big = append(big, fmt.Sprintf("%de199,%d,%s", i, i, []string{"yes", "no"}[i%2]))
	}
	bigPath := writeCSV(t, "x,z,y", big)
	// Row norms beyond float64 with no column scaling.
	wide := writeCSV(t, "a,b,c,e,y", []string{"1e308,1e308,1e308,1e308,yes", "1,2,3,4,no"})
	cases := []struct {
		name string
		path string
		pp   Preprocessing
		want string
	}{
		{"zscore sum", path, Preprocessing{ColumnScale: ScaleZScore},
			path + `: column "x": column_scale = "zscore" overflows float64: the sum of its values is +Inf (largest |value| 1e+308): divide the column in the file by a power of ten, or use column_scale = "maxabs"`},
		{"center-maxabs sum", path, Preprocessing{ColumnScale: ScaleCenterMaxAbs},
			path + `: column "x": column_scale = "center-maxabs" overflows float64: the sum of its values is +Inf`},
		{"zscore squares", bigPath, Preprocessing{ColumnScale: ScaleZScore},
			bigPath + `: column "x": column_scale = "zscore" overflows float64: the sum of squared deviations from the column mean is +Inf (largest deviation 4.5e+199): divide the column in the file by a power of ten, or use column_scale = "center-maxabs" or "maxabs"`},
		{"l1-max", wide, Preprocessing{ColumnScale: ScaleNone, RowNorm: RowL1Max},
			wide + `: record 1: row_norm = "l1-max" overflows float64: its ℓ1 norm is beyond 1.8e308 (largest |value| 1e+308, column_scale = "none")`},
		{"l2-max", wide, Preprocessing{ColumnScale: ScaleNone, RowNorm: RowL2Max},
			wide + `: record 1: row_norm = "l2-max" overflows float64: its ℓ2 norm is beyond 1.8e308`},
		{"public row bound", wide, Preprocessing{Scaling: ScalingPublic, ColumnScale: ScaleNone, Domain: Domain{Ranges: map[string]Range{"a": {0, 1e308}, "b": {0, 1e308}, "c": {0, 1e308}, "e": {0, 1e308}}}},
			wide + `: row_norm = "l2-max" overflows float64: the row bound the declared ranges imply is +Inf`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadFile("mine", FileOptions{Path: c.path, Label: "y", Positive: "yes"}, Options{Preprocess: c.pp})
			var oe *OverflowError
			if !errors.As(err, &oe) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\nwant an *OverflowError containing\n%s", err, c.want)
			}
		})
	}
	// The same file under maxabs: every entry in [−1, 1], finite.
	ds, err := LoadFile("mine", FileOptions{Path: path, Label: "y", Positive: "yes"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range ds.X.RawMatrix().Data {
		if math.IsNaN(v) || math.Abs(v) > 1 {
			t.Fatalf("maxabs entry %v", v)
		}
	}
}

// TestLoad_ProviderLabels: label counts a Go provider gives are checked
// against its Y, and used when they agree.
func TestLoad_ProviderLabels(t *testing.T) {
	labels := func(l []LabelCount) func(*Raw) { return func(r *Raw) { r.Table.Labels = l } }
	ok := simProvider{name: "test-labels-ok", n: 14, edit: labels([]LabelCount{{"down", 4, -1}, {"up", 10, 1}})}
	register(t, ok)
	ds, err := Load(ok.name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	for _, y := range ds.Y {
		if y > 0 {
			pos++
		}
	}
	if pos != 10 || !slices.Equal(ds.Labels, []LabelCount{{"down", 4, -1}, {"up", 10, 1}}) {
		t.Fatalf("labels %+v (%d positives)", ds.Labels, pos)
	}
	for i, bad := range []struct {
		l    []LabelCount
		want string
	}{
		{[]LabelCount{{"down", 5, -1}, {"up", 9, 1}}, "labels: 9 records of class +1, but Y has 10"},
		{[]LabelCount{{"down", 4, -1}, {"up", 10, 2}}, `labels[1] ("up"): class 2; want +1 or -1`},
		{[]LabelCount{{"up", 4, -1}, {"up", 10, 1}}, `labels[1]: value "up" listed twice`},
		{[]LabelCount{{"down", 4, -1}, {"up", 10, 1}, {"side", 0, 1}}, `labels[2] ("side"): 0 records`},
	} {
		p := simProvider{name: fmt.Sprintf("test-labels-bad%d", i), n: 14, edit: labels(bad.l)}
		register(t, p)
		if _, err := Load(p.name, Options{}); !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want ErrProvider with %q", bad.l, err, bad.want)
		}
	}
}
