package datasets

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// rawTable is a small raw table of n records: numeric attributes "a" (in
// [0, 10] by its declared domain) and "b" (in [−4, 4]), and a categorical
// "c" with the levels of cats; a[i] = i mod 11 and b[i] = (i mod 9) − 4
// stay inside, c[i] cycles through cats.
func rawTable(n int, cats ...string) *Table {
	t := &Table{
		Attributes:  []string{"a", "c", "b"},
		Numeric:     []NumericColumn{{Name: "a", Values: make([]float64, n)}, {Name: "b", Values: make([]float64, n)}},
		Categorical: []CategoricalColumn{{Name: "c", Levels: slices.Sorted(slices.Values(cats)), Codes: make([]int32, n)}},
		Target:      "y",
		Y:           make([]float64, n),
	}
	for i := range n {
		t.Numeric[0].Values[i] = float64(i % 11)
		t.Numeric[1].Values[i] = float64(i%9) - 4
		t.Categorical[0].Codes[i] = int32(i % len(cats))
		t.Y[i] = float64(2*(i%2) - 1)
	}
	return t
}

// replace returns a copy of t whose record k has a = va, b = vb and
// c = level (a neighbouring raw dataset: one record replaced), the level
// added to the observed ones when new.
func replace(t *Table, k int, va, vb float64, level string) *Table {
	c := &Table{Attributes: t.Attributes, Target: t.Target, Y: slices.Clone(t.Y)}
	for _, col := range t.Numeric {
		c.Numeric = append(c.Numeric, NumericColumn{Name: col.Name, Values: slices.Clone(col.Values)})
	}
	c.Numeric[0].Values[k], c.Numeric[1].Values[k] = va, vb
	cc := t.Categorical[0]
	levels := slices.Clone(cc.Levels)
	if !slices.Contains(levels, level) {
		levels = append(levels, level)
		slices.Sort(levels)
	}
	codes := make([]int32, len(cc.Codes))
	for i, code := range cc.Codes {
		codes[i] = int32(slices.Index(levels, cc.Levels[code]))
	}
	codes[k] = int32(slices.Index(levels, level))
	c.Categorical = []CategoricalColumn{{Name: cc.Name, Levels: levels, Codes: codes}}
	return c
}

// testDomain is the declared domain of rawTable: a in [0, 10], b in
// [−4, 4], c one of x, y, z.
func testDomain() Domain {
	return Domain{
		Ranges: map[string]Range{"a": {0, 10}, "b": {-4, 4}},
		Levels: map[string][]string{"c": {"z", "x", "y"}},
	}
}

// differingRows returns the indices of the rows where x and y differ.
func differingRows(x, y *mat.Dense) []int {
	n, _ := x.Dims()
	var out []int
	for i := range n {
		if !slices.Equal(x.RawRowView(i), y.RawRowView(i)) {
			out = append(out, i)
		}
	}
	return out
}

func TestPublicScaling_ClipsRecordsOutsideTheDomain(t *testing.T) {
	t.Parallel()
	tb := rawTable(6, "x", "y")
	// Record 2: a above its range, b below; record 4: a level outside the
	// declared list.
	tb = replace(tb, 2, 25, -9, "x")
	tb = replace(tb, 4, 3, 1, "w")
	p := Preprocessing{Scaling: ScalingPublic, Domain: testDomain(), Intercept: true, RowNorm: RowNone}
	x, _, names, info, err := p.encode(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	// Columns: a, c=x, c=y, c=z (the declared levels, sorted), b, intercept.
	if want := []string{"a", "c=x", "c=y", "c=z", "b", InterceptName}; !slices.Equal(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
	// maxabs by the declared ranges: a/10, b/4; record 2 clipped to a = 10,
	// b = −4, so its entries are exactly ±1.
	if got, want := x.RawRowView(2), []float64{1, 1, 0, 0, -1, 1}; !slices.Equal(got, want) {
		t.Errorf("clipped record: row %v, want %v", got, want)
	}
	if got, want := x.RawRowView(4), []float64{0.3, 0, 0, 0, 0.25, 1}; !slices.Equal(got, want) {
		t.Errorf("record with a level outside the domain: row %v, want %v (all its indicators zero)", got, want)
	}
	if got, want := x.RawRowView(1), []float64{0.1, 0, 1, 0, -0.75, 1}; !slices.Equal(got, want) {
		t.Errorf("record inside the domain: row %v, want %v", got, want)
	}
	if info.ClippedValues != 2 || info.OutOfDomain != 1 || info.ClippedRows != 0 || info.ClippedRecords != 2 || info.Records != 6 {
		t.Errorf("counts %+v: want 2 values clipped, 1 level outside, 0 rows, 2 records changed of 6", *info)
	}
	// The implied bound: a, b and the intercept ≤ 1, one indicator of c.
	if want := 2.0; info.ImpliedRowBound != want {
		t.Errorf("implied row bound %v, want %v", info.ImpliedRowBound, want)
	}
}

// TestPublicScaling_NeighboursDifferInOneRow is the property that makes a
// mechanism's ε hold for the raw records: replacing one raw record (here
// by a far longer one, or one with a level no other record has) changes
// one row of the public-scaled design matrix and nothing else, its
// columns included. The same neighbours under the default data-dependent
// scaling change every row (the column and row scales move with the long
// record) or the columns themselves (a new level adds one): a regression
// test of the difference, and the reason the papers' ε holds for the
// scaled rows only.
func TestPublicScaling_NeighboursDifferInOneRow(t *testing.T) {
	t.Parallel()
	const n, k = 40, 17
	tb := rawTable(n, "x", "y")
	neighbours := []struct {
		name string
		t    *Table
	}{
		{"a longer record", replace(tb, k, 1e6, -1e6, "x")},
		{"a record with a new level", replace(tb, k, 5, 2, "z")},
		{"a record with an undeclared level", replace(tb, k, 5, 2, "w")},
	}
	for _, rn := range []string{RowL2Max, RowL2Clip, RowL1Max, RowNone} {
		for _, cs := range []string{ScaleMaxAbs, ScaleNone} {
			public := Preprocessing{Scaling: ScalingPublic, Domain: testDomain(), Intercept: true, ColumnScale: cs, RowNorm: rn}
			x, _, names, _, err := public.encode(tb, TaskClassification)
			if err != nil {
				t.Fatal(err)
			}
			for _, nb := range neighbours {
				x2, _, names2, _, err := public.encode(nb.t, TaskClassification)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(names, names2) {
					t.Errorf("public, %s, %s, %s: columns %v, neighbour's %v", cs, rn, nb.name, names, names2)
					continue
				}
				if d := differingRows(x, x2); !slices.Equal(d, []int{k}) {
					t.Errorf("public, %s, %s, %s: rows %v differ, want only %d", cs, rn, nb.name, d, k)
				}
			}
		}
	}
	// The papers' scaling (maxabs columns, l2-max rows): not one row.
	dep := Preprocessing{Intercept: true}
	x, _, names, err := dep.apply(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	x2, _, names2, err := dep.apply(neighbours[0].t, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	if d := differingRows(x, x2); len(d) != n {
		t.Errorf("data-dependent, a longer record: %d rows differ, want all %d (the scales move)", len(d), n)
	}
	_, _, names3, err := dep.apply(neighbours[1].t, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	if len(names3) != len(names)+1 || !slices.Equal(names, names2) {
		t.Errorf("data-dependent, a new level: columns %v, neighbour's %v: want one more", names, names3)
	}
}

// TestPublicScaling_RowBound: with the implied bound no row is clipped
// and every row lies in the unit ball; a declared bound below it scales
// the longer rows down to it (and counts them), and L2Bound bounds the
// leading columns of every row.
func TestPublicScaling_RowBound(t *testing.T) {
	t.Parallel()
	tb := rawTable(50, "x", "y", "z")
	for _, tt := range []struct {
		name        string
		bound       float64
		wantClipped int
	}{
		{"implied", 0, 0},
		// Rows (a/10, indicator, b/4, 1): ‖x‖² = 2 + (a/10)² + (b/4)²,
		// which exceeds 1.5² = 2.25 when (a/10)² + (b/4)² > 0.25. Counted
		// in the loop below from the raw values.
		{"declared 1.5", 1.5, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := Preprocessing{Scaling: ScalingPublic, Domain: testDomain(), Intercept: true, RowNormBound: tt.bound}
			x, _, _, info, err := p.encode(tb, TaskClassification)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.wantClipped
			if want < 0 {
				want = 0
				for i := range 50 {
					a, b := tb.Numeric[0].Values[i]/10, tb.Numeric[1].Values[i]/4
					if a*a+b*b > 0.25 {
						want++
					}
				}
			}
			if info.ClippedRows != want || info.ClippedRecords != want {
				t.Errorf("%d rows (%d records) clipped, want %d", info.ClippedRows, info.ClippedRecords, want)
			}
			for i := range 50 {
				if r := l2(x.RawRowView(i)); r > 1+normTol {
					t.Errorf("row %d: norm %v > 1", i, r)
				}
			}
			// The first two columns (a and c=x): |a| ≤ 1/R, one indicator ≤ 1/R.
			if got, want := info.L2Bound(2), math.Sqrt(2)/info.RowBound; math.Abs(got-want) > 1e-15 {
				t.Errorf("L2Bound(2) = %v, want %v", got, want)
			}
			// c=x and c=y are indicators of one attribute: one of them counts.
			if got, want := info.L2Bound(3), math.Sqrt(2)/info.RowBound; math.Abs(got-want) > 1e-15 {
				t.Errorf("L2Bound(3) = %v, want %v (one indicator per attribute)", got, want)
			}
		})
	}
}

func TestPublicScaling_Refusals(t *testing.T) {
	t.Parallel()
	tb := rawTable(5, "x", "y")
	tests := []struct {
		name    string
		p       Preprocessing
		wantErr string
	}{
		{"zscore", Preprocessing{Scaling: ScalingPublic, ColumnScale: ScaleZScore, Domain: testDomain()},
			`preprocess.column_scale: "zscore" takes a statistic of the data; with public scaling use "maxabs" or "none"`},
		{"target scale", Preprocessing{Scaling: ScalingPublic, TargetScale: TargetScaleMaxAbs, Domain: testDomain()},
			`preprocess.target_scale: "maxabs" divides by the data's max |y|; with public scaling use "none"`},
		{"domain without public scaling", Preprocessing{Domain: testDomain()},
			"preprocess.domain: a declared domain is used only with public scaling"},
		{"row bound without public scaling", Preprocessing{RowNormBound: 2},
			`preprocess.row_norm_bound: only with public scaling and row_norm "l2-max" or "l1-max"`},
		{"row bound with l2-clip", Preprocessing{Scaling: ScalingPublic, RowNorm: RowL2Clip, RowNormBound: 2, Domain: testDomain()},
			`preprocess.row_norm_bound: only with public scaling and row_norm "l2-max" or "l1-max"`},
		{"empty range", Preprocessing{Scaling: ScalingPublic, Domain: Domain{Ranges: map[string]Range{"a": {3, 3}}}},
			"preprocess: bounds.a: want finite lo < hi (got [3, 3])"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.p.Validate()
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
	// Attributes without a declared domain, and domains of the wrong kind.
	p := Preprocessing{Scaling: ScalingPublic, Domain: Domain{Ranges: map[string]Range{"c": {0, 1}, "q": {0, 1}}, Levels: map[string][]string{"a": {"1"}}}}
	_, _, _, _, err := p.encode(tb, TaskClassification)
	for _, want := range []string{
		`preprocess.bounds.c: "c" is categorical: declare its levels, not a range`,
		`preprocess.bounds.q: unknown attribute "q"`,
		`preprocess.levels.a: "a" is numeric: declare a range, not levels`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("encode: %v, want it to contain %q", err, want)
		}
	}
	p.Domain = Domain{Ranges: map[string]Range{"a": {0, 1}}}
	_, _, _, _, err = p.encode(tb, TaskClassification)
	if want := "none for levels.c, bounds.b"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("encode: %v, want it to name the attributes without a domain (%q)", err, want)
	}
	// Keeping only the declared attributes is enough.
	p.Columns = []string{"a"}
	if _, _, _, _, err = p.encode(tb, TaskClassification); err != nil {
		t.Errorf("encode with data.columns = [a]: %v", err)
	}
}

// TestPublicScaling_Log1p: the declared range maps through log1p, and a
// range reaching −1 is refused.
func TestPublicScaling_Log1p(t *testing.T) {
	t.Parallel()
	tb := rawTable(12, "x")
	p := Preprocessing{Scaling: ScalingPublic, Domain: testDomain(), Columns: []string{"a"}, Log1p: []string{"a"}, RowNorm: RowNone}
	x, _, names, _, err := p.encode(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	if names[0] != "log1p(a)" {
		t.Errorf("names %v", names)
	}
	// a = 10 (record 10) is the top of the range: log1p(10)/log1p(10) = 1.
	if got := x.At(10, 0); got != 1 {
		t.Errorf("log1p(10)/log1p(10) = %v, want 1", got)
	}
	p.Domain.Ranges["a"] = Range{-1, 10}
	if _, _, _, _, err := p.encode(tb, TaskClassification); err == nil || !strings.Contains(err.Error(), "reaches −1") {
		t.Errorf("encode with a range reaching −1: %v", err)
	}
}

// TestBuiltinDomains: every attribute of adult, magic and bank has a
// documented range (numeric) or level list (categorical), every level
// of the stand-in's schema (the levels of the real files) is declared,
// and every numeric attribute's declared range has a source.
func TestBuiltinDomains(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"adult", "magic", "bank"} {
		e, ok := Lookup(name)
		if !ok || e.Domain == nil {
			t.Fatalf("%s: no documented domain", name)
		}
		if err := e.Domain.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, a := range e.Numeric {
			if _, ok := e.Domain.Ranges[a]; !ok {
				t.Errorf("%s: numeric %s has no range", name, a)
			}
		}
		for _, a := range e.Categorical {
			if _, ok := e.Domain.Levels[a]; !ok {
				t.Errorf("%s: categorical %s has no levels", name, a)
			}
		}
		for _, a := range e.Attributes {
			if e.Domain.Sources[a] == "" {
				t.Errorf("%s: %s has no source", name, a)
			}
		}
		if got := len(e.Domain.Ranges) + len(e.Domain.Levels); got != len(e.Attributes) {
			t.Errorf("%s: %d declared attributes, the dataset has %d", name, got, len(e.Attributes))
		}
		be, _ := registry.entry(name)
		for _, c := range be.synth.categorical {
			for _, l := range c.levels {
				if !slices.Contains(e.Domain.Levels[c.name], l) {
					t.Errorf("%s: level %s=%q of the real file is not in the documented list", name, c.name, l)
				}
			}
		}
	}
	for _, name := range []string{"kddcup99", "twitter", "ipums-us", "ipums-br"} {
		if e, _ := Lookup(name); e.Domain != nil {
			t.Errorf("%s: a domain, but its documentation gives none", name)
		}
	}
}

// TestRealData_PublicScaling loads adult, magic and bank with public
// scaling from $DPREPRO_DATA and checks that every level is declared,
// that clipping stays rare (under 1% of the records: the caps are meant
// to bind only in the tails) and that every row lies in the unit ball.
func TestRealData_PublicScaling(t *testing.T) {
	dir := os.Getenv("DPREPRO_DATA")
	if dir == "" {
		t.Skip("DPREPRO_DATA not set")
	}
	for _, name := range []string{"adult", "magic", "bank"} {
		e, _ := Lookup(name)
		ds, err := Load(name, Options{DataDir: dir, Named: true, Synthetic: SyntheticNever,
			Preprocess: Preprocessing{Scaling: ScalingPublic, Domain: *e.Domain, Intercept: true}})
		if err != nil {
			t.Fatal(err)
		}
		p := ds.Public
		t.Logf("%s: %s", name, p.Summary())
		if p.OutOfDomain != 0 {
			t.Errorf("%s: %d levels outside the documented lists", name, p.OutOfDomain)
		}
		if p.ClippedRecords*100 > p.Records {
			t.Errorf("%s: %d of %d records clipped", name, p.ClippedRecords, p.Records)
		}
		n, _ := ds.X.Dims()
		for i := range n {
			if r := l2(ds.X.RawRowView(i)); r > 1+normTol {
				t.Fatalf("%s: row %d norm %v", name, i, r)
			}
		}
	}
}
