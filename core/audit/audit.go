// Package audit computes statistically valid lower bounds on the privacy
// loss ε of a randomized mechanism from samples of its output on a pair of
// neighbouring datasets, in the style of the published black-box DP audits
// (Ding et al. 2018, "Detecting Violations of Differential Privacy" (StatDP);
// Bichsel et al. 2021, "DP-Sniper"; Jagielski, Ullman & Oprea 2020,
// "Auditing Differentially Private Machine Learning").
//
// # Method
//
// A mechanism M is (ε, δ)-DP when for every pair of neighbouring datasets
// D, D′ and every output event S
//
//	P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S] + δ.                       (1)
//
// Hence for any fixed S, with p₀ = P[M(D) ∈ S] and p₁ = P[M(D′) ∈ S],
// ε ≥ ln((p₀ − δ)/p₁). The audit estimates p₀ from below and p₁ from above
// with one-sided Clopper–Pearson bounds, each at level 1 − α/2, so that
//
//	ε_lo = ln((p₀_lo − δ) / p₁_hi)                               (2)
//
// is a lower bound on the true ε of M with probability ≥ 1 − α (a union
// bound over the two intervals; Jagielski et al. 2020, Section 3). A claim
// (ε, δ) is violated when ε_lo > ε.
//
// The event S must not depend on the samples used in (2). The audit
// therefore works in two stages with independent draws: a selection stage
// draws Select outputs on each side, scores every candidate event by the
// same bound (2) and keeps the best; a measurement stage draws Measure fresh
// outputs per side and evaluates (2) for that one event. Candidate events
// are, for every statistic the mechanism's sampler reports, the half-lines
// {s ≤ t} and {s > t} at up to Cuts thresholds t spread over the pooled
// selection sample's ranks, and for a statistic with at most 64 distinct
// values also the points {s = v}; each in both directions (D as the
// numerator, and D′). With one statistic per draw and one threshold event,
// this is the StatDP/DP-Sniper construction with a threshold classifier.
//
// A mechanism's output is mapped by its sampler to a few real statistics
// (a projection, an index, a difference of counts) chosen where the two
// output distributions differ most; the lower bound is valid whatever they
// are, but only a good choice gets close to the true ε.
//
// Randomness comes from the *rand.Rand passed in, so an audit replays
// exactly; with a fixed seed, the verdict is a fixed function of the seed.
package audit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// Claim is the privacy a mechanism claims for one release.
type Claim struct {
	// Epsilon is the claimed ε; finite and ≥ 0.
	Epsilon float64
	// Delta is the claimed δ; in [0, 1).
	Delta float64
}

// Sampler draws one release of the mechanism on dataset D (side 0) or its
// neighbour D′ (side 1), taking all its randomness from rng, and writes the
// release's statistics into dst (len(dst) = the Options' Stats).
type Sampler func(dst []float64, rng *rand.Rand, side int) error

// Options configures Run.
type Options struct {
	// Stats is the number of statistics per release; >= 1.
	Stats int
	// Select and Measure are the draws per side of the selection and the
	// measurement stages; >= 100 each.
	Select, Measure int
	// Confidence is 1 − α of the lower bound; zero means 0.95. In (0, 1).
	Confidence float64
	// Cuts is the number of thresholds tried per statistic; zero means 200,
	// otherwise >= 2.
	Cuts int
}

// Event is an output event on one statistic.
type Event struct {
	// Stat is the index of the statistic.
	Stat int
	// Op is "<=", ">" or "==".
	Op string
	// T is the threshold (or the value for "==").
	T float64
	// Reverse is true when D′ is the numerator side of (1).
	Reverse bool
}

// String describes the event, e.g. "s1 > 0.25 (D′ over D)".
func (e Event) String() string {
	dir := "D over D′"
	if e.Reverse {
		dir = "D′ over D"
	}
	return fmt.Sprintf("s%d %s %s (%s)", e.Stat, e.Op, strconv.FormatFloat(e.T, 'g', 6, 64), dir)
}

func (e Event) holds(s []float64) bool {
	v := s[e.Stat]
	switch e.Op {
	case "<=":
		return v <= e.T
	case ">":
		return v > e.T
	}
	return v == e.T
}

// Result is the outcome of one audit.
type Result struct {
	Claim Claim
	// Event is the event selected on the selection draws.
	Event Event
	// K0 and K1 count the measurement draws in Event on the numerator and
	// the denominator side, of N draws each.
	K0, K1, N int
	// P0Lo and P1Hi are the one-sided Clopper–Pearson bounds of (2).
	P0Lo, P1Hi float64
	// EpsLower is ε_lo of (2), floored at 0.
	EpsLower float64
	// EpsPoint is the plug-in estimate ln((K0/N − δ)/(K1/N)), floored at 0
	// like EpsLower (0 also when undefined, +Inf when K1 = 0 < K0/N − δ).
	EpsPoint float64
	// SelectEps is the bound of the event on the selection draws (Wilson's
	// bounds; biased up by the selection; for information only).
	SelectEps float64
	// Violated reports EpsLower > Claim.Epsilon.
	Violated bool
}

// ErrOptions reports invalid options or claims.
var ErrOptions = errors.New("audit: invalid options")

// Run audits one mechanism: it draws the selection sample (Select draws per
// side, side 0 first), picks the event with the largest lower bound on it,
// draws the measurement sample (Measure draws per side) and returns the
// lower bound (2) on it. It returns ctx's error once ctx is done (checked
// every 1024 draws; the check draws nothing).
func Run(ctx context.Context, rng *rand.Rand, sample Sampler, claim Claim, o Options) (Result, error) {
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.Cuts == 0 {
		o.Cuts = 200
	}
	switch {
	case o.Stats < 1:
		return Result{}, fmt.Errorf("%w: Stats must be >= 1 (got %d)", ErrOptions, o.Stats)
	case o.Select < 100 || o.Measure < 100:
		return Result{}, fmt.Errorf("%w: Select and Measure must be >= 100 (got %d, %d)", ErrOptions, o.Select, o.Measure)
	case !(o.Confidence > 0 && o.Confidence < 1):
		return Result{}, fmt.Errorf("%w: Confidence must be in (0, 1) (got %v)", ErrOptions, o.Confidence)
	case o.Cuts < 2:
		return Result{}, fmt.Errorf("%w: Cuts must be >= 2 (got %d)", ErrOptions, o.Cuts)
	case !(claim.Epsilon >= 0) || math.IsInf(claim.Epsilon, 1):
		return Result{}, fmt.Errorf("%w: claimed ε must be finite and >= 0 (got %v)", ErrOptions, claim.Epsilon)
	case !(claim.Delta >= 0 && claim.Delta < 1):
		return Result{}, fmt.Errorf("%w: claimed δ must be in [0, 1) (got %v)", ErrOptions, claim.Delta)
	}
	alpha := 1 - o.Confidence
	sel, err := draw(ctx, rng, sample, o.Stats, o.Select)
	if err != nil {
		return Result{}, err
	}
	ev, selEps := selectEvent(sel, o.Stats, o.Select, o.Cuts, claim.Delta, alpha)
	meas, err := draw(ctx, rng, sample, o.Stats, o.Measure)
	if err != nil {
		return Result{}, err
	}
	num, den := 0, 1
	if ev.Reverse {
		num, den = 1, 0
	}
	r := Result{Claim: claim, Event: ev, N: o.Measure, SelectEps: selEps}
	for i := range o.Measure {
		if ev.holds(meas[num][i*o.Stats : (i+1)*o.Stats]) {
			r.K0++
		}
		if ev.holds(meas[den][i*o.Stats : (i+1)*o.Stats]) {
			r.K1++
		}
	}
	r.P0Lo = LowerCP(r.K0, r.N, alpha/2)
	r.P1Hi = UpperCP(r.K1, r.N, alpha/2)
	r.EpsLower = EpsLower(r.P0Lo, r.P1Hi, claim.Delta)
	r.EpsPoint = epsPoint(r.K0, r.K1, r.N, claim.Delta)
	r.Violated = r.EpsLower > claim.Epsilon
	return r, nil
}

// draw returns n releases per side, side 0 then side 1, as flat [n·stats]
// slices.
func draw(ctx context.Context, rng *rand.Rand, sample Sampler, stats, n int) ([2][]float64, error) {
	var out [2][]float64
	if err := ctx.Err(); err != nil {
		return out, err
	}
	for side := range 2 {
		out[side] = make([]float64, n*stats)
		for i := range n {
			if i%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return out, err
				}
			}
			dst := out[side][i*stats : (i+1)*stats]
			if err := sample(dst, rng, side); err != nil {
				return out, fmt.Errorf("audit: draw %d on side %d: %w", i, side, err)
			}
			for j, v := range dst {
				if math.IsNaN(v) {
					return out, fmt.Errorf("audit: draw %d on side %d: statistic %d is NaN", i, side, j)
				}
			}
		}
	}
	return out, nil
}

// selectEvent returns the candidate event with the largest lower bound (2)
// on the selection sample (with Wilson's bounds in place of
// Clopper–Pearson's, for speed), and that bound. Ties keep the first candidate in
// a fixed order (statistic, threshold, operator, direction), so the choice is
// deterministic.
func selectEvent(sel [2][]float64, stats, n, cuts int, delta, alpha float64) (Event, float64) {
	best, bestEps := Event{Op: ">", T: math.Inf(1)}, -1.0
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	col := make([][]float64, 2)
	pooled := make([]float64, 0, 2*n)
	for j := range stats {
		for side := range 2 {
			col[side] = col[side][:0]
			for i := range n {
				col[side] = append(col[side], sel[side][i*stats+j])
			}
			slices.Sort(col[side])
		}
		pooled = append(append(pooled[:0], col[0]...), col[1]...)
		slices.Sort(pooled)
		distinct := slices.Compact(slices.Clone(pooled))
		var cands []Event
		for _, t := range thresholds(pooled, distinct, cuts) {
			cands = append(cands, Event{Stat: j, Op: "<=", T: t}, Event{Stat: j, Op: ">", T: t})
		}
		if len(distinct) <= 64 {
			for _, v := range distinct {
				cands = append(cands, Event{Stat: j, Op: "==", T: v})
			}
		}
		for _, e := range cands {
			k := [2]int{count(col[0], e), count(col[1], e)}
			for _, rev := range []bool{false, true} {
				num, den := k[0], k[1]
				if rev {
					num, den = den, num
				}
				eps := approxEps(num, den, n, z, delta)
				if eps > bestEps {
					e.Reverse = rev
					best, bestEps = e, eps
				}
			}
		}
	}
	return best, bestEps
}

// thresholds returns up to cuts thresholds spread evenly over the ranks of
// the sorted pooled sample, or every distinct value when there are fewer.
func thresholds(pooled, distinct []float64, cuts int) []float64 {
	if len(distinct) <= cuts {
		return distinct
	}
	var ts []float64
	for c := range cuts {
		t := pooled[(c*(len(pooled)-1))/(cuts-1)]
		if len(ts) == 0 || t != ts[len(ts)-1] {
			ts = append(ts, t)
		}
	}
	return ts
}

// count returns how many of the sorted values xs lie in e (on e's
// statistic; the caller passes that statistic's column).
func count(xs []float64, e Event) int {
	le, _ := slices.BinarySearchFunc(xs, e.T, func(x, t float64) int {
		if x <= t {
			return -1
		}
		return 1
	}) // le = #{x <= t}
	switch e.Op {
	case "<=":
		return le
	case ">":
		return len(xs) - le
	}
	lt, _ := slices.BinarySearchFunc(xs, e.T, func(x, t float64) int {
		if x < t {
			return -1
		}
		return 1
	}) // #{x < t}
	return le - lt
}

// LowerCP returns the one-sided Clopper–Pearson lower confidence bound at
// level 1 − a for a binomial proportion with k successes in n trials: the
// a-quantile of Beta(k, n − k + 1), and 0 when k = 0 (Clopper & Pearson
// 1934).
func LowerCP(k, n int, a float64) float64 {
	if k <= 0 {
		return 0
	}
	return betaQuantile(float64(k), float64(n-k+1), a)
}

// UpperCP returns the one-sided Clopper–Pearson upper confidence bound at
// level 1 − a: the (1 − a)-quantile of Beta(k + 1, n − k), computed as
// 1 − (the a-quantile of Beta(n − k, k + 1)); 1 when k = n.
func UpperCP(k, n int, a float64) float64 {
	if k >= n {
		return 1
	}
	return 1 - betaQuantile(float64(n-k), float64(k+1), a)
}

// betaQuantile returns the largest float64 x below the one with I_x(a, b) = y (the regularized incomplete
// beta function, gonum's mathext.RegIncBeta) by bisection to full float64
// precision. Deviation from the obvious: gonum's InvRegIncBeta is not used,
// because it loses its accuracy in the tails the audit needs (for
// I_x(20000, 1) = 1e-7 it returns 0.937 instead of 0.99919).
func betaQuantile(a, b, y float64) float64 {
	lo, hi := 0.0, 1.0
	for range 1100 { // enough halvings to reach the smallest subnormal
		mid := lo + (hi-lo)/2
		if mid == lo || mid == hi {
			break
		}
		if mathext.RegIncBeta(a, b, mid) < y {
			lo = mid
		} else {
			hi = mid
		}
	}
	// lo (I_lo < y) errs on the safe side of both Clopper–Pearson bounds:
	// the lower bound is LowerCP = lo, the upper 1 − lo.
	return lo
}

// approxEps is (2) with cheap one-sided bounds on p0 (lower) and p1 (upper),
// Wilson's score bounds at the normal quantile z, used only to rank the
// candidate events of the selection stage (the measured bound is exact
// Clopper–Pearson).
func approxEps(k0, k1, n int, z, delta float64) float64 {
	wilson := func(k int, sign float64) float64 {
		nf := float64(n)
		p := float64(k) / nf
		c := p + z*z/(2*nf)
		r := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
		return (c + sign*r) / (1 + z*z/nf)
	}
	return EpsLower(wilson(k0, -1), wilson(k1, +1), delta)
}

// EpsLower returns ln((p0 − δ)/p1) of (2), floored at 0 (and 0 when
// p0 ≤ δ). p1 = 0 gives +Inf.
func EpsLower(p0, p1, delta float64) float64 {
	if p0-delta <= 0 {
		return 0
	}
	return math.Max(0, math.Log((p0-delta)/p1))
}

func epsPoint(k0, k1, n int, delta float64) float64 {
	return EpsLower(float64(k0)/float64(n), float64(k1)/float64(n), delta)
}
