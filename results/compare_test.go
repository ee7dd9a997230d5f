package results

import (
	"encoding/json"
	"math"
	"testing"
)

func cellRow(method string, x, mean, lo, hi float64, n int) SummaryRow {
	return SummaryRow{Experiment: "e", Dataset: "d", Method: method, XName: "alpha", X: x, Metric: "auc",
		Mean: mean, SD: 0.1, CILow: lo, CIHigh: hi, N: n}
}

func TestCompareSummaries(t *testing.T) {
	ref := []SummaryRow{
		cellRow("a", 1, 0.80, 0.78, 0.82, 100),          // CI half-width 0.02
		cellRow("a", 2, 0.85, 0.84, 0.86, 100),          // half-width 0.01
		cellRow("b", 1, 0.5, math.NaN(), math.NaN(), 1), // no CI
		cellRow("b", 2, math.NaN(), math.NaN(), math.NaN(), 0),
	}
	same := append([]SummaryRow(nil), ref...)
	if c := CompareSummaries(ref, same, true, 3); c.Failed != 0 || c.Moved != 0 {
		t.Errorf("identical, exact: %+v", c)
	}
	moved := append([]SummaryRow(nil), ref...)
	moved[0].Mean = 0.80 + 0.05 // within 3·√(0.02²+0.02²) = 0.085
	moved[1].Mean = 0.85 + 0.05 // beyond 3·√(0.01²+0.01²) = 0.042
	moved[2].Mean = 0.5 + 1e-12 // no CI: within 1e-9 relative
	if c := CompareSummaries(ref, moved, true, 3); c.Failed != 3 {
		t.Errorf("exact mode: %d failed, want 3 (any difference fails)", c.Failed)
	}
	c := CompareSummaries(ref, moved, false, 3)
	if c.Failed != 1 || c.Moved != 2 {
		t.Fatalf("tolerance mode: %d failed, %d moved; want 1 and 2: %+v", c.Failed, c.Moved, c.Cells)
	}
	want := []string{CellMoved, CellOut, CellMoved, CellSame}
	for i, cell := range c.Cells {
		if cell.Status != want[i] {
			t.Errorf("cell %d (%s): %s, want %s", i, cell.Key, cell.Status, want[i])
		}
	}
	if tol := c.Cells[0].Tol; math.Abs(tol-(3*math.Sqrt(2)*0.02+RelTolNoCI*1.8)) > 1e-12 {
		t.Errorf("tolerance %v", tol)
	}
	// Missing and new cells fail in both modes.
	other := append([]SummaryRow(nil), ref[:3]...)
	other = append(other, cellRow("c", 1, 0.7, 0.6, 0.8, 10))
	for _, exact := range []bool{true, false} {
		c := CompareSummaries(ref, other, exact, 3)
		if c.Failed != 2 || c.Cells[3].Status != CellMissing || c.Cells[4].Status != CellNew {
			t.Errorf("exact %v: missing/new: %+v", exact, c)
		}
	}
}

func TestSameSetting(t *testing.T) {
	m := Manifest{Spec: SpecInfo{Hash: "h"}, Seed: 1, Profile: "quick", GOOS: "linux", GOARCH: "amd64", GOAMD64: "v1",
		Datasets: []DatasetInfo{{Name: "adult", Source: "real", Files: []FileInfo{{SHA256: "x"}}}}}
	if ok, why := SameSetting(m, m); !ok {
		t.Errorf("same manifest: %s", why)
	}
	for name, change := range map[string]func(*Manifest){
		"seed":     func(m *Manifest) { m.Seed = 2 },
		"spec":     func(m *Manifest) { m.Spec.Hash = "g" },
		"platform": func(m *Manifest) { m.GOAMD64 = "v3" },
		"data":     func(m *Manifest) { m.Datasets = []DatasetInfo{{Name: "adult", Source: "synthetic"}} },
		"profile":  func(m *Manifest) { m.Profile = "paper" },
	} {
		o := m
		o.Datasets = append([]DatasetInfo(nil), m.Datasets...)
		change(&o)
		if ok, why := SameSetting(m, o); ok || why == "" {
			t.Errorf("%s changed: same = %v (%q)", name, ok, why)
		}
	}
}

func TestFloatJSONRoundTrip(t *testing.T) {
	for _, v := range []float64{0.5, math.Inf(1), math.Inf(-1), math.NaN(), -3e-9} {
		b, err := json.Marshal(Float(v))
		if err != nil {
			t.Fatal(err)
		}
		var back Float
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !sameFloat(float64(back), v) {
			t.Errorf("%v: round trip %s -> %v", v, b, float64(back))
		}
	}
	var f Float
	if err := json.Unmarshal([]byte(`"lots"`), &f); err == nil {
		t.Error(`"lots": no error`)
	}
}
