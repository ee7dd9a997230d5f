package plots

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
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
	// Caption is the line under the title that says what every point is:
	// the profile run, the replicates per point and what the error bars
	// are. Render requires Caption.Profile; the runner fills it (and
	// CILevel) from the spec when a kind leaves them empty.
	Caption Caption
	// Metric selects the rows with SummaryRow.Metric == Metric. Required
	// unless Metrics is set.
	Metric string
	// Metrics, when not empty, draws several metrics in one figure (e.g. the
	// privacy breakdown of Ligett et al. 2017, Figure 3: testing vs
	// generating loss): one line per (method, metric), labelled
	// "method: <metric label>" and ordered method-major. A method keeps its
	// colour and marker across its metrics; metric k of Metrics is drawn
	// with line pattern k (solid, dashed, dotted, dash-dotted). Metric must
	// then be empty; Methods still selects and orders the methods.
	Metrics []string
	// MetricLabels names metrics of Metrics in the legend ("ε of the
	// tests" rather than test_eps); a metric without an entry is shown by
	// its column name.
	MetricLabels map[string]string
	// XLabel and YLabel are the axis labels. Empty XLabel means the XName of
	// panel's first row; empty YLabel means Metric. A label too long for
	// its axis is wrapped onto a second line, then set smaller. When every
	// panel has the same y label, only the panels of the first column show
	// it.
	XLabel, YLabel string
	// XLabels label a panel's x axis by the XName of its rows when XLabel
	// is empty (a figure across sweeps: "eps1" → "ε1 (zCDP: ρ1 = ε1²/2)");
	// an XName without an entry labels its axis itself.
	XLabels map[string]string
	// LogX and LogY put the axis on a log10 scale. A log axis cannot show
	// 0 or below, and no point is left out without a word: on a log y
	// axis a point whose mean is ≤ 0 (a tail of 0: no draw exceeded the
	// threshold) is drawn at the panel's floor, half a decade below its
	// smallest positive value, with the series' marker over a downward
	// arrow, and the line is broken there; an error bar whose lower end is
	// ≤ 0 runs down to the floor. A point whose x is ≤ 0 on a log x axis,
	// or whose x or mean is not finite, is not drawn (its line is broken
	// there too). The caption's note names every such point (panel,
	// series, x) and the legend has an entry for the floor's marker.
	LogX, LogY bool
	// Methods fixes the order of lines and legend entries, and selects them:
	// rows of other methods are not drawn. Empty means all methods, in order
	// of first appearance among the matching rows. No duplicates.
	Methods []string
	// Styles fixes the colour, marker and line pattern of methods, so that a
	// method is drawn alike in every figure of a paper whatever the other
	// methods of the figure (a kind keeps one table per paper, keyed by
	// method; see [PaletteStyle]). A label "<method>/<variant>" without an
	// entry of its own takes the colour of <method> and the marker and
	// line pattern of its variant. Methods without an entry get the
	// palette style of their index in Methods.
	Styles map[string]Style
	// Jitter shifts each method's points horizontally by a fixed,
	// deterministic offset so that the error bars of different methods at the
	// same x do not overlap. Method k of the M methods with rows in the
	// panel (in Methods order, 0-based) is drawn at
	//
	//	x + Jitter · s · (2k/(M−1) − 1)
	//
	// where s is the smallest gap between two neighbouring x of the panel
	// (1 when there is a single x), but at most MaxJitterSpan·(largest x −
	// smallest x)/Jitter, so the spread never exceeds MaxJitterSpan of the
	// data range each way; on a log x axis all of this is in log10 units,
	// i.e. multiplicative. The offsets are symmetric around x and span at
	// most ±Jitter·s: every point stays nearer its own x than any other x
	// of the panel (its x cell). Zero means no jitter; must be in
	// [0, 0.5).
	Jitter float64
	// RefLines are horizontal reference lines (e.g. 0.5 for the AUC of a
	// random classifier, a theoretical bound), each label in its own grey
	// line pattern with one legend entry (lines of several panels sharing
	// a label share both). The y axis is extended to include them. A line
	// ≤ 0 is skipped on a log y axis.
	RefLines []RefLine
	// DiagonalRef draws a dashed y = x reference line across the panel,
	// clipped to its axes; the y axis is extended to the x range of the
	// data so that the line is seen over all of it. DiagonalLabel is its
	// legend entry; empty means "y = x".
	DiagonalRef   bool
	DiagonalLabel string
	// Width and Height are the size of one panel in inches; zero means
	// DefaultWidth × DefaultHeight. Must be ≥ 0.
	Width, Height float64
	// ErrorBars selects the error bar of a point: "" or "ci", the row's
	// CILow..CIHigh (the percentile-bootstrap CI of the mean); "sd",
	// Mean ± SD (one standard deviation of the replicates, as the error bars
	// of Wang, Kifer & Lee 2019, Figures 1–4). A row with a non-finite SD
	// (a single value) gets no bar.
	ErrorBars string
	// PanelBy, when not nil, puts rows into panels by the keys it returns
	// for each row (the panels' titles; a row may be drawn in several
	// panels, or none), in order of first appearance; nil gives one panel
	// per dataset. With several swept quantities in one figure, leave
	// XLabel empty: each panel's x axis is then labelled with the XName of
	// its rows.
	PanelBy func(results.SummaryRow) []string
	// Panels, when not empty, fixes the panels and their order (filled row
	// by row, Columns to a row), as a paper lays out its sub-figures: a
	// listed panel without rows is drawn empty and titled "not run", and
	// rows of panels not listed are not drawn. No duplicates.
	Panels []string
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
	// Notions says what each method's numbers are, privacy-wise: the
	// notion its points are stated under ("pure ε-DP", "(ε, δ)-DP, δ =
	// 0.01", "ρ-zCDP, ρ = 0.1875", "ex-post ε", "not private"), and
	// "declared by the method" for a method the harness does not audit
	// (an external or Go-extension method). It is keyed by method and
	// appended to the method's legend entries ("method — notion"; in a
	// several-metric figure "method: metric — notion"), or with
	// NotionsByPanel to the title of the panel whose key is the method (a
	// figure whose panels are the methods and whose lines are something
	// else). A method without an entry is labelled as it is. The runner
	// fills Notions from the run's privacy ledger ([LedgerNotions]) when a
	// kind leaves it nil.
	Notions        map[string]string
	NotionsByPanel bool
	// Marks are points drawn with a distinct mark, a black ring around
	// their marker, each named by its row's dataset, method (the method,
	// not a several-metric label: every metric of the method is marked)
	// and x. MarkLabel is the mark's legend entry; empty means "fits over
	// their privacy level". The runner fills Marks for an experiment that
	// implements runner.FigureMarker: the points whose fits returned more
	// privacy loss than the level on the x axis.
	Marks     []Mark
	MarkLabel string
}

// Mark names a point of a figure to be marked (FigureSpec.Marks): the
// summary row of Dataset, Method and X.
type Mark struct {
	Dataset, Method string
	X               float64
}

// MaxJitterSpan caps the jitter: no point is moved by more than this
// fraction of the panel's x range (see FigureSpec.Jitter).
const MaxJitterSpan = 0.03

// RefLine is a horizontal reference line of a figure.
type RefLine struct {
	// Y is where the line is drawn. Required, finite.
	Y float64
	// Label is its legend entry; empty means "reference (y = <Y>)".
	Label string
	// Panel, when not empty, draws the line only in the panel with this
	// key (a per-dataset quantity such as the norm of one dataset's
	// optimum); empty means every panel.
	Panel string
}

// Caption says, under a figure's title, how each point was made. Render
// draws it as one line (wrapped to the figure's width):
//
//	<Profile> profile · <Replicates> · bars: <Bars>
//
// then Note, if any, on the lines below.
type Caption struct {
	// Profile is the spec profile whose runs the figure draws ("paper",
	// "quick", ...). Required by Render. A profile other than "paper" is
	// marked "(reduced settings, not the paper's)" so that a quick figure
	// cannot pass for a reproduction.
	Profile string
	// Replicates says what each point is a mean over, e.g. "20 replicates
	// per point". Empty means "n = N per point" from the N of the rows
	// drawn with an error bar (of all rows drawn when none has a bar),
	// "n = N1–N2 per point" when they differ.
	Replicates string
	// Bars says what the error bars are. Empty means, by ErrorBars: "ci",
	// "<CILevel>% bootstrap CI of the mean" ("bootstrap CI of the mean"
	// when CILevel is zero); "sd", "±1 sd over the replicates"; and
	// "none (one value per point)" when no point has a bar.
	Bars string
	// CILevel is the level of the rows' intervals, in (0, 1); zero when
	// not known. The runner sets it from output.ci_level.
	CILevel float64
	// Note is drawn under the caption line: what the figure must say and
	// the reader cannot see (e.g. that two lines coincide by
	// construction, or that a loss is counted twice).
	Note string
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
	for m := range spec.MetricLabels {
		if !seenMetric[m] {
			errs = append(errs, fmt.Errorf("metric labels: %q is not one of metrics", m))
		}
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
	for i, r := range spec.RefLines {
		if !finite(r.Y) {
			errs = append(errs, fmt.Errorf("ref_lines[%d]: must be finite (got %v)", i, r.Y))
		}
	}
	if spec.ErrorBars != "" && spec.ErrorBars != "ci" && spec.ErrorBars != "sd" {
		errs = append(errs, fmt.Errorf("error bars: %q is not \"ci\" or \"sd\"", spec.ErrorBars))
	}
	if l := spec.Caption.CILevel; !(l == 0 || l > 0 && l < 1) {
		errs = append(errs, fmt.Errorf("caption: ci level %v is not in (0, 1)", l))
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
	for m, st := range spec.Styles {
		if st.Color == nil || st.Shape == nil {
			errs = append(errs, fmt.Errorf("styles[%q]: colour and shape required", m))
		}
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
	listed := make(map[string]bool, len(spec.Panels))
	for i, p := range spec.Panels {
		if listed[p] {
			errs = append(errs, fmt.Errorf("panels[%d]: duplicate panel %q", i, p))
		}
		listed[p] = true
	}
	if len(spec.Panels) > 0 && len(spec.MetricPanels) > 0 {
		errs = append(errs, errors.New("panels and metric panels: set one, not both"))
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
	N             int  // the row's N, for the caption
	Marked        bool // one of FigureSpec.Marks: drawn with a ring
	CIFloor       bool // the interval's lower end is ≤ 0: drawn down to the floor
	// Floor marks a mean ≤ 0 on a log y axis: the point is drawn at the
	// panel's floor (panelData.Floor) with the floor glyph, not on the
	// line; Mean keeps the row's value.
	Floor bool
}

// offPoint is a row of a panel that is not drawn at its value: at the
// floor (a mean ≤ 0 on a log y axis) or not at all. The caption's note
// names each.
type offPoint struct {
	Method int // index in figureData.Methods
	X      float64
	Mean   float64 // the row's mean
	Why    offReason
}

// offReason says why a row is not drawn at its value.
type offReason int

const (
	offFloor     offReason = iota // mean ≤ 0 on a log y axis: drawn at the floor
	offNoFloor                    // mean ≤ 0 on a log y axis in a panel with no positive value: not drawn
	offNotFinite                  // x or mean NaN or ±Inf: not drawn
	offLogX                       // x ≤ 0 on a log x axis: not drawn
)

// series is one method's line in one panel.
type series struct {
	Method string
	Index  int     // position in figureData.Methods: color, marker and jitter slot
	Points []point // sorted by X
	// Gaps are the x of the method's rows in the panel that are not drawn
	// (offNotFinite, offLogX, offNoFloor): the line is broken there.
	Gaps []float64
}

// panelData is the data of one panel (a dataset's, unless PanelBy or
// MetricPanels is set).
type panelData struct {
	Dataset   string // the panel key and title
	XName     string // of the panel's first row
	YLabel    string // the panel's own y label (MetricPanels); empty: the figure's
	Synthetic bool
	NotRun    bool     // listed in FigureSpec.Panels but no row falls in it
	Series    []series // in method order; methods without points are absent
	// Present are the indices (in figureData.Methods) of the methods with
	// a row in the panel, finite or not, in order: their jitter slots.
	Present []int
	// XValues are the distinct x of the panel's points, sorted: the ticks
	// of its x axis.
	XValues []float64
	// Ref is the mean of the Reference method's row in the panel; NaN
	// when the panel has none, or its mean is not finite (or ≤ 0 on a log
	// y axis: then RefOff is set, and the caption's note says so).
	Ref    float64
	RefOff bool
	// Floor is where a log y axis draws the panel's means ≤ 0 and the
	// lower ends ≤ 0 of its error bars: half a decade (a factor √10)
	// below the smallest positive value the panel shows (means, interval
	// ends, reference lines). NaN when the panel needs none.
	Floor float64
	// Off are the rows not drawn at their value, in row order.
	Off []offPoint
}

// figureData is the figure after filtering, ordering and jitter, before
// any gonum/plot object is made.
type figureData struct {
	Methods []string // figure-wide method order
	// Bases are the method of each entry of Methods and Variants the
	// index of its metric (several-metric figures; else 0), for styles.
	Bases    []string
	Variants []int
	Panels   []panelData
	XLabel   string
	YLabel   string
}

// layout filters rows to spec.Metric and arranges them into panels and
// series. It only selects, orders and offsets values; it computes no
// statistics.
func layout(spec FigureSpec, rows []results.SummaryRow) (figureData, error) {
	if err := spec.validate(); err != nil {
		return figureData{}, fmt.Errorf("plots: figure %q: %w", spec.Name, err)
	}
	var bases []string
	var variants []int
	if len(spec.Metrics) > 0 {
		metrics := spec.Metrics
		if spec, rows, bases, variants = combineMetrics(spec, rows); len(rows) == 0 {
			return figureData{}, fmt.Errorf("plots: figure %q: no rows with metrics %q for methods %q", spec.Name, metrics, spec.Methods)
		}
	}
	panelsOf := func(r results.SummaryRow) []string {
		if spec.PanelBy != nil {
			return spec.PanelBy(r)
		}
		return []string{r.Dataset}
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
		panelsOf = func(r results.SummaryRow) []string { return []string{labels[r.Metric]} }
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
	fig.Bases, fig.Variants = bases, variants
	if fig.Bases == nil {
		fig.Bases, fig.Variants = fig.Methods, make([]int, len(fig.Methods))
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
	for _, key := range spec.Panels {
		panelIndex[key] = len(fig.Panels)
		fig.Panels = append(fig.Panels, panelData{Dataset: key, Ref: math.NaN(), NotRun: true})
	}

	marked := make(map[Mark]bool, len(spec.Marks))
	for _, m := range spec.Marks {
		marked[m] = true
	}

	// Group by panel (order of first appearance), then by method.
	cells := make(map[[2]string][]point) // (panel, method) → points
	type cellKey struct {
		panel, method string
		x             float64
	}
	seen := make(map[cellKey]bool)
	refSeen := make(map[string]bool)
	for _, r := range matched {
		_, selected := methodIndex[r.Method]
		isRef := spec.Reference != "" && r.Method == spec.Reference
		if !selected && !isRef {
			continue // not selected by spec.Methods
		}
		for _, panel := range panelsOf(r) {
			p, ok := panelIndex[panel]
			if !ok {
				if len(spec.Panels) > 0 {
					continue // not one of the listed panels
				}
				p = len(fig.Panels)
				panelIndex[panel] = p
				fig.Panels = append(fig.Panels, panelData{Dataset: panel, Ref: math.NaN()})
			}
			pd := &fig.Panels[p]
			pd.NotRun = false
			if pd.XName == "" && !isRef {
				pd.XName = r.XName
			}
			if r.DataSource == "synthetic" {
				pd.Synthetic = true
			}
			if mi, ok := methodIndex[r.Method]; ok && !isRef && !slices.Contains(pd.Present, mi) {
				pd.Present = append(pd.Present, mi)
			}
			if isRef {
				if refSeen[panel] {
					return figureData{}, fmt.Errorf("plots: figure %q: two rows of reference %q in panel %q", spec.Name, spec.Reference, panel)
				}
				refSeen[panel] = true
				if finite(r.Mean) && !(spec.LogY && r.Mean <= 0) {
					pd.Ref = r.Mean
				} else {
					pd.RefOff = true // said in the caption's note
				}
				continue
			}
			k := cellKey{panel, r.Method, r.X}
			if seen[k] {
				return figureData{}, fmt.Errorf("plots: figure %q: duplicate row for panel %q, method %q, %s = %v",
					spec.Name, panel, r.Method, r.XName, r.X)
			}
			seen[k] = true
			mi := methodIndex[r.Method]
			switch {
			case !finite(r.X) || !finite(r.Mean):
				pd.Off = append(pd.Off, offPoint{Method: mi, X: r.X, Mean: r.Mean, Why: offNotFinite})
				continue
			case spec.LogX && r.X <= 0:
				pd.Off = append(pd.Off, offPoint{Method: mi, X: r.X, Mean: r.Mean, Why: offLogX})
				continue
			}
			pt := point{X: r.X, XPlot: r.X, Mean: r.Mean, CILow: r.CILow, CIHigh: r.CIHigh, N: r.N,
				Marked: marked[Mark{Dataset: r.Dataset, Method: fig.Bases[mi], X: r.X}],
				Floor:  spec.LogY && r.Mean <= 0}
			if pt.Floor {
				pd.Off = append(pd.Off, offPoint{Method: mi, X: r.X, Mean: r.Mean, Why: offFloor})
			}
			if spec.ErrorBars == "sd" {
				pt.CILow, pt.CIHigh = r.Mean-r.SD, r.Mean+r.SD
			}
			pt.HasCI = finite(pt.CILow) && finite(pt.CIHigh) && pt.CILow <= pt.CIHigh
			key := [2]string{panel, r.Method}
			cells[key] = append(cells[key], pt)
		}
	}

	if len(fig.Panels) == 0 || !slices.ContainsFunc(fig.Panels, func(p panelData) bool { return !p.NotRun }) {
		return figureData{}, fmt.Errorf("plots: figure %q: no rows with metric %q for methods %q",
			spec.Name, spec.Metric, spec.Methods)
	}
	for pi := range fig.Panels {
		pd := &fig.Panels[pi]
		pd.Floor = math.NaN()
		if spec.LogY {
			setFloor(pd, spec.RefLines, cells)
		}
		for mi, m := range fig.Methods {
			pts := cells[[2]string{pd.Dataset, m}]
			var gaps []float64
			for _, o := range pd.Off {
				if o.Method == mi && o.Why != offFloor {
					gaps = append(gaps, o.X)
				}
			}
			if len(pts) == 0 {
				continue
			}
			slices.SortFunc(pts, func(a, b point) int { return cmp.Compare(a.X, b.X) })
			pd.Series = append(pd.Series, series{Method: m, Index: mi, Points: pts, Gaps: gaps})
			for _, p := range pts {
				pd.XValues = append(pd.XValues, p.X)
			}
		}
		slices.Sort(pd.XValues)
		pd.XValues = slices.Compact(pd.XValues)
		slices.Sort(pd.Present)
		applyJitter(pd, spec.Jitter, spec.LogX)
		if spec.LogY {
			clampLogCI(pd)
		}
	}
	return fig, nil
}

// setFloor sets the floor of a panel on a log y axis (panelData.Floor)
// when it has a mean ≤ 0 or an interval whose lower end is ≤ 0: a factor
// √10 below the smallest positive value the panel shows — a mean, an
// interval end, a reference line — so that what is drawn there cannot be
// read as one of them. A panel with no positive value has no floor: its
// means ≤ 0 are then not drawn (offNoFloor), their cells emptied. It only
// compares values; it computes no statistics.
func setFloor(pd *panelData, refs []RefLine, cells map[[2]string][]point) {
	need, low := false, math.Inf(1)
	keep := func(v float64) {
		if v > 0 && finite(v) {
			low = math.Min(low, v)
		}
	}
	var keys [][2]string
	for k, pts := range cells {
		if k[0] != pd.Dataset {
			continue
		}
		keys = append(keys, k)
		for _, p := range pts {
			need = need || p.Floor || p.HasCI && p.CILow <= 0
			if !p.Floor {
				keep(p.Mean)
			}
			if p.HasCI {
				keep(p.CILow)
				keep(p.CIHigh)
			}
		}
	}
	if !need {
		return
	}
	for _, r := range refs {
		if r.Panel == "" || r.Panel == pd.Dataset {
			keep(r.Y)
		}
	}
	keep(pd.Ref)
	if !math.IsInf(low, 1) {
		pd.Floor = low / math.Sqrt(10)
		return
	}
	// Nothing positive to set a floor under: the means ≤ 0 are not drawn.
	for i := range pd.Off {
		if pd.Off[i].Why == offFloor {
			pd.Off[i].Why = offNoFloor
		}
	}
	for _, k := range keys {
		cells[k] = slices.DeleteFunc(cells[k], func(p point) bool { return p.Floor })
	}
}

// combineMetrics rewrites a several-metric figure as a one-metric figure
// whose "methods" are the (method, metric) pairs, and returns the method
// and the metric index of each pair.
func combineMetrics(spec FigureSpec, rows []results.SummaryRow) (FigureSpec, []results.SummaryRow, []string, []int) {
	const combined = "\x00combined"
	label := func(method, metric string) string { return method + ": " + cmp.Or(spec.MetricLabels[metric], metric) }
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
	var pairs, bases []string
	var variants []int
	for _, m := range methods {
		for k, metric := range spec.Metrics {
			pairs, bases, variants = append(pairs, label(m, metric)), append(bases, m), append(variants, k)
		}
	}
	if spec.YLabel == "" {
		var names []string
		for _, m := range spec.Metrics {
			names = append(names, cmp.Or(spec.MetricLabels[m], m))
		}
		spec.YLabel = strings.Join(names, ", ")
	}
	spec.Metric, spec.Metrics, spec.Methods = combined, nil, pairs
	return spec, out, bases, variants
}

// applyJitter sets XPlot for every point of the panel. The offset, in axis
// units (log10 units on a log axis), is jitterOffset(k, n)·jitter·s for
// the k-th of the n methods with rows in the panel (pd.Present: a method
// whose cells all failed keeps its slot, and the slots are symmetric
// around x whichever methods a panel shows), where s is the smallest gap between neighbouring distinct x of
// the panel, capped so that jitter·s ≤ MaxJitterSpan·(x range) (1 when the
// panel has a single x, where the axis range then scales with the offsets
// anyway). Since jitter < ½, every point stays nearer its own x than any
// other x. Offsets are fixed by method index, not random, and symmetric
// around x.
func applyJitter(pd *panelData, jitter float64, logX bool) {
	nMethods := len(pd.Present)
	if jitter == 0 || nMethods < 2 {
		return
	}
	fwd, inv := func(x float64) float64 { return x }, func(t float64) float64 { return t }
	if logX {
		fwd, inv = math.Log10, func(t float64) float64 { return math.Pow(10, t) }
	}
	ts := make([]float64, len(pd.XValues))
	for i, x := range pd.XValues {
		ts[i] = fwd(x)
	}
	s := 1.0
	if len(ts) > 1 {
		s = math.Inf(1)
		for i := 1; i < len(ts); i++ {
			s = math.Min(s, ts[i]-ts[i-1])
		}
		s = math.Min(s, MaxJitterSpan*(ts[len(ts)-1]-ts[0])/jitter)
	}
	for si := range pd.Series {
		sr := &pd.Series[si]
		off := jitterOffset(slices.Index(pd.Present, sr.Index), nMethods) * jitter * s
		for pi := range sr.Points {
			p := &sr.Points[pi]
			p.XPlot = inv(fwd(p.X) + off)
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

// clampLogCI handles intervals whose lower end is ≤ 0 on a log y axis:
// the lower end is drawn at the panel's floor (panelData.Floor), so the
// bar runs down to where the panel draws 0 rather than vanishing. This is
// a drawing choice only; the row is unchanged.
func clampLogCI(pd *panelData) {
	for si := range pd.Series {
		for pi := range pd.Series[si].Points {
			p := &pd.Series[si].Points[pi]
			if p.HasCI && p.CILow <= 0 {
				p.CILow, p.CIFloor = pd.Floor, true
				p.HasCI = p.CIHigh >= pd.Floor // false when the panel has no floor (NaN)
			}
		}
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// seriesParts are the plotters made for one series, kept for tests.
type seriesParts struct {
	// Line and Points hold the points drawn at their value, in x order
	// (the legend's thumbnails). The line is drawn as Segments: Line
	// broken at the points drawn at the floor and at the rows not drawn
	// (series.Gaps); Line itself when nothing breaks it.
	Line     *plotter.Line
	Segments []*plotter.Line
	Points   *plotter.Scatter
	Floor    *plotter.Scatter    // the points drawn at the floor; nil when none
	Bars     *plotter.YErrorBars // nil when no point has an interval
	Marks    *plotter.Scatter    // the rings of its marked points; nil when none
}

// figure is a built figure: the plots and what was handed to them.
type figure struct {
	data   figureData
	panels []*plot.Plot
	parts  [][]seriesParts // parallel to data.Panels[i].Series
	// guides are the reference lines of each panel, kept for tests.
	guides [][]plot.Plotter
	// xTicks are the panels' x tickers, whose label spacing Render fits
	// to the drawn axis length.
	xTicks []*sweptTicks
	// yLabels are the panels' y axis labels ("" for none). Render draws
	// them itself, centred on the data area: gonum/plot centres a y label
	// on the linear midpoint of the axis range, which on a log axis lies
	// near the top, and then shrinks the data area to make the label fit.
	yLabels []string
	// legend holds one entry per method drawn in any panel, then the
	// reference lines, for Render's shared legend.
	legend []legendEntry
	// caption is the line under the title; note the lines under it.
	caption, note string
}

type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// Build returns the panels of spec drawn from rows, one *plot.Plot per
// dataset in order of first appearance among the rows with spec.Metric,
// together with the dataset names, without saving anything. Each panel has
// its own legend of the methods it shows; the figure title and caption are
// not included (Render draws them above the panels).
//
// Rows with a non-finite X or Mean are not drawn, and their line is
// broken there; a row whose CILow..CIHigh is not finite or not ordered is
// drawn without an error bar. On a log y axis a mean ≤ 0 is drawn at the
// panel's floor and an interval whose lower end is ≤ 0 is drawn down to
// it (see FigureSpec.LogY); Render's caption names every row not drawn at
// its value.
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
		p.Y.Label.Text = fig.yLabels[i]
		for j, s := range fig.data.Panels[i].Series {
			sp := fig.parts[i][j]
			p.Legend.Add(legendName(spec, fig.data, s.Index), sp.Line, sp.Points)
		}
	}
	return fig.panels, names, nil
}

// legendName is the legend entry of method i of data: its label, and the
// notion of its method from spec.Notions ("label — notion") unless the
// notions go to the panels' titles.
func legendName(spec FigureSpec, data figureData, i int) string {
	name := data.Methods[i]
	if n := spec.Notions[data.Bases[i]]; n != "" && !spec.NotionsByPanel {
		name += " — " + n
	}
	return name
}

// markGlyph is the ring drawn around a marked point (FigureSpec.Marks):
// black, larger than any marker, so that it reads whatever the method's
// colour and marker.
func markGlyph() draw.GlyphStyle {
	return draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6.5), Shape: thickRing{}}
}

// thickRing is a ring glyph drawn with a 1.6 pt line.
type thickRing struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (thickRing) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.6)})
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// Colors of the figure. Dark colors stay legible with thin error bars.
var (
	syntheticColor = color.RGBA{R: 170, A: 255}
	refColor       = color.Gray{Y: 110}
)

// panelSize returns the panel size of spec in points.
func panelSize(spec FigureSpec) (w, h vg.Length) {
	return vg.Length(cmp.Or(spec.Width, DefaultWidth)) * vg.Inch, vg.Length(cmp.Or(spec.Height, DefaultHeight)) * vg.Inch
}

// build makes the gonum/plot objects for spec without legends.
func build(spec FigureSpec, rows []results.SummaryRow) (*figure, error) {
	data, err := layout(spec, rows)
	if err != nil {
		return nil, err
	}
	fig := &figure{data: data}
	drawn := make([]*seriesParts, len(data.Methods)) // first parts of each method, for the legend
	styles := methodStyles(data.Methods, data.Bases, data.Variants, spec.Styles)
	cols := len(data.Panels)
	if spec.Columns > 0 && spec.Columns < cols {
		cols = spec.Columns
	}
	sharedY := true // every panel has the figure's y label
	for _, pd := range data.Panels {
		sharedY = sharedY && pd.YLabel == ""
	}
	panelW, panelH := panelSize(spec)
	var (
		refs       = make([]*hLine, len(spec.RefLines))
		refMethod  *hLine // the Reference method's line
		refDiag    *diagLine
		markThumb  *plotter.Scatter // the first rings drawn, for the legend
		floorDrawn bool             // some point is drawn at a floor
	)
	for pi, pd := range data.Panels {
		p := plot.New()
		title := pd.Dataset
		if n := spec.Notions[pd.Dataset]; n != "" && spec.NotionsByPanel {
			title += " — " + n
		}
		p.Title.Text = title
		switch {
		case pd.NotRun:
			p.Title.Text = title + "\n(not run)"
		case pd.Synthetic:
			p.Title.Text = title + "\n" + SyntheticLabel
			p.Title.TextStyle.Color = syntheticColor
		}
		p.X.Label.Text = data.XLabel
		if p.X.Label.Text == "" {
			p.X.Label.Text = cmp.Or(spec.XLabels[pd.XName], pd.XName)
		}
		p.Y.Label.Text = cmp.Or(pd.YLabel, data.YLabel)
		if sharedY && pi%cols != 0 {
			p.Y.Label.Text = "" // one y label per row of panels
		}
		p.Legend.Top = true
		p.Legend.TextStyle.Font.Size = vg.Points(10)
		p.Add(plotter.NewGrid())

		var parts []seriesParts
		var guides []plot.Plotter
		for _, s := range pd.Series {
			sp, err := newSeriesParts(s, styles[s.Index], pd.Floor)
			if err != nil {
				return nil, fmt.Errorf("plots: figure %q: dataset %q, method %q: %w", spec.Name, pd.Dataset, s.Method, err)
			}
			if sp.Bars != nil {
				p.Add(sp.Bars)
			}
			for _, l := range sp.Segments {
				p.Add(l)
			}
			if len(sp.Points.XYs) > 0 {
				p.Add(sp.Points)
			}
			if sp.Floor != nil {
				p.Add(sp.Floor)
				floorDrawn = true
			}
			if sp.Marks != nil {
				p.Add(sp.Marks)
				if markThumb == nil {
					markThumb = sp.Marks
				}
			}
			parts = append(parts, sp)
			if drawn[s.Index] == nil {
				drawn[s.Index] = &sp
			}
		}
		empty := len(pd.Series) == 0
		switch {
		case empty && slices.ContainsFunc(pd.Off, func(o offPoint) bool { return o.Why == offNoFloor }):
			p.Title.Text += "\n(no positive values: none on a log axis)"
		case empty && !pd.NotRun:
			p.Title.Text += "\n(no finite values)"
		}

		for i, r := range spec.RefLines {
			if (spec.LogY && r.Y <= 0) || empty || (r.Panel != "" && r.Panel != pd.Dataset) {
				continue
			}
			// Lines with one label share its style and legend entry.
			first := slices.IndexFunc(spec.RefLines, func(o RefLine) bool { return r.Label != "" && o.Label == r.Label })
			if first < 0 {
				first = i
			}
			h := &hLine{Y: r.Y, LineStyle: refStyle(refSlot(spec.RefLines, first))}
			p.Add(h)
			guides = append(guides, h)
			if refs[first] == nil {
				refs[first] = h
			}
		}
		if !math.IsNaN(pd.Ref) && !empty {
			h := &hLine{Y: pd.Ref, LineStyle: methodRefStyle()}
			p.Add(h)
			guides = append(guides, h)
			if refMethod == nil {
				refMethod = h
			}
		}
		if spec.DiagonalRef && !empty {
			d := &diagLine{Min: pd.XValues[0], Max: pd.XValues[len(pd.XValues)-1], LineStyle: refStyle(0)}
			p.Add(d)
			guides = append(guides, d)
			if refDiag == nil {
				refDiag = d
			}
		}

		xt := setAxes(p, spec, pd, empty)
		fitLabels(p, panelW, panelH)
		fig.xTicks = append(fig.xTicks, xt)
		fig.yLabels = append(fig.yLabels, p.Y.Label.Text)
		p.Y.Label.Text = ""
		fig.panels = append(fig.panels, p)
		fig.parts = append(fig.parts, parts)
		fig.guides = append(fig.guides, guides)
	}
	for i, sp := range drawn {
		if sp != nil {
			fig.legend = append(fig.legend, legendEntry{legendName(spec, data, i), []plot.Thumbnailer{sp.Line, sp.Points}})
		}
	}
	if markThumb != nil {
		fig.legend = append(fig.legend, legendEntry{cmp.Or(spec.MarkLabel, "fits over their privacy level"), []plot.Thumbnailer{markThumb}})
	}
	if floorDrawn {
		thumb := &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3), Shape: floorGlyph{Marker: draw.RingGlyph{}}}}
		fig.legend = append(fig.legend, legendEntry{floorLegend(data), []plot.Thumbnailer{thumb}})
	}
	if refMethod != nil {
		fig.legend = append(fig.legend, legendEntry{spec.Reference + " (reference)", []plot.Thumbnailer{refMethod}})
	}
	for i, h := range refs {
		if h != nil {
			name := cmp.Or(spec.RefLines[i].Label, fmt.Sprintf("reference (y = %.4g)", h.Y))
			fig.legend = append(fig.legend, legendEntry{name, []plot.Thumbnailer{h}})
		}
	}
	if refDiag != nil {
		fig.legend = append(fig.legend, legendEntry{cmp.Or(spec.DiagonalLabel, "y = x"), []plot.Thumbnailer{refDiag}})
	}
	fig.caption = captionText(spec, data)
	fig.note = strings.Join(slices.DeleteFunc([]string{spec.Caption.Note, offNote(spec, data)}, func(s string) bool { return s == "" }), "\n")
	return fig, nil
}

// AsWritten is the Caption.Profile of a run whose spec has no profile of
// the name asked (runner: a --profile quick run of a spec without a
// quick profile): its own settings ran, which are not "reduced".
const AsWritten = "as written"

// captionText is the caption line of spec (see [Caption]).
func captionText(spec FigureSpec, data figureData) string {
	c := spec.Caption
	var parts []string
	switch c.Profile {
	case "":
	case AsWritten:
		parts = append(parts, "the spec's settings as written (it has no profile of the name asked)")
	default:
		prof := c.Profile + " profile"
		if c.Profile != "paper" {
			prof += " (reduced settings, not the paper's)"
		}
		parts = append(parts, prof)
	}
	lo, hi, barred := math.MaxInt, math.MinInt, false
	for _, pd := range data.Panels {
		for _, s := range pd.Series {
			for _, p := range s.Points {
				barred = barred || p.HasCI
			}
		}
	}
	for _, pd := range data.Panels {
		for _, s := range pd.Series {
			for _, p := range s.Points {
				if p.HasCI || !barred {
					lo, hi = min(lo, p.N), max(hi, p.N)
				}
			}
		}
	}
	switch {
	case c.Replicates != "":
		parts = append(parts, c.Replicates)
	case lo == hi:
		parts = append(parts, fmt.Sprintf("n = %d per point", lo))
	case lo < hi:
		parts = append(parts, fmt.Sprintf("n = %d–%d per point", lo, hi))
	}
	bars := c.Bars
	switch {
	case bars != "":
	case !barred:
		bars = "none (one value per point)"
	case spec.ErrorBars == "sd":
		bars = "±1 sd over the replicates"
	case c.CILevel > 0:
		bars = fmt.Sprintf("%s%% bootstrap CI of the mean", strconv.FormatFloat(100*c.CILevel, 'g', 4, 64))
	default:
		bars = "bootstrap CI of the mean"
	}
	parts = append(parts, "bars: "+bars)
	return strings.Join(parts, " · ")
}

// floorLegend is the legend entry of the floor's marker.
func floorLegend(data figureData) string {
	what := "0"
	for _, pd := range data.Panels {
		for _, o := range pd.Off {
			if o.Why == offFloor && o.Mean < 0 {
				what = "≤ 0"
			}
		}
	}
	return what + ": not on a log scale, drawn at the floor"
}

// maxOffSeries is the most series offNote names for one reason; the
// rest are counted.
const maxOffSeries = 24

// offNote is the caption's note on the rows not drawn at their value
// (panelData.Off) and on the error bars drawn down to the floor: for
// each reason, every panel, series and x, so that no value leaves a
// figure without a word. Empty when every row is drawn at its value.
func offNote(spec FigureSpec, data figureData) string {
	type reason struct {
		why  offReason
		head string
	}
	negative := false
	for _, pd := range data.Panels {
		for _, o := range pd.Off {
			negative = negative || o.Why == offFloor && o.Mean < 0
		}
	}
	floorHead := "Drawn at the floor, as 0 has no place on a log axis"
	if negative {
		floorHead = "Drawn at the floor, as 0 and below have no place on a log axis"
	}
	reasons := []reason{
		{offFloor, floorHead},
		{offNoFloor, "Not drawn, as 0 and below have no place on a log axis (the panel has no positive value to set a floor by)"},
		{offNotFinite, "Not drawn, with no finite value (the line is broken there)"},
		{offLogX, "Not drawn, as x ≤ 0 has no place on a log x axis (the line is broken there)"},
	}
	var sentences []string
	for _, rs := range reasons {
		var panels []string
		named, more := 0, 0
		for _, pd := range data.Panels {
			xName := cmp.Or(data.XLabel, spec.XLabels[pd.XName], pd.XName, "x")
			var items []string
			for mi, m := range data.Methods {
				var xs []float64
				for _, o := range pd.Off {
					if o.Why == rs.why && o.Method == mi {
						xs = append(xs, o.X)
					}
				}
				if len(xs) == 0 {
					continue
				}
				if named == maxOffSeries {
					more++
					continue
				}
				named++
				slices.Sort(xs)
				at := xName + " = " + formatXs(xs)
				if len(xs) > 1 && slices.Equal(xs, pd.XValues) {
					at = "every " + xName
				}
				items = append(items, m+" ("+at+")")
			}
			if len(items) == 0 {
				continue
			}
			list := strings.Join(items, ", ")
			if len(data.Panels) > 1 {
				list = pd.Dataset + ": " + list
			}
			panels = append(panels, list)
		}
		if len(panels) == 0 {
			continue
		}
		sentence := rs.head + ": " + strings.Join(panels, "; ")
		if more > 0 {
			sentence += fmt.Sprintf("; and %d more series (summary.csv has every value)", more)
		}
		sentences = append(sentences, sentence+".")
	}
	var refOff []string
	for _, pd := range data.Panels {
		if pd.RefOff {
			refOff = append(refOff, pd.Dataset)
		}
	}
	if len(refOff) > 0 {
		where := ""
		if len(data.Panels) > 1 {
			where = " in " + strings.Join(refOff, ", ")
		}
		sentences = append(sentences, fmt.Sprintf("Not drawn%s: the line of %s (reference), whose value is not finite or has no place on a log axis.", where, spec.Reference))
	}
	for _, pd := range data.Panels {
		if slices.ContainsFunc(pd.Series, func(s series) bool {
			return slices.ContainsFunc(s.Points, func(p point) bool { return p.CIFloor && p.HasCI })
		}) {
			sentences = append(sentences, "Error bars whose lower end is 0 or below run down to the floor.")
			break
		}
	}
	return strings.Join(sentences, " ")
}

// zeroLabel is the floor's tick label of a panel: "0", or "≤ 0" when a
// mean drawn there is negative.
func zeroLabel(pd panelData) string {
	if slices.ContainsFunc(pd.Off, func(o offPoint) bool { return o.Why == offFloor && o.Mean < 0 }) {
		return "≤ 0"
	}
	return "0"
}

// formatXs lists x values as the rows hold them.
func formatXs(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(parts, ", ")
}

// refSlot is the style slot of reference line i: the number of distinct
// labels before it.
func refSlot(lines []RefLine, i int) int {
	var labels []string
	for j, r := range lines[:i] {
		l := r.Label
		if l == "" {
			l = fmt.Sprint("\x00", j)
		}
		if !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
	}
	return len(labels)
}

// refStyle is the grey line pattern of reference line i (dashed, dotted,
// long-dashed, …).
func refStyle(i int) draw.LineStyle {
	dashes := [][]vg.Length{{vg.Points(4), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}, {vg.Points(9), vg.Points(3)}}
	return draw.LineStyle{Color: refColor, Width: vg.Points(1.2), Dashes: dashes[i%len(dashes)]}
}

// methodRefStyle is the line of a Reference method: black, dash-dotted,
// heavier than refStyle so that it reads as data, not as a guide.
func methodRefStyle() draw.LineStyle {
	return draw.LineStyle{Color: color.Black, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(7), vg.Points(3), vg.Points(2), vg.Points(3)}}
}

// newSeriesParts makes the line, markers and error bars of one series.
// floor is the panel's floor (panelData.Floor), where its points with
// Floor set are drawn.
func newSeriesParts(s series, st Style, floor float64) (seriesParts, error) {
	var xys, floorXYs, marked plotter.XYs
	var segments []plotter.XYs
	var bars ciBars
	var seg plotter.XYs
	lastX := math.NaN()
	for _, p := range s.Points {
		xy := plotter.XY{X: p.XPlot, Y: p.Mean}
		if p.Floor {
			xy.Y = floor
			floorXYs = append(floorXYs, xy)
			segments, seg = appendSegment(segments, seg), nil // the line breaks at the floor
		} else {
			if len(seg) > 0 && slices.ContainsFunc(s.Gaps, func(g float64) bool { return g > lastX && g < p.X }) {
				segments, seg = appendSegment(segments, seg), nil // a row between is not drawn
			}
			xys, seg, lastX = append(xys, xy), append(seg, xy), p.X
		}
		if p.HasCI {
			bars = append(bars, ciBar{X: p.XPlot, Low: p.CILow, High: p.CIHigh})
		}
		if p.Marked {
			marked = append(marked, xy)
		}
	}
	segments = appendSegment(segments, seg)
	style := func(l *plotter.Line) *plotter.Line {
		l.Color, l.Width, l.Dashes = st.Color, vg.Points(1.25), st.Dashes
		return l
	}
	// Line and Points carry the points drawn at their value (possibly
	// none: then they only style the legend's thumbnail).
	line := style(&plotter.Line{XYs: xys})
	pts := &plotter.Scatter{XYs: xys}
	pts.Color, pts.Shape, pts.Radius = st.Color, st.Shape, vg.Points(3)
	sp := seriesParts{Line: line, Points: pts}
	for _, seg := range segments {
		if len(segments) == 1 {
			sp.Segments = []*plotter.Line{line}
			break
		}
		sp.Segments = append(sp.Segments, style(&plotter.Line{XYs: seg}))
	}
	if len(floorXYs) > 0 {
		sp.Floor = &plotter.Scatter{XYs: floorXYs, GlyphStyle: draw.GlyphStyle{Color: st.Color, Radius: vg.Points(3), Shape: floorGlyph{Marker: st.Shape}}}
	}
	if len(marked) > 0 {
		rings, err := plotter.NewScatter(marked)
		if err != nil {
			return seriesParts{}, err
		}
		rings.GlyphStyle = markGlyph()
		sp.Marks = rings
	}
	if len(bars) > 0 {
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return seriesParts{}, err
		}
		eb.Color = st.Color
		eb.Width = vg.Points(0.9)
		eb.CapWidth = vg.Points(4)
		sp.Bars = eb
	}
	return sp, nil
}

// appendSegment appends seg to segs unless it is empty.
func appendSegment(segs []plotter.XYs, seg plotter.XYs) []plotter.XYs {
	if len(seg) == 0 {
		return segs
	}
	return append(segs, seg)
}

// floorGlyph is the marker of a point drawn at a log axis's floor (a
// mean ≤ 0, see FigureSpec.LogY): the series' own Marker (none in the
// legend's entry) over a short downward arrow, in the series' colour.
type floorGlyph struct{ Marker draw.GlyphDrawer }

// DrawGlyph implements draw.GlyphDrawer.
func (g floorGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	if g.Marker != nil {
		g.Marker.DrawGlyph(c, sty, pt)
	}
	r := sty.Radius
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.2)}, pt.X, pt.Y-1.1*r, pt.X, pt.Y-2.2*r)
	var head vg.Path
	head.Move(vg.Point{X: pt.X - 0.8*r, Y: pt.Y - 2.0*r})
	head.Line(vg.Point{X: pt.X + 0.8*r, Y: pt.Y - 2.0*r})
	head.Line(vg.Point{X: pt.X, Y: pt.Y - 3.1*r})
	head.Close()
	c.SetColor(sty.Color)
	c.Fill(head)
}

// setAxes applies log scales, makes degenerate ranges drawable and sets
// the tickers: the x axis ticked at the panel's swept values, the y axis
// with enough labels to read values off. It returns the x ticker.
func setAxes(p *plot.Plot, spec FigureSpec, pd panelData, empty bool) *sweptTicks {
	if empty {
		return nil // axes stay linear: there is no positive range to show
	}
	xt := &sweptTicks{Values: pd.XValues, Log: spec.LogX, Style: p.X.Tick.Label}
	p.X.Tick.Marker = xt
	// The axis spans every swept value, whatever the offsets.
	p.X.Min, p.X.Max = math.Min(p.X.Min, pd.XValues[0]), math.Max(p.X.Max, pd.XValues[len(pd.XValues)-1])
	if spec.LogX {
		p.X.Scale = plot.LogScale{}
		widenLog(&p.X)
	}
	if spec.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		if !math.IsNaN(pd.Floor) {
			// Room under the floor's markers for their arrows, and the
			// floor ticked "0" with no other tick near it.
			p.Y.Min = math.Min(p.Y.Min, pd.Floor/2)
			p.Y.Tick.Marker = floorTicks{Floor: pd.Floor, Label: zeroLabel(pd)}
		}
		widenLog(&p.Y)
	} else {
		p.Y.Tick.Marker = linearTicks{}
	}
	// An estimate of the x axis length for the label spacing; Render sets
	// the drawn length.
	w, _ := panelSize(spec)
	xt.Length = w - vg.Inch
	return xt
}

// widenLog widens a single-valued log axis range by a factor √10 each way;
// the linear default (min−1, max+1) could reach ≤ 0.
func widenLog(a *plot.Axis) {
	if a.Min == a.Max {
		a.Min /= math.Sqrt(10)
		a.Max *= math.Sqrt(10)
	}
}
