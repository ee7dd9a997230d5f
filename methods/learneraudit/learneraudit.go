// Package learneraudit audits the privacy claim of any learner — built-in,
// registered by a user's Go module, or served by an external worker — by
// the black-box distinguishing experiment of core/audit: the learner is fit
// many times on a dataset D and on its neighbour D′ (one record replaced by
// a canary), a distinguisher reads each released model, and a one-sided
// Clopper–Pearson bound turns the two sides' frequencies of the best
// threshold event into a lower bound ε_LB on the learner's true ε (Jagielski,
// Ullman & Oprea 2020, "Auditing Differentially Private Machine Learning",
// NeurIPS, Section 3; Nasr et al. 2021, "Adversary Instantiation", use the
// same bound). A claim is violated when ε_LB exceeds the ε the learner
// returns for its releases.
//
// # Pairs
//
// Two neighbouring pairs are audited, each with its own releases:
//
//   - "adversarial": a fixed adversarial canary on a synthetic stand-in of
//     the data's shape (n rows, d columns; the rows are not the data's).
//     For the logistic loss, n−1 records at x = 0 (no influence on the
//     loss) and the replaced record at x = e₁ with label +1 on D and −1 on
//     D′, the replace-one pair whose gradients differ most at θ near 0
//     (kinds/privaudit's auditRows); for the Huber loss, (n−2)/2 pairs at
//     e₁ with labels ±1 hold θ₁ near 0 in the loss's linear part, where the
//     replaced record's gradient flips from −e₁ to +e₁ and the minimizer
//     moves by the full sensitivity 2/(nλ) (kinds/privaudit's
//     balancedRows).
//   - "search": the given base rows (the spec's data, or the synthetic
//     stand-in when there are none) with the last record replaced by the
//     canary found by a search over candidate records (as the mechanism
//     audit searches PrivSPDMat's replaced records): ±e_j with either label
//     for the rarest features j, and the replaced record itself negated or
//     with its label flipped. The learner itself scores the candidates: a
//     few pilot releases per side (streams of their own, not reused by the
//     audit) and the standardized difference of the means of the
//     distinguisher's first statistic; the largest wins.
//
// # Distinguisher
//
// Each release is read through the Model interface only, so any learner
// qualifies: s0 = θ·u, the projection of the released model on the unit
// direction u of y_r·x_r − y_c·x_c (r the record of D, c the canary: the
// direction in which the replaced record's gradient moves the minimizer),
// s1 = y_c·θ·x_c, the canary's margin (a monotone function of its loss),
// and s2 = ‖θ − μ₁‖₂ − ‖θ − μ₀‖₂ with μ_s the mean released θ of side s's
// selection half (θ read as the model's scores of e₁, …, e_d, so a linear
// model is assumed for s2 only): the log-likelihood ratio of noise with
// density ∝ exp(−β‖b‖₂), output perturbation's, up to β. core/audit.Run
// chooses the event {s ≤ t} or {s > t} on the selection half of the
// releases and measures it on the held-out half.
//
// # Confidence
//
// Each pair is audited at confidence 1 − (1 − c)/2 (Bonferroni), so the
// reported ε_LB, the larger of the two, is a lower bound on the learner's
// true ε with probability ≥ c.
//
// # Randomness
//
// Release i of side s (0 = D, 1 = D′) of pair p draws from the stream
// randx.New(seed, "learner-audit", p, "side=s", "release=i"), so the
// result does not depend on the number of workers or the order of fits.
package learneraudit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/audit"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/methods/learners"
)

// Options configures Run.
type Options struct {
	// Lambda is the regularization parameter λ handed to every fit; finite
	// and > 0.
	Lambda float64
	// Level is the privacy level handed to every fit (the claim under
	// audit is what the fits return); ε finite and > 0, δ in [0, 1).
	Level learners.Level
	// Releases is the number of releases per side and pair, half for
	// choosing the event and half for measuring it; >= 200.
	Releases int
	// Confidence is the confidence of the reported ε_LB; zero means 0.95.
	Confidence float64
	// Seed is the root seed of every stream.
	Seed uint64
	// Workers is the number of fits run at once; zero means 1.
	Workers int
	// Loss is the spec's training loss ("logistic", empty means that, or
	// "huber"): it chooses the adversarial pair's construction.
	Loss string
	// N and D are the shape of the synthetic stand-in (rows and columns);
	// N >= 4, D >= 1. When X is given they must be its dimensions.
	N, D int
	// X and Y are the base rows of the searched pair (‖x‖₂ ≤ 1, labels
	// ±1), e.g. the spec's data; nil: the synthetic stand-in (the
	// adversarial pair's D).
	X *mat.Dense
	Y []float64
	// Pilots is the number of pilot releases per side and candidate of the
	// search; zero means 32, otherwise >= 4.
	Pilots int
	// Candidates is the most candidate features j of the search; zero
	// means 3.
	Candidates int
}

// PairResult is the audit of one neighbouring pair.
type PairResult struct {
	// Pair is "adversarial" or "search"; What describes its datasets and
	// canary.
	Pair, What string
	// Confidence is the confidence of this pair's bound (Bonferroni).
	Confidence float64
	// Result is core/audit's: the event, the counts, the Clopper–Pearson
	// bounds and EpsLower.
	Result audit.Result
}

// Report is the outcome of one audit.
type Report struct {
	// Learner is the audited learner's name.
	Learner string
	// Claim is the largest ε (and δ) the fits returned; ε_LB is tested
	// against it. Declared is the learners.DeclaredBy of the learner ("":
	// a built-in, whose claim rests on the harness's mechanisms).
	Claim    audit.Claim
	Declared string
	// Releases per side and pair; Confidence of EpsLower.
	Releases   int
	Confidence float64
	// Pairs holds the audits of the adversarial and the searched pair.
	Pairs []PairResult
	// EpsLower is the largest of the pairs' lower bounds; Worst its pair.
	EpsLower float64
	Worst    int
	// Violated reports EpsLower > Claim.Epsilon.
	Violated bool
	// Fits is the number of fits run (pilots included); Wall their wall
	// time.
	Fits int
	Wall time.Duration
}

// Verdict is "claim violated" or "consistent with the claim".
func (r Report) Verdict() string {
	if r.Violated {
		return "claim violated"
	}
	return "consistent with the claim"
}

// ErrOptions reports invalid options.
var ErrOptions = errors.New("learner audit: invalid options")

// pair is one neighbouring pair with its distinguisher's directions.
type pair struct {
	name, what string
	data       [2]*learners.Data
	probe      *learners.Data // rows u, x_c, e₁, …, e_d
	yc         float64        // the canary's label
}

// Run audits learner l: the adversarial and the searched pair, Releases
// releases per side each (see the package documentation).
func Run(ctx context.Context, l learners.Learner, o Options) (Report, error) {
	if err := o.check(); err != nil {
		return Report{}, err
	}
	start := time.Now()
	rep := Report{Learner: l.Name(), Declared: learners.DeclaredBy(l), Releases: o.Releases, Confidence: o.Confidence}
	var claim claimMax
	adv := adversarialPair(o.Loss, o.N, o.D)
	base := o.X
	baseY := o.Y
	baseWhat := fmt.Sprintf("the given rows (n=%d, d=%d)", o.N, o.D)
	if base == nil {
		base, baseY = adv.base()
		baseWhat = "the synthetic stand-in of the adversarial pair's D"
	}
	srch, fits, err := search(ctx, l, o, base, baseY, baseWhat, &claim)
	rep.Fits += fits
	if err != nil {
		return Report{}, err
	}
	pairs := []pair{adv.pair, srch}
	perPair := 1 - (1-o.Confidence)/float64(len(pairs))
	stats := make([][2][]release, len(pairs))
	for k, p := range pairs {
		s, err := releases(ctx, l, o, p, "learner-audit", o.Releases, &claim)
		if err != nil {
			return Report{}, fmt.Errorf("learner %s, pair %s: %w", l.Name(), p.name, err)
		}
		stats[k] = s
		rep.Fits += 2 * o.Releases
	}
	rep.Claim = claim.get()
	for k, p := range pairs {
		sel := o.Releases / 2
		res, err := audit.Run(ctx, randx.New(o.Seed, "learner-audit", "unused"), replay(stats[k], sel), rep.Claim,
			audit.Options{Stats: 3, Select: sel, Measure: o.Releases - sel, Confidence: perPair})
		if err != nil {
			return Report{}, fmt.Errorf("learner %s, pair %s: %w", l.Name(), p.name, err)
		}
		rep.Pairs = append(rep.Pairs, PairResult{Pair: p.name, What: p.what, Confidence: perPair, Result: res})
		if res.EpsLower > rep.EpsLower || k == 0 {
			rep.EpsLower, rep.Worst = res.EpsLower, k
		}
	}
	rep.Violated = rep.EpsLower > rep.Claim.Epsilon
	rep.Wall = time.Since(start)
	return rep, nil
}

func (o *Options) check() error {
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.Workers == 0 {
		o.Workers = 1
	}
	if o.Pilots == 0 {
		o.Pilots = 32
	}
	if o.Candidates == 0 {
		o.Candidates = 3
	}
	if o.Loss == "" {
		o.Loss = "logistic"
	}
	switch {
	case !(o.Lambda > 0) || math.IsInf(o.Lambda, 1):
		return fmt.Errorf("%w: λ must be finite and > 0 (got %v)", ErrOptions, o.Lambda)
	case !(o.Level.Epsilon > 0) || math.IsInf(o.Level.Epsilon, 1):
		return fmt.Errorf("%w: ε must be finite and > 0 (got %v)", ErrOptions, o.Level.Epsilon)
	case !(o.Level.Delta >= 0 && o.Level.Delta < 1):
		return fmt.Errorf("%w: δ must be in [0, 1) (got %v)", ErrOptions, o.Level.Delta)
	case o.Releases < 200:
		return fmt.Errorf("%w: releases must be >= 200 per side (half choose the event, half measure it; got %d)", ErrOptions, o.Releases)
	case !(o.Confidence > 0 && o.Confidence < 1):
		return fmt.Errorf("%w: confidence must be in (0, 1) (got %v)", ErrOptions, o.Confidence)
	case o.Workers < 1:
		return fmt.Errorf("%w: workers must be >= 1 (got %d)", ErrOptions, o.Workers)
	case o.N < 4 || o.D < 1:
		return fmt.Errorf("%w: the shape needs n >= 4 rows and d >= 1 columns (got %d×%d)", ErrOptions, o.N, o.D)
	case o.Pilots < 4:
		return fmt.Errorf("%w: pilots must be >= 4 (got %d)", ErrOptions, o.Pilots)
	case o.Loss != "logistic" && o.Loss != "huber":
		return fmt.Errorf("%w: loss %q (want logistic or huber)", ErrOptions, o.Loss)
	}
	if o.X != nil {
		r, c := o.X.Dims()
		if r != o.N || c != o.D || len(o.Y) != r {
			return fmt.Errorf("%w: the base rows are %d×%d with %d labels, the shape %d×%d", ErrOptions, r, c, len(o.Y), o.N, o.D)
		}
	}
	return nil
}

// claimMax keeps the largest claim the fits returned.
type claimMax struct {
	mu  sync.Mutex
	set bool
	c   audit.Claim
}

func (m *claimMax) add(learner string, g privacy.Guarantee) error {
	var c audit.Claim
	switch g.Notion {
	case privacy.Pure:
		c = audit.Claim{Epsilon: g.Epsilon}
	case privacy.Approx:
		c = audit.Claim{Epsilon: g.Epsilon, Delta: g.Delta}
	default:
		return fmt.Errorf("learner %s returned %v: only an ε or (ε, δ) claim can be audited", learner, g)
	}
	if !(c.Epsilon >= 0) || math.IsInf(c.Epsilon, 1) {
		return fmt.Errorf("learner %s returned ε = %v: not an auditable claim", learner, c.Epsilon)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.set {
		m.c, m.set = c, true
		return nil
	}
	m.c.Epsilon = math.Max(m.c.Epsilon, c.Epsilon)
	m.c.Delta = math.Max(m.c.Delta, c.Delta)
	return nil
}

func (m *claimMax) get() audit.Claim {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.c
}

// releases fits l n times on each side of p, on the streams (seed, stream,
// p.name, side, index), and returns each release's statistics (s0, s1).
func releases(ctx context.Context, l learners.Learner, o Options, p pair, stream string, n int, claim *claimMax) ([2][]release, error) {
	var out [2][]release
	for side := range 2 {
		out[side] = make([]release, n)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.Workers)
	for side := range 2 {
		for i := range n {
			if gctx.Err() != nil {
				break
			}
			g.Go(func() error {
				rng := randx.New(o.Seed, stream, p.name, "side="+strconv.Itoa(side), "release="+strconv.Itoa(i))
				m, gu, err := l.Fit(gctx, rng, p.data[side], o.Lambda, o.Level)
				if err != nil {
					return fmt.Errorf("release %d on side %d: %w", i, side, err)
				}
				if err := claim.add(l.Name(), gu); err != nil {
					return err
				}
				mg := m.Margins(nil, p.probe)
				if len(mg) != p.probe.N() {
					return fmt.Errorf("release %d on side %d: the model scored %d of %d probe rows", i, side, len(mg), p.probe.N())
				}
				out[side][i] = release{s0: mg[0], s1: p.yc * mg[1], theta: mg[2:]}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return out, err
	}
	return out, ctx.Err()
}

// release is what the distinguisher reads of one released model: s0 = θ·u,
// s1 = y_c·θ·x_c and θ itself (the model's scores of e₁, …, e_d).
type release struct {
	s0, s1 float64
	theta  []float64
}

// replay is a core/audit Sampler that hands out the precomputed releases
// of each side in order: audit.Run asks for the selection half of side 0,
// then side 1, then the measurement half of each, so release i of a side
// is in the selection half when i < sel. Besides s0 and s1 it reports
//
//	s2 = ‖θ − μ₁‖₂ − ‖θ − μ₀‖₂,
//
// μ_s the mean θ of side s's selection half: the log-likelihood ratio of
// a release under noise with density ∝ exp(−β‖b‖₂) centred at μ₀ and μ₁
// (output perturbation's), up to the factor β. The centres come from the
// selection half only, so the measured event stays independent of the
// measurement half, as core/audit's bound requires.
func replay(stats [2][]release, sel int) audit.Sampler {
	var mu [2][]float64
	for side := range 2 {
		d := len(stats[side][0].theta)
		mu[side] = make([]float64, d)
		for _, r := range stats[side][:sel] {
			for j, v := range r.theta {
				mu[side][j] += v / float64(sel)
			}
		}
	}
	var next [2]int
	return func(dst []float64, _ *rand.Rand, side int) error {
		i := next[side]
		if i >= len(stats[side]) {
			return fmt.Errorf("learner audit: release %d of side %d asked for, %d drawn", i, side, len(stats[side]))
		}
		next[side]++
		r := stats[side][i]
		dst[0], dst[1] = r.s0, r.s1
		dst[2] = dist(r.theta, mu[1]) - dist(r.theta, mu[0])
		return nil
	}
}

func dist(a, b []float64) float64 {
	var s float64
	for j := range a {
		s += (a[j] - b[j]) * (a[j] - b[j])
	}
	return math.Sqrt(s)
}

func ones(n int) []float64 {
	o := make([]float64, n)
	for i := range o {
		o[i] = 1
	}
	return o
}

// adversarial is the fixed adversarial pair and its base rows.
type adversarial struct {
	pair
	x *mat.Dense
	y []float64
}

func (a adversarial) base() (*mat.Dense, []float64) { return a.x, a.y }

// adversarialPair builds the fixed adversarial pair at shape n×d for loss
// (see the package documentation).
func adversarialPair(loss string, n, d int) adversarial {
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range y {
		y[i] = 1
	}
	what := fmt.Sprintf("synthetic stand-in of shape %d×%d (not the data): %d records at x=0 (label +1), the replaced record at x=e₁ with label +1 on D and −1 on D′", n, d, n-1)
	if loss == "huber" {
		for i := 0; i < n-2; i++ {
			x.Set(i, 0, 1)
			y[i] = float64(1 - 2*(i%2))
		}
		if (n-2)%2 == 1 {
			x.Set(n-3, 0, 0) // an odd count: the unpaired one at x = 0
		}
		what = fmt.Sprintf("synthetic stand-in of shape %d×%d (not the data): %d pairs at x=e₁ with labels ±1, the others at x=0, the replaced record at x=e₁ with label +1 on D and −1 on D′ (Huber: the gradient flips by 2)", n, d, (n-2)/2)
	}
	x.Set(n-1, 0, 1)
	xc := make([]float64, d)
	xc[0] = 1
	p := neighbour("adversarial", what, x, y, xc, -1)
	return adversarial{pair: p, x: x, y: y}
}

// neighbour returns the pair (x, y) and (x, y) with its last record
// replaced by the canary (xc, yc).
func neighbour(name, what string, x *mat.Dense, y, xc []float64, yc float64) pair {
	n, d := x.Dims()
	x1 := mat.DenseCopyOf(x)
	x1.SetRow(n-1, xc)
	y1 := slices.Clone(y)
	y1[n-1] = yc
	// u ∝ y_r·x_r − y_c·x_c; when zero (the canary is the record), x_c.
	u := make([]float64, d)
	var norm float64
	for j := range d {
		u[j] = y[n-1]*x.At(n-1, j) - yc*xc[j]
		norm += u[j] * u[j]
	}
	if norm == 0 {
		copy(u, xc)
		for _, v := range u {
			norm += v * v
		}
	}
	if norm > 0 {
		for j := range u {
			u[j] /= math.Sqrt(norm)
		}
	}
	// The probe's rows: u, x_c, then e₁ … e_d (the model's weights θ).
	probe := mat.NewDense(2+d, d, nil)
	probe.SetRow(0, u)
	probe.SetRow(1, xc)
	for j := range d {
		probe.Set(2+j, j, 1)
	}
	return pair{
		name: name, what: what,
		data:  [2]*learners.Data{learners.NewData(x, y, nil), learners.NewData(x1, y1, nil)},
		probe: learners.NewData(probe, ones(2+d), nil),
		yc:    yc,
	}
}

// search returns the searched pair on the base rows: the candidate canary
// whose pilot releases separate D from D′ most (see the package
// documentation), and the number of fits it ran.
func search(ctx context.Context, l learners.Learner, o Options, x *mat.Dense, y []float64, baseWhat string, claim *claimMax) (pair, int, error) {
	n, d := x.Dims()
	// The rarest features: the smallest mean |x_ij| over the other rows.
	type feat struct {
		j int
		m float64
	}
	feats := make([]feat, d)
	for j := range d {
		var s float64
		for i := 0; i < n-1; i++ {
			s += math.Abs(x.At(i, j))
		}
		feats[j] = feat{j, s}
	}
	slices.SortStableFunc(feats, func(a, b feat) int {
		switch {
		case a.m < b.m:
			return -1
		case a.m > b.m:
			return 1
		}
		return 0
	})
	type cand struct {
		x    []float64
		y    float64
		what string
	}
	var cands []cand
	for _, f := range feats[:min(o.Candidates, d)] {
		for _, yc := range []float64{1, -1} {
			xc := make([]float64, d)
			xc[f.j] = 1
			cands = append(cands, cand{xc, yc, fmt.Sprintf("x=e%d, y=%+g", f.j+1, yc)})
		}
	}
	xr := mat.Row(nil, n-1, x)
	yr := y[n-1]
	neg := slices.Clone(xr)
	for j := range neg {
		neg[j] = -neg[j]
	}
	cands = append(cands, cand{neg, yr, fmt.Sprintf("the record negated, y=%+g", yr)}, cand{slices.Clone(xr), -yr, fmt.Sprintf("the record with its label flipped, y=%+g", -yr)})
	fits := 0
	best, bestScore := 0, math.Inf(-1)
	var pairs []pair
	for k, c := range cands {
		p := neighbour("search", "", x, y, c.x, c.y)
		pairs = append(pairs, p)
		// Each candidate's pilots on D are its own: the statistic reads
		// the model along this candidate's direction.
		s, err := releases(ctx, l, o, p, "learner-audit-pilot/"+strconv.Itoa(k), o.Pilots, claim)
		if err != nil {
			return pair{}, fits, fmt.Errorf("learner %s, search candidate %d (%s): %w", l.Name(), k, c.what, err)
		}
		fits += 2 * o.Pilots
		if sc := separation(s[0], s[1]); sc > bestScore {
			best, bestScore = k, sc
		}
	}
	p := pairs[best]
	p.what = fmt.Sprintf("%s, the last record (x=%s, y=%+g) replaced on D′ by the canary %s, chosen among %d candidates by %d pilot releases per side (standardized mean difference of s0: %.3g)",
		baseWhat, fmtVec(xr), yr, cands[best].what, len(cands), o.Pilots, bestScore)
	return p, fits, nil
}

// separation is |mean(a) − mean(b)| / sqrt((var(a) + var(b))/2) of the
// first statistic (unbiased variances; +Inf when both are constant and
// differ, 0 when equal).
func separation(a, b []release) float64 {
	mv := func(s []release) (float64, float64) {
		var m float64
		for _, v := range s {
			m += v.s0
		}
		m /= float64(len(s))
		var q float64
		for _, v := range s {
			q += (v.s0 - m) * (v.s0 - m)
		}
		return m, q / float64(len(s)-1)
	}
	ma, va := mv(a)
	mb, vb := mv(b)
	diff := math.Abs(ma - mb)
	sd := math.Sqrt((va + vb) / 2)
	if sd == 0 {
		if diff == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return diff / sd
}

func fmtVec(v []float64) string {
	s := "("
	for i, x := range v {
		if i > 0 {
			s += ", "
		}
		if i == 6 && len(v) > 8 {
			return s + fmt.Sprintf("… %d more)", len(v)-6)
		}
		s += strconv.FormatFloat(x, 'g', 3, 64)
	}
	return s + ")"
}
