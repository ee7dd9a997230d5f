package expostsweep

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// logisticSpec is a fast logistic sweep on a 3,000-row subsample of Magic
// (real when $DPREPRO_DATA holds it, else the labelled stand-in).
const logisticSpec = `schema = 1
id = "af-logistic"
kind = "expost-sweep"
seed = 9

[data]
datasets = ["magic"]
column_scale = "none"
intercept = false
row_norm = "l1-max"
subsample = 3000

[accuracy_first]
task = "logistic"
generator = "output"
calibration = "CAL"
lambda = 0.01
gamma = 0.1
steps = 200
alphas = [0.05, 0.1]
trials = 5
methods = ["noise-reduction", "doubling", "theory"]

[output]
bootstrap = 200
`

// ridgeSpec exercises covariance perturbation on the Twitter stand-in.
const ridgeSpec = `schema = 1
id = "af-ridge"
kind = "expost-sweep"
seed = 9

[data]
datasets = ["twitter"]
synthetic = "always"
column_scale = "none"
intercept = false
row_norm = "l1-max"
target_log1p = true
target_scale = "maxabs"
subsample = 4000

[accuracy_first]
task = "ridge"
generator = "covariance"
calibration = "CAL"
lambda = 0.005
gamma = 0.1
steps = 300
alphas = [0.05, 0.2]
trials = 4
methods = ["noise-reduction", "doubling", "theory", "theory-output"]

[output]
bootstrap = 200
`

func load(t *testing.T, src, cal string) *Experiment {
	t.Helper()
	s, err := experiments.Parse("spec.toml", []byte(strings.Replace(src, "CAL", cal, 1)), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func run(t *testing.T, e *Experiment, workers int) (rows, summary []byte, dir string) {
	t.Helper()
	dir, err := runner.Run(context.Background(), e, runner.Options{OutDir: t.TempDir(), Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	rows, err = os.ReadFile(filepath.Join(dir, "rows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	summary, err = os.ReadFile(filepath.Join(dir, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return rows, summary, dir
}

// checkRows checks the accounting invariants of every trial.
func checkRows(t *testing.T, e *Experiment, rows []results.Row) {
	t.Helper()
	af := e.spec.AccuracyFirst
	for _, r := range rows {
		m := r["method"]
		hyp, test, total := r.Float("hypothesis_eps"), r.Float("test_eps"), r.Float("expost_eps")
		single := r.Float("test_eps_single")
		if r["success_rate"] == "0" {
			if !math.IsInf(total, 1) || r.Float("excess_risk") != 0 {
				t.Errorf("%s: failed trial with ε = %v, excess %v", r["unit"], total, r.Float("excess_risk"))
			}
			continue
		}
		if math.Abs(total-(hyp+test)) > 1e-12*total {
			t.Errorf("%s: expost %v ≠ %v + %v", r["unit"], total, hyp, test)
		}
		if got := r.Float("expost_risk_factor"); math.Abs(got-math.Exp(total)) > 1e-12*got {
			t.Errorf("%s: risk factor %v ≠ e^%v", r["unit"], got, total)
		}
		if m == "noise-reduction" || m == "doubling" {
			want := single
			if af.Calibration == "authors-code" {
				want = 2 * single // the authors' reporting convention
			}
			if test != want {
				t.Errorf("%s: reported test ε %v, single %v (%s)", r["unit"], test, single, af.Calibration)
			}
		}
		switch m {
		case "noise-reduction":
			if hyp > r.Float("eps_max")*(1+1e-12) || hyp < r.Float("eps_min")*(1-1e-12) {
				t.Errorf("%s: hypothesis ε %v outside the grid [%v, %v]", r["unit"], hyp, r.Float("eps_min"), r.Float("eps_max"))
			}
			if r["stop"] != r["tested"] {
				t.Errorf("%s: stopped at %s after %s tests", r["unit"], r["stop"], r["tested"])
			}
			fallthrough
		case "doubling":
			if r.Float("norm") > r.Float("norm_bound")*(1+1e-9) {
				t.Errorf("%s: ‖θ‖ = %v > %v", r["unit"], r.Float("norm"), r.Float("norm_bound"))
			}
		case "theory", "theory-output":
			if test != 0 || hyp != r.Float("theory_eps") {
				t.Errorf("%s: theory ε %v + %v, want %v + 0", r["unit"], hyp, test, r.Float("theory_eps"))
			}
		}
	}
}

func parseRows(t *testing.T, b []byte) []results.Row {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	head := strings.Split(lines[0], ",")
	var out []results.Row
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != len(head) {
			t.Fatalf("row has %d fields, header %d: %q", len(f), len(head), l)
		}
		r := results.Row{}
		for i, h := range head {
			r[h] = f[i]
		}
		out = append(out, r)
	}
	return out
}

// TestLogisticSweep runs the logistic sweep under both calibrations: the
// output is identical for 1 and 3 workers, the accounting invariants hold,
// noise reduction (authors' calibration) beats the theory approach and the
// figures are written.
func TestLogisticSweep(t *testing.T) {
	for _, cal := range []string{"authors-code", "paper"} {
		t.Run(cal, func(t *testing.T) {
			e := load(t, logisticSpec, cal)
			rows1, sum1, dir := run(t, e, 1)
			rows3, sum3, _ := run(t, load(t, logisticSpec, cal), 3)
			if !bytes.Equal(rows1, rows3) || !bytes.Equal(sum1, sum3) {
				t.Fatal("outputs differ between 1 and 3 workers")
			}
			rows := parseRows(t, rows1)
			if len(rows) != 2*5*3 {
				t.Fatalf("%d rows", len(rows))
			}
			checkRows(t, e, rows)
			mean := map[string]float64{}
			n := map[string]int{}
			for _, r := range rows {
				if r["success_rate"] == "1" {
					mean[r["method"]+r["alpha"]] += r.Float("expost_eps")
					n[r["method"]+r["alpha"]]++
				}
			}
			for _, a := range []string{"0.05", "0.1"} {
				nr := mean["noise-reduction"+a] / float64(n["noise-reduction"+a])
				th := mean["theory"+a] / float64(n["theory"+a])
				// With the paper's constants the test alone costs about
				// 64·M·ln(2T/γ)·λ/(2√2·p) times the theory ε: more than 1 for
				// Magic's p = 10 (it is 0.5 for KDD's p = 38), so only the
				// authors' calibration must win here.
				if !(nr < th) && cal == "authors-code" {
					t.Errorf("α = %s: noise reduction ε %v not below theory %v", a, nr, th)
				}
			}
			for _, f := range []string{"fig1-expost", "fig2-accuracy", "fig3b-privacy-breakdown", "fig4b-norms", "risk-factor-b"} {
				if _, err := os.Stat(filepath.Join(dir, "figures", f+".png")); err != nil {
					t.Errorf("figure %s: %v", f, err)
				}
			}
		})
	}
}

// TestRidgeSweep runs covariance perturbation on the Twitter stand-in under
// both calibrations (the paper's exact trust-region hypotheses and the
// authors' solve-and-scale ones).
func TestRidgeSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("synthesizes the 583,250-row Twitter stand-in")
	}
	for _, cal := range []string{"authors-code", "paper"} {
		t.Run(cal, func(t *testing.T) {
			e := load(t, ridgeSpec, cal)
			b, _, dir := run(t, e, 2)
			rows := parseRows(t, b)
			if len(rows) != 2*4*4 {
				t.Fatalf("%d rows", len(rows))
			}
			checkRows(t, e, rows)
			succ := 0
			for _, r := range rows {
				if r["data_source"] != "synthetic" {
					t.Fatalf("twitter stand-in labelled %q", r["data_source"])
				}
				if r["method"] == "noise-reduction" && r["success_rate"] == "1" {
					succ++
					if r.Float("excess_risk") > r.Float("alpha") {
						t.Errorf("%s: excess %v > α", r["unit"], r.Float("excess_risk"))
					}
				}
			}
			if succ < 7 {
				t.Errorf("noise reduction succeeded in %d of 8 trials", succ)
			}
			if _, err := os.Stat(filepath.Join(dir, "figures", "fig3a-privacy-breakdown.svg")); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSummary_RiskFactorOfMean: summary.csv's expost_risk_factor is
// e^(mean expost_eps) of its cell with the exponentiated CI (the paper's
// reporting, Section 4), not the mean of the rows' per-trial e^ε.
func TestSummary_RiskFactorOfMean(t *testing.T) {
	e := load(t, logisticSpec, "paper")
	_, _, dir := run(t, e, 2)
	sum, err := results.ReadSummaryCSV(filepath.Join(dir, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	type cell struct {
		ds, m string
		x     float64
	}
	eps := map[cell]results.SummaryRow{}
	for _, s := range sum {
		if s.Metric == "expost_eps" {
			eps[cell{s.Dataset, s.Method, s.X}] = s
		}
	}
	checked := 0
	for _, s := range sum {
		if s.Metric != "expost_risk_factor" {
			continue
		}
		e := eps[cell{s.Dataset, s.Method, s.X}]
		if s.Mean != math.Exp(e.Mean) || s.CILow != math.Exp(e.CILow) || s.CIHigh != math.Exp(e.CIHigh) || !math.IsNaN(s.SD) || s.N != e.N {
			t.Errorf("%s α=%v: risk factor %v [%v, %v] sd %v n %d, want e^(%v [%v, %v]) n %d", s.Method, s.X, s.Mean, s.CILow, s.CIHigh, s.SD, s.N, e.Mean, e.CILow, e.CIHigh, e.N)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no expost_risk_factor rows in the summary")
	}
}
