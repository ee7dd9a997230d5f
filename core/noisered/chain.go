package noisered

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
)

// record records a drawn chain in rng's trace (mech.Record): the levels'
// scales Δ/ε_t, least private first, and the guarantee of the whole chain,
// ε_T ex post (a prefix to step t costs ε_t, [LNRWW17] Theorem 2.7).
func record(rng *rand.Rand, mechanism string, delta float64, eps, scale []float64, n int) {
	mech.Record(rng, mech.Release{Mechanism: mechanism, Scale: scale[len(scale)-1], Sensitivity: delta, Dim: n,
		Scales:    slices.Clone(scale),
		Guarantee: privacy.ExPostEps(eps[len(eps)-1], "the whole noise-reduction chain (Ligett et al. 2017, Algorithm 1; a prefix to step t costs ε_t)")})
}

// Chain is Noise Reduction ([LNRWW17] Algorithm 1, after [KHP17]) released
// lazily: Next steps through v̂_1, v̂_2, …, v̂_T (most private first), with
// exactly the joint distribution of Algorithm 1 (see [Reduce] for the
// recursion). [New] draws all the randomness up front, but in O(events)
// time and memory instead of the literal algorithm's O(T·len(v)); advancing
// one step costs O(number of coordinates that change).
//
// Event sampling. Per coordinate, Algorithm 1 is a sequence of independent
// decisions: step s (going down from s = T−1 to 1) adds a fresh Lap(Δ/ε_s)
// with probability 1 − (ε_s/ε_{s+1})² and otherwise copies. Only the adds ("events") matter,
// so New samples them directly. Being at level t+1, the probability that
// steps t, …, s+1 all copy and step s adds telescopes:
//
//	P(next add at s) = ∏_{u=s+1..t} (ε_u/ε_{u+1})² · (1 − (ε_s/ε_{s+1})²)
//	                 = (ε_{s+1}² − ε_s²) / ε_{t+1}²,     1 ≤ s ≤ t
//	P(no add in 1…t) = ε_1² / ε_{t+1}²
//
// which is the law of the s with ε_s² < U·ε_{t+1}² ≤ ε_{s+1}² for
// U ~ Uniform(0, 1) (no add when U·ε_{t+1}² ≤ ε_1²), found by a binary
// search on the grid narrowed by a guide table (O(1) per event on typical
// grids). Given an add at s, the decisions at steps s−1, …, 1 are
// independent of those above, so the search restarts from level s with a
// fresh U. The Laplace draw of an add at s has scale Δ/ε_s as in the
// algorithm; v̂_T = v + Lap(Δ/ε_T) is drawn first. Hence the joint law of
// (v̂_1, …, v̂_T) is exactly Algorithm 1's, not an approximation. The
// expected number of adds per coordinate is Σ_s (1 − (ε_s/ε_{s+1})²) ≤
// 2·ln(ε_T/ε_1), about 31 for the grid Geometric(1e-5, 70, 1000) instead of
// 999 Bernoulli draws.
//
// Numerics: the search compares 2·ln ε_s < ln U + 2·ln ε_{t+1}, in log
// space, so that ε² cannot overflow or underflow for any finite ε > 0. This
// moves each boundary by a few ulps (a relative error of about 1e-15 in the
// probabilities); two adjacent levels whose logarithms round to the same
// value get add probability 0 instead of < 1e-15.
//
// Bit-faithful values. Each event records the coordinate and the value
// v̂_{s+1} before the add, and v̂_s is computed as v̂_{s+1} + L, the same
// floating-point operation as the backward recursion. Events are grouped by step (a stable counting
// sort), and Next restores the recorded v̂_{s+1} of the coordinates that
// had an add at step s. Values are never recomputed by subtraction, so the
// forward walk reproduces the backward recursion's values bit for bit.
//
// Draw order (for reproducibility): coordinates in order; for each, one
// Laplace draw for v̂_T, then, while the current level t+1 > 1, one uniform
// U and, on an add, one Laplace draw. Deviation: none in distribution from
// Algorithm 1; the draws are consumed in a different order from [Reduce],
// so one seed gives different (equally distributed) outputs.
//
// Privacy: as for Algorithm 1, the prefix (v̂_1, …, v̂_t) released by the
// first t calls of Next is ε_t-differentially private when Δ bounds the ℓ1
// sensitivity of v ([LNRWW17] Theorem 2.7). The unreleased levels are held
// in memory only.
//
// A Chain is not safe for concurrent use.
//
// [KHP17]: https://arxiv.org/abs/1504.00429
// [LNRWW17]: https://arxiv.org/abs/1705.10829v1
type Chain struct {
	eps []float64 // ε_1 … ε_T (copy)
	cur []float64 // v̂_t; before the first Next, v̂_1

	// Add events at 0-based step k (v̂_{k+1} = v̂_{k+2} + L in 1-based
	// levels) are coord[start[k]:start[k+1]] in ascending coordinate order,
	// with prev[e] the value v̂_{k+2} before the add. Steps 0 … T−2; the
	// initial draws of v̂_T are not stored (the walk never goes past T).
	start []int
	coord []int32
	prev  []float64

	changed []int
	t       int // current step, 1-based; 0 before the first Next
	events  int // add events + len(v) initial draws
}

// New draws Noise Reduction's whole chain v̂_1, …, v̂_T for v with ℓ1
// sensitivity delta and privacy levels eps (ε_t = eps[t−1]) from rng, by the
// event sampling described at [Chain], and returns it positioned before
// step 1. v and eps are copied; rng is not retained.
//
// delta: required, finite and > 0. eps: required, non-empty, finite, > 0,
// strictly increasing, with delta/eps[0] finite and delta/eps[T−1] > 0.
// v: finite (may be empty). New returns an error, never panics, for any
// other input.
func New(rng *rand.Rand, v []float64, delta float64, eps []float64) (*Chain, error) {
	if err := validate("new", v, delta, eps); err != nil {
		return nil, err
	}
	// The resampling coins decide which levels add fresh noise, so they
	// are as private as the noise: they come from the same generator (in
	// secure mode, mech.CryptoRand; see mech.IsSecure).
	n, T := len(v), len(eps)
	scale := make([]float64, T)
	expAdds := 0.0
	for k, e := range eps {
		scale[k] = delta / e
		if k+1 < T {
			r := e / eps[k+1]
			expAdds += 1 - r*r
		}
	}
	g := newLogGrid(eps)
	logSq := g.logSq

	// Pass 1: events in generation order (coordinate-major), with the step
	// of each; coordinate i owns steps[end[i−1]:end[i]].
	hint := int(math.Min(float64(n)*(expAdds*1.05+1), float64(n)*float64(T-1)))
	steps := make([]int32, 0, hint)
	prevs := make([]float64, 0, hint)
	end := make([]int, n)
	count := make([]int, T)
	cur := make([]float64, n)
	top := scale[T-1]
	for i, x := range v {
		val := x + mech.LaplaceNoise(rng, top)
		for lvl := T - 1; lvl > 0; { // lvl: 0-based level of the current value
			// thr = ln U + logSq[lvl] ≤ logSq[lvl] because ln U ≤ 0
			// (U = 0 gives −Inf: no more adds). The next add is at the step
			// s = j−1 for the smallest j with logSq[j] ≥ thr, i.e.
			// logSq[s] < thr ≤ logSq[s+1]; j = 0 means none.
			thr := math.Log(rng.Float64()) + logSq[lvl]
			j := g.first(thr, lvl)
			if j == 0 {
				break
			}
			s := j - 1
			steps = append(steps, int32(s))
			prevs = append(prevs, val)
			count[s]++
			val += mech.LaplaceNoise(rng, scale[s])
			lvl = s
		}
		cur[i] = val
		end[i] = len(steps)
	}

	// Pass 2: stable counting sort by step, so that the coordinates of a
	// step come out in ascending order.
	start := make([]int, T)
	for k := 1; k < T; k++ {
		start[k] = start[k-1] + count[k-1]
	}
	pos := slices.Clone(start)
	coord := make([]int32, len(steps))
	prev := make([]float64, len(steps))
	e := 0
	for i := range n {
		for ; e < end[i]; e++ {
			k := steps[e]
			p := pos[k]
			coord[p] = int32(i)
			prev[p] = prevs[e]
			pos[k]++
		}
	}

	record(rng, "noise-reduction", delta, eps, scale, n)
	return &Chain{
		eps:     slices.Clone(eps),
		cur:     cur,
		start:   start,
		coord:   coord,
		prev:    prev,
		changed: make([]int, 0, n),
		events:  n + len(steps),
	}, nil
}

// Len returns T, the number of privacy levels.
func (c *Chain) Len() int { return len(c.eps) }

// Step returns the current step t (1-based): 0 before the first Next, T
// after the last.
func (c *Chain) Step() int { return c.t }

// Epsilon returns ε_t of the current step t, the privacy level of the
// prefix released so far; 0 before the first Next (nothing released).
func (c *Chain) Epsilon() float64 {
	if c.t == 0 {
		return 0
	}
	return c.eps[c.t-1]
}

// Next advances to step t+1 and reports whether there was one: the first
// call moves to t = 1 (v̂_1), and Next returns false, leaving Step and Value
// unchanged and Changed empty, once t = T.
func (c *Chain) Next() bool {
	c.changed = c.changed[:0]
	switch {
	case c.t >= len(c.eps):
		return false
	case c.t == 0:
		for i := range c.cur {
			c.changed = append(c.changed, i)
		}
	default:
		// Leave step k+1 (0-based k): restore v̂_{k+2} where step k added.
		k := c.t - 1
		for e := c.start[k]; e < c.start[k+1]; e++ {
			i, p := c.coord[e], c.prev[e]
			if math.Float64bits(c.cur[i]) != math.Float64bits(p) {
				c.changed = append(c.changed, int(i))
			}
			c.cur[i] = p
		}
	}
	c.t++
	return true
}

// Value returns v̂_t of the current step, or nil before the first Next.
// The slice aliases the chain's storage: it is valid until the next call of
// Next and must not be modified (Next updates only the coordinates that
// change).
func (c *Chain) Value() []float64 {
	if c.t == 0 {
		return nil
	}
	return c.cur
}

// Changed returns, in ascending order, the coordinates whose value changed
// (in its bits) in the last call of Next: all coordinates at t = 1, none
// after a Next that returned false or before the first Next. A coordinate
// whose Laplace draw was absorbed by rounding is not listed. The slice
// aliases the chain's storage and is valid until the next call of Next.
func (c *Chain) Changed() []int { return c.changed }

// Events returns the number of events New drew: len(v) initial draws of
// v̂_T plus every add. It measures the cost of New and of a full walk.
func (c *Chain) Events() int { return c.events }

// logGrid holds ℓ_k = 2·ln ε_{k+1} (0-based k) and a guide table that
// makes the search of [New] O(1) on typical grids: the range [ℓ_0, ℓ_{T−1}]
// is cut into M = T buckets of equal width w, and guide[b] is the smallest
// k with ℓ_k ≥ ℓ_0 + b·w (guide[M] = T−1). A threshold in bucket b has its
// answer in [guide[b], guide[b+1]] (Devroye 1986, "Non-Uniform Random
// Variate Generation", Section III.2.4, guide tables). The table only
// narrows a binary search, whose bracket is verified, so the result does not
// depend on how the bucket index rounds.
type logGrid struct {
	logSq []float64
	invW  float64 // 1/w, 0 when all ℓ_k round to one value
	guide []int32 // M+1 entries
}

func newLogGrid(eps []float64) *logGrid {
	T := len(eps)
	ls := make([]float64, T)
	for k, e := range eps {
		ls[k] = 2 * math.Log(e) // non-decreasing; see the Chain doc
	}
	g := &logGrid{logSq: ls, guide: make([]int32, T+1)}
	w := (ls[T-1] - ls[0]) / float64(T)
	if w > 0 && !math.IsInf(w, 0) {
		g.invW = 1 / w
	}
	k := 0
	for b := 0; b <= T; b++ {
		edge := ls[0] + float64(b)*w
		if b == T || g.invW == 0 {
			edge = ls[T-1]
		}
		for k < T-1 && ls[k] < edge {
			k++
		}
		g.guide[b] = int32(k)
	}
	return g
}

// first returns the smallest j in [0, lvl] with ℓ_j ≥ thr, given
// thr ≤ ℓ_lvl.
func (g *logGrid) first(thr float64, lvl int) int {
	ls := g.logSq
	if !(thr > ls[0]) { // also thr = −Inf
		return 0
	}
	m := len(g.guide) - 1
	f := (thr - ls[0]) * g.invW // ≥ 0; clamp before converting to int
	b := m - 1
	if f < float64(m-1) {
		b = int(f)
	}
	lo, hi := int(g.guide[b]), min(int(g.guide[b+1]), lvl)
	// The answer j satisfies ℓ_j ≥ thr and (j = 0 or ℓ_{j−1} < thr); if
	// rounding of b broke the bracket, search the whole range instead.
	if lo > hi || ls[hi] < thr || (lo > 0 && ls[lo-1] >= thr) {
		lo, hi = 0, lvl
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if ls[mid] >= thr {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
