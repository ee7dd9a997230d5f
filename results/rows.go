package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
)

// Row is one tidy output row of a replicate unit: a value for each column
// of the experiment's row schema. Numbers are stored formatted with
// FormatFloat, which round-trips float64 exactly, so a row read back from a
// checkpoint is bit-identical to the row computed.
type Row map[string]string

// Set stores a string value.
func (r Row) Set(col, v string) { r[col] = v }

// SetFloat stores a float64 in shortest round-trip form ("NaN", "+Inf" and
// "-Inf" for the special values).
func (r Row) SetFloat(col string, v float64) { r[col] = FormatFloat(v) }

// SetInt stores an integer.
func (r Row) SetInt(col string, v int) { r[col] = strconv.Itoa(v) }

// Float parses column col as a float64; a missing or empty value is NaN.
func (r Row) Float(col string) float64 {
	s, ok := r[col]
	if !ok || s == "" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// FormatFloat formats v in the shortest form that parses back to v.
func FormatFloat(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// EncodeCSV renders rows under the given header; a column a row lacks is
// written empty. It is an error for a row to hold a column not in the header.
func EncodeCSV(header []string, rows []Row) ([]byte, error) {
	known := make(map[string]bool, len(header))
	for _, h := range header {
		known[h] = true
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(header); err != nil {
		return nil, err
	}
	rec := make([]string, len(header))
	for i, r := range rows {
		for c := range r {
			if !known[c] {
				return nil, fmt.Errorf("results: row %d has column %q not in the schema", i, c)
			}
		}
		for j, h := range header {
			rec[j] = r[h]
		}
		if err := w.Write(rec); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// EncodeSummaryCSV renders summary rows in the SummaryColumns order.
func EncodeSummaryCSV(rows []SummaryRow) ([]byte, error) {
	out := make([]Row, len(rows))
	for i, s := range rows {
		r := Row{
			"experiment": s.Experiment, "dataset": s.Dataset, "data_source": s.DataSource,
			"method": s.Method, "x_name": s.XName, "metric": s.Metric,
		}
		r.SetFloat("x", s.X)
		r.SetFloat("mean", s.Mean)
		r.SetFloat("sd", s.SD)
		r.SetFloat("ci_low", s.CILow)
		r.SetFloat("ci_high", s.CIHigh)
		r.SetInt("n", s.N)
		out[i] = r
	}
	return EncodeCSV(SummaryColumns, out)
}
