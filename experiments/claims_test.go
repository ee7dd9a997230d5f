package experiments_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	. "github.com/dprepro/dprepro/experiments"
)

// keyLine returns the 1-based line of the first line at or after the
// first "[[claims]]" header of src that starts with key (e.g. "metric =").
func keyLine(t *testing.T, src, key string) int {
	t.Helper()
	in := false
	for i, l := range strings.Split(src, "\n") {
		in = in || strings.HasPrefix(l, "[[claims]]")
		if in && strings.HasPrefix(l, key) {
			return i + 1
		}
	}
	t.Fatalf("no %q in the claims of\n%s", key, src)
	return 0
}

// TestParse_ClaimNames: a claim whose metric, method, than, than_metric or
// dataset names nothing the kind's summary holds is refused at load, at
// its line, with the names it could use and a did-you-mean; so are a
// comparison of a method or metric with itself, a duplicate x and a match
// claim's non-finite published value.
func TestParse_ClaimNames(t *testing.T) {
	spec := func(claim string) string {
		return strings.Replace(goodSpec, "[profile.quick.cv]", claim+"\n[profile.quick.cv]", 1)
	}
	cases := []struct {
		name, old, new string
		key            string // the key whose line is reported
		want           string
	}{
		{"metric in the wrong case", `metric = "auc"`, `metric = "AUC"`, "metric =",
			`claims[0].metric: unknown metric "AUC" (the kind writes: auc, mse, index, error_rate); did you mean "auc"?`},
		{"method misspelt", `method = "stability"`, `method = "stabilty"`, "method =",
			`claims[0].method: unknown method "stabilty" (the spec runs: stability, control); did you mean "stability"?`},
		{"than a method the spec does not run", `than = "control"`, `than = "random"`, "than =",
			`claims[0].than: unknown method "random" (the spec runs: stability, control)`},
		{"than_metric unknown", `than = "control"`, `than_metric = "MSE"`, "than_metric =",
			`claims[0].than_metric: unknown metric "MSE" (the kind writes: auc, mse, index, error_rate); did you mean "mse"?`},
		{"dataset the spec does not run", `rule = "greater"`, "rule = \"greater\"\ndataset = \"magik\"", "dataset =",
			`claims[0].dataset: unknown dataset "magik" (the spec runs: magic); did you mean "magic"?`},
		{"than itself", `than = "control"`, `than = "stability"`, "than =",
			`claims[0].than: compares method "stability" with itself`},
		{"than_metric itself", `than = "control"`, `than_metric = "auc"`, "than_metric =",
			`claims[0].than_metric: compares metric "auc" of "stability" with itself`},
		{"duplicate x", `than = "control"`, "than = \"control\"\nx = [0.5, 1.0, 0.5]", "x =",
			`claims[0].x[2]: duplicate value 0.5 (each x is decided once)`},
		{"match with a NaN published value", "rule = \"greater\"\nmetric = \"auc\"\nmethod = \"stability\"\nthan = \"control\"", "rule = \"match\"\nmetric = \"auc\"\nmethod = \"stability\"\nx = [0.5, 1.0]\npaper = [0.9, nan]", "paper =",
			`claims[0].paper[1]: a match claim's published value must be finite (got NaN)`},
		{"match with an infinite published value", "rule = \"greater\"\nmetric = \"auc\"\nmethod = \"stability\"\nthan = \"control\"", "rule = \"match\"\nmetric = \"auc\"\nmethod = \"stability\"\nx = [0.5, 1.0]\npaper = [inf, 0.9]", "paper =",
			`claims[0].paper[0]: a match claim's published value must be finite (got +Inf)`},
		// Keys the rule does not read are refused, not ignored.
		{"than under a match rule", "rule = \"greater\"", "rule = \"match\"\nx = [0.5, 1.0]\npaper = [0.9, 0.8]", "than =",
			`claims[0].than: than is read by the greater and less rules only, and rule "match" compares with nothing (got "control")`},
		{"than_metric under a trend", "rule = \"greater\"\nmetric = \"auc\"\nmethod = \"stability\"\nthan = \"control\"", "rule = \"increasing\"\nmetric = \"auc\"\nmethod = \"stability\"\nthan_metric = \"mse\"", "than_metric =",
			`claims[0].than_metric: than_metric is read by the greater and less rules only, and rule "increasing" compares with nothing (got "mse")`},
		{"paper under a trend", "rule = \"greater\"\nmetric = \"auc\"\nmethod = \"stability\"\nthan = \"control\"", "rule = \"increasing\"\nmetric = \"auc\"\nmethod = \"stability\"\nx = [0.5, 1.0]\npaper = [0.8, 0.9]", "paper =",
			`claims[0].paper: a trend is decided over all its x at once, in one claims.csv row with no published value: rule "increasing" does not read paper (got 2 values)`},
		{"one published value under a trend", "rule = \"greater\"\nmetric = \"auc\"\nmethod = \"stability\"\nthan = \"control\"", "rule = \"decreasing\"\nmetric = \"auc\"\nmethod = \"stability\"\nx = [0.5, 1.0]\npaper = [0.8]", "paper =",
			`claims[0].paper: a trend is decided over all its x at once, in one claims.csv row with no published value: rule "decreasing" does not read paper (got 1 values)`},
		{"value under a comparison", `than = "control"`, "than = \"control\"\nvalue = 0.5", "value =",
			`claims[0].value: value is read by the at_most and at_least rules only, and rule "greater" has no bound (got 0.5)`},
		{"tolerance under a bound", "rule = \"greater\"\nmetric = \"auc\"\nmethod = \"stability\"\nthan = \"control\"", "rule = \"at_most\"\nmetric = \"auc\"\nmethod = \"stability\"\nvalue = 0.5\ntolerance = 0.01", "tolerance =",
			`claims[0].tolerance: tolerance is read by the match rule only, and rule "at_most" has no published value to be near (got 0.01)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(claimTable, c.old) {
				t.Fatalf("test case: %q not in the claim", c.old)
			}
			src := spec(strings.Replace(claimTable, c.old, c.new, 1))
			_, err := Parse("dir/bad.toml", []byte(src), "quick", testKinds)
			want := fmt.Sprintf("bad.toml:%d: %s", keyLine(t, src, c.key), c.want)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error\n%v\nwant\n%s", err, want)
			}
			if n := strings.Count(err.Error(), "claims[0]"); n != 1 {
				t.Errorf("the claim's problem is reported %d times (once per profile?):\n%v", n, err)
			}
		})
	}
	// The good claim loads, and so does a match claim with finite values.
	if _, err := Parse("good.toml", []byte(spec(claimTable)), "", testKinds); err != nil {
		t.Fatal(err)
	}
	match := strings.Replace(claimTable, "than = \"control\"\n", "x = [0.5, 1.0]\npaper = [0.9, 0.8]\n", 1)
	if _, err := Parse("good.toml", []byte(spec(strings.Replace(match, `"greater"`, `"match"`, 1))), "", testKinds); err != nil {
		t.Fatal(err)
	}
}

// TestParse_ClaimNamesOverProfiles: the claims are the file's, so what they
// may name is what any profile runs; a profile that runs fewer methods or
// datasets loads (its claims are then missing there, with the reason),
// and a name no profile runs is refused.
func TestParse_ClaimNamesOverProfiles(t *testing.T) {
	src := strings.Replace(goodSpec, `methods = ["stability", "control"]`, `methods = ["stability", "control", "random"]`, 1)
	src = strings.Replace(src, `datasets = ["magic"]`, `datasets = ["magic", "adult"]`, 1)
	src += "\n[profile.quick.tuning]\nmethods = [\"stability\", \"control\"]\n[profile.quick.data]\ndatasets = [\"magic\"]\n"
	claim := strings.Replace(claimTable, `than = "control"`, "than = \"random\"\ndataset = \"adult\"", 1)
	src = strings.Replace(src, "[profile.quick.cv]", claim+"\n[profile.quick.cv]", 1)
	for _, p := range []string{"", "quick"} {
		s, err := Parse("p.toml", []byte(src), p, testKinds)
		if err != nil {
			t.Fatalf("profile %q: %v", p, err)
		}
		if p == "quick" && !slices.Equal(s.ClaimDatasets(), []string{"magic"}) {
			t.Errorf("quick runs %v", s.ClaimDatasets())
		}
	}
	bad := strings.Replace(src, `than = "random"`, `than = "dataSplit"`, 1)
	_, err := Parse("p.toml", []byte(bad), "quick", testKinds)
	if want := `claims[0].than: unknown method "dataSplit" (the spec runs: stability, control, random)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestParse_ClaimNamesOfEachKind: each built-in kind declares the names of
// its summary, including those not keyed by a registry dataset (the
// histogram's sources, the mechanisms) and labels such as
// "<method>/<learner>".
func TestParse_ClaimNamesOfEachKind(t *testing.T) {
	claim := func(dataset, method, metric string) string {
		d := ""
		if dataset != "" {
			d = fmt.Sprintf("dataset = %q\n", dataset)
		}
		return fmt.Sprintf("\n[[claims]]\nid = \"c\"\nsource = \"s\"\nstatement = \"s\"\nrule = \"at_most\"\nvalue = 1.0\n%smethod = %q\nmetric = %q\n", d, method, metric)
	}
	learners := strings.Replace(goodSpec, `methods = ["stability", "control"]`, "methods = [\"control\"]\nlearners = [\"objective-perturbation\", \"output-perturbation\"]", 1)
	cases := []struct {
		name, base, claim, want string // want "" loads
	}{
		{"learner label", learners, claim("", "control/output-perturbation", "auc"), ""},
		{"bare method when learners are set", learners, claim("", "control", "auc"),
			`claims[0].method: unknown method "control" (the spec runs: control/objective-perturbation, control/output-perturbation)`},
		{"histogram source", goodHistogram, claim("uniform", "stability", "ise"), ""},
		{"histogram: a source is needed, not the dataset", goodHistogram, claim("magic", "stability", "ise"),
			`claims[0].dataset: unknown dataset "magic" (the spec runs: uniform)`},
		{"histogram metric", goodHistogram, claim("", "stability", "auc"),
			`claims[0].metric: unknown metric "auc" (the kind writes: ise, ise_estimate, bin_width, index)`},
		{"mechanism as dataset", goodMech, claim("laplace", "level 0.1", "tail"), ""},
		{"mechanism level", goodMech, claim("laplace", "level 0.2", "tail"),
			`claims[0].method: unknown method "level 0.2" (the spec runs: level 0.1, level 0.01); did you mean "level 0.1"?`},
		{"mechanism required", goodMech, claim("", "level 0.1", "tail"),
			`claims[0].dataset: required: the spec's summary has 2 datasets (laplace, gaussian)`},
		{"ex-post method", goodExPost, claim("", "noise-reduction", "expost_eps"), ""},
		{"ex-post metric", goodExPost, claim("", "noise-reduction", "expost-eps"),
			`claims[0].metric: unknown metric "expost-eps" (the kind writes: expost_eps, expost_risk_factor`},
		{"ci method", goodCI, claim("", "dp-obj-lr", "coverage"), ""},
		{"audit variant", goodAudit, claim("laplace", "half-noise", "eps_lower"), ""},
		{"audit metric", goodAudit, claim("laplace", "correct", "eps_lowr"),
			`claims[0].metric: unknown metric "eps_lowr" (the kind writes: eps_lower, claimed_eps); did you mean "eps_lower"?`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("k.toml", []byte(c.base+c.claim), "", testKinds)
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error\n%v\nwant\n%s", err, c.want)
			}
		})
	}
}

// silentKinds knows one kind, "study", whose section declares nothing
// (no experiments.Producer), as a user's kind may.
type silentKinds struct{}

type silentSection struct {
	Study struct {
		Arms []string `toml:"arms"`
	} `toml:"study"`
}

func (*silentSection) Validate(*Spec, *Problems)     {}
func (*silentSection) Limits(*Spec) []Limit          { return nil }
func (*silentSection) Workload(*Spec) Workload       { return Workload{Units: 1, Rows: 1} }
func (silentKinds) Names() []string                  { return []string{"study"} }
func (silentKinds) Section(k string) (Section, bool) { return &silentSection{}, k == "study" }

// TestParse_ClaimNamesUndeclared: a kind that declares nothing has its
// claims' methods and metrics unchecked at load (their datasets are
// checked against data.datasets); package claims then says "missing" with
// the reason for a name its run lacks.
func TestParse_ClaimNamesUndeclared(t *testing.T) {
	src := `schema = 1
id = "u"
kind = "study"
seed = 1
[data]
datasets = ["magic"]
[study]
arms = ["a"]

[[claims]]
id = "c"
source = "s"
statement = "s"
rule = "greater"
method = "anything"
metric = "AUC"
than = "else"
`
	s, err := Parse("u.toml", []byte(src), "", silentKinds{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Produced(); ok || !slices.Equal(s.ClaimDatasets(), []string{"magic"}) {
		t.Errorf("declared names of a silent kind: datasets %v", s.ClaimDatasets())
	}
	bad := strings.Replace(src, `rule = "greater"`, "rule = \"greater\"\ndataset = \"adult\"", 1)
	if _, err := Parse("u.toml", []byte(bad), "", silentKinds{}); err == nil || !strings.Contains(err.Error(), `u.toml:15: claims[0].dataset: unknown dataset "adult" (the spec runs: magic)`) {
		t.Errorf("dataset of a silent kind: %v", err)
	}
}

// TestParse_ClaimNamesExternalMethod: a method served by an external
// command ([[methods]]) is a name the kind declares, as the spec lists it.
func TestParse_ClaimNamesExternalMethod(t *testing.T) {
	const file = "../examples/python-method/ci-coverage.toml"
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	claim := "\n[[claims]]\nid = \"c\"\nsource = \"s\"\nstatement = \"s\"\nrule = \"greater\"\nmetric = \"ci_length\"\nmethod = \"py-output-ci-lr\"\nthan = \"dp-output-lr\"\n"
	if _, err := Parse(file, append(src, claim...), "quick", testKinds); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(claim, `"py-output-ci-lr"`, `"py-output-ci-l"`, 1)
	_, err = Parse(file, append(src, bad...), "quick", testKinds)
	if want := `claims[0].method: unknown method "py-output-ci-l" (the spec runs: dp-obj-lr, dp-output-lr, py-output-ci-lr); did you mean "py-output-ci-lr"?`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestParse_ClaimNamesVariants: a method that runs variants (a list in its
// params) is named by a variant's label, as its rows carry it; its bare
// name is refused, saying how to name a variant, and a misspelt base is
// unknown with the variants offered as "name[…]".
func TestParse_ClaimNamesVariants(t *testing.T) {
	const file = "../examples/python-method/dp-gd.toml"
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	claim := "\n[[claims]]\nid = \"c\"\nsource = \"s\"\nstatement = \"s\"\nrule = \"greater\"\nmetric = \"auc\"\nmethod = \"py-dp-gd[steps=100]\"\nthan = \"objective-perturbation\"\n"
	if _, err := Parse(file, append(src, claim...), "quick", testKinds); err != nil {
		t.Fatalf("a variant's label refused: %v", err)
	}
	for _, c := range []struct{ old, new, want string }{
		{`"py-dp-gd[steps=100]"`, `"py-dp-gd"`, `claims[0].method: method "py-dp-gd" runs variants (a list in its [[methods]] params): name one as its rows label it, py-dp-gd[param=value,…] (or py-dp-gd[grid=…] for a grid selected per fold)`},
		{`"py-dp-gd[steps=100]"`, `"py-dp-g[steps=100]"`, `claims[0].method: unknown method "py-dp-g[steps=100]" (the spec runs: objective-perturbation, non-private, py-dp-gd[…])`},
		{`"objective-perturbation"`, `"py-dp-gd"`, `claims[0].than: method "py-dp-gd" runs variants`},
	} {
		bad := strings.Replace(claim, c.old, c.new, 1)
		if _, err := Parse(file, append(src, bad...), "quick", testKinds); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %s", c.new, err, c.want)
		}
	}
	// With one value per parameter the method is one curve, named as is.
	one := strings.Replace(string(src), "\nsteps = [20, 100]", "\nsteps = 20", 1)
	plain := strings.Replace(claim, `"py-dp-gd[steps=100]"`, `"py-dp-gd"`, 1)
	if _, err := Parse(file, []byte(one+plain), "quick", testKinds); err != nil {
		t.Errorf("one setting: %v", err)
	}
}
