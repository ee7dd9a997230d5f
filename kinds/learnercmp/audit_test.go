package learnercmp

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/learneraudit"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/report"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// noiseFor4Eps is output perturbation (Chaudhuri, Monteleoni & Sarwate
// 2011, Algorithm 1) broken on purpose, as the Go example: it
// claims ε-DP for the level ε but draws the noise for 4ε. On the audit's
// adversarial Huber pair, whose minimizers lie exactly the sensitivity
// 2/(nλ) apart, its true ε is 4ε (methods/learneraudit's calibration).
type noiseFor4Eps struct{ inner learners.Learner }

func (noiseFor4Eps) Name() string { return "audit-noise-for-4eps" }

func (b noiseFor4Eps) Configure(c learners.Config) (learners.Learner, error) {
	inner, err := learners.OutputPerturbation{}.Configure(c)
	return noiseFor4Eps{inner}, err
}

func (b noiseFor4Eps) Fit(ctx context.Context, rng *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	inner := b.inner
	if inner == nil {
		inner = learners.OutputPerturbation{}
	}
	m, _, err := inner.Fit(ctx, rng, train, lambda, learners.Level{Epsilon: 4 * level.Epsilon})
	return m, privacy.EpsDP(level.Epsilon, "output perturbation (broken on purpose: the noise for 4ε)"), err
}

var registerBroken = sync.OnceValue(func() error { return learners.Register(noiseFor4Eps{}) })

// auditSpec is the small spec on the Huber loss (h = 0.5) with the broken
// learner beside output perturbation, λ = 0.05 for both: on the 450-row
// training sets nλ = 22.5, so the adversarial pair's minimizers (first
// coordinate ±1/(nλ) ≈ ±0.044) lie in the loss's linear part and differ
// by the full sensitivity (learneraudit's package documentation).
const auditSpec = `schema = 1
id = "small"
kind = "learner-comparison"
seed = 7

[data]
datasets = ["magic"]
subsample = 600

[cv]
repetitions = 1
folds = 4

[comparison]
learners = ["output-perturbation", "audit-noise-for-4eps"]
epsilons = [0.1, 1.0]
lambda = 0.05
loss = "huber"

[output]
bootstrap = 100
`

const auditTable = `
[comparison.audit]
learners = ["output-perturbation", "audit-noise-for-4eps"]
releases = 4000
`

// TestAudit_Run: [comparison.audit] audits its learners as units of the
// run. The honest output perturbation is consistent with its claim, the
// broken one (the noise for 4ε) is caught at 4,000 releases per side; the
// verdicts are in audit.csv (two pairs per learner), the manifest
// (Audits, a warning for the violation, echoed on stderr), the ledger
// entry at the audited ε (Audit, and ε_LB in the charge's Claimed text);
// rows.csv and summary.csv are byte-identical to the run without the
// table, whose CV units the audited run resumes (the audit is outside the
// shared hash); the audit is the one `dprepro audit --learner` computes
// with the same seed, releases and data; and a second run resumes every
// unit, audits included, and writes the same audit.csv.
func TestAudit_Run(t *testing.T) {
	if err := registerBroken(); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	runIt := func(src string) (string, string) {
		t.Helper()
		var stderr strings.Builder
		dir, err := runner.Run(context.Background(), load(t, src), runner.Options{OutDir: out, Workers: 2, Stderr: &stderr})
		if err != nil {
			t.Fatal(err)
		}
		return dir, stderr.String()
	}
	read := func(dir, name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dir, _ := runIt(auditSpec)
	plainRows, plainSum := read(dir, "rows.csv"), read(dir, "summary.csv")
	if _, err := os.Stat(filepath.Join(dir, results.AuditFile)); err == nil {
		t.Errorf("a run without [comparison.audit] wrote %s", results.AuditFile)
	}
	plain, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}

	dir, stderr := runIt(auditSpec + auditTable)
	if got := read(dir, "rows.csv"); !bytes.Equal(got, plainRows) {
		t.Errorf("rows.csv differs with the audit")
	}
	if got := read(dir, "summary.csv"); !bytes.Equal(got, plainSum) {
		t.Errorf("summary.csv differs with the audit")
	}
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.Units.Resumed != plain.Units.Total || m.Units.Computed != 2 || m.Units.Total != plain.Units.Total+2 {
		t.Errorf("units %+v: want the %d CV units resumed and the 2 audits computed", m.Units, plain.Units.Total)
	}
	if len(m.Audits) != 2 {
		t.Fatalf("manifest audits %+v, want 2", m.Audits)
	}
	verdict := map[string]string{"output-perturbation": "consistent with the claim", "audit-noise-for-4eps": "claim violated"}
	for _, a := range m.Audits {
		if a.Verdict != verdict[a.Method] || a.Violated != (a.Verdict == "claim violated") || a.Setting != "epsilon=1" ||
			a.ClaimedEpsilon != 1 || a.Releases != 4000 || a.Confidence != 0.95 || a.File != results.AuditFile || a.Fits < 16000 {
			t.Errorf("audit %+v: want verdict %q at epsilon=1, claim 1, 4000 releases, confidence 0.95", a, verdict[a.Method])
		}
		t.Logf("%s: ε_LB = %.3f (claim %g): %s; %d fits in %.1f s", a.Method, a.EpsilonLower, a.ClaimedEpsilon, a.Verdict, a.Fits, a.WallSeconds)
	}
	const warn = "privacy audit: audit-noise-for-4eps at epsilon=1: claim violated: ε_LB = "
	if !slices.ContainsFunc(m.Warnings, func(w string) bool { return strings.HasPrefix(w, warn) }) {
		t.Errorf("manifest warnings %q lack %q…", m.Warnings, warn)
	}
	if !strings.Contains(stderr, "dprepro: small: WARNING: "+warn) {
		t.Errorf("stderr does not warn of the violation:\n%s", stderr)
	}
	for _, le := range m.Ledger {
		audited := le.Setting == "epsilon=1" && verdict[le.Method] != ""
		if audited != (le.Audit != nil) {
			t.Errorf("ledger %s %s: audit %+v", le.Method, le.Setting, le.Audit)
			continue
		}
		if !audited {
			continue
		}
		claimed := le.Components[0].Claimed
		if !strings.Contains(claimed, "audited: ε_LB = ") || !strings.Contains(claimed, "beside the claimed ε = 1") || !strings.HasSuffix(claimed, ": "+verdict[le.Method]) {
			t.Errorf("ledger %s %s: claimed %q", le.Method, le.Setting, claimed)
		}
	}
	audit := readRows(t, filepath.Join(dir, results.AuditFile))
	if len(audit) != 4 {
		t.Fatalf("%s: %d rows, want 2 pairs × 2 learners", results.AuditFile, len(audit))
	}
	for _, r := range audit {
		if r["verdict"] != verdict[r["method"]] || r["epsilon"] != "1" || (r["pair"] != "adversarial" && r["pair"] != "search") {
			t.Errorf("audit row %v", r)
		}
	}

	// The report: ε_LB beside the claimed ε for every audited learner,
	// the violation marked and warned.
	rep0, err := report.Load(out, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md, html strings.Builder
	if err := rep0.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep0.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, a := range m.Audits {
		v := a.Verdict
		if a.Violated {
			v = "**" + v + "**"
		}
		line := fmt.Sprintf("| `%s` | epsilon=1 | ε = 1 | %s | 4000 | 0.95 | %s |", a.Method, strconv.FormatFloat(float64(a.EpsilonLower), 'g', 4, 64), v)
		if !strings.Contains(md.String(), line) {
			t.Errorf("report.md lacks the audit line %q", line)
		}
		cell := fmt.Sprintf("<td class=\"n\"><b>%s</b></td>", strconv.FormatFloat(float64(a.EpsilonLower), 'g', 4, 64))
		if !strings.Contains(html.String(), cell) {
			t.Errorf("report.html lacks ε_LB %q", cell)
		}
	}
	if !strings.Contains(md.String(), "> ⚠️ privacy audit: audit-noise-for-4eps at epsilon=1: claim violated") {
		t.Errorf("report.md does not warn of the violation")
	}
	if !strings.Contains(html.String(), `<td class="notheld">claim violated</td>`) || !strings.Contains(html.String(), "privacy audit: audit-noise-for-4eps at epsilon=1: claim violated") {
		t.Errorf("report.html does not show the violation")
	}

	// The command's audit of the broken learner: the same bound.
	s := parse(t, auditSpec)
	p, err := learneraudit.Prepare(s, "audit-noise-for-4eps", learneraudit.SpecOptions{Data: runner.DataOptions{DataDir: os.Getenv("DPREPRO_DATA")}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	o := p.Options
	o.Releases, o.Seed, o.Workers = 4000, uint64(s.Seed), 2
	rep, err := learneraudit.Run(context.Background(), p.Learner, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range m.Audits {
		if a.Method == "audit-noise-for-4eps" && float64(a.EpsilonLower) != rep.EpsLower {
			t.Errorf("the run's ε_LB %v, the command's %v", a.EpsilonLower, rep.EpsLower)
		}
	}

	// Run again: every unit resumed, the same audit.csv.
	auditCSV := read(dir, results.AuditFile)
	dir, _ = runIt(auditSpec + auditTable)
	m2, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if m2.Units.Computed != 0 || !bytes.Equal(read(dir, results.AuditFile), auditCSV) || len(m2.Audits) != 2 {
		t.Errorf("rerun: units %+v, audits %d, audit.csv equal %v", m2.Units, len(m2.Audits), bytes.Equal(read(dir, results.AuditFile), auditCSV))
	}
}

// TestAudit_Validate: the keys of [comparison.audit] are checked at load.
func TestAudit_Validate(t *testing.T) {
	for _, c := range []struct{ table, want string }{
		{"learners = [\"non-private\"]", "comparison.audit.learners[0]: unknown learner \"non-private\""},
		{"learners = [\"output-perturbation\", \"output-perturbation\"]", "duplicate learner"},
		{"releases = 100", "comparison.audit.releases: must be >= 200"},
		{"epsilon = 2.0", "comparison.audit.epsilon: must be one of comparison.epsilons"},
		{"confidence = 1.5", "comparison.audit.confidence: must be in (0, 1)"},
	} {
		src := strings.Replace(smallSpec, "[output]", "[comparison.audit]\n"+c.table+"\n\n[output]", 1)
		_, err := parseErr(src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.table, err, c.want)
		}
	}
	e := load(t, strings.Replace(smallSpec, "[output]", "[comparison.audit]\nlearners = [\"output-perturbation\"]\n\n[output]", 1))
	if u := e.Units()[0]; u.Key() != "audit/output-perturbation/epsilon=0.1" || !e.AuditUnit(u) || e.AuditUnit(e.Units()[1]) {
		t.Errorf("first units %q, %q: want the audit at ε = 0.1 first (0.1 and 10 are as near 1 in log scale: the first wins)", u.Key(), e.Units()[1].Key())
	}
}

func parseErr(src string) (any, error) {
	return experiments.Parse("small.toml", []byte(src), "", testKinds)
}
