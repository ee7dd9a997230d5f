package experiments_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
	. "github.com/dprepro/dprepro/experiments"
)

func TestDidYouMean(t *testing.T) {
	t.Parallel()
	methods := []string{"stability", "alphaSplit", "dataSplit", "random", "control"}
	for _, c := range []struct {
		name  string
		known []string
		want  string // "" for no suggestion
	}{
		{"stabilty", methods, "stability"},                 // one deletion
		{"stabbility", methods, "stability"},               // one insertion
		{"stabiilty", methods, "stability"},                // two substitutions
		{"alphasplit", methods, "alphaSplit"},              // case only
		{"ALPHASPLIT", methods, "alphaSplit"},              // case only, all letters
		{"datasplits", methods, "dataSplit"},               // case and one insertion
		{"oracle", methods, ""},                            // nothing close
		{"stab", methods, ""},                              // a prefix 5 edits away
		{"stability", methods, ""},                         // known: nothing to suggest
		{"x", []string{"n", "d"}, ""},                      // a one-letter name suggests no one-letter name
		{"dp", []string{"zcdp"}, ""},                       // two edits, as long as the name
		{"eps4", []string{"eps1", "eps2", "eps3"}, "eps1"}, // ties: the first in order
		{"covarance", []string{"covariance", "output"}, "covariance"},
		{"magik", []string{"adult", "magic"}, "magic"},
		{"", methods, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := DidYouMean(c.name, c.known)
			if ok != (c.want != "") || got != c.want {
				t.Errorf("DidYouMean(%q) = %q, %v; want %q", c.name, got, ok, c.want)
			}
		})
	}
}

func TestUnknown_Message(t *testing.T) {
	t.Parallel()
	known := []string{"stability", "control"}
	if got, want := Unknown("method", "stabilty", known), `unknown method "stabilty" (known: stability, control); did you mean "stability"?`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := Unknown("method", "oracle", known), `unknown method "oracle" (known: stability, control)`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestParse_DidYouMean: every check of a spec name against a registry
// (kinds, datasets and data files, learners, tuning methods, generators,
// ex-post methods, CI methods, densities, mechanisms, audit names) and of
// an enum adds the hint; the whole message is checked once per registry.
func TestParse_DidYouMean(t *testing.T) {
	t.Parallel()
	const fileTable = "\n[data.files.mydata]\npath = \"my.csv\"\nlabel = \"y\"\n"
	// Other tests of the package register datasets of their own.
	knownDatasets := strings.Join(datasets.Names(), ", ")
	cases := []struct {
		name, src, old, new, want string
	}{
		{"kind", goodSpec, `kind = "cv-tuning"`, `kind = "cv-tunning"`,
			`bad.toml:3: kind: unknown kind "cv-tunning" (one of: cv-tuning, expost-sweep, ci-coverage, histogram-tuning, mechanism-bounds, privacy-audit, learner-comparison); did you mean "cv-tuning"?`},
		{"dataset", goodSpec, `datasets = ["magic"]`, `datasets = ["magik"]`,
			`bad.toml:7: data.datasets[0]: unknown dataset "magik" (known: ` + knownDatasets + `); did you mean "magic"?`},
		{"data file", goodSpec + fileTable, `datasets = ["magic"]`, `datasets = ["mydate"]`,
			`bad.toml:7: data.datasets[0]: unknown dataset "mydate" (known: ` + knownDatasets + `; data.files: mydata); did you mean "mydata"?`},
		{"tuning method", goodSpec, `methods = ["stability", "control"]`, `methods = ["stabilty", "control"]`,
			`bad.toml:16: tuning.methods[0]: unknown method "stabilty" (known: stability, alphaSplit, dataSplit, random, control); did you mean "stability"?`},
		{"learner", goodSpec, `methods = ["stability", "control"]`, "methods = [\"stability\", \"control\"]\nlearners = [\"Objective-Perturbation\"]",
			`bad.toml:17: tuning.learners[0]: unknown learner "Objective-Perturbation" (known: objective-perturbation, output-perturbation, non-private); did you mean "objective-perturbation"?`},
		{"enum", goodSpec, "[data]\n", "[data]\nrow_norm = \"l2max\"\n",
			`bad.toml:7: data.row_norm: must be one of l2-max, l2-clip, l2-unit, l1-max, none (got "l2max"); did you mean "l2-max"?`},
		{"generator", goodExPost, `generator = "output"`, `generator = "outptu"`,
			`bad.toml:12: accuracy_first.generator: unknown generator "outptu" (known: covariance, output); did you mean "output"?`},
		{"theory generator", goodExPost, `"theory"]`, `"theory-outpt"]`,
			`bad.toml:19: accuracy_first.methods[2]: method "theory-outpt": unknown generator "outpt" (known: covariance, output); did you mean "output"?`},
		{"ex-post method", goodExPost, `"doubling"`, `"dubling"`,
			`bad.toml:19: accuracy_first.methods[1]: unknown method "dubling" (known: doubling, noise-reduction, theory, theory-covariance, theory-output); did you mean "doubling"? (and noise-reduction-, doubling- or theory-<generator> for a known generator)`},
		{"task", goodExPost, `task = "logistic"`, `task = "logistc"`,
			`bad.toml:11: accuracy_first.task: unknown task "logistc" (known: logistic, ridge); did you mean "logistic"?`},
		{"CI method", goodCI, `"zcdp-output-svm"]`, `"zcdp-ouput-svm"]`,
			`bad.toml:11: confidence_intervals.methods[1]: unknown method "zcdp-ouput-svm" (known: dp-obj-lr, dp-obj-svm, dp-output-lr, dp-output-svm, zcdp-obj-lr, zcdp-obj-svm, zcdp-output-lr, zcdp-output-svm); did you mean "zcdp-output-svm"?`},
		{"density", goodHist, `densities = ["bimodal"]`, `densities = ["Bimodal"]`,
			`bad.toml:11: histogram.densities[0]: unknown density "Bimodal" (known: uniform, beta(2,5), bimodal); did you mean "bimodal"?`},
		{"mechanism", goodMech, `["laplace", "gaussian"]`, `["laplace", "gausian"]`,
			`bad.toml:5: mechanisms.mechanisms[1]: unknown mechanism "gausian" (known: randomized-response, laplace, exponential, gaussian); did you mean "gaussian"?`},
		{"audit variant", goodAudit, `["half-noise"]`, `["half-nois"]`,
			`bad.toml:7: audit.variants[0]: unknown name "half-nois" (known: half-noise, sensitivity-x2, no-threshold-noise, keep-unsquared, scale-next-level, no-delta); did you mean "half-noise"?`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(c.src, c.old) {
				t.Fatalf("%q not in the good spec", c.old)
			}
			_, err := Parse("bad.toml", []byte(strings.Replace(c.src, c.old, c.new, 1)), "", testKinds)
			if err == nil {
				t.Fatalf("no error; want %s", c.want)
			}
			if !slices.Contains(strings.Split(err.Error(), "\n"), c.want) {
				t.Errorf("error\n%v\nhas no line\n%s", err, c.want)
			}
		})
	}
}
