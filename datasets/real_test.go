package datasets

import (
	"math"
	"os"
	"slices"
	"testing"
	"time"
)

// realDataDir returns $DPREPRO_DATA, skipping the test when it is unset or
// lacks the dataset's file.
func realDataDir(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv(EnvDataDir)
	if dir == "" {
		t.Skipf("real-data test: $%s is unset; set it to a directory holding the %s files (see docs/datasets.md; dprepro data fetch downloads them)", EnvDataDir, name)
	}
	file := builtinEntry(name).Files[0].Name
	if _, _, ok := probe(dir, builtinEntry(name).Files[0]); !ok {
		t.Skipf("real-data test: %s (or %s.gz) not in $%s=%s", file, file, EnvDataDir, dir)
	}
	return dir
}

// TestRealData checks the real files against the counts in
// docs/datasets.md: records after cleaning, positives,
// checksum, and that the synthetic stand-in has exactly the real feature
// names.
func TestRealData(t *testing.T) {
	tests := []struct {
		name               string
		records, positives int
		dropped            int
		dim                int
		slow               bool
	}{
		{"adult", 30162, 7508, 2399, 104, false}, // 32,561 − 2,399 with '?'; 7,508 ">50K"
		{"magic", 19020, 12332, 0, 10, false},    // 12,332 "g"
		{"bank", 45211, 5289, 0, 51, false},      // 5,289 "yes"
		{"kddcup99", 494021, 396743, 0, 118, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := realDataDir(t, tt.name)
			if tt.slow && testing.Short() {
				t.Skip("kddcup99 full load (494,021 rows) skipped under -short")
			}
			start := time.Now()
			ds, err := Load(tt.name, Options{DataDir: dir, Synthetic: SyntheticNever, Preprocess: Preprocessing{Intercept: true}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: loaded %d×%d in %v", tt.name, ds.X.RawMatrix().Rows, ds.X.RawMatrix().Cols, time.Since(start))
			n, d := ds.X.Dims()
			if n != tt.records || d != tt.dim+1 {
				t.Errorf("X is %d×%d, want %d×%d", n, d, tt.records, tt.dim+1)
			}
			pos := 0
			for _, y := range ds.Y {
				if y == 1 {
					pos++
				}
			}
			if pos != tt.positives {
				t.Errorf("%d positives, want %d", pos, tt.positives)
			}
			f := ds.Source.Files[0]
			if ds.Source.Kind != KindReal || !f.Verified || f.SHA256 != builtinEntry(tt.name).Files[0].SHA256 || f.Dropped != tt.dropped {
				t.Errorf("source = %+v", ds.Source)
			}
			var maxNorm float64
			for i := 0; i < n; i++ {
				maxNorm = math.Max(maxNorm, l2(ds.X.RawRowView(i)))
			}
			if math.Abs(maxNorm-1) > normTol {
				t.Errorf("max ‖x‖₂ = %v after l2-max, want 1", maxNorm)
			}

			syn, err := Load(tt.name, Options{Synthetic: SyntheticAlways, Preprocess: Preprocessing{Intercept: true}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(syn.FeatureNames, ds.FeatureNames) {
				t.Errorf("synthetic feature names differ from the real ones:\n%q\n%q", syn.FeatureNames, ds.FeatureNames)
			}

			st, err := Inspect(tt.name, dir)
			if err != nil || st[0].State != StateVerified || st[0].Err != nil {
				t.Errorf("Inspect = %+v, %v", st, err)
			}
		})
	}
}

// TestRealData_KDDLigett reproduces the preprocessing of Ligett et al.
// (2017), datasets/KDDcup99/process_kdd.py: the 38 numeric columns,
// log(1+x) of duration, src_bytes and dst_bytes, rows divided by the
// maximum ℓ1 norm.
func TestRealData_KDDLigett(t *testing.T) {
	dir := realDataDir(t, "kddcup99")
	if testing.Short() {
		t.Skip("kddcup99 full load skipped under -short")
	}
	e, _ := Lookup("kddcup99")
	ds, err := Load("kddcup99", Options{DataDir: dir, Synthetic: SyntheticNever, Preprocess: Preprocessing{
		Columns: e.Numeric, Log1p: []string{"duration", "src_bytes", "dst_bytes"},
		ColumnScale: ScaleNone, RowNorm: RowL1Max,
	}})
	if err != nil {
		t.Fatal(err)
	}
	n, d := ds.X.Dims()
	if n != 494021 || d != 38 || ds.FeatureNames[0] != "log1p(duration)" {
		t.Fatalf("X is %d×%d, names %q", n, d, ds.FeatureNames[:3])
	}
	var maxL1 float64
	for i := 0; i < n; i++ {
		maxL1 = math.Max(maxL1, l1(ds.X.RawRowView(i)))
	}
	if math.Abs(maxL1-1) > normTol {
		t.Errorf("max ‖x‖₁ = %v, want 1", maxL1)
	}
}
