package results

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"strings"
	"testing"
	"testing/fstest"
)

// cell is one summary cell of method at x with the given mean, CI
// half-width hw (ci = mean ± hw), sd and n.
func cell(method string, x, mean, hw, sd float64, n int) SummaryRow {
	return SummaryRow{Experiment: "e", Dataset: "d", Method: method, XName: "alpha", X: x, Metric: "auc",
		Mean: mean, SD: sd, CILow: mean - hw, CIHigh: mean + hw, N: n}
}

func TestCompareSummaries_Exact(t *testing.T) {
	ref := []SummaryRow{cell("a", 1, 0.8, 0.02, 0.1, 100), cell("b", 1, 0.5, math.NaN(), math.NaN(), 1)}
	c, err := CompareSummaries(ref, append([]SummaryRow(nil), ref...), true, 3)
	if err != nil || c.Failed != 0 || c.Moved != 0 || c.Cells[0].Status != CellSame || c.Cells[1].Status != CellSame {
		t.Fatalf("identical: %+v, %v", c, err)
	}
	for name, change := range map[string]func(*SummaryRow){
		"mean by 1 ulp": func(r *SummaryRow) { r.Mean = math.Nextafter(r.Mean, 1) },
		"sd":            func(r *SummaryRow) { r.SD *= 1.0000001 },
		"ci_low":        func(r *SummaryRow) { r.CILow -= 1e-15 },
		"ci_high":       func(r *SummaryRow) { r.CIHigh += 1e-15 },
		"n":             func(r *SummaryRow) { r.N++ },
	} {
		run := append([]SummaryRow(nil), ref...)
		change(&run[0])
		c, err := CompareSummaries(ref, run, true, 3)
		if err != nil || c.Failed != 1 || c.Cells[0].Status != CellOut {
			t.Errorf("%s changed: %+v, %v; want the cell out of tolerance", name, c.Cells[0], err)
		}
	}
}

// TestCompareSummaries_Tolerance judges one changed cell at a time against
// a reference cell of mean 0.8, CI 0.8 ± 0.01, sd 0.05 and n 20 (hand-built
// values: the rule reads the CI and the sd, not how they were made).
func TestCompareSummaries_Tolerance(t *testing.T) {
	const (
		m, hw, sd, n = 0.8, 0.01, 0.05, 20
		z            = 3
	)
	tol := z*math.Sqrt2*hw + RelTolNoCI*(1+m) // 0.0424...
	// sdMax is the largest sd a 20-value run may have: F⁻¹(1 − 1e-4; 19, 19)
	// by gonum (checked in closed form in TestSDLimit).
	sdMax := sdLimit(cell("a", 1, m, hw, sd, n), cell("a", 1, m, hw, sd, n))
	if !(sdMax > 2*sd && sdMax < 3*sd) {
		t.Fatalf("sd limit %v: want about 2.4 sd (F quantile about 5.6)", sdMax)
	}
	cases := []struct {
		name string
		ref  SummaryRow
		run  SummaryRow
		want string
	}{
		{"identical", cell("a", 1, m, hw, sd, n), cell("a", 1, m, hw, sd, n), CellSame},
		{"mean moved by half the reference half-width", cell("a", 1, m, hw, sd, n), cell("a", 1, m+0.5*hw, hw, sd, n), CellMoved},
		{"mean moved just within z·√2·hw", cell("a", 1, m, hw, sd, n), cell("a", 1, m+0.999*tol, hw, sd, n), CellMoved},
		{"mean moved just beyond z·√2·hw", cell("a", 1, m, hw, sd, n), cell("a", 1, m+1.001*tol, hw, sd, n), CellOut},
		// Under the old rule z·√(hw_ref² + hw_run²) = 300 this passed.
		{"mean moved by 0.5, run CI inflated to ±100", cell("a", 1, m, hw, sd, n), cell("a", 1, m+0.5, 100, 100*math.Sqrt(n)/1.96, n), CellOut},
		{"same mean, run CI inflated to ±100", cell("a", 1, m, hw, sd, n), cell("a", 1, m, 100, 100*math.Sqrt(n)/1.96, n), CellSpread},
		{"sd grown just within the F limit", cell("a", 1, m, hw, sd, n), cell("a", 1, m, hw, 0.999*sdMax, n), CellMoved},
		{"sd grown just beyond the F limit", cell("a", 1, m, hw, sd, n), cell("a", 1, m, hw, 1.001*sdMax, n), CellSpread},
		{"sd shrunk: one-sided", cell("a", 1, m, hw, sd, n), cell("a", 1, m, hw, sd/100, n), CellMoved},
		{"run of 2 values against 20: fewer values", cell("a", 1, m, hw, sd, n), cell("a", 1, m, hw, sd, 2), CellFewer},
		{"reference sd 0, run sd 0", cell("a", 1, m, 0, 0, n), cell("a", 1, m+1e-12, 0, 0, n), CellMoved},
		// Reference values all equal and no sibling cell: no scale at all.
		{"reference sd 0, no sibling, run sd 1e-3", cell("a", 1, m, 0, 0, n), cell("a", 1, m, 0, 1e-3, n), CellSpread},
		{"reference sd 0, no sibling, run CI ±100", cell("a", 1, m, 0, 0, n), cell("a", 1, m+0.5, 100, 100, n), CellOut},
		{"both sd 0, means differ", cell("a", 1, m, 0, 0, n), cell("a", 1, m+1e-6, 0, 0, n), CellOut},
		{"no CI: moved by 1e-12", cell("a", 1, m, math.NaN(), math.NaN(), 1), cell("a", 1, m+1e-12, math.NaN(), math.NaN(), 1), CellMoved},
		{"no CI: moved by 1e-6 is unjudged", cell("a", 1, m, math.NaN(), math.NaN(), 1), cell("a", 1, m+1e-6, math.NaN(), math.NaN(), 1), CellUnjudged},
		{"infinite reference CI: relative tolerance", cell("a", 1, m, math.Inf(1), sd, n), cell("a", 1, m+1e-6, math.Inf(1), sd, n), CellOut},
		{"both means NaN", cell("a", 1, math.NaN(), math.NaN(), math.NaN(), 0), cell("a", 1, math.NaN(), math.NaN(), math.NaN(), 1), CellMoved},
		{"run mean NaN", cell("a", 1, m, hw, sd, n), cell("a", 1, math.NaN(), math.NaN(), math.NaN(), n), CellOut},
		{"run values all NaN", cell("a", 1, m, hw, sd, n), cell("a", 1, math.NaN(), math.NaN(), math.NaN(), 0), CellFewer},
		{"run sd NaN with n 20", cell("a", 1, m, hw, sd, n), cell("a", 1, m, hw, math.NaN(), n), CellSpread},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := CompareSummaries([]SummaryRow{tc.ref}, []SummaryRow{tc.run}, false, z)
			if err != nil {
				t.Fatal(err)
			}
			got := c.Cells[0]
			if got.Status != tc.want {
				t.Fatalf("status %q, want %q (diff %g, tol %g, sd %g, limit %g)", got.Status, tc.want, got.Diff, got.Tol, got.GotSD, got.SDLimit)
			}
			failed := tc.want == CellOut || tc.want == CellSpread || tc.want == CellFewer
			if failed != (c.Failed == 1) || (tc.want == CellMoved) != (c.Moved == 1) || (tc.want == CellUnjudged) != (c.Unjudged == 1) {
				t.Errorf("counts: failed %d, moved %d, unjudged %d", c.Failed, c.Moved, c.Unjudged)
			}
		})
	}
}

// TestCompareSummaries_SiblingScale: a reference cell whose values were
// all equal is judged on the scale of the reference's other cells of its
// metric, never on the run's own CI, so an inflated run CI cannot hide a
// moved mean.
func TestCompareSummaries_SiblingScale(t *testing.T) {
	const (
		hw, sd, n = 0.01, 0.05, 20
		z         = 3
	)
	tol := z * math.Sqrt2 * hw
	sibling := cell("b", 1, 0.7, hw, sd, n)
	flat := cell("a", 1, 1, 0, 0, n) // e.g. a coverage of 1 on every replicate
	cases := []struct {
		name string
		run  SummaryRow
		want string
	}{
		{"moved by 0.5, CI ±100", cell("a", 1, 0.5, 100, 100, n), CellOut},
		{"moved within the sibling scale", cell("a", 1, 1-0.9*tol, hw, sd, n), CellMoved},
		{"moved beyond the sibling scale", cell("a", 1, 1-1.1*tol, hw, sd, n), CellOut},
		{"same mean, sd 1", cell("a", 1, 1, 0.4, 1, n), CellSpread},
	}
	for _, tc := range cases {
		c, err := CompareSummaries([]SummaryRow{sibling, flat}, []SummaryRow{sibling, tc.run}, false, z)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Cells[1]; got.Status != tc.want {
			t.Errorf("%s: status %q, want %q (diff %g, tol %g, sd limit %g)", tc.name, got.Status, tc.want, got.Diff, got.Tol, got.SDLimit)
		}
	}
}

// TestSDLimit checks the spread limit against closed forms of the F
// quantile. For D1 = 2 the F survival function is (1 + 2x/D2)^(−D2/2), so
// its upper-p quantile is (D2/2)(p^(−2/D2) − 1); D2 = 2 gives (1 − p)/p.
func TestSDLimit(t *testing.T) {
	const sd = 0.05
	for _, nRef := range []int{3, 20, 200} {
		d2 := float64(nRef - 1)
		q := d2 / 2 * (math.Pow(SpreadP, -2/d2) - 1)
		want := sd * math.Sqrt(q)
		got := sdLimit(cell("a", 1, 0.8, 0.01, sd, nRef), cell("a", 1, 0.8, 0.01, sd, 3))
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("n_ref %d, n_run 3: limit %v, want %v", nRef, got, want)
		}
	}
	if got, want := sdLimit(cell("a", 1, 0.8, 0.01, sd, 3), cell("a", 1, 0.8, 0.01, sd, 3)), sd*math.Sqrt(9999); math.Abs(got-want) > 1e-9*want {
		t.Errorf("F(2, 2): limit %v, want %v", got, want)
	}
	for name, pair := range map[string][2]SummaryRow{
		"reference n 1":       {cell("a", 1, 0.8, 0.01, sd, 1), cell("a", 1, 0.8, 0.01, sd, 20)},
		"reference sd NaN":    {cell("a", 1, 0.8, 0.01, math.NaN(), 20), cell("a", 1, 0.8, 0.01, sd, 20)},
		"reference sd +Inf":   {cell("a", 1, 0.8, 0.01, math.Inf(1), 20), cell("a", 1, 0.8, 0.01, sd, 20)},
		"reference sd 0, n 1": {cell("a", 1, 0.8, 0.01, 0, 1), cell("a", 1, 0.8, 0.01, sd, 20)},
		"run of 1 after sd 0": {cell("a", 1, 0.8, 0.01, 0, 20), cell("a", 1, 0.8, 0.01, math.NaN(), 1)},
		"run of 1 after sd>0": {cell("a", 1, 0.8, 0.01, sd, 20), cell("a", 1, 0.8, 0.01, sd, 1)},
	} {
		if got := sdLimit(pair[0], pair[1]); !math.IsInf(got, 1) {
			t.Errorf("%s: limit %v, want +Inf (not checked)", name, got)
		}
	}
}

func TestCompareSummaries_MissingNewDuplicate(t *testing.T) {
	ref := []SummaryRow{cell("a", 1, 0.8, 0.01, 0.05, 20), cell("b", 1, 0.7, 0.01, 0.05, 20)}
	other := []SummaryRow{ref[0], cell("c", 1, 0.7, 0.01, 0.05, 20)}
	for _, exact := range []bool{true, false} {
		c, err := CompareSummaries(ref, other, exact, 3)
		if err != nil || c.Failed != 2 || c.Cells[1].Status != CellMissing || c.Cells[2].Status != CellNew {
			t.Errorf("exact %v: missing/new: %+v, %v", exact, c, err)
		}
	}
	dup := []SummaryRow{ref[0], ref[1], ref[0]}
	for _, tc := range []struct {
		name     string
		ref, run []SummaryRow
		side     string
	}{
		{"run", ref, dup, "run"},
		{"reference", dup, ref, "reference"},
		{"both identical", dup, dup, "run"},
	} {
		for _, exact := range []bool{true, false} {
			_, err := CompareSummaries(tc.ref, tc.run, exact, 3)
			if !errors.Is(err, ErrDuplicateRow) || !strings.Contains(err.Error(), tc.side+":") || !strings.Contains(err.Error(), "e | d | a | alpha | 1 | auc") {
				t.Errorf("%s duplicated, exact %v: %v", tc.name, exact, err)
			}
		}
	}
}

func manifest() Manifest {
	return Manifest{Spec: SpecInfo{ID: "cv13-magic", Hash: "h", DesignHash: "d0"}, Seed: 2013, Profile: "quick",
		GOOS: "linux", GOARCH: "amd64", GOAMD64: "v1",
		Noise: []string{"simulation: seeded ChaCha8 streams per unit"},
		Datasets: []DatasetInfo{{Name: "magic", Source: "real",
			Files: []FileInfo{{Name: "magic04.data", SHA256: "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a"}}}}}
}

// standIn is magic replaced by its synthetic stand-in.
var standIn = []DatasetInfo{{Name: "magic", Source: "synthetic", Generator: "planted-logistic/v1",
	Params: map[string]string{"reason": "real file absent"}}}

func TestCompareSettings(t *testing.T) {
	cases := []struct {
		name    string
		change  func(run, ref *Manifest)
		refused string // substring of the refusal, "" for none
		differs string // substring of the differences, "" for exact
	}{
		{"identical", func(run, ref *Manifest) {}, "", ""},
		{"another seed", func(run, ref *Manifest) { run.Seed = 7 }, "", "seed: 7 (run) vs 2013 (reference)"},
		{"another resolved hash only", func(run, ref *Manifest) { run.Spec.Hash = "g" }, "", ""},
		{"another platform", func(run, ref *Manifest) { run.GOAMD64 = "v3" }, "", "platform: linux/amd64/v3 (run) vs linux/amd64/v1 (reference)"},
		{"secure noise in the run", func(run, ref *Manifest) { run.SecureNoise = true }, "", "noise: secure (run) vs seeded (reference)"},
		{"secure noise on both", func(run, ref *Manifest) {
			run.SecureNoise, ref.SecureNoise = true, true
		}, "", "secure on both"},
		{"stand-in vs real", func(run, ref *Manifest) { run.Datasets = standIn }, "data differ: magic=synthetic planted-logistic/v1 (run) vs magic=real sha256 e9314b7ebd4b… (reference)", ""},
		{"real vs stand-in", func(run, ref *Manifest) { ref.Datasets = standIn }, "magic=real sha256 e9314b7ebd4b… (run) vs magic=synthetic planted-logistic/v1 (reference)", ""},
		{"another file digest", func(run, ref *Manifest) {
			run.Datasets = []DatasetInfo{{Name: "magic", Source: "real", Files: []FileInfo{{SHA256: "318f00"}}}}
		}, "magic=real sha256 318f00 (run) vs", ""},
		{"digest differing beyond 12 digits", func(run, ref *Manifest) {
			run.Datasets = []DatasetInfo{{Name: "magic", Source: "real", Files: []FileInfo{{SHA256: "e9314b7ebd4b0000"}}}}
		}, "sha256 e9314b7ebd4b0000 (run) vs magic=real sha256 e9314b7ebd4b4b59", ""},
		{"another generator", func(run, ref *Manifest) {
			run.Datasets, ref.Datasets = standIn, []DatasetInfo{{Name: "magic", Source: "synthetic", Generator: "planted-logistic/v2"}}
		}, "planted-logistic/v1 (run) vs magic=synthetic planted-logistic/v2 (reference)", ""},
		{"same generator, other params", func(run, ref *Manifest) {
			run.Datasets, ref.Datasets = standIn, []DatasetInfo{{Name: "magic", Source: "synthetic", Generator: "planted-logistic/v1"}}
		}, "", ""},
		{"an extra dataset", func(run, ref *Manifest) {
			run.Datasets = append(run.Datasets, DatasetInfo{Name: "adult", Source: "real"})
		}, "adult=real (run) vs no adult (reference)", ""},
		{"another profile", func(run, ref *Manifest) { run.Profile, run.Spec.DesignHash = "paper", "d1" }, "profile differs: paper (run) vs quick (reference)", ""},
		{"another design", func(run, ref *Manifest) { run.Spec.DesignHash = "d1" }, "design differs", ""},
		{"another spec id", func(run, ref *Manifest) { run.Spec.ID = "cv13-adult" }, "spec id differs: cv13-adult (run) vs cv13-magic (reference)", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ref, run := manifest(), manifest()
			tc.change(&run, &ref)
			s, err := CompareSettings(ref, run)
			if err != nil {
				t.Fatal(err)
			}
			refused, differs := strings.Join(s.Refused, "; "), strings.Join(s.Differs, "; ")
			if tc.refused == "" && refused != "" || !strings.Contains(refused, tc.refused) {
				t.Errorf("refused %q, want %q", refused, tc.refused)
			}
			if tc.differs == "" && differs != "" || !strings.Contains(differs, tc.differs) {
				t.Errorf("differs %q, want %q", differs, tc.differs)
			}
			if s.Exact() != (refused == "" && differs == "") {
				t.Errorf("Exact() = %v", s.Exact())
			}
			if strings.Contains(refused, "profile differs") && strings.Contains(refused, "design differs") {
				t.Errorf("another profile also reported as another design: %q", refused)
			}
		})
	}
	old := manifest()
	old.Spec.DesignHash = ""
	if _, err := CompareSettings(old, manifest()); !errors.Is(err, ErrNoDesignHash) || !strings.Contains(err.Error(), "reference") || !strings.Contains(err.Error(), "refreshed") {
		t.Errorf("old reference: %v", err)
	}
	if _, err := CompareSettings(manifest(), old); !errors.Is(err, ErrNoDesignHash) || !strings.Contains(err.Error(), "run") {
		t.Errorf("old run: %v", err)
	}
}

// TestReferenceFS checks that every built-in reference reads back: a
// manifest with a spec id equal to its folder, and a summary without
// duplicated rows.
func TestReferenceFS(t *testing.T) {
	refs := ReferenceFS()
	ents, err := fs.ReadDir(refs, ".")
	if err != nil || len(ents) == 0 {
		t.Fatalf("built-in references: %d folders, %v", len(ents), err)
	}
	for _, e := range ents {
		m, err := ReadManifestFS(refs, e.Name()+"/manifest.json")
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if m.Spec.ID != e.Name() {
			t.Errorf("%s: manifest spec id %q", e.Name(), m.Spec.ID)
		}
		rows, err := ReadSummaryCSVFS(refs, e.Name()+"/summary.csv")
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if c, err := CompareSummaries(rows, rows, true, 3); err != nil || c.Failed != 0 {
			t.Errorf("%s against itself: %d failed, %v", e.Name(), c.Failed, err)
		}
	}
}

func TestReadFS_Errors(t *testing.T) {
	good, _ := EncodeSummaryCSV([]SummaryRow{cell("a", 1, 0.8, 0.01, 0.05, 20)})
	fsys := fstest.MapFS{
		"good.csv":       {Data: good},
		"header.csv":     {Data: []byte("experiment,dataset\ne,d\n")},
		"number.csv":     {Data: []byte(strings.Replace(string(good), "0.8,", "eighty,", 1))},
		"empty.csv":      {Data: nil},
		"ragged.csv":     {Data: append(append([]byte(nil), good...), "e,d\n"...)},
		"good.json":      {Data: []byte(`{"spec": {"id": "x", "design_sha256": "d"}}`)},
		"truncated.json": {Data: []byte(`{"spec": {"id": "x"`)},
		"noid.json":      {Data: []byte(`{"tool": "dprepro"}`)},
		"null.json":      {Data: []byte(`null`)},
	}
	if rows, err := ReadSummaryCSVFS(fsys, "good.csv"); err != nil || len(rows) != 1 || rows[0].Mean != 0.8 {
		t.Errorf("good.csv: %v, %v", rows, err)
	}
	for _, name := range []string{"header.csv", "number.csv", "empty.csv", "ragged.csv", "absent.csv"} {
		if _, err := ReadSummaryCSVFS(fsys, name); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
	if m, err := ReadManifestFS(fsys, "good.json"); err != nil || m.Spec.DesignHash != "d" {
		t.Errorf("good.json: %+v, %v", m.Spec, err)
	}
	for _, name := range []string{"truncated.json", "noid.json", "null.json", "absent.json"} {
		if _, err := ReadManifestFS(fsys, name); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
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
