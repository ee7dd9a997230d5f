package plots

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/dprepro/dprepro/results"
)

var demoDir = flag.String("plots.demo", "", "if set, TestRender_Demo writes an example figure into this directory")

// fakeRows returns rows for datasets × methods × xs with a smooth,
// method-dependent mean and an asymmetric interval [mean−0.02, mean+0.03].
// Datasets whose name ends in "-synth" are marked synthetic. The values are
// arbitrary fixtures, not statistics.
func fakeRows(metric string, datasets, methods []string, xs []float64) []results.SummaryRow {
	var rows []results.SummaryRow
	for di, d := range datasets {
		src := "real"
		if strings.HasSuffix(d, "-synth") {
			src = "synthetic"
		}
		for mi, m := range methods {
			for _, x := range xs {
				mean := 0.55 + 0.4*(1-math.Exp(-x*float64(mi+1)/2)) - 0.03*float64(di)
				rows = append(rows, results.SummaryRow{
					Experiment: "fig-test", Dataset: d, DataSource: src, Method: m,
					XName: "epsilon", X: x, Metric: metric,
					Mean: mean, SD: 0.05, CILow: mean - 0.02, CIHigh: mean + 0.03, N: 50,
				})
			}
		}
	}
	return rows
}

func TestBuild_SeriesMatchRows(t *testing.T) {
	t.Parallel()
	methods := []string{"m0", "m1", "m2"}
	xs := []float64{0.5, 1, 2}
	rows := fakeRows("auc", []string{"adult", "kdd-synth"}, methods, xs)
	rows = append(rows, fakeRows("error", []string{"other"}, methods, xs)...) // other metric: ignored
	spec := FigureSpec{Name: "t", Metric: "auc"}

	panels, names, err := Build(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"adult", "kdd-synth"}; !slices.Equal(names, want) {
		t.Fatalf("datasets = %v, want %v", names, want)
	}
	if len(panels) != 2 {
		t.Fatalf("got %d panels, want 2", len(panels))
	}

	fig, err := build(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	for pi, pd := range fig.data.Panels {
		if len(pd.Series) != len(methods) {
			t.Fatalf("panel %s: %d series, want %d", pd.Dataset, len(pd.Series), len(methods))
		}
		for si, s := range pd.Series {
			if s.Method != methods[si] || s.Index != si {
				t.Errorf("panel %s series %d: method %q index %d", pd.Dataset, si, s.Method, s.Index)
			}
			sp := fig.parts[pi][si]
			if sp.Line.XYs.Len() != len(xs) || sp.Bars == nil || len(sp.Bars.XYs) != len(xs) {
				t.Fatalf("panel %s %s: wrong number of plotted points", pd.Dataset, s.Method)
			}
			for i, x := range xs {
				r := findRow(t, rows, "auc", pd.Dataset, s.Method, x)
				if got := sp.Line.XYs[i]; got.X != x || got.Y != r.Mean {
					t.Errorf("%s %s: line point %d = %v, want (%v, %v)", pd.Dataset, s.Method, i, got, x, r.Mean)
				}
				if got := sp.Points.XYs[i]; got != sp.Line.XYs[i] {
					t.Errorf("markers %v differ from line %v", got, sp.Line.XYs[i])
				}
				// The bar spans exactly [CILow, CIHigh] at the point's x.
				b, e := sp.Bars.XYs[i], sp.Bars.YErrors[i]
				lo, hi := b.Y-math.Abs(e.Low), b.Y+math.Abs(e.High)
				if b.X != x || !closeTo(lo, r.CILow) || !closeTo(hi, r.CIHigh) {
					t.Errorf("%s %s: bar %d at x=%v spans [%v, %v], want x=%v [%v, %v]",
						pd.Dataset, s.Method, i, b.X, lo, hi, x, r.CILow, r.CIHigh)
				}
			}
		}
	}
	if got := panels[0].Title.Text; got != "adult" {
		t.Errorf("real panel title = %q", got)
	}
	if got := panels[1].Title.Text; !strings.Contains(got, "kdd-synth") || !strings.Contains(got, SyntheticLabel) {
		t.Errorf("synthetic panel title = %q, want dataset and %q", got, SyntheticLabel)
	}
	if got := panels[0].X.Label.Text; got != "epsilon" {
		t.Errorf("x label = %q, want the rows' x name", got)
	}
	if got := panels[0].Y.Label.Text; got != "auc" {
		t.Errorf("y label = %q, want the metric", got)
	}
}

func findRow(t *testing.T, rows []results.SummaryRow, metric, dataset, method string, x float64) results.SummaryRow {
	t.Helper()
	for _, r := range rows {
		if r.Metric == metric && r.Dataset == dataset && r.Method == method && r.X == x {
			return r
		}
	}
	t.Fatalf("no row %s/%s/%s/%v", metric, dataset, method, x)
	return results.SummaryRow{}
}

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestBuild_SyntheticIfAnyRow(t *testing.T) {
	t.Parallel()
	rows := fakeRows("auc", []string{"adult"}, []string{"a", "b"}, []float64{1, 2})
	rows[3].DataSource = "synthetic" // one row is enough
	panels, _, err := Build(FigureSpec{Name: "t", Metric: "auc"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(panels[0].Title.Text, SyntheticLabel) {
		t.Errorf("title %q lacks %q", panels[0].Title.Text, SyntheticLabel)
	}
}

func TestLayout_JitterDeterministicAndSymmetric(t *testing.T) {
	t.Parallel()
	methods := []string{"a", "b", "c", "d", "e"}
	// Uneven spacing: the offsets scale with the smallest gap (1), the same
	// at every x.
	xs := []float64{1, 2, 4, 10}
	gaps := []float64{1, 1, 1, 1}
	rows := fakeRows("auc", []string{"d1"}, methods, xs)
	const jitter = 0.15
	spec := FigureSpec{Name: "t", Metric: "auc", Jitter: jitter}

	f1, err := layout(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	f2, _ := layout(spec, rows)
	if !equalLayout(f1, f2) {
		t.Errorf("layout differs between calls")
	}

	for xi, x := range xs {
		var offs []float64
		for _, s := range f1.Panels[0].Series {
			offs = append(offs, s.Points[xi].XPlot-x)
		}
		// Slots −1, −½, 0, ½, 1 times jitter·gap.
		for k, off := range offs {
			want := jitter * gaps[xi] * (float64(k)/2 - 1)
			if !closeTo(off, want) {
				t.Errorf("x=%v method %d: offset %v, want %v", x, k, off, want)
			}
		}
		var sum float64
		for _, o := range offs {
			sum += o
		}
		if math.Abs(sum) > 1e-12 {
			t.Errorf("x=%v: offsets %v not symmetric around x (sum %v)", x, offs, sum)
		}
	}

	// A method keeps its slot in a panel where all its cells failed (NaN
	// means): the slots are of the methods with rows, finite or not.
	failed := slices.Clone(rows)
	for i := range failed {
		if failed[i].Method == "a" {
			failed[i].Mean = math.NaN()
		}
	}
	f3, err := layout(spec, failed)
	if err != nil {
		t.Fatal(err)
	}
	for si, s := range f3.Panels[0].Series {
		if want := f1.Panels[0].Series[si+1]; s.Method != want.Method || s.Points[0].XPlot != want.Points[0].XPlot {
			t.Errorf("series %s moved when method a failed: %v vs %v", s.Method, s.Points[0].XPlot, want.Points[0].XPlot)
		}
	}
	// A panel showing some of the figure's methods spreads them
	// symmetrically around x (the LR panel of a figure of LR and SVM
	// methods), so that every x stays inside the axis.
	spec.Methods = append(slices.Clone(methods), "svm1", "svm2")
	f4, err := layout(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, s := range f4.Panels[0].Series {
		sum += s.Points[0].XPlot - s.Points[0].X
	}
	if math.Abs(sum) > 1e-12 {
		t.Errorf("offsets of a panel with 5 of 7 methods sum to %v, want 0", sum)
	}
}

func equalLayout(a, b figureData) bool {
	if len(a.Panels) != len(b.Panels) {
		return false
	}
	for i := range a.Panels {
		sa, sb := a.Panels[i].Series, b.Panels[i].Series
		if len(sa) != len(sb) {
			return false
		}
		for j := range sa {
			if !slices.Equal(sa[j].Points, sb[j].Points) {
				return false
			}
		}
	}
	return true
}

func TestLayout_LogXJitterIsMultiplicative(t *testing.T) {
	t.Parallel()
	rows := fakeRows("auc", []string{"d"}, []string{"a", "b"}, []float64{0.1, 1, 10})
	f, err := layout(FigureSpec{Name: "t", Metric: "auc", Jitter: 0.2, LogX: true}, rows)
	if err != nil {
		t.Fatal(err)
	}
	// Decade spacing over two decades: 0.2 of the gap would be ±0.2
	// decades; the cap MaxJitterSpan·2 decades = 0.06 decades wins, i.e.
	// x·10^(∓0.06).
	for _, s := range f.Panels[0].Series {
		sign := jitterOffset(s.Index, 2)
		for _, p := range s.Points {
			if want := p.X * math.Pow(10, sign*MaxJitterSpan*2); !closeTo(p.XPlot, want) {
				t.Errorf("%s at %v: XPlot %v, want %v", s.Method, p.X, p.XPlot, want)
			}
		}
	}
}

func TestLayout_SkipsAndOrders(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	row := func(method string, x, mean, lo, hi float64) results.SummaryRow {
		return results.SummaryRow{Dataset: "d", Method: method, XName: "eps", X: x, Metric: "m", Mean: mean, CILow: lo, CIHigh: hi}
	}
	rows := []results.SummaryRow{
		row("b", 2, 0.5, 0.4, 0.6),
		row("b", 1, 0.3, nan, nan),          // no CI: point without bar
		row("b", 3, nan, 0.1, 0.2),          // NaN mean: skipped
		row("b", 0, 0.2, -0.1, 0.3),         // x = 0: skipped on log x
		row("a", 1, 0.4, 0.3, 0.5),          // first appearance after b
		row("c", 1, 0.4, 0.3, 0.5),          // not selected below
		row("a", 2, 0.7, math.Inf(-1), 0.8), // infinite CI: no bar
	}
	tests := []struct {
		name      string
		spec      FigureSpec
		methods   []string
		wantX     map[string][]float64
		wantHasCI map[string][]bool
	}{
		{
			name:      "first appearance",
			spec:      FigureSpec{Metric: "m"},
			methods:   []string{"b", "a", "c"},
			wantX:     map[string][]float64{"b": {0, 1, 2}, "a": {1, 2}, "c": {1}},
			wantHasCI: map[string][]bool{"b": {true, false, true}, "a": {true, false}, "c": {true}},
		},
		{
			name:      "selected methods, log x",
			spec:      FigureSpec{Metric: "m", Methods: []string{"a", "b"}, LogX: true},
			methods:   []string{"a", "b"},
			wantX:     map[string][]float64{"a": {1, 2}, "b": {1, 2}},
			wantHasCI: map[string][]bool{"a": {true, false}, "b": {false, true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := layout(tt.spec, rows)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.Methods, tt.methods) {
				t.Errorf("methods = %v, want %v", f.Methods, tt.methods)
			}
			for _, s := range f.Panels[0].Series {
				var xs []float64
				var has []bool
				for _, p := range s.Points {
					xs = append(xs, p.X)
					has = append(has, p.HasCI)
				}
				if !slices.Equal(xs, tt.wantX[s.Method]) || !slices.Equal(has, tt.wantHasCI[s.Method]) {
					t.Errorf("%s: x %v hasCI %v, want %v %v", s.Method, xs, has, tt.wantX[s.Method], tt.wantHasCI[s.Method])
				}
			}
		})
	}
}

// TestLayout_LogYClampsLowerCI: on a log y axis an interval whose lower
// end is ≤ 0 runs down to the panel's floor, a factor √10 below the
// smallest positive value the panel shows, and a mean ≤ 0 is drawn at
// that floor, not left out.
func TestLayout_LogYClampsLowerCI(t *testing.T) {
	t.Parallel()
	rows := []results.SummaryRow{
		{Dataset: "d", Method: "a", X: 1, Metric: "m", Mean: 0.05, CILow: -0.01, CIHigh: 0.1},
		{Dataset: "d", Method: "a", X: 2, Metric: "m", Mean: 0.2, CILow: 0.02, CIHigh: 0.3},
		{Dataset: "d", Method: "a", X: 3, Metric: "m", Mean: -1, CILow: -2, CIHigh: 0}, // ≤ 0: at the floor
	}
	f, err := layout(FigureSpec{Metric: "m", LogY: true}, rows)
	if err != nil {
		t.Fatal(err)
	}
	pd := f.Panels[0]
	pts := pd.Series[0].Points
	if len(pts) != 3 || pts[0].Floor || pts[1].Floor || !pts[2].Floor || pts[2].Mean != -1 {
		t.Fatalf("points %+v: want 3, the third at the floor with its mean kept", pts)
	}
	// The smallest positive value in the panel is the CI low 0.02.
	floor := 0.02 / math.Sqrt(10)
	if !closeTo(pd.Floor, floor) {
		t.Errorf("floor %v, want %v", pd.Floor, floor)
	}
	if !pts[0].HasCI || pts[0].CILow != pd.Floor || pts[0].CIHigh != 0.1 || !pts[0].CIFloor {
		t.Errorf("clamped bar = %+v, want [floor, 0.1]", pts[0])
	}
	if pts[2].HasCI {
		t.Errorf("the floor point's interval [-2, 0] lies below the floor: no bar, got %+v", pts[2])
	}
	// The panel must draw without panicking on the log axes.
	if _, _, err := Build(FigureSpec{Metric: "m", LogY: true}, rows); err != nil {
		t.Fatal(err)
	}
}

// logRows are the rows of TestBuild_NothingSilentOnLogAxes: a tail-like
// metric of two methods on log axes (values are fixtures, not
// statistics).
func logRows() []results.SummaryRow {
	row := func(panel, method string, x, mean float64) results.SummaryRow {
		return results.SummaryRow{Dataset: panel, Method: method, XName: "epsilon", X: x, Metric: "tail",
			Mean: mean, CILow: mean / 2, CIHigh: mean * 2, N: 5}
	}
	return []results.SummaryRow{
		// Panel p: method a has 0 at x = 0.25 between positive values (the
		// line must break there, not run across it); method b is 0
		// everywhere; method a's row at x = 2 has no finite value.
		row("p", "a", 0.1, 1e-3), row("p", "a", 0.25, 0), row("p", "a", 0.5, 2e-3), row("p", "a", 1, 3e-3),
		row("p", "a", 2, math.NaN()), row("p", "a", 5, 4e-3),
		row("p", "b", 0.1, 0), row("p", "b", 0.25, 0), row("p", "b", 0.5, 0), row("p", "b", 1, 0), row("p", "b", 5, 0),
		// The reference method's value in panel p: 0, no place on the axis.
		row("p", "ref", 1, 0),
		// Panel q: every value 0, nothing to set a floor by.
		row("q", "a", 0.1, 0), row("q", "a", 1, 0),
		// Panel r: x ≤ 0 on the log x axis; a negative mean.
		// Its interval at x = 1 reaches below 0: drawn down to the floor.
		row("r", "a", 0, 0.5), {Dataset: "r", Method: "a", XName: "epsilon", X: 1, Metric: "tail", Mean: 0.4, CILow: -0.1, CIHigh: 0.8, N: 5},
		row("r", "a", 2, -0.1),
	}
}

// TestBuild_NothingSilentOnLogAxes: no row leaves a log-axis figure
// without a word. A mean ≤ 0 on a log y axis is drawn at the panel's
// floor (the series' marker over an arrow, ticked "0" on the axis with no
// other tick near it, one legend entry) and breaks the line; a row with
// no finite value, or x ≤ 0 on a log x axis, is not drawn and breaks the
// line; a panel with no positive value says so in its title; and the
// caption's note names every such row by panel, series and x, and a
// reference line left out.
func TestBuild_NothingSilentOnLogAxes(t *testing.T) {
	t.Parallel()
	spec := FigureSpec{Name: "tails", Metric: "tail", XLabel: "ε", LogX: true, LogY: true, Methods: []string{"a", "b"}, Reference: "ref",
		Caption: Caption{Profile: "quick", Note: "A kind's own note."}}
	fig, err := build(spec, logRows())
	if err != nil {
		t.Fatal(err)
	}
	p := fig.data.Panels[0]
	// √10 below the smallest positive value of the means and bars: the
	// interval [5e-4, 2e-3] of a's mean 1e-3.
	if want := 5e-4 / math.Sqrt(10); !closeTo(p.Floor, want) {
		t.Errorf("panel p: floor %v, want %v", p.Floor, want)
	}
	// a: the line breaks at the floor point (x = 0.25) and at the row with
	// no value (x = 2): pieces [0.1], [0.5, 1], [5].
	a := fig.parts[0][0]
	var pieces [][]float64
	for _, l := range a.Segments {
		var xs []float64
		for _, xy := range l.XYs {
			xs = append(xs, xy.X)
		}
		pieces = append(pieces, xs)
	}
	if want := [][]float64{{0.1}, {0.5, 1}, {5}}; fmt.Sprint(pieces) != fmt.Sprint(want) {
		t.Errorf("series a: line pieces %v, want %v", pieces, want)
	}
	if a.Floor == nil || len(a.Floor.XYs) != 1 || a.Floor.XYs[0].X != 0.25 || a.Floor.XYs[0].Y != p.Floor {
		t.Errorf("series a: floor markers %+v, want one at (0.25, %v)", a.Floor, p.Floor)
	}
	if _, ok := a.Floor.Shape.(floorGlyph); !ok {
		t.Errorf("floor marker %T, want floorGlyph", a.Floor.Shape)
	}
	// b: every point at the floor, no line, no marker at a value.
	b := fig.parts[0][1]
	if len(b.Segments) != 0 || len(b.Points.XYs) != 0 || b.Floor == nil || len(b.Floor.XYs) != 5 {
		t.Errorf("series b: %d line pieces, %d markers, floor %+v; want 0, 0 and 5 at the floor", len(b.Segments), len(b.Points.XYs), b.Floor)
	}
	// The floor's tick says 0, and no other tick is near it.
	ticks := floorTicks{Floor: p.Floor, Label: "0"}.Ticks(p.Floor/2, 1e-2)
	if ticks[0].Value != p.Floor || ticks[0].Label != "0" {
		t.Errorf("first tick %+v, want 0 at the floor", ticks[0])
	}
	for _, tk := range ticks[1:] {
		if tk.Value < p.Floor*math.Pow(10, 0.25) {
			t.Errorf("tick %+v inside the floor's band", tk)
		}
	}
	if got := fig.panels[0].Y.Tick.Marker; got != (floorTicks{Floor: p.Floor, Label: "0"}) {
		t.Errorf("panel p y ticker %#v", got)
	}
	if got := fig.panels[2].Y.Tick.Marker; got != (floorTicks{Floor: fig.data.Panels[2].Floor, Label: "≤ 0"}) {
		t.Errorf("panel r (a negative mean) y ticker %#v", got)
	}
	// Panel q: nothing positive; its title says so.
	if got := fig.panels[1].Title.Text; !strings.Contains(got, "(no positive values: none on a log axis)") {
		t.Errorf("panel q title %q", got)
	}
	// One legend entry for the floor's marker.
	var legend []string
	for _, e := range fig.legend {
		legend = append(legend, e.name)
	}
	if !slices.Contains(legend, "≤ 0: not on a log scale, drawn at the floor") {
		t.Errorf("legend %q lacks the floor's entry", legend)
	}
	// The note names every row not drawn at its value, after the kind's.
	for _, want := range []string{
		"A kind's own note.\n",
		"Drawn at the floor, as 0 and below have no place on a log axis: p: a (ε = 0.25), b (every ε); r: a (ε = 2).",
		"Not drawn, as 0 and below have no place on a log axis (the panel has no positive value to set a floor by): q: a (ε = 0.1, 1).",
		"Not drawn, with no finite value (the line is broken there): p: a (ε = 2).",
		"Not drawn, as x ≤ 0 has no place on a log x axis (the line is broken there): r: a (ε = 0).",
		"Error bars whose lower end is 0 or below run down to the floor.",
		"Not drawn in p: the line of ref (reference), whose value is not finite or has no place on a log axis.",
	} {
		if !strings.Contains(fig.note, want) {
			t.Errorf("note\n%s\nlacks\n%s", fig.note, want)
		}
	}
	// Render draws it: PNG and SVG, the note in the caption.
	dir := t.TempDir()
	if err := Render(dir, spec, logRows()); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "tails.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"drawn at the floor", "Not drawn, with no finite value"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("tails.svg lacks %q", want)
		}
	}
}

// TestBuild_NoteOnlyWhenNeeded: a figure whose rows are all drawn at
// their value has no note of its own, no floor and no floor entry.
func TestBuild_NoteOnlyWhenNeeded(t *testing.T) {
	t.Parallel()
	rows := fakeRows("auc", []string{"d"}, []string{"a", "b"}, []float64{0.5, 1, 2})
	fig, err := build(FigureSpec{Name: "f", Metric: "auc", LogX: true, LogY: true}, rows)
	if err != nil {
		t.Fatal(err)
	}
	if fig.note != "" || !math.IsNaN(fig.data.Panels[0].Floor) || len(fig.data.Panels[0].Off) != 0 {
		t.Errorf("note %q, floor %v, off %v: want none", fig.note, fig.data.Panels[0].Floor, fig.data.Panels[0].Off)
	}
	for _, e := range fig.legend {
		if strings.Contains(e.name, "floor") {
			t.Errorf("legend entry %q", e.name)
		}
	}
}

func TestBuild_Errors(t *testing.T) {
	t.Parallel()
	rows := fakeRows("auc", []string{"d"}, []string{"a"}, []float64{1, 2})
	nan := math.NaN()
	tests := []struct {
		name    string
		spec    FigureSpec
		rows    []results.SummaryRow
		wantErr string
	}{
		{"no rows for metric", FigureSpec{Name: "f", Metric: "brier"}, rows, `no rows with metric "brier"`},
		{"no rows for methods", FigureSpec{Name: "f", Metric: "auc", Methods: []string{"zz"}}, rows, `for methods ["zz"]`},
		{"no metric", FigureSpec{Name: "f"}, rows, "metric: required"},
		{"jitter too big", FigureSpec{Name: "f", Metric: "auc", Jitter: 0.5}, rows, "jitter"},
		{"negative width", FigureSpec{Name: "f", Metric: "auc", Width: -1}, rows, "width"},
		{"NaN ref line", FigureSpec{Name: "f", Metric: "auc", RefLines: []RefLine{{Y: nan}}}, rows, "ref_lines[0]"},
		{"duplicate panel", FigureSpec{Name: "f", Metric: "auc", Panels: []string{"d", "d"}}, rows, "panels[1]"},
		{"style without shape", FigureSpec{Name: "f", Metric: "auc", Styles: map[string]Style{"a": {Color: PaletteColor(0)}}}, rows, `styles["a"]`},
		{"label of no metric", FigureSpec{Name: "f", Metrics: []string{"auc"}, MetricLabels: map[string]string{"x": "y"}}, rows, "metric labels"},
		{"bad ci level", FigureSpec{Name: "f", Metric: "auc", Caption: Caption{CILevel: 95}}, rows, "ci level"},
		{"duplicate method", FigureSpec{Name: "f", Metric: "auc", Methods: []string{"a", "a"}}, rows, "methods[1]"},
		{"duplicate cell", FigureSpec{Name: "f", Metric: "auc"}, append(slices.Clone(rows), rows[0]), "duplicate row"},
		{"bad error bars", FigureSpec{Name: "f", Metric: "auc", ErrorBars: "se"}, rows, "error bars"},
		{"negative columns", FigureSpec{Name: "f", Metric: "auc", Columns: -2}, rows, "columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Build(tt.spec, tt.rows)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestBuild_RefLinesAndLogAxes(t *testing.T) {
	t.Parallel()
	ref := 0.5
	rows := fakeRows("auc", []string{"d"}, []string{"a", "b"}, []float64{0.1, 1, 10})
	spec := FigureSpec{Name: "f", Metric: "auc", LogX: true, RefLines: []RefLine{{Y: ref}}, DiagonalRef: true, Jitter: 0.1}
	fig, err := build(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	p := fig.panels[0]
	if _, ok := p.X.Scale.(plot.LogScale); !ok {
		t.Errorf("x scale = %T, want plot.LogScale", p.X.Scale)
	}
	if _, ok := p.Y.Scale.(plot.LogScale); ok {
		t.Errorf("y scale is log, want linear")
	}
	// The reference line extends the y range to include 0.5 even though all
	// means are higher.
	if p.Y.Min > ref {
		t.Errorf("y min %v excludes the reference line %v", p.Y.Min, ref)
	}
	var names []string
	for _, e := range fig.legend {
		names = append(names, e.name)
	}
	if want := []string{"a", "b", "reference (y = 0.5)", "y = x"}; !slices.Equal(names, want) {
		t.Errorf("legend = %v, want %v", names, want)
	}
}

func TestLogTicks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		min, max   float64
		wantLabels []string
	}{
		{0.01, 10, []string{"0.01", "0.1", "1", "10"}},
		// Fewer than four powers of ten: 1-2-5 multiples are labelled too.
		{0.01, 1, []string{"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1"}},
		{0.05, 2, []string{"0.05", "0.1", "0.2", "0.5", "1", "2"}},
		{0.5, 3, []string{"0.5", "1", "2"}},
		// Under a decade and fewer than three 1-2-5 labels: all multiples.
		{0.2, 0.8, []string{"0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8"}},
		{0.31, 0.45, []string{"0.4"}},
		{0.25, 0.45, []string{"0.3", "0.4"}},
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range (logTicks{}).Ticks(tt.min, tt.max) {
			if tk.Label != "" && tk.Value >= tt.min && tk.Value <= tt.max {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, tt.wantLabels) {
			t.Errorf("logTicks(%v, %v) labels %v, want %v", tt.min, tt.max, got, tt.wantLabels)
		}
	}
}

func TestCIBars(t *testing.T) {
	t.Parallel()
	// An interval that does not contain its mean is still drawn as given.
	b := ciBars{{X: 1, Low: 0.6, High: 0.9}}
	eb, err := plotter.NewYErrorBars(b)
	if err != nil {
		t.Fatal(err)
	}
	_, _, ymin, ymax := eb.DataRange()
	if ymin != 0.6 || !closeTo(ymax, 0.9) {
		t.Errorf("bar range [%v, %v], want [0.6, 0.9]", ymin, ymax)
	}
}

func TestRender_Files(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "figs") // Render creates it
	rows := fakeRows("auc", []string{"adult", "kdd-synth"}, []string{"a", "b", "c"}, []float64{0.1, 0.5, 1, 2})
	ref := 0.5
	spec := FigureSpec{Name: "fig-test", Title: "Figure T: AUC", Metric: "auc", Jitter: 0.15, LogX: true, RefLines: []RefLine{{Y: ref}}, Caption: Caption{Profile: "quick"}}
	if err := Render(dir, spec, rows); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg"} {
		b, err := os.ReadFile(filepath.Join(dir, spec.Name+ext))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			t.Fatalf("%s is empty", ext)
		}
		switch ext {
		case ".png":
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("decode png: %v", err)
			}
			// Two 5-inch panels plus legend at PNGDPI dots per inch.
			if w := img.Bounds().Dx(); w < 10*PNGDPI {
				t.Errorf("png width %d px, want ≥ %d", w, 10*PNGDPI)
			}
		case ".svg":
			if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("SYNTHETIC")) {
				t.Errorf("svg lacks <svg> or the synthetic label")
			}
			// Well-formed XML.
			dec := xml.NewDecoder(bytes.NewReader(b))
			for {
				_, err := dec.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("svg is not well-formed XML: %v", err)
				}
			}
		}
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("dir holds %v, want only the two figures", names)
	}
}

func TestRender_Errors(t *testing.T) {
	t.Parallel()
	rows := fakeRows("auc", []string{"d"}, []string{"a"}, []float64{1})
	dir := t.TempDir()
	tests := []struct {
		name    string
		spec    FigureSpec
		wantErr string
	}{
		{"empty name", FigureSpec{Metric: "auc"}, "name: required"},
		{"path name", FigureSpec{Name: "../x", Metric: "auc"}, "plain file name"},
		{"no profile", FigureSpec{Name: "x", Metric: "auc"}, "caption profile: required"},
		{"no metric rows", FigureSpec{Name: "x", Metric: "nope", Caption: Caption{Profile: "paper"}}, `"nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Render(dir, tt.spec, rows)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestRender_Demo writes a 2-dataset × 5-method × 6-x example figure for
// visual inspection: go test ./plots -run Demo -plots.demo=/tmp/plots-demo
func TestRender_Demo(t *testing.T) {
	if *demoDir == "" {
		t.Skip("set -plots.demo=DIR to write the demo figure")
	}
	methods := []string{"non-private", "output perturbation", "objective perturbation", "private CV", "random baseline"}
	xs := []float64{0.05, 0.1, 0.2, 0.5, 1, 2}
	rows := fakeRows("auc", []string{"adult", "kddcup99-synth"}, methods, xs)
	ref := 0.5
	spec := FigureSpec{
		Name: "demo-auc", Title: "Figure 1a: AUC vs privacy level (demo rows)",
		Metric: "auc", XLabel: "privacy level ε", YLabel: "AUC",
		LogX: true, Jitter: 0.15, RefLines: []RefLine{{Y: ref, Label: "random classifier"}}, Caption: Caption{Profile: "quick", CILevel: 0.95},
	}
	if err := Render(*demoDir, spec, rows); err != nil {
		t.Fatal(err)
	}

	// Log–log with a y = x reference, a point without CI and a failed cell.
	var rows2 []results.SummaryRow
	for _, r := range fakeRows("eps_ratio", []string{"credit"}, methods[:3], xs) {
		r.Mean = r.X * (0.6 + 0.2*float64(len(rows2)%3))
		r.CILow, r.CIHigh = r.Mean*0.7, r.Mean*1.3
		rows2 = append(rows2, r)
	}
	rows2[2].CILow, rows2[2].CIHigh = math.NaN(), math.NaN()
	rows2[7].Mean = math.NaN()
	spec2 := FigureSpec{
		Name: "demo-loglog", Title: "Ex-post ε vs requested ε (demo rows)", Metric: "eps_ratio",
		XLabel: "requested ε", YLabel: "ex-post ε", LogX: true, LogY: true, DiagonalRef: true, Jitter: 0.15,
		Caption: Caption{Profile: "paper", CILevel: 0.95},
	}
	if err := Render(*demoDir, spec2, rows2); err != nil {
		t.Fatal(err)
	}
}

// Degenerate panels must render on log axes without panicking: a dataset
// whose only row has a NaN mean (empty panel) and a single point.
func TestRender_DegeneratePanels(t *testing.T) {
	t.Parallel()
	ref := 0.5
	rows := []results.SummaryRow{
		{Dataset: "empty", Method: "a", XName: "eps", X: 1, Metric: "m", Mean: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN()},
		{Dataset: "one", Method: "a", XName: "eps", X: 1, Metric: "m", Mean: 0.7, CILow: math.NaN(), CIHigh: math.NaN()},
	}
	spec := FigureSpec{Name: "degenerate", Title: "a rather long title for a figure that is only two small panels wide",
		Metric: "m", LogX: true, LogY: true, RefLines: []RefLine{{Y: ref}}, DiagonalRef: true, Jitter: 0.2, Width: 2, Height: 2,
		Caption: Caption{Profile: "quick"}}
	if err := Render(t.TempDir(), spec, rows); err != nil {
		t.Fatal(err)
	}
	panels, _, err := Build(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(panels[0].Title.Text, "no finite values") {
		t.Errorf("empty panel title = %q", panels[0].Title.Text)
	}
}

// TestLayout_SeveralMetrics checks the (method, metric) series of a
// several-metric figure: method-major order, labels, values from the right
// metric, and that Methods still selects.
func TestLayout_SeveralMetrics(t *testing.T) {
	t.Parallel()
	rows := append(fakeRows("test_eps", []string{"d"}, []string{"nr", "dbl", "theory"}, []float64{1, 2}),
		fakeRows("hyp_eps", []string{"d"}, []string{"nr", "dbl", "theory"}, []float64{1, 2})...)
	for i := range rows {
		if rows[i].Metric == "hyp_eps" {
			rows[i].Mean += 10 // distinguishable
		}
	}
	f, err := layout(FigureSpec{Metrics: []string{"test_eps", "hyp_eps"}, Methods: []string{"nr", "dbl"}}, rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nr: test_eps", "nr: hyp_eps", "dbl: test_eps", "dbl: hyp_eps"}
	if !slices.Equal(f.Methods, want) {
		t.Fatalf("series = %v, want %v", f.Methods, want)
	}
	if f.YLabel != "test_eps, hyp_eps" {
		t.Errorf("y label %q", f.YLabel)
	}
	for _, s := range f.Panels[0].Series {
		big := strings.HasSuffix(s.Method, "hyp_eps")
		for _, p := range s.Points {
			if (p.Mean > 5) != big {
				t.Errorf("%s: mean %v from the wrong metric", s.Method, p.Mean)
			}
		}
	}
	if _, err := layout(FigureSpec{Metric: "x", Metrics: []string{"y"}}, rows); err == nil {
		t.Error("metric and metrics both set: no error")
	}
	if _, err := layout(FigureSpec{Metrics: []string{"nope"}}, rows); err == nil {
		t.Error("unknown metrics: no error")
	}
}

// TestLayout_SDBarsAndPanelBy checks ErrorBars "sd" (Mean ± SD, no bar for
// a NaN SD) and PanelBy (panels keyed and titled by the function, each
// labelled with its own XName when XLabel is empty).
func TestLayout_SDBarsAndPanelBy(t *testing.T) {
	t.Parallel()
	rows := fakeRows("len", []string{"adult"}, []string{"dp-lr", "dp-svm"}, []float64{1, 2})
	more := fakeRows("len", []string{"kdd"}, []string{"dp-lr"}, []float64{50, 100})
	for i := range more {
		more[i].XName = "n"
	}
	more[0].SD = math.NaN()
	rows = append(rows, more...)
	model := func(r results.SummaryRow) []string { return []string{r.Dataset + ", " + r.Method[3:]} }
	fig, err := layout(FigureSpec{Name: "f", Metric: "len", ErrorBars: "sd", PanelBy: model}, rows)
	if err != nil {
		t.Fatal(err)
	}
	var titles, xnames []string
	for _, p := range fig.Panels {
		titles = append(titles, p.Dataset)
		xnames = append(xnames, p.XName)
		for _, s := range p.Series {
			for _, pt := range s.Points {
				if p.Dataset == "kdd, lr" && pt.X == 50 {
					if pt.HasCI {
						t.Errorf("NaN SD drawn as a bar")
					}
					continue
				}
				if !pt.HasCI || pt.CILow != pt.Mean-0.05 || pt.CIHigh != pt.Mean+0.05 {
					t.Errorf("panel %s x = %v: bar [%v, %v], want mean ± 0.05 around %v", p.Dataset, pt.X, pt.CILow, pt.CIHigh, pt.Mean)
				}
			}
		}
	}
	if want := []string{"adult, lr", "adult, svm", "kdd, lr"}; !slices.Equal(titles, want) {
		t.Errorf("panels %v, want %v", titles, want)
	}
	if want := []string{"epsilon", "epsilon", "n"}; !slices.Equal(xnames, want) {
		t.Errorf("panel x names %v, want %v", xnames, want)
	}
	f, err := build(FigureSpec{Name: "f", Metric: "len", PanelBy: model}, rows)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.panels[2].X.Label.Text; got != "n" {
		t.Errorf("third panel x label %q, want n", got)
	}
}

// TestRender_Columns checks that Columns wraps the panels into a grid.
func TestRender_Columns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rows := fakeRows("auc", []string{"a", "b", "c"}, []string{"m"}, []float64{1, 2})
	size := func(cols int) (int, int) {
		spec := FigureSpec{Name: fmt.Sprintf("grid%d", cols), Metric: "auc", Columns: cols, Caption: Caption{Profile: "quick"}}
		if err := Render(dir, spec, rows); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, spec.Name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return img.Bounds().Dx(), img.Bounds().Dy()
	}
	w1, h1 := size(0)
	w2, h2 := size(2)
	if !(w2 < w1 && h2 > 3*h1/2) {
		t.Errorf("2 columns: %d×%d px, one row: %d×%d px; want narrower and about twice as tall", w2, h2, w1, h1)
	}
}

// TestMethodStyles_Variants: labels "<method>/<variant>" get one color per
// method and one line pattern and marker per variant; other labels keep
// the color and marker of their index.
func TestMethodStyles_Variants(t *testing.T) {
	styles := func(labels []string, table map[string]Style) []Style {
		return methodStyles(labels, labels, make([]int, len(labels)), table)
	}
	paired := styles([]string{"alphaSplit/op", "alphaSplit/gd", "random/op", "random/gd"}, nil)
	if paired[0].Color != paired[1].Color || paired[2].Color != paired[3].Color || paired[0].Color == paired[2].Color {
		t.Errorf("colors do not follow the method: %v", paired)
	}
	if paired[0].Dashes != nil || paired[2].Dashes != nil || paired[1].Dashes == nil || len(paired[1].Dashes) != len(paired[3].Dashes) {
		t.Errorf("line patterns do not follow the variant: %v", paired)
	}
	if paired[0].Shape != paired[2].Shape || paired[0].Shape == paired[1].Shape {
		t.Errorf("markers do not follow the variant: %v", paired)
	}
	plain := styles([]string{"stability", "alphaSplit", "a/b"}, nil)
	for i, s := range plain {
		if s.Color != PaletteColor(i) || s.Dashes != nil {
			t.Errorf("label %d: %v, want index color, solid", i, s)
		}
	}
	// A table fixes a method's style whatever the other methods; a
	// "<method>/<variant>" label takes its method's colour.
	table := map[string]Style{"random": PaletteStyle(7), "stability": PaletteStyle(3)}
	for _, labels := range [][]string{{"stability", "random"}, {"random", "x", "stability"}} {
		got := styles(labels, table)
		for i, l := range labels {
			if want, ok := table[l]; ok && got[i].Color != want.Color {
				t.Errorf("%v: %s drawn in %v, want %v", labels, l, got[i].Color, want.Color)
			}
		}
	}
	if got := styles([]string{"random/op", "random/gd", "other"}, table); got[0].Color != PaletteColor(7) || got[1].Color != PaletteColor(7) || got[1].Dashes == nil {
		t.Errorf("variants of a table method: %v", got)
	}
	// Several metrics: one colour and marker per method, a line pattern per metric.
	got := methodStyles([]string{"a: ci", "a: vi", "b: ci", "b: vi"}, []string{"a", "a", "b", "b"}, []int{0, 1, 0, 1}, map[string]Style{"b": PaletteStyle(5)})
	if got[0].Color != got[1].Color || got[0].Shape != got[1].Shape || got[0].Dashes != nil || got[1].Dashes == nil || got[2].Color != PaletteColor(5) || got[3].Color != PaletteColor(5) {
		t.Errorf("several metrics: %v", got)
	}
}

// TestLayout_MetricPanelsAndReference checks MetricPanels (one panel per
// metric, in the listed order, titled and y-labelled by its label),
// Datasets (other datasets' rows not drawn) and Reference (the method's row
// becomes the panel's horizontal line, whatever its x, and no series).
func TestLayout_MetricPanelsAndReference(t *testing.T) {
	t.Parallel()
	var rows []results.SummaryRow
	for _, m := range []string{"auc", "mse", "error_rate"} {
		rows = append(rows, fakeRows(m, []string{"adult", "magic-synth"}, []string{"obj", "out"}, []float64{0.1, 1})...)
		rows = append(rows, fakeRows(m, []string{"adult", "magic-synth"}, []string{"exact"}, []float64{math.Inf(1)})...)
	}
	for i := range rows {
		if rows[i].Method == "exact" {
			rows[i].Mean = map[string]float64{"auc": 0.9, "mse": 0.1, "error_rate": 0.15}[rows[i].Metric]
			if rows[i].Dataset != "adult" {
				rows[i].Mean = 0.5
			}
		}
	}
	spec := FigureSpec{
		Name: "f", LogX: true, Methods: []string{"obj", "out"}, Reference: "exact", Datasets: []string{"adult"},
		MetricPanels: []MetricPanel{{"auc", "AUC"}, {"error_rate", "error rate"}, {"mse", ""}},
	}
	fig, err := layout(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	var titles, ylabels []string
	var refs []float64
	for _, p := range fig.Panels {
		titles, ylabels, refs = append(titles, p.Dataset), append(ylabels, p.YLabel), append(refs, p.Ref)
		if p.Synthetic {
			t.Errorf("panel %s: synthetic, though only adult (real) is selected", p.Dataset)
		}
		if len(p.Series) != 2 || p.Series[0].Method != "obj" || p.Series[1].Method != "out" {
			t.Errorf("panel %s: series %v, want obj, out", p.Dataset, p.Series)
		}
		for _, s := range p.Series {
			if len(s.Points) != 2 {
				t.Errorf("panel %s, %s: %d points, want 2 (the reference is not a point)", p.Dataset, s.Method, len(s.Points))
			}
		}
	}
	if want := []string{"AUC", "error rate", "mse"}; !slices.Equal(titles, want) || !slices.Equal(ylabels, want) {
		t.Errorf("panels %v, y labels %v, want %v", titles, ylabels, want)
	}
	if want := []float64{0.9, 0.15, 0.1}; !slices.Equal(refs, want) {
		t.Errorf("reference lines %v, want %v", refs, want)
	}
	f, err := build(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.legend[len(f.legend)-1].name; got != "exact (reference)" {
		t.Errorf("last legend entry %q", got)
	}
	if got := f.yLabels[1]; got != "error rate" {
		t.Errorf("y label %q", got)
	}
	synth := spec
	synth.Datasets = []string{"magic-synth"}
	if fig, err := layout(synth, rows); err != nil || !fig.Panels[0].Synthetic {
		t.Errorf("magic-synth: synthetic = %v, err %v", err == nil && fig.Panels[0].Synthetic, err)
	}
	for name, bad := range map[string]FigureSpec{
		"metric too":           {MetricPanels: spec.MetricPanels, Metric: "auc"},
		"reference in methods": {MetricPanels: spec.MetricPanels, Methods: []string{"exact"}, Reference: "exact"},
		"duplicate panel":      {MetricPanels: []MetricPanel{{"auc", "a"}, {"auc", "b"}}},
	} {
		if _, err := layout(bad, rows); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	both := spec
	both.Datasets, both.Methods = nil, []string{"none"} // only the reference: two rows per panel
	if _, err := layout(both, rows); err == nil || !strings.Contains(err.Error(), "two rows of reference") {
		t.Errorf("two datasets in one panel: err = %v", err)
	}
}

// TestLinearTicks_NoNegativeZero: an axis from just below zero labels its
// zero tick "0.00", not "-0.00" (−0 from the ceiling of a small negative).
func TestLinearTicks_NoNegativeZero(t *testing.T) {
	for _, tk := range (linearTicks{}).Ticks(-0.004, 0.25) {
		if strings.HasPrefix(tk.Label, "-0") && strings.Trim(tk.Label, "-0.") == "" {
			t.Errorf("tick label %q", tk.Label)
		}
	}
}
