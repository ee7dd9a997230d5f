package runner

import (
	"fmt"

	"github.com/dprepro/dprepro/comparison"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
)

// Files of the comparison against a baseline (Comparer).
const (
	ComparisonFile  = "comparison.csv"
	ComparisonTable = "comparison.md" // under tables/
)

// compared is what a run writes of its comparison against a baseline.
type compared struct {
	csv, table []byte
	rows       []results.SummaryRow // the differences, for the figures
	figures    []plots.FigureSpec
}

// compareBaseline compares the methods of rows with the baseline exp's
// spec names (Comparer), or returns nil when it names none.
func compareBaseline(exp Experiment, rows []results.Row) (*compared, error) {
	c, ok := exp.(Comparer)
	if !ok {
		return nil, nil
	}
	o, layout, ok := c.Comparison()
	if !ok {
		return nil, nil
	}
	spec := exp.Spec()
	if o.Level == 0 {
		o.Level = spec.Output.CILevel
	}
	cells, err := comparison.Compare(rows, o)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	out := &compared{table: comparison.Table(cells, o), rows: comparison.SummaryRows(cells, spec.ID, o.XName)}
	if out.csv, err = comparison.CSV(cells, o.XName, o.Level); err != nil {
		return nil, err
	}
	for _, m := range o.Metrics {
		fs := layout
		fs.Name = "comparison-" + m.Name
		fs.Title = fmt.Sprintf("%s: each method − the baseline %s, paired by replicate", m.Name, o.Baseline)
		fs.Metric = m.Name + "_diff"
		better := "higher is better"
		if !m.HigherIsBetter {
			better = "lower is better"
		}
		fs.YLabel = fmt.Sprintf("difference in %s (%s)", m.Name, better)
		fs.RefLines = []plots.RefLine{{Y: 0, Label: "no difference from " + o.Baseline}}
		fs.Caption.Bars = fmt.Sprintf("%.3g %% t interval of the mean paired difference", 100*o.Level)
		out.figures = append(out.figures, fs)
	}
	return out, nil
}
