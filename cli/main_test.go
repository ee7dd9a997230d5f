package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/internal/stattest"
	"github.com/dprepro/dprepro/results"
)

func dprepro(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

const tinySpec = `schema = 1
id = "tiny"
title = "tiny"
kind = "cv-tuning"
seed = 3

[data]
datasets = ["magic"]
subsample = 800

[cv]
repetitions = 1
folds = 4

[tuning]
lambdas = [0.05, 1.0]
alphas = [1.0]
methods = ["stability", "random"]

[output]
bootstrap = 100

[profile.quick.cv]
folds = 3
`

func writeSpec(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "spec.toml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun_EndToEnd(t *testing.T) {
	spec := writeSpec(t, tinySpec)
	out := t.TempDir()
	// Flags after the positional argument, as the usage writes them.
	code, stdout, stderr := dprepro(t, "run", spec, "--profile", "quick", "--out", out, "--workers", "2", "--data-dir", os.Getenv("DPREPRO_DATA"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "tiny: wrote") {
		t.Errorf("stdout %q", stdout)
	}
	dir := filepath.Join(out, "tiny", "quick-seed3")
	for _, f := range []string{"spec.toml", "rows.csv", "summary.csv", "manifest.json", "figures/fig1a-auc.png", "figures/fig1b-mse.svg", "figures/fig2-index.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	var m results.Manifest
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Profile != "quick" || m.Seed != 3 || m.Units.Total != 2*1*3 || len(m.Datasets) != 1 || len(m.Ledger) != 2 {
		t.Errorf("manifest: profile %q seed %d units %+v datasets %d ledger %d", m.Profile, m.Seed, m.Units, len(m.Datasets), len(m.Ledger))
	}
	src := m.Datasets[0].Source
	if os.Getenv("DPREPRO_DATA") != "" && src != "real" {
		t.Errorf("with DPREPRO_DATA set the data source is %q", src)
	}
	if src == "synthetic" && !strings.Contains(stderr, "SYNTHETIC") {
		t.Errorf("synthetic data without a warning on stderr: %q", stderr)
	}
	// --seed overrides the spec's seed.
	code, _, stderr = dprepro(t, "run", "--seed", "11", "--out", out, spec, "--data-dir", os.Getenv("DPREPRO_DATA"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ = os.ReadFile(filepath.Join(out, "tiny", "quick-seed11", "manifest.json"))
	json.Unmarshal(b, &m)
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Errorf("the seed-11 run disturbed the seed-3 run: %v", err)
	}
	if m.Seed != 11 || m.Profile != "quick" {
		t.Errorf("--seed 11: manifest seed %d profile %s", m.Seed, m.Profile)
	}
}

func TestRun_BadInput(t *testing.T) {
	bad := writeSpec(t, strings.Replace(tinySpec, "lambdas = [0.05, 1.0]", "lambdas = [0.05, -1.0]", 1))
	good := writeSpec(t, tinySpec)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "no command"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"bad spec", []string{"run", bad, "--out", t.TempDir()}, "spec.toml:16: tuning.lambdas[1]: must be finite and > 0 (got -1)"},
		{"missing spec", []string{"run", "/nonexistent/x.toml"}, "no such file"},
		{"no spec", []string{"run"}, "name at least one spec"},
		{"bad flag", []string{"run", good, "--wrokers", "2"}, "flag provided but not defined: -wrokers"},
		{"bad workers", []string{"run", good, "--workers", "0"}, "--workers must be >= 1"},
		{"bad profile", []string{"run", good, "--profile", "huge"}, `no profile "huge" (has: paper, quick)`},
		{"bad seed", []string{"run", good, "--seed", "-4"}, `--seed must be an integer from 0 to 2^63−1 = 9223372036854775807 (got "-4")`},
		{"seed beyond int64", []string{"run", good, "--seed", "18446744073709551615"}, `--seed must be an integer from 0 to 2^63−1 = 9223372036854775807 (got "18446744073709551615")`},
		{"data unknown", []string{"data", "fetch", "nosuch"}, `unknown dataset "nosuch"`},
		{"data near miss", []string{"data", "fetch", "magik"}, `dprepro: data fetch: unknown dataset "magik" (known: adult, bank, ipums-br, ipums-us, kddcup99, magic, twitter); did you mean "magic"?` + "\n"},
		{"spec id near miss", []string{"run", "cv13-magik"}, `; did you mean "cv13-magic"?` + "\n"},
		{"method near miss", []string{"run", writeSpec(t, strings.Replace(tinySpec, `"stability", "random"`, `"stability", "Random"`, 1))},
			`dprepro: spec.toml:18: tuning.methods[1]: unknown method "Random" (known: stability, alphaSplit, dataSplit, random, control); did you mean "random"?` + "\n"},
		{"data sub", []string{"data", "frob"}, `unknown subcommand "frob"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := dprepro(t, c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q does not contain %q", stderr, c.want)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); c.name == "bad spec" && n > 0 {
				t.Errorf("bad spec: %d lines of error, want one", n+1)
			}
		})
	}
}

func TestRun_MissingDataNever(t *testing.T) {
	spec := writeSpec(t, strings.Replace(tinySpec, "subsample = 800", "subsample = 800\nsynthetic = \"never\"", 1))
	code, _, stderr := dprepro(t, "run", spec, "--data-dir", t.TempDir(), "--out", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "magic") {
		t.Errorf("exit %d stderr %q; want 2 naming the dataset", code, stderr)
	}
}

const tinyExPost = `schema = 1
id = "tiny-af"
kind = "expost-sweep"
seed = 3

[data]
datasets = ["magic"]
column_scale = "none"
intercept = false
row_norm = "l1-max"
subsample = 1500

[accuracy_first]
task = "logistic"
generator = "output"
calibration = "authors-code"
lambda = 0.01
steps = 100
alphas = [0.1]
trials = 2
methods = ["noise-reduction", "doubling", "theory"]

[output]
bootstrap = 100

[profile.quick.accuracy_first]
trials = 2
`

// TestRun_ExPostEndToEnd runs the expost-sweep kind through the command:
// outputs, the calibration warning, and the ledger.
func TestRun_ExPostEndToEnd(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := dprepro(t, "run", writeSpec(t, tinyExPost), "--out", out, "--data-dir", os.Getenv("DPREPRO_DATA"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "calibration authors-code") {
		t.Errorf("no calibration warning on stderr: %q", stderr)
	}
	dir := filepath.Join(out, "tiny-af", "quick-seed3")
	for _, f := range []string{"rows.csv", "summary.csv", "manifest.json", "figures/fig1-expost.png", "figures/fig3b-privacy-breakdown.svg", "figures/fig4b-norms.png", "figures/risk-factor-b.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	var m results.Manifest
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Units.Total != 6 || len(m.Ledger) != 3 {
		t.Errorf("manifest: %d units, %d ledger entries", m.Units.Total, len(m.Ledger))
	}
	// Two runs of one calibration: Ligett et al.'s figures across them.
	other := writeSpec(t, strings.Replace(tinyExPost, `id = "tiny-af"`, `id = "tiny-af2"`, 1))
	two := t.TempDir()
	code, stdout, stderr := dprepro(t, "run", writeSpec(t, tinyExPost), other, "--out", two, "--data-dir", os.Getenv("DPREPRO_DATA"))
	if code != 0 || !strings.Contains(stdout, "Ligett et al. Figures 1-4 across runs") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	for _, f := range []string{"figure1-expost.png", "figure2-accuracy.svg", "figure4-norms.png", "risk-factor.png"} {
		if _, err := os.Stat(filepath.Join(two, "af17-figures", "quick", "authors-code", f)); err != nil {
			t.Error(err)
		}
	}
	// A ridge task on a classification dataset is a clear error (exit 2).
	bad := strings.Replace(tinyExPost, `task = "logistic"`, `task = "ridge"`, 1)
	if code, _, stderr := dprepro(t, "run", writeSpec(t, bad), "--out", t.TempDir(), "--data-dir", os.Getenv("DPREPRO_DATA")); code != 2 || !strings.Contains(stderr, `task "ridge" needs regression`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// ciSpec is a small ci-coverage spec on the first 1,500 permuted Adult
// records; id and sweep are filled in.
const ciSpec = `schema = 1
id = "%s"
kind = "ci-coverage"
seed = 5

[data]
datasets = ["adult"]
intercept = false

[confidence_intervals]
methods = ["dp-obj-lr", "zcdp-obj-lr", "dp-output-lr", "zcdp-output-lr"]
n1 = 1500
d1 = 4
sweep = "%s"
values = %s
replicates = 4
mc_samples = 100
vi_fits = 20
block_size = 4

[output]
bootstrap = 100

[profile.quick.confidence_intervals]
replicates = 4
`

// TestRun_CIFiguresAcrossRuns checks that running several ci-coverage
// specs also draws Figures 1–4 across them, and that one spec alone
// does not.
func TestRun_CIFiguresAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	var specs []string
	for _, s := range []struct{ id, sweep, values string }{{"ci-d", "d", "[1, 2]"}, {"ci-eps2", "eps2", "[0.2, 0.5]"}} {
		p := filepath.Join(dir, s.id+".toml")
		if err := os.WriteFile(p, []byte(fmt.Sprintf(ciSpec, s.id, s.sweep, s.values)), 0o644); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, p)
	}
	out := t.TempDir()
	code, stdout, stderr := dprepro(t, append([]string{"run", "--out", out, "--data-dir", os.Getenv("DPREPRO_DATA")}, specs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Figures 1-4 across 2 runs") {
		t.Errorf("stdout %q", stdout)
	}
	for _, f := range []string{"figure1-dp-vs-zcdp-obj", "figure2-dp-vs-zcdp-output", "figure3-obj-vs-output-dp", "figure4-obj-vs-output-zcdp"} {
		for _, ext := range []string{".png", ".svg"} {
			if _, err := os.Stat(filepath.Join(out, "wkl-figures", "quick", f+ext)); err != nil {
				t.Error(err)
			}
		}
	}
	one := t.TempDir()
	if code, _, stderr := dprepro(t, "run", "--out", one, "--data-dir", os.Getenv("DPREPRO_DATA"), specs[0]); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(one, "wkl-figures")); !os.IsNotExist(err) {
		t.Errorf("one run drew figures across runs: %v", err)
	}
}

// TestShardAndMerge runs a spec unsharded and as three shards, merges the
// shards, and compares: rows.csv and summary.csv byte-identical, every unit
// resumed from the shards and none computed by the merge. A merge missing
// a shard is refused.
func TestShardAndMerge(t *testing.T) {
	spec := writeSpec(t, strings.Replace(processSpecSmall, "replicates = 20", "replicates = 4", 1))
	whole := t.TempDir()
	if code, _, stderr := dprepro(t, "run", spec, "--out", whole); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	// A shard aimed at the finished run's folder is refused and leaves it whole.
	if code, _, stderr := dprepro(t, "run", spec, "--out", whole, "--shard", "0/3"); code != 2 || !strings.Contains(stderr, "holds a finished run") {
		t.Errorf("shard into a finished run: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(whole, "proc", "quick-seed17", "manifest.json")); err != nil {
		t.Errorf("the refused shard damaged the finished run: %v", err)
	}
	var shards []string
	for i := 0; i < 3; i++ {
		d := t.TempDir()
		code, stdout, stderr := dprepro(t, "run", spec, "--out", d, "--shard", fmt.Sprintf("%d/3", i))
		if code != 0 || !strings.Contains(stdout, fmt.Sprintf("shard %d/3 done", i)) {
			t.Fatalf("shard %d: exit %d: %s %s", i, code, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(d, "proc", "quick-seed17", "manifest.json")); !os.IsNotExist(err) {
			t.Errorf("shard %d wrote final files", i)
		}
		shards = append(shards, d)
	}
	if code, _, stderr := dprepro(t, "merge", spec, "--out", t.TempDir(), "--shards", strings.Join(shards[:2], ",")); code != 2 || !strings.Contains(stderr, "a shard is missing or unfinished") {
		t.Errorf("merge of 2 of 3 shards: exit %d: %s", code, stderr)
	}
	merged := t.TempDir()
	code, stdout, stderr := dprepro(t, "merge", spec, "--out", merged, "--shards", strings.Join(shards, ","))
	if code != 0 || !strings.Contains(stdout, "merged 48 units from 3 shards") {
		t.Fatalf("merge: exit %d: %s %s", code, stdout, stderr)
	}
	for _, f := range []string{"rows.csv", "summary.csv"} {
		a, _ := os.ReadFile(filepath.Join(whole, "proc", "quick-seed17", f))
		b, _ := os.ReadFile(filepath.Join(merged, "proc", "quick-seed17", f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s of the merged run differs from the unsharded run", f)
		}
	}
	var m results.Manifest
	b, _ := os.ReadFile(filepath.Join(merged, "proc", "quick-seed17", "manifest.json"))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Units.Total != 48 || m.Units.Resumed != 48 || m.Units.Computed != 0 {
		t.Errorf("merged manifest units %+v: want all 48 from the shards", m.Units)
	}
}

// TestShardFromEnvironment checks the scheduler variables.
func TestShardFromEnvironment(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cases := []struct {
		flag   string
		count  int
		env    map[string]string
		want   string
		errSub string
	}{
		{"2/5", 0, nil, "2/5", ""},
		{"auto", 0, map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, "3/4", ""},
		{"auto", 0, map[string]string{"SLURM_ARRAY_TASK_ID": "8", "SLURM_ARRAY_TASK_MIN": "7", "SLURM_ARRAY_TASK_COUNT": "3"}, "1/3", ""},
		{"auto", 6, map[string]string{"JOB_COMPLETION_INDEX": "5"}, "5/6", ""},
		{"auto", 0, map[string]string{"JOB_COMPLETION_INDEX": "5"}, "", "no scheduler index"}, // no declared count
		{"auto", 0, nil, "", "no scheduler index"},
		// Without --shard auto the scheduler's variables are ignored.
		{"", 0, map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, "0/0", ""},
		{"", 6, map[string]string{"JOB_COMPLETION_INDEX": "5"}, "0/0", ""},
		{"5/5", 0, nil, "", "want 0 <= i < N"},
		{"x/5", 0, nil, "", "not an integer"},
		{"3", 0, nil, "", "must be i/N"},
	}
	for _, c := range cases {
		f := runFlags{shard: c.flag, shards: c.count}
		sh, err := f.shardOf(env(c.env))
		if c.errSub != "" {
			if err == nil || !strings.Contains(err.Error(), c.errSub) {
				t.Errorf("%q %v: err = %v, want %q", c.flag, c.env, err, c.errSub)
			}
			continue
		}
		if err != nil || fmt.Sprintf("%d/%d", sh.Index, sh.Count) != c.want {
			t.Errorf("%q %v: got %d/%d (%v), want %s", c.flag, c.env, sh.Index, sh.Count, err, c.want)
		}
	}
}

// TestAuditCommand runs the audit of two mechanisms: the verdict table is
// printed, every correct mechanism passes (exit 0), the broken
// AboveThreshold without threshold noise is caught; an unknown mechanism is
// a usage error.
func TestAuditCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an audit")
	}
	spec := filepath.Join("..", "experiments", "audit.toml")
	code, stdout, stderr := dprepro(t, "audit", "laplace", "above-threshold", "--spec", spec, "--out", t.TempDir())
	if code != 0 || !strings.Contains(stdout, "audit: pass") || !strings.Contains(stdout, "| above-threshold | no-threshold-noise | 1 | 1 |") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.Contains(line, "no-threshold-noise") && !strings.HasSuffix(line, "| caught |") {
			t.Errorf("not caught: %s", line)
		}
	}
	if code, _, stderr := dprepro(t, "audit", "nosuch", "--spec", spec); code != 2 || !strings.Contains(stderr, `unknown mechanism "nosuch"`) {
		t.Errorf("unknown mechanism: exit %d: %s", code, stderr)
	}
	if code, _, stderr := dprepro(t, "audit", "laplace", "--shard", "1/3", "--spec", spec); code != 2 || !strings.Contains(stderr, "flag provided but not defined: -shard") {
		t.Errorf("audit --shard: exit %d: %s", code, stderr)
	}
	if code, _, stderr := dprepro(t, "audit", "--thorough", "--profile", "quick", "--spec", spec); code != 2 || !strings.Contains(stderr, "cannot go with --profile quick") {
		t.Errorf("audit --thorough --profile quick: exit %d: %s", code, stderr)
	}
	if code, _, stderr := dprepro(t, "audit", "--profile", "bogus", "--spec", spec); code != 2 || !strings.Contains(stderr, `no profile "bogus"`) {
		t.Errorf("audit --profile bogus: exit %d: %s", code, stderr)
	}
	// A spec of a kind that does not audit (no runner.Auditor) is refused
	// with the kinds that do, and, when its learners can be audited, how.
	if code, _, stderr := dprepro(t, "audit", "--spec", "cv13-magic"); code != 2 || !strings.Contains(stderr, `cv13-magic: kind "cv-tuning" is not an audit kind (privacy-audit); to audit one of its learners, add --learner NAME`) {
		t.Errorf("audit --spec cv13-magic: exit %d: %s", code, stderr)
	}
	if code, _, stderr := dprepro(t, "audit", "--spec", "af17-kdd-logistic"); code != 2 || !strings.Contains(stderr, `kind "expost-sweep" is not an audit kind (privacy-audit)`) || strings.Contains(stderr, "--learner") {
		t.Errorf("audit --spec af17-kdd-logistic: exit %d: %s", code, stderr)
	}
}

// TestSecureNoiseFlag audits the Laplace mechanism with --secure-noise:
// the manifest says where the noise came from, the audit still passes, two
// runs differ (crypto/rand, not the seed), and secure mode is off again
// after the command. Secure noise cannot be seeded, so the two runs' four
// correct audits are at confidence 1 − FamilyAlpha/4 (a copy of the spec):
// at the spec's 95 % a false alarm would fail the test about 2 % of the time.
func TestSecureNoiseFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an audit")
	}
	b, err := os.ReadFile(filepath.Join("..", "experiments", "audit.toml"))
	if err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("confidence = %v", 1-stattest.FamilyAlpha/4)
	if !bytes.Contains(b, []byte("confidence = 0.95")) {
		t.Fatal("experiments/audit.toml has no 'confidence = 0.95' line to replace")
	}
	spec := filepath.Join(t.TempDir(), "audit.toml")
	if err := os.WriteFile(spec, bytes.Replace(b, []byte("confidence = 0.95"), []byte(conf), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var rows [2][]byte
	for i := range rows {
		out := t.TempDir()
		code, stdout, stderr := dprepro(t, "audit", "laplace", "--secure-noise", "--spec", spec, "--out", out)
		if code != 0 || !strings.Contains(stdout, "audit: pass") || !strings.Contains(stderr, "secure noise") {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		_, r, m := readRun(t, filepath.Join(out, "audit-selected-secure", "quick-seed2026-secure"))
		rows[i] = r
		if len(m.Noise) < 3 || !strings.Contains(m.Noise[0], "crypto/rand") {
			t.Errorf("manifest noise %q does not describe secure noise", m.Noise)
		}
	}
	if bytes.Equal(rows[0], rows[1]) {
		t.Error("two secure runs gave the same summary: the noise is not from crypto/rand")
	}
}
