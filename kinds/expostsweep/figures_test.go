package expostsweep

import (
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
)

// loadTask loads tinySpec as run id with the task and generator.
func loadTask(t *testing.T, id, task, gen, cal string, methods ...string) *Experiment {
	t.Helper()
	if err := registerFakes(); err != nil {
		t.Fatal(err)
	}
	src := strings.NewReplacer("CAL", cal, `id = "af-tiny"`, `id = "`+id+`"`).Replace(tinySpec)
	s, err := experiments.Parse(id+".toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	a := &s.Section.(*Section).AccuracyFirst
	a.Task, a.Generator, a.Methods = task, gen, methods
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// asTask is a copy of e as a run id of another task (the layout depends on
// the task only; a ridge stand-in would take long to synthesize).
func asTask(e *Experiment, id, task string) *Experiment {
	c := *e
	spec, sec := *e.spec.Spec, *e.spec.Section
	spec.ID, sec.AccuracyFirst.Task = id, task
	c.spec = &Spec{&spec, &sec}
	return &c
}

// summaryOf is a summary of e's methods at its α for metrics, with
// arbitrary positive values (a fixture: only the layout is checked).
func summaryOf(e *Experiment, metrics ...string) []results.SummaryRow {
	var rows []results.SummaryRow
	for _, m := range e.spec.AccuracyFirst.Methods {
		for _, a := range e.spec.AccuracyFirst.Alphas {
			for _, k := range metrics {
				rows = append(rows, results.SummaryRow{Experiment: e.spec.ID, Dataset: e.data[0].Name, DataSource: "synthetic",
					Method: m, XName: "alpha", X: a, Metric: k, Mean: 1 + a, SD: 0.1, CILow: 0.9 + a, CIHigh: 1.1 + a, N: 3})
			}
		}
	}
	return rows
}

// panelsOf returns, per panel of f in order, the methods PanelBy puts in
// it: the series the plotter is handed.
func panelsOf(f plots.FigureSpec, rows []results.SummaryRow) map[string][]string {
	out := map[string][]string{}
	for _, p := range f.Panels {
		out[p] = []string{}
	}
	for _, r := range rows {
		if r.Metric != f.Metric && !slices.Contains(f.Metrics, r.Metric) || !slices.Contains(f.Methods, r.Method) {
			continue
		}
		for _, k := range f.PanelBy(r) {
			if !slices.Contains(out[k], r.Method) {
				out[k] = append(out[k], r.Method)
			}
		}
	}
	return out
}

// TestPaperFigures_Layout: across a ridge and a logistic run, Figure 1 is
// the paper's 2×2 grid — (a) ridge and (b) logistic against theory on top,
// (c) and (d) against doubling below — Figure 2 one panel per search, and
// Figures 3, 4 and the risk factor a ridge and a logistic panel; Figure 4
// carries the theoretical maximum and ‖θ*‖ of each panel's data, and the
// authors' calibration says that the test loss is counted twice.
func TestPaperFigures_Layout(t *testing.T) {
	logistic := loadTask(t, "af-logistic", "logistic", "output", "authors-code", "noise-reduction", "doubling", "theory")
	ridge := asTask(logistic, "af-ridge", "ridge")
	rows := append(summaryOf(logistic, "expost_eps", "excess_risk", "test_eps", "hypothesis_eps", "norm", "expost_risk_factor"),
		summaryOf(ridge, "expost_eps", "excess_risk", "test_eps", "hypothesis_eps", "norm", "expost_risk_factor")...)
	figs := PaperFigures([]*Experiment{logistic, ridge})
	byName := map[string]plots.FigureSpec{}
	for _, f := range figs {
		byName[f.Name] = f
	}
	ds := logistic.data[0].Name
	want := map[string]map[string][]string{
		"figure1-expost": {
			"(a) " + ds + ", ridge: noise reduction vs theory":      {"noise-reduction", "theory"},
			"(b) " + ds + ", logistic: noise reduction vs theory":   {"noise-reduction", "theory"},
			"(c) " + ds + ", ridge: noise reduction vs doubling":    {"noise-reduction", "doubling"},
			"(d) " + ds + ", logistic: noise reduction vs doubling": {"noise-reduction", "doubling"},
		},
		"figure2-accuracy": {
			"(a) " + ds + ", ridge: noise-reduction": {"noise-reduction"}, "(b) " + ds + ", logistic: noise-reduction": {"noise-reduction"},
			"(c) " + ds + ", ridge: doubling": {"doubling"}, "(d) " + ds + ", logistic: doubling": {"doubling"},
		},
		"figure3-privacy-breakdown": {"(a) " + ds + ", ridge": {"noise-reduction", "doubling"}, "(b) " + ds + ", logistic": {"noise-reduction", "doubling"}},
		"figure4-norms":             {"(a) " + ds + ", ridge": {"noise-reduction", "doubling"}, "(b) " + ds + ", logistic": {"noise-reduction", "doubling"}},
		"risk-factor":               {"(a) " + ds + ", ridge": {"noise-reduction", "doubling"}, "(b) " + ds + ", logistic": {"noise-reduction", "doubling"}},
	}
	order := map[string][]string{
		"figure1-expost": {"(a) " + ds + ", ridge: noise reduction vs theory", "(b) " + ds + ", logistic: noise reduction vs theory",
			"(c) " + ds + ", ridge: noise reduction vs doubling", "(d) " + ds + ", logistic: noise reduction vs doubling"},
		"figure2-accuracy": {"(a) " + ds + ", ridge: noise-reduction", "(b) " + ds + ", logistic: noise-reduction", "(c) " + ds + ", ridge: doubling", "(d) " + ds + ", logistic: doubling"},
	}
	if len(figs) != len(want) {
		t.Errorf("%d figures, want %d", len(figs), len(want))
	}
	for name, panels := range want {
		f, ok := byName[name]
		if !ok {
			t.Errorf("no figure %s", name)
			continue
		}
		if f.Columns != 2 {
			t.Errorf("%s: %d columns, want 2 (ridge, logistic)", name, f.Columns)
		}
		if o := order[name]; o != nil && !slices.Equal(f.Panels, o) {
			t.Errorf("%s: panels %q, want %q", name, f.Panels, o)
		}
		got := panelsOf(f, rows)
		for p, ms := range panels {
			if !slices.Equal(got[p], ms) {
				t.Errorf("%s, panel %q: methods %v, want %v", name, p, got[p], ms)
			}
		}
		if len(got) != len(panels) {
			t.Errorf("%s: panels %v, want %d", name, got, len(panels))
		}
		if _, _, err := plots.Build(f, rows); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, m := range f.Methods {
			if _, ok := f.Styles[m]; !ok {
				t.Errorf("%s: method %s has no fixed style", name, m)
			}
		}
	}
	// Rows of a run the figures leave out (a second run of a task) fall
	// in no panel.
	for _, f := range figs {
		for _, r := range summaryOf(asTask(logistic, "af-other", "logistic"), "expost_eps", "excess_risk", "norm") {
			if keys := f.PanelBy(r); len(keys) > 0 {
				t.Errorf("%s: a row of a run left out falls in %v", f.Name, keys)
			}
		}
	}
	norms := byName["figure4-norms"].RefLines
	if len(norms) != 4 || !strings.Contains(norms[1].Label, "θ*") || norms[0].Panel != "(a) "+ds+", ridge" || norms[2].Panel != "(b) "+ds+", logistic" {
		t.Errorf("figure 4 lines %+v: want the maximum and ‖θ*‖ of each panel", norms)
	}
	if !strings.Contains(byName["figure1-expost"].Caption.Note, "twice") || !strings.Contains(byName["figure3-privacy-breakdown"].MetricLabels["test_eps"], "twice") {
		t.Errorf("authors-code: the doubled test loss is not said")
	}
	paper := loadTask(t, "af-paper", "logistic", "output", "paper", "noise-reduction", "doubling")
	if PaperFigures([]*Experiment{paper, logistic}) != nil {
		t.Errorf("calibrations mixed: figures drawn")
	}
	for _, f := range PaperFigures([]*Experiment{paper}) {
		if strings.Contains(f.Caption.Note, "twice") || strings.Contains(f.MetricLabels["test_eps"], "twice") {
			t.Errorf("paper calibration, %s: says the test loss is counted twice", f.Name)
		}
	}
}
