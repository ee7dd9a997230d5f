// Package tune implements differentially private parameter tuning: the
// stability-based validation of Chaudhuri & Vinterbo (NIPS 2013),
// Algorithms 1 and 2, and the four alternatives of its Section 5
// (alphaSplit, dataSplit, Random, Control).
//
// The selection code is generic over the private training procedure
// T = (G, F) (the paper's Section 2): a Procedure trains one candidate for a
// parameter index on (a part of) the training set T and scores it on the
// validation set V. The classifier case study (objective-perturbation
// logistic regression) and the histogram case study plug in here.
//
// # Privacy
//
// The functions return a choice, not a guarantee: each one's doc states
// the paper's guarantee (Theorems 1, 2 and 5), which holds when every
// Train call is private at the ε it is handed. A caller composes the
// guarantees its training runs actually delivered with the selection
// step's (the selectors of the tuning kinds do, as core/privacy values);
// Choice.Fits counts the runs.
//
// # Randomness
//
// Every draw comes from the *rand.Rand passed in, in a fixed order: for
// Stability, the k training draws R_1..R_k interleaved with Z_1..Z_k as the
// algorithm box orders them, then the final draw R; for the others, the
// training draws in index order, then the selection draw.
package tune

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
)

// Procedure is a private training procedure bound to a training set T and a
// validation set V.
type Procedure[H any] interface {
	// K is the number of candidate parameters θ_1..θ_K.
	K() int
	// Train draws the training noise from rng and trains the candidate for
	// parameter index i (0-based) at privacy level epsilon on part `part` of
	// `parts` equal disjoint parts of T (parts == 1: all of T).
	Train(rng *rand.Rand, i int, epsilon float64, part, parts int) (H, error)
	// Score is the validation score q(h, V); higher is better.
	Score(h H) float64
	// Errors is the number of errors of h on V, the utility (negated) of the
	// exponential mechanism of the alternatives; its sensitivity is 1.
	Errors(h H) float64
}

// Choice is the outcome of a tuning method.
type Choice[H any] struct {
	Index  int       // chosen parameter index i* (0-based)
	Model  H         // the released model
	Scores []float64 // q(h_i, V) of the candidates trained (NaN where not trained)
	Noisy  []float64 // Stability: the noisy scores t_i; nil otherwise
	Fits   int       // number of Train calls
}

// StabilityBeta returns β = max(β₁/n, β₂/m) of Algorithm 1, line 4.
func StabilityBeta(beta1, beta2 float64, n, m int) float64 {
	return math.Max(beta1/float64(n), beta2/float64(m))
}

// RampStabilityConstants returns (β₁, β₂) of Chaudhuri & Vinterbo 2013,
// Theorem 4, for the ramp-loss validation score q = −mean ramp loss, which is
// 1-Lipschitz (L = 1) and bounded by g* = 1, with objective or output
// perturbation of a 1-Lipschitz convex loss:
//
//	β₁ = 2L/λ_min,  β₂ = min(g*, ·) = 1.
//
// The example after Theorem 4 states β₂ = 1 assuming λ_min ≤ 1.
func RampStabilityConstants(lambdaMin float64) (beta1, beta2 float64) {
	return 2 / lambdaMin, 1
}

// Validate is Algorithm 1 of Chaudhuri & Vinterbo 2013: train every
// candidate at privacy alpha1, add 2β·Z_i with Z_i ~ Exp(mean 1/alpha2) to
// each validation score, and return the argmax. It is (alpha2, δ)-DP
// (Theorem 1) when q is (β₁, β₂, δ/k)-stable for the procedure; the k models
// are not released.
func Validate[H any](rng *rand.Rand, p Procedure[H], alpha1, alpha2, beta float64) (Choice[H], error) {
	if err := checkPositive("alpha1", alpha1); err != nil {
		return Choice[H]{}, err
	}
	if err := checkPositive("alpha2", alpha2); err != nil {
		return Choice[H]{}, err
	}
	if err := checkPositive("beta", beta); err != nil {
		return Choice[H]{}, err
	}
	if err := checkK(p); err != nil {
		return Choice[H]{}, err
	}
	k := p.K()
	c := Choice[H]{Index: -1, Scores: make([]float64, k), Noisy: make([]float64, k)}
	best := math.Inf(-1)
	for i := 0; i < k; i++ {
		h, err := p.Train(rng, i, alpha1, 0, 1)
		if err != nil {
			return c, err
		}
		c.Fits++
		c.Scores[i] = p.Score(h)
		c.Noisy[i] = c.Scores[i] + mech.ExponentialNoiseScaled(rng, 2*beta, 1/alpha2)
		mech.Record(rng, mech.Release{Mechanism: "stability-noisy-max", Scale: 2 * beta / alpha2, Sensitivity: beta, Dim: 1,
			Guarantee: privacy.EpsDP(alpha2, "the index selected by Algorithm 1 (Chaudhuri & Vinterbo 2013; Theorem 1, one per selection)"),
			Params:    map[string]float64{"candidate": float64(i), "k": float64(k)}})
		if c.Noisy[i] > best || c.Index < 0 {
			best, c.Index = c.Noisy[i], i
		}
	}
	return c, nil
}

// Stability is Algorithm 2 of Chaudhuri & Vinterbo 2013: i* = Validate(...),
// then a fresh draw R and the release h = F(T, θ_{i*}, alpha1, R). It is
// (alpha1 + alpha2, δ)-DP (Theorem 2). The paper's experiments use
// alpha1 = alpha2 = α/2.
func Stability[H any](rng *rand.Rand, p Procedure[H], alpha1, alpha2, beta float64) (Choice[H], error) {
	c, err := Validate(rng, p, alpha1, alpha2, beta)
	if err != nil {
		return c, err
	}
	h, err := p.Train(rng, c.Index, alpha1, 0, 1)
	if err != nil {
		return c, err
	}
	c.Fits++
	c.Model = h
	return c, nil
}

// AlphaSplit is the alternative of Chaudhuri & Vinterbo 2013, Section 5:
// each candidate trained on all of T at alpha/k, then i* drawn by the
// exponential mechanism p_i ∝ exp(−alpha·e_i/2) on the validation error
// counts. α-DP when T and V are disjoint (Theorem 5).
func AlphaSplit[H any](rng *rand.Rand, p Procedure[H], alpha float64) (Choice[H], error) {
	if err := checkPositive("alpha", alpha); err != nil {
		return Choice[H]{}, err
	}
	if err := checkK(p); err != nil {
		return Choice[H]{}, err
	}
	k := p.K()
	return trainAllThenPick(rng, p, k, func(int) (float64, int, int) { return alpha / float64(k), 0, 1 },
		func(c *Choice[H], errs []float64) (int, error) { return expMechOnErrors(rng, errs, alpha) })
}

// DataSplit is the alternative of Chaudhuri & Vinterbo 2013, Section 5 (the
// procedure of Chaudhuri, Monteleoni & Sarwate 2011): T partitioned into k
// equal parts, candidate i trained on part i at alpha, i* drawn by the
// exponential mechanism p_i ∝ exp(−alpha·e_i/2). α-DP when T and V are
// disjoint (Theorem 5).
func DataSplit[H any](rng *rand.Rand, p Procedure[H], alpha float64) (Choice[H], error) {
	if err := checkPositive("alpha", alpha); err != nil {
		return Choice[H]{}, err
	}
	if err := checkK(p); err != nil {
		return Choice[H]{}, err
	}
	k := p.K()
	return trainAllThenPick(rng, p, k, func(i int) (float64, int, int) { return alpha, i, k },
		func(c *Choice[H], errs []float64) (int, error) { return expMechOnErrors(rng, errs, alpha) })
}

// Control is the non-private reference of Chaudhuri & Vinterbo 2013,
// Section 5: every candidate trained privately at alpha on T, i* the exact
// argmax of q(h_i, V) (ties to the lowest index). The selection is not
// private.
func Control[H any](rng *rand.Rand, p Procedure[H], alpha float64) (Choice[H], error) {
	if err := checkPositive("alpha", alpha); err != nil {
		return Choice[H]{}, err
	}
	if err := checkK(p); err != nil {
		return Choice[H]{}, err
	}
	return trainAllThenPick(rng, p, p.K(), func(int) (float64, int, int) { return alpha, 0, 1 },
		func(c *Choice[H], _ []float64) (int, error) {
			best := 0
			for i, s := range c.Scores {
				if s > c.Scores[best] {
					best = i
				}
			}
			return best, nil
		})
}

// Random is the alternative of Chaudhuri & Vinterbo 2013, Section 5: i*
// uniform on {1..k}, the model trained on T at alpha. α-DP.
//
// Deviation: the paper's description trains all k candidates and then picks
// one uniformly; since the pick does not look at them and the candidates'
// noise is independent, training only the chosen one gives the same
// distribution of the released model at 1/k of the cost.
func Random[H any](rng *rand.Rand, p Procedure[H], alpha float64) (Choice[H], error) {
	if err := checkPositive("alpha", alpha); err != nil {
		return Choice[H]{}, err
	}
	if err := checkK(p); err != nil {
		return Choice[H]{}, err
	}
	k := p.K()
	c := Choice[H]{Index: rng.IntN(k), Scores: nanSlice(k)}
	h, err := p.Train(rng, c.Index, alpha, 0, 1)
	if err != nil {
		return c, err
	}
	c.Fits = 1
	c.Model = h
	c.Scores[c.Index] = p.Score(h)
	return c, nil
}

func trainAllThenPick[H any](rng *rand.Rand, p Procedure[H], k int,
	setting func(i int) (eps float64, part, parts int),
	pick func(c *Choice[H], errs []float64) (int, error)) (Choice[H], error) {
	c := Choice[H]{Index: -1, Scores: make([]float64, k)}
	hs := make([]H, k)
	errs := make([]float64, k)
	for i := 0; i < k; i++ {
		eps, part, parts := setting(i)
		h, err := p.Train(rng, i, eps, part, parts)
		if err != nil {
			return c, err
		}
		c.Fits++
		hs[i] = h
		c.Scores[i] = p.Score(h)
		errs[i] = p.Errors(h)
	}
	i, err := pick(&c, errs)
	if err != nil {
		return c, err
	}
	c.Index, c.Model = i, hs[i]
	return c, nil
}

// expMechOnErrors draws i with probability ∝ exp(−alpha·e_i/2): the
// exponential mechanism with utility −e_i (sensitivity 1) at privacy alpha.
func expMechOnErrors(rng *rand.Rand, errs []float64, alpha float64) (int, error) {
	scores := make([]float64, len(errs))
	for i, e := range errs {
		scores[i] = -e
	}
	return mech.Exponential(rng, scores, alpha, 1)
}

func nanSlice(k int) []float64 {
	s := make([]float64, k)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

func checkPositive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("tune: %s must be finite and > 0 (got %v)", name, v)
	}
	return nil
}

// ErrNoCandidates is returned for a Procedure with K() == 0.
var ErrNoCandidates = errors.New("tune: no candidate parameters")

func checkK[H any](p Procedure[H]) error {
	if p.K() < 1 {
		return ErrNoCandidates
	}
	return nil
}
