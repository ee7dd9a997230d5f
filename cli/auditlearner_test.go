package cli

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/perturb"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/internal/pyenv"
	"github.com/dprepro/dprepro/methods/learners"
)

// auditLearnerSpec is the example spec of the learner audit: Python
// learners served through the worker protocol, on a tiny two-feature data
// file.
func auditLearnerSpec(t *testing.T) string {
	t.Helper()
	spec, err := filepath.Abs(filepath.Join("..", "examples", "python-method", "audit-learners.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// auditJSON reads audit.json of the audit of learner under out.
func auditJSON(t *testing.T, out, learner string) map[string]any {
	t.Helper()
	dir := filepath.Join(out, "py-audit", "audit-"+learner+"-seed26")
	for _, f := range []string{"audit.csv", "audit.md"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !strings.Contains(string(b), learner) {
			t.Errorf("%s: %v (or it does not name %s)", f, err, learner)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "audit.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAuditLearner_PythonBroken: the real binary audits the broken Python
// output perturbation (examples/python-method/broken_output_perturbation.py:
// claims ε = 1, draws the noise for 4ε; its true loss on the adversarial
// pair is about 2ε, see the spec's notes) through the worker protocol at
// 2,000 releases per side and catches it: exit 1, "claim violated", ε_LB
// above the claimed ε in audit.json beside the releases, the confidence
// and the method named as the claim's author.
func TestAuditLearner_PythonBroken(t *testing.T) {
	bin := sharedBinary(t)
	path := pyenv.Require(t)
	out := t.TempDir()
	r := runProc(t, append(cleanEnv(t), "PATH="+path), bin, "audit", "--learner", "py-broken-output-perturbation",
		"--spec", auditLearnerSpec(t), "--out", out, "--workers", "2", "--releases", "2000")
	if r.code != 1 || !strings.Contains(r.stdout, "claim violated") || !strings.Contains(r.stderr, "claim violated") {
		t.Fatalf("exit %d, want 1 and \"claim violated\"\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	m := auditJSON(t, out, "py-broken-output-perturbation")
	lb, _ := m["epsilon_lower"].(float64)
	if m["verdict"] != "claim violated" || !(lb > 1) || m["claimed_epsilon"] != 1.0 || m["releases_per_side"] != 2000.0 ||
		m["confidence"] != 0.95 || m["declared_by"] != "py-broken-output-perturbation" {
		t.Errorf("audit.json: %v", m)
	}
	t.Logf("ε_LB = %.3f, %v CPU, %v wall", lb, r.cpu, r.took)
}

// TestAuditLearner_Honest: the honest Python output perturbation and the
// built-in one, audited by the binary on the same spec, are consistent
// with their claim (exit 0). --out is given relative to the working
// directory: the worker, which runs in the spec's folder, still finds the
// scratch files.
func TestAuditLearner_Honest(t *testing.T) {
	bin := sharedBinary(t)
	path := pyenv.Require(t)
	out := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	relOut, err := filepath.Rel(wd, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"py-output-perturbation", "output-perturbation"} {
		r := runProc(t, append(cleanEnv(t), "PATH="+path), bin, "audit", "--learner", l,
			"--spec", auditLearnerSpec(t), "--out", relOut, "--workers", "2", "--releases", "1000")
		if r.code != 0 || !strings.Contains(r.stdout, "consistent with the claim") {
			t.Fatalf("%s: exit %d, want 0 and \"consistent with the claim\"\nstdout:\n%s\nstderr:\n%s", l, r.code, r.stdout, r.stderr)
		}
		if m := auditJSON(t, out, l); m["verdict"] != "consistent with the claim" || m["releases_per_side"] != 1000.0 {
			t.Errorf("%s: audit.json: %v", l, m)
		}
	}
}

// TestAuditLearner_BadInput: bad flags and names exit 2 with a message
// saying what is wrong (in process: nothing is fit).
func TestAuditLearner_BadInput(t *testing.T) {
	spec := auditLearnerSpec(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--learner", "nosuch", "--spec", spec}, `the spec does not compare learner "nosuch"`},
		{[]string{"--learner", "output-perturbation"}, "--learner needs --spec FILE"},
		{[]string{"--learner", "output-perturbation", "--spec", spec, "--releases", "10"}, "--releases must be >= 200 (got 10)"},
		{[]string{"--learner", "output-perturbation", "--spec", spec, "--confidence", "1.5"}, "--confidence must be in (0, 1)"},
		{[]string{"--learner", "output-perturbation", "--spec", spec, "laplace"}, "takes no mechanisms"},
		{[]string{"--learner", "output-perturbation", "--spec", spec, "--rows", "1000"}, "rows must be in [4, 40]"},
		{[]string{"--epsilon", "1"}, "--epsilon goes with --learner"},
		{[]string{"--learner", "output-perturbation", "--spec", spec, "--secure-noise"}, "do not go with --learner"},
		{[]string{"--learner", "output-perturbation", "--spec", "audit"}, "runs no learners that can be audited"},
		// Kinds without learners: the refusal names the kinds that have them.
		{[]string{"--learner", "objective-perturbation", "--spec", "af17-kdd-logistic"}, `kind "expost-sweep" runs no learners that can be audited (learner-comparison and cv-tuning specs do)`},
		{[]string{"--learner", "objective-perturbation", "--spec", "wkl-eps1-adult"}, `kind "ci-coverage" runs no learners that can be audited (learner-comparison and cv-tuning specs do)`},
		{[]string{"--learner", "output-perturbation", "--spec", "cv13-magic"}, `tuning.learners: the spec does not tune learner "output-perturbation"`},
		{[]string{"--learner", "output-perturbation", "--spec", spec, "--lambda", "-1"}, "--lambda must be finite and > 0 (got -1)"},
		{[]string{"--lambda", "1"}, "--lambda goes with --learner"},
	} {
		code, _, stderr := dprepro(t, append([]string{"audit", "--out", t.TempDir()}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// goBroken is a Go learner registered as a user's module would
// (learners.Register): output perturbation (core/perturb, Chaudhuri,
// Monteleoni & Sarwate 2011, Algorithm 1) with the Huber hinge that claims
// ε but draws its noise at rateMul times the rate ε needs — rateMul = 2 is
// the sensitivity without its factor 2, 4 the noise for 4ε.
type goBroken struct {
	name    string
	rateMul float64
}

func (g goBroken) Name() string { return g.name }

func (g goBroken) Fit(ctx context.Context, rng *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	rows := train.ERM()
	plan, err := perturb.PlanOutPert(perturb.OutPertOptions{Epsilon: level.Epsilon, Lambda: lambda, Loss: erm.Huber{H: 0.5}}, rows.N())
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	plan.NoiseGamma *= g.rateMul // the broken line
	b := make([]float64, rows.D())
	if err := plan.DrawNoise(b, rng); err != nil {
		return nil, privacy.Guarantee{}, err
	}
	res, err := plan.Fit(rows, b, erm.FitOptions{Context: ctx})
	if err != nil {
		return nil, privacy.Guarantee{}, err
	}
	return goWeights(res.W), privacy.EpsDP(level.Epsilon, "broken on purpose"), nil
}

type goWeights []float64

func (w goWeights) Margins(dst []float64, d *learners.Data) []float64 {
	if len(dst) != d.N() {
		dst = nil
	}
	return d.ERM().Margins(dst, w)
}

// TestAuditLearner_GoRegistered: Go learners registered by a user's module
// are audited through the registry like any other (in process, as a
// module's own dprepro runs cli.Main): on the example's data with the
// Huber hinge at λ = 0.5 (n = 20: the adversarial pair's minimizers lie
// the full sensitivity 2/(nλ) apart, so the true ε is rateMul·ε), output
// perturbation without its factor 2 and with the noise for 4ε are caught
// at 2,000 releases per side (exit 1), the built-in one is consistent.
func TestAuditLearner_GoRegistered(t *testing.T) {
	for _, l := range []goBroken{{"cli-test-no-factor-2", 2}, {"cli-test-noise-for-4eps", 4}} {
		if err := learners.Register(l); err != nil {
			t.Fatal(err)
		}
		defer learners.Unregister(l.name)
	}
	src := `schema = 1
id = "go-audit"
title = "Auditing Go learners"
kind = "learner-comparison"
seed = 26

` + tiny2dData + `folds = 2

[comparison]
learners = ["cli-test-no-factor-2", "cli-test-noise-for-4eps", "output-perturbation"]
epsilons = [0.5, 1.0, 5.0]
lambda = 0.5
loss = "huber"
`
	spec := writeAuditSpec(t, "go-audit.toml", src)
	out := t.TempDir()
	for _, tt := range []struct {
		learner string
		code    int
		verdict string
	}{
		{"cli-test-no-factor-2", 1, "claim violated"},
		{"cli-test-noise-for-4eps", 1, "claim violated"},
		{"output-perturbation", 0, "consistent with the claim"},
	} {
		code, stdout, stderr := dprepro(t, "audit", "--learner", tt.learner, "--spec", spec, "--out", out, "--workers", "2")
		if code != tt.code || !strings.Contains(stdout, tt.verdict) || !strings.Contains(stdout, "claimed ε = 1,") {
			t.Errorf("%s: exit %d, want %d and %q at the grid's ε closest to 1\nstdout:\n%s\nstderr:\n%s", tt.learner, code, tt.code, tt.verdict, stdout, stderr)
		}
		t.Logf("%s", strings.SplitN(stdout, "\n", 2)[0])
	}
}

// cvTuningSpec writes a small cv-tuning spec that tunes learner (with
// loss) on the example's 40 records (data: examples/python-method), at
// α = 1 and 2 with stability and random and λ in {0.5, 1}, 4 folds: its
// learner is audited at λ = 0.5, at ε = 1 (stability's α/2 at α = 2,
// random's α at α = 1) on training sets T of 2 of the 4 folds (20 rows),
// as TestAuditLearner_GoRegistered's learner-comparison spec audits at
// n = 20.
func cvTuningSpec(t *testing.T, learner, loss string) string {
	t.Helper()
	src := `schema = 1
id = "cv-audit"
title = "Auditing a tuned learner"
kind = "cv-tuning"
seed = 26

` + tiny2dData + `folds = 4

[tuning]
lambdas = [1.0, 0.5]
alphas = [1.0, 2.0]
methods = ["stability", "random"]
learners = ["` + learner + `"]
loss = "` + loss + `"
`
	spec := writeAuditSpec(t, "cv-audit.toml", src)
	return spec
}

// TestAuditLearner_CVTuning: the real binary audits the learner of a
// cv-tuning spec as the kind runs it — λ the smallest of tuning.lambdas,
// ε = 1 the level closest to 1 that the spec's methods hand their fits,
// 20 rows (T, 2 of the 4 folds) — says so on stderr and in audit.json,
// and finds built-in output perturbation consistent with its claim
// (exit 0).
func TestAuditLearner_CVTuning(t *testing.T) {
	bin := sharedBinary(t)
	out := t.TempDir()
	r := runProc(t, cleanEnv(t), bin, "audit", "--learner", "output-perturbation",
		"--spec", cvTuningSpec(t, "output-perturbation", "logistic"), "--out", out, "--workers", "2", "--releases", "1000")
	if r.code != 0 || !strings.Contains(r.stdout, "consistent with the claim") || !strings.Contains(r.stdout, "claimed ε = 1,") ||
		!strings.Contains(r.stderr, "2 pairs of 20×2 rows") ||
		!strings.Contains(r.stderr, "the spec's setting: λ = 0.5, the smallest of tuning.lambdas") ||
		!strings.Contains(r.stderr, "stability at alpha=2, random at alpha=1, on a training set T, 2 of the 4 folds") {
		t.Fatalf("exit %d, want 0, \"consistent with the claim\" and the setting\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "cv-audit", "audit-output-perturbation-seed26", "audit.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["lambda"] != 0.5 || m["level_epsilon"] != 1.0 || m["releases_per_side"] != 1000.0 ||
		!strings.Contains(m["setting"].(string), "smallest of tuning.lambdas") {
		t.Errorf("audit.json: %v", m)
	}
	t.Logf("%s (%v CPU, %v wall)", strings.SplitN(r.stdout, "\n", 2)[0], r.cpu, r.took)
}

// TestAuditLearner_CVTuningGoRegistered: a Go learner registered by a
// user's module and tuned by a cv-tuning spec is audited as the kind runs
// it; output perturbation with the noise for 4ε (goBroken) with the Huber
// hinge at λ = 0.5 and n = 20 — TestAuditLearner_GoRegistered's setting,
// where its true ε is 4ε — is caught at 2,000 releases per side (exit 1).
func TestAuditLearner_CVTuningGoRegistered(t *testing.T) {
	l := goBroken{"cli-test-cv-noise-for-4eps", 4}
	if err := learners.Register(l); err != nil {
		t.Fatal(err)
	}
	defer learners.Unregister(l.name)
	code, stdout, stderr := dprepro(t, "audit", "--learner", l.name, "--spec", cvTuningSpec(t, l.name, "huber"), "--out", t.TempDir(), "--workers", "2")
	if code != 1 || !strings.Contains(stdout, "claim violated") || !strings.Contains(stdout, "claimed ε = 1,") || !strings.Contains(stderr, "λ=0.5, ε=1") {
		t.Errorf("exit %d, want 1 and \"claim violated\" at ε = 1, λ = 0.5\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("%s", strings.SplitN(stdout, "\n", 2)[0])
}

// writeAuditSpec writes the spec src as name into a new folder beside the
// example's 40 audit records (examples/python-method/audit-data.csv, which
// the spec names as audit-data.csv) and returns the spec's path.
func writeAuditSpec(t *testing.T, name, src string) string {
	t.Helper()
	dir := t.TempDir()
	csvData, err := os.ReadFile(filepath.Join("..", "examples", "python-method", "audit-data.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "audit-data.csv"), csvData, 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, name)
	if err := os.WriteFile(spec, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec
}

// tiny2dData is the [data] and [cv] head of the audit tests' specs: the
// example's 40 audit records (writeAuditSpec copies them beside the spec),
// one repetition; each spec adds its folds.
const tiny2dData = `[data]
datasets = ["tiny2d"]
intercept = false

[data.files.tiny2d]
path = "audit-data.csv"
label = "y"
positive = "yes"

[cv]
repetitions = 1
`
