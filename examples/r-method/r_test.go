package rmethod_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/internal/testdeps"
	"github.com/dprepro/dprepro/methods/external"
)

// pkgDir is the R package's source directory, relative to this one.
var pkgDir = filepath.Join("..", "..", "R", "dprepro")

// requireR returns the path of an Rscript that loads jsonlite, or ends
// the test: a skip naming the Debian packages to install, a failure under
// CI (CI=true), which installs them (scripts/debian-deps.sh).
func requireR(t testing.TB) string {
	t.Helper()
	rs, err := exec.LookPath("Rscript")
	if err != nil {
		testdeps.Missing(t, "no Rscript on $PATH; install Debian's r-base-core and r-cran-jsonlite (apt-get install r-base-core r-cran-jsonlite)")
	}
	if out, err := exec.Command(rs, "-e", "library(jsonlite)").CombinedOutput(); err != nil {
		testdeps.Missing(t, "Rscript cannot load jsonlite ("+strings.TrimSpace(string(out))+"); install Debian's r-cran-jsonlite")
	}
	readMethodFiles(t)
	return rs
}

// readMethodFiles reads the R files of the example and the package, so
// that go test's cache (which sees only the files the test process opens,
// not those its child processes open) reruns these tests when they change.
func readMethodFiles(t testing.TB) {
	t.Helper()
	a, _ := filepath.Glob("*.R")
	b, _ := filepath.Glob(filepath.Join(pkgDir, "R", "*.R"))
	for _, f := range append(a, b...) {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
}

// runR runs an R script (sourcing the package's files first) with args
// and returns its standard output.
func runR(t *testing.T, script string, args ...string) (string, error) {
	t.Helper()
	rs := requireR(t)
	src, err := filepath.Abs(filepath.Join(pkgDir, "R"))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "script.R")
	head := "for (f in list.files(" + strconvQuote(src) + ", full.names = TRUE)) source(f)\n"
	if err := os.WriteFile(f, []byte(head+script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(rs, append([]string{f}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), &rError{err, stderr.String()}
	}
	return string(out), nil
}

type rError struct {
	err    error
	stderr string
}

func (e *rError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.stderr) }

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func writeNPY(t *testing.T, path string, v any) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := npy.Write(f, v); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func startR(t *testing.T) (*external.Pool, map[string]string) {
	t.Helper()
	requireR(t)
	p := external.NewPool(external.Command{
		Name: "r-output-perturbation", Serves: "learner",
		Argv: []string{"Rscript", "output_perturbation.R"}, Timeout: time.Minute,
	})
	t.Cleanup(func() { p.Close() })
	// The training set of docs/worker-protocol.md's session: 4 rows with
	// ‖x‖₂ ≤ 1, labels ±1.
	dir := t.TempDir()
	data := map[string]string{"x": filepath.Join(dir, "x.npy"), "y": filepath.Join(dir, "y.npy")}
	writeNPY(t, data["x"], docX)
	writeNPY(t, data["y"], docY)
	return p, data
}

var (
	docX = mat.NewDense(4, 2, []float64{0.5, 0.5, -0.5, 0.5, 0.6, 0.1, -0.4, -0.3})
	docY = []float64{1, -1, 1, -1}
)

// fitParams are the params of a "fit" call, as learners.External sends
// them.
type fitParams struct {
	Lambda  float64 `json:"lambda"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	N       int     `json:"n"`
	D       int     `json:"d"`
	Loss    string  `json:"loss"`
	RowNorm string  `json:"row_norm"`
}

func docParams(lambda, epsilon float64) fitParams {
	return fitParams{Lambda: lambda, Epsilon: epsilon, N: 4, D: 2, Loss: "logistic", RowNorm: "l2-max"}
}

func rFit(t *testing.T, p *external.Pool, data map[string]string, seed uint64, prm fitParams) []float64 {
	t.Helper()
	rep, err := p.Call(context.Background(), external.Request{Op: "fit", Seed: seed, Params: prm, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Weights []float64 }
	if err := json.Unmarshal(rep.Output, &out); err != nil || len(out.Weights) != prm.D {
		t.Fatalf("output %s: %v", rep.Output, err)
	}
	if rep.Privacy == nil || rep.Privacy.Epsilon == nil || *rep.Privacy.Epsilon != prm.Epsilon || rep.Privacy.Delta != nil || rep.Privacy.Rho != nil {
		t.Fatalf("claimed privacy %+v, want epsilon %v alone", rep.Privacy, prm.Epsilon)
	}
	return out.Weights
}

// TestOutputPerturbation_Minimizer: without noise (ε = 1e15, so the noise
// radius has mean dΔ/ε = 2·5/1e15 = 1e-14) the R learner releases the
// minimizer of the same objective as the built-in erm.Fit (each solver
// stops at ‖∇J‖ ≤ 1e-10, within 1e-10/λ = 1e-9 of w*); a seed replays
// bit for bit; and seeds that differ only above bit 31 or 32 (which R's
// 32-bit set.seed alone would not see) give different draws.
func TestOutputPerturbation_Minimizer(t *testing.T) {
	p, data := startR(t)
	const lambda = 0.1
	exact, err := erm.Fit(erm.NewRows(docX, docY, nil), erm.Objective{Loss: erm.Logistic{}, Lambda: lambda}, erm.FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := rFit(t, p, data, 1, docParams(lambda, 1e15))
	for j := range w {
		if math.Abs(w[j]-exact.W[j]) > 1e-8 {
			t.Fatalf("noise-free weights: R %v, Go %v", w, exact.W)
		}
	}
	prm := docParams(lambda, 1)
	a := rFit(t, p, data, 77, prm)
	if b := rFit(t, p, data, 77, prm); !slices.Equal(a, b) {
		t.Fatalf("seed 77 gave %v then %v", a, b)
	}
	seen := [][]float64{a}
	for _, s := range []uint64{77 + 1<<31, 77 + 1<<32, 77 + 1<<52, 1<<53 - 1} {
		w := rFit(t, p, data, s, prm)
		for _, o := range seen {
			if slices.Equal(w, o) {
				t.Errorf("seed %d repeats the draw %v of another seed", s, w)
			}
		}
		seen = append(seen, w)
	}
}

// TestOutputPerturbation_NoiseNorm checks the R mechanism's noise against
// Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 1: b has density ∝
// exp(−ε‖b‖₂/Δ), Δ = 2/(nλ), so ‖b‖₂ ~ Gamma(d, Δ/ε) and b/‖b‖₂ is
// uniform on the sphere. On the session's training set (n = 4, d = 2) with
// λ = 0.1, ε = 1: Δ = 5, θ = Δ/ε = 5, and R = 2000 releases (seeds 1000…
// 2999) minus the noise-free minimizer give b.
//
//   - mean ‖b‖: E = dθ = 10, sd √d·θ = 7.07; tolerance 4.42 standard
//     errors, 4.42·7.07/√R = 0.70;
//   - variance of ‖b‖: dθ² = 50; the sample variance has variance
//     ≈ (μ₄ − σ⁴)/R with μ₄ = σ⁴(3 + 6/d) (Gamma excess kurtosis 6/d), so
//     its sd is σ²√((2 + 6/d)/R) = 2.5; tolerance 4.42·2.5 = 11.1;
//   - each coordinate of the direction: mean 0, sd 1/√d = 0.707 (uniform
//     on the circle, E cos² = 1/2); tolerance 4.42·0.707/√R = 0.070.
//
// z = 4.42 puts each check's two-sided false-alarm probability at 1e-5.
func TestOutputPerturbation_NoiseNorm(t *testing.T) {
	if testing.Short() {
		t.Skip("2000 calls to an R worker")
	}
	p, data := startR(t)
	const lambda, eps, n, d, R = 0.1, 1.0, 4, 2, 2000
	theta := 2 / (n * lambda) / eps
	wStar := rFit(t, p, data, 1, docParams(lambda, 1e15))
	norms := make([]float64, R)
	var dir [d]float64
	for r := range norms {
		w := rFit(t, p, data, 1000+uint64(r), docParams(lambda, eps))
		b := []float64{w[0] - wStar[0], w[1] - wStar[1]}
		norms[r] = math.Hypot(b[0], b[1])
		for j := range dir {
			dir[j] += b[j] / norms[r]
		}
	}
	mean, variance := 0.0, 0.0
	for _, v := range norms {
		mean += v
	}
	mean /= R
	for _, v := range norms {
		variance += (v - mean) * (v - mean)
	}
	variance /= R - 1
	wantMean, wantVar := d*theta, d*theta*theta
	tolMean := 4.42 * math.Sqrt(d) * theta / math.Sqrt(R)
	tolVar := 4.42 * wantVar * math.Sqrt((2+6.0/d)/R)
	tolDir := 4.42 / math.Sqrt(d) / math.Sqrt(R)
	t.Logf("‖b‖ over %d draws: mean %.4f (want %.4f ± %.4f), variance %.3f (want %.3f ± %.3f); direction mean (%.4f, %.4f) (± %.4f)",
		R, mean, wantMean, tolMean, variance, wantVar, tolVar, dir[0]/R, dir[1]/R, tolDir)
	if math.Abs(mean-wantMean) > tolMean {
		t.Errorf("mean noise norm %.4f, want dΔ/ε = %.4f ± %.4f", mean, wantMean, tolMean)
	}
	if math.Abs(variance-wantVar) > tolVar {
		t.Errorf("noise norm variance %.3f, want d(Δ/ε)² = %.3f ± %.3f", variance, wantVar, tolVar)
	}
	for j := range dir {
		if m := dir[j] / R; math.Abs(m) > tolDir {
			t.Errorf("direction coordinate %d has mean %.4f, want 0 ± %.4f", j, m, tolDir)
		}
	}
}
