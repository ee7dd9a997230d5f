package plots

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/dprepro/dprepro/results"
)

// TestSweptTicks: the x axis is ticked at the swept values and nowhere
// else, each labelled unless its label would touch the previous one.
func TestSweptTicks(t *testing.T) {
	t.Parallel()
	style := plot.New().X.Tick.Label
	tests := []struct {
		name   string
		values []float64
		log    bool
		length vg.Length
		want   []string // labels, "" for an unlabelled tick
	}{
		{"cv13 alphas on a log axis", []float64{0.3, 0.5, 1, 2, 3, 5}, true, 4 * vg.Inch, []string{"0.3", "0.5", "1", "2", "3", "5"}},
		{"d = 1..10", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, false, 3 * vg.Inch, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}},
		{"n in thousands", []float64{50000, 100000, 450000}, false, 3 * vg.Inch, []string{"50000", "100k", "450k"}},
		{"crowded: every other label", []float64{1, 1.1, 1.2, 1.3, 1.4}, false, 0.5 * vg.Inch, []string{"1", "", "1.2", "", "1.4"}},
		{"no length: all labelled", []float64{1, 1.1, 1.2}, false, 0, []string{"1", "1.1", "1.2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &sweptTicks{Values: tt.values, Log: tt.log, Style: style, Length: tt.length}
			ticks := st.Ticks(tt.values[0], tt.values[len(tt.values)-1])
			var vals []float64
			var labels []string
			for _, tk := range ticks {
				vals, labels = append(vals, tk.Value), append(labels, tk.Label)
			}
			if !slices.Equal(vals, tt.values) {
				t.Errorf("ticks at %v, want at the swept values %v", vals, tt.values)
			}
			if !slices.Equal(labels, tt.want) {
				t.Errorf("labels %q, want %q", labels, tt.want)
			}
		})
	}
}

// TestLinearTicks: 5 to 12 labelled round values inside any range, so that
// a value can be read off the y axis.
func TestLinearTicks(t *testing.T) {
	t.Parallel()
	for _, r := range [][2]float64{{0, 1}, {0.55, 0.95}, {1, 7}, {5.9, 16.7}, {0.005, 0.11}, {0.44, 0.62}, {-3, 2}, {1200, 48000}, {0.9, 1.0}} {
		var labels []string
		for _, tk := range (linearTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				if tk.Value < r[0]-1e-12 || tk.Value > r[1]+1e-12 {
					t.Errorf("%v: label %s at %v outside the range", r, tk.Label, tk.Value)
				}
				labels = append(labels, tk.Label)
			}
		}
		if len(labels) < 5 || len(labels) > 12 {
			t.Errorf("%v: %d labels %v, want 5..12", r, len(labels), labels)
		}
		if len(slices.Compact(slices.Clone(labels))) != len(labels) {
			t.Errorf("%v: repeated labels %v (too few decimals)", r, labels)
		}
	}
}

// TestLayout_JitterStaysInCell: with any spacing, on either scale and for
// any number of methods, every point stays within Jitter of the gap to
// each neighbouring x (so nearer its own x than any other: in its x cell)
// and within MaxJitterSpan of the x range.
func TestLayout_JitterStaysInCell(t *testing.T) {
	t.Parallel()
	sets := [][]float64{
		{1, 5, 10},                      // the quick d sweep: "d = 1 drawn between 0.3 and 1.9" before
		{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, // the paper's d sweep
		{0.3, 0.5, 1, 2, 3, 5},          // cv13's α on a log axis
		{0.02, 0.05, 0.1, 0.2},          // Accuracy First's α
		{5000, 10000, 20000},
		{0.1, 0.11, 5}, // one close pair
	}
	for _, logX := range []bool{false, true} {
		for _, xs := range sets {
			for _, nm := range []int{2, 3, 8} {
				methods := make([]string, nm)
				for i := range methods {
					methods[i] = string(rune('a' + i))
				}
				const jitter = 0.2
				spec := FigureSpec{Name: "t", Metric: "m", Jitter: jitter, LogX: logX, Methods: append(slices.Clone(methods), "absent")}
				rows := fakeRows("m", []string{"d"}, methods, xs)
				f, err := layout(spec, rows)
				if err != nil {
					t.Fatal(err)
				}
				// Every swept value is ticked: the axis spans them all.
				b, err := build(spec, rows)
				if err != nil {
					t.Fatal(err)
				}
				var ticked []float64
				for _, tk := range b.xTicks[0].Ticks(b.panels[0].X.Min, b.panels[0].X.Max) {
					ticked = append(ticked, tk.Value)
				}
				if !slices.Equal(ticked, xs) {
					t.Errorf("log %v, %d methods: ticks at %v, want %v", logX, nm, ticked, xs)
				}
				tr := func(x float64) float64 { return x }
				if logX {
					tr = math.Log10
				}
				span := tr(xs[len(xs)-1]) - tr(xs[0])
				for _, s := range f.Panels[0].Series {
					for i, p := range s.Points {
						off := math.Abs(tr(p.XPlot) - tr(p.X))
						if i > 0 && off > jitter*(tr(xs[i])-tr(xs[i-1]))+1e-12 {
							t.Errorf("log %v, %v, %d methods: %s at %v drawn at %v, beyond %v of the gap to %v", logX, xs, nm, s.Method, p.X, p.XPlot, jitter, xs[i-1])
						}
						if i+1 < len(xs) && off > jitter*(tr(xs[i+1])-tr(xs[i]))+1e-12 {
							t.Errorf("log %v, %v, %d methods: %s at %v drawn at %v, beyond %v of the gap to %v", logX, xs, nm, s.Method, p.X, p.XPlot, jitter, xs[i+1])
						}
						if off > MaxJitterSpan*span+1e-12 {
							t.Errorf("log %v, %v: %s at %v moved %v, more than %v of the range", logX, xs, s.Method, p.X, off, MaxJitterSpan)
						}
					}
				}
			}
		}
	}
}

// TestCaption: the caption states the profile, the replicates per point
// from the rows' N (of the points with bars) and what the bars are.
func TestCaption(t *testing.T) {
	t.Parallel()
	rows := fakeRows("m", []string{"d"}, []string{"a", "b"}, []float64{1, 2})
	rows[1].N = 18
	single := fakeRows("m", []string{"d"}, []string{"vi"}, []float64{1, 2})
	for i := range single {
		single[i].N, single[i].SD, single[i].CILow, single[i].CIHigh = 1, math.NaN(), math.NaN(), math.NaN()
	}
	tests := []struct {
		name string
		spec FigureSpec
		rows []results.SummaryRow
		want []string
	}{
		{"ci", FigureSpec{Metric: "m", Caption: Caption{Profile: "paper", CILevel: 0.95}}, rows,
			[]string{"paper profile · ", "n = 18–50 per point", "bars: 95% bootstrap CI of the mean"}},
		{"quick, sd, a VI without bars", FigureSpec{Metric: "m", ErrorBars: "sd", Caption: Caption{Profile: "quick"}}, append(fakeRows("m", []string{"d"}, []string{"a"}, []float64{1}), single...),
			[]string{"quick profile (reduced settings, not the paper's)", "n = 50 per point", "bars: ±1 sd over the replicates"}},
		{"no bars", FigureSpec{Metric: "m", Caption: Caption{Profile: "quick"}}, single,
			[]string{"n = 1 per point", "bars: none (one value per point)"}},
		{"given", FigureSpec{Metric: "m", Caption: Caption{Profile: "quick", Replicates: "20 trials per point", Bars: "range"}}, rows,
			[]string{"20 trials per point", "bars: range"}},
	}
	for _, tt := range tests {
		f, err := build(tt.spec, tt.rows)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(f.caption, w) {
				t.Errorf("%s: caption %q lacks %q", tt.name, f.caption, w)
			}
		}
	}
}

// TestLayout_PanelsListedAndShared: a row may fall in several panels
// (PanelBy), Panels fixes their order with "not run" for a panel without
// rows, and rows of unlisted panels are not drawn.
func TestLayout_PanelsListedAndShared(t *testing.T) {
	t.Parallel()
	rows := fakeRows("m", []string{"ridge"}, []string{"nr", "theory", "doubling"}, []float64{0.05, 0.1})
	by := func(r results.SummaryRow) []string {
		switch r.Method {
		case "nr":
			return []string{"(a) vs theory", "(c) vs doubling"}
		case "theory":
			return []string{"(a) vs theory"}
		}
		return []string{"(c) vs doubling", "(z) unlisted"}
	}
	spec := FigureSpec{Name: "f", Metric: "m", PanelBy: by, Panels: []string{"(a) vs theory", "(b) logistic", "(c) vs doubling"}, Columns: 2}
	fig, err := layout(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range fig.Panels {
		var ms []string
		for _, s := range p.Series {
			ms = append(ms, s.Method)
		}
		got = append(got, p.Dataset+"="+strings.Join(ms, "+"))
		if p.NotRun != (p.Dataset == "(b) logistic") {
			t.Errorf("panel %s: not run = %v", p.Dataset, p.NotRun)
		}
	}
	if want := []string{"(a) vs theory=nr+theory", "(b) logistic=", "(c) vs doubling=nr+doubling"}; !slices.Equal(got, want) {
		t.Errorf("panels %v, want %v", got, want)
	}
	f, err := build(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.panels[1].Title.Text, "not run") {
		t.Errorf("empty listed panel titled %q", f.panels[1].Title.Text)
	}
	// One y label per row of panels: the second column has none.
	if y := f.yLabels; y[0] == "" || y[1] != "" || y[2] == "" {
		t.Errorf("y labels %q: want the first column's only", y)
	}
}

// TestBuild_RefLinesPerPanelAndDiagonal: labelled reference lines, one
// only in its panel, and a diagonal whose range covers the data's x.
func TestBuild_RefLinesPerPanelAndDiagonal(t *testing.T) {
	t.Parallel()
	rows := fakeRows("m", []string{"kdd", "twitter"}, []string{"a"}, []float64{0.05, 0.2})
	spec := FigureSpec{Name: "f", Metric: "m", DiagonalRef: true, DiagonalLabel: "requested α",
		RefLines: []RefLine{{Y: 16, Label: "theoretical maximum"}, {Y: 3, Label: "‖θ*‖ on kdd", Panel: "kdd"}}}
	f, err := build(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range f.legend {
		names = append(names, e.name)
	}
	if want := []string{"a", "theoretical maximum", "‖θ*‖ on kdd", "requested α"}; !slices.Equal(names, want) {
		t.Errorf("legend %v, want %v", names, want)
	}
	count := func(guides []plot.Plotter) (h, d int) {
		for _, pl := range guides {
			switch v := pl.(type) {
			case *hLine:
				h++
			case *diagLine:
				d++
				if v.Min != 0.05 || v.Max != 0.2 {
					t.Errorf("diagonal over [%v, %v], want the x range [0.05, 0.2]", v.Min, v.Max)
				}
			}
		}
		return h, d
	}
	if h, d := count(f.guides[0]); h != 2 || d != 1 {
		t.Errorf("kdd panel: %d lines, %d diagonals; want 2, 1", h, d)
	}
	if h, _ := count(f.guides[1]); h != 1 {
		t.Errorf("twitter panel: %d lines, want 1 (the kdd line is kdd's)", h)
	}
	if f.panels[0].Y.Max < 16 || f.panels[0].Y.Min > 0.05 {
		t.Errorf("y range [%v, %v] leaves out a reference line or the diagonal", f.panels[0].Y.Min, f.panels[0].Y.Max)
	}
}

// TestMeasure_PlotArea: labels that would crowd a panel (a y label longer
// than the panel is tall, long titles, nine panels with a wide legend)
// still leave each panel's data area at least 55% of its tile each way.
func TestMeasure_PlotArea(t *testing.T) {
	t.Parallel()
	var rows []results.SummaryRow
	for _, d := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
		rows = append(rows, fakeRows("m", []string{"a dataset called " + d}, []string{"dp-obj-lr: ci_length", "zcdp-obj-lr: vi_length (one interval per x)"}, []float64{0.3, 0.6, 1})...)
	}
	spec := FigureSpec{Name: "f", Title: "a title", Metric: "m", Columns: 3, Width: 4, Height: 3.2,
		YLabel: "ex-post privacy loss ε (test loss counted twice, as in the paper's figures)",
		XLabel: "ε1 (zCDP: ρ1 = ε1²/2), the swept privacy parameter of the first release", Caption: Caption{Profile: "quick"}}
	w, h, areas, err := Measure(spec, rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(areas) != 9 || w <= 0 || h <= 0 {
		t.Fatalf("%d areas in %v × %v", len(areas), w, h)
	}
	for _, a := range areas {
		if !in(a.Data, a.Tile) {
			t.Errorf("panel %s: data area %v spills out of its tile %v", a.Panel, a.Data, a.Tile)
		}
		fw, fh := a.Data.Size().X/a.Tile.Size().X, a.Data.Size().Y/a.Tile.Size().Y
		if fw < 0.55 || fh < 0.55 {
			t.Errorf("panel %s: data area %.0f%% × %.0f%% of its tile, want ≥ 55%% each way", a.Panel, 100*fw, 100*fh)
		}
	}
}
