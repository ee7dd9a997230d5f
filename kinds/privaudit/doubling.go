package privaudit

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/audit"
	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/core/privacy"
)

// excessPair is a neighbouring pair for the accuracy query of Ligett et
// al.'s searches, the excess risk e(θ) = L(θ) − L(θ*) of a fixed
// hypothesis θ (‖θ‖ ≤ M), whose ℓ1 sensitivity the problem states
// (Problem.QuerySensitivity: Claim A.12 for logistic regression, Claim A.5
// for ridge).
type excessPair struct {
	what  string
	pr    [2]accfirst.Problem
	theta []float64
}

// excess returns e(θ) on side 0 (D) and 1 (D′).
func (p excessPair) excess() [2]float64 {
	return [2]float64{p.pr[0].Excess(p.theta), p.pr[1].Excess(p.theta)}
}

// ratio returns |e_D(θ) − e_D′(θ)| / Δ for the calibration's Δ.
func (p excessPair) ratio(c expost.Calibration) float64 {
	e := p.excess()
	return math.Abs(e[0]-e[1]) / p.pr[0].QuerySensitivity(c)
}

// newExcessPair builds the pair of a problem ("logistic" or "ridge") with
// n records in one feature: n−1 records at x = 1 with label/target +1,
// and the replaced record at x = 1 with +1 on D and −1 on D′; θ = t·M
// for t ∈ [−1, 1] (M = Problem.Radius). With t = −1 the replaced record is
// as badly fitted by θ as it can be on D and as well as it can be on D′,
// while θ* fits it well on D and badly on D′ (the shared records pull θ*
// towards +1): both parts of e(θ) = L(θ) − L(θ*) move it the same way, the
// worst case of the claims' two-term argument.
func newExcessPair(problem string, n int, lambda, t float64) (excessPair, error) {
	var out excessPair
	for side, y := range []float64{1, -1} {
		x := mat.NewDense(n, 1, nil)
		yy := make([]float64, n)
		for i := range yy {
			x.Set(i, 0, 1)
			yy[i] = 1
		}
		yy[n-1] = y
		var pr accfirst.Problem
		var err error
		switch problem {
		case "logistic":
			pr, err = accfirst.NewLogistic(x, yy, lambda)
		case "ridge":
			pr, err = accfirst.NewRidge(x, yy, lambda, accfirst.RiskPaper)
		default:
			err = fmt.Errorf("privaudit: unknown problem %q", problem)
		}
		if err != nil {
			return excessPair{}, err
		}
		out.pr[side] = pr
	}
	out.theta = []float64{t * out.pr[0].Radius()}
	out.what = fmt.Sprintf("%s, n = %d, one feature, λ = %g: n−1 records (x=1, y=+1), the replaced one y=+1 on D, −1 on D′; θ = %g·M", problem, n, lambda, t)
	return out, nil
}

// doublingPair is the pair of the doubling-test audit: logistic
// regression, n = 10, λ = 0.1, θ = −M, where |e_D(θ) − e_D′(θ)| is 0.73 of
// Claim A.12's Δ (TestExactLoss_DoublingTest finds no candidate closer).
var doublingPair = sync.OnceValues(func() (excessPair, error) {
	return newExcessPair("logistic", 10, 0.1, -1)
})

// fixedHyp is a hypothesis θ of a problem, its excess computed by the
// problem (the code the searches call).
type fixedHyp struct {
	pr    accfirst.Problem
	theta []float64
}

func (h fixedHyp) Bounds() (float64, float64) { return h.pr.Bounds(h.theta) }
func (h fixedHyp) Excess() (float64, error)   { return h.pr.Excess(h.theta), nil }
func (h fixedHyp) Theta() ([]float64, error)  { return h.theta, nil }

// doublingTarget audits the accuracy test of the doubling method (Ligett et
// al. 2017, Algorithm 4; expost.Doubling with the paper's calibration,
// expost.Calibration.Doubling): accept hypothesis k when
// e(θ_k) ≤ α/2 + Lap(α/(2·log(T/γ))), an ε_test = Δ/scale private use of
// the excess risk, with Δ = Claim A.12's query sensitivity from accfirst.
// The hypothesis is fixed (the test's privacy is conditional on it) and the
// run has one level, so the release is the accept bit. γ = 0.1; α is set
// so that ε_test = ε, and T (the number of levels the calibration is for)
// so that e_D(θ) ≈ cut + scale, where the accept probabilities are Laplace
// tails whose ratio is exactly e^{|Δe|/scale}.
func doublingTarget() target {
	return target{
		name:  "doubling-test",
		what:  "the doubling method's accuracy test (Ligett et al. Algorithm 4, paper calibration) on the excess risk of θ = −M: logistic, n = 10, λ = 0.1, one feature; 9 records (x=1, y=+1), the replaced one y=+1 on D and −1 on D′; Δ = Claim A.12's (accfirst), α set for ε_test = ε; s0 = accepted",
		stats: 1, variants: []string{HalfNoise},
		sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
			pair, err := doublingPair()
			if err != nil {
				return nil, err
			}
			const gamma = 0.1
			delta := pair.pr[0].QuerySensitivity(expost.Paper)
			e := pair.excess()
			eLow := math.Min(e[0], e[1])
			// ε_test = 2Δ·log(T/γ)/α; scale = Δ/ε_test, cut = scale·log(T/γ).
			// e = cut + scale ⇔ log(T/γ) = e·ε/Δ − 1.
			logTG := eLow*x/delta - 1
			T := max(1, int(math.Round(gamma*math.Exp(logTG))))
			levels := make([]float64, T)
			for k := range levels {
				levels[k] = math.Ldexp(1, k)
			}
			alpha := 2 * delta * math.Log(float64(T)/gamma) / x
			d, err := expost.Paper.Doubling(alpha, gamma, delta, levels)
			if err != nil {
				return nil, err
			}
			if got := d.EpsilonTest(); math.Abs(got-x) > 1e-9*x {
				return nil, fmt.Errorf("privaudit: doubling test ε_test = %v, want %v", got, x)
			}
			if v == HalfNoise {
				// The test noise drawn at half the calibrated scale, the
				// cut as calibrated.
				d.Scale /= 2
			}
			d.Levels = levels[:1] // one test: the release is its accept bit
			gen := func(side int) expost.Independent {
				return func(*rand.Rand, float64) (expost.Hypothesis, privacy.Guarantee, error) {
					return fixedHyp{pair.pr[side], pair.theta}, privacy.EpsDP(1, "a fixed hypothesis (the audit conditions on it)"), nil
				}
			}
			gens := [2]expost.Independent{gen(0), gen(1)}
			return func(dst []float64, rng *rand.Rand, side int) error {
				o, err := expost.Doubling(context.Background(), rng, rng, gens[side], d)
				if err != nil {
					return err
				}
				dst[0] = 0
				if o.Success {
					dst[0] = 1
				}
				return nil
			}, nil
		},
	}
}
