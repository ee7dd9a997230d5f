package rmethod_test

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dprepro/dprepro/internal/pyenv"
	"github.com/dprepro/dprepro/results"
)

// readCSV returns a CSV file's header and records.
func readCSV(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v (%d records)", path, err, len(recs))
	}
	return recs[0], recs[1:]
}

func column(t *testing.T, head []string, name string) int {
	t.Helper()
	i := slices.Index(head, name)
	if i < 0 {
		t.Fatalf("no column %q in %v", name, head)
	}
	return i
}

// loadRunScript prints, as one JSON object, what load_run read from the
// run directory given as its argument.
const loadRunScript = `
r <- load_run(commandArgs(trailingOnly = TRUE)[1])
auc <- tapply(r$rows$auc, r$rows$method, sum)
ro <- r$ledger[r$ledger$method == "r-output-perturbation", ]
cat(json_encode(list(
  rows = I(dim(r$rows)), rows_names = I(names(r$rows)), summary = I(dim(r$summary)), summary_names = I(names(r$summary)),
  summary_mean = sum(r$summary$mean, na.rm = TRUE), auc_methods = I(names(auc)), auc_sums = I(as.vector(auc)),
  claims = if (is.null(r$claims)) NULL else I(dim(r$claims)), ledger = nrow(r$ledger),
  r_settings = I(ro$setting), r_total_epsilon = I(ro$total_epsilon), r_declared_by = I(ro$declared_by),
  r_private = I(ro$private), seed = r$manifest$seed)), "\n")
`

type loaded struct {
	Rows          []int     `json:"rows"`
	RowsNames     []string  `json:"rows_names"`
	Summary       []int     `json:"summary"`
	SummaryNames  []string  `json:"summary_names"`
	SummaryMean   float64   `json:"summary_mean"`
	AUCMethods    []string  `json:"auc_methods"`
	AUCSums       []float64 `json:"auc_sums"`
	Claims        []int     `json:"claims"`
	Ledger        int       `json:"ledger"`
	RSettings     []string  `json:"r_settings"`
	RTotalEpsilon []float64 `json:"r_total_epsilon"`
	RDeclaredBy   []string  `json:"r_declared_by"`
	RPrivate      []bool    `json:"r_private"`
	Seed          int64     `json:"seed"`
}

// TestCompare_Binary runs examples/r-method/compare.toml (quick profile)
// with the real binary: the R learner beside the built-in objective and
// output perturbation and the Python example's learner, on Magic (real
// when $DPREPRO_DATA holds it, else the labelled stand-in). It checks the
// R learner's rows and ledger entries, that its AUC agrees with the
// built-in output perturbation (the same algorithm, Chaudhuri, Monteleoni
// & Sarwate 2011, Algorithm 1), and that load_run reads the run's files as
// Go does.
func TestCompare_Binary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a spec")
	}
	requireR(t)
	path := pyenv.Require(t) // the Python example's learner runs too
	bin := filepath.Join(t.TempDir(), "dprepro")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/dprepro").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := t.TempDir()
	args := []string{"run", "compare.toml", "--profile", "quick", "--out", out, "--workers", "2"}
	if d := os.Getenv("DPREPRO_DATA"); d != "" {
		args = append(args, "--data-dir", d)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PATH="+path)
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dprepro %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	t.Logf("the run took %v", time.Since(start).Round(time.Second))
	dir := filepath.Join(out, "r-compare", "quick-seed2011")

	// Rows: one per (repetition, fold, ε) for each learner; the R
	// learner's spend what they are asked, with a finite AUC.
	head, rows := readCSV(t, filepath.Join(dir, "rows.csv"))
	iMethod, iEps, iSpent, iAUC, iStatus := column(t, head, "method"), column(t, head, "epsilon"), column(t, head, "epsilon_spent"), column(t, head, "auc"), column(t, head, "status")
	epsilons := []string{"0.05", "0.1", "0.2", "0.5", "1", "2", "5"}
	auc := map[string][]float64{} // method|ε
	aucSum := map[string]float64{}
	for _, r := range rows {
		a, err := strconv.ParseFloat(r[iAUC], 64)
		if err != nil {
			t.Fatalf("auc %q: %v", r[iAUC], err)
		}
		auc[r[iMethod]+"|"+r[iEps]] = append(auc[r[iMethod]+"|"+r[iEps]], a)
		aucSum[r[iMethod]] += a
		if r[iMethod] == "r-output-perturbation" && (r[iSpent] != r[iEps] || r[iStatus] != "ok" || !(a >= 0 && a <= 1)) {
			t.Errorf("R row %v", r)
		}
	}
	for _, e := range epsilons {
		rv, ov := auc["r-output-perturbation|"+e], auc["output-perturbation|"+e]
		if len(rv) != 20 || len(ov) != 20 {
			t.Fatalf("ε = %s: %d R rows and %d built-in rows, want 2 × 10 folds each", e, len(rv), len(ov))
		}
		// The same algorithm on the same folds with independent noise:
		// the mean AUCs agree within 4.42 standard errors of their
		// difference (the folds' shared variation makes this
		// conservative).
		mr, sr := meanSD(rv)
		mo, so := meanSD(ov)
		se := math.Sqrt((sr*sr + so*so) / 20)
		t.Logf("ε = %s: mean AUC R %.4f, built-in %.4f (SE of the difference %.4f)", e, mr, mo, se)
		if math.Abs(mr-mo) > 4.42*se {
			t.Errorf("ε = %s: mean AUC R %.4f, built-in output perturbation %.4f: more than 4.42 SE (%.4f) apart", e, mr, mo, 4.42*se)
		}
	}

	// The ledger books every ε of the R learner as its declared pure
	// guarantee; the manifest names what ran.
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m results.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var settings []string
	for _, e := range m.Ledger {
		if e.Method != "r-output-perturbation" {
			continue
		}
		settings = append(settings, e.Setting)
		want, _ := strconv.ParseFloat(strings.TrimPrefix(e.Setting, "epsilon="), 64)
		if len(e.Components) != 1 || e.Components[0].DeclaredBy != "r-output-perturbation" || e.Total.Notion != "pure-dp" ||
			float64(e.Total.Epsilon) != want || float64(e.Total.Delta) != 0 {
			t.Errorf("ledger %s: %+v", e.Setting, e)
		}
	}
	if len(settings) != len(epsilons) {
		t.Errorf("ledger settings of the R learner %v, want one per ε of %v", settings, epsilons)
	}
	var ext *results.ExternalMethod
	for i := range m.ExternalMethods {
		if m.ExternalMethods[i].Name == "r-output-perturbation" {
			ext = &m.ExternalMethods[i]
		}
	}
	if ext == nil || !strings.HasPrefix(ext.Version, "output_perturbation.R 1 (R version") || len(ext.Files) != 3 {
		t.Errorf("the manifest's external method: %+v", ext)
	}

	// load_run reads the same tables and ledger.
	outR, err := runR(t, loadRunScript, dir)
	if err != nil {
		t.Fatal(err)
	}
	var got loaded
	if err := json.Unmarshal([]byte(outR), &got); err != nil {
		t.Fatalf("%s: %v", outR, err)
	}
	sHead, sRows := readCSV(t, filepath.Join(dir, "summary.csv"))
	sumMean := 0.0
	for _, r := range sRows {
		if v, err := strconv.ParseFloat(r[column(t, sHead, "mean")], 64); err == nil && !math.IsNaN(v) {
			sumMean += v
		}
	}
	if !slices.Equal(got.Rows, []int{len(rows), len(head)}) || !slices.Equal(got.RowsNames, head) ||
		!slices.Equal(got.Summary, []int{len(sRows), len(sHead)}) || !slices.Equal(got.SummaryNames, sHead) {
		t.Errorf("load_run: rows %v %v, summary %v %v; the CSVs have %d×%d and %d×%d", got.Rows, got.RowsNames, got.Summary, got.SummaryNames, len(rows), len(head), len(sRows), len(sHead))
	}
	// R's read.csv and Go's ParseFloat may round a long decimal differently
	// in the last bit: sums agree to 1e-12 relative.
	if math.Abs(got.SummaryMean-sumMean) > 1e-12*math.Abs(sumMean) {
		t.Errorf("load_run: summary means sum to %v, Go's %v", got.SummaryMean, sumMean)
	}
	methods := make([]string, 0, len(aucSum))
	for k := range aucSum {
		methods = append(methods, k)
	}
	sort.Strings(methods)
	if !slices.Equal(got.AUCMethods, methods) {
		t.Errorf("load_run: methods %v, want %v", got.AUCMethods, methods)
	}
	for i, k := range got.AUCMethods {
		if math.Abs(got.AUCSums[i]-aucSum[k]) > 1e-12*aucSum[k] {
			t.Errorf("load_run: %s's AUCs sum to %v, Go's %v", k, got.AUCSums[i], aucSum[k])
		}
	}
	nCharges := 0
	for _, e := range m.Ledger {
		nCharges += len(e.Components)
	}
	if got.Claims != nil || got.Ledger != nCharges || !slices.Equal(got.RSettings, settings) || got.Seed != m.Seed {
		t.Errorf("load_run: claims %v, %d ledger rows (want %d), R settings %v (want %v), seed %d", got.Claims, got.Ledger, nCharges, got.RSettings, settings, got.Seed)
	}
	for i := range got.RSettings {
		if got.RDeclaredBy[i] != "r-output-perturbation" || !got.RPrivate[i] ||
			strconv.FormatFloat(got.RTotalEpsilon[i], 'g', -1, 64) != strings.TrimPrefix(got.RSettings[i], "epsilon=") {
			t.Errorf("load_run: ledger row %s: ε %v, declared by %q, private %v", got.RSettings[i], got.RTotalEpsilon[i], got.RDeclaredBy[i], got.RPrivate[i])
		}
	}
	testLoadRunFiles(t, dir)
}

// testLoadRunFiles: load_run reads claims.csv when the run has one, and a
// missing file is an error naming it.
func testLoadRunFiles(t *testing.T, dir string) {
	t.Helper()
	cp := t.TempDir()
	for _, f := range []string{"rows.csv", "summary.csv", "manifest.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cp, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cp, "claims.csv"), []byte("claim,status\na,pass\nb,fail\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runR(t, `r <- load_run(commandArgs(trailingOnly = TRUE)[1]); cat(json_encode(list(claims = I(dim(r$claims)), status = I(r$claims$status))))`, cp)
	if err != nil || out != `{"claims":[2,2],"status":["pass","fail"]}` {
		t.Errorf("load_run with claims.csv: %s %v", out, err)
	}
	for _, f := range []string{"manifest.json", "summary.csv", "rows.csv"} {
		if err := os.Remove(filepath.Join(cp, f)); err != nil {
			t.Fatal(err)
		}
		_, err := runR(t, `load_run(commandArgs(trailingOnly = TRUE)[1])`, cp)
		if want := filepath.Join(cp, f) + ": no such file"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("load_run without %s: %v, want an error saying %q", f, err, want)
		}
	}
}

func meanSD(v []float64) (float64, float64) {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)-1))
}
