package expostsweep

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/gonum/floats"

	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// FigureStyles are the colour and marker of each method of Ligett et al.
// 2017 in every figure of the kind, per spec and across runs: noise
// reduction blue rings, doubling red squares, theory green triangles,
// theory-output orange plusses, theory-covariance purple dots. Methods
// run with another generator ("noise-reduction-<generator>") get the
// figures' free palette styles.
var FigureStyles = map[string]plots.Style{
	"noise-reduction":           {Color: plots.PaletteColor(0), Shape: plots.PaletteShape(0)},
	"doubling":                  {Color: plots.PaletteColor(1), Shape: plots.PaletteShape(1)},
	"theory":                    {Color: plots.PaletteColor(2), Shape: plots.PaletteShape(2)},
	theoryPrefix + "output":     {Color: plots.PaletteColor(3), Shape: plots.PaletteShape(3)},
	theoryPrefix + "covariance": {Color: plots.PaletteColor(4), Shape: plots.PaletteShape(4)},
}

// column is one column of the paper's figures: a dataset of a run, the
// ridge column (panels a, c) or the logistic one (b, d).
type column struct {
	e             *Experiment
	dataset       string
	first, second string // the panel letters of the task
}

// columnsOf returns the columns of runs, ridge runs first, each run's
// datasets in spec order.
func columnsOf(runs []*Experiment) []column {
	var cols []column
	for _, e := range runs {
		first, second := "a", "c"
		if e.spec.AccuracyFirst.Task == "logistic" {
			first, second = "b", "d"
		}
		for _, ds := range e.data {
			cols = append(cols, column{e: e, dataset: ds.Name, first: first, second: second})
		}
	}
	slices.SortStableFunc(cols, func(a, b column) int { return cmp.Compare(a.first, b.first) })
	return cols
}

// key is the panel key (and title) of a column's panel.
func (c column) key(letter, what string) string {
	k := fmt.Sprintf("(%s) %s, %s", letter, c.dataset, c.e.spec.AccuracyFirst.Task)
	if what != "" {
		k += ": " + what
	}
	return k
}

// Figures implements runner.Experiment: Ligett et al. 2017, Figures 1–4
// and the privacy risk factor e^ε, with this run's panels (ridge: the
// paper's a and c; logistic: b and d):
//
//	fig1-expost              ex-post ε, noise reduction vs theory (a/b) and vs doubling (c/d)
//	fig2-accuracy            achieved excess risk of each search against the requested α
//	fig3<a|b>-privacy-breakdown  ε of the accuracy tests vs ε of the hypotheses
//	fig4<a|b>-norms          ‖θ‖₂ of the output, its theoretical maximum and ‖θ*‖₂
//	risk-factor              the privacy risk factor e^ε, the paper's headline
//
// [PaperFigures] lays the ridge and logistic runs out side by side, as
// the paper does.
func (e *Experiment) Figures() []plots.FigureSpec {
	cols := columnsOf([]*Experiment{e})
	return figures(cols, "fig", "Ligett et al. 2017", func(n string) string {
		if n == "risk-factor" {
			return n + "-" + cols[0].first
		}
		return n + cols[0].first
	})
}

// PaperFigures returns Ligett et al. 2017's Figures 1–4 and the risk
// factor figure across runs of one calibration, laid out as the paper
// does: the ridge run's panels on the left (a, c), the logistic run's on
// the right (b, d); Figure 1 as its 2×2 grid. runs are the experiments of
// the runs whose summaries (concatenated) the figures are drawn from; a
// task without a run is drawn as empty "not run" panels. It returns nil
// when runs mix calibrations or hold no run.
func PaperFigures(runs []*Experiment) []plots.FigureSpec {
	if len(runs) == 0 || slices.ContainsFunc(runs, func(e *Experiment) bool { return e.cal != runs[0].cal }) {
		return nil
	}
	// One run per task: the paper has one dataset per task.
	var one []*Experiment
	for _, e := range runs {
		if !slices.ContainsFunc(one, func(o *Experiment) bool { return o.spec.AccuracyFirst.Task == e.spec.AccuracyFirst.Task }) {
			one = append(one, e)
		}
	}
	return figures(columnsOf(one), "figure", "Ligett et al. 2017", func(n string) string { return n })
}

// figures lays out the figures of cols; prefix starts the figure names and
// single names a figure with one panel per column (fig3 → fig3b per spec).
func figures(cols []column, prefix, paper string, single func(string) string) []plots.FigureSpec {
	if len(cols) == 0 {
		return nil
	}
	e0 := cols[0].e
	cal := e0.spec.AccuracyFirst.Calibration
	doubled := e0.cal == expost.AuthorsCode
	calNote := ""
	if doubled {
		calNote = "ε counts each search's test loss twice, as the paper's figures do (the authors' plotting code; rows.csv: expost_eps_single counts it once)."
	}
	colOf := func(r results.SummaryRow) (column, bool) {
		for _, c := range cols {
			if c.e.spec.ID == r.Experiment && c.dataset == r.Dataset {
				return c, true
			}
		}
		return column{}, false
	}
	roleOf := func(c column, method string) (figureRole, bool) {
		if c.e == nil {
			return figureRole{}, false // a row of no column
		}
		m, ok := c.e.methods[method]
		return m.figures, ok
	}
	// methods returns the methods of the runs with the role, in legend
	// order.
	methods := func(has func(figureRole) bool) []string {
		var out []string
		var order []int
		for _, c := range cols {
			for _, name := range c.e.spec.AccuracyFirst.Methods {
				if m, ok := c.e.methods[name]; ok && has(m.figures) && !slices.Contains(out, name) {
					out, order = append(out, name), append(order, m.figures.order)
				}
			}
		}
		idx := make([]int, len(out))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return order[a] - order[b] })
		sorted := make([]string, len(out))
		for i, j := range idx {
			sorted[i] = out[j]
		}
		return sorted
	}
	roleAny := func(m string) figureRole {
		for _, c := range cols {
			if r, ok := roleOf(c, m); ok {
				return r
			}
		}
		return figureRole{}
	}
	search := methods(func(r figureRole) bool { return r.search })
	vsTheory := methods(func(r figureRole) bool { return r.vsTheory })
	all := methods(func(r figureRole) bool { return r.search || r.vsTheory })

	base := plots.FigureSpec{XLabel: "requested excess risk α", Jitter: 0.15, Styles: FigureStyles, Columns: len(cols)}
	title := func(what string) string { return fmt.Sprintf("%s, %s [%s calibration]", paper, what, cal) }
	var figs []plots.FigureSpec

	// Figure 1: the top row against theory, the bottom row against doubling.
	if len(search) > 0 || len(vsTheory) > 1 {
		f := base
		f.Name, f.Title, f.Metric, f.LogY = prefix+"1-expost", title("Figure 1: ex-post privacy loss"), "expost_eps", true
		f.YLabel, f.Methods, f.Caption.Note = "ex-post privacy loss ε", all, calNote
		for _, row := range []string{"vs theory", "vs doubling"} {
			for _, c := range cols {
				letter := c.first
				if row == "vs doubling" {
					letter = c.second
				}
				f.Panels = append(f.Panels, c.key(letter, "noise reduction "+row))
			}
		}
		f.PanelBy = func(r results.SummaryRow) []string {
			c, ok := colOf(r)
			role, known := roleOf(c, r.Method)
			if !ok || !known {
				return nil
			}
			var keys []string
			if role.vsTheory && len(vsTheory) > 1 {
				keys = append(keys, c.key(c.first, "noise reduction vs theory"))
			}
			if role.search {
				keys = append(keys, c.key(c.second, "noise reduction vs doubling"))
			}
			return keys
		}
		f.Panels = slices.DeleteFunc(f.Panels, func(k string) bool {
			return (len(vsTheory) < 2 && strings.HasSuffix(k, "vs theory")) || (len(search) == 0 && strings.HasSuffix(k, "vs doubling"))
		})
		figs = append(figs, f)
	}
	if len(search) == 0 {
		return figs
	}

	// Figure 2: one panel per search, noise reduction on top.
	f := base
	f.Name, f.Title, f.Metric = prefix+"2-accuracy", title("Figure 2: achieved excess risk against the requested α"), "excess_risk"
	f.YLabel, f.Methods, f.DiagonalRef, f.DiagonalLabel = "achieved excess risk", search, true, "requested α (y = x)"
	letterOf := func(c column, m string) string {
		if role, _ := roleOf(c, m); role.second {
			return c.second
		}
		return c.first
	}
	for _, second := range []bool{false, true} {
		for _, m := range search {
			if roleAny(m).second != second {
				continue
			}
			for _, c := range cols {
				f.Panels = append(f.Panels, c.key(letterOf(c, m), m))
			}
		}
	}
	f.PanelBy = func(r results.SummaryRow) []string {
		if c, ok := colOf(r); ok && slices.Contains(search, r.Method) {
			return []string{c.key(letterOf(c, r.Method), r.Method)}
		}
		return nil
	}
	figs = append(figs, f)

	// One panel per column: Figures 3 and 4 and the risk factor.
	perColumn := func(f plots.FigureSpec) plots.FigureSpec {
		for _, c := range cols {
			f.Panels = append(f.Panels, c.key(c.first, ""))
		}
		f.PanelBy = func(r results.SummaryRow) []string {
			if c, ok := colOf(r); ok {
				return []string{c.key(c.first, "")}
			}
			return nil
		}
		return f
	}
	testLabel := "ε of the accuracy tests"
	if doubled {
		testLabel += " (counted twice)"
	}
	f = perColumn(base)
	f.Name, f.Title, f.LogY = single(prefix+"3")+"-privacy-breakdown", title("Figure 3: privacy loss of testing vs generating hypotheses"), true
	f.Metrics, f.MetricLabels = []string{"test_eps", "hypothesis_eps"}, map[string]string{"test_eps": testLabel, "hypothesis_eps": "ε of the hypotheses"}
	f.YLabel, f.Methods, f.Caption.Note = "ε", search, calNote
	figs = append(figs, f)

	f = perColumn(base)
	f.Name, f.Title, f.Metric = single(prefix+"4")+"-norms", title("Figure 4: L2 norm of the output hypothesis"), "norm"
	f.YLabel, f.Methods = "‖θ‖₂", search
	var tasks []string
	for _, c := range cols {
		if t := c.e.spec.AccuracyFirst.Task; !slices.Contains(tasks, t) {
			tasks = append(tasks, t)
		}
	}
	var bs []string
	for _, t := range tasks {
		bs = append(bs, boundName(t)+" for "+t)
	}
	bounds := strings.Join(bs, "; ")
	for _, c := range cols {
		di := slices.IndexFunc(c.e.data, func(d *datasets.Dataset) bool { return d.Name == c.dataset })
		pr := c.e.probs[di]
		key := c.key(c.first, "")
		f.RefLines = append(f.RefLines,
			plots.RefLine{Y: pr.Radius(), Label: "theoretical maximum (" + bounds + ")", Panel: key},
			plots.RefLine{Y: floats.Norm(pr.ThetaStar(), 2), Label: "‖θ*‖₂ of the non-private optimum", Panel: key})
	}
	figs = append(figs, f)

	f = perColumn(base)
	f.Name, f.Title, f.Metric, f.LogY = single("risk-factor"), title("privacy risk factor e^ε of the output"), "expost_risk_factor", true
	f.YLabel, f.Methods = "e^(mean ε over trials)", search
	f.Caption.Note = "Each point is e raised to the mean ex-post ε of its trials, as the paper reports it; its bar is the CI of that mean ε, exponentiated. " +
		"The paper's headline (Section 4, ridge): at α = 0.05 noise reduction has e^ε ≈ 10.0 and doubling ≈ 495; at α = 0.075, 4.65 and 56.6. " + calNote
	figs = append(figs, f)
	return figs
}

// boundName is the theoretical maximum norm of a task's hypotheses.
func boundName(task string) string {
	if task == "ridge" {
		return "1/√λ"
	}
	return "√(2 log 2/λ)"
}

// Calibration is the calibration of the run's accuracy tests
// ("authors-code" or "paper"): runs are drawn together in
// [PaperFigures] only when it is the same.
func (e *Experiment) Calibration() string { return e.spec.AccuracyFirst.Calibration }

// AcrossFolder is the folder of Figures 1–4 drawn across the expost-sweep
// runs of an output folder (runner.AcrossKind), one subfolder per
// calibration.
const AcrossFolder = "af17-figures"

// AcrossFolder implements runner.AcrossKind (not shown in the report).
func (sweepKind) AcrossFolder() (folder, reportTitle string) { return AcrossFolder, "" }

// Across implements runner.AcrossRuns: the run joins Ligett et al.'s
// Figures 1–4 drawn across the runs of its calibration.
func (e *Experiment) Across() (runner.AcrossGroup, bool) {
	return runner.AcrossGroup{Folder: AcrossFolder, Sub: e.Calibration()}, true
}

// AcrossFigures implements runner.AcrossRuns: [PaperFigures] of the group
// (the ridge run's panels beside the logistic run's, as in the paper).
func (e *Experiment) AcrossFigures(group []runner.Experiment, _ []results.SummaryRow) ([]plots.FigureSpec, string) {
	var exps []*Experiment
	for _, g := range group {
		if x, ok := g.(*Experiment); ok {
			exps = append(exps, x)
		}
	}
	return PaperFigures(exps), "Ligett et al. Figures 1-4 across runs"
}
