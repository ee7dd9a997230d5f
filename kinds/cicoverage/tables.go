package cicoverage

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// paperOrder orders methods as the registry does: the built-ins in the
// row order of Wang, Kifer & Lee's Tables 2–6, privacy (DP, zCDP) ×
// perturbation (obj, output) × model (LR, SVM), then other methods in the
// order they were registered, then the spec's external methods in its
// order.
func paperOrder(ms []cimethods.Method) []cimethods.Method {
	out := slices.Clone(ms)
	rank := func(m cimethods.Method) int {
		_, k, ok := cimethods.Rank(m.Name())
		if !ok {
			return math.MaxInt32
		}
		return k
	}
	slices.SortStableFunc(out, func(a, b cimethods.Method) int { return rank(a) - rank(b) })
	return out
}

// Tables implements runner.Tabler: the coverage table laid out like the
// paper's Tables 2–6 (one row per method, labelled by its attributes'
// privacy, perturbation and model, in paperOrder; one column per swept
// value; Markdown and CSV), and the same layout for the CI and VI lengths
// (mean ± sd over the replicates; the paper shows those as Figures 1–4).
// A cell of a method that released no interval in any replicate says so,
// "no interval in N of N replicates" (a VI cell "no variability
// interval"), in both files, instead of a NaN or a dash; one with some
// replicates without an interval gives the value over the others and, in
// the Markdown, "(no interval in k of N)".
func (e *Experiment) Tables(summary []results.SummaryRow) (map[string][]byte, error) {
	var names []string
	byDataset := map[string][]results.SummaryRow{}
	for _, r := range summary {
		if _, ok := byDataset[r.Dataset]; !ok {
			names = append(names, r.Dataset)
		}
		byDataset[r.Dataset] = append(byDataset[r.Dataset], r)
	}
	out := map[string][]byte{}
	for _, ds := range names {
		prefix := ""
		if len(names) > 1 {
			prefix = ds + "-"
		}
		if err := e.tables(out, prefix, byDataset[ds]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// tables adds the tables of one dataset's summary rows to out.
func (e *Experiment) tables(out map[string][]byte, prefix string, summary []results.SummaryRow) error {
	type cell struct {
		mean, sd float64
		n        int // the values the mean is over (summary's n)
	}
	byKey := map[string]cell{}
	var xs []float64
	for _, r := range summary {
		byKey[fmt.Sprintf("%s|%s|%v", r.Metric, r.Method, r.X)] = cell{r.Mean, r.SD, r.N}
		if !slices.Contains(xs, r.X) {
			xs = append(xs, r.X)
		}
	}
	slices.Sort(xs)
	rows := paperOrder(e.methods)
	ci := e.spec.ConfidenceIntervals
	// absent says why a cell has no value: a coverage or CI-length cell
	// is over the replicates that released an interval (summary's n), a
	// VI cell is one interval or none. "" when the cell has a value.
	absent := func(metric string, c cell) string {
		switch {
		case c.n > 0 && !math.IsNaN(c.mean):
			return ""
		case metric == "vi_length":
			return "no variability interval"
		}
		return fmt.Sprintf("no interval in %d of %d replicates", ci.Replicates, ci.Replicates)
	}
	fmtCell := func(metric string, c cell, ok, withSD bool) string {
		if !ok {
			return "—"
		}
		if a := absent(metric, c); a != "" {
			return a
		}
		v := fmt.Sprintf("%.4f", c.mean)
		if withSD {
			v = fmt.Sprintf("%.4f ± %.4f", c.mean, c.sd)
		}
		if missing := ci.Replicates - c.n; metric != "vi_length" && missing > 0 {
			v += fmt.Sprintf(" (no interval in %d of %d)", missing, ci.Replicates)
		}
		return v
	}
	for _, metric := range []string{"coverage", "ci_length", "vi_length"} {
		withSD := metric != "coverage"
		var md bytes.Buffer
		title := map[string]string{
			"coverage":  "Coverage percentage",
			"ci_length": "Confidence-interval length (mean ± sd over replicates)",
			"vi_length": "Variability-interval length",
		}[metric]
		if metric == "vi_length" {
			withSD = false // one VI per (method, x)
		}
		budgets := []string{}
		for i, v := range []float64{ci.Eps1, ci.Eps2, ci.Eps3} {
			name := fmt.Sprintf("eps%d", i+1)
			if ci.Sweep == name {
				budgets = append(budgets, fmt.Sprintf("ε%d swept", i+1))
			} else {
				budgets = append(budgets, fmt.Sprintf("ε%d = %g", i+1, v))
			}
		}
		fmt.Fprintf(&md, "%s — %s (%s; α = %g, c = %g, h = %g, %s, ρᵢ = εᵢ²/2; %d replicates)\n\n",
			title, e.spec.Title, e.xLabel(), ci.Alpha, ci.C, ci.H, strings.Join(budgets, ", "), ci.Replicates)
		md.WriteString("| privacy | perturbation | model |")
		for _, x := range xs {
			fmt.Fprintf(&md, " %s |", results.FormatFloat(x))
		}
		md.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(xs)) + "\n")
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		head := []string{"privacy", "perturbation", "model"}
		for _, x := range xs {
			head = append(head, results.FormatFloat(x))
		}
		if err := w.Write(head); err != nil {
			return err
		}
		for _, m := range rows {
			priv, pert, model := m.Attributes().Labels()
			fmt.Fprintf(&md, "| %s | %s | %s |", priv, pert, model)
			rec := []string{priv, pert, model}
			for _, x := range xs {
				c, ok := byKey[fmt.Sprintf("%s|%s|%v", metric, m.Name(), x)]
				fmt.Fprintf(&md, " %s |", fmtCell(metric, c, ok, withSD))
				switch {
				case !ok:
					rec = append(rec, "")
				case absent(metric, c) != "":
					rec = append(rec, absent(metric, c))
				default:
					rec = append(rec, results.FormatFloat(c.mean))
				}
			}
			md.WriteString("\n")
			if err := w.Write(rec); err != nil {
				return err
			}
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return err
		}
		out[prefix+metric+".md"] = md.Bytes()
		out[prefix+metric+".csv"] = buf.Bytes()
	}
	return nil
}

// AcrossFolder is the folder of Figures 1–4 drawn across the ci-coverage
// runs of an output folder (runner.AcrossKind), shown in the report.
const AcrossFolder = "wkl-figures"

// AcrossFolder implements runner.AcrossKind.
func (coverageKind) AcrossFolder() (folder, reportTitle string) {
	return AcrossFolder, "Figures 1–4 across the runs"
}

// Across implements runner.AcrossRuns: every run of the paper's protocol
// joins Wang, Kifer & Lee's Figures 1–4 drawn across runs; a variant of
// it ([Experiment.Variant]) joins none.
func (e *Experiment) Across() (runner.AcrossGroup, bool) {
	return runner.AcrossGroup{Folder: AcrossFolder}, !e.Variant()
}

// AcrossFigures implements runner.AcrossRuns: those of [PaperFigures]
// with a panel the runs' summaries have rows for (a figure no run made a
// sweep of is left out).
func (e *Experiment) AcrossFigures(group []runner.Experiment, rows []results.SummaryRow) ([]plots.FigureSpec, string) {
	var figs []plots.FigureSpec
	for _, fs := range PaperFigures() {
		has := false
		for _, r := range rows {
			has = has || slices.Contains(fs.Methods, r.Method) && slices.Contains(fs.Metrics, r.Metric) && len(fs.PanelBy(r)) > 0
		}
		if has {
			figs = append(figs, fs)
		}
	}
	return figs, fmt.Sprintf("Wang, Kifer & Lee Figures 1-4 across %d runs", len(group))
}
