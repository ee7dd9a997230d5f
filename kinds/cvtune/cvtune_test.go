package cvtune

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/comparison"
	"github.com/dprepro/dprepro/core/tune"

	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// smallSpec is a fast spec on a 1,500-row subsample of Magic (real when
// $DPREPRO_DATA holds it, else the labelled synthetic stand-in).
const smallSpec = `schema = 1
id = "small"
kind = "cv-tuning"
seed = 5

[data]
datasets = ["magic"]
subsample = 1500

[cv]
repetitions = 1
folds = 5

[tuning]
lambdas = [0.01, 0.1, 1.0]
alphas = [0.5, 50.0]
methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]

[output]
bootstrap = 200
`

func loadSmall(t *testing.T) *Experiment {
	t.Helper()
	s, err := experiments.Parse("small.toml", []byte(smallSpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestPartition(t *testing.T) {
	for _, c := range []struct{ n, k int }{{10, 3}, {1902, 10}, {5, 5}} {
		folds := tune.Partition(randx.New(1, "p"), c.n, c.k)
		seen := make([]bool, c.n)
		for _, f := range folds {
			if len(f) < c.n/c.k || len(f) > c.n/c.k+1 {
				t.Errorf("n=%d k=%d: fold size %d", c.n, c.k, len(f))
			}
			for _, i := range f {
				if seen[i] {
					t.Fatalf("index %d in two folds", i)
				}
				seen[i] = true
			}
		}
		for i, s := range seen {
			if !s {
				t.Fatalf("index %d in no fold", i)
			}
		}
	}
}

func TestUnits(t *testing.T) {
	e := loadSmall(t)
	// datasets × alphas × methods × repetitions × folds
	if got, want := len(e.Units()), 1*2*5*1*5; got != want {
		t.Fatalf("%d units, want %d", got, want)
	}
	if unitKeys(e)[0] != "magic/alpha=0.5/stability/rep=1/fold=1" {
		t.Errorf("first unit key %q", unitKeys(e)[0])
	}
}

// TestRun_Small runs the small spec end to end with 1 and 3 workers: the
// outputs must be byte-identical, and every row must obey the privacy
// accounting of Section 5.
func TestRun_Small(t *testing.T) {
	var first []byte
	var rowsCSV []byte
	for _, w := range []int{1, 3} {
		e := loadSmall(t)
		dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := os.ReadFile(filepath.Join(dir, "summary.csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := os.ReadFile(filepath.Join(dir, "rows.csv"))
		if first == nil {
			first, rowsCSV = sum, rows
			continue
		}
		if !bytes.Equal(first, sum) || !bytes.Equal(rowsCSV, rows) {
			t.Error("outputs differ between 1 and 3 workers")
		}
	}
	if !strings.HasPrefix(string(first), strings.Join(results.SummaryColumns, ",")+"\n") {
		t.Errorf("summary.csv header: %q", strings.SplitN(string(first), "\n", 2)[0])
	}
}

func TestRunUnit_Accounting(t *testing.T) {
	e := loadSmall(t)
	k := float64(len(e.spec.Tuning.Lambdas))
	for _, key := range unitKeys(e) {
		rows, err := runner.RunKey(context.Background(), e, key)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		r := rows[0]
		alpha := r.Float("alpha")
		method := r["method"]
		if idx := r.Float("index"); idx < 1 || idx > k {
			t.Errorf("%s: index %v", key, idx)
		}
		if auc := r.Float("auc"); !(auc >= 0 && auc <= 1) {
			t.Errorf("%s: auc %v", key, auc)
		}
		if mse := r.Float("mse"); !(mse >= 0 && mse <= 1) {
			t.Errorf("%s: mse %v", key, mse)
		}
		total := r.Float("eps_total")
		switch method {
		case "control":
			if r["private"] != "false" || !math.IsInf(total, 1) {
				t.Errorf("%s: control must be marked non-private, got %s %v", key, r["private"], total)
			}
		default:
			// CMS11 objective perturbation delivers exactly the ε asked for.
			if r["private"] != "true" || math.Abs(total-alpha) > 1e-12*alpha {
				t.Errorf("%s: eps_total %v, want alpha %v", key, total, alpha)
			}
		}
		if method == "stability" && r.Float("delta") != 0.01 {
			t.Errorf("%s: delta %v", key, r.Float("delta"))
		}
		wantFits := map[string]float64{"stability": k + 1, "alphaSplit": k, "dataSplit": k, "random": 1, "control": k}[method]
		if r.Float("fits") != wantFits {
			t.Errorf("%s: %v fits, want %v", key, r.Float("fits"), wantFits)
		}
		if r["solver_status"] != "converged" {
			t.Errorf("%s: solver %s (grad %v)", key, r["solver_status"], r.Float("grad_norm"))
		}
	}
}

// TestRunUnit_LargeAlpha: at α = 50 the privacy noise is negligible, so
// Control's test AUC must be close to that of the best non-private model and
// Stability must pick as well as Control on average (metamorphic check: less
// privacy, less noise).
func TestRunUnit_LargeAlpha(t *testing.T) {
	e := loadSmall(t)
	var stab, ctrl, stabSmall float64
	for f := 1; f <= 5; f++ {
		for _, c := range []struct {
			key string
			acc *float64
		}{
			{"magic/alpha=50/stability/rep=1/fold=", &stab},
			{"magic/alpha=50/control/rep=1/fold=", &ctrl},
			{"magic/alpha=0.5/stability/rep=1/fold=", &stabSmall},
		} {
			rows, err := runner.RunKey(context.Background(), e, c.key+string(rune('0'+f)))
			if err != nil {
				t.Fatal(err)
			}
			*c.acc += rows[0].Float("auc") / 5
		}
	}
	if ctrl < 0.7 {
		t.Errorf("control AUC at alpha=50 is %v; a logistic model on Magic reaches ~0.8", ctrl)
	}
	if stab < ctrl-0.05 {
		t.Errorf("stability AUC %v far below control %v at alpha=50", stab, ctrl)
	}
	if stabSmall > stab+0.02 {
		t.Errorf("stability AUC at alpha=0.5 (%v) above alpha=50 (%v)", stabSmall, stab)
	}
}

// TestNew_TooFewRows: a dataset too small for its folds (some fold, or some
// dataSplit part, would be empty or hold a handful of rows) is refused at
// load with the minimum, not run into empty folds. The minimum follows the
// methods the spec runs: dataSplit's k parts of the training folds need
// folds × k × 2 rows; without it every fold needs 2 rows, so a 10-row
// dataset runs 3 folds of stability and control (the newcomer's case,
// once refused in dataSplit's name) and 5 rows do not.
func TestNew_TooFewRows(t *testing.T) {
	tests := []struct {
		name, from, to string
		want           string // "" when the spec runs
	}{
		{"dataSplit's parts", "subsample = 1500", "subsample = 29",
			"small.toml:7: data.datasets[0]: dataset magic: 29 rows; 5 folds and dataSplit into 3 parts need at least 30"},
		{"without dataSplit, enough for the folds", "subsample = 1500", "subsample = 10",
			""},
		{"without dataSplit, too few for the folds", "subsample = 1500", "subsample = 5",
			"small.toml:7: data.datasets[0]: dataset magic: 5 rows; 3 folds need at least 6 (2 in every fold: each is in turn the test, the validation and a training fold)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(smallSpec, tt.from, tt.to, 1)
			if !strings.Contains(tt.name, "dataSplit's") {
				src = strings.NewReplacer("folds = 5", "folds = 3", "lambdas = [0.01, 0.1, 1.0]", "lambdas = [0.01, 1.0]",
					`methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]`, `methods = ["stability", "control"]`).Replace(src)
			}
			s, err := experiments.Parse("small.toml", []byte(src), "", testKinds)
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
			if tt.want != "" {
				// At the dataset's entry, named once: file, line, key.
				if err == nil || err.Error() != tt.want {
					t.Errorf("err = %v\nwant %s", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			// It runs: every unit a row, none failed.
			dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "rows.csv"))
			if err != nil {
				t.Fatal(err)
			}
			if rows := strings.Count(string(b), "\n") - 1; rows != len(e.Units()) {
				t.Errorf("%d rows for %d units", rows, len(e.Units()))
			}
		})
	}
}

// TestNew_StabilityNeeds: a method that runs Algorithm 1 checks, at load,
// that the learner has its stability constants on the smallest training
// set the folds leave (n minus the two largest folds) at the smallest α;
// a learner whose constants need more rows is refused naming the method,
// the learner and the sizes, not in every unit.
func TestNew_StabilityNeeds(t *testing.T) {
	registerLearner(t, needyLearner{})
	s := parseExt(t, `learners = ["needy"]`)
	s.Data.Subsample = 400
	s.Section.(*Section).Tuning.Methods = []string{"stability", "random"}
	_, err := New(s, Options{})
	// 400 rows in 4 folds of 100: the training set is 200 rows.
	want := "ext.toml:7: data.datasets[0]: dataset magic: method stability, learner needy, alpha = 2 (training at 1 on the smallest training set, 200 rows): needy: needs 500 training rows, got 200"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	// Without a method that runs Algorithm 1 the learner's constants are
	// not asked for.
	s.Section.(*Section).Tuning.Methods = []string{"alphaSplit", "random"}
	e, err := New(s, Options{})
	if err != nil {
		t.Fatalf("without stability: %v", err)
	}
	e.Close()
}

// needyLearner's stability constants hold only on 500 training rows or
// more.
type needyLearner struct{ fakeLearner }

func (needyLearner) Name() string { return "needy" }
func (needyLearner) StabilityConstants(_ context.Context, _ []float64, n int, _, _ float64) (float64, float64, error) {
	if n < 500 {
		return 0, 0, fmt.Errorf("needy: needs 500 training rows, got %d", n)
	}
	return 1, 1, nil
}

// TestRun_Baseline: with tuning.baseline the cv-tuning run writes
// comparison.csv — every other method against it at each α on AUC, MSE
// and error rate, paired by (rep, fold) — equal to comparison.Compare of
// its rows; a baseline that is not a method label of the run (with
// tuning.learners, "<method>/<learner>") is refused at its key.
func TestRun_Baseline(t *testing.T) {
	src := strings.Replace(smallSpec, `methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]`,
		"methods = [\"stability\", \"random\"]\nbaseline = \"random\"", 1)
	e, dir := runSpec(t, src)
	got, err := os.ReadFile(filepath.Join(dir, runner.ComparisonFile))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := results.ReadRowsCSV(filepath.Join(dir, "rows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	o, _, ok := e.Comparison()
	if !ok || o.Baseline != "random" || !slices.Equal(o.Methods, []string{"stability"}) || !slices.Equal(o.PairKey, []string{"rep", "fold"}) {
		t.Fatalf("comparison options %+v", o)
	}
	o.Level = 0.95
	cells, err := comparison.Compare(rows, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2*3 {
		t.Errorf("%d cells, want 2 α × 3 metrics", len(cells))
	}
	for _, c := range cells {
		if c.Pairs != 5 {
			t.Errorf("cell %+v: %d pairs, want the 5 folds", c, c.Pairs)
		}
	}
	want, _ := comparison.CSV(cells, "alpha", 0.95)
	if !bytes.Equal(got, want) {
		t.Errorf("comparison.csv is not comparison.Compare of the rows:\n%s\nwant\n%s", got, want)
	}
	bad := strings.Replace(src, `baseline = "random"`, "baseline = \"random\"\nlearners = [\"objective-perturbation\"]", 1)
	if _, err := experiments.Parse("small.toml", []byte(bad), "", testKinds); err == nil ||
		!strings.Contains(err.Error(), `tuning.baseline: unknown method "random" (the spec runs: stability/objective-perturbation, random/objective-perturbation)`) {
		t.Errorf("a bare method as the baseline with tuning.learners: %v", err)
	}
}

// TestRun_LearnerIndependence: a cv-tuning learner's rows do not depend
// on which other learners the spec lists — each unit's draws come from a
// stream keyed by its own key (dataset, α, method/learner, repetition,
// fold) — so adding a learner leaves the rows of the others
// byte-identical.
func TestRun_LearnerIndependence(t *testing.T) {
	rowsOf := func(learnersList string) []results.Row {
		src := strings.Replace(smallSpec, `methods = ["stability", "alphaSplit", "dataSplit", "random", "control"]`,
			"methods = [\"alphaSplit\", \"random\"]\nlearners = "+learnersList, 1)
		_, dir := runSpec(t, src)
		rows, err := results.ReadRowsCSV(filepath.Join(dir, "rows.csv"))
		if err != nil {
			t.Fatal(err)
		}
		var out []results.Row
		for _, r := range rows {
			if r["learner"] == "objective-perturbation" {
				out = append(out, r)
			}
		}
		return out
	}
	alone := rowsOf(`["objective-perturbation"]`)
	beside := rowsOf(`["output-perturbation", "objective-perturbation"]`)
	a, _ := results.EncodeCSV(LearnerColumns, alone)
	b, _ := results.EncodeCSV(LearnerColumns, beside)
	if len(alone) != 2*2*5 || string(a) != string(b) {
		t.Errorf("objective perturbation's %d rows alone differ from its %d rows beside output perturbation", len(alone), len(beside))
	}
}

// runSpec loads the spec text src and runs it with 2 workers, returning
// the experiment and its run folder.
func runSpec(t *testing.T, src string) (*Experiment, string) {
	t.Helper()
	s, err := experiments.Parse("small.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return e, dir
}
