package rrcount

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// registry holds the kind alone, as the command's does with the built-ins
// beside it.
func registry(t *testing.T) *runner.Registry {
	t.Helper()
	r, err := runner.NewRegistry(Kind)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// specText is a spec of the kind with table as its [rr] table.
func specText(table string) string {
	return "schema = 1\nid = \"rr-test\"\nkind = \"rr-proportion\"\nseed = 7\n\n[rr]\n" + table
}

// load parses src as the file test.toml through the kind's registry.
func load(t *testing.T, src string) (*experiments.Spec, error) {
	t.Helper()
	return experiments.Parse("test.toml", []byte(src), "", registry(t))
}

// build loads src and builds its experiment.
func build(t *testing.T, src string) *Experiment {
	t.Helper()
	s, err := load(t, src)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := registry(t).New(s, runner.DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return exp.(*Experiment)
}

// runAll runs every unit of e as the runner does (each with the Env of its
// key) and returns the rows in unit order.
func runAll(t *testing.T, e *Experiment) []results.Row {
	t.Helper()
	var rows []results.Row
	for _, u := range e.Units() {
		rs, err := e.RunUnit(context.Background(), u, runner.NewEnv(e.Spec(), u.Key(), false))
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rs...)
	}
	return rows
}

// TestEstimator_Unbiased runs R = 500 releases of n = 1000 records
// (k = 300 of them 1) at each ε and checks, at each ε, the two facts the
// figure rests on:
//
//   - unbiased: the mean of the R estimates is within z·σ/√R of p = 0.3,
//     σ = SD(n, ε). The mean of R estimates is an affine function of a sum
//     of n·R = 5·10⁵ independent coins, normal to far better than the
//     tolerance.
//   - σ is the estimator's RMSE: R·MSE/σ² (MSE = the mean squared error
//     about the true p) lies between the α/2 and 1 − α/2 quantiles of
//     χ²(R). That is exact for normal errors; at these ε the errors'
//     excess kurtosis, (1 − 6v)/(n·v) with v = e^ε/(1+e^ε)², is below
//     0.004 (ε = 2: v = 0.105), so the deviation from normality is far
//     inside the tolerance. (At ε = 5 only ~7 of 1000 reports flip and the
//     error is visibly discrete: left out here.)
//
// Each of the m = 8 checks has α = 10⁻⁵/m (Bonferroni), so any seed
// passes with probability ≥ 1 − 10⁻⁵; z = Φ⁻¹(1 − α/2) ≈ 4.9. The seed is
// fixed: no retry.
func TestEstimator_Unbiased(t *testing.T) {
	if testing.Short() {
		t.Skip("2·10⁶ randomized-response draws")
	}
	const R, n, p = 500, 1000, 0.3
	epsilons := []float64{0.1, 0.5, 1, 2}
	e := build(t, specText(fmt.Sprintf("epsilons = [0.1, 0.5, 1.0, 2.0]\nn = %d\np = %v\nreplicates = %d\n", n, p, R)))
	rows := runAll(t, e)
	m := 2 * len(epsilons)
	alpha := 1e-5 / float64(m)
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	chi := distuv.ChiSquared{K: R} // lint:nosrc (quantiles only)
	lo, hi := chi.Quantile(alpha/2), chi.Quantile(1-alpha/2)
	for _, eps := range epsilons {
		var sum, sq float64
		var count int
		for _, r := range rows {
			if r.Float("epsilon") != eps {
				continue
			}
			if got := r.Float("proportion"); got != p {
				t.Fatalf("ε=%v: proportion %v, want %v", eps, got, p)
			}
			est := r.Float("estimate")
			sum += est
			sq += (est - p) * (est - p)
			count++
		}
		if count != R {
			t.Fatalf("ε=%v: %d rows, want %d", eps, count, R)
		}
		sd := SD(n, eps)
		if mean, tol := sum/R, z*sd/math.Sqrt(R); math.Abs(mean-p) > tol {
			t.Errorf("ε=%v: mean estimate %.5f, want p = %v ± %.5f (z = %.2f, σ = %.5f, R = %d)", eps, mean, p, tol, z, sd, R)
		}
		if stat := sq / (sd * sd); stat < lo || stat > hi {
			t.Errorf("ε=%v: R·MSE/σ² = %.1f, want in the χ²(%d) interval [%.1f, %.1f] (σ = %.5f)", eps, stat, R, lo, hi, sd)
		}
	}
}

// TestSD_ClosedForm checks SD against its definition √(q(1−q)/n)/(1−2q),
// q = 1/(1+e^ε), and one value by hand: ε = ln 3 (keep 3/4, q = 1/4),
// n = 100: √(3/16/100)/(1/2) = √3/20.
func TestSD_ClosedForm(t *testing.T) {
	for _, eps := range []float64{0.01, 0.1, 1, math.Log(3), 5} {
		for _, n := range []int{1, 100, 10000} {
			q := 1 / (1 + math.Exp(eps))
			want := math.Sqrt(q*(1-q)/float64(n)) / (1 - 2*q)
			if got := SD(n, eps); math.Abs(got-want) > 1e-12*want {
				t.Errorf("SD(%d, %v) = %v, want %v", n, eps, got, want)
			}
		}
	}
	if got, want := SD(100, math.Log(3)), math.Sqrt(3)/20; math.Abs(got-want) > 1e-15 {
		t.Errorf("SD(100, ln 3) = %v, want √3/20 = %v", got, want)
	}
}

// TestLedger_Guarantee: one entry per ε, each one ε-DP release of the
// whole population (parallel composition over its records), whatever the
// number of replicates.
func TestLedger_Guarantee(t *testing.T) {
	e := build(t, specText("epsilons = [0.5, 1.0, 4.0]\nn = 10\nreplicates = 3\n"))
	ledger := e.Ledger(nil)
	if len(ledger) != 3 {
		t.Fatalf("%d ledger entries, want one per ε (3): %+v", len(ledger), ledger)
	}
	for i, eps := range []float64{0.5, 1, 4} {
		le := ledger[i]
		if le.Method != Method || le.Setting != "epsilon="+results.FormatFloat(eps) {
			t.Errorf("entry %d: method %q setting %q", i, le.Method, le.Setting)
		}
		want := results.NewTotal(privacy.EpsDP(eps, ""))
		if le.Total != want || !le.Total.Private || le.Total.Notion != string(privacy.Pure) {
			t.Errorf("ε=%v: total %+v, want pure ε-DP %+v", eps, le.Total, want)
		}
		if len(le.Components) != 1 || float64(le.Components[0].Epsilon) != eps || !strings.Contains(le.Rule, "parallel composition") {
			t.Errorf("ε=%v: components %+v, rule %q", eps, le.Components, le.Rule)
		}
	}
}

// TestTrace_Releases runs one unit with a privacy trace: every record is
// one randomized-response release (the mechanism Mechanisms declares)
// whose keep probability spends exactly ε, ln(keep/(1−keep)) = ε, and
// whose guarantee says ε-DP; the same unit again replays its row.
func TestTrace_Releases(t *testing.T) {
	e := build(t, specText("epsilons = [0.7]\nn = 50\np = 0.2\nreplicates = 2\n"))
	tr := mech.NewTrace()
	defer tr.Close()
	key := "eps=0.7/rep=2"
	rows, err := runner.RunKeyTraced(context.Background(), e, key, tr)
	if err != nil {
		t.Fatal(err)
	}
	rs := tr.Releases()
	if len(rs) != 50 {
		t.Fatalf("%d releases, want one per record (50)", len(rs))
	}
	for _, r := range rs {
		if !slices.Contains(e.Mechanisms(), r.Mechanism) || r.Unit != key || r.Data.Dataset != Dataset || r.Data.N != 1 {
			t.Fatalf("release %+v", r)
		}
		if spent := math.Log(r.Scale / (1 - r.Scale)); math.Abs(spent-0.7) > 1e-12 {
			t.Errorf("release spent ε = %v, want 0.7", spent)
		}
		if g := r.Guarantee; g.Notion != privacy.Pure || g.Epsilon != 0.7 {
			t.Errorf("release guarantee %+v, want pure 0.7", g)
		}
	}
	again, err := runner.RunKey(context.Background(), e, key)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(again) != fmt.Sprint(rows) {
		t.Errorf("the unit again: %v, first %v", again, rows)
	}
}

// TestValidate_NamesKey: each bad value is refused when the spec loads,
// naming the file, the line and the key at fault.
func TestValidate_NamesKey(t *testing.T) {
	tests := []struct {
		name, table, want string
	}{
		{"no epsilons", "n = 10\n", "test.toml:6: rr.epsilons: must not be empty"},
		{"negative epsilon", "epsilons = [1.0, -1.0]\n", "test.toml:7: rr.epsilons[1]: must be finite and > 0 (got -1)"},
		{"duplicate epsilon", "epsilons = [1.0, 1.0]\n", "test.toml:7: rr.epsilons[1]: duplicate value 1"},
		{"n", "epsilons = [1.0]\nn = 0\n", "test.toml:8: rr.n: must be >= 1 (got 0)"},
		{"p", "epsilons = [1.0]\np = 1.5\n", "test.toml:8: rr.p: must be in [0, 1] (got 1.5)"},
		{"replicates", "epsilons = [1.0]\nreplicates = 1\n", "test.toml:8: rr.replicates: must be >= 2 (got 1)"},
		{"unknown key", "epsilons = [1.0]\nrepetitions = 3\n", "test.toml:8: rr.repetitions: unknown key"},
		{"datasets", "epsilons = [1.0]\n[data]\ndatasets = [\"magic\"]\n", "test.toml:9: data.datasets: the rr-proportion kind reads no data"},
		{"limit", "epsilons = [1.0]\nn = 2000000000\n", "test.toml:8: rr.n: 2000000000 is above the limit 1000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, specText(tt.table))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestSpec_Profiles: rr.toml loads at both profiles, and the quick one is
// small (a run of a second or less).
func TestSpec_Profiles(t *testing.T) {
	r := registry(t)
	for _, tt := range []struct {
		profile       string
		n, replicates int
	}{{"paper", 10000, 200}, {"quick", 1000, 20}} {
		s, err := r.Load("../rr.toml", tt.profile)
		if err != nil {
			t.Fatal(err)
		}
		p := s.Section.(*Section).RR
		if p.N != tt.n || p.Replicates != tt.replicates || len(p.Epsilons) != 6 {
			t.Errorf("%s: %+v", tt.profile, p)
		}
	}
}
