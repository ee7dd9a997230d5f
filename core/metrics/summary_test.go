package metrics

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestMeanSD(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		x        []float64
		wantMean float64
		wantSD   float64
	}{
		// Σ(x−2.5)² = 5, /(n−1) = 5/3, √ = 1.2909944487358056.
		{"hand", []float64{1, 2, 3, 4}, 2.5, math.Sqrt(5.0 / 3)},
		{"constant", []float64{7, 7, 7}, 7, 0},
		{"single", []float64{3}, 3, math.NaN()},
		{"empty", nil, math.NaN(), math.NaN()},
		{"NaN", []float64{1, math.NaN(), 3}, math.NaN(), math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, sd := MeanSD(tt.x)
			if !sameFloat(m, tt.wantMean, 1e-15) || !sameFloat(sd, tt.wantSD, 1e-15) {
				t.Errorf("MeanSD = (%v, %v), want (%v, %v)", m, sd, tt.wantMean, tt.wantSD)
			}
		})
	}
}

func TestMeanCI_SpecialCases(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	tests := []struct {
		name                  string
		x                     []float64
		wantMean, wantLo, wHi float64
	}{
		{"empty", nil, nan, nan, nan},
		{"NaN", []float64{1, nan}, nan, nan, nan},
		{"single", []float64{4}, 4, 4, 4},
		{"constant", []float64{2, 2, 2, 2}, 2, 2, 2},
		{"+Inf", []float64{1, math.Inf(1)}, math.Inf(1), nan, nan},
		{"±Inf", []float64{math.Inf(-1), math.Inf(1)}, nan, nan, nan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, lo, hi := MeanCI(rand.New(rand.NewPCG(1, 1)), tt.x, 0.95, 100)
			if !sameFloat(m, tt.wantMean, 0) || !sameFloat(lo, tt.wantLo, 0) || !sameFloat(hi, tt.wHi, 0) {
				t.Errorf("MeanCI = (%v, %v, %v), want (%v, %v, %v)", m, lo, hi, tt.wantMean, tt.wantLo, tt.wHi)
			}
		})
	}
}

func TestMeanCI_Panics(t *testing.T) {
	t.Parallel()
	x := []float64{1, 2}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, level := range []float64{0, 1, -0.5, math.NaN()} {
		assertPanics(t, func() { MeanCI(rng, x, level, 10) })
	}
	assertPanics(t, func() { MeanCI(rng, x, 0.95, 0) })
}

func TestMeanCI_Deterministic(t *testing.T) {
	t.Parallel()
	x := normalSample(rand.New(rand.NewPCG(5, 6)), 50)
	m1, lo1, hi1 := MeanCI(rand.New(rand.NewChaCha8([32]byte{1})), x, 0.95, 500)
	m2, lo2, hi2 := MeanCI(rand.New(rand.NewChaCha8([32]byte{1})), x, 0.95, 500)
	if m1 != m2 || lo1 != lo2 || hi1 != hi2 {
		t.Errorf("same seed gave (%v, %v, %v) and (%v, %v, %v)", m1, lo1, hi1, m2, lo2, hi2)
	}
	if !(lo1 < m1 && m1 < hi1) {
		t.Errorf("interval [%v, %v] does not bracket the mean %v", lo1, hi1, m1)
	}
}

// Metamorphic: with the same replicates (same seed), a higher level picks
// order statistics further out, so the intervals are nested.
func TestMeanCI_HigherLevelWider(t *testing.T) {
	t.Parallel()
	x := normalSample(rand.New(rand.NewPCG(7, 8)), 40)
	_, lo90, hi90 := MeanCI(rand.New(rand.NewPCG(9, 9)), x, 0.90, 1000)
	_, lo99, hi99 := MeanCI(rand.New(rand.NewPCG(9, 9)), x, 0.99, 1000)
	if !(lo99 < lo90 && hi90 < hi99) {
		t.Errorf("99%% CI [%v, %v] not wider than 90%% CI [%v, %v]", lo99, hi99, lo90, hi90)
	}
}

func TestOrderIndex(t *testing.T) {
	t.Parallel()
	alpha := 1 - 0.95 // 0.05000000000000004 in float64
	tests := []struct {
		b    int
		p    float64
		want int
	}{
		// Efron & Tibshirani §13.3: B = 2000, α/2 = 0.025 → 50th and 1950th.
		{2000, alpha / 2, 49},
		{2000, 1 - alpha/2, 1949},
		{1000, 0.025, 24},
		// Non-integer B·p rounds up: 0.025·10 = 0.25 → 1st; 0.975·10 = 9.75 → 10th.
		{10, 0.025, 0},
		{10, 0.975, 9},
		{1, 0.025, 0},
		{1, 0.975, 0},
	}
	for _, tt := range tests {
		if got := orderIndex(tt.b, tt.p); got != tt.want {
			t.Errorf("orderIndex(%d, %v) = %d, want %d", tt.b, tt.p, got, tt.want)
		}
	}
}

// For normal data the percentile interval is close to the normal-theory
// interval built from the plug-in standard error.
//
// Tolerance. Let σ_b = s·√((n−1)/n)/√n be the standard deviation of the
// ideal (B = ∞) bootstrap distribution of the mean (plug-in variance, divisor
// n), and z = Φ⁻¹(0.975) = 1.959964. Compare each endpoint with
// mean ± z·σ_b. Error sources, in units of σ_b:
//
//   - Monte Carlo error of the B-sample quantile: sd √(p(1−p)/B)/f(q_p) with
//     f(q_p) = φ(z)/σ_b = 0.058441/σ_b; for p = 0.025, B = 2000 this is
//     0.0034910/0.058441 = 0.05973. Take z' = 4.42 standard deviations:
//     0.2640.
//   - Skewness of the ideal bootstrap distribution, γ̂/√n, with γ̂ the sample
//     skewness (≈ N(0, 6/n) for normal data). The Cornish–Fisher shift of
//     the quantile is (z²−1)/6 · γ̂/√n = 0.4736·γ̂/√n; with |γ̂| ≤ 4.42·√(6/n)
//     and n = 100 this is ≤ 0.0513.
//   - Higher-order Cornish–Fisher terms (kurtosis, γ̂²; O(1/n) ≈ 0.002) and
//     the order statistic's own O(1/B) bias in p (≈ 0.004): 0.01 covers both.
//
// Total: 0.2640 + 0.0513 + 0.01 = 0.326 σ_b, so any seed passes with
// probability ≥ 1 − 10⁻⁵ per endpoint.
func TestMeanCI_NormalApproximation(t *testing.T) {
	t.Parallel()
	const (
		n = 100
		b = 2000
	)
	x := normalSample(rand.New(rand.NewPCG(11, 12)), n)
	mean, lo, hi := MeanCI(rand.New(rand.NewPCG(13, 14)), x, 0.95, b)
	s := stat.StdDev(x, nil)
	sigmaB := s * math.Sqrt(float64(n-1)/n) / math.Sqrt(n)
	z := distuv.UnitNormal.Quantile(0.975)
	tol := 0.326 * sigmaB
	if d := lo - (mean - z*sigmaB); math.Abs(d) > tol {
		t.Errorf("lo = %v, normal theory %v: off by %.3g σ_b (tolerance 0.326)", lo, mean-z*sigmaB, d/sigmaB)
	}
	if d := hi - (mean + z*sigmaB); math.Abs(d) > tol {
		t.Errorf("hi = %v, normal theory %v: off by %.3g σ_b (tolerance 0.326)", hi, mean+z*sigmaB, d/sigmaB)
	}
}

// Coverage of the nominal 95 % interval over R simulated N(μ, 1) datasets of
// size n, tested one-sided (the percentile bootstrap undercovers for small n).
//
// Expected coverage. To first order the percentile interval is
// mean ± z·σ̂/√n with the plug-in σ̂ = s·√((n−1)/n), so its coverage is
// c_n = P(|T_{n−1}| ≤ z·√((n−1)/n)) with T Student-t; for n = 30,
// c_n ≈ 0.936, i.e. 0.014 below nominal. The test checks c_n ≥ 0.95 − 0.02,
// so the allowance of 0.02 for this small-sample undercoverage holds.
// Monte Carlo noise in the endpoints (B = 1000) changes coverage only at
// second order (≈ 0.001).
//
// Tolerance. The empirical coverage of R independent intervals has sd
// √(c(1−c)/R); with z' = 4.42 the bound
//
//	coverage ≥ 0.95 − (z'·√(0.05·0.95/R) + 0.02)
//
// (0.8818 for R = 400) fails with probability < 10⁻⁵ whenever the true
// coverage is at least 0.93. Using the binomial sd at c_n instead,
// c_n − z'·√(c_n(1−c_n)/R), gives almost the same bound; the test takes
// the smaller of the two.
func TestMeanCI_Coverage(t *testing.T) {
	t.Parallel()
	const (
		reps  = 400
		n     = 30
		b     = 1000
		level = 0.95
		mu    = 3.0
		zTol  = 4.42
	)
	z := distuv.UnitNormal.Quantile(1 - (1-level)/2)
	tDist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1} // lint:nosrc (CDF only)
	cn := 2*tDist.CDF(z*math.Sqrt(float64(n-1)/n)) - 1
	if cn < level-0.02 {
		t.Fatalf("theory: expected coverage c_n = %.4f is more than 0.02 below %v", cn, level)
	}

	dataRNG := rand.New(rand.NewPCG(21, 22))
	bootRNG := rand.New(rand.NewPCG(23, 24))
	x := make([]float64, n)
	var covered int
	for range reps {
		for i := range x {
			x[i] = mu + dataRNG.NormFloat64()
		}
		_, lo, hi := MeanCI(bootRNG, x, level, b)
		if lo <= mu && mu <= hi {
			covered++
		}
	}
	got := float64(covered) / reps
	bound := math.Min(
		level-(zTol*math.Sqrt(level*(1-level)/reps)+0.02),
		cn-zTol*math.Sqrt(cn*(1-cn)/reps),
	)
	t.Logf("coverage %.4f (theory c_n = %.4f), bound %.4f", got, cn, bound)
	if got < bound {
		t.Errorf("coverage %.4f < %.4f (c_n = %.4f)", got, bound, cn)
	}
}

func normalSample(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}
