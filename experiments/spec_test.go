package experiments_test

import (
	"fmt"
	. "github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/kinds"
	"github.com/dprepro/dprepro/kinds/cicoverage"
	"github.com/dprepro/dprepro/kinds/cvtune"
	"github.com/dprepro/dprepro/kinds/expostsweep"
	"github.com/dprepro/dprepro/kinds/mechbounds"
	"github.com/dprepro/dprepro/kinds/privaudit"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodSpec = `schema = 1
id = "t"
kind = "cv-tuning"
seed = 7

[data]
datasets = ["magic"]

[cv]
repetitions = 3
folds = 10

[tuning]
lambdas = [0.1, 1.0]
alphas = [0.5, 1.0]
methods = ["stability", "control"]

[profile.quick.cv]
repetitions = 1
`

// claimTable is a valid [[claims]] table to insert before goodSpec's
// profile.
const claimTable = `[[claims]]
id = "c"
source = "Section 5"
statement = "stability beats control"
rule = "greater"
metric = "auc"
method = "stability"
than = "control"
`

// withDatasets is kept for its callers: data.datasets is now always
// checked against the datasets registry (and data.files), with nothing to
// set up.
func withDatasets(t *testing.T) { t.Helper() }

func TestParse_Good(t *testing.T) {
	withDatasets(t)
	s, err := Parse("good.toml", []byte(goodSpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if sec := s.Section.(*cvtune.Section); sec.CV.Repetitions != 3 || s.Profile != "paper" || sec.Tuning.Delta != 0.01 || s.Data.RowNorm != "l2-max" {
		t.Errorf("base spec resolved wrong: %+v", s)
	}
	q, err := Parse("good.toml", []byte(goodSpec), "quick", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if sec := q.Section.(*cvtune.Section); sec.CV.Repetitions != 1 || sec.CV.Folds != 10 || len(sec.Tuning.Lambdas) != 2 || q.Profile != "quick" {
		t.Errorf("quick profile resolved wrong: %+v", cvOf(q))
	}
	if s.Hash() == q.Hash() {
		t.Error("profiles with different settings have the same hash")
	}
	if _, err := Parse("good.toml", []byte(goodSpec), "huge", testKinds); err == nil || !strings.Contains(err.Error(), `no profile "huge"`) {
		t.Errorf("unknown profile: got %v", err)
	}
}

// TestParse_Errors checks that each malformed spec is rejected with a message
// naming the file, the line and the key.
func TestParse_Errors(t *testing.T) {
	withDatasets(t)
	cases := []struct {
		name, old, new string
		want           string
	}{
		{"unknown key", "seed = 7", "seed = 7\nsed = 8", "bad.toml:5: sed: unknown key"},
		{"unknown nested key", "folds = 10", "folds = 10\nfolz = 3", "bad.toml:12: cv.folz: unknown key"},
		{"unknown key in profile", "repetitions = 1\n", "repetitions = 1\nrepetitons = 2\n", "bad.toml:20: profile.quick.cv.repetitons: unknown key"},
		{"wrong type", "repetitions = 3", `repetitions = "three"`, "bad.toml:10: cv.repetitions: incompatible types"},
		{"syntax error", "folds = 10", "folds = = 10", "bad.toml:11: cv.folds: expected value"},
		{"empty lambdas", "lambdas = [0.1, 1.0]", "lambdas = []", "bad.toml:14: tuning.lambdas: must not be empty"},
		{"lambda zero", "lambdas = [0.1, 1.0]", "lambdas = [0.1, 0.0]", "bad.toml:14: tuning.lambdas[1]: must be finite and > 0 (got 0)"},
		{"lambda negative", "lambdas = [0.1, 1.0]", "lambdas = [-1.0, 1.0]", "bad.toml:14: tuning.lambdas[0]: must be finite and > 0 (got -1)"},
		{"alpha zero", "alphas = [0.5, 1.0]", "alphas = [0.5, 0.0]", "bad.toml:15: tuning.alphas[1]: must be finite and > 0 (got 0)"},
		{"empty alphas", "alphas = [0.5, 1.0]", "alphas = []", "bad.toml:15: tuning.alphas: must not be empty"},
		{"unknown dataset", `datasets = ["magic"]`, `datasets = ["magik"]`, `bad.toml:7: data.datasets[0]: unknown dataset "magik"`},
		{"no dataset", `datasets = ["magic"]`, `datasets = []`, `bad.toml:7: data.datasets: must list at least one dataset`},
		{"unknown method", `methods = ["stability", "control"]`, `methods = ["stability", "oracle"]`, `bad.toml:16: tuning.methods[1]: unknown method "oracle"`},
		{"delta out of range", `methods = ["stability", "control"]`, "methods = [\"stability\"]\ndelta = 1.5", "bad.toml:17: tuning.delta: must be in (0, 1) (got 1.5)"},
		{"folds too small", "folds = 10", "folds = 2", "bad.toml:11: cv.folds: must be >= 3"},
		{"bad profile value", "repetitions = 1\n", "repetitions = 0\n", "bad.toml:19: cv.repetitions (profile quick): must be >= 1 (got 0)"},
		{"unknown kind", `kind = "cv-tuning"`, `kind = "cv"`, `bad.toml:3: kind: unknown kind "cv"`},
		{"bad id", `id = "t"`, `id = "a/b"`, `bad.toml:2: id: must be a safe file name`},
		{"id with a space", `id = "t"`, `id = "my run"`, `bad.toml:2: id: must be a safe file name`},
		{"dot id", `id = "t"`, `id = ".."`, `bad.toml:2: id: must be a safe file name`},
		{"hidden id", `id = "t"`, `id = ".checkpoint"`, `bad.toml:2: id: must be a safe file name`},
		{"reserved id", `id = "t"`, `id = "wkl-figures"`, `bad.toml:2: id: "wkl-figures" is a name the harness writes itself`},
		{"bad profile name", "[profile.quick.cv]", `[profile."my quick".cv]`, `profile.my quick: a profile name must be a safe file name`},
		{"schema", "schema = 1", "schema = 9", "bad.toml:1: schema: unsupported schema version 9"},
		{"bad row norm", "[data]\n", "[data]\nrow_norm = \"l3\"\n", `bad.toml:7: data.row_norm: must be one of`},
		{"duplicate lambda", "lambdas = [0.1, 1.0]", "lambdas = [0.1, 0.1]", "bad.toml:14: tuning.lambdas[1]: duplicate value 0.1"},
		{"infinite alpha", "alphas = [0.5, 1.0]", "alphas = [0.5, inf]", "bad.toml:15: tuning.alphas[1]: must be finite and > 0 (got +Inf)"},
		{"empty analysis", "[profile.quick.cv]", claimTable + "analysis = \" \"\n\n[profile.quick.cv]", "bad.toml:26: claims[0].analysis: must be a non-empty link"},
		{"reserved id report", `id = "t"`, `id = "report"`, `bad.toml:2: id: "report" is a name the harness writes itself`},
		{"id longer than a file name", `id = "t"`, `id = "` + strings.Repeat("a", MaxIDBytes+1) + `"`, "bad.toml:2: id: the id names the run's folder (OUT/<id>/): at most 255 bytes, the longest file name (got 256 bytes"},
		{"profile name longer than a run folder allows", "[profile.quick.cv]", "[profile." + strings.Repeat("p", MaxProfileBytes+1) + ".cv]", "bad.toml:18: profile.pppppppppppppppppppppppppppppppppppppppp…: a profile name names the run's folder (<profile>-seed<seed>): at most 224 bytes (got 225)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(goodSpec, c.old) {
				t.Fatalf("test case: %q not in the good spec", c.old)
			}
			src := strings.Replace(goodSpec, c.old, c.new, 1)
			_, err := Parse("dir/bad.toml", []byte(src), "", testKinds)
			if err == nil {
				t.Fatalf("no error; want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\ndoes not contain\n%s", err, c.want)
			}
		})
	}
}

// TestParse_NameLengths: the longest id and profile name a run folder can
// hold load, and the run folder's name fits in NAME_MAX (255 bytes) with
// the longest seed and secure noise; one byte more is refused (above).
func TestParse_NameLengths(t *testing.T) {
	withDatasets(t)
	id, profile := strings.Repeat("i", MaxIDBytes), strings.Repeat("p", MaxProfileBytes)
	src := strings.Replace(strings.Replace(goodSpec, `id = "t"`, `id = "`+id+`"`, 1), "[profile.quick.cv]", "[profile."+profile+".cv]", 1)
	s, err := Parse("dir/long.toml", []byte(src), profile, testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != id || s.Profile != profile {
		t.Fatalf("id %d bytes, profile %q", len(s.ID), s.Profile)
	}
	if run := fmt.Sprintf("%s-seed%d-secure", profile, int64(math.MaxInt64)); len(run) != 255 {
		t.Errorf("the longest run folder name has %d bytes, want 255 (NAME_MAX)", len(run))
	}
}

// TestSpecFiles validates every spec under experiments/ at every profile.
func TestSpecFiles(t *testing.T) {
	withDatasets(t)
	files, err := filepath.Glob("*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no spec files found (%v)", err)
	}
	for _, f := range files {
		for _, p := range []string{"paper", "quick"} {
			s, err := Load(f, p, testKinds)
			if err != nil {
				t.Errorf("%s (%s): %v", f, p, err)
				continue
			}
			if want := strings.TrimSuffix(filepath.Base(f), ".toml"); s.ID != want {
				t.Errorf("%s: id %q differs from the file name", f, s.ID)
			}
			if _, err := s.Canonical(); err != nil {
				t.Errorf("%s: encoding: %v", f, err)
			}
		}
	}
}

func TestLoad_MissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.toml"), "", testKinds)
	if err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: got %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

const goodExPost = `schema = 1
id = "af"
kind = "expost-sweep"
seed = 7

[data]
datasets = ["magic"]
row_norm = "l1-max"

[accuracy_first]
task = "logistic"
generator = "output"
calibration = "paper"
lambda = 0.005
gamma = 0.1
steps = 100
alphas = [0.05, 0.1]
trials = 3
methods = ["noise-reduction", "doubling", "theory"]
`

// TestParse_ExPostErrors checks the accuracy_first section's validation.
func TestParse_ExPostErrors(t *testing.T) {
	withDatasets(t)
	s, err := Parse("af.toml", []byte(goodExPost), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if af := s.Section.(*expostsweep.Section).AccuracyFirst; af.EpsMaxFactor != 4 || s.Data.TargetScale != "none" {
		t.Errorf("defaults not applied: %+v %q", af, s.Data.TargetScale)
	}
	cases := []struct{ old, new, want string }{
		{`task = "logistic"`, `task = "lasso"`, `af.toml:11: accuracy_first.task: unknown task "lasso" (known: logistic, ridge)`},
		{`generator = "output"`, `generator = "covariance"`, `af.toml:12: accuracy_first.generator: generator "covariance" is defined for task ridge only, not for "logistic"`},
		{`calibration = "paper"`, `calibration = "code"`, `af.toml:13: accuracy_first.calibration: must be one of authors-code, paper`},
		{"lambda = 0.005", "lambda = -1.0", "af.toml:14: accuracy_first.lambda: must be finite and > 0 (got -1)"},
		{"gamma = 0.1", "gamma = 1.0", "af.toml:15: accuracy_first.gamma: must be in (0, 1) (got 1)"},
		{"steps = 100", "steps = 1", "af.toml:16: accuracy_first.steps: must be >= 2 (got 1)"},
		{"alphas = [0.05, 0.1]", "alphas = [0.05, 0.05]", "af.toml:17: accuracy_first.alphas[1]: duplicate value 0.05"},
		{"alphas = [0.05, 0.1]", "alphas = [0.05, -0.1]", "af.toml:17: accuracy_first.alphas[1]: must be finite and > 0 (got -0.1)"},
		{"trials = 3", "trials = 0", "af.toml:18: accuracy_first.trials: must be >= 1 (got 0)"},
		{`"theory"]`, `"theory-nope"]`, `af.toml:19: accuracy_first.methods[2]: method "theory-nope": unknown generator "nope"`},
		{`"theory"]`, `"oracle"]`, `af.toml:19: accuracy_first.methods[2]: unknown method "oracle"`},
		{"trials = 3", "trials = 3\neps_max_factor = 0.0", "af.toml:19: accuracy_first.eps_max_factor: must be finite and > 0 (got 0)"},
		{`row_norm = "l1-max"`, `row_norm = "l1-max"` + "\ntarget_scale = \"max\"", `af.toml:9: data.target_scale: must be one of none, maxabs (got "max")`},
		{"trials = 3", "trials = 3\nsteps_per_alpha = 2", "af.toml:19: accuracy_first.steps_per_alpha: unknown key"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if !strings.Contains(goodExPost, c.old) {
				t.Fatalf("%q not in the good spec", c.old)
			}
			_, err := Parse("af.toml", []byte(strings.Replace(goodExPost, c.old, c.new, 1)), "", testKinds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\nwant it to contain\n%s", err, c.want)
			}
		})
	}
}

const goodCI = `schema = 1
id = "wkl"
kind = "ci-coverage"
seed = 3

[data]
datasets = ["adult"]
intercept = false

[confidence_intervals]
methods = ["dp-obj-lr", "zcdp-output-svm"]
sweep = "d"
values = [1, 2, 3]
replicates = 20
mc_samples = 500
vi_fits = 200
`

// TestParse_CIErrors checks the confidence_intervals section's validation.
func TestParse_CIErrors(t *testing.T) {
	withDatasets(t)
	s, err := Parse("wkl.toml", []byte(goodCI), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	// Defaults: Wang, Kifer & Lee 2019, Section 7 (α = 0.05, c = 0.001,
	// h = 1, ε₁ = 0.5, ε₂ = ε₃ = 0.25).
	if c := s.Section.(*cicoverage.Section).ConfidenceIntervals; c.Alpha != 0.05 || c.C != 0.001 || c.H != 1 || c.Eps1 != 0.5 || c.Eps2 != 0.25 || c.Eps3 != 0.25 || c.BlockSize != 50 {
		t.Errorf("defaults not applied: %+v", c)
	}
	cases := []struct{ old, new, want string }{
		{`"zcdp-output-svm"]`, `"zcdp-output-ridge"]`, `wkl.toml:11: confidence_intervals.methods[1]: unknown method "zcdp-output-ridge"`},
		{`"zcdp-output-svm"]`, `"dp-obj-lr"]`, `wkl.toml:11: confidence_intervals.methods[1]: duplicate method "dp-obj-lr"`},
		{`sweep = "d"`, `sweep = "lambda"`, `wkl.toml:12: confidence_intervals.sweep: must be one of n, d, eps1, eps2, eps3 (got "lambda")`},
		{"values = [1, 2, 3]", "values = [1, 2.5]", "wkl.toml:13: confidence_intervals.values[1]: must be an integer for sweep \"d\" (got 2.5)"},
		{"values = [1, 2, 3]", "values = [1, 1]", "wkl.toml:13: confidence_intervals.values[1]: duplicate value 1"},
		{"values = [1, 2, 3]", "values = []", "wkl.toml:13: confidence_intervals.values: must not be empty"},
		{"replicates = 20", "replicates = 0", "wkl.toml:14: confidence_intervals.replicates: must be >= 1 (got 0)"},
		{"mc_samples = 500", "mc_samples = -1", "wkl.toml:15: confidence_intervals.mc_samples: must be >= 1 (got -1)"},
		{"vi_fits = 200", "vi_fits = 1", "wkl.toml:16: confidence_intervals.vi_fits: must be >= 2 (got 1)"},
		{"vi_fits = 200", "vi_fits = 200\nalpha = 1.0", "wkl.toml:17: confidence_intervals.alpha: must be in (0, 1) (got 1)"},
		{"vi_fits = 200", "vi_fits = 200\neps2 = 0.0", "wkl.toml:17: confidence_intervals.eps2: must be finite and > 0 (got 0)"},
		{"vi_fits = 200", "vi_fits = 200\nn1 = -5", "wkl.toml:17: confidence_intervals.n1: must be >= 0 (0 keeps all records) (got -5)"},
		{"vi_fits = 200", "vi_fits = 200\nsigma_floor = 0.0", "wkl.toml:17: confidence_intervals.sigma_floor: must be finite and > 0 (got 0)"},
		{"vi_fits = 200", "vi_fits = 200\nsigma_floor = -1.0", "wkl.toml:17: confidence_intervals.sigma_floor: must be finite and > 0 (got -1)"},
		{"vi_fits = 200", "vi_fits = 200\nrho1 = 0.125", "wkl.toml:17: confidence_intervals.rho1: unknown key"},
		{"intercept = false", "intercept = true", "wkl.toml:8: data.intercept: must be false for ci-coverage"},
		{"intercept = false", "intercept = false\nrow_norm = \"l1-max\"", `wkl.toml:9: data.row_norm: must be l2-max, l2-clip or l2-unit for ci-coverage (got "l1-max")`},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if !strings.Contains(goodCI, c.old) {
				t.Fatalf("%q not in the good spec", c.old)
			}
			_, err := Parse("wkl.toml", []byte(strings.Replace(goodCI, c.old, c.new, 1)), "", testKinds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\nwant it to contain\n%s", err, c.want)
			}
		})
	}
}

const goodHist = `schema = 1
id = "hist"
kind = "histogram-tuning"
[data]
datasets = ["adult"]
column_scale = "none"
row_norm = "none"
intercept = false
[histogram]
bins = [4, 16, 64]
densities = ["bimodal"]
records = 2000
attributes = [{ dataset = "adult", column = "age", lo = 0.0, hi = 100.0 }]
[tuning]
alphas = [1.0]
methods = ["stability", "control"]
`

func TestParse_HistogramErrors(t *testing.T) {
	withDatasets(t)
	if _, err := Parse("hist.toml", []byte(goodHist), "", testKinds); err != nil {
		t.Fatal(err)
	}
	// Densities alone need no dataset.
	onlyDensities := strings.Replace(strings.Replace(goodHist, `datasets = ["adult"]`, "", 1), `attributes = [{ dataset = "adult", column = "age", lo = 0.0, hi = 100.0 }]`, "", 1)
	if _, err := Parse("hist.toml", []byte(onlyDensities), "", testKinds); err != nil {
		t.Errorf("densities only: %v", err)
	}
	cases := []struct{ old, new, want string }{
		{"bins = [4, 16, 64]", "bins = [4, 16, 4]", "hist.toml:10: histogram.bins[2]: duplicate value 4"},
		{"bins = [4, 16, 64]", "bins = [0, 16]", "hist.toml:10: histogram.bins[0]: must be >= 1 (got 0)"},
		{"bins = [4, 16, 64]", "bins = []", "hist.toml:10: histogram.bins: must list at least one number of bins"},
		{`densities = ["bimodal"]`, `densities = ["cauchy"]`, `hist.toml:11: histogram.densities[0]: unknown density "cauchy"`},
		{"records = 2000", "records = 0", "hist.toml:12: histogram.records: must be >= 1 with densities (got 0)"},
		{`dataset = "adult", column`, `dataset = "magic", column`, `histogram.attributes[0].dataset: "magic" is not in data.datasets`},
		{`lo = 0.0, hi = 100.0`, `lo = 5.0, hi = 5.0`, "histogram.attributes[0]: public bounds must be finite with lo < hi (got [5, 5])"},
		{`column = "age", `, `column = "", `, "histogram.attributes[0].column: required"},
		{`column_scale = "none"`, `column_scale = "maxabs"`, `hist.toml:6: data.column_scale: attributes are read raw: set column_scale = "none"`},
		{`methods = ["stability", "control"]`, `methods = ["stability", "bayes"]`, `hist.toml:16: tuning.methods[1]: unknown method "bayes"`},
		{"alphas = [1.0]", "alphas = [-1.0]", "hist.toml:15: tuning.alphas[0]: must be finite and > 0 (got -1)"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if !strings.Contains(goodHist, c.old) {
				t.Fatalf("%q not in the good spec", c.old)
			}
			_, err := Parse("hist.toml", []byte(strings.Replace(goodHist, c.old, c.new, 1)), "", testKinds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\nwant it to contain\n%s", err, c.want)
			}
		})
	}
}

const goodMech = `schema = 1
id = "mech"
kind = "mechanism-bounds"
[mechanisms]
mechanisms = ["laplace", "gaussian"]
epsilons = [0.5, 1.0]
levels = [0.1, 0.01]
replicates = 2
draws = 100
`

func TestParse_MechanismErrors(t *testing.T) {
	withDatasets(t)
	s, err := Parse("mech.toml", []byte(goodMech), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Section.(*mechbounds.Section).Mechanisms; m.Dim != 10 || m.Candidates != 100 || m.GaussianDelta != 1e-5 {
		t.Errorf("defaults not applied: %+v", m)
	}
	cases := []struct{ old, new, want string }{
		{`["laplace", "gaussian"]`, `["laplace", "cauchy"]`, `mech.toml:5: mechanisms.mechanisms[1]: unknown mechanism "cauchy"`},
		{`["laplace", "gaussian"]`, `["laplace", "laplace"]`, `mech.toml:5: mechanisms.mechanisms[1]: duplicate mechanism "laplace"`},
		{"epsilons = [0.5, 1.0]", "epsilons = [0.5, 0.0]", "mech.toml:6: mechanisms.epsilons[1]: must be finite and > 0 (got 0)"},
		{"levels = [0.1, 0.01]", "levels = [0.1, 1.0]", "mech.toml:7: mechanisms.levels[1]: must be in (0, 1) (got 1)"},
		{"replicates = 2", "replicates = 1", "mech.toml:8: mechanisms.replicates: must be >= 2 (got 1)"},
		{"draws = 100", "draws = 0", "mech.toml:9: mechanisms.draws: must be >= 1 (got 0)"},
		{"draws = 100", "draws = 100\ncandidates = 1", "mech.toml:10: mechanisms.candidates: must be >= 2 (got 1)"},
		{"draws = 100", "draws = 100\ngaussian_delta = 0.0", "mech.toml:10: mechanisms.gaussian_delta: must be in (0, 1) (got 0)"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			_, err := Parse("mech.toml", []byte(strings.Replace(goodMech, c.old, c.new, 1)), "", testKinds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\nwant it to contain\n%s", err, c.want)
			}
		})
	}
}

const goodAudit = `schema = 1
id = "aud"
kind = "privacy-audit"
[audit]
mechanisms = ["laplace", "histogram"]
epsilons = [0.5, 1.0]
variants = ["half-noise"]
draws = 1000
fit_draws = 500
`

func TestParse_AuditErrors(t *testing.T) {
	withDatasets(t)
	s, err := Parse("aud.toml", []byte(goodAudit), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Section.(*privaudit.Section).Audit; a.Delta != 1e-5 || a.Confidence != 0.95 {
		t.Errorf("defaults not applied: %+v", a)
	}
	cases := []struct{ old, new, want string }{
		{`["laplace", "histogram"]`, `["laplace", "cauchy"]`, `aud.toml:5: audit.mechanisms[1]: unknown name "cauchy"`},
		{`["laplace", "histogram"]`, `[]`, `aud.toml:5: audit.mechanisms: must list at least one name`},
		{`["half-noise"]`, `["half-noise", "half-noise"]`, `aud.toml:7: audit.variants[1]: duplicate name "half-noise"`},
		{"epsilons = [0.5, 1.0]", "epsilons = [0.5, -1.0]", "aud.toml:6: audit.epsilons[1]: must be finite and > 0 (got -1)"},
		{"draws = 1000", "draws = 10", "aud.toml:8: audit.draws: must be >= 400 (got 10)"},
		{"fit_draws = 500", "fit_draws = 0", "aud.toml:9: audit.fit_draws: must be >= 400 (got 0)"},
		{"fit_draws = 500", "fit_draws = 500\nconfidence = 1.0", "aud.toml:10: audit.confidence: must be in (0, 1) (got 1)"},
		{"fit_draws = 500", "fit_draws = 500\ndelta = 0.0", "aud.toml:10: audit.delta: must be in (0, 1) (got 0)"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			_, err := Parse("aud.toml", []byte(strings.Replace(goodAudit, c.old, c.new, 1)), "", testKinds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\nwant it to contain\n%s", err, c.want)
			}
		})
	}
}

// TestParse_Profiles: a spec without a quick profile runs as itself under
// "quick" (and says so through ProfileFallback); a user-defined profile is
// selected by its name; an unknown one is refused naming those it has.
func TestParse_Profiles(t *testing.T) {
	withDatasets(t)
	noQuick := strings.Replace(goodSpec, "[profile.quick.cv]\nrepetitions = 1\n", "[profile.tiny.cv]\nrepetitions = 2\n", 1)
	q, err := Parse("nq.toml", []byte(noQuick), "quick", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if !q.ProfileFallback || q.Profile != "quick" || cvOf(q).Repetitions != 3 {
		t.Errorf("quick without a quick profile: fallback %v profile %q repetitions %d", q.ProfileFallback, q.Profile, cvOf(q).Repetitions)
	}
	tiny, err := Parse("nq.toml", []byte(noQuick), "tiny", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if tiny.ProfileFallback || tiny.Profile != "tiny" || cvOf(tiny).Repetitions != 2 {
		t.Errorf("user profile: fallback %v profile %q repetitions %d", tiny.ProfileFallback, tiny.Profile, cvOf(tiny).Repetitions)
	}
	if _, err := Parse("nq.toml", []byte(noQuick), "huge", testKinds); err == nil || !strings.Contains(err.Error(), `no profile "huge" (has: paper, tiny)`) {
		t.Errorf("unknown profile: %v", err)
	}
	p, err := Parse("good.toml", []byte(goodSpec), "quick", testKinds)
	if err != nil || p.ProfileFallback {
		t.Errorf("a spec with a quick profile reported a fallback (%v)", err)
	}
}

// testKinds is the registry of the built-in kinds the tests load with.
var testKinds = kinds.Registry()

// cvOf returns the [cv] table of a cv-tuning spec.
func cvOf(s *Spec) cvtune.CVSpec { return s.Section.(*cvtune.Section).CV }
