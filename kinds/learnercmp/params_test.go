package learnercmp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// fakeParamsWorker is an external learner whose hello declares two
// parameters, feature (int, default 0) and scale (float, default 1). A fit
// releases scale times the unit vector of column feature mod d — no
// noise, so each setting has its own test AUC — at the ε asked for, and
// appends the call's params to the file record (record/calls.jsonl when
// record is a directory: a directory on the command line is not one of the
// method's files, so the record can grow between runs).
func fakeParamsWorker(record string) int {
	if st, err := os.Stat(record); err == nil && st.IsDir() {
		record += "/calls.jsonl"
	}
	rec, err := os.OpenFile(record, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 1
	}
	defer rec.Close()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<24)
	if !in.Scan() {
		return 1
	}
	fmt.Println(`{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure", "attributes": {"params": [` +
		`{"name": "feature", "type": "int", "default": 0, "doc": "the column released"}, {"name": "scale", "type": "float", "default": 1}]}}`)
	for in.Scan() {
		var req struct {
			ID     uint64          `json:"id"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return 2
		}
		fmt.Fprintf(rec, "%s\n", req.Params)
		var p struct {
			Epsilon float64 `json:"epsilon"`
			D       int     `json:"d"`
			Method  struct {
				Feature int     `json:"feature"`
				Scale   float64 `json:"scale"`
			} `json:"method_params"`
		}
		json.Unmarshal(req.Params, &p)
		w := make([]float64, p.D)
		w[p.Method.Feature%p.D] = p.Method.Scale
		b, _ := json.Marshal(map[string]any{"type": "result", "id": req.ID, "output": map[string]any{"weights": w},
			"privacy": map[string]any{"epsilon": p.Epsilon}})
		fmt.Println(string(b))
	}
	return 0
}

// paramsSpec is extSpec with the params worker as fake-ext and its
// [[methods]] table ending in table (e.g. a [methods.params] table).
func paramsSpec(t *testing.T, record, table string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := extSpec(t, record)
	src = strings.Replace(src, fmt.Sprintf("command = [%q, \"fake-learner\",", exe), fmt.Sprintf("command = [%q, \"fake-learner-params\",", exe), 1)
	return strings.Replace(src, "timeout = \"20s\"\n", "timeout = \"20s\"\n"+table+"\n", 1)
}

// TestParams_Variants: a list in [methods.params] expands into labelled
// variants, each its own curve — rows, summary and ledger entries under
// "fake-ext[feature=…]" — and every call carries every declared
// parameter (the listed one, and the default of the other) in
// params.method_params; the other learner's rows are byte-identical to a
// spec without the variants.
func TestParams_Variants(t *testing.T) {
	t.Parallel()
	record := t.TempDir() + "/params.jsonl"
	e := load(t, paramsSpec(t, record, "[methods.params]\nfeature = [2, 5]"))
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 2, Stderr: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	calls := recorded(t, record)
	if len(calls) != 2*8*2 {
		t.Fatalf("%d calls, want 32 (2 variants × 8 folds × 2 ε)", len(calls))
	}
	seen := map[string]int{}
	for _, p := range calls {
		mp, _ := p["method_params"].(map[string]any)
		if len(mp) != 2 || mp["scale"] != 1.0 || (mp["feature"] != 2.0 && mp["feature"] != 5.0) {
			t.Errorf("method_params %v: want feature 2 or 5 and the default scale 1", p["method_params"])
		}
		seen[fmt.Sprint(mp["feature"])]++
	}
	if seen["2"] != 16 || seen["5"] != 16 {
		t.Errorf("calls by feature %v, want 16 each", seen)
	}
	rows := readRows(t, dir+"/rows.csv")
	byLabel := map[string]int{}
	for _, r := range rows {
		byLabel[r["method"]]++
		if r["method"] != r["learner"] {
			t.Errorf("%s: method %q, learner %q", r["key"], r["method"], r["learner"])
		}
	}
	if byLabel["fake-ext[feature=2]"] != 16 || byLabel["fake-ext[feature=5]"] != 16 || byLabel["fake-ext"] != 0 {
		t.Errorf("rows by method %v, want 16 of each variant", byLabel)
	}
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	ledger := map[string]int{}
	for _, le := range m.Ledger {
		ledger[le.Method]++
	}
	if ledger["fake-ext[feature=2]"] != 2 || ledger["fake-ext[feature=5]"] != 2 {
		t.Errorf("ledger entries by method %v, want 2 (one per ε) of each variant", ledger)
	}

	// output-perturbation's rows do not depend on fake-ext's variants.
	plain := load(t, extSpec(t, t.TempDir()+"/p.jsonl"))
	dir2, err := runner.Run(context.Background(), plain, runner.Options{OutDir: t.TempDir(), Workers: 1, Stderr: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	op := func(rows []results.Row) map[string]string {
		out := map[string]string{}
		for _, r := range rows {
			if r["learner"] == "output-perturbation" {
				out[r["key"]] = r["auc"] + " " + r["mse"]
			}
		}
		return out
	}
	a, b := op(rows), op(readRows(t, dir2+"/rows.csv"))
	if len(a) != 16 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("output-perturbation's rows differ with fake-ext's variants:\n%v\n%v", a, b)
	}
}

// TestParams_Oracle: grid = "oracle" releases, per fold and ε, the
// variant with the highest test AUC — the same fits the variants spec
// makes, so its AUC is the largest of theirs — labelled
// "fake-ext[grid=oracle]", with the chosen variant in setting, private
// false, a status that says why, and a ledger entry that books it as not
// private.
func TestParams_Oracle(t *testing.T) {
	t.Parallel()
	variants := load(t, paramsSpec(t, t.TempDir()+"/v.jsonl", "[methods.params]\nfeature = [2, 5, 8]"))
	dirV, err := runner.Run(context.Background(), variants, runner.Options{OutDir: t.TempDir(), Workers: 2, Stderr: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	best := map[string]float64{} // fold/ε -> the largest AUC of the variants
	bestSetting := map[string]string{}
	for _, r := range readRows(t, dirV+"/rows.csv") {
		if !strings.HasPrefix(r["learner"], "fake-ext[") {
			continue
		}
		k := r["repetition"] + "/" + r["fold"] + "/" + r["epsilon"]
		if a, ok := best[k]; !ok || r.Float("auc") > a {
			best[k], bestSetting[k] = r.Float("auc"), strings.TrimSuffix(strings.TrimPrefix(r["learner"], "fake-ext["), "]")
		}
	}
	oracle := load(t, paramsSpec(t, t.TempDir()+"/o.jsonl", "grid = \"oracle\"\n[methods.params]\nfeature = [2, 5, 8]"))
	if cols := oracle.Columns(); !strings.Contains(strings.Join(cols, ","), ",lambda,setting,") {
		t.Errorf("columns %v lack setting after lambda", cols)
	}
	dirO, err := runner.Run(context.Background(), oracle, runner.Options{OutDir: t.TempDir(), Workers: 2, Stderr: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range readRows(t, dirO+"/rows.csv") {
		if r["learner"] != "fake-ext[grid=oracle]" {
			if r["learner"] != "output-perturbation" && r["learner"] != "non-private" {
				t.Errorf("row of learner %q", r["learner"])
			}
			continue
		}
		n++
		k := r["repetition"] + "/" + r["fold"] + "/" + r["epsilon"]
		if math.Abs(r.Float("auc")-best[k]) > 0 || r["setting"] != bestSetting[k] {
			t.Errorf("%s: oracle AUC %s (setting %s), want the variants' best %v (%s)", r["key"], r["auc"], r["setting"], best[k], bestSetting[k])
		}
		if r["private"] != "false" || !strings.Contains(r["status"], "oracle: fake-ext[") || !strings.Contains(r["status"], "not private") {
			t.Errorf("%s: private %s, status %q: want false and the oracle's note", r["key"], r["private"], r["status"])
		}
	}
	if n != 16 {
		t.Errorf("%d oracle rows, want 16", n)
	}
	m, err := results.ReadManifestFS(os.DirFS(dirO), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, le := range m.Ledger {
		if le.Method == "fake-ext[grid=oracle]" && (le.Total.Private || !strings.HasPrefix(le.Rule, "not private: each row releases the one of 3 variants")) {
			t.Errorf("oracle ledger entry: total %+v, rule %q: want not private and why", le.Total, le.Rule)
		}
	}
}

// TestParams_Refused: an undeclared parameter (with a suggestion), a
// value of the wrong type, a list with a value twice, a private grid
// (learner-comparison selects nothing) and a grid without a list are
// spec errors at the method table's line, naming the key.
func TestParams_Refused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ table, want string }{
		{"[methods.params]\nfeatur = 3", `methods[0].params: featur: unknown parameter "featur" (known: feature, scale); did you mean "feature"?`},
		{"[methods.params]\nfeature = 1.5", "small.toml:12: methods[0].params: feature: 1.5 (a float) is not an int"},
		{"[methods.params]\nfeature = [1, 1]", "methods[0].params: feature[1]: 1 listed twice"},
		{"grid = \"private\"\n[methods.params]\nfeature = [1, 2]", "methods[0].grid: learner-comparison tunes nothing"},
		{"grid = \"oracle\"\n[methods.params]\nfeature = 1", `methods[0].grid: grid = "oracle" selects among the variants of list-valued params, and methods[0].params lists none`},
	} {
		_, err := New(parse(t, paramsSpec(t, t.TempDir()+"/r.jsonl", c.table)), runner.DataOptions{DataDir: os.Getenv("DPREPRO_DATA")})
		if err == nil || !strings.Contains(err.Error(), "small.toml:") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\nerr %v\nwant it to contain %s", c.table, err, c.want)
		}
	}
	// A registered learner without parameters.
	src := strings.Replace(smallSpec, "[data]\n", "[[methods]]\nname = \"output-perturbation\"\nserves = \"learner\"\n[methods.params]\nsteps = 3\n\n[data]\n", 1)
	_, err := New(parse(t, src), runner.DataOptions{DataDir: os.Getenv("DPREPRO_DATA")})
	if err == nil || !strings.Contains(err.Error(), "methods[0].params: learner output-perturbation declares no parameters") {
		t.Errorf("params of a learner without any: err %v", err)
	}
}

// TestParams_Incremental: a value added to a list computes the new
// variant's units alone — every other unit resumes from the checkpoint —
// and a value changed for all variants (a scalar parameter) recomputes
// every unit of the learner and no other, saying which learner changed.
func TestParams_Incremental(t *testing.T) {
	t.Parallel()
	out, recDir := t.TempDir(), t.TempDir()
	run := func(table string) (calls int, stderr string) {
		t.Helper()
		record := t.TempDir() + "/r.jsonl"
		src := paramsSpec(t, record, table)
		// The command (with the record's directory) stays the same.
		src = strings.Replace(src, record, recDir, 1)
		e := load(t, src)
		var buf strings.Builder
		before := 0
		if b, err := os.ReadFile(recDir + "/calls.jsonl"); err == nil {
			before = strings.Count(string(b), "\n")
		}
		if _, err := runner.Run(context.Background(), e, runner.Options{OutDir: out, Workers: 2, Stderr: &buf}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(recDir + "/calls.jsonl")
		return strings.Count(string(b), "\n") - before, buf.String()
	}
	if n, _ := run("[methods.params]\nfeature = [2, 5]"); n != 32 {
		t.Fatalf("first run: %d calls, want 32", n)
	}
	n, stderr := run("[methods.params]\nfeature = [2, 5, 8]")
	if n != 16 || !strings.Contains(stderr, "16 units are new") {
		t.Errorf("a value added: %d calls, want the new variant's 16; stderr:\n%s", n, stderr)
	}
	n, stderr = run("[methods.params]\nfeature = [2, 5, 8]\nscale = 2.0")
	if n != 48 || !strings.Contains(stderr, "learner fake-ext[feature=2] changed (16 units)") {
		t.Errorf("scale changed: %d calls, want all 48 of fake-ext; stderr:\n%s", n, stderr)
	}
}

// TestScratch_FreedPerFold: an external learner's training matrices are
// scoped to their fold (runner.ScratchScoper) and removed once the fold's
// last unit has run, so that at 2 workers at most 2 folds' files are on
// disk at once — the manifest's scratch_peak_bytes — not all 8.
func TestScratch_FreedPerFold(t *testing.T) {
	t.Parallel()
	e := load(t, extSpec(t, t.TempDir()+"/r.jsonl"))
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: 2, Stderr: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := results.ReadManifestFS(os.DirFS(dir), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	// One fold: 450 training rows × 11 columns and 450 labels, float64,
	// each file with a .npy header of at most 128 bytes.
	fold := int64(450*11*8 + 450*8)
	if m.ScratchPeakBytes < fold || m.ScratchPeakBytes > 2*(fold+256) {
		t.Errorf("scratch peak %d bytes, want one to two folds' (%d to %d); all 8 folds would be %d", m.ScratchPeakBytes, fold, 2*(fold+256), 8*fold)
	}
	if _, err := os.Stat(dir + "/scratch"); !os.IsNotExist(err) {
		t.Errorf("the scratch directory outlived the run: %v", err)
	}
}

// TestParams_UnusedTable: a learner's [[methods]] table that no
// comparison.learners entry names (misspelt, or left out by --only) is a
// warning naming its line and key, not ignored without a word.
func TestParams_UnusedTable(t *testing.T) {
	t.Parallel()
	src := strings.Replace(smallSpec, "[data]\n", "[[methods]]\nname = \"noisy-gdd\"\nserves = \"learner\"\ncommand = [\"python3\", \"x.py\"]\n\n[data]\n", 1)
	e := load(t, src)
	want := `small.toml:7: methods[0].name: no comparison.learners entry names learner "noisy-gdd": its table (command, params, grid) is not used`
	if w := e.Warnings(); !slices.Contains(w, want) {
		t.Errorf("warnings %q lack %q", w, want)
	}
}

// fakeStabilityWorker is a learner whose hello declares the "stability"
// op and answers it with β₁ = 2/min λ, β₂ = 1 (mode "ok"), the same with
// a privacy claim ("claim"), or β₁ = 0 ("zero").
func fakeStabilityWorker(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<24)
	if !in.Scan() {
		return 1
	}
	fmt.Println(`{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure", "attributes": {"stability": true}}`)
	for in.Scan() {
		var req struct {
			ID     uint64 `json:"id"`
			Op     string `json:"op"`
			Params struct {
				Lambdas []float64 `json:"lambdas"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil || req.Op != "stability" {
			return 2
		}
		b1 := 2 / slices.Min(req.Params.Lambdas)
		reply := map[string]any{"type": "result", "id": req.ID, "output": map[string]any{"beta1": b1, "beta2": 1}}
		switch mode {
		case "claim":
			reply["privacy"] = map[string]any{"epsilon": 1}
		case "zero":
			reply["output"] = map[string]any{"beta1": 0, "beta2": 1}
		}
		b, _ := json.Marshal(reply)
		fmt.Println(string(b))
	}
	return 0
}

// TestExternalLearner_StabilityOp: a worker whose hello declares
// attributes.stability is a learners.StableLearner whose constants come
// from its "stability" reply; a reply that claims privacy (the op
// releases nothing) or a β that is not > 0 is a fault naming the method.
func TestExternalLearner_StabilityOp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ mode, want string }{
		{"ok", ""},
		{"claim", "a stability call releases nothing"},
		{"zero", "beta1 is"},
	} {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		src := strings.Replace(extSpec(t, t.TempDir()+"/r.jsonl"), fmt.Sprintf("command = [%q, \"fake-learner\",", exe),
			fmt.Sprintf("command = [%q, \"fake-learner-stability\", %q] #", exe, c.mode), 1)
		e := load(t, src)
		var l learners.Learner
		for _, a := range e.arms {
			if a.name == "fake-ext" {
				l = a.fits[0]
			}
		}
		sl, ok := l.(learners.StableLearner)
		if !ok {
			t.Fatalf("%s: learner %T is not a StableLearner", c.mode, l)
		}
		b1, b2, err := sl.StabilityConstants(context.Background(), []float64{0.5, 0.1}, 100, 0.5, 0.01)
		e.Methods.Close()
		if c.want == "" {
			if err != nil || b1 != 20 || b2 != 1 {
				t.Errorf("ok: β₁ %v β₂ %v err %v, want 20, 1", b1, b2, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "fake-ext") {
			t.Errorf("%s: err %v, want it to name fake-ext and say %q", c.mode, err, c.want)
		}
	}
}

// TestParams_ClaimNamesAVariant: a claim naming a variant is checked
// against the labels the worker's declared parameters give, once its
// hello is read: "fake-ext[scale=2.5]" is a variant; "fake-ext[scale=1.0]"
// (the value as the spec writes it, where the label reads "scale=1") is
// refused at its claim's line, listing the variants with a did-you-mean.
func TestParams_ClaimNamesAVariant(t *testing.T) {
	t.Parallel()
	claim := func(method string) string {
		return paramsSpec(t, t.TempDir()+"/r.jsonl", "[methods.params]\nscale = [1.0, 2.5]") +
			fmt.Sprintf("\n[[claims]]\nid = \"c\"\nsource = \"s\"\nstatement = \"s\"\nrule = \"greater\"\nmetric = \"auc\"\nmethod = %q\nthan = \"output-perturbation\"\n", method)
	}
	e, err := New(parse(t, claim("fake-ext[scale=2.5]")), runner.DataOptions{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		t.Fatalf("a variant's label refused: %v", err)
	}
	e.Methods.Close()
	_, err = New(parse(t, claim("fake-ext[scale=1.0]")), runner.DataOptions{DataDir: os.Getenv("DPREPRO_DATA")})
	want := `claims[0].method: no variant "fake-ext[scale=1.0]" in this run: the variants of fake-ext are fake-ext[scale=1], fake-ext[scale=2.5]; did you mean "fake-ext[scale=1]"?`
	if err == nil || !strings.Contains(err.Error(), "small.toml:") || !strings.Contains(err.Error(), want) {
		t.Errorf("err %v, want it at the claim's line, saying %s", err, want)
	}
}
