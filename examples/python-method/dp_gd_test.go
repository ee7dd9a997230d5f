package pythonmethod_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/internal/pyenv"
	"github.com/dprepro/dprepro/methods/external"
)

// startDPGD starts dp_gd.py (the DP gradient-descent learner) as
// startPython starts output_perturbation.py.
func startDPGD(t *testing.T) (*external.Pool, *external.Scratch) {
	t.Helper()
	t.Setenv("PATH", pyenv.Require(t))
	readMethodFiles(t)
	p := external.NewPool(external.Command{
		Name: "py-dp-gd", Serves: "learner",
		Argv: []string{"python3", "dp_gd.py"}, Timeout: time.Minute,
	})
	t.Cleanup(func() { p.Close() })
	sc, err := external.NewScratch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p, sc
}

// dpgdData writes X and y to sc under key and returns the call's data.
func dpgdData(t *testing.T, sc *external.Scratch, key string, X *mat.Dense, y []float64) map[string]string {
	t.Helper()
	xPath, err := sc.Matrix(key+"-x", func() *mat.Dense { return X })
	if err != nil {
		t.Fatal(err)
	}
	yPath, err := sc.Vector(key+"-y", func() []float64 { return y })
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"x": xPath, "y": yPath}
}

// dpgdSetting is the worker's declared parameters (steps, clip, lr).
type dpgdSetting struct {
	steps    int
	clip, lr float64
	lambda   float64
	eps, dlt float64
	n, d     int
	loss     string
}

// dpgdCall makes one "fit" call, the method's parameters carried as the
// harness carries them (external.MethodParams), and returns the reply.
func dpgdCall(p *external.Pool, data map[string]string, seed uint64, s dpgdSetting) (external.Reply, error) {
	prm := fitParams{Lambda: s.lambda, Epsilon: s.eps, Delta: s.dlt, N: s.n, D: s.d}.logistic()
	if s.loss != "" {
		prm.Loss = s.loss
	}
	params, err := external.MethodParams(prm, map[string]any{"steps": s.steps, "clip": s.clip, "lr": s.lr})
	if err != nil {
		return external.Reply{}, err
	}
	return p.Call(context.Background(), external.Request{Op: "fit", Seed: seed, Params: params, Data: data})
}

// dpgdFit is dpgdCall for a call that must succeed: it checks that the
// reply claims exactly (ε, δ) of the call and returns the weights and
// clip_fraction.
func dpgdFit(t *testing.T, p *external.Pool, data map[string]string, seed uint64, s dpgdSetting) ([]float64, float64) {
	t.Helper()
	rep, err := dpgdCall(p, data, seed, s)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Weights     []float64 `json:"weights"`
		Diagnostics struct {
			ClipFraction *float64 `json:"clip_fraction"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(rep.Output, &out); err != nil || len(out.Weights) != s.d || out.Diagnostics.ClipFraction == nil {
		t.Fatalf("output %s: %v", rep.Output, err)
	}
	c := rep.Privacy
	if c == nil || c.Epsilon == nil || c.Delta == nil || c.Rho != nil || *c.Epsilon != s.eps || *c.Delta != s.dlt {
		t.Fatalf("claimed privacy %s, want exactly {epsilon: %v, delta: %v}", claimString(c), s.eps, s.dlt)
	}
	return out.Weights, *out.Diagnostics.ClipFraction
}

func claimString(c *external.Claim) string {
	if c == nil {
		return "<none>"
	}
	f := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("{epsilon: %s, delta: %s, rho: %s}", f(c.Epsilon), f(c.Delta), f(c.Rho))
}

// gdSigma is the per-step noise sd of T Gaussian steps on an average of
// L2 sensitivity Δ = 2C/n that together are (ε, δ)-DP, derived here
// independently of dp_gd.py's closed form: one Gaussian step with sd σ is
// Δ²/(2σ²)-zCDP (Bun & Steinke 2016, Prop. 1.6), T steps compose to
// ρ = TΔ²/(2σ²) (Lemma 1.7), which is (ρ + 2√(ρ ln(1/δ)), δ)-DP (Prop.
// 1.3). The ρ giving exactly ε is found by bisection on that increasing
// function (not through the quadratic's root, the worker's route), then
// σ = Δ·√(T/(2ρ)).
func gdSigma(eps, delta float64, steps int, clip float64, n int) float64 {
	L := math.Log(1 / delta)
	epsOf := func(rho float64) float64 { return rho + 2*math.Sqrt(rho*L) }
	lo, hi := 0.0, eps // epsOf(eps) ≥ eps
	for i := 0; i < 200 && hi-lo > 1e-15*hi; i++ {
		mid := (lo + hi) / 2
		if epsOf(mid) < eps {
			lo = mid
		} else {
			hi = mid
		}
	}
	rho := (lo + hi) / 2
	Delta := 2 * clip / float64(n)
	return Delta * math.Sqrt(float64(steps)/(2*rho))
}

// TestDPGD_NoiseScale checks dp_gd.py's Gaussian noise against the
// calibration derived independently (gdSigma): on rows x = 0 every
// per-record gradient is 0, so with λ = 0 and lr = 1 the release is
// w_T = −(sum of T noise vectors), each N(0, σ_T² I) with σ_T = σ₁√T:
// Var w_T = T·σ_T² = T²σ₁². The sample variance of N = 40·50 = 2000
// coordinates (independent across calls and coordinates) must match
// within 5 standard errors, SE = Var·√(2/(N−1)) (normal data); its mean
// within 5·√(Var/N). T = 4 also checks that method_params reach the
// worker (its default is 50 steps). Each reply claims exactly (ε, δ) and
// clips nothing.
func TestDPGD_NoiseScale(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Python worker and runs 80 fits")
	}
	p, sc := startDPGD(t)
	const n, d, calls = 1000, 50, 40
	y := make([]float64, n)
	for i := range y {
		y[i] = 1 - 2*float64(i%2)
	}
	data := dpgdData(t, sc, "zeros", mat.NewDense(n, d, nil), y)
	const eps, delta, clip = 1.0, 1e-5, 1.0
	sigma1 := gdSigma(eps, delta, 1, clip, n)
	// The zCDP conversion holds at the ρ found: ε(ρ) = ε.
	if rho := math.Pow(2*clip/n/sigma1, 2) / 2; math.Abs(rho+2*math.Sqrt(rho*math.Log(1/delta))-eps) > 1e-12 {
		t.Fatalf("σ₁ = %v gives ρ = %v, which is not (%v, %v)-DP exactly", sigma1, rho, eps, delta)
	}
	for _, steps := range []int{1, 4} {
		s := dpgdSetting{steps: steps, clip: clip, lr: 1, lambda: 0, eps: eps, dlt: delta, n: n, d: d}
		var ws []float64
		for c := 0; c < calls; c++ {
			w, frac := dpgdFit(t, p, data, uint64(1000*steps+c), s)
			if frac != 0 {
				t.Fatalf("steps %d: clip_fraction %v on zero gradients, want 0", steps, frac)
			}
			ws = append(ws, w...)
		}
		N := float64(len(ws))
		mean := 0.0
		for _, v := range ws {
			mean += v
		}
		mean /= N
		ss := 0.0
		for _, v := range ws {
			ss += (v - mean) * (v - mean)
		}
		variance := ss / (N - 1)
		want := float64(steps*steps) * sigma1 * sigma1
		se := want * math.Sqrt(2/(N-1))
		t.Logf("steps %d: %v samples, variance %.6g, theory T²σ₁² = %.6g (σ₁ = %.6g), ratio %.4f, z = %+.2f; mean %.3g (z = %+.2f)",
			steps, N, variance, want, sigma1, variance/want, (variance-want)/se, mean, mean/math.Sqrt(want/N))
		if math.Abs(variance-want) > 5*se {
			t.Errorf("steps %d: sample variance %.6g, want %.6g ± 5·%.3g", steps, variance, want, se)
		}
		if math.Abs(mean) > 5*math.Sqrt(want/N) {
			t.Errorf("steps %d: sample mean %.3g, want 0 ± 5·%.3g", steps, mean, math.Sqrt(want/N))
		}
	}
}

// gdReplay recomputes dp_gd.py's iterations without noise, as its
// docstring defines them: from w = 0, T times, the per-record gradient
// −yᵢ·s(−yᵢ xᵢ·w)·xᵢ (s the logistic function) clipped to L2 norm ≤ C,
// averaged, and w ← w − lr·(g + λw). It returns w_T and the fraction of
// per-record gradients clipped, averaged over the steps.
func gdReplay(X *mat.Dense, y []float64, s dpgdSetting) ([]float64, float64) {
	n, d := X.Dims()
	w := make([]float64, d)
	g := make([]float64, d)
	frac := 0.0
	for step := 0; step < s.steps; step++ {
		clear(g)
		clipped := 0
		for i := 0; i < n; i++ {
			x := X.RawRowView(i)
			m, nx := 0.0, 0.0
			for j := range x {
				m += x[j] * w[j]
				nx += x[j] * x[j]
			}
			c := -y[i] / (1 + math.Exp(y[i]*m)) // −y s(−y m)
			if norm := math.Abs(c) * math.Sqrt(nx); norm > s.clip {
				c *= s.clip / norm
				clipped++
			}
			for j := range x {
				g[j] += c * x[j] / float64(n)
			}
		}
		for j := range w {
			w[j] -= s.lr * (g[j] + s.lambda*w[j])
		}
		frac += float64(clipped) / float64(n)
	}
	return w, frac / float64(s.steps)
}

// TestDPGD_Clipping checks dp_gd.py's iterations, clipping and
// clip_fraction against gdReplay at an ε so large that the noise is far
// below the tolerance: the release differs from the noise-free w_T by
// about √T·lr·σ per coordinate (more only through the map's Lipschitz
// constant, 1 + lr·max‖xᵢ‖²/4 + lr·λ per step). "unit rows": the brief's
// case, ‖xᵢ‖ = 1, C = 0.05, every gradient clipped. "mixed": row norms in
// (0, 2), C = 0.3, lr = 2, λ = 0.1, labels from a linear model: some
// gradients clipped and some not (the margins move with w); it also
// checks that lr and λ are the call's.
func TestDPGD_Clipping(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Python worker")
	}
	p, sc := startDPGD(t)
	rng := rand.New(rand.NewPCG(31, 7))
	const tol = 1e-6

	unitX := func(n, d int, norm func() float64) *mat.Dense {
		X := mat.NewDense(n, d, nil)
		for i := 0; i < n; i++ {
			row := X.RawRowView(i)
			ss := 0.0
			for j := range row {
				row[j] = rng.NormFloat64()
				ss += row[j] * row[j]
			}
			r := norm() / math.Sqrt(ss)
			for j := range row {
				row[j] *= r
			}
		}
		return X
	}
	labels := func(X *mat.Dense, wTrue []float64) []float64 {
		n, _ := X.Dims()
		y := make([]float64, n)
		for i := range y {
			m := mat.Dot(mat.NewVecDense(len(wTrue), X.RawRowView(i)), mat.NewVecDense(len(wTrue), wTrue))
			y[i] = -1
			if rng.Float64() < 1/(1+math.Exp(-m)) {
				y[i] = 1
			}
		}
		return y
	}

	for _, c := range []struct {
		name string
		X    *mat.Dense
		wTru []float64
		s    dpgdSetting
		// fracRange bounds the expected clip_fraction (a sanity check
		// that the case exercises what it says).
		fracLo, fracHi float64
	}{
		{"unit rows", unitX(500, 5, func() float64 { return 1 }), []float64{1, -1, 0.5, 0, 2},
			dpgdSetting{steps: 3, clip: 0.05, lr: 1, lambda: 0, eps: 1e9, dlt: 1e-5, n: 500, d: 5}, 1, 1},
		{"mixed", unitX(500, 5, func() float64 { return 2 * rng.Float64() }), []float64{3, -2, 1, 0, 4},
			dpgdSetting{steps: 3, clip: 0.3, lr: 2, lambda: 0.1, eps: 1e12, dlt: 1e-5, n: 500, d: 5}, 0.2, 0.9},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := labels(c.X, c.wTru)
			data := dpgdData(t, sc, strings.ReplaceAll(c.name, " ", "-"), c.X, y)
			sigma := gdSigma(c.s.eps, c.s.dlt, c.s.steps, c.s.clip, c.s.n)
			noise := math.Sqrt(float64(c.s.steps)) * c.s.lr * sigma
			if sigma >= 1e-6 || 10*noise > tol {
				t.Fatalf("σ = %.3g, noise in w ≈ %.3g: not negligible against %v", sigma, noise, tol)
			}
			wGo, fracGo := gdReplay(c.X, y, c.s)
			wPy, fracPy := dpgdFit(t, p, data, 9, c.s)
			maxErr := 0.0
			for j := range wGo {
				maxErr = math.Max(maxErr, math.Abs(wPy[j]-wGo[j]))
			}
			t.Logf("σ = %.3g; max |w_py − w_go| = %.3g; clip_fraction python %v, Go %v", sigma, maxErr, fracPy, fracGo)
			if maxErr > tol {
				t.Errorf("weights: python %v, Go replay %v (max error %.3g > %v)", wPy, wGo, maxErr, tol)
			}
			if math.Abs(fracPy-fracGo) > 1e-12 {
				t.Errorf("clip_fraction %v, Go replay %v", fracPy, fracGo)
			}
			if fracGo < c.fracLo || fracGo > c.fracHi {
				t.Errorf("clip_fraction %v outside [%v, %v]: the case does not test what it means to", fracGo, c.fracLo, c.fracHi)
			}
		})
	}
}

// TestDPGD_Refuses checks that dp_gd.py refuses δ = 0 (Gaussian noise
// gives no pure ε-DP) and a loss other than logistic with an error reply,
// and keeps serving.
func TestDPGD_Refuses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Python worker")
	}
	p, sc := startDPGD(t)
	data := dpgdData(t, sc, "small", mat.NewDense(4, 2, []float64{0.5, 0.5, -0.5, 0.5, 0.6, 0.1, -0.4, -0.3}), []float64{1, -1, 1, -1})
	good := dpgdSetting{steps: 2, clip: 1, lr: 1, lambda: 0.1, eps: 1, dlt: 1e-5, n: 4, d: 2}
	noDelta := good
	noDelta.dlt = 0
	huber := good
	huber.loss = "huber"
	for _, c := range []struct {
		name string
		s    dpgdSetting
		want string
	}{
		{"delta 0", noDelta, "delta > 0"},
		{"huber loss", huber, "logistic"},
	} {
		_, err := dpgdCall(p, data, 1, c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want an error containing %q", c.name, err, c.want)
		}
	}
	dpgdFit(t, p, data, 2, good) // still serving
}
