package histogram

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Procedure is the histogram training procedure of Algorithm 5 bound to a
// training set T and a validation set V, for the bin counts Bins (widths
// 1/Bins[i]); it implements [tune.Procedure] for [Estimate], so that
// Stability (Algorithms 1–2), alphaSplit, dataSplit, Random and Control of
// package tune select the bin width.
type Procedure struct {
	t, v []float64
	bins []int
	hmin float64
}

// NewProcedure checks that every point of t and v is in [0, 1] and that
// bins are distinct and ≥ 1, and returns the procedure.
func NewProcedure(t, v []float64, bins []int) (*Procedure, error) {
	if len(bins) == 0 {
		return nil, fmt.Errorf("histogram: no bin counts")
	}
	if len(t) == 0 || len(v) == 0 {
		return nil, fmt.Errorf("histogram: %d training and %d validation points: need both", len(t), len(v))
	}
	for i, b := range bins {
		if b < 1 || slices.Contains(bins[:i], b) {
			return nil, fmt.Errorf("histogram: bins[%d] = %d: want distinct counts >= 1", i, b)
		}
	}
	for name, s := range map[string][]float64{"training": t, "validation": v} {
		for j, x := range s {
			if !(x >= 0 && x <= 1) {
				return nil, fmt.Errorf("%w: %s point %d = %v", ErrOutOfRange, name, j, x)
			}
		}
	}
	return &Procedure{t: t, v: v, bins: slices.Clone(bins), hmin: 1 / float64(slices.Max(bins))}, nil
}

// K implements tune.Procedure: the number of bin widths.
func (p *Procedure) K() int { return len(p.bins) }

// HMin returns the smallest bin width, the h_min of Theorem 6.
func (p *Procedure) HMin() float64 { return p.hmin }

// Train implements tune.Procedure: Algorithm 5 with Bins[i] bins at privacy
// epsilon on part `part` of `parts` contiguous equal parts of T (the last
// one takes the remainder).
func (p *Procedure) Train(rng *rand.Rand, i int, epsilon float64, part, parts int) (Estimate, error) {
	if parts < 1 || part < 0 || part >= parts {
		return Estimate{}, fmt.Errorf("histogram: part %d of %d", part, parts)
	}
	lo, hi := PartRange(len(p.t), part, parts)
	c, err := Counts(p.t[lo:hi], p.bins[i])
	if err != nil {
		return Estimate{}, err
	}
	return Private(rng, c, epsilon)
}

// PartRange returns the points [lo, hi) of T that part `part` of `parts`
// contiguous equal parts of n points holds in [Procedure.Train] (the last
// part takes the remainder), for 0 ≤ part < parts.
func PartRange(n, part, parts int) (lo, hi int) {
	size := n / parts
	lo, hi = part*size, (part+1)*size
	if part == parts-1 {
		hi = n
	}
	return lo, hi
}

// Score implements tune.Procedure: q(f̂, V) of Eq. 6.
func (p *Procedure) Score(e Estimate) float64 { return Score(e, p.v) }

// Errors implements tune.Procedure: the loss the exponential mechanism of
// alphaSplit and dataSplit ranks, with sensitivity 1 in V. Replacing one
// validation point changes q by (2/m)·|f̂(z) − f̂(z′)| ≤ 2/(m·h) ≤
// 2/(m·h_min) (a density of width-h bins is at most 1/h), so
//
//	Errors = −q(f̂, V)·m·h_min/2
//
// has sensitivity at most 1 for every candidate.
func (p *Procedure) Errors(e Estimate) float64 {
	return -p.Score(e) * float64(len(p.v)) * p.hmin / 2
}
