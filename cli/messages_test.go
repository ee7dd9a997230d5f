package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/datasets"
)

// alwaysSpec asks for Magic's synthetic stand-in whatever the data folder
// holds.
const alwaysSpec = `schema = 1
id = "asked"
kind = "cv-tuning"
seed = 3

[data]
datasets = ["magic"]
synthetic = "always"
subsample = 300

[cv]
repetitions = 1
folds = 3

[tuning]
lambdas = [0.05, 1.0]
alphas = [1.0]
methods = ["random"]

[output]
bootstrap = 100

[profile.quick.tuning]
alphas = [2.0]
`

// TestStandIn_AskedFor: a spec with data.synthetic = "always" runs on the
// stand-in whether or not the real file is in the data folder, and every
// message says so in the spec's terms: the warning says the spec asks for
// it (never that the real file is not available), the closing line gives
// that reason and no advice to name a data folder, and the manifest's
// reason is the spec key, not a Go identifier. Beside a spec on a stand-in
// because no data folder was named, the closing line counts each reason.
func TestStandIn_AskedFor(t *testing.T) {
	bin := sharedBinary(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "asked.toml")
	auto := filepath.Join(dir, "auto.toml")
	if err := os.WriteFile(spec, []byte(alwaysSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	autoSrc := strings.NewReplacer(`id = "asked"`, `id = "auto"`, `synthetic = "always"`, "").Replace(alwaysSpec)
	if err := os.WriteFile(auto, []byte(autoSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	const (
		warning = `dprepro: asked: WARNING: dataset magic: results use a SYNTHETIC stand-in (planted-logistic/v1), as the spec asks (data.synthetic = "always"), not the real file, whether or not it is available` + "\n"
		closing = `dprepro: 1 of 1 runs used labelled SYNTHETIC stand-ins, not real data (magic): their specs ask for them (data.synthetic = "always")` + "\n"
	)
	folders := map[string][]string{
		"no data folder named":    nil,
		"an empty folder named":   {"--data-dir", t.TempDir()},
		"the real folder, if any": nil,
	}
	if d := os.Getenv("DPREPRO_DATA"); d != "" {
		for _, f := range []string{"magic04.data", "magic04.data.gz"} {
			if st, err := os.Stat(filepath.Join(d, f)); err == nil && st.Mode().IsRegular() {
				folders["the real folder, if any"] = []string{"--data-dir", d}
			}
		}
	}
	for name, args := range folders {
		if name == "the real folder, if any" && args == nil {
			t.Logf("%s: $DPREPRO_DATA holds no magic04.data(.gz); the named empty folder stands for it", name)
			continue
		}
		out := t.TempDir()
		r := runProc(t, cleanEnv(t), bin, append([]string{"run", spec, "--out", out}, args...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.code, r.stderr)
		}
		mustContain(t, name+": stderr", r.stderr, warning, closing)
		for _, bad := range []string{"not available;", "name one with --data-dir", `"allow"`} {
			if strings.Contains(r.stderr, bad) {
				t.Errorf("%s: stderr says %q:\n%s", name, bad, r.stderr)
			}
		}
		_, _, m := readRun(t, filepath.Join(out, "asked", "quick-seed3"))
		if len(m.Datasets) != 1 || m.Datasets[0].Params["reason"] != datasets.ReasonSyntheticAlways ||
			strings.Contains(m.Datasets[0].Params["reason"], "Options") {
			t.Errorf("%s: manifest datasets %+v: want the reason %q", name, m.Datasets, datasets.ReasonSyntheticAlways)
		}
	}

	// Beside a run on a stand-in for want of a data folder: each reason
	// counted, the advice for the other run only.
	r := runProc(t, cleanEnv(t), bin, "run", spec, auto, "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("two specs: exit %d\n%s", r.code, r.stderr)
	}
	mustContain(t, "two specs: stderr", r.stderr,
		`dprepro: 2 of 2 runs used labelled SYNTHETIC stand-ins, not real data (magic): 1 of them because its spec asks for it (data.synthetic = "always"); the other 1 because no data directory was named: name one with --data-dir or $DPREPRO_DATA`,
		"dprepro: auto: WARNING: dataset magic: the real file is not available; results use a SYNTHETIC stand-in")
}

// zcdpWorker is an external learner (a shell script) that declares ρ-zCDP
// and claims ρ = ε²/2 for each fit at level ε (here ε = 1: ρ = 0.5),
// releasing zero weights for Magic's 11 columns.
const zcdpWorker = `read line
echo '{"type":"hello","protocol":1,"serves":"learner","privacy":"zcdp"}'
while read line; do
  id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  echo "{\"type\":\"result\",\"id\":$id,\"output\":{\"weights\":[0,0,0,0,0,0,0,0,0,0,0]},\"privacy\":{\"rho\":0.5}}"
done
`

// TestExternalLearner_ZCDPAdvice: an external worker declaring ρ-zCDP in
// its hello is refused when a cv-tuning spec with a pure training budget
// loads (exit 2, at its tuning.learners entry), saying what to set —
// tuning.train_delta, at whose split each fit's ρ is stated — instead of
// failing every unit.
func TestExternalLearner_ZCDPAdvice(t *testing.T) {
	bin := sharedBinary(t)
	spec := strings.NewReplacer(`id = "underclaim"`, `id = "extzcdp"`, "[data]", `[[methods]]
name = "sh-zcdp"
serves = "learner"
command = ["sh", "worker.sh"]
timeout = "20s"

[data]`, `alphas = [0.5, 1.0]`, `alphas = [2.0]`, `methods = ["alphaSplit", "random"]`, `methods = ["random"]`,
		`learners = ["objective-perturbation", "go-tenth", "go-double"]`, `learners = ["sh-zcdp"]`).Replace(underLearnerSpec)
	dir := writeFiles(t, map[string]string{"ext.toml": spec, "worker.sh": zcdpWorker})
	r := runProc(t, cleanEnv(t), bin, "run", filepath.Join(dir, "ext.toml"), "--out", filepath.Join(dir, "out"))
	if r.code != 2 {
		t.Fatalf("exit %d, want 2 (refused at load)\n%s", r.code, r.stderr)
	}
	mustContain(t, "stderr", r.stderr,
		"ext.toml:", "tuning.learners[0]: learner sh-zcdp declares ρ-zCDP guarantees",
		"set tuning.train_delta > 0", "Bun & Steinke 2016, Proposition 1.3")
	// The folder may record the attempt ("not run"), never results.
	for _, f := range []string{"manifest.json", "rows.csv", "summary.csv"} {
		if m, _ := filepath.Glob(filepath.Join(dir, "out", "extzcdp", "*", f)); len(m) > 0 {
			t.Errorf("a refused spec wrote %v", m)
		}
	}
}

// TestSeed_Range: --seed's help says its range, 2^64−1 is refused
// naming it (exit 2), and 2^63−1, the largest, runs (the run folder named
// by it).
func TestSeed_Range(t *testing.T) {
	bin := sharedBinary(t)
	const rng = "an integer from 0 to 2^63−1 = 9223372036854775807"
	r := runProc(t, cleanEnv(t), bin, "run", "-h")
	if !strings.Contains(r.stderr+r.stdout, "overriding the spec's ("+rng+")") {
		t.Errorf("run -h does not give --seed's range:\n%s%s", r.stdout, r.stderr)
	}
	spec := filepath.Join(t.TempDir(), "asked.toml")
	if err := os.WriteFile(spec, []byte(alwaysSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	r = runProc(t, cleanEnv(t), bin, "run", spec, "--out", out, "--seed", "18446744073709551615")
	if want := `dprepro: --seed must be ` + rng + ` (got "18446744073709551615")`; r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("2^64−1: exit %d, stderr\n%s\nwant %s", r.code, r.stderr, want)
	}
	r = runProc(t, cleanEnv(t), bin, "run", spec, "--out", out, "--seed", "9223372036854775807")
	if r.code != 0 {
		t.Fatalf("2^63−1: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "asked", "quick-seed9223372036854775807", "manifest.json")); err != nil {
		t.Errorf("2^63−1: %v", err)
	}
}
