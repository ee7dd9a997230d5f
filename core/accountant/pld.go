package accountant

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/integrate/quad"
)

// maxPLDBins bounds the number of grid points of the privacy-loss window
// for an explicit PLDOptions.Interval; a setting needing more (a tiny h
// over a wide loss range) is refused rather than allocating without
// bound. With the default interval the grid is coarsened to
// defaultMaxPLDBins instead.
const (
	maxPLDBins        = 1 << 22
	defaultMaxPLDBins = 1 << 17
)

// PLDOptions configures the privacy-loss-distribution accountant
// (SampledGaussian.EpsilonPLD, SampledGaussian.DeltaPLD). The zero value
// gives the defaults.
type PLDOptions struct {
	// Interval is the grid width h of the privacy loss. Zero means the
	// default, DefaultPLDInterval; otherwise finite and in (0, 0.1]. A
	// smaller h is tighter and slower (the cost is about linear in 1/h).
	Interval float64
}

// DefaultPLDInterval returns the grid width used when PLDOptions.Interval
// is zero:
//
//	h = min(1e-3, s/5),  s = q·√(e^(1/σ²) − 1),
//
// s being the standard deviation of one step's privacy loss for small q
// (the χ² divergence of N(1, σ²) from N(0, σ²) is e^(1/σ²) − 1). It
// does not look at the loss window: EpsilonPLD and DeltaPLD coarsen this
// h further when the window would need more than 2¹⁷ grid points
// (PLDInterval returns the h they use). The
// connect-the-dots error shrinks about as h² (measured); at h = s/5 the
// tests measure ε within 0.5 % of its limit as h → 0 (pld_test.go,
// TestEpsilonPLD_DefaultConverged), so ε is within ~1 % of the truth.
func (m SampledGaussian) DefaultPLDInterval() float64 {
	s := m.Q * math.Sqrt(math.Expm1(1/(m.Sigma*m.Sigma)))
	h := math.Min(1e-3, s/5)
	if !(h > 0) { // s underflowed (q tiny) or is NaN
		h = 1e-3
	}
	return h
}

// interval returns the grid width and the bin cap for m.
func (o PLDOptions) interval(m SampledGaussian) (h float64, maxBins int, err error) {
	h = o.Interval
	if h == 0 {
		return m.DefaultPLDInterval(), defaultMaxPLDBins, nil
	}
	if math.IsNaN(h) || h <= 0 || h > 0.1 {
		return 0, 0, fmt.Errorf("%w: PLD interval h must be in (0, 0.1] (got %v)", ErrInvalid, h)
	}
	return h, maxPLDBins, nil
}

// pldDirection names one of the two dominating pairs of the
// Poisson-subsampled Gaussian under add-or-remove-one adjacency (Zhu,
// Dong & Wang 2022, arXiv:2106.08567; Google dp_accounting treats both;
// the theorem number was not checked):
// "remove" is P = (1−q)N(0,σ²) + qN(1,σ²) against Q = N(0,σ²), "add" the
// swapped pair.
type pldDirection int

const (
	pldRemove pldDirection = iota
	pldAdd
)

// pldRounding names the discretisation of the privacy loss.
type pldRounding int

const (
	// pessimistic is the connect-the-dots discretisation (Doroshenko,
	// Ghazi, Kamath, Kumar & Manurangsi 2022): a discrete pair dominating
	// the true one, so that every δ(ε) it gives, also after composition,
	// is an upper bound.
	pessimistic pldRounding = iota
	// optimistic rounds every loss DOWN to the grid and drops the mass
	// outside the window: a lower bound, used by the tests only.
	optimistic
)

// pld is a privacy-loss distribution on the grid l = (lo+i)·h,
// i = 0…len(p)−1, under the first distribution P of its pair, with the
// mass inf at loss +∞ (counted fully in δ). errL1 bounds the ℓ1 distance
// of p (and inf) from the distribution exact arithmetic would have given:
// round-off of the discretisation and of the FFTs (see EpsilonPLD).
type pld struct {
	h  float64
	lo int
	p  []float64
	// i0, i1 bound the support of p (set by convolver.trim).
	i0, i1 int
	inf    float64
	errL1  float64
}

// loss returns the grid loss of p[i].
func (d *pld) loss(i int) float64 { return float64(d.lo+i) * d.h }

// sgmPair is one direction of the single-step pair, with the functions the
// discretisations need, each of ε, the privacy-loss threshold:
//
//	survP(ε) = P(L > ε),  survQ(ε) = Q(L > ε),  L = log(dP/dQ).
//
// For "remove", L(x) = log(1 − q + q·e^((2x−1)/(2σ²))) is increasing in x,
// so L > ε ⇔ x > x*(ε) = σ²·log((e^ε − 1 + q)/q) + 1/2 (every x when
// e^ε ≤ 1 − q). For "add", L(x) is minus that, decreasing, so
// L > ε ⇔ x < x'(ε) = σ²·log((e^−ε − 1 + q)/q) + 1/2 (no x when
// e^−ε ≤ 1 − q: the loss of "add" is below −log(1 − q)).
type sgmPair struct {
	q, sigma float64
	dir      pldDirection
}

// threshold returns x*(ε) (remove) or x'(ε) (add), with ok = false when
// the log's argument is ≤ 0 (then the event is everything, for remove, or
// nothing, for add).
func (s sgmPair) threshold(eps float64) (float64, bool) {
	v, ok := s.vOf(eps)
	if !ok {
		return 0, false
	}
	return s.sigma*s.sigma*v + 0.5, true
}

// phiBar is the standard normal upper tail, phi the CDF (by Erfc, which
// keeps relative accuracy in the tails).
func phiBar(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }
func phi(z float64) float64    { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func (s sgmPair) survP(eps float64) float64 {
	x, ok := s.threshold(eps)
	if s.dir == pldRemove {
		if !ok {
			return 1
		}
		return (1-s.q)*phiBar(x/s.sigma) + s.q*phiBar((x-1)/s.sigma)
	}
	if !ok {
		return 0
	}
	return phi(x / s.sigma)
}

func (s sgmPair) survQ(eps float64) float64 {
	x, ok := s.threshold(eps)
	if s.dir == pldRemove {
		if !ok {
			return 1
		}
		return phiBar(x / s.sigma)
	}
	if !ok {
		return 0
	}
	return (1-s.q)*phi(x/s.sigma) + s.q*phi((x-1)/s.sigma)
}

// delta returns the hockey-stick divergence δ(ε) = P(L > ε) − e^ε·Q(L > ε)
// of the single-step pair, clamped at 0 (it is ≥ 0 in exact arithmetic).
func (s sgmPair) delta(eps float64) float64 {
	// e^ε·Q(L > ε) in log space: e^ε may overflow where Q(L > ε) is 0.
	return math.Max(s.survP(eps)-math.Exp(eps+math.Log(s.survQ(eps))), 0)
}

// glNodes is the number of Gauss–Legendre nodes per panel in hatMasses.
const glNodes = 8

// zCut is where hatMasses truncates the Gaussian coordinate z = x/σ: the
// Q-mass beyond |z| = 40 is below 2Φ̄(38) < 1e-300 (the two components
// of the mixture are 1/σ apart), which is left out of the budget.
const zCut = 40

// vOf returns the coordinate v = (2x−1)/(2σ²) at which the privacy loss
// is ε: for "remove", e^ε = 1 − q + q·e^v (L increasing in v); for
// "add", e^−ε = 1 − q + q·e^v (L decreasing). ok = false when no v exists:
// ε at or below the least loss log(1 − q) (remove), at or above the
// largest −log(1 − q) (add).
func (s sgmPair) vOf(eps float64) (float64, bool) {
	if s.dir == pldAdd {
		eps = -eps
	}
	// e^ε − (1 − q): by Expm1 near ε = 0 (exact there), directly below
	// (where Expm1(ε) + q would lose e^ε to rounding when e^ε ≪ 1).
	// Above ε = 1, as e^ε·(1 − (1−q)e^−ε), in logs: e^ε overflows at 710.
	var a float64
	switch {
	case eps > 1:
		return eps + math.Log1p(-(1-s.q)*math.Exp(-eps)) - math.Log(s.q), true
	case eps > -0.5:
		a = math.Expm1(eps) + s.q
	default:
		a = math.Exp(eps) - (1 - s.q)
	}
	if a <= 0 {
		return 0, false
	}
	return math.Log(a) - math.Log(s.q), true
}

// densP returns the density of P in the coordinate v (x = σ²v + 1/2,
// z = x/σ = σv + c, c = 1/(2σ)): remove, P the mixture:
// (1−q)σφ(σv + c) + qσφ(σv − c); add, P = N(0, σ²): σφ(σv + c).
func (s sgmPair) densP(v float64) float64 {
	c := 0.5 / s.sigma
	z := s.sigma * v
	d := s.sigma * math.Exp(-0.5*(z+c)*(z+c)) / math.Sqrt(2*math.Pi)
	if s.dir == pldAdd {
		return d
	}
	return (1-s.q)*d + s.q*s.sigma*math.Exp(-0.5*(z-c)*(z-c))/math.Sqrt(2*math.Pi)
}

// lossV returns the privacy loss L at v: ±log(1 − q + q·e^v) (+ remove,
// − add), written so that neither a large v nor a small q·expm1(v) loses
// digits.
func (s sgmPair) lossV(v float64) float64 {
	var l float64
	switch {
	case v > 0:
		l = v + math.Log(s.q) + math.Log1p((1-s.q)/s.q*math.Exp(-v))
	case v > -0.5:
		l = math.Log1p(s.q * math.Expm1(v))
	default: // Expm1(v) would round q·e^v away against −1 when q ≈ 1
		l = math.Log(1 - s.q + s.q*math.Exp(v))
	}
	if s.dir == pldAdd {
		return -l
	}
	return l
}

// vRange returns the v-interval on which the loss lies in (la, lb]
// (la may be −Inf, lb +Inf), cut to |z| ≤ zCut; ok = false when empty.
func (s sgmPair) vRange(la, lb float64) (v1, v2 float64, ok bool) {
	c := 0.5 / s.sigma
	vMin, vMax := (-zCut-c)/s.sigma, (zCut+c)/s.sigma
	// end returns the v of loss l; an infinite l or one beyond the range
	// of the losses maps to the cut on the side where the loss runs out
	// (ok = false for the latter).
	end := func(l, inf float64) (float64, bool) {
		if math.IsInf(l, 0) {
			return inf, true
		}
		v, ok := s.vOf(l)
		if !ok {
			return vMin, false
		}
		return v, true
	}
	var okEnd bool
	if s.dir == pldRemove { // v increases with the loss
		v1, _ = end(la, vMin)
		v2, okEnd = end(lb, vMax)
	} else { // add: v decreases as the loss grows
		v1, _ = end(lb, vMin)
		v2, okEnd = end(la, vMax)
	}
	if !okEnd {
		return 0, 0, false
	}
	v1, v2 = math.Max(v1, vMin), math.Min(v2, vMax)
	return v1, v2, v1 < v2
}

// integrate returns ∫_{v1}^{v2} f(v) dv by composite glNodes-point
// Gauss–Legendre on panels of width ≤ min(0.5, 0.5/σ) (a quarter of a
// standard deviation of z at most), on which f (a Gaussian density times a
// smooth weight in [0, 1]) is resolved to far below float64 rounding.
//
// It also returns the number of terms summed, for the round-off budget
// (hatMasses).
func (s sgmPair) integrate(v1, v2 float64, f func(v float64) float64, x, w []float64) (float64, int) {
	panel := math.Min(0.5, 0.5/s.sigma)
	np := int(math.Ceil((v2 - v1) / panel))
	var ql quad.Legendre
	var sum float64
	for p := 0; p < np; p++ {
		a := v1 + float64(p)*(v2-v1)/float64(np)
		b := v1 + float64(p+1)*(v2-v1)/float64(np)
		ql.FixedLocations(x, w, a, b)
		for j := range x {
			sum += w[j] * f(x[j])
		}
	}
	return sum, np * len(x)
}

// hatMasses returns the connect-the-dots masses p_k, k = 0…n−1, of the
// grid losses l_k = (lo+k)·h (see discretize):
//
//	p_k = x_k·E_Q[φ_k(e^L)] = E_P[φ_k(e^L)·x_k·e^(−L)],  x_k = e^(l_k),
//
// φ_k the hat function of the grid 0, x_0, …, x_{n−1} in x = e^L (rising
// from 0 at x_{k−1}, or at 0 for k = 0, to 1 at x_k, falling to 0 at
// x_{k+1}; for the last point, 1 on [x_{n−1}, ∞)). It equals
// x_k·(avgG_{k−1} − avgG_k) of the chordal interpolant (integrate
// avgG by parts against G′ = −(density of e^L under Q)), but as an
// expectation of a non-negative function it has no cancellation: each p_k
// is computed to a few units of rounding, relative. Under P the weight
// φ_k·x_k·e^(−L) is at most e^h, so nothing overflows however large the
// losses. On each grid interval [x_j, x_{j+1}] the two hats are
// w₊ = (X − x_j)/Δ_j and w₋ = (x_{j+1} − X)/Δ_j, Δ_j = x_{j+1} − x_j,
// X = e^L, computed by wUp and wDown without cancellation.
//
// It also returns errL1, an estimate of the ℓ1 round-off of p: each
// integral of m positive terms, each correct to roundOffPerTerm relative,
// summed left to right, errs by at most (m + 64)·u of its value (u = 2⁻⁵³;
// the recursive-summation bound γ_{m−1} plus the terms' own error), and
// adding it to p_k by u more. The quadrature's truncation error is not
// in it (see integrate: far below rounding).
func (s sgmPair) hatMasses(h float64, lo, n int) (p []float64, errL1 float64) {
	p = make([]float64, n)
	x, w := make([]float64, glNodes), make([]float64, glNodes)
	add := func(k int, v float64, terms int) {
		p[k] += v
		errL1 += (float64(terms)*0x1p-53 + roundOffPerTerm + 0x1p-53) * v
	}
	// Below x_0: φ_0·x_0·e^(−L) = 1, so p_0 gets P(L ≤ l_0).
	if v1, v2, ok := s.vRange(math.Inf(-1), float64(lo)*h); ok {
		v, m := s.integrate(v1, v2, s.densP, x, w)
		add(0, v, m)
	}
	// Above x_{n−1}: weight e^(l_{n−1} − L) for p_{n−1}.
	ln := float64(lo+n-1) * h
	if v1, v2, ok := s.vRange(ln, math.Inf(1)); ok {
		v, m := s.integrate(v1, v2, func(v float64) float64 {
			return math.Exp(ln-s.lossV(v)) * s.densP(v)
		}, x, w)
		add(n-1, v, m)
	}
	em1h := math.Expm1(h)
	for j := 0; j+1 < n; j++ {
		la, lb := float64(lo+j)*h, float64(lo+j+1)*h
		v1, v2, ok := s.vRange(la, lb)
		if !ok {
			continue
		}
		va, okA := s.vOf(la)
		vb, okB := s.vOf(lb)
		up, mUp := s.integrate(v1, v2, func(v float64) float64 {
			l := s.lossV(v)
			return s.wUp(v, l, la, va, okA, em1h) * math.Exp(lb-l) * s.densP(v)
		}, x, w)
		add(j+1, up, mUp)
		down, mDown := s.integrate(v1, v2, func(v float64) float64 {
			l := s.lossV(v)
			return s.wDown(v, l, lb, vb, okB, em1h) * math.Exp(la-l) * s.densP(v)
		}, x, w)
		add(j, down, mDown)
	}
	return p, errL1
}

// qOverD returns q·e^v/(1 − q + q·e^v) ∈ [0, 1] without overflow.
func (s sgmPair) qOverD(v float64) float64 {
	if v > 0 {
		return 1 / (1 + (1-s.q)/s.q*math.Exp(-v))
	}
	e := s.q * math.Exp(v)
	return e / (1 - s.q + e)
}

// wUp returns w₊ = (X − x_a)/Δ for X = e^l in [x_a, x_a·e^h], x_a = e^la,
// Δ = x_a·expm1(h), va = vOf(la) (okA = false: la below every loss):
//
//	remove: X − x_a = q·(e^v − e^va),  so w₊ = e^(log q + v − la)·(−expm1(va − v))/expm1(h)
//	add:    X − x_a = q·(e^va − e^v)·X·x_a,  so w₊ = qOverD(va)·e^(l − la)·(−expm1(v − va))/expm1(h)
//
// (X = 1/D(v), D(v) = 1 − q + q·e^v, for add; q·e^va/D(v) = qOverD(va)·X/x_a.)
// Each factor is bounded (q·e^v ≤ e^l ≤ x_a·e^h; X/x_a ≤ e^h) and each
// expm1 argument ≤ 0, so nothing overflows however wide the bin is in v.
// Without a va, directly.
func (s sgmPair) wUp(v, l, la, va float64, okA bool, em1h float64) float64 {
	if !okA {
		return math.Expm1(l-la) / em1h
	}
	if s.dir == pldRemove {
		return math.Exp(math.Log(s.q)+v-la) * -math.Expm1(va-v) / em1h
	}
	return s.qOverD(va) * math.Exp(l-la) * -math.Expm1(v-va) / em1h
}

// wDown returns w₋ = (x_b − X)/Δ for X = e^l in [x_b·e^−h, x_b], x_b =
// e^lb, Δ = x_b·(1 − e^−h), vb = vOf(lb) (okB = false: lb above every
// loss):
//
//	remove: x_b − X = q·(e^vb − e^v),  so w₋ = e^(log q + vb − lb)·(−expm1(v − vb))/(1 − e^−h)
//	add:    x_b − X = q·(e^v − e^vb)·X·x_b,  so w₋ = qOverD(v)·(−expm1(vb − v))/(1 − e^−h)
//
// (bounded factors, expm1 arguments ≤ 0, as in wUp). Without a vb,
// directly.
func (s sgmPair) wDown(v, l, lb, vb float64, okB bool, em1h float64) float64 {
	den := -math.Expm1(-math.Log1p(em1h)) // 1 − e^−h
	if !okB {
		return -math.Expm1(l-lb) / den
	}
	if s.dir == pldRemove {
		return math.Exp(math.Log(s.q)+vb-lb) * -math.Expm1(v-vb) / den
	}
	return s.qOverD(v) * -math.Expm1(vb-v) / den
}

// roundOffPerTerm is the relative round-off assumed of each term of the
// Gauss–Legendre sums of hatMasses (a weight times a product of a few
// correctly rounded or nearly so exponentials, Expm1 and Log1p): a few
// units of float64 rounding (u = 2⁻⁵³ ≈ 1.1e-16), taken as 64u. The sum
// of m such terms adds up to m·u more (hatMasses): with the coarse
// panels of a small σ, m reaches ~3·10⁴ for the mass below the window.
//
// roundOffPerAtom is the round-off assumed of a difference of two upper
// tails (survP, delta; Erfc has a few units of relative error), relative
// to the larger: also 64u.
const (
	roundOffPerTerm = 64 * 0x1p-53
	roundOffPerAtom = 64 * 0x1p-53
)

// discretize returns the single-step privacy-loss distribution of the pair
// on the grid window [lo·h, hi·h].
//
// Pessimistic (connect-the-dots; Doroshenko, Ghazi, Kamath, Kumar &
// Manurangsi, "Connect the Dots", PETS 2022, arXiv:2207.04380, whose
// pessimistic estimate this is, written here from its definition): as a function of x = e^ε, the privacy profile
// f(x) = δ(log x) is convex and decreasing, with f(0) = 1 (all of P) and
// f′(x) = −G(x), G(x) = Q(L > log x). The discrete pair whose profile is
// the piecewise-linear interpolant of f through the grid points
// x_k = e^(l_k), with the chord from (0, 1) to the first point and the
// constant f(x_n) after the last, lies above f everywhere (convexity), so
// it dominates the true pair. Its atoms are at the grid losses, with
// P-mass x_k times the slope change at x_k:
//
//	p_k = x_k·(avgG_{k−1} − avgG_k),  avgG_k = average of G over [x_k, x_{k+1}],
//	avgG_{−1} = (1 − f(x_0))/x_0,  avgG_{n} = 0,  mass at +∞ = f(x_n) = δ(l_n).
//
// Its Q-mass Σ p_k e^(−l_k) = avgG_{−1} ≤ 1 since δ(ε) ≥ 1 − e^ε, so it is
// a pair of probability distributions (the rest of Q at loss −∞).
//
// Optimistic (tests only): p_k = P(l_k < L ≤ l_{k+1}), every loss rounded
// down to the grid; the mass below l_0 and above l_n + h is dropped
// (rounded down to −∞).
func (s sgmPair) discretize(h float64, lo, hi int, r pldRounding) *pld {
	n := hi - lo + 1
	d := &pld{h: h, lo: lo, p: make([]float64, n)}
	if r == optimistic {
		prev := s.survP(float64(lo) * h)
		for k := 0; k < n; k++ {
			next := s.survP(float64(lo+k+1) * h)
			d.p[k] = math.Max(prev-next, 0)
			prev = next
		}
		d.errL1 = float64(n) * roundOffPerAtom
		return d
	}
	d.p, d.errL1 = s.hatMasses(h, lo, n)
	d.inf = s.delta(float64(hi) * h)
	d.errL1 += 2 * roundOffPerAtom * s.survP(float64(hi)*h)
	return d
}

// fftRoundOff is the constant c of the round-off bound of one FFT-based
// convolution used by convolve:
//
//	‖ĉ − c‖₂ ≤ c·u·log₂N·(‖a‖₂ + ‖b‖₂),  u = 2⁻⁵³,
//
// and so ‖ĉ − c‖₁ ≤ √m times that over the m = len(a) + len(b) − 1
// entries kept. Derivation: Higham, "Accuracy and Stability of Numerical
// Algorithms" (2nd ed., chapter 24, its error bound for the radix-2
// Cooley–Tukey FFT; the theorem number was not checked): a computed FFT of length N has
// relative ℓ2 error ≤ log₂N·η/(1 − log₂N·η), η = μ + γ₄(√2 + μ) ≈ 6.7u
// with twiddle factors correct to μ ≈ u. With ‖DFT(a)‖₂ = √N‖a‖₂ and
// ‖DFT(b)‖∞ ≤ ‖b‖₁ ≤ 1, the two forward transforms, the product and the
// scaled inverse transform err by ≤ log₂N·η·(‖a‖₂ + ‖b‖₂ + ‖a∗b‖₂) ≤
// 1.5·log₂N·η·(‖a‖₂ + ‖b‖₂) ≈ 10u·log₂N·(‖a‖₂ + ‖b‖₂); 16 leaves room
// for the mixed-radix passes of gonum's real FFT (fftpack), to which the
// radix-2 theorem applies only in spirit: for gonum's transform this is
// an estimate, not a proved bound.
const fftRoundOff = 16

// trimMass is the mass below which the ends of a distribution's support
// are trimmed before each convolution, so that the early, narrow
// compositions use short FFTs: pessimistic, trimmed mass at the top goes
// to +∞ and at the bottom up to the first kept grid point (losses only
// rise); optimistic, it is dropped. It moves at most n·trimMass < 1e-24.
const trimMass = 1e-30

// convolver composes privacy-loss distributions on a fixed window
// [lo·h, hi·h] by FFT (gonum.org/v1/gonum/dsp/fourier). Each convolution
// transforms the two supports zero-padded to a power of two ≥ their
// summed length, so that the cyclic convolution equals the linear one
// (no wrap-around).
type convolver struct {
	h      float64
	lo, hi int
	r      pldRounding
	ffts   map[int]*fourier.FFT
}

func newConvolver(h float64, lo, hi int, r pldRounding) *convolver {
	return &convolver{h: h, lo: lo, hi: hi, r: r, ffts: map[int]*fourier.FFT{}}
}

// trim sets d's support [i0, i1] to the indices between the first and
// last mass ≥ trimMass, moving the rest (see trimMass).
func (c *convolver) trim(d *pld) {
	n := len(d.p)
	i0, i1 := 0, n-1
	for i0 < n-1 && d.p[i0] < trimMass {
		i0++
	}
	for i1 > i0 && d.p[i1] < trimMass {
		i1--
	}
	var below, above float64
	for i := 0; i < i0; i++ {
		below += d.p[i]
		d.p[i] = 0
	}
	for i := i1 + 1; i < n; i++ {
		above += d.p[i]
		d.p[i] = 0
	}
	if c.r == pessimistic {
		d.p[i0] += below
		d.inf += above
	}
	d.i0, d.i1 = i0, i1
}

// convolve returns the distribution of the sum of independent losses
// distributed as a and b (both trimmed, on the window), folded back onto
// the window: a sum above hi·h goes to +∞ (pessimistic) or is dropped
// (optimistic); a sum below lo·h is raised to lo·h (pessimistic) or
// dropped (optimistic). Every move is upward (pessimistic) or downward
// (optimistic), so the bound's direction is kept (see EpsilonPLD).
// Negative values left by FFT round-off are clamped to 0, which moves
// each value towards the exact (non-negative) one, so the ℓ1 error bound
// errL1 still holds.
func (c *convolver) convolve(a, b *pld) *pld {
	n := c.hi - c.lo + 1
	la, lb := a.i1-a.i0+1, b.i1-b.i0+1
	size := 1
	for size < la+lb-1 {
		size *= 2
	}
	fft := c.ffts[size]
	if fft == nil {
		fft = fourier.NewFFT(size)
		c.ffts[size] = fft
	}
	bufA := make([]float64, size)
	copy(bufA, a.p[a.i0:a.i1+1])
	ca := fft.Coefficients(nil, bufA)
	if a == b {
		for i := range ca {
			ca[i] *= ca[i]
		}
	} else {
		bufB := make([]float64, size)
		copy(bufB, b.p[b.i0:b.i1+1])
		cb := fft.Coefficients(nil, bufB)
		for i := range ca {
			ca[i] *= cb[i]
		}
	}
	fft.Sequence(bufA, ca)
	scale := 1 / float64(size)
	out := &pld{h: c.h, lo: c.lo, p: make([]float64, n)}
	// Index k of the linear convolution is loss (lo+a.i0 + lo+b.i0 + k)·h,
	// window index g = lo + a.i0 + b.i0 + k.
	var above, below float64
	for k := 0; k < la+lb-1; k++ {
		v := math.Max(bufA[k]*scale, 0)
		switch g := c.lo + a.i0 + b.i0 + k; {
		case g < 0:
			below += v
		case g >= n:
			above += v
		default:
			out.p[g] = v
		}
	}
	var massA, massB, norm2A, norm2B float64
	for _, v := range a.p[a.i0 : a.i1+1] {
		massA += v
		norm2A += v * v
	}
	for _, v := range b.p[b.i0 : b.i1+1] {
		massB += v
		norm2B += v * v
	}
	out.inf = a.inf + b.inf - a.inf*b.inf
	if c.r == pessimistic {
		out.p[0] += below
		out.inf += above
	}
	fresh := math.Sqrt(float64(la+lb-1)) * fftRoundOff * 0x1p-53 * math.Log2(float64(2*size)) * (math.Sqrt(norm2A) + math.Sqrt(norm2B))
	// ‖(a+e)∗(b+f) − a∗b‖₁ ≤ ‖e‖₁‖b‖₁ + ‖a‖₁‖f‖₁ + ‖e‖₁‖f‖₁ (Young), and
	// the inf masses combine likewise.
	out.errL1 = a.errL1*(massB+b.inf) + b.errL1*(massA+a.inf) + a.errL1*b.errL1 + fresh
	c.trim(out)
	return out
}

// compose returns the T-fold composition of d by repeated squaring.
func (c *convolver) compose(d *pld, t int) *pld {
	var acc *pld
	base := d
	for {
		if t&1 == 1 {
			if acc == nil {
				acc = base
			} else {
				acc = c.convolve(acc, base)
			}
		}
		t >>= 1
		if t == 0 {
			return acc
		}
		base = c.convolve(base, base)
	}
}

// windowTail is the tail mass, relative to δ, at which pldWindow cuts
// the loss window (see EpsilonPLD).
const windowTail = 1e-6

// pldWindow returns the grid window [lo, hi] (in units of h) for T steps:
// by the Chernoff bound on the RDP (Mironov, Talwar & Zhang's A_α bounds
// both directions' Rényi divergences, Section 3 of arXiv:1908.10530v1),
// the privacy loss L_m of m ≤ T steps, in either direction, satisfies
//
//	P(L_m > t) ≤ exp((α−1)(T·ε(α) − t)),  P(L_m < −t) ≤ exp((α−1)(T·ε(α) − t))
//
// (Markov's inequality on e^((α−1)L) under P, and on e^(−(α−1)L) = (Q/P)^(α−1)
// under P, whose mean is E_Q[(Q/P)^(α−2)] = exp((α−2)·D_{α−1}(Q‖P)) ≤
// exp((α−1)·D_α(Q‖P)) (Rényi divergences grow with the order) with
// D_α(Q‖P) ≤ ε(α)). The window is ±t with t the smallest such bound
// at tail mass tail over DPSGDOrders, plus a margin of 2 grid points.
// The window only affects tightness: the mass outside it is moved to +∞
// or up to the window's lower end (pessimistic), never down.
func (m SampledGaussian) pldWindow(h, tail float64, maxBins int, coarsen bool) (hOut float64, lo, hi int, err error) {
	t := math.Inf(1)
	logTail := math.Log(tail)
	for _, a := range DPSGDOrders {
		r, err := m.RDP(a)
		if err != nil {
			return 0, 0, 0, err
		}
		t = math.Min(t, r-logTail/(a-1))
	}
	if n := t / h; n+3 > float64(maxBins/2) {
		if !coarsen {
			return 0, 0, 0, fmt.Errorf("%w: the privacy loss of %v spans [−%.3g, %.3g], more than %d grid points at interval h = %v; use a larger h", ErrInvalid, m, t, t, maxBins, h)
		}
		h = t / float64(maxBins/2-3)
	}
	hi = int(math.Ceil(t/h)) + 2
	return h, -hi, hi, nil
}

// String describes m: "σ=1.1, q=0.004, T=1000".
func (m SampledGaussian) String() string {
	return fmt.Sprintf("σ=%v, q=%v, T=%d", m.Sigma, m.Q, m.Steps)
}

// composedPLDs returns the T-fold composed privacy-loss distributions of
// both directions ("remove", "add").
func (m SampledGaussian) composedPLDs(opt PLDOptions, tail float64, r pldRounding) ([2]*pld, error) {
	var out [2]*pld
	h, maxBins, err := opt.interval(m)
	if err != nil {
		return out, err
	}
	h, lo, hi, err := m.pldWindow(h, tail, maxBins, opt.Interval == 0)
	if err != nil {
		return out, err
	}
	c := newConvolver(h, lo, hi, r)
	for i, dir := range []pldDirection{pldRemove, pldAdd} {
		s := sgmPair{q: m.Q, sigma: m.Sigma, dir: dir}
		d := s.discretize(h, lo, hi, r)
		if err := d.checkMass(r); err != nil {
			return out, fmt.Errorf("one step of %v: %w", m, err)
		}
		c.trim(d)
		out[i] = c.compose(d, m.Steps)
		if err := out[i].checkMass(r); err != nil {
			return out, fmt.Errorf("%v: %w", m, err)
		}
	}
	return out, nil
}

// massTolerance bounds how far the total mass of a pessimistic PLD may
// stray from 1 before checkMass calls it a numerical failure: every move
// of the discretisation and composition conserves mass, so only
// round-off (≪ 1e-6) remains.
const massTolerance = 1e-6

// checkMass returns an ErrNumerical error when d holds a NaN or an
// infinity, or (pessimistic) its mass, inf included, is not 1 to within
// massTolerance: a guard, so that a numerical failure is an error (and
// the caller's other accountant is used), never a wrong ε.
func (d *pld) checkMass(r pldRounding) error {
	mass := d.inf
	for _, v := range d.p {
		mass += v
	}
	if math.IsNaN(mass) || math.IsInf(mass, 0) || math.IsNaN(d.errL1) || (r == pessimistic && math.Abs(mass-1) > massTolerance+d.errL1) {
		return fmt.Errorf("%w: privacy-loss distribution has total mass %v (want 1)", ErrNumerical, mass)
	}
	return nil
}

// deltaAt returns δ(ε) = inf + Σ_{l > ε} p(l)·(1 − e^(ε−l)) of d.
func (d *pld) deltaAt(eps float64) float64 {
	s := d.inf
	for i := len(d.p) - 1; i >= 0; i-- {
		l := d.loss(i)
		if l <= eps {
			break
		}
		s += d.p[i] * -math.Expm1(eps-l)
	}
	return s
}

// epsilonAt returns the smallest ε ≥ 0 with δ(ε) ≤ delta, +Inf when the
// mass at +∞ alone exceeds delta. On [l_{j−1}, l_j), δ(ε) = A_j − e^ε·B_j
// with A_j = inf + Σ_{i ≥ j} p_i and B_j = Σ_{i ≥ j} p_i e^(−l_i), so the
// crossing is solved exactly there: ε = log(A_j − δ) − log B_j. B_j is
// kept as its log, so that neither e^(−l) for a very negative l nor e^ε
// for a large ε overflows.
func (d *pld) epsilonAt(delta float64) float64 {
	if d.inf > delta {
		return math.Inf(1)
	}
	a, logB := d.inf, math.Inf(-1)
	for j := len(d.p) - 1; j > 0; j-- {
		if d.p[j] > 0 {
			a += d.p[j]
			logB = logAdd(logB, math.Log(d.p[j])-d.loss(j))
		}
		lPrev := d.loss(j - 1)
		// δ at the left end of [l_{j−1}, l_j).
		if a-math.Exp(lPrev+logB) > delta {
			return math.Max(math.Log(a-delta)-logB, 0)
		}
		if lPrev <= 0 {
			return 0
		}
	}
	return 0
}

// DeltaPLD returns a δ for which the T steps are (ε, δ)-DP, computed by the
// privacy-loss-distribution (PLD) accountant: the larger of the two
// directions' δ(ε) (see EpsilonPLD for the method and why it is an upper
// bound). It is tighter than Delta (RDP), at a cost of milliseconds.
//
// Errors (wrapping ErrInvalid): see Validate; ε < 0 or NaN; a bad
// opt.Interval.
func (m SampledGaussian) DeltaPLD(epsilon float64, opt PLDOptions) (float64, error) {
	return m.deltaPLD(epsilon, opt, pessimistic)
}

func (m SampledGaussian) deltaPLD(epsilon float64, opt PLDOptions, r pldRounding) (float64, error) {
	if err := m.Validate(); err != nil {
		return 0, err
	}
	if math.IsNaN(epsilon) || epsilon < 0 {
		return 0, fmt.Errorf("%w: ε must be ≥ 0 (got %v)", ErrInvalid, epsilon)
	}
	if _, _, err := opt.interval(m); err != nil {
		return 0, err
	}
	if m.Q == 0 || math.IsInf(epsilon, 1) {
		return 0, nil
	}
	// The window's tail mass: 1e-6 of the RDP δ at ε (an upper
	// bound on the true δ), so that truncation costs at most 1e-6 of it;
	// at least 1e-300.
	rdpDelta, _, err := m.Delta(epsilon)
	if err != nil {
		return 0, err
	}
	ds, err := m.composedPLDs(opt, math.Max(windowTail*rdpDelta, 1e-300), r)
	if err != nil {
		return 0, err
	}
	var best float64
	for _, d := range ds {
		v := d.deltaAt(epsilon)
		if r == pessimistic {
			v += d.errL1
		} else {
			v -= d.errL1
		}
		best = math.Max(best, v)
	}
	return math.Min(math.Max(best, 0), 1), nil
}

// EpsilonPLD returns an ε for which the T steps are (ε, δ)-DP, computed by
// a numerical privacy-loss-distribution (PLD) accountant (Meiser &
// Mohammadi 2018; Koskela, Jälkö & Honkela 2020, "Computing tight
// differential privacy guarantees using FFT", AISTATS,
// [arXiv:1906.03049]; Google's dp_accounting PLD accountant; error
// analysis as in Gopi, Lee & Wutschitz 2021, [arXiv:2106.02848]). It is
// the larger of the ε of the two dominating pairs of add-or-remove-one
// adjacency (Zhu, Dong & Wang 2022, [arXiv:2106.08567]):
//
//	remove: P = (1−q)·N(0, σ²) + q·N(1, σ²)  against  Q = N(0, σ²)
//	add:    P = N(0, σ²)  against  Q = (1−q)·N(0, σ²) + q·N(1, σ²)
//
// For each, the privacy loss L = log(dP/dQ) under P is discretised on the
// grid h·ℤ by connect-the-dots (Doroshenko, Ghazi, Kamath, Kumar &
// Manurangsi 2022, [arXiv:2207.04380]), composed T-fold by FFT
// convolution with repeated squaring, and
//
//	δ(ε) = mass at +∞ + Σ_{l > ε} p(l)·(1 − e^(ε−l))
//
// is inverted exactly between grid points.
//
// Deviation: the simplest pessimistic discretisation, rounding each loss
// UP to the grid (what issue 26 asked for), shifts the composed loss up
// by ≈ T·h/2 on average, so ε errs by about
// that much: at T = 14063 a 1 % ε needs h ≈ 1e-6 and millions of grid
// points. Connect-the-dots is pessimistic too (below) but errs by O(h²)
// per step (measured in the tests: the δ gap shrinks 16-fold when h
// shrinks 4-fold), so h ≈ 1e-3 suffices. Rounding down, the optimistic
// counterpart used by the tests, errs by up to T·h the other way.
//
// Why it is an upper bound:
//   - the discretised pair dominates the true one (its privacy profile is
//     the chordal interpolant of the true convex profile in e^ε, which
//     lies above it), and composition preserves dominance (tensor
//     products of dominating pairs dominate, since trade-off functions
//     compose monotonically: Dong, Roth & Su 2022, [arXiv:1905.02383],
//     composition of f-DP; the lemma number was not checked);
//   - truncation only raises losses: a composed loss above the window
//     goes to +∞ (counted fully in δ), one below it is raised to the
//     window's lower end; δ(ε) = E_P[(1 − e^(ε−L))₊] is non-decreasing in
//     each loss, and the composed loss is the sum of the steps' losses,
//     so raising any of them at any stage can only raise δ;
//   - the FFTs are zero-padded to twice the window, so there is no
//     wrap-around;
//   - round-off: an ℓ1 estimate of the error of the computed distribution
//     is carried through every convolution (Higham's FFT bound, see
//     fftRoundOff, and the round-off of the discretisation's sums, scaled
//     by the number of terms summed, see hatMasses) and added to δ before
//     ε is solved for (so ε is that of δ minus the budget). It is a
//     worst-case estimate, not a proof: the per-term round-off is assumed
//     (64 units of rounding), the quadrature's truncation error is not
//     budgeted (it is far below rounding, see integrate), and Higham's
//     radix-2 FFT bound is applied to gonum's mixed-radix FFT. Measured
//     at the defaults:
//     1e-8 to 2e-8 for T of a few thousand to 14063 (σ = 1.1,
//     q = 256/60000), ~2e-7 at T = 10⁵; where it approaches δ, ε grows
//     (+Inf once it exceeds δ) and the RDP accountant is the better bound.
//
// The window is ± the RDP tail bound at 1e-6·δ (pldWindow), so the mass
// it moves is negligible. ε = +Inf when the mass at +∞ exceeds δ
// (never at the defaults for σ ≥ 0.5).
//
// Errors (wrapping ErrInvalid): see Validate; δ outside (0, 1) or NaN;
// a bad opt.Interval; a window of more than 2²² grid points. Wrapping
// ErrNumerical: a distribution that lost mass or holds a NaN (a guard; not
// expected).
//
// [arXiv:1906.03049]: https://arxiv.org/abs/1906.03049
// [arXiv:2106.02848]: https://arxiv.org/abs/2106.02848
// [arXiv:2106.08567]: https://arxiv.org/abs/2106.08567
// [arXiv:2207.04380]: https://arxiv.org/abs/2207.04380
// [arXiv:1905.02383]: https://arxiv.org/abs/1905.02383
func (m SampledGaussian) EpsilonPLD(delta float64, opt PLDOptions) (float64, error) {
	return m.epsilonPLD(delta, opt, pessimistic)
}

func (m SampledGaussian) epsilonPLD(delta float64, opt PLDOptions, r pldRounding) (float64, error) {
	if err := m.Validate(); err != nil {
		return 0, err
	}
	if math.IsNaN(delta) || delta <= 0 || delta >= 1 {
		return 0, fmt.Errorf("%w: δ must be in (0, 1) (got %v)", ErrInvalid, delta)
	}
	if _, _, err := opt.interval(m); err != nil {
		return 0, err
	}
	if m.Q == 0 {
		return 0, nil
	}
	ds, err := m.composedPLDs(opt, windowTail*delta, r)
	if err != nil {
		return 0, err
	}
	var best float64
	for _, d := range ds {
		target := delta - d.errL1
		if r == optimistic {
			target = delta + d.errL1
		}
		if target <= 0 {
			return math.Inf(1), nil
		}
		best = math.Max(best, d.epsilonAt(target))
	}
	return best, nil
}

// PLDInterval returns the grid width h that EpsilonPLD(delta, opt) uses:
// opt.Interval, or DefaultPLDInterval coarsened if the loss window would
// need more than 2¹⁷ grid points. Errors as EpsilonPLD's.
func (m SampledGaussian) PLDInterval(delta float64, opt PLDOptions) (float64, error) {
	if err := m.Validate(); err != nil {
		return 0, err
	}
	if math.IsNaN(delta) || delta <= 0 || delta >= 1 {
		return 0, fmt.Errorf("%w: δ must be in (0, 1) (got %v)", ErrInvalid, delta)
	}
	h, maxBins, err := opt.interval(m)
	if err != nil {
		return 0, err
	}
	h, _, _, err = m.pldWindow(h, windowTail*delta, maxBins, opt.Interval == 0)
	return h, err
}
