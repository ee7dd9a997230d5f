// Package expost implements the accuracy-first searches of Ligett, Neel,
// Roth, Waggoner & Wu, "Accuracy First: Selecting a Differential Privacy
// Level for Accuracy-Constrained ERM" (NeurIPS 2017, arXiv:1705.10829): the
// noise-reduction search driven by InteractiveAboveThreshold (Algorithm 2,
// Lemma 2.8; instantiated as CovNR, Algorithm 3, and OutputNR, Algorithm 5)
// and the doubling method (Algorithm 4, Theorem A.2), with their ex-post
// privacy accounting (Definition 2.3).
//
// The searches are generic: any private ERM method that can release a
// prefix-private sequence of hypotheses (a [Sequence]) or one hypothesis at
// a given ε (an [Independent] generator) can be plugged in. Every sequence
// and every release states its privacy guarantee as a
// [github.com/dprepro/dprepro/core/privacy.Guarantee]; the searches compose
// those values into the outcome's ex-post guarantee. Hypotheses are
// built lazily — hypothesis t is constructed only when the test reaches it —
// which is what Lemma 2.8's ex-post guarantee requires (only the prefix
// θ¹…θᵗ is released) and what makes the searches cheap.
//
// # Lazy, exact tests
//
// Every accuracy test of the paper has the form "accept when the excess
// risk e plus independent noise is below a cut-off". This package draws the
// noise first, turning the test into "accept when e ≤ cut", and asks the
// hypothesis for cheap bounds lo ≤ e ≤ hi before its exact excess risk: the
// decision is taken from the bounds when they settle it and from the exact
// value otherwise, so it is the same decision as the literal algorithm's
// (for valid bounds) at a fraction of the cost.
//
// # Calibrations
//
// Two calibrations of the tests are offered (see [Calibration]): the
// constants of the paper's theorems ("paper"), with proven ex-post
// guarantees, and those of the authors' released code ("authors-code"),
// which the harness found to be the ones behind the paper's figures. They
// run the same mechanisms and differ in the threshold, the query
// sensitivities and how ε is counted (the code's ε are nominal; see
// [AuthorsCode]).
package expost

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
)

// Hypothesis is one released hypothesis of a private ERM method, with
// its excess risk e = L(θ) − L(θ*) on the private data (the negated query
// f = L(θ*) − L(θ) of the paper).
type Hypothesis interface {
	// Bounds returns lo ≤ e ≤ hi, cheaply. lo may be −Inf and hi +Inf when
	// nothing cheap is known. They must be valid bounds: the searches take
	// their decisions from them.
	Bounds() (lo, hi float64)
	// Excess returns the exact excess risk e.
	Excess() (float64, error)
	// Theta returns the hypothesis θ (building it if it was not built yet).
	Theta() ([]float64, error)
}

// Sequence is a prefix-private sequence of hypotheses θ¹, θ², … at
// increasing privacy levels ε₁ < ε₂ < … (Lemma 2.8's M): releasing θ¹…θᵗ
// is εₜ-differentially private. Noise reduction (Algorithm 1) applied to a
// Laplace-mechanism ERM method gives one.
type Sequence interface {
	// Next advances to the next hypothesis; false when the sequence is
	// exhausted.
	Next() (Hypothesis, bool, error)
	// Guarantee returns the guarantee of releasing the prefix θ¹…θᵗ up to
	// the current (last returned) hypothesis: pure εₜ-DP by Theorem 2.7
	// for a noise-reduction sequence. [NoiseReduction] refuses any other
	// notion (Lemma 2.8 is stated for pure ε-DP; Remark 2.9).
	Guarantee() privacy.Guarantee
	// Len returns the number of hypotheses T.
	Len() int
}

// Independent draws one hypothesis with fresh noise at privacy level ε
// (the black box M of Algorithm 4, and the "theory" approach) and returns
// the guarantee of that release: ε-DP for the built-in mechanisms.
// [Doubling] refuses any notion but pure ε-DP (Theorem A.2 assumes an
// ε-private M).
type Independent func(rng *rand.Rand, epsilon float64) (Hypothesis, privacy.Guarantee, error)

// decide reports whether e ≤ cut, from h's bounds when they settle it.
// exact reports whether the exact excess risk had to be computed.
func decide(h Hypothesis, cut float64) (accept, exact bool, err error) {
	lo, hi := h.Bounds()
	switch {
	case hi <= cut:
		return true, false, nil
	case lo > cut:
		return false, false, nil
	}
	e, err := h.Excess()
	if err != nil {
		return false, true, err
	}
	return e <= cut, true, nil
}

// AboveThreshold is InteractiveAboveThreshold, Ligett et al. 2017
// Algorithm 2 (after Dwork & Roth 2014, Algorithm 1), for the query
// f = −e (e the excess risk) with ℓ₁ sensitivity Δ:
//
//	Ŵ = W + Lap(2Δ/ε);  for t = 1, 2, …: halt at the first t with fₜ + Lap(4Δ/ε) ≥ Ŵ.
//
// In excess-risk terms the test accepts hypothesis t when
// eₜ ≤ νₜ − Ŵ with νₜ ~ Lap(4Δ/ε). Queries are asked one at a time (Test),
// so the caller builds hypothesis t only when the test reaches it.
type AboveThreshold struct {
	rng        *rand.Rand
	eps, delta float64
	w, wHat    float64
	queries    int
	exact      int
}

// NewAboveThreshold starts Algorithm 2 with privacy ε, threshold W on
// f = −e and query sensitivity Δ, drawing the threshold noise from rng.
func NewAboveThreshold(rng *rand.Rand, epsilon, threshold, delta float64) (*AboveThreshold, error) {
	if !(epsilon > 0) || math.IsInf(epsilon, 1) {
		return nil, fmt.Errorf("expost: AboveThreshold ε must be finite and > 0 (got %v)", epsilon)
	}
	if !(delta > 0) || math.IsInf(delta, 1) {
		return nil, fmt.Errorf("expost: AboveThreshold sensitivity must be finite and > 0 (got %v)", delta)
	}
	if math.IsNaN(threshold) || math.IsInf(threshold, 0) {
		return nil, fmt.Errorf("expost: AboveThreshold threshold must be finite (got %v)", threshold)
	}
	a := &AboveThreshold{rng: rng, eps: epsilon, delta: delta, w: threshold}
	a.wHat = mech.AddLaplace(rng, threshold, 2*delta/epsilon)
	mech.Record(rng, mech.Release{Mechanism: "above-threshold-threshold", Scale: 2 * delta / epsilon, Sensitivity: delta, Dim: 1,
		Guarantee: privacy.EpsDP(epsilon/2, "AboveThreshold's noisy threshold (Ligett et al. 2017, Algorithm 2: half of ε_A)")})
	return a, nil
}

// Epsilon returns the ε of the test (ε_A of Lemma 2.8).
func (a *AboveThreshold) Epsilon() float64 { return a.eps }

// Guarantee returns the test's charge: ε_A-DP for the index of the first
// accepted query (Algorithm 2; Lemma 2.8 adds it to the prefix's εₜ).
func (a *AboveThreshold) Guarantee() privacy.Guarantee {
	return privacy.EpsDP(a.eps, "InteractiveAboveThreshold (Ligett et al. 2017, Algorithm 2): the index of the accepted hypothesis")
}

// Queries returns the number of queries answered so far.
func (a *AboveThreshold) Queries() int { return a.queries }

// Exact returns how many answers needed an exact excess risk (the others
// were settled by the hypotheses' bounds).
func (a *AboveThreshold) Exact() int { return a.exact }

// Test answers the next query: true ("above threshold": halt) when
// −e + Lap(4Δ/ε) ≥ Ŵ.
func (a *AboveThreshold) Test(h Hypothesis) (bool, error) {
	nu := mech.AddLaplace(a.rng, 0, 4*a.delta/a.eps)
	mech.Record(a.rng, mech.Release{Mechanism: "above-threshold-query", Scale: 4 * a.delta / a.eps, Sensitivity: a.delta, Dim: 1,
		Guarantee: privacy.EpsDP(a.eps/2, "AboveThreshold's noisy queries (Ligett et al. 2017, Algorithm 2: half of ε_A, for all queries together)")})
	a.queries++
	ok, exact, err := decide(h, nu-a.wHat)
	if exact {
		a.exact++
	}
	return ok, err
}

// Outcome is the result of one search.
type Outcome struct {
	// Success reports that a hypothesis passed the test. Otherwise the
	// search output (⊥, θ*) and its ex-post loss is infinite.
	Success bool
	// Stop is the 1-based index of the accepted hypothesis; on failure the
	// number of hypotheses tested.
	Stop int
	// Tested counts the accuracy queries answered; Exact those that needed
	// an exact excess risk.
	Tested, Exact int
	// Generation is the guarantee of generating the released hypotheses,
	// taken from the generator's own guarantees: for noise reduction the
	// sequence's εₜ at the (data-dependent) stop t (Theorem 2.7), for the
	// doubling method the sequential composition Σₖ εₖ of its releases;
	// both ex-post ([privacy.ExPost]). Test is the guarantee of testing
	// them: ε_A-DP of AboveThreshold (Lemma 2.8), ex-post k·ε_test for
	// doubling (Theorem A.2). Both are non-private (ε = +Inf) on failure:
	// ℰ(⊥) = ∞ (Theorems 3.2, 3.4, A.2).
	Generation, Test privacy.Guarantee
	// Hypothesis is the accepted hypothesis (nil on failure).
	Hypothesis Hypothesis
}

// Guarantee returns the ex-post guarantee of the outcome (Definition 2.3):
// the sequential composition of Generation and Test, ε_A + εₜ by Lemma 2.8
// or k·ε_test + Σ εₖ by Theorem A.2; non-private (ε = +Inf) on failure.
func (o Outcome) Guarantee() (privacy.Guarantee, error) {
	return privacy.Compose(privacy.Sequential, "the outcome (t, θᵗ) of the search (Ligett et al. 2017, Definition 2.3)", o.Generation, o.Test)
}

func failed(stop, tested, exact int) Outcome {
	bot := privacy.NonPrivate("no hypothesis accepted: the search outputs (⊥, θ*), ℰ(⊥) = ∞ (Ligett et al. 2017, Theorems 3.2, 3.4, A.2)")
	return Outcome{Stop: stop, Tested: tested, Exact: exact, Generation: bot, Test: bot}
}

// pure returns an error unless g is a valid pure ε-DP guarantee, naming
// the search (what) that needs it: the ex-post analyses of Lemma 2.8 and
// Theorem A.2 hold for pure ε-DP only (Remark 2.9).
func pure(g privacy.Guarantee, what string) error {
	if err := g.Validate(); err != nil {
		return fmt.Errorf("expost: %s: %w", what, err)
	}
	if g.Notion != privacy.Pure {
		return fmt.Errorf("expost: %s: the generator's guarantee is %s (%s); the ex-post analysis needs pure ε-DP (Ligett et al. 2017, Remark 2.9)", what, g, g.Notion)
	}
	return nil
}

// NoiseReduction runs the noise-reduction search of Ligett et al. 2017
// (Algorithms 3 and 5 with the generator abstracted): it asks the
// AboveThreshold test about θ¹, θ², … in turn, building each only when it is
// reached, and returns the first accepted one. By Lemma 2.8 the outcome
// (t, θᵗ) is (ε_A + εₜ)-ex-post private.
//
// It returns ctx's error once ctx is done, checked every 16 levels (a
// level costs at most one exact excess risk); the check draws nothing.
func NoiseReduction(ctx context.Context, test *AboveThreshold, seq Sequence) (Outcome, error) {
	for t := 0; ; t++ {
		if t%16 == 0 {
			if err := ctx.Err(); err != nil {
				return Outcome{}, err
			}
		}
		h, ok, err := seq.Next()
		if err != nil {
			return Outcome{}, err
		}
		if !ok {
			return failed(test.Queries(), test.Queries(), test.Exact()), nil
		}
		accept, err := test.Test(h)
		if err != nil {
			return Outcome{}, err
		}
		if accept {
			g := seq.Guarantee()
			if err := pure(g, "noise reduction"); err != nil {
				return Outcome{}, err
			}
			return Outcome{
				Success: true, Stop: test.Queries(), Tested: test.Queries(), Exact: test.Exact(),
				Generation: privacy.ExPostEps(g.Epsilon, "the prefix θ¹…θᵗ up to the accepted t (Theorem 2.7): "+g.Covers),
				Test:       test.Guarantee(), Hypothesis: h,
			}, nil
		}
	}
}

// DoublingTest is the accuracy test of the doubling method: accept
// hypothesis k when e_k ≤ Cut + w_k with w_k ~ Lap(Scale) (Algorithm 4:
// f + w ≥ −α/2 with f = −e and Cut = α/2), which is an
// (Δ/Scale)-differentially private use of a sensitivity-Δ query.
type DoublingTest struct {
	// Levels are the privacy levels ε₁ < ε₂ < … of the hypotheses.
	Levels []float64
	// Scale is the Laplace scale of the test noise; Cut the cut-off on e.
	Scale, Cut float64
	// Delta is the ℓ₁ sensitivity of the excess-risk query.
	Delta float64
}

// EpsilonTest returns the privacy loss of one test, Δ/Scale.
func (d DoublingTest) EpsilonTest() float64 { return d.Delta / d.Scale }

// Guarantee returns the charge of the first k tests: ex-post k·ε_test
// (Theorem A.2; k is data-dependent). It is computed as the product, not a
// k-fold sum, so that it is exact to one rounding.
func (d DoublingTest) Guarantee(k int) privacy.Guarantee {
	return privacy.ExPostEps(float64(k)*d.EpsilonTest(), "k Laplace tests of the excess risk (Ligett et al. 2017, Algorithm 4), ε_test = Δ/scale each")
}

func (d DoublingTest) validate() error {
	if len(d.Levels) == 0 {
		return errors.New("expost: doubling: no privacy levels")
	}
	for i, e := range d.Levels {
		if !(e > 0) || math.IsInf(e, 1) || (i > 0 && !(e > d.Levels[i-1])) {
			return fmt.Errorf("expost: doubling: levels must be finite, > 0 and increasing (level %d = %v)", i+1, e)
		}
	}
	if !(d.Scale > 0) || math.IsInf(d.Scale, 1) || !(d.Delta > 0) || math.IsInf(d.Delta, 1) || math.IsNaN(d.Cut) || math.IsInf(d.Cut, 0) {
		return fmt.Errorf("expost: doubling: scale %v, sensitivity %v and cut %v must be finite (scale, sensitivity > 0)", d.Scale, d.Delta, d.Cut)
	}
	return nil
}

// Doubling runs the doubling method, Ligett et al. 2017 Algorithm 4: for
// k = 1, 2, … it draws an independent εₖ-private hypothesis (gen, from
// genRNG) and tests it (noise from testRNG), halting at the first
// acceptance. Its ex-post loss after k steps is k·ε_test + Σ_{j≤k} εⱼ
// (Theorem A.2, via Rogers et al.'s privacy odometer; with doubling levels
// Σ εⱼ = (2ᵏ − 1)ε₁). It returns ctx's error once ctx is done (checked
// before each hypothesis).
func Doubling(ctx context.Context, genRNG, testRNG *rand.Rand, gen Independent, d DoublingTest) (Outcome, error) {
	if err := d.validate(); err != nil {
		return Outcome{}, err
	}
	var released []privacy.Guarantee
	exact := 0
	for k, eps := range d.Levels {
		if err := ctx.Err(); err != nil {
			return Outcome{}, err
		}
		h, g, err := gen(genRNG, eps)
		if err != nil {
			return Outcome{}, err
		}
		if err := pure(g, "doubling"); err != nil {
			return Outcome{}, err
		}
		released = append(released, g)
		// The noisy cut, a Laplace release (secure construction in
		// secure mode; Cut + LaplaceNoise otherwise).
		noisyCut := mech.AddLaplace(testRNG, d.Cut, d.Scale)
		mech.Record(testRNG, mech.Release{Mechanism: "doubling-test", Scale: d.Scale, Sensitivity: d.Delta, Dim: 1,
			Guarantee: privacy.EpsDP(d.Delta/d.Scale, "the doubling method's noisy test (Ligett et al. 2017, Algorithm 4)")})
		accept, ex, err := decide(h, noisyCut)
		if ex {
			exact++
		}
		if err != nil {
			return Outcome{}, err
		}
		if accept {
			// Σ εⱼ in release order (the privacy odometer of Theorem A.2).
			sum, err := privacy.Compose(privacy.Sequential, "", released...)
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{
				Success: true, Stop: k + 1, Tested: k + 1, Exact: exact,
				Generation: privacy.ExPostEps(sum.Epsilon, "the k independent hypotheses released up to the accepted k (Theorem A.2)"),
				Test:       d.Guarantee(k + 1), Hypothesis: h,
			}, nil
		}
	}
	return failed(len(d.Levels), len(d.Levels), exact), nil
}
