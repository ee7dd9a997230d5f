package plots

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dprepro/dprepro/results"
)

// SyntheticLabel is appended to the title of a panel drawn from synthetic
// data: a stand-in for an absent file, or data simulated by design (the
// histogram kind's densities, a Go provider's simulation).
const SyntheticLabel = "(SYNTHETIC data, not a real file)"

// Default panel size in inches, used when FigureSpec.Width or Height is zero.
const (
	DefaultWidth  = 5.0
	DefaultHeight = 4.0
)

// FigureSpec describes one paper figure: a metric plotted against x, one
// panel per dataset, one line per method.
type FigureSpec struct {
	// Name is the file stem, e.g. "fig1a-auc". Required by Render; a plain
	// file name without path separators.
	Name string
	// Title is the figure title, e.g. "Figure 1a: AUC vs privacy level".
	// Render draws it above the panels; optional.
	Title string
	// Metric selects the rows with SummaryRow.Metric == Metric. Required
	// unless Metrics is set.
	Metric string
	// Metrics, when not empty, draws several metrics in one figure (e.g. the
	// privacy breakdown of Ligett et al. 2017, Figure 3: testing vs
	// generating loss): one line per (method, metric), labelled
	// "method: metric" and ordered method-major. Metric must then be empty;
	// Methods still selects and orders the methods.
	Metrics []string
	// XLabel and YLabel are the axis labels. Empty XLabel means the XName of
	// panel's first row; empty YLabel means Metric.
	XLabel, YLabel string
	// LogX and LogY put the axis on a log10 scale. Points whose x (LogX) or
	// mean (LogY) is ≤ 0 are then skipped.
	LogX, LogY bool
	// Methods fixes the order of lines and legend entries, and selects them:
	// rows of other methods are not drawn. Empty means all methods, in order
	// of first appearance among the matching rows. No duplicates.
	Methods []string
	// Jitter shifts each method's points horizontally by a fixed,
	// deterministic offset so that the error bars of different methods at the
	// same x do not overlap. Method k of M (in Methods order, 0-based) is
	// drawn at
	//
	//	x + Jitter · s · (2k/(M−1) − 1)
	//
	// where s is the distance from x to the nearest other x in the panel (1
	// when there is a single x); on a log x axis the shift is in log10 units,
	// i.e. multiplicative. The offsets are symmetric around x and span
	// ±Jitter·s. Zero means no jitter; must be in [0, 0.5) so that groups at
	// neighbouring x values stay apart.
	Jitter float64
	// RefLine, when not nil, draws a dashed horizontal reference line at
	// y = *RefLine (e.g. 0.5 for the AUC of a random classifier). The y axis
	// is extended to include it. Skipped on a log y axis when ≤ 0.
	RefLine *float64
	// DiagonalRef draws a dashed y = x reference line across the panel.
	DiagonalRef bool
	// Width and Height are the size of one panel in inches; zero means
	// DefaultWidth × DefaultHeight. Must be ≥ 0.
	Width, Height float64
	// ErrorBars selects the error bar of a point: "" or "ci", the row's
	// CILow..CIHigh (the percentile-bootstrap CI of the mean); "sd",
	// Mean ± SD (one standard deviation of the replicates, as the error bars
	// of Wang, Kifer & Lee 2019, Figures 1–4). A row with a non-finite SD
	// (a single value) gets no bar.
	ErrorBars string
	// PanelBy, when not nil, groups rows into panels by the key it returns
	// for each row (the panel's title), in order of first appearance; nil
	// gives one panel per dataset. With several swept quantities in one
	// figure, leave XLabel empty: each panel's x axis is then labelled with
	// the XName of its rows.
	PanelBy func(results.SummaryRow) string
	// Columns is the number of panels per row of the figure; zero puts all
	// panels in one row. Must be ≥ 0.
	Columns int
	// MetricPanels, when not empty, draws one panel per listed metric, in
	// this order, instead of one per dataset: each panel is titled by its
	// Label and its y axis labelled likewise (e.g. AUC, error rate and MSE
	// side by side against ε). Metric, Metrics and PanelBy must then be
	// empty; set Datasets to one dataset, or the rows of several datasets
	// share a panel and clash.
	MetricPanels []MetricPanel
	// Datasets, when not empty, selects the rows of these datasets; rows of
	// other datasets are not drawn.
	Datasets []string
	// Reference, when not empty, names a method drawn in each panel as a
	// horizontal line rather than a line against x: a dash-dotted line at
	// the mean of its row in the panel (its x is ignored; at most one such
	// row per panel), labelled "<Reference> (reference)" in the legend
	// (e.g. the non-private fit beside private learners). It must not be
	// one of Methods.
	Reference string
}

// MetricPanel is one panel of a figure with FigureSpec.MetricPanels: the
// metric it draws and the label of its title and y axis.
type MetricPanel struct {
	Metric string // required; no duplicates
	Label  string // empty means Metric
}

// validate reports every problem with spec.
func (spec FigureSpec) validate() error {
	var errs []error
	switch {
	case len(spec.MetricPanels) > 0:
		if spec.Metric != "" || len(spec.Metrics) > 0 || spec.PanelBy != nil {
			errs = append(errs, errors.New("metric panels: metric, metrics and panel-by must be empty"))
		}
	case spec.Metric == "" && len(spec.Metrics) == 0:
		errs = append(errs, errors.New("metric: required"))
	case spec.Metric != "" && len(spec.Metrics) > 0:
		errs = append(errs, errors.New("metric and metrics: set one, not both"))
	}
	seenMetric := make(map[string]bool, len(spec.Metrics))
	for i, m := range spec.Metrics {
		if m == "" || seenMetric[m] {
			errs = append(errs, fmt.Errorf("metrics[%d]: empty or duplicate metric %q", i, m))
		}
		seenMetric[m] = true
	}
	if !(spec.Jitter >= 0 && spec.Jitter < 0.5) {
		errs = append(errs, fmt.Errorf("jitter: must be in [0, 0.5) (got %v)", spec.Jitter))
	}
	if !(spec.Width >= 0) || math.IsInf(spec.Width, 0) {
		errs = append(errs, fmt.Errorf("width: must be finite and >= 0 (got %v)", spec.Width))
	}
	if !(spec.Height >= 0) || math.IsInf(spec.Height, 0) {
		errs = append(errs, fmt.Errorf("height: must be finite and >= 0 (got %v)", spec.Height))
	}
	if spec.RefLine != nil && (math.IsNaN(*spec.RefLine) || math.IsInf(*spec.RefLine, 0)) {
		errs = append(errs, fmt.Errorf("ref_line: must be finite (got %v)", *spec.RefLine))
	}
	if spec.ErrorBars != "" && spec.ErrorBars != "ci" && spec.ErrorBars != "sd" {
		errs = append(errs, fmt.Errorf("error bars: %q is not \"ci\" or \"sd\"", spec.ErrorBars))
	}
	if spec.Columns < 0 {
		errs = append(errs, fmt.Errorf("columns: %d is negative", spec.Columns))
	}
	seen := make(map[string]bool, len(spec.Methods))
	for i, m := range spec.Methods {
		if seen[m] {
			errs = append(errs, fmt.Errorf("methods[%d]: duplicate method %q", i, m))
		}
		seen[m] = true
	}
	if spec.Reference != "" && seen[spec.Reference] {
		errs = append(errs, fmt.Errorf("reference: %q is also one of methods", spec.Reference))
	}
	seenPanel := make(map[string]bool, len(spec.MetricPanels))
	for i, mp := range spec.MetricPanels {
		if mp.Metric == "" || seenPanel[mp.Metric] {
			errs = append(errs, fmt.Errorf("metric panels[%d]: empty or duplicate metric %q", i, mp.Metric))
		}
		seenPanel[mp.Metric] = true
	}
	return errors.Join(errs...)
}

// point is one plotted (dataset, method, x) cell.
type point struct {
	X     float64 // x from the row
	XPlot float64 // x after jitter, where the marker and error bar are drawn
	Mean  float64
	// CILow and CIHigh are the drawn error bar; HasCI is false when the row's
	// interval is not finite or not ordered (no bar is drawn).
	CILow, CIHigh float64
	HasCI         bool
}

// series is one method's line in one panel.
type series struct {
	Method string
	Index  int     // position in figureData.Methods: color, marker and jitter slot
	Points []point // sorted by X
}

// panelData is the data of one panel (a dataset's, unless PanelBy or
// MetricPanels is set).
type panelData struct {
	Dataset   string // the panel key and title
	XName     string // of the panel's first row
	YLabel    string // the panel's own y label (MetricPanels); empty: the figure's
	Synthetic bool
	Series    []series // in method order; methods without points are absent
	// Ref is the mean of the Reference method's row in the panel; NaN
	// when the panel has none, or its mean is not finite.
	Ref float64
}

// figureData is the figure after filtering, ordering and jitter, before
// any gonum/plot object is made.
type figureData struct {
	Methods []string // figure-wide method order
	Panels  []panelData
	XLabel  string
	YLabel  string
}

// layout filters rows to spec.Metric and arranges them into panels and
// series. It only selects, orders and offsets values; it computes no
// statistics.
func layout(spec FigureSpec, rows []results.SummaryRow) (figureData, error) {
	if err := spec.validate(); err != nil {
		return figureData{}, fmt.Errorf("plots: figure %q: %w", spec.Name, err)
	}
	if len(spec.Metrics) > 0 {
		metrics := spec.Metrics
		if spec, rows = combineMetrics(spec, rows); len(rows) == 0 {
			return figureData{}, fmt.Errorf("plots: figure %q: no rows with metrics %q for methods %q", spec.Name, metrics, spec.Methods)
		}
	}
	panelOf := func(r results.SummaryRow) string {
		if spec.PanelBy != nil {
			return spec.PanelBy(r)
		}
		return r.Dataset
	}
	match := func(r results.SummaryRow) bool { return r.Metric == spec.Metric }
	what := fmt.Sprintf("metric %q", spec.Metric)
	if len(spec.MetricPanels) > 0 {
		labels := make(map[string]string, len(spec.MetricPanels))
		var metrics []string
		for _, mp := range spec.MetricPanels {
			labels[mp.Metric] = cmp.Or(mp.Label, mp.Metric)
			metrics = append(metrics, mp.Metric)
		}
		match = func(r results.SummaryRow) bool { _, ok := labels[r.Metric]; return ok }
		panelOf = func(r results.SummaryRow) string { return labels[r.Metric] }
		what = fmt.Sprintf("metrics %q", metrics)
	}
	var matched []results.SummaryRow
	for _, r := range rows {
		if match(r) && (len(spec.Datasets) == 0 || slices.Contains(spec.Datasets, r.Dataset)) {
			matched = append(matched, r)
		}
	}
	if len(matched) == 0 {
		return figureData{}, fmt.Errorf("plots: figure %q: no rows with %s", spec.Name, what)
	}

	fig := figureData{XLabel: spec.XLabel, YLabel: spec.YLabel}
	if fig.YLabel == "" {
		fig.YLabel = spec.Metric
	}
	panelIndex := make(map[string]int)
	methodIndex := make(map[string]int)
	if len(spec.Methods) > 0 {
		fig.Methods = slices.Clone(spec.Methods)
		for i, m := range fig.Methods {
			methodIndex[m] = i
		}
	} else {
		for _, r := range matched {
			if _, ok := methodIndex[r.Method]; !ok && r.Method != spec.Reference {
				methodIndex[r.Method] = len(fig.Methods)
				fig.Methods = append(fig.Methods, r.Method)
			}
		}
	}
	if len(spec.MetricPanels) > 0 {
		// The panels in the order MetricPanels lists them.
		for _, mp := range spec.MetricPanels {
			if !slices.ContainsFunc(matched, func(r results.SummaryRow) bool { return r.Metric == mp.Metric }) {
				continue
			}
			label := cmp.Or(mp.Label, mp.Metric)
			panelIndex[label] = len(fig.Panels)
			fig.Panels = append(fig.Panels, panelData{Dataset: label, YLabel: label, Ref: math.NaN()})
		}
	}

	// Group by dataset (order of first appearance), then by method.
	cells := make(map[[2]string][]point) // (dataset, method) → points
	type cellKey struct {
		dataset, method string
		x               float64
	}
	seen := make(map[cellKey]bool)
	refSeen := make(map[string]bool)
	for _, r := range matched {
		_, selected := methodIndex[r.Method]
		isRef := spec.Reference != "" && r.Method == spec.Reference
		if !selected && !isRef {
			continue // not selected by spec.Methods
		}
		panel := panelOf(r)
		p, ok := panelIndex[panel]
		if !ok {
			p = len(fig.Panels)
			panelIndex[panel] = p
			fig.Panels = append(fig.Panels, panelData{Dataset: panel, Ref: math.NaN()})
		}
		if fig.Panels[p].XName == "" && !isRef {
			fig.Panels[p].XName = r.XName
		}
		if r.DataSource == "synthetic" {
			fig.Panels[p].Synthetic = true
		}
		if isRef {
			if refSeen[panel] {
				return figureData{}, fmt.Errorf("plots: figure %q: two rows of reference %q in panel %q", spec.Name, spec.Reference, panel)
			}
			refSeen[panel] = true
			if finite(r.Mean) && !(spec.LogY && r.Mean <= 0) {
				fig.Panels[p].Ref = r.Mean
			}
			continue
		}
		k := cellKey{panel, r.Method, r.X}
		if seen[k] {
			return figureData{}, fmt.Errorf("plots: figure %q: duplicate row for panel %q, method %q, %s = %v",
				spec.Name, panel, r.Method, r.XName, r.X)
		}
		seen[k] = true
		if !finite(r.X) || !finite(r.Mean) || (spec.LogX && r.X <= 0) || (spec.LogY && r.Mean <= 0) {
			continue // nothing drawable: a failed cell or outside the log axis
		}
		pt := point{X: r.X, XPlot: r.X, Mean: r.Mean, CILow: r.CILow, CIHigh: r.CIHigh}
		if spec.ErrorBars == "sd" {
			pt.CILow, pt.CIHigh = r.Mean-r.SD, r.Mean+r.SD
		}
		pt.HasCI = finite(pt.CILow) && finite(pt.CIHigh) && pt.CILow <= pt.CIHigh
		key := [2]string{panel, r.Method}
		cells[key] = append(cells[key], pt)
	}

	if len(fig.Panels) == 0 {
		return figureData{}, fmt.Errorf("plots: figure %q: no rows with metric %q for methods %q",
			spec.Name, spec.Metric, spec.Methods)
	}
	for pi := range fig.Panels {
		pd := &fig.Panels[pi]
		for mi, m := range fig.Methods {
			pts := cells[[2]string{pd.Dataset, m}]
			if len(pts) == 0 {
				continue
			}
			slices.SortFunc(pts, func(a, b point) int { return cmp.Compare(a.X, b.X) })
			pd.Series = append(pd.Series, series{Method: m, Index: mi, Points: pts})
		}
		applyJitter(pd, len(fig.Methods), spec.Jitter, spec.LogX)
		if spec.LogY {
			clampLogCI(pd)
		}
	}
	return fig, nil
}

// combineMetrics rewrites a several-metric figure as a one-metric figure
// whose "methods" are the (method, metric) pairs.
func combineMetrics(spec FigureSpec, rows []results.SummaryRow) (FigureSpec, []results.SummaryRow) {
	const combined = "\x00combined"
	label := func(method, metric string) string { return method + ": " + metric }
	var out []results.SummaryRow
	var methods []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !slices.Contains(spec.Metrics, r.Metric) {
			continue
		}
		if len(spec.Methods) > 0 && !slices.Contains(spec.Methods, r.Method) {
			continue
		}
		if !seen[r.Method] {
			seen[r.Method] = true
			methods = append(methods, r.Method)
		}
		r.Method = label(r.Method, r.Metric)
		r.Metric = combined
		out = append(out, r)
	}
	if len(spec.Methods) > 0 {
		methods = spec.Methods
	}
	var pairs []string
	for _, m := range methods {
		for _, k := range spec.Metrics {
			pairs = append(pairs, label(m, k))
		}
	}
	if spec.YLabel == "" {
		spec.YLabel = strings.Join(spec.Metrics, ", ")
	}
	spec.Metric, spec.Metrics, spec.Methods = combined, nil, pairs
	return spec, out
}

// applyJitter sets XPlot for every point of the panel. The offset, in axis
// units (log10 units on a log axis), is jitterOffset(index, nMethods)·
// jitter·s, where s is the local spacing: the distance from x to the nearest
// other distinct x of the panel (1 when the panel has a single x, where the
// axis range then scales with the offsets anyway). Offsets are fixed by
// method index, not random, and symmetric around x.
func applyJitter(pd *panelData, nMethods int, jitter float64, logX bool) {
	if jitter == 0 || nMethods < 2 {
		return
	}
	fwd, inv := func(x float64) float64 { return x }, func(t float64) float64 { return t }
	if logX {
		fwd, inv = math.Log10, func(t float64) float64 { return math.Pow(10, t) }
	}
	var xs []float64
	for _, s := range pd.Series {
		for _, p := range s.Points {
			xs = append(xs, fwd(p.X))
		}
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	spacing := func(t float64) float64 {
		if len(xs) < 2 {
			return 1
		}
		i, _ := slices.BinarySearch(xs, t)
		gap := math.Inf(1)
		if i > 0 {
			gap = t - xs[i-1]
		}
		if i+1 < len(xs) {
			gap = math.Min(gap, xs[i+1]-t)
		}
		return gap
	}
	for si := range pd.Series {
		s := &pd.Series[si]
		off := jitterOffset(s.Index, nMethods) * jitter
		for pi := range s.Points {
			p := &s.Points[pi]
			t := fwd(p.X)
			p.XPlot = inv(t + off*spacing(t))
		}
	}
}

// jitterOffset returns the horizontal slot of method k of n, evenly spaced
// in [−1, 1] and symmetric around 0: −1, …, +1 (0 when n = 1).
func jitterOffset(k, n int) float64 {
	if n < 2 {
		return 0
	}
	return 2*float64(k)/float64(n-1) - 1
}

// clampLogCI handles intervals whose lower end is ≤ 0 on a log y axis: the
// lower end is drawn at the smallest positive value plotted in the panel,
// so the bar runs to the bottom of the data range rather than vanishing.
// This is a drawing choice only; the row is unchanged.
func clampLogCI(pd *panelData) {
	floor := math.Inf(1)
	for _, s := range pd.Series {
		for _, p := range s.Points {
			floor = math.Min(floor, p.Mean) // means are > 0 here
			if p.HasCI && p.CILow > 0 {
				floor = math.Min(floor, p.CILow)
			}
		}
	}
	for si := range pd.Series {
		for pi := range pd.Series[si].Points {
			p := &pd.Series[si].Points[pi]
			if p.HasCI && p.CILow <= 0 {
				p.CILow = floor
				p.HasCI = p.CIHigh >= floor
			}
		}
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// seriesParts are the plotters made for one series, kept for tests.
type seriesParts struct {
	Line   *plotter.Line
	Points *plotter.Scatter
	Bars   *plotter.YErrorBars // nil when no point has an interval
}

// figure is a built figure: the plots and what was handed to them.
type figure struct {
	data   figureData
	panels []*plot.Plot
	parts  [][]seriesParts // parallel to data.Panels[i].Series
	// legend holds one entry per method drawn in any panel, then the
	// reference lines, for Render's shared legend.
	legend []legendEntry
}

type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// Build returns the panels of spec drawn from rows, one *plot.Plot per
// dataset in order of first appearance among the rows with spec.Metric,
// together with the dataset names, without saving anything. Each panel has
// its own legend of the methods it shows; the figure title is not included
// (Render draws it above the panels).
//
// Rows with a non-finite X or Mean are skipped (the line then joins the
// neighbouring points); a row whose CILow..CIHigh is not finite or not ordered is
// drawn without an error bar. On a log y axis an interval whose lower end
// is ≤ 0 is drawn down to the smallest positive value shown in the panel.
//
// It returns an error when spec is invalid, no row has spec.Metric (and,
// if set, one of spec.Methods), or two rows share (dataset, method, x).
func Build(spec FigureSpec, rows []results.SummaryRow) ([]*plot.Plot, []string, error) {
	fig, err := build(spec, rows)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(fig.data.Panels))
	for i, p := range fig.data.Panels {
		names[i] = p.Dataset
	}
	for i, p := range fig.panels {
		for j, s := range fig.data.Panels[i].Series {
			sp := fig.parts[i][j]
			p.Legend.Add(s.Method, sp.Line, sp.Points)
		}
	}
	return fig.panels, names, nil
}

// Colors of the figure. Dark colors stay legible with thin error bars.
var (
	seriesColors   = plotutil.DarkColors
	syntheticColor = color.RGBA{R: 170, A: 255}
	refColor       = color.Gray{Y: 110}
)

// style is how one method's series is drawn.
type style struct {
	color  color.Color
	glyph  draw.GlyphDrawer
	dashes []vg.Length // nil: solid
}

// variantDashes are the line patterns of the variants of a method.
var variantDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)}}

// methodStyles returns the style of each method label. Labels of the form
// "<method>/<variant>" (a cv-tuning spec with several learners:
// "alphaSplit/noisy-gd") all carry one: a method keeps one color across
// its variants, and a variant keeps one line pattern and marker across
// methods, so that both can be read off the figure. Other labels get the
// color and marker of their index.
func methodStyles(methods []string) []style {
	out := make([]style, len(methods))
	var bases, variants []string
	paired := len(methods) > 0
	for _, m := range methods {
		b, v, ok := strings.Cut(m, "/")
		if !ok {
			paired = false
			break
		}
		if !slices.Contains(bases, b) {
			bases = append(bases, b)
		}
		if !slices.Contains(variants, v) {
			variants = append(variants, v)
		}
	}
	for i, m := range methods {
		if !paired {
			out[i] = style{color: seriesColors[i%len(seriesColors)], glyph: plotutil.Shape(i)}
			continue
		}
		b, v, _ := strings.Cut(m, "/")
		bi, vi := slices.Index(bases, b), slices.Index(variants, v)
		out[i] = style{color: seriesColors[bi%len(seriesColors)], glyph: plotutil.Shape(vi), dashes: variantDashes[vi%len(variantDashes)]}
	}
	return out
}

// build makes the gonum/plot objects for spec without legends.
func build(spec FigureSpec, rows []results.SummaryRow) (*figure, error) {
	data, err := layout(spec, rows)
	if err != nil {
		return nil, err
	}
	fig := &figure{data: data}
	drawn := make([]*seriesParts, len(data.Methods)) // first parts of each method, for the legend
	styles := methodStyles(data.Methods)
	var (
		refH      *hLine
		refMethod *hLine // the Reference method's line
		refDiag   *plotter.Function
	)
	for _, pd := range data.Panels {
		p := plot.New()
		p.Title.Text = pd.Dataset
		if pd.Synthetic {
			p.Title.Text = pd.Dataset + "\n" + SyntheticLabel
			p.Title.TextStyle.Color = syntheticColor
		}
		p.X.Label.Text = data.XLabel
		if p.X.Label.Text == "" {
			p.X.Label.Text = pd.XName
		}
		p.Y.Label.Text = cmp.Or(pd.YLabel, data.YLabel)
		p.Legend.Top = true
		p.Legend.TextStyle.Font.Size = vg.Points(10)
		p.Add(plotter.NewGrid())

		var parts []seriesParts
		for _, s := range pd.Series {
			sp, err := newSeriesParts(s, styles[s.Index])
			if err != nil {
				return nil, fmt.Errorf("plots: figure %q: dataset %q, method %q: %w", spec.Name, pd.Dataset, s.Method, err)
			}
			if sp.Bars != nil {
				p.Add(sp.Bars)
			}
			p.Add(sp.Line, sp.Points)
			parts = append(parts, sp)
			if drawn[s.Index] == nil {
				drawn[s.Index] = &sp
			}
		}
		empty := len(pd.Series) == 0
		if empty {
			p.Title.Text += "\n(no finite values)"
		}

		if spec.RefLine != nil && !(spec.LogY && *spec.RefLine <= 0) && !empty {
			h := &hLine{Y: *spec.RefLine, LineStyle: refStyle()}
			p.Add(h)
			if refH == nil {
				refH = h
			}
		}
		if !math.IsNaN(pd.Ref) && !empty {
			h := &hLine{Y: pd.Ref, LineStyle: methodRefStyle()}
			p.Add(h)
			if refMethod == nil {
				refMethod = h
			}
		}
		if spec.DiagonalRef && !empty {
			f := plotter.NewFunction(func(x float64) float64 { return x })
			f.LineStyle = refStyle()
			p.Add(f)
			if refDiag == nil {
				refDiag = f
			}
		}

		setScales(p, spec, empty)
		fig.panels = append(fig.panels, p)
		fig.parts = append(fig.parts, parts)
	}
	for i, sp := range drawn {
		if sp != nil {
			fig.legend = append(fig.legend, legendEntry{data.Methods[i], []plot.Thumbnailer{sp.Line, sp.Points}})
		}
	}
	if refMethod != nil {
		fig.legend = append(fig.legend, legendEntry{spec.Reference + " (reference)", []plot.Thumbnailer{refMethod}})
	}
	if refH != nil {
		fig.legend = append(fig.legend, legendEntry{fmt.Sprintf("reference (y = %.4g)", refH.Y), []plot.Thumbnailer{refH}})
	}
	if refDiag != nil {
		fig.legend = append(fig.legend, legendEntry{"y = x", []plot.Thumbnailer{refDiag}})
	}
	return fig, nil
}

func refStyle() draw.LineStyle {
	return draw.LineStyle{Color: refColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
}

// methodRefStyle is the line of a Reference method: black, dash-dotted,
// heavier than refStyle so that it reads as data, not as a guide.
func methodRefStyle() draw.LineStyle {
	return draw.LineStyle{Color: color.Black, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(7), vg.Points(3), vg.Points(2), vg.Points(3)}}
}

// newSeriesParts makes the line, markers and error bars of one series.
func newSeriesParts(s series, st style) (seriesParts, error) {
	c, glyph := st.color, st.glyph
	xys := make(plotter.XYs, len(s.Points))
	var bars ciBars
	for i, p := range s.Points {
		xys[i] = plotter.XY{X: p.XPlot, Y: p.Mean}
		if p.HasCI {
			bars = append(bars, ciBar{X: p.XPlot, Low: p.CILow, High: p.CIHigh})
		}
	}
	line, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return seriesParts{}, err
	}
	line.Color = c
	line.Width = vg.Points(1.25)
	line.Dashes = st.dashes
	pts.Color = c
	pts.Shape = glyph
	pts.Radius = vg.Points(3)
	sp := seriesParts{Line: line, Points: pts}
	if len(bars) > 0 {
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return seriesParts{}, err
		}
		eb.Color = c
		eb.Width = vg.Points(0.9)
		eb.CapWidth = vg.Points(4)
		sp.Bars = eb
	}
	return sp, nil
}

// setScales applies log scales and makes degenerate ranges drawable.
func setScales(p *plot.Plot, spec FigureSpec, empty bool) {
	if empty {
		return // axes stay linear: there is no positive range to show
	}
	if spec.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		widenLog(&p.X)
	}
	if spec.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		widenLog(&p.Y)
	}
}

// widenLog widens a single-valued log axis range by a factor √10 each way;
// the linear default (min−1, max+1) could reach ≤ 0.
func widenLog(a *plot.Axis) {
	if a.Min == a.Max {
		a.Min /= math.Sqrt(10)
		a.Max *= math.Sqrt(10)
	}
}
