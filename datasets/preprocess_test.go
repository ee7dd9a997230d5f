package datasets

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// normTol bounds the rounding error of a computed norm of a row already
// scaled to norm ≤ 1: a few ulps (2.2e-16) per operation over ≤ 120
// entries is far below 1e-12.
const normTol = 1e-12

func l2(row []float64) float64 {
	var s float64
	for _, v := range row {
		s += v * v
	}
	return math.Sqrt(s)
}

func l1(row []float64) float64 {
	var s float64
	for _, v := range row {
		s += math.Abs(v)
	}
	return s
}

func TestPreprocessing_Validate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		p       Preprocessing
		wantErr []string
	}{
		{"zero value", Preprocessing{}, nil},
		{"all options", Preprocessing{ColumnScale: "zscore", RowNorm: "l1-max", TargetScale: "l1-max", Intercept: true,
			Columns: []string{"a", "b"}, Log1p: []string{"a"}}, nil},
		{"bad choices", Preprocessing{ColumnScale: "minmax", RowNorm: "l3", TargetScale: "log"}, []string{
			`preprocess.column_scale: unknown value "minmax" (want "maxabs", "center-maxabs", "zscore", "none")`,
			`preprocess.row_norm: unknown value "l3" (want "l2-max", "l2-clip", "l2-unit", "l1-max", "none")`,
			`preprocess.target_scale: unknown value "log" (want "none", "maxabs", "l1-max")`,
		}},
		{"bad names", Preprocessing{Columns: []string{"a", "", "a"}, Log1p: []string{"x", "x"}}, []string{
			"preprocess.columns[1]: empty name",
			`preprocess.columns[2]: duplicate name "a"`,
			`preprocess.log1p[1]: duplicate name "x"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.p.Validate()
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Errorf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.wantErr)
			}
			got := strings.Split(err.Error(), "\n")
			if !slices.Equal(got, tt.wantErr) {
				t.Errorf("Validate() =\n%s\nwant\n%s", err, strings.Join(tt.wantErr, "\n"))
			}
		})
	}
}

// TestPreprocessing_ExactMagic checks exact values on the 4-row fixture.
func TestPreprocessing_ExactMagic(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "magic", "magic_ok.data", magicOKSHA256)
	if err != nil {
		t.Fatal(err)
	}
	x, y, names, err := Preprocessing{Intercept: true, RowNorm: RowNone}.apply(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := x.Dims(); r != 4 || c != 11 || names[10] != InterceptName || names[0] != "fLength" {
		t.Fatalf("dims %d×%d, names %q", r, c, names)
	}
	// maxabs: fLength / 102.0005, fAsym / 54.0862 (|−54.0862| is the max).
	if got, want := x.At(0, 0), 28.7967/102.0005; got != want {
		t.Errorf("X[0][fLength] = %v, want %v", got, want)
	}
	if got := x.At(3, 0); got != 1 {
		t.Errorf("X[3][fLength] = %v, want 1", got)
	}
	if got, want := x.At(2, 5), 53.2566/54.0862; got != want {
		t.Errorf("X[2][fAsym] = %v, want %v", got, want)
	}
	if got := x.At(3, 5); got != -1 {
		t.Errorf("X[3][fAsym] = %v, want -1", got)
	}
	for i := 0; i < 4; i++ {
		if x.At(i, 10) != 1 {
			t.Errorf("intercept X[%d] = %v, want 1", i, x.At(i, 10))
		}
	}
	wantFloats(t, "Y", y, []float64{1, 1, -1, -1})

	// l2-max: divides the maxabs matrix (with intercept) by its largest row
	// norm, so ratios are kept and the largest row has norm 1.
	x2, _, _, err := Preprocessing{Intercept: true}.apply(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	var m float64
	for i := 0; i < 4; i++ {
		m = math.Max(m, l2(x.RawRowView(i)))
	}
	for i := 0; i < 4; i++ {
		for j := 0; j < 11; j++ {
			if got, want := x2.At(i, j), x.At(i, j)/m; got != want {
				t.Fatalf("l2-max X[%d][%d] = %v, want %v", i, j, got, want)
			}
		}
	}

	// center-maxabs centres: fLength mean is 64.0261, max deviation 37.9744.
	x3, _, _, err := Preprocessing{ColumnScale: ScaleCenterMaxAbs, RowNorm: RowNone}.apply(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	mean := (28.7967 + 31.6036 + 93.7035 + 102.0005) / 4
	if got, want := x3.At(3, 0), 1.0; math.Abs(got-want) > 1e-15 {
		t.Errorf("center-maxabs X[3][fLength] = %v, want %v", got, want)
	}
	if got, want := x3.At(0, 0), (28.7967-mean)/(102.0005-mean); math.Abs(got-want) > 1e-15 {
		t.Errorf("center-maxabs X[0][fLength] = %v, want %v", got, want)
	}

	// zscore standardizes, as R's scale(): divided by the sample standard
	// deviation (n − 1 = 3).
	x4, _, _, err := Preprocessing{ColumnScale: ScaleZScore, RowNorm: RowNone}.apply(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	var ss float64
	for _, v := range []float64{28.7967, 31.6036, 93.7035, 102.0005} {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / 3)
	for i, v := range []float64{28.7967, 31.6036, 93.7035, 102.0005} {
		if got, want := x4.At(i, 0), (v-mean)/sd; math.Abs(got-want) > 1e-14 {
			t.Errorf("zscore X[%d][fLength] = %v, want %v", i, got, want)
		}
	}
}

func TestPreprocessing_OneHotNames(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "adult", "adult_ok.data", "")
	if err != nil {
		t.Fatal(err)
	}
	x, _, names, err := Preprocessing{Columns: []string{"workclass", "age", "sex"}, Log1p: []string{"age"}, ColumnScale: ScaleNone, RowNorm: RowNone}.apply(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	// File order (age, workclass, sex), not the order of Columns.
	want := []string{"log1p(age)", "workclass=Private", "workclass=Self-emp-not-inc", "workclass=State-gov", "sex=Female", "sex=Male"}
	if !slices.Equal(names, want) {
		t.Fatalf("names = %q, want %q", names, want)
	}
	wantRows := [][]float64{
		{math.Log1p(39), 0, 0, 1, 0, 1},
		{math.Log1p(50), 0, 1, 0, 0, 1},
		{math.Log1p(31), 1, 0, 0, 1, 0},
		{math.Log1p(42), 1, 0, 0, 0, 1},
	}
	if !mat.Equal(x, mat.NewDense(4, 6, slices.Concat(wantRows...))) {
		t.Errorf("X =\n%v\nwant %v", mat.Formatted(x), wantRows)
	}
}

func TestPreprocessing_NameErrors(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "adult", "adult_ok.data", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		p    Preprocessing
		task string
		want string
	}{
		{"unknown column", Preprocessing{Columns: []string{"agee"}}, TaskClassification, `preprocess.columns[0]: unknown attribute "agee"`},
		{"categorical log1p", Preprocessing{Log1p: []string{"sex"}}, TaskClassification, `preprocess.log1p[0]: "sex" is categorical, not numeric`},
		{"unknown log1p", Preprocessing{Log1p: []string{"x"}}, TaskClassification, `preprocess.log1p[0]: unknown attribute "x"`},
		{"log1p not kept", Preprocessing{Columns: []string{"sex"}, Log1p: []string{"age"}}, TaskClassification, `preprocess.log1p[0]: "age" is not among preprocess.columns`},
		{"target log on labels", Preprocessing{TargetLog1p: true}, TaskClassification, "preprocess.target_log1p: only for regression (task is classification)"},
		{"target scale on labels", Preprocessing{TargetScale: TargetScaleMaxAbs}, TaskClassification, "preprocess.target_scale: only for regression (task is classification)"},
		{"log1p domain", Preprocessing{Log1p: []string{"age"}}, TaskClassification, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, _, err := tt.p.apply(tb, tt.task)
			if tt.want == "" {
				if err != nil {
					t.Errorf("apply: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("apply error = %v, want it to contain %q", err, tt.want)
			}
		})
	}

	bank, err := readFixture(t, "bank", "bank_ok.csv", "")
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = Preprocessing{Log1p: []string{"pdays"}}.apply(bank, TaskClassification)
	if want := "preprocess.log1p: pdays: value -1 in record 1 is ≤ −1"; err == nil || err.Error() != want {
		t.Errorf("log1p of −1: error = %v, want %q", err, want)
	}
}

func TestPreprocessing_Target(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "twitter", "twitter_ok.data", "")
	if err != nil {
		t.Fatal(err)
	}
	// Ligett et al. (2017), process_twitter.py: y ← log(1+y) / max log(1+y).
	_, y, _, err := Preprocessing{TargetLog1p: true, TargetScale: TargetScaleL1Max, RowNorm: RowL1Max, ColumnScale: ScaleNone}.apply(tb, TaskRegression)
	if err != nil {
		t.Fatal(err)
	}
	wantFloats(t, "Y", y, []float64{0, math.Log1p(3) / math.Log1p(12.5), 1})
	_, y, _, err = Preprocessing{}.apply(tb, TaskRegression)
	if err != nil {
		t.Fatal(err)
	}
	wantFloats(t, "raw Y", y, []float64{0, 3, 12.5})
}

// TestPreprocessing_Invariants checks the documented bounds of every
// option on the (always available) synthetic stand-ins.
func TestPreprocessing_Invariants(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"adult", "magic", "bank"} {
		tb, _ := synthesize(builtinEntry(name), 1)
		for _, cs := range []string{ScaleMaxAbs, ScaleCenterMaxAbs, ScaleZScore, ScaleNone} {
			for _, rn := range []string{RowL2Max, RowL2Clip, RowL2Unit, RowL1Max, RowNone} {
				p := Preprocessing{ColumnScale: cs, RowNorm: rn, Intercept: true}
				t.Run(name+"/"+cs+"/"+rn, func(t *testing.T) {
					t.Parallel()
					x, _, names, err := p.apply(tb, TaskClassification)
					if err != nil {
						t.Fatal(err)
					}
					checkInvariants(t, x, names, p)
				})
			}
		}
	}
}

func checkInvariants(t *testing.T, x *mat.Dense, names []string, p Preprocessing) {
	t.Helper()
	n, d := x.Dims()
	if names[d-1] != InterceptName {
		t.Fatalf("last feature %q, want %q", names[d-1], InterceptName)
	}
	var maxL2, maxL1 float64
	intercept := make([]float64, n)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		a, b := l2(row), l1(row)
		maxL2, maxL1 = math.Max(maxL2, a), math.Max(maxL1, b)
		intercept[i] = row[d-1]
		// The intercept was 1 before row scaling, so row/intercept is the
		// column-scaled row: each entry within [−1, 1] unless ColumnScale
		// is "none" or "zscore" (standardized entries are not bounded).
		if p.ColumnScale != ScaleNone && p.ColumnScale != ScaleZScore {
			for j, v := range row[:d-1] {
				if math.Abs(v) > row[d-1]*(1+normTol) {
					t.Fatalf("row %d col %s: |%v| exceeds the intercept %v: column scale broken", i, names[j], v, row[d-1])
				}
			}
		}
		switch p.RowNorm {
		case RowL2Clip:
			if a > 1+normTol {
				t.Fatalf("l2-clip: ‖x_%d‖₂ = %v > 1", i, a)
			}
		case RowL2Unit:
			if math.Abs(a-1) > normTol {
				t.Fatalf("l2-unit: ‖x_%d‖₂ = %v ≠ 1", i, a)
			}
		}
	}
	switch p.RowNorm {
	case RowL2Max:
		if maxL2 > 1+normTol || maxL2 < 1-normTol {
			t.Errorf("l2-max: max ‖x‖₂ = %v, want 1", maxL2)
		}
	case RowL1Max:
		if maxL1 > 1+normTol || maxL1 < 1-normTol {
			t.Errorf("l1-max: max ‖x‖₁ = %v, want 1", maxL1)
		}
	case RowNone:
		// Intercept column constant 1 before row scaling.
		for i, v := range intercept {
			if v != 1 {
				t.Fatalf("row %d: intercept %v, want 1", i, v)
			}
		}
	}
	// Under l2-max and l1-max every row is divided by the same constant, so
	// the intercept column stays constant.
	if p.RowNorm == RowL2Max || p.RowNorm == RowL1Max {
		for i, v := range intercept {
			if v != intercept[0] {
				t.Fatalf("row %d: intercept %v differs from row 0 (%v) under %s", i, v, intercept[0], p.RowNorm)
			}
		}
	}
	if p.ColumnScale == ScaleZScore || p.ColumnScale == ScaleCenterMaxAbs {
		// Centred columns: |mean| ≤ n·ulp-level rounding.
		for j := 0; j < d-1; j++ {
			var s float64
			for i := 0; i < n; i++ {
				s += x.At(i, j) / intercept[i]
			}
			if math.Abs(s/float64(n)) > 1e-9 {
				t.Fatalf("%s column %s has mean %v", p.ColumnScale, names[j], s/float64(n))
			}
		}
	}
}

func TestPreprocessing_ConstantColumns(t *testing.T) {
	t.Parallel()
	tb := &Table{
		Attributes: []string{"zero", "const", "x"},
		Numeric: []NumericColumn{
			{Name: "zero", Values: []float64{0, 0, 0}},
			{Name: "const", Values: []float64{0.1, 0.1, 0.1}},
			{Name: "x", Values: []float64{-2, 1, 4}},
		},
		Y: []float64{1, -1, 1},
	}
	for _, tt := range []struct {
		scale string
		want  []float64
	}{
		{ScaleMaxAbs, []float64{0, 1, -0.5, 0, 1, 0.25, 0, 1, 1}},
		{ScaleCenterMaxAbs, []float64{0, 0, -1, 0, 0, 0, 0, 0, 1}},
		{ScaleZScore, []float64{0, 0, -1, 0, 0, 0, 0, 0, 1}}, // x: mean 1, sd 3
	} {
		x, _, _, err := Preprocessing{ColumnScale: tt.scale, RowNorm: RowNone}.apply(tb, TaskClassification)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(x, mat.NewDense(3, 3, tt.want)) {
			t.Errorf("%s: X = %v, want %v", tt.scale, x.RawMatrix().Data, tt.want)
		}
	}
}
