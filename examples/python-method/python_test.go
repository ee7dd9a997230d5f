package pythonmethod_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/metrics"
	"github.com/dprepro/dprepro/core/perturb"
	"github.com/dprepro/dprepro/internal/pyenv"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/methods/learners"
)

// logisticData draws n rows of a logistic model with d−1 Gaussian features
// and a constant, every row scaled by the largest row norm (‖x‖₂ ≤ 1, as
// the harness's default preprocessing), labels ±1.
func logisticData(rng *rand.Rand, n, d int) (*mat.Dense, []float64) {
	wTrue := []float64{2, -1.5, 1, 0.5, -0.5, 0.3}[:d]
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	maxNorm := 0.0
	for i := 0; i < n; i++ {
		row := X.RawRowView(i)
		for j := 0; j < d-1; j++ {
			row[j] = rng.NormFloat64()
		}
		row[d-1] = 1
		maxNorm = math.Max(maxNorm, math.Sqrt(mat.Dot(mat.NewVecDense(d, row), mat.NewVecDense(d, row))))
		m := 0.0
		for j := range row {
			m += row[j] * wTrue[j]
		}
		y[i] = -1
		if rng.Float64() < 1/(1+math.Exp(-m)) {
			y[i] = 1
		}
	}
	X.Scale(1/maxNorm, X)
	return X, y
}

func startPython(t *testing.T) (*external.Pool, *external.Scratch) {
	t.Helper()
	t.Setenv("PATH", pyenv.Require(t))
	readMethodFiles(t)
	p := external.NewPool(external.Command{
		Name: "py-output-perturbation", Serves: "learner",
		Argv: []string{"python3", "output_perturbation.py"}, Timeout: time.Minute,
	})
	t.Cleanup(func() { p.Close() })
	sc, err := external.NewScratch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p, sc
}

// fitParams are the params of a "fit" call, as learners.External
// sends them.
type fitParams struct {
	Lambda  float64  `json:"lambda"`
	Epsilon float64  `json:"epsilon"`
	Delta   float64  `json:"delta"`
	N       int      `json:"n"`
	D       int      `json:"d"`
	Loss    string   `json:"loss"`
	HuberH  *float64 `json:"huber_h,omitempty"`
	RowNorm string   `json:"row_norm"`
}

// logistic returns p for the logistic loss on rows scaled by l2-max (the
// harness's defaults).
func (p fitParams) logistic() fitParams {
	p.Loss, p.RowNorm = "logistic", "l2-max"
	return p
}

func pyFit(t *testing.T, p *external.Pool, data map[string]string, seed uint64, prm fitParams) []float64 {
	t.Helper()
	rep, err := p.Call(context.Background(), external.Request{Op: "fit", Seed: seed, Params: prm, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Weights []float64 }
	if err := json.Unmarshal(rep.Output, &out); err != nil || len(out.Weights) != prm.D {
		t.Fatalf("output %s: %v", rep.Output, err)
	}
	if rep.Privacy == nil || rep.Privacy.Epsilon == nil || *rep.Privacy.Epsilon != prm.Epsilon {
		t.Fatalf("claimed privacy %+v, want epsilon %v", rep.Privacy, prm.Epsilon)
	}
	return out.Weights
}

// TestOutputPerturbation_SameAsBuiltin checks that the Python learner
// (output_perturbation.py, written independently with numpy) and the
// built-in output perturbation (core/perturb, Chaudhuri, Monteleoni &
// Sarwate 2011, Algorithm 1) are the same algorithm: the same minimizer
// without noise, and the same distribution of test AUC with noise.
func TestOutputPerturbation_SameAsBuiltin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Python worker and runs 2×300 fits")
	}
	p, sc := startPython(t)
	rng := rand.New(rand.NewPCG(15, 1))
	const n, nTest, d, lambda = 1000, 4000, 6, 0.01
	X, y := logisticData(rng, n, d)
	XT, yT := logisticData(rng, nTest, d)
	xPath, err := sc.Matrix("train-x", func() *mat.Dense { return X })
	if err != nil {
		t.Fatal(err)
	}
	yPath, err := sc.Vector("train-y", func() []float64 { return y })
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]string{"x": xPath, "y": yPath}
	rows := erm.NewRows(X, y, nil)

	// 1. Without noise (ε = 1e12: the noise radius has mean 2d/(nλε) ≈
	// 1e-12), both solve the same strongly convex problem: their
	// minimizers agree to the solvers' tolerance (‖∇J‖ ≤ 1e-10 each, so
	// each is within 1e-10/λ = 1e-8 of w*).
	exact, err := erm.Fit(rows, erm.Objective{Loss: erm.Logistic{}, Lambda: lambda}, erm.FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wPy := pyFit(t, p, data, 1, fitParams{Lambda: lambda, Epsilon: 1e12, N: n, D: d}.logistic())
	for j := range wPy {
		if math.Abs(wPy[j]-exact.W[j]) > 1e-7 {
			t.Fatalf("noise-free weights differ: python %v, Go %v", wPy, exact.W)
		}
	}
	// A seed replays: the same call gives the same bits.
	prm := fitParams{Lambda: lambda, Epsilon: 0.5, N: n, D: d}.logistic()
	if a, b := pyFit(t, p, data, 77, prm), pyFit(t, p, data, 77, prm); !slices.Equal(a, b) {
		t.Fatalf("seed 77 gave %v then %v", a, b)
	}

	// 2. With noise: R independent releases of each at ε = 0.5 (noise
	// radius Gamma(d, 2/(nλε)), mean 2.4, comparable to ‖w*‖, so the AUC
	// spreads widely). The two-sample Kolmogorov–Smirnov statistic of
	// equal continuous distributions exceeds c(a)·√(2/R) with probability
	// about a, c(a) = √(−ln(a/2)/2); a = 1e-5 gives c = 2.47 (the house
	// rule: a correct pair passes with probability ≥ 1 − 1e-5). The means
	// must agree within 4.42 standard errors of their difference.
	const R = 300
	scores := make([]float64, nTest)
	auc := func(w []float64) float64 {
		mat.NewVecDense(nTest, scores).MulVec(XT, mat.NewVecDense(d, w))
		return metrics.AUC(scores, yT)
	}
	var goAUC, pyAUC []float64
	for r := 0; r < R; r++ {
		res, _, err := perturb.OutputPerturbation(rand.New(rand.NewPCG(1000+uint64(r), 2)), rows,
			perturb.OutPertOptions{Epsilon: prm.Epsilon, Lambda: lambda}, erm.FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		goAUC = append(goAUC, auc(res.W))
		pyAUC = append(pyAUC, auc(pyFit(t, p, data, 5000+uint64(r), prm)))
	}
	ks := ksStatistic(goAUC, pyAUC)
	crit := math.Sqrt(-math.Log(1e-5/2)/2) * math.Sqrt(2.0/R)
	mg, sg := metrics.MeanSD(goAUC)
	mp, sp := metrics.MeanSD(pyAUC)
	se := math.Sqrt((sg*sg + sp*sp) / R)
	t.Logf("AUC at ε = %v: Go %.4f ± %.4f, Python %.4f ± %.4f; KS D = %.3f (critical %.3f)", prm.Epsilon, mg, sg, mp, sp, ks, crit)
	if ks > crit {
		t.Errorf("KS statistic %.3f > %.3f: the AUC distributions differ", ks, crit)
	}
	if math.Abs(mg-mp) > 4.42*se {
		t.Errorf("mean AUC %.4f (Go) vs %.4f (Python) differ by more than 4.42 SE = %.4f", mg, mp, 4.42*se)
	}
	if sg < 0.01 {
		t.Errorf("AUC sd %.4f: the noise is too small for the comparison to mean anything", sg)
	}
}

// ksStatistic is the two-sample Kolmogorov–Smirnov statistic
// sup |F_a − F_b|.
func ksStatistic(a, b []float64) float64 {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Float64s(a)
	sort.Float64s(b)
	var i, j int
	d := 0.0
	for i < len(a) && j < len(b) {
		x := math.Min(a[i], b[j])
		for i < len(a) && a[i] == x {
			i++
		}
		for j < len(b) && b[j] == x {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return d
}

// BenchmarkPythonCall measures one "fit" call of the Python learner on a
// 4×2 training set, whose Newton fit and noise take microseconds: the time
// is the protocol's round trip from Go to Python and back (JSON in both
// languages, the pipes) plus numpy's fixed costs, an upper bound on the
// protocol overhead a Python method pays per call.
func BenchmarkPythonCall(b *testing.B) {
	b.Setenv("PATH", pyenv.Require(b))
	p := external.NewPool(external.Command{
		Name: "py-output-perturbation", Serves: "learner",
		Argv: []string{"python3", "output_perturbation.py"}, Timeout: time.Minute,
	})
	defer p.Close()
	sc, err := external.NewScratch(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	xPath, _ := sc.Matrix("x", func() *mat.Dense { return mat.NewDense(4, 2, []float64{0.5, 0.5, -0.5, 0.5, 0.6, 0.1, -0.4, -0.3}) })
	yPath, _ := sc.Vector("y", func() []float64 { return []float64{1, -1, 1, -1} })
	req := external.Request{Op: "fit", Seed: 1, Params: fitParams{Lambda: 0.1, Epsilon: 1, N: 4, D: 2}.logistic(), Data: map[string]string{"x": xPath, "y": yPath}}
	if _, err := p.Call(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Call(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOutputPerturbation_StabilityOp: the worker's "stability" op answers
// the constants of Chaudhuri & Vinterbo 2013's Theorem 4 for output
// perturbation — β₁ = 2/λ_min, β₂ = 1, as the built-in learner states
// them — with no privacy claim, and refuses a loss its constants are not
// for.
func TestOutputPerturbation_StabilityOp(t *testing.T) {
	p, _ := startPython(t)
	lambdas := []float64{0.5, 0.01, 1}
	rep, err := p.Call(context.Background(), external.Request{Op: "stability", Params: map[string]any{
		"lambdas": lambdas, "n": 1000, "alpha1": 0.5, "delta": 0.01, "loss": "logistic", "row_norm": "l2-max"}})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Beta1, Beta2 float64 }
	if err := json.Unmarshal(rep.Output, &out); err != nil {
		t.Fatal(err)
	}
	b1, b2, err := learners.OutputPerturbation{}.StabilityConstants(context.Background(), lambdas, 1000, 0.5, 0.01)
	if err != nil || out.Beta1 != b1 || out.Beta2 != b2 || rep.Privacy != nil {
		t.Errorf("stability op: β₁ %v β₂ %v privacy %+v; the built-in learner's: %v %v (%v)", out.Beta1, out.Beta2, rep.Privacy, b1, b2, err)
	}
	_, err = p.Call(context.Background(), external.Request{Op: "stability", Params: map[string]any{
		"lambdas": lambdas, "n": 1000, "alpha1": 0.5, "delta": 0.01, "loss": "huber", "row_norm": "l2-max"}})
	if err == nil || !strings.Contains(err.Error(), "logistic loss") {
		t.Errorf("huber: err %v, want the op refused", err)
	}
}
