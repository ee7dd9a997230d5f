package cicoverage

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// chiSquareLimit is the 1 − 1e−6 quantile of χ² with df degrees of
// freedom: a goodness-of-fit statistic of an exact sampler exceeds it with
// probability 1e−6 (asymptotically, with every bin expecting ≥ 5).
func chiSquareLimit(df int) float64 {
	return distuv.ChiSquared{K: float64(df)}.Quantile(1 - 1e-6) // lint:nosrc (quantile only)
}

// pearson returns Pearson's X² of the observed counts obs against the
// expected counts exp, after merging consecutive bins until each merged
// bin expects at least 5 (a short last group joins the one before), and
// the number of merged bins.
func pearson(obs, exp []float64) (x2 float64, bins int) {
	var o, e []float64
	var so, se float64
	for i := range obs {
		so += obs[i]
		se += exp[i]
		if se >= 5 {
			o, e = append(o, so), append(e, se)
			so, se = 0, 0
		}
	}
	if len(e) == 0 {
		return math.Inf(1), 0
	}
	o[len(o)-1] += so
	e[len(e)-1] += se
	for i := range o {
		x2 += (o[i] - e[i]) * (o[i] - e[i]) / e[i]
	}
	return x2, len(o)
}

// TestBinomial_GoodnessOfFit checks the modal-inversion binomial sampler
// against the binomial pmf (gonum distuv.Binomial.Prob) by Pearson's
// χ² on 20,000 draws per case, from the degenerate and small cases to the
// mode-0, p near 1 and n = 450,000 (KDD-99's) cases: an exact sampler
// exceeds the χ² 1 − 1e−6 quantile with probability 1e−6 per case.
func TestBinomial_GoodnessOfFit(t *testing.T) {
	const draws = 20000
	rng := rand.New(rand.NewPCG(27, 1))
	for _, c := range []struct {
		n int
		p float64
	}{{1, 0.5}, {10, 0.3}, {25, 0.97}, {1000, 0.002}, {400, 1.0 / 3}, {5000, 0.5}, {450000, 0.25}, {450000, 3e-6}} {
		obs := make([]float64, c.n+1)
		for i := 0; i < draws; i++ {
			k := binomial(rng, c.n, c.p)
			if k < 0 || k > c.n {
				t.Fatalf("n = %d, p = %v: drew %d", c.n, c.p, k)
			}
			obs[k]++
		}
		exp := make([]float64, c.n+1)
		b := distuv.Binomial{N: float64(c.n), P: c.p} // lint:nosrc (pmf only)
		for k := range exp {
			exp[k] = draws * b.Prob(float64(k))
		}
		x2, bins := pearson(obs, exp)
		if bins < 2 {
			t.Fatalf("n = %d, p = %v: %d bins", c.n, c.p, bins)
		}
		if lim := chiSquareLimit(bins - 1); x2 > lim {
			t.Errorf("n = %d, p = %v: X² = %.1f over %d bins exceeds %.1f", c.n, c.p, x2, bins, lim)
		}
	}
	for _, c := range []struct {
		n    int
		p    float64
		want int
	}{{0, 0.5, 0}, {7, 0, 0}, {7, 1, 7}} {
		if k := binomial(rng, c.n, c.p); k != c.want {
			t.Errorf("binomial(%d, %v) = %d, want %d", c.n, c.p, k, c.want)
		}
	}
}

// TestMultinomialCounts_Joint checks the sequential conditional binomials
// against the joint Multinomial(6; 1/6, 0, 2/6, 3/6) pmf over all 28
// outcomes by Pearson's χ² on 50,000 draws (1 − 1e−6 quantile), and that
// every draw sums to n and leaves the row with no record at 0.
func TestMultinomialCounts_Joint(t *testing.T) {
	const draws = 50000
	mult := []int32{1, 0, 2, 3}
	const n = 6
	rng := rand.New(rand.NewPCG(27, 2))
	obs := map[[4]int32]float64{}
	dst := make([]int32, len(mult))
	for i := 0; i < draws; i++ {
		multinomialCounts(dst, rng, mult, n)
		if dst[0]+dst[1]+dst[2]+dst[3] != n || dst[1] != 0 {
			t.Fatalf("draw %v: want a sum of %d and no draw of row 1", dst, n)
		}
		obs[[4]int32(dst)]++
	}
	lf := func(k int) float64 { v, _ := math.Lgamma(float64(k) + 1); return v }
	var o, e []float64
	for a := 0; a <= n; a++ {
		for b := 0; a+b <= n; b++ {
			c := n - a - b
			lp := lf(n) - lf(a) - lf(b) - lf(c) + float64(a)*math.Log(1.0/6) + float64(b)*math.Log(2.0/6) + float64(c)*math.Log(3.0/6)
			o = append(o, obs[[4]int32{int32(a), 0, int32(b), int32(c)}])
			e = append(e, draws*math.Exp(lp))
		}
	}
	if len(o) != 28 {
		t.Fatalf("%d outcomes, want 28", len(o))
	}
	x2, bins := pearson(o, e)
	if lim := chiSquareLimit(bins - 1); x2 > lim {
		t.Errorf("X² = %.1f over %d bins exceeds %.1f", x2, bins, lim)
	}
}

// TestMultinomialCounts_Marginals checks, on a KDD-like sample (50 rows
// seen once, rows seen 200 and 5,000 times), that every row's mean count
// over 4,000 replicates is within 5 standard errors of n·p
// (SE = √(n·p·(1−p)/replicates)); 52 rows at 5 SE give a false alarm
// probability below 3e−5.
func TestMultinomialCounts_Marginals(t *testing.T) {
	const reps = 4000
	var mult []int32
	for i := 0; i < 50; i++ {
		mult = append(mult, 1)
	}
	mult = append(mult[:25], append([]int32{200}, append(mult[25:], 5000)...)...)
	n := 0
	for _, m := range mult {
		n += int(m)
	}
	rng := rand.New(rand.NewPCG(27, 3))
	sum := make([]float64, len(mult))
	dst := make([]int32, len(mult))
	for r := 0; r < reps; r++ {
		multinomialCounts(dst, rng, mult, n)
		tot := 0
		for u, c := range dst {
			sum[u] += float64(c)
			tot += int(c)
		}
		if tot != n {
			t.Fatalf("replicate %d sums to %d, want %d", r, tot, n)
		}
	}
	for u, m := range mult {
		p := float64(m) / float64(n)
		se := math.Sqrt(float64(n) * p * (1 - p) / reps)
		if mean := sum[u] / reps; math.Abs(mean-float64(n)*p) > 5*se {
			t.Errorf("row %d (mult %d): mean count %v, want %v ± %v", u, m, mean, float64(n)*p, 5*se)
		}
	}
}

// BenchmarkBinomial times one draw at a mean of 1 (most distinct rows) and
// at n = 450,000, p = 0.25 (KDD-99's most frequent rows).
func BenchmarkBinomial(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	b.Run("mean=1", func(b *testing.B) {
		for b.Loop() {
			binomial(rng, 450000, 1.0/450000)
		}
	})
	b.Run("n=450000,p=0.25", func(b *testing.B) {
		for b.Loop() {
			binomial(rng, 450000, 0.25)
		}
	})
	b.Run("intn", func(b *testing.B) {
		for b.Loop() {
			rng.IntN(450000)
		}
	})
}
