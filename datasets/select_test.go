package datasets

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestPreprocessing_TreatmentCoding: treatment coding drops the first
// (sorted) level of each categorical attribute, as R's contr.treatment
// does: a record at the reference level has zeros in all its columns.
func TestPreprocessing_TreatmentCoding(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "adult", "adult_ok.data", "")
	if err != nil {
		t.Fatal(err)
	}
	p := Preprocessing{Columns: []string{"workclass", "age", "sex"}, Coding: CodingTreatment, ColumnScale: ScaleNone, RowNorm: RowNone}
	x, _, names, err := p.apply(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	// workclass levels Private < Self-emp-not-inc < State-gov: Private is
	// the reference; sex: Female < Male, Female the reference.
	want := []string{"age", "workclass=Self-emp-not-inc", "workclass=State-gov", "sex=Male"}
	if !slices.Equal(names, want) {
		t.Fatalf("names = %q, want %q", names, want)
	}
	wantRows := [][]float64{
		{39, 0, 1, 1},
		{50, 1, 0, 1},
		{31, 0, 0, 0},
		{42, 0, 0, 1},
	}
	if !mat.Equal(x, mat.NewDense(4, 4, slices.Concat(wantRows...))) {
		t.Errorf("X =\n%v\nwant %v", mat.Formatted(x), wantRows)
	}
	if sh := p.WithDefaults().shape(tb); sh.D != 4 {
		t.Errorf("shape D = %d, want 4", sh.D)
	}
}

// TestSelect_Errors: a selection needs a classification dataset and
// attributes with at least two levels; public scaling refuses it.
func TestSelect_Errors(t *testing.T) {
	t.Parallel()
	tb, err := readFixture(t, "adult", "adult_ok.data", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Preprocessing{Select: SelectStepwiseBIC}).selectAttributes(tb, TaskRegression); err == nil || !strings.Contains(err.Error(), "needs a classification dataset") {
		t.Errorf("regression: err = %v", err)
	}
	// The 4-row fixture has a single race level ("White").
	if _, err := (Preprocessing{Select: SelectStepwiseBIC, Columns: []string{"age", "race"}}).selectAttributes(tb, TaskClassification); err == nil || !strings.Contains(err.Error(), `"race" has a single level`) {
		t.Errorf("one-level attribute: err = %v", err)
	}
	if sel, err := (Preprocessing{}).selectAttributes(tb, TaskClassification); sel != nil || err != nil {
		t.Errorf("no selection: %v, %v", sel, err)
	}
	if err := (Preprocessing{Select: SelectStepwiseBIC, Scaling: ScalingPublic}).Validate(); err == nil || !strings.Contains(err.Error(), "public scaling takes no selection") {
		t.Errorf("public: err = %v", err)
	}
	if err := (Preprocessing{Select: "stepwise"}).Validate(); err == nil || !strings.Contains(err.Error(), `preprocess.select: unknown value "stepwise"`) {
		t.Errorf("bad value: err = %v", err)
	}
}

// TestSelect_Synthetic: on a table where one attribute decides the label
// and another is noise, BIC keeps the first and drops the second, and the
// record's fields add up (candidates, kept, dropped, columns, rank).
func TestSelect_Synthetic(t *testing.T) {
	t.Parallel()
	n := 2000
	tb := &Table{Attributes: []string{"signal", "noise", "colour"}, Target: "y", Y: make([]float64, n)}
	sig := NumericColumn{Name: "signal", Values: make([]float64, n)}
	noise := NumericColumn{Name: "noise", Values: make([]float64, n)}
	colour := CategoricalColumn{Name: "colour", Levels: []string{"blue", "green", "red"}, Codes: make([]int32, n)}
	for i := range n {
		// Deterministic, well spread values; the label follows signal with
		// flips every 7th record (no separation).
		sig.Values[i] = float64(i%200)/100 - 1
		noise.Values[i] = float64((i*37)%101)/50 - 1
		colour.Codes[i] = int32(i % 3)
		tb.Y[i] = -1
		if (sig.Values[i] > 0) != (i%7 == 0) {
			tb.Y[i] = 1
		}
	}
	tb.Numeric = []NumericColumn{sig, noise}
	tb.Categorical = []CategoricalColumn{colour}
	tb.check()
	sel, err := (Preprocessing{Select: SelectStepwiseBIC}).selectAttributes(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sel.Kept, []string{"signal"}) || len(sel.Dropped) != 2 || !slices.Equal(sel.Candidates, tb.Attributes) {
		t.Errorf("kept %v dropped %v", sel.Kept, sel.Dropped)
	}
	if sel.Columns != 2 || sel.Rank != 2 || sel.Criterion != "BIC" || sel.K != math.Log(float64(n)) || !sel.Converged || sel.Records != n {
		t.Errorf("selection %+v", sel)
	}
	if last := sel.Steps[len(sel.Steps)-1]; last.Criterion != sel.Deviance+sel.K*2 {
		t.Errorf("last step's criterion %v, want deviance + k·rank = %v", last.Criterion, sel.Deviance+sel.K*2)
	}
}

// TestSelect_Unconverged: fits of the selection that do not converge
// (glm.TestFit_NotConverged's near-separated design) are named in the
// record, which load turns into a warning for stderr and the manifest.
func TestSelect_Unconverged(t *testing.T) {
	t.Parallel()
	n := 20000
	tb := &Table{Attributes: []string{"x"}, Target: "y"}
	x := NumericColumn{Name: "x"}
	for i := -n; i <= n; i++ {
		x.Values = append(x.Values, float64(i))
		y := -1.0
		if (i > 0) != (i == 1 || i == -1) {
			y = 1
		}
		tb.Y = append(tb.Y, y)
	}
	tb.Numeric = []NumericColumn{x}
	tb.check()
	sel, err := (Preprocessing{Select: SelectStepwiseAIC}).selectAttributes(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Converged || len(sel.Unconverged) == 0 || !strings.Contains(sel.Unconverged[0], "no convergence in 25 iterations") {
		t.Errorf("converged %v, unconverged %q", sel.Converged, sel.Unconverged)
	}
}
