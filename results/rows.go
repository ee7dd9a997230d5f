package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
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

// Project returns rows with only the columns cols (new maps; a column a
// row lacks stays absent).
func Project(rows []Row, cols []string) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		p := make(Row, len(cols))
		for _, c := range cols {
			if v, ok := r[c]; ok {
				p[c] = v
			}
		}
		out[i] = p
	}
	return out
}

// Without returns rows without the columns cols (new maps where a row
// had one of them; the others are shared).
func Without(rows []Row, cols []string) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		out[i] = r
		for _, c := range cols {
			if _, ok := r[c]; ok {
				out[i] = maps.Clone(r)
				for _, c := range cols {
					delete(out[i], c)
				}
				break
			}
		}
	}
	return out
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

// ReadSummaryCSV reads a summary.csv written by [EncodeSummaryCSV] (the
// columns in SummaryColumns order). Errors name the file and line.
func ReadSummaryCSV(path string) ([]SummaryRow, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return decodeSummaryCSV(b, path)
}

// decodeSummaryCSV parses the bytes of a summary.csv; path names it in
// errors.
func decodeSummaryCSV(b []byte, path string) ([]SummaryRow, error) {
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("results: %s: %w", path, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], SummaryColumns) {
		return nil, fmt.Errorf("results: %s:1: header is not the summary schema %v", path, SummaryColumns)
	}
	out := make([]SummaryRow, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		r := Row{}
		for j, c := range SummaryColumns {
			r[c] = rec[j]
		}
		n, err := strconv.Atoi(r["n"])
		if err != nil {
			return nil, fmt.Errorf("results: %s:%d: n: %w", path, i+2, err)
		}
		s := SummaryRow{
			Experiment: r["experiment"], Dataset: r["dataset"], DataSource: r["data_source"],
			Method: r["method"], XName: r["x_name"], Metric: r["metric"],
			X: r.Float("x"), Mean: r.Float("mean"), SD: r.Float("sd"),
			CILow: r.Float("ci_low"), CIHigh: r.Float("ci_high"), N: n,
		}
		for _, c := range []string{"x", "mean", "sd", "ci_low", "ci_high"} {
			if _, err := strconv.ParseFloat(r[c], 64); err != nil {
				return nil, fmt.Errorf("results: %s:%d: %s = %q is not a number", path, i+2, c, r[c])
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// ReadRowsCSV reads a rows.csv into rows keyed by column.
func ReadRowsCSV(path string) ([]Row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	rows := make([]Row, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		r := make(Row, len(rec))
		for i, col := range recs[0] {
			r[col] = rec[i]
		}
		rows = append(rows, r)
	}
	return rows, nil
}
