package results

// SummaryColumns is the long format shared by every experiment of the
// harness, in this exact order.
var SummaryColumns = []string{
	"experiment", "dataset", "data_source", "method", "x_name", "x",
	"metric", "mean", "sd", "ci_low", "ci_high", "n",
}

// SummaryRow is one line of summary.csv: the mean of one metric over the
// replicate units of one (dataset, method, x) cell, with the sample standard
// deviation (unbiased, n−1) and the 95 % percentile-bootstrap confidence
// interval of the mean.
type SummaryRow struct {
	Experiment string
	Dataset    string
	DataSource string // "real" or "synthetic"
	Method     string
	XName      string
	X          float64
	Metric     string
	Mean       float64
	SD         float64
	CILow      float64
	CIHigh     float64
	N          int
}
