package results

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormatFloat_RoundTrip(t *testing.T) {
	for _, v := range []float64{0.1, 1.0 / 3, 1e-300, -2.5e17, math.Inf(1), math.Inf(-1)} {
		r := Row{}
		r.SetFloat("x", v)
		if got := r.Float("x"); got != v {
			t.Errorf("%v round-trips to %v", v, got)
		}
	}
	r := Row{}
	r.SetFloat("x", math.NaN())
	if !math.IsNaN(r.Float("x")) || !math.IsNaN(r.Float("missing")) {
		t.Error("NaN or missing column did not read back as NaN")
	}
}

func TestEncodeCSV(t *testing.T) {
	b, err := EncodeCSV([]string{"a", "b"}, []Row{{"a": "1", "b": "x,y"}, {"a": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a,b\n1,\"x,y\"\n2,\n"; string(b) != want {
		t.Errorf("got %q want %q", b, want)
	}
	if _, err := EncodeCSV([]string{"a"}, []Row{{"z": "1"}}); err == nil {
		t.Error("a column outside the schema was accepted")
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.txt")
	for _, content := range []string{"one", "two"} {
		if err := WriteFileAtomic(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != content {
			t.Errorf("read %q want %q", b, content)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestSummarize checks grouping, order, NaN handling and the sd on a case
// computed by hand: values 1, 2, 3 have mean 2 and unbiased sd 1.
func TestSummarize(t *testing.T) {
	mk := func(ds, m string, x, v float64) Row {
		r := Row{"dataset": ds, "data_source": "real", "method": m}
		r.SetFloat("alpha", x)
		r.SetFloat("auc", v)
		return r
	}
	rows := []Row{
		mk("d", "s", 2, 1), mk("d", "s", 1, 5), mk("d", "s", 2, 2), mk("d", "s", 2, 3),
		mk("d", "r", 1, math.NaN()), mk("d", "s", 2, math.NaN()),
	}
	o := SummaryOptions{Experiment: "e", XName: "alpha", XCol: "alpha", Metrics: []string{"auc"}, Bootstrap: 200, Level: 0.95, Seed: 1}
	got := Summarize(rows, o)
	if len(got) != 3 {
		t.Fatalf("%d summary rows, want 3", len(got))
	}
	if got[0].X != 1 || got[1].X != 2 || got[2].Method != "r" {
		t.Errorf("order: %+v", got)
	}
	s := got[1]
	if s.Mean != 2 || math.Abs(s.SD-1) > 1e-15 || s.N != 3 || !(s.CILow >= 1 && s.CIHigh <= 3 && s.CILow < s.CIHigh) {
		t.Errorf("cell (s, 2): %+v", s)
	}
	if r := got[2]; r.N != 0 || !math.IsNaN(r.Mean) {
		t.Errorf("all-NaN cell: %+v", r)
	}
	b, _ := EncodeSummaryCSV(got)
	if !strings.HasPrefix(string(b), strings.Join(SummaryColumns, ",")+"\n") {
		t.Errorf("header %q", strings.SplitN(string(b), "\n", 2)[0])
	}
	// Read back: the same rows (NaN included), bit for bit.
	path := filepath.Join(t.TempDir(), "summary.csv")
	if err := WriteFileAtomic(path, b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSummaryCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back) != fmt.Sprint(got) {
		t.Errorf("read back %+v, want %+v", back, got)
	}
	bad := strings.Replace(string(b), ",3\n", ",three\n", 1)
	if err := WriteFileAtomic(path, []byte(bad)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSummaryCSV(path); err == nil || !strings.Contains(err.Error(), "summary.csv:") {
		t.Errorf("bad n: err = %v, want one naming the file and line", err)
	}
	again := Summarize(rows, o)
	for i := range got {
		if fmt.Sprint(got[i]) != fmt.Sprint(again[i]) { // NaN != NaN, so compare printed
			t.Errorf("not deterministic at %d", i)
		}
	}
}
