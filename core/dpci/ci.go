package dpci

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/dprepro/dprepro/core/randx"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Interval holds per-coordinate confidence intervals [Lo[j], Hi[j]].
type Interval struct {
	Lo, Hi []float64
}

// Covers reports whether Lo[j] ≤ v ≤ Hi[j]. It panics if j is out of
// range.
func (iv Interval) Covers(j int, v float64) bool { return iv.Lo[j] <= v && v <= iv.Hi[j] }

// sandwich returns the factors of the Monte Carlo draws: hInv = H⁻¹ and
// a = H⁻¹·L/√n with L·Lᵀ = Σ (L = V·diag(√max(λ, 0)), so a positive
// semidefinite Σ is accepted). It returns an error when H is not positive
// definite.
func sandwich(h, sigma mat.Symmetric, n float64) (hInv, a *mat.Dense, err error) {
	d := h.SymmetricDim()
	if sigma.SymmetricDim() != d {
		panic(fmt.Sprintf("dpci: H is %d×%d but Sigma is %d×%d", d, d, sigma.SymmetricDim(), sigma.SymmetricDim()))
	}
	var ch mat.Cholesky
	if !ch.Factorize(h) {
		return nil, nil, fmt.Errorf("dpci: hessian is not positive definite")
	}
	var hi mat.SymDense
	if err := ch.InverseTo(&hi); err != nil {
		return nil, nil, fmt.Errorf("dpci: inverting hessian: %w", err)
	}
	hInv = mat.DenseCopyOf(&hi)
	var es mat.EigenSym
	if !es.Factorize(sigma, true) {
		return nil, nil, fmt.Errorf("dpci: eigendecomposition of sigma failed")
	}
	lam := es.Values(nil)
	var l mat.Dense
	es.VectorsTo(&l)
	for k, v := range lam {
		s := math.Sqrt(math.Max(v, 0) / n)
		for i := 0; i < d; i++ {
			l.Set(i, k, l.At(i, k)*s)
		}
	}
	a = mat.NewDense(d, d, nil)
	a.Mul(hInv, &l)
	return hInv, a, nil
}

// lowerFactor returns the lower-triangular Cholesky factor L of a·aᵀ and
// true, or a and false when a·aᵀ is not positive definite (a singular Σ).
// L·g has the law of a·g for a standard normal g (both are N(0, a·aᵀ)),
// in d(d+1)/2 multiply-adds instead of d²: the Monte Carlo draws use it.
func lowerFactor(a *mat.Dense) (*mat.Dense, bool) {
	var u mat.SymDense
	u.SymOuterK(1, a)
	var ch mat.Cholesky
	if !ch.Factorize(&u) {
		return a, false
	}
	var l mat.TriDense
	ch.LTo(&l)
	return mat.DenseCopyOf(&l), true
}

// mcInterval draws m samples z = a·g + extra(g-free noise) around theta and
// returns the equal-tailed empirical (α/2, 1 − α/2) quantiles per
// coordinate (Algorithm 3 lines 12–14, Algorithm 5 lines 12–14). It checks
// ctx about every 2¹⁶ multiply-adds (a draw costs at most about d² + d) and returns
// its error once it is done; the check draws nothing.
//
// The samples are a simulation, not a release: they come from a
// [randx.Sim] seeded by four words of rng (per sample the d normals of g,
// then noise's draws), which draws normals about 2.8 times faster than
// rng itself. noise must draw from the Sim it is given. a is replaced by
// the lower-triangular factor of a·aᵀ when there is one ([lowerFactor]):
// the same law of z, about half the multiply-adds of a·g.
func mcInterval(ctx context.Context, rng *rand.Rand, theta []float64, a *mat.Dense, alpha float64, m int, noise func(z []float64, sim *randx.Sim)) (Interval, error) {
	if err := ctx.Err(); err != nil {
		return Interval{}, err // before taking m·d values
	}
	d := len(theta)
	// The m·d samples (coordinate j's in buf[j·m:(j+1)·m]) come from a pool:
	// a unit computes one interval after another, and allocating them
	// afresh (880 kB at m = 10,000, d = 11) was most of its garbage.
	bp := mcPool.Get().(*[]float64)
	defer mcPool.Put(bp)
	if cap(*bp) < m*d {
		*bp = make([]float64, m*d)
	}
	buf := (*bp)[:m*d]
	g := make([]float64, d)
	z := make([]float64, d)
	a, lower := lowerFactor(a)
	ar := a.RawMatrix()
	sim := randx.NewSim(rng)
	stride := max(1, (1<<16)/max(1, d*d+d))
	for i := 0; i < m; i++ {
		if i%stride == 0 {
			if err := ctx.Err(); err != nil {
				return Interval{}, err
			}
		}
		sim.NormFill(g)
		clear(z)
		if noise != nil {
			noise(z, sim)
		}
		if lower {
			matVecAddLower(z, ar.Data, ar.Stride, g)
		} else {
			matVecAdd(z, ar.Data, ar.Stride, g)
		}
		for j, s := range z {
			buf[j*m+i] = theta[j] + s
		}
	}
	iv := Interval{Lo: make([]float64, d), Hi: make([]float64, d)}
	for j := 0; j < d; j++ {
		iv.Lo[j], iv.Hi[j] = empiricalQuantiles(buf[j*m:(j+1)*m], alpha/2, 1-alpha/2)
	}
	return iv, nil
}

// matVecAdd sets z[j] = z[j] + Σₖ a[j·stride+k]·g[k] for j < len(z), k <
// len(g), each sum taken left to right from z[j] (the order of a plain
// loop, so the same bits), two rows at a time: their independent sums
// interleave and share the loads of g (a draw's products were a chain of
// dependent additions per row).
func matVecAdd(z, a []float64, stride int, g []float64) {
	d := len(z)
	j := 0
	for ; j+1 < d; j += 2 {
		r0 := a[j*stride : j*stride+len(g)]
		r1 := a[(j+1)*stride : (j+1)*stride+len(g)]
		s0, s1 := z[j], z[j+1]
		for k, v := range g {
			s0 += r0[k] * v
			s1 += r1[k] * v
		}
		z[j], z[j+1] = s0, s1
	}
	if j < d {
		r := a[j*stride : j*stride+len(g)]
		s := z[j]
		for k, v := range g {
			s += r[k] * v
		}
		z[j] = s
	}
}

// matVecAddLower is matVecAdd for a lower-triangular a (row j's entries
// beyond column j are zero and not read): z[j] = z[j] + Σₖ≤ⱼ a[j·stride+k]·g[k],
// len(g) = len(z), two rows at a time.
func matVecAddLower(z, a []float64, stride int, g []float64) {
	d := len(z)
	j := 0
	for ; j+1 < d; j += 2 {
		r0 := a[j*stride : j*stride+j+1]
		r1 := a[(j+1)*stride : (j+1)*stride+j+2]
		s0, s1 := z[j], z[j+1]
		for k, v := range g[:j+1] {
			s0 += r0[k] * v
			s1 += r1[k] * v
		}
		z[j], z[j+1] = s0, s1+r1[j+1]*g[j+1]
	}
	if j < d {
		r := a[j*stride : j*stride+j+1]
		s := z[j]
		for k, v := range g[:j+1] {
			s += r[k] * v
		}
		z[j] = s
	}
}

// mcPool holds the sample buffers of mcInterval (*[]float64), reused
// across calls and goroutines; a buffer's contents never outlive a call.
var mcPool = sync.Pool{New: func() any { return new([]float64) }}

// empiricalQuantiles returns the empirical p- and q-quantiles (p ≤ q) of x
// as stat.Quantile with stat.Empirical gives them on sorted x: the order
// statistics x₍ₖ₊₁₎ with k = max(0, ⌈p·m⌉ − 1), m = len(x). It finds them by
// selection in O(m) instead of sorting ([tailQuantiles] for the tails of a
// long sample, else two Floyd–Rivest selections) and may reorder x. Any
// NaN in x gives NaN, as stat.Quantile does. (Where −0 and +0 tie at the
// rank, the zero returned may carry either sign, as it may after any
// sort.)
func empiricalQuantiles(x []float64, p, q float64) (lo, hi float64) {
	rank := func(p float64) int { return max(0, min(len(x)-1, int(math.Ceil(p*float64(len(x))))-1)) }
	kp, kq := rank(p), rank(q)
	if lo, hi, ok := tailQuantiles(x, kp, kq); ok {
		return lo, hi // no NaN in x: tailQuantiles checks
	}
	for _, v := range x {
		if math.IsNaN(v) {
			return math.NaN(), math.NaN()
		}
	}
	hi = selectNth(x, kq)
	// After selection x[:kq] holds the kq smallest values.
	if kp == kq {
		return hi, hi
	}
	return selectNth(x[:kq], kp), hi
}

// tailQuantiles returns the order statistics x₍kp+1₎ and x₍kq+1₎ of a long
// sample when both lie in its tails (the 2.5 % and 97.5 % of the paper's
// intervals), in one pass instead of two selections over all of it: two
// pivots are selected from a strided sample of x (a few sample standard
// errors beyond the ranks' expected places), one branch-free pass copies
// the values below the lower pivot and above the upper one into scratch
// (and notes any NaN), and the order statistics are selected there
// ([selectBracket]). It reports false, having changed nothing, when the
// ranks are not in the tails, x is short, x holds a NaN, or a pivot turns
// out not to bracket its rank (then the caller selects in x itself): the
// values returned never depend on the sample, only the time. (Selection
// over all of x mispredicts a branch on most values: 67 µs for m = 10,000
// against 15 µs when a benchmark repeats the same values;
// BenchmarkTailQuantiles, fresh samples: 49 µs with the sample sorted and
// the tails selected in full, 38 µs now.)
func tailQuantiles(x []float64, kp, kq int) (lo, hi float64, ok bool) {
	const sampleSize = 128
	n := len(x)
	if n < 16*sampleSize || kp > n/8 || kq < n-1-n/8 {
		return 0, 0, false
	}
	var sample [sampleSize]float64
	for i := range sample {
		sample[i] = x[i*n/sampleSize]
	}
	for _, v := range sample {
		if math.IsNaN(v) {
			return 0, 0, false // selection needs comparable values
		}
	}
	// The sample rank r of a value above about r·n/S of the values, plus
	// three binomial standard errors of the sample's count below the
	// rank's quantile p (√(S·p(1−p)): 1.8 ranks of 128 at the paper's
	// 2.5 %; the bound √(S/8) of any p, used before, took 4, and the tails
	// copied held about 1,250 of 10,000 values instead of 740) and one.
	margin := func(k int) float64 {
		p := float64(k+1) / float64(n)
		return 3*math.Sqrt(sampleSize*p*(1-p)) + 1
	}
	rl := min(sampleSize-1, int(float64(kp+1)*sampleSize/float64(n)+margin(kp)))
	rh := max(0, int(float64(kq+1)*sampleSize/float64(n)-margin(kq)))
	if rl >= rh {
		return 0, 0, false
	}
	// The sample's order statistics of ranks rl < rh, by selection.
	pl := selectNth(sample[:], rl)
	ph := selectNth(sample[rl+1:], rh-rl-1) // sample[rl+1:] ≥ pl after the first
	if math.IsInf(pl, 0) || math.IsInf(ph, 0) || pl == 0 || ph == 0 {
		// The sign-bit tests below need finite pivots, and nonzero ones:
		// −0 − (+0) is −0, which would count −0 as below a +0 pivot.
		return 0, 0, false
	}
	bp := mcPool.Get().(*[]float64)
	defer mcPool.Put(bp)
	if cap(*bp) < 2*n {
		*bp = make([]float64, 2*n)
	}
	low, high := (*bp)[:n], (*bp)[n:2*n]
	nl, nh, nan := 0, 0, 0
	for _, v := range x {
		nan |= b2i(v != v)
		// Branch-free: every value is written to both, and kept (the count
		// moves on) when it lies beyond the pivot — for finite nonzero
		// pivots and values that are not NaN, the sign bit of v − pl is set
		// iff v < pl (equal values give +0; a difference of distinct
		// floats is never 0), that of ph − v iff v > ph.
		low[nl] = v
		high[nh] = v
		nl += int(math.Float64bits(v-pl) >> 63)
		nh += int(math.Float64bits(ph-v) >> 63)
	}
	// x₍kp+1₎ < pl iff more than kp values are below pl; x₍kq+1₎ > ph iff
	// the n − nh values ≤ ph are at most kq.
	if nan != 0 || nl <= kp || n-nh > kq {
		return 0, 0, false
	}
	return selectBracket(low[:nl], kp, low[nl:]), selectBracket(high[:nh], kq-(n-nh), high[nh:]), true
}

// selectBracket returns the (k+1)-th smallest value of x (no NaN in x),
// as selectNth does, and may reorder x; scratch (len ≥ len(x)) is
// overwritten. On x of at least 512 values — the ≈ 740 of each tail that
// tailQuantiles copies at m = 10,000 — it first narrows x: two pivots a ≤ b
// selected from a strided sample of 64 values (three binomial standard
// errors around k's place in it, plus one), one branch-free pass that
// counts the values below a and copies those in [a, b] to scratch, and
// the selection in that copy (≈ 290 values) when it holds rank k;
// otherwise in x itself. Selection over all of x mispredicts a branch on
// most values; the narrowing pass mispredicts none. The value returned
// is the order statistic either way.
func selectBracket(x []float64, k int, scratch []float64) float64 {
	const sampleSize = 64
	n := len(x)
	if n < 512 || len(scratch) < n {
		return selectNth(x, k)
	}
	var sample [sampleSize]float64
	for i := range sample {
		sample[i] = x[i*n/sampleSize]
	}
	p := (float64(k) + 0.5) / float64(n)
	margin := 3*math.Sqrt(sampleSize*p*(1-p)) + 1
	at := p * sampleSize
	ra, rb := max(0, int(at-margin)), min(sampleSize-1, int(at+margin))
	if ra >= rb {
		return selectNth(x, k)
	}
	a := selectNth(sample[:], ra)
	b := selectNth(sample[ra+1:], rb-ra-1)
	below, mid := 0, 0
	for _, v := range x {
		scratch[mid] = v
		below += b2i(v < a)
		mid += b2i(v >= a) & b2i(v <= b)
	}
	if below > k || k >= below+mid {
		return selectNth(x, k)
	}
	return selectNth(scratch[:mid], k-below)
}

// b2i is 1 for true and 0 for false (compiled without a branch).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// selectNth reorders x so that x[k] is its (k+1)-th smallest value, every
// value before it is ≤ x[k] and every value after it ≥ x[k], and returns
// x[k] (no NaN in x). It is the SELECT of Floyd and Rivest (1975,
// Communications of the ACM 18(3), Algorithm 489): on a span longer than
// 600 it first selects recursively within a sample window of about
// n^(2/3) values around the expected place of x[k], so that the partition
// pivot lands close to rank k and one pass of about n + min(k, n−k)
// comparisons leaves a short span. For the tail ranks of the intervals
// (2.5 % and 97.5 %) that is about 2.5× fewer comparisons than Hoare's
// selection with a median-of-three pivot, which it replaced. The value
// returned is the order statistic, so it does not depend on the algorithm.
func selectNth(x []float64, k int) float64 {
	floydRivest(x, 0, len(x)-1, k)
	return x[k]
}

// floydRivest is Algorithm 489 on x[left..right] (the ACM pseudo-code with
// 0-based indices).
func floydRivest(x []float64, left, right, k int) {
	for right > left {
		if right-left > 600 {
			n := float64(right - left + 1)
			i := float64(k - left + 1)
			z := math.Log(n)
			s := 0.5 * math.Exp(2*z/3)
			sd := 0.5 * math.Sqrt(z*s*(n-s)/n)
			if i < n/2 {
				sd = -sd
			}
			newLeft := max(left, int(float64(k)-i*s/n+sd))
			newRight := min(right, int(float64(k)+(n-i)*s/n+sd))
			floydRivest(x, newLeft, newRight, k)
		}
		t := x[k]
		i, j := left, right
		x[left], x[k] = x[k], x[left]
		if x[right] > t {
			x[right], x[left] = x[left], x[right]
		}
		for i < j {
			x[i], x[j] = x[j], x[i]
			i++
			j--
			for x[i] < t {
				i++
			}
			for x[j] > t {
				j--
			}
		}
		if x[left] == t {
			x[left], x[j] = x[j], x[left]
		} else {
			j++
			x[j], x[right] = x[right], x[j]
		}
		// x[left..j−1] ≤ t = x[j] ≤ x[j+1..right].
		if j <= k {
			left = j + 1
		}
		if k <= j {
			right = j - 1
		}
	}
}

func checkCIArgs(theta []float64, h mat.Symmetric, n, alpha float64, m int) error {
	if h.SymmetricDim() != len(theta) {
		panic(fmt.Sprintf("dpci: len(theta) = %d but H is %d×%d", len(theta), h.SymmetricDim(), h.SymmetricDim()))
	}
	if err := checkPos("n", n); err != nil {
		return err
	}
	if !(alpha > 0 && alpha < 1) {
		return fmt.Errorf("dpci: alpha must be in (0, 1) (got %v)", alpha)
	}
	if m < 1 {
		return fmt.Errorf("dpci: number of Monte Carlo samples must be >= 1 (got %d)", m)
	}
	return nil
}

// ObjPertCI returns the (1 − α) intervals of Algorithm 3, lines 7–15, of
// [Wang, Kifer & Lee 2019] around the objective-perturbation release θ̃ =
// theta, from m Monte Carlo draws of Eq. 4:
//
//	θ⁽ⁱ⁾ = θ̃ + H̃⁻¹(Gᵢ + βᵢ/√n)/√n,  Gᵢ ~ N(0, Σ̃),  βᵢ ~ Eq. 3 with γ = epsilonPrime/2
//
// and per coordinate the equal-tailed empirical α/2 and 1 − α/2 quantiles.
// h must be positive definite and sigma positive semidefinite (the outputs
// of [PrivSPDMat]). epsilonPrime = +Inf drops the β term (the non-private
// analogue). It is post-processing of θ̃, H̃ and Σ̃ and spends no budget.
// It returns ctx's error once ctx is done (checked between draws).
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func ObjPertCI(ctx context.Context, rng *rand.Rand, theta []float64, h, sigma mat.Symmetric, n, epsilonPrime, alpha float64, m int) (Interval, error) {
	if err := checkCIArgs(theta, h, n, alpha, m); err != nil {
		return Interval{}, err
	}
	if !(epsilonPrime > 0) {
		return Interval{}, fmt.Errorf("dpci: epsilon' must be > 0 (got %v)", epsilonPrime)
	}
	hInv, a, err := sandwich(h, sigma, n)
	if err != nil {
		return Interval{}, err
	}
	var noise func([]float64, *randx.Sim)
	if !math.IsInf(epsilonPrime, 1) {
		d := len(theta)
		beta := make([]float64, d)
		hr := hInv.RawMatrix()
		noise = func(z []float64, sim *randx.Sim) {
			// β = r·u (u the normals of its direction): H̃⁻¹β/n, the β/√n
			// inside Eq. 4 divided by √n again, is (r/n)·H̃⁻¹u (z is zero
			// here: each sum starts from +0, as a plain loop's).
			r := sim.SphericalLaplaceScale(beta, epsilonPrime/2) / n
			matVecAdd(z, hr.Data, hr.Stride, beta)
			for j, s := range z {
				z[j] = s * r
			}
		}
	}
	return mcInterval(ctx, rng, theta, a, alpha, m, noise)
}

// OutPertCI returns the (1 − α) intervals of Algorithm 5, lines 6–22, of
// [Wang, Kifer & Lee 2019] around the output-perturbation release θ̃ =
// theta (Eq. 8):
//
//	DP:   m draws θ⁽ⁱ⁾ = θ̃ − βᵢ + H̃⁻¹Gᵢ/√n, βᵢ ~ Eq. 3 with γ = n·c·phi1,
//	      Gᵢ ~ N(0, Σ̃); equal-tailed empirical quantiles (m is used)
//	zCDP: the closed form of [GaussianCI] with noiseVar = 1/(2·phi1·(n·c)²)
//	      (m is ignored)
//
// phi1 = +Inf drops the privacy noise of θ̃ (the non-private analogue). It
// is post-processing and spends no budget. It returns ctx's error once ctx
// is done (checked between draws).
//
// Deviation: the text after Eq. 8 writes 1/(2ϕ(nc²)); Algorithm 5 line 17
// and the zCDP noise of Algorithm 4 give 1/(2ϕ₁(nc)²), used here.
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func OutPertCI(ctx context.Context, rng *rand.Rand, theta []float64, h, sigma mat.Symmetric, n, c, phi1 float64, privacy Privacy, alpha float64, m int) (Interval, error) {
	if err := checkCIArgs(theta, h, n, alpha, m); err != nil {
		return Interval{}, err
	}
	if err := checkPos("c", c); err != nil {
		return Interval{}, err
	}
	if !(phi1 > 0) {
		return Interval{}, fmt.Errorf("dpci: phi1 must be > 0 (got %v)", phi1)
	}
	noPriv := math.IsInf(phi1, 1)
	switch privacy {
	case ZCDP:
		v := 0.0
		if !noPriv {
			v = 1 / (2 * phi1 * (n * c) * (n * c))
		}
		return GaussianCI(theta, h, sigma, n, v, alpha)
	case DP:
	default:
		return Interval{}, fmt.Errorf("dpci: unknown privacy %q (want %q or %q)", privacy, DP, ZCDP)
	}
	_, a, err := sandwich(h, sigma, n)
	if err != nil {
		return Interval{}, err
	}
	var noise func([]float64, *randx.Sim)
	if !noPriv {
		gamma := n * c * phi1
		if math.IsInf(gamma, 0) {
			return Interval{}, fmt.Errorf("dpci: the noise's rate n·c·phi1 = %v·%v·%v overflows", n, c, phi1)
		}
		noise = func(z []float64, sim *randx.Sim) {
			sim.SphericalLaplace(z, gamma)
			for j := range z {
				z[j] = -z[j]
			}
		}
	}
	return mcInterval(ctx, rng, theta, a, alpha, m, noise)
}

// GaussianCI returns the normal intervals θ[j] ± z_{α/2}·√U_jj with
//
//	U = noiseVar·I + H⁻¹·Σ·H⁻¹/n
//
// (Algorithm 5, lines 16–21 of [Wang, Kifer & Lee 2019], where noiseVar =
// 1/(2ϕ₁(nc)²)); noiseVar = 0 gives the non-private sandwich interval.
// h must be positive definite and sigma positive semidefinite.
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
func GaussianCI(theta []float64, h, sigma mat.Symmetric, n, noiseVar, alpha float64) (Interval, error) {
	if err := checkCIArgs(theta, h, n, alpha, 1); err != nil {
		return Interval{}, err
	}
	if !(noiseVar >= 0) || math.IsInf(noiseVar, 1) {
		return Interval{}, fmt.Errorf("dpci: noise variance must be finite and >= 0 (got %v)", noiseVar)
	}
	_, a, err := sandwich(h, sigma, n)
	if err != nil {
		return Interval{}, err
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	d := len(theta)
	iv := Interval{Lo: make([]float64, d), Hi: make([]float64, d)}
	for j := 0; j < d; j++ {
		// U_jj = noiseVar + Σₖ a_jk² since a·aᵀ = H⁻¹ΣH⁻¹/n.
		u := noiseVar
		for _, v := range a.RawRowView(j) {
			u += v * v
		}
		half := z * math.Sqrt(u)
		iv.Lo[j] = theta[j] - half
		iv.Hi[j] = theta[j] + half
	}
	return iv, nil
}
