package cvtune

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/histogram"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// histSpecSrc: one synthetic density and Adult's age, 5-fold CV, a small and
// a large α.
const histSpecSrc = `schema = 1
id = "hist-small"
kind = "histogram-tuning"
seed = 9

[data]
datasets = ["adult"]
column_scale = "none"
intercept = false
row_norm = "none"
subsample = 6000

[histogram]
bins = [4, 16, 64]
densities = ["bimodal"]
records = 6000
attributes = [{ dataset = "adult", column = "age", lo = 0.0, hi = 100.0 }]

[cv]
repetitions = 1
folds = 5

[tuning]
alphas = [1.0, 1000.0]
methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]

[output]
bootstrap = 200
`

func loadHist(t *testing.T, src string) (*Hist, error) {
	t.Helper()
	s, err := experiments.Parse("hist.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	return NewHist(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
}

// TestHist_DensitiesListed checks that the spec's density names are the
// ones core/histogram defines.
func TestHist_DensitiesListed(t *testing.T) {
	for _, name := range HistogramDensities {
		if _, ok := histogram.Densities[name]; !ok {
			t.Errorf("experiments lists density %q, core/histogram does not define it", name)
		}
	}
	if len(histogram.Densities) != len(HistogramDensities) {
		t.Errorf("core/histogram defines %d densities, experiments lists %d", len(histogram.Densities), len(HistogramDensities))
	}
}

// TestHist_Run checks rows, accounting and determinism across workers, and
// that with a huge budget Stability chooses as Control does and beats
// dataSplit's ISE on the known density.
func TestHist_Run(t *testing.T) {
	var first, firstRows []byte
	for _, w := range []int{1, 3} {
		e, err := loadHist(t, histSpecSrc)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		sum, _ := os.ReadFile(filepath.Join(dir, "summary.csv"))
		srows, err := results.ReadSummaryCSV(filepath.Join(dir, "summary.csv"))
		if err != nil {
			t.Fatal(err)
		}
		metrics := map[string]int{}
		for _, r := range srows {
			metrics[r.Dataset+" "+r.Metric]++
		}
		if metrics["adult:age ise"] != 0 || metrics["bimodal ise"] != 2*5 || metrics["adult:age ise_estimate"] != 2*5 {
			t.Errorf("summary cells per (source, metric): %v; want exact ISE for the density only", metrics)
		}
		rows, _ := os.ReadFile(filepath.Join(dir, "rows.csv"))
		for _, f := range []string{"ise.png", "ise-estimate.svg", "bin-width.png"} {
			if _, err := os.Stat(filepath.Join(dir, "figures", f)); err != nil {
				t.Error(err)
			}
		}
		if first == nil {
			first, firstRows = sum, rows
			continue
		}
		if !bytes.Equal(first, sum) || !bytes.Equal(firstRows, rows) {
			t.Error("outputs differ between 1 and 3 workers")
		}
	}

	e, err := loadHist(t, histSpecSrc)
	if err != nil {
		t.Fatal(err)
	}
	iseAt := map[string]float64{}
	for _, key := range unitKeys(e) {
		rows, err := runner.RunKey(context.Background(), e, key)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		r := rows[0]
		alpha, method := r.Float("alpha"), r["method"]
		if w := r.Float("bin_width"); !slices.Contains([]float64{0.25, 1.0 / 16, 1.0 / 64}, w) {
			t.Errorf("%s: bin width %v", key, w)
		}
		real := strings.HasPrefix(key, "adult:")
		if real != math.IsNaN(r.Float("ise")) {
			t.Errorf("%s: ise %v (exact ISE only for the known density)", key, r.Float("ise"))
		}
		if method == "control" {
			if r["private"] != "false" || !math.IsInf(r.Float("eps_total"), 1) {
				t.Errorf("%s: control must be non-private", key)
			}
		} else if r["private"] != "true" || r.Float("eps_total") != alpha {
			t.Errorf("%s: eps_total %v, want %v", key, r.Float("eps_total"), alpha)
		}
		if (method == "stability") == math.IsNaN(r.Float("beta")) {
			t.Errorf("%s: beta %v", key, r.Float("beta"))
		}
		if !real {
			iseAt[method+"@"+r["alpha"]] += r.Float("ise") / 5
			if alpha == 1000 && method == "stability" {
				ctrl, _ := runner.RunKey(context.Background(), e, strings.Replace(key, "stability", "control", 1))
				if ctrl[0]["bins"] != r["bins"] {
					t.Errorf("%s: alpha = 1000: stability chose %s bins, control %s", key, r["bins"], ctrl[0]["bins"])
				}
			}
		}
	}
	if s, d := iseAt["stability@1000"], iseAt["dataSplit@1000"]; !(s <= d) {
		t.Errorf("mean ISE at alpha = 1000: stability %v above dataSplit %v (which trains on 1/k of T)", s, d)
	}
}

// TestHist_RefusesSmallN checks Theorem 6's sample-size requirement.
func TestHist_RefusesSmallN(t *testing.T) {
	src := strings.Replace(strings.Replace(histSpecSrc, "records = 6000", "records = 300", 1), "alphas = [1.0, 1000.0]", "alphas = [0.1, 1000.0]", 1)
	src = strings.Replace(src, `attributes = [{ dataset = "adult", column = "age", lo = 0.0, hi = 100.0 }]`, "", 1)
	_, err := loadHist(t, src)
	if err == nil || !strings.Contains(err.Error(), "Theorem 6 needs n >=") || !strings.Contains(err.Error(), "source bimodal") {
		t.Errorf("err = %v, want Theorem 6's requirement naming the source", err)
	}
	bad := strings.Replace(histSpecSrc, `column = "age"`, `column = "wage"`, 1)
	if _, err := loadHist(t, bad); err == nil || !strings.Contains(err.Error(), `no numeric column "wage"`) {
		t.Errorf("unknown column: err = %v", err)
	}
}

// TestHist_TooFewPoints: the minimum of a source follows the methods the
// spec runs, as for cv-tuning: dataSplit's k = 3 parts need 5 × 3 × 2 =
// 30 points in 5 folds; without dataSplit 2 points a fold (10) do.
func TestHist_TooFewPoints(t *testing.T) {
	base := strings.NewReplacer("records = 6000", "records = 29", "alphas = [1.0, 1000.0]", "alphas = [1000.0]",
		`attributes = [{ dataset = "adult", column = "age", lo = 0.0, hi = 100.0 }]`, "").Replace(histSpecSrc)
	_, err := loadHist(t, base)
	const want = "hist.toml:16: histogram.records: source bimodal has 29 points; 5 folds and dataSplit into 3 parts need at least 30"
	if err == nil || err.Error() != want {
		t.Errorf("with dataSplit: err = %v\nwant %s", err, want)
	}
	noSplit := strings.Replace(base, `methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]`, `methods = ["alphaSplit", "random", "control"]`, 1)
	if _, err := loadHist(t, noSplit); err != nil {
		t.Errorf("29 points in 5 folds without dataSplit: %v", err)
	}
	few := strings.Replace(noSplit, "records = 29", "records = 9", 1)
	const wantFew = "hist.toml:16: histogram.records: source bimodal has 9 points; 5 folds need at least 10 (2 in every fold: each is in turn the test, the validation and a training fold)"
	if _, err := loadHist(t, few); err == nil || err.Error() != wantFew {
		t.Errorf("9 points: err = %v\nwant %s", err, wantFew)
	}
}
