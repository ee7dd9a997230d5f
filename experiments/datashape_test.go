package experiments_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
	. "github.com/dprepro/dprepro/experiments"
)

// threeFiles is a cv-tuning spec over three data files (the issue's "three
// files at 1 worker"); lines count from 1 at `schema = 1`.
const threeFiles = `schema = 1
id = "three"
kind = "cv-tuning"
seed = 1
[data]
datasets = ["a", "b", "c"]
[data.files.a]
path = "a.csv"
label = "y"
positive = "yes"
[data.files.b]
path = "b.csv"
label = "y"
positive = "yes"
[data.files.c]
path = "c.csv"
label = "y"
positive = "yes"
[cv]
repetitions = 1
folds = 3
[tuning]
lambdas = [0.01, 1.0]
alphas = [1.0, 5.0]
methods = ["stability", "control"]
[output]
bootstrap = 200
`

// TestEstimateMemory_DataFileShapes: a data file's shape is not guessed
// (the old 600,000 × 128 assumption refused three 569-record files with
// one worker in 24 GiB): it has no terms until it is read; then its
// measured n and d count, and a d that one-hot encoding of an identifier
// blows up to ≈ n is refused naming the dataset, its n and d and the
// attribute.
func TestEstimateMemory_DataFileShapes(t *testing.T) {
	withShapes(t)
	withBudget(t, 2<<30)
	s, err := Parse("three.toml", []byte(threeFiles), "", testKinds)
	if err != nil {
		t.Fatalf("three small data files refused at load: %v", err)
	}
	for _, w := range []int{1, 2, 3} {
		if err := s.CheckResources(w); err != nil {
			t.Errorf("%d workers before reading: %v", w, err)
		}
	}
	before, _ := s.EstimateMemory(3)
	// 600,000 × 128 per file would be gigabytes; unread files add nothing
	// but the runtime's 64 MiB and the rows.
	if before > 100<<20 {
		t.Errorf("estimate before reading %d bytes: the unread files were guessed", before)
	}
	for _, name := range []string{"a", "b", "c"} {
		s.SetDataShape(name, datasets.Shape{N: 569, D: 30})
	}
	after, _ := s.EstimateMemory(3)
	// Each file (d = 31 with the intercept): 2 n (d+1) × 8 = 0.29 MB of
	// table and matrix, and per unit in flight 2 n (d × 32 + 24) + 64 n +
	// 2 k d × 8 = 1.16 MB (cvtune's Workload); ×2 for the collector and 3
	// units in flight: 3 × (0.58 + 6.94) MB ≈ 22.6 MB in all.
	if d := after - before; d < 20e6 || d > 25e6 {
		t.Errorf("estimate after reading three 569 × 30 files: %d bytes (before %d)", after, before)
	}
	if err := s.CheckResources(3); err != nil {
		t.Errorf("three 569-record files at 3 workers: %v", err)
	}

	// An identifier listed as categorical: d ≈ n.
	s.SetDataShape("b", datasets.Shape{N: 20000, D: 20003, Categorical: []datasets.LevelCount{{Name: "colour", Levels: 3}, {Name: "id", Levels: 20000}}})
	err = s.CheckResources(1)
	var se *SpecError
	if !errors.As(err, &se) {
		t.Fatalf("identifier as categorical: %v, want a *SpecError", err)
	}
	for _, want := range []string{
		"three.toml:6: data.datasets[1]: estimated memory ",
		"is dataset b: a unit's rows",
		"dataset b has n = 20000, d = 20003 after one-hot encoding (id: 20000 levels, colour: 3 levels)",
		`the categorical attribute "id" has a level for about every record (an identifier?): leave it out with data.columns, or do not list it as categorical`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error\n%v\nlacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "lower data.datasets") {
		t.Errorf("error gives advice a user cannot take: %v", err)
	}

	// A registered dataset: the measured shape replaces the documented one.
	m, err := Parse("good.toml", []byte(goodSpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	documented, _ := m.EstimateMemory(1)
	m.SetDataShape("magic", datasets.Shape{N: 100, D: 10})
	if measured, _ := m.EstimateMemory(1); !(measured < documented) {
		t.Errorf("magic measured at 100 records: %d bytes, documented 19,020: %d", measured, documented)
	}
}

// TestCheckResources_DataAdvice: a spec refused for a registered dataset's
// size says which dataset and what n and d the registry documents, and
// what to change.
func TestCheckResources_DataAdvice(t *testing.T) {
	withShapes(t)
	withBudget(t, 24<<30)
	s, err := Parse("good.toml", []byte(strings.Replace(goodSpec, `datasets = ["magic"]`, `datasets = ["kddcup99"]`, 1)), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	MemoryBudget = 1 << 30
	err = s.CheckResources(8)
	// The dataset's two terms (its rows per unit in flight, its table and
	// matrix) shrink together when it is cut: one change.
	want := "with 1 more term that dataset kddcup99 drives (58.7 GiB in all): dataset kddcup99 has n = 494021, d = 118 as the registry documents it: keep fewer attributes (data.columns) or records (data.subsample), or run with fewer workers, until those terms are below 936 MiB together"
	if err == nil || !strings.HasPrefix(err.Error(), "good.toml:7: data.datasets[0]: estimated memory") || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error\n%v\nwant it to end with\n%s", err, want)
	}
}

// TestParse_Magnitude: a real-valued parameter beyond what the
// computations and figures bear (|x| outside [1e-100, 1e100]) is refused
// at load with file, line and key, in every kind; the bounds themselves
// are accepted.
func TestParse_Magnitude(t *testing.T) {
	withDatasets(t)
	const tooBig = "must be at most 1e+100 in magnitude (got 1e+300)"
	const tooSmall = "must be at least 1e-100 in magnitude (got 1e-300)"
	cases := []struct {
		name, base, old, new, want string
	}{
		{"cv alphas", goodSpec, "alphas = [0.5, 1.0]", "alphas = [0.5, 1e300]", "t.toml:15: tuning.alphas[1]: " + tooBig},
		{"cv lambdas", goodSpec, "lambdas = [0.1, 1.0]", "lambdas = [1e-300, 1.0]", "t.toml:14: tuning.lambdas[0]: " + tooSmall},
		{"cv huber_h", goodSpec, `methods = ["stability", "control"]`, "methods = [\"stability\", \"control\"]\nloss = \"huber\"\nhuber_h = 1e-300", "t.toml:18: tuning.huber_h: " + tooSmall},
		{"histogram alphas", goodHist, "alphas = [1.0]", "alphas = [1e300]", "hist.toml:15: tuning.alphas[0]: " + tooBig},
		{"histogram bounds", goodHist, "hi = 100.0", "hi = 1e300", "histogram.attributes[0].hi: " + tooBig},
		{"expost lambda", goodExPost, "lambda = 0.005", "lambda = 1e-300", "af.toml:14: accuracy_first.lambda: " + tooSmall},
		{"expost alphas", goodExPost, "alphas = [0.05, 0.1]", "alphas = [0.05, 1e300]", "af.toml:17: accuracy_first.alphas[1]: " + tooBig},
		{"expost eps_min", goodExPost, "trials = 3", "trials = 3\neps_min = 1e-300", "af.toml:19: accuracy_first.eps_min: " + tooSmall},
		{"expost eps_max_factor", goodExPost, "trials = 3", "trials = 3\neps_max_factor = 1e300", "af.toml:19: accuracy_first.eps_max_factor: " + tooBig},
		{"ci c", goodCI, "vi_fits = 200", "vi_fits = 200\nc = 1e300", "wkl.toml:17: confidence_intervals.c: " + tooBig},
		{"ci eps1", goodCI, "vi_fits = 200", "vi_fits = 200\neps1 = 1e-300", "wkl.toml:17: confidence_intervals.eps1: " + tooSmall},
		{"ci sigma_floor", goodCI, "vi_fits = 200", "vi_fits = 200\nsigma_floor = 1e300", "wkl.toml:17: confidence_intervals.sigma_floor: " + tooBig},
		{"ci values", strings.Replace(goodCI, "values = [1, 2, 3]", "values = [1, 2, 1e300]", 1), `sweep = "d"`, `sweep = "eps2"`, "wkl.toml:13: confidence_intervals.values[2]: " + tooBig},
		{"mechanisms epsilons", goodMech, "epsilons = [0.5, 1.0]", "epsilons = [0.5, 1e300]", "mech.toml:6: mechanisms.epsilons[1]: " + tooBig},
		{"audit epsilons", goodAudit, "epsilons = [0.5, 1.0]", "epsilons = [1e-300, 1.0]", "aud.toml:6: audit.epsilons[0]: " + tooSmall},
		{"comparison epsilons", goodComparison, "epsilons = [0.5, 1.0]", "epsilons = [0.5, 1e300]", "lc.toml:11: comparison.epsilons[1]: " + tooBig},
		{"comparison lambda", goodComparison, "lambda = 0.01", "lambda = 1e-300", "lc.toml:12: comparison.lambda: " + tooSmall},
		{"comparison lambdas", goodComparison, "lambda = 0.01", "lambda = 0.01\n[comparison.lambdas]\noutput-perturbation = 1e300", "lc.toml:13: comparison.lambdas.output-perturbation: " + tooBig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(c.base, c.old) {
				t.Fatalf("%q not in the good spec", c.old)
			}
			src := strings.Replace(c.base, c.old, c.new, 1)
			file := strings.SplitN(c.want, ":", 2)[0]
			_, err := Parse(file, []byte(src), "", testKinds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\nwant it to contain\n%s", err, c.want)
			}
			// At the bounds: accepted (the expost grid check of New is
			// not Load's).
			edge := strings.NewReplacer("1e300", "1e100", "1e-300", "1e-100").Replace(src)
			if _, err := Parse(file, []byte(edge), "", testKinds); err != nil && strings.Contains(err.Error(), "magnitude") {
				t.Errorf("at the bound: %v", err)
			}
		})
	}
}

// goodComparison is a valid learner-comparison spec.
const goodComparison = `schema = 1
id = "lc"
kind = "learner-comparison"
seed = 1
[data]
datasets = ["magic"]
[cv]
repetitions = 1
[comparison]
learners = ["objective-perturbation", "output-perturbation"]
epsilons = [0.5, 1.0]
lambda = 0.01
`

// TestParse_UnreadDataFile: a [data.files] table that no data.datasets
// list names (the base spec's or a profile's) is a warning with its file,
// line and key; one that a profile names is not.
func TestParse_UnreadDataFile(t *testing.T) {
	src := threeFiles + `[data.files.extra]
path = "extra.csv"
label = "y"
`
	s, err := Parse("three.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`three.toml:28: data.files.extra: no data.datasets list (the base spec's or a profile's) names "extra": the file is never read; add it to data.datasets, or remove the table`}
	if got := s.Warnings(); strings.Join(got, "\n") != want[0] {
		t.Errorf("warnings %q, want %q", got, want)
	}
	// The quick profile reads it: no warning, whichever profile runs.
	named := src + `[profile.quick.data]
datasets = ["extra"]
`
	for _, p := range []string{"", "quick"} {
		s, err := Parse("three.toml", []byte(named), p, testKinds)
		if err != nil {
			t.Fatal(err)
		}
		if w := s.Warnings(); len(w) != 0 {
			t.Errorf("profile %q: warnings %q", p, w)
		}
	}
	if s, err := Parse("three.toml", []byte(threeFiles), "", testKinds); err != nil || len(s.Warnings()) != 0 {
		t.Errorf("every table named: %v, %v", s.Warnings(), err)
	}
}
