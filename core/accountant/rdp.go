package accountant

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalid is wrapped by every error reporting an invalid parameter (σ,
// q, T, α, δ or ε out of its domain, or NaN).
var ErrInvalid = errors.New("accountant: invalid parameter")

// ErrNumerical is wrapped by the errors reporting a numerical failure of
// the fractional-order series (no convergence, or a cancellation that left
// a partial sum negative). It is not expected for any σ > 0, q in [0, 1]
// and finite α > 1; it exists so that a failure is an error, not a panic.
var ErrNumerical = errors.New("accountant: numerical failure")

// maxSeriesTerms bounds the fractional-order series of RDPSampledGaussian
// and the integer-order sum; an order needing more terms is refused.
const maxSeriesTerms = 10_000_000

// seriesCutoff is the stopping rule of the fractional-order series: stop
// once both new terms are below e^-40 ≈ 4.2e-18 in absolute value, i.e.
// below the resolution of A_α ≥ 1 (a Rényi divergence is ≥ 0) in float64.
// Deviation: Mironov, Talwar & Zhang's reference code (TF-Privacy's
// _compute_log_a_frac) stops at e^-30 ≈ 9.4e-14. That truncation is
// absolute, so when log A_α itself is tiny (q = 1e-7, σ = 0.1, α = 1.01:
// log A_α ≈ 4e-8) it costs up to 3e-7 of relative accuracy in ε(α),
// which the quadrature test detects; e^-40 costs a few more terms.
const seriesCutoff = -40

// RDPSampledGaussian returns the Rényi-DP ε(α) of one step of the
// Poisson-subsampled Gaussian mechanism: each record enters the batch
// independently with probability q, the batch's sum of per-record
// vectors clipped to L2 norm C is released with N(0, σ²C²·I) noise.
// Neighbouring datasets differ by adding or removing one record.
//
// It is Mironov, Talwar & Zhang, "Rényi Differential Privacy of the
// Sampled Gaussian Mechanism" (2019, [arXiv:1908.10530v1]), Section 3:
// ε(α) = log(A_α)/(α−1) with
//
//	A_α = E_{z∼μ0} [(μ(z)/μ0(z))^α],  μ0 = N(0, σ²), μ = (1−q)·N(0, σ²) + q·N(1, σ²),
//
// which they show bounds both directions D_α(μ‖μ0) and D_α(μ0‖μ) (the
// test checks this numerically).
// An integer α uses the exact binomial expansion,
//
//	A_α = Σ_{k=0..α} C(α,k) (1−q)^(α−k) q^k exp((k²−k)/(2σ²)),
//
// summed in log space (log-sum-exp, log binomials from math.Lgamma, log(1−q)
// as Log1p(−q)); it is exact up to rounding, O(α) operations. A fractional
// α uses their convergent series, which splits the integral
// at z0 = σ²·log(1/q − 1) + 1/2 and expands each half binomially in
// generalised binomial coefficients C(α, k) (signs alternate once k > α),
// each term carrying a Gaussian tail written as log erfc; the two half
// sums are kept as positive log-space partial sums and the series stops
// when both new terms are below e^-30 (see seriesCutoff).
//
// Special cases: q = 0 gives 0; q = 1 gives the Gaussian mechanism's
// α/(2σ²) (Mironov 2017, the Gaussian mechanism); α = +Inf gives +Inf
// when q > 0.
// Errors (wrapping ErrInvalid): σ not finite and > 0, q outside [0, 1],
// α ≤ 1 or NaN.
//
// [arXiv:1908.10530v1]: https://arxiv.org/abs/1908.10530v1
func RDPSampledGaussian(q, sigma, alpha float64) (float64, error) {
	if err := checkQSigma(q, sigma); err != nil {
		return 0, err
	}
	if math.IsNaN(alpha) || alpha <= 1 {
		return 0, fmt.Errorf("%w: order α must be > 1 (got %v)", ErrInvalid, alpha)
	}
	switch {
	case q == 0:
		return 0, nil
	case math.IsInf(alpha, 1):
		return math.Inf(1), nil
	case q == 1:
		return alpha / (2 * sigma * sigma), nil
	}
	var logA float64
	var err error
	if alpha == math.Trunc(alpha) {
		if alpha > maxSeriesTerms {
			return 0, fmt.Errorf("%w: integer order α = %v needs more than %d terms", ErrInvalid, alpha, maxSeriesTerms)
		}
		logA = logAInt(q, sigma, int(alpha))
	} else {
		logA, err = logAFrac(q, sigma, alpha)
		if err != nil {
			return 0, err
		}
	}
	// Rounding can leave log A_α a hair below 0 when the divergence is ~0
	// (tiny q, huge σ); a Rényi divergence is ≥ 0, so clamp.
	return math.Max(logA, 0) / (alpha - 1), nil
}

func checkQSigma(q, sigma float64) error {
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma <= 0 {
		return fmt.Errorf("%w: noise multiplier σ must be finite and > 0 (got %v)", ErrInvalid, sigma)
	}
	if math.IsNaN(q) || q < 0 || q > 1 {
		return fmt.Errorf("%w: sampling rate q must be in [0, 1] (got %v)", ErrInvalid, q)
	}
	return nil
}

// logAInt returns log A_α for an integer α ≥ 2 and 0 < q < 1 by the
// binomial expansion of Mironov, Talwar & Zhang (2019), in log space: the terms are summed
// relative to the largest, so no term over- or underflows.
func logAInt(q, sigma float64, alpha int) float64 {
	logQ, log1mQ := math.Log(q), math.Log1p(-q)
	a := float64(alpha)
	lgA1, _ := math.Lgamma(a + 1)
	inv2s2 := 1 / (2 * sigma * sigma)
	term := func(k int) float64 {
		kf := float64(k)
		lgK, _ := math.Lgamma(kf + 1)
		lgAK, _ := math.Lgamma(a - kf + 1)
		return lgA1 - lgK - lgAK + kf*logQ + (a-kf)*log1mQ + (kf*kf-kf)*inv2s2
	}
	// One pass of streaming log-sum-exp: the sum is e^m·(1 + rest), m the
	// largest exponent so far and rest the other terms relative to it, so
	// no term over- or underflows. Keeping rest apart from the 1 and
	// finishing with Log1p matters when q is tiny: then A_α = 1 + O(q²)
	// and log A_α would otherwise lose its digits to the rounding of 1+x.
	m, rest := math.Inf(-1), 0.0
	for k := 0; k <= alpha; k++ {
		t := term(k)
		if t > m {
			rest = (rest + 1) * math.Exp(m-t)
			m = t
		} else {
			rest += math.Exp(t - m)
		}
	}
	return m + math.Log1p(rest)
}

// logAFrac returns log A_α for a fractional α > 1 and 0 < q < 1 by the
// series of Mironov, Talwar & Zhang (2019, arXiv v1, Section 3):
//
//	A_α = Σ_k C(α,k) [ q^k (1−q)^(α−k) e^((k²−k)/(2σ²)) · ½erfc((k−z0)/(√2σ))
//	                 + q^(α−k) (1−q)^k e^(((α−k)²−(α−k))/(2σ²)) · ½erfc((z0−(α−k))/(√2σ)) ]
//
// with z0 = σ²·log(1/q − 1) + 1/2. The first part integrates (−∞, z0],
// the second [z0, ∞). Each part is a positive number kept as its log;
// terms with a negative C(α,k) are subtracted.
func logAFrac(q, sigma, alpha float64) (float64, error) {
	logQ, log1mQ := math.Log(q), math.Log1p(-q)
	// log(1/q − 1) = log(1−q) − log q, exact for tiny q.
	z0 := sigma*sigma*(log1mQ-logQ) + 0.5
	inv2s2 := 1 / (2 * sigma * sigma)
	sqrt2s := math.Sqrt2 * sigma
	logA0, logA1 := math.Inf(-1), math.Inf(-1)
	logCoef, positive := 0.0, true // log|C(α,0)| = 0, sign +
	var err error
	for k := 0; ; k++ {
		if k >= maxSeriesTerms {
			return 0, fmt.Errorf("%w: fractional-order series for q=%v σ=%v α=%v did not converge in %d terms", ErrNumerical, q, sigma, alpha, maxSeriesTerms)
		}
		kf := float64(k)
		j := alpha - kf
		logT0 := logCoef + kf*logQ + j*log1mQ
		logT1 := logCoef + j*logQ + kf*log1mQ
		logE0 := logErfc((kf-z0)/sqrt2s) - math.Ln2
		logE1 := logErfc((z0-j)/sqrt2s) - math.Ln2
		logS0 := logT0 + (kf*kf-kf)*inv2s2 + logE0
		logS1 := logT1 + (j*j-j)*inv2s2 + logE1
		if positive {
			logA0 = logAdd(logA0, logS0)
			logA1 = logAdd(logA1, logS1)
		} else {
			if logA0, err = logSub(logA0, logS0); err != nil {
				return 0, fmt.Errorf("q=%v σ=%v α=%v: %w", q, sigma, alpha, err)
			}
			if logA1, err = logSub(logA1, logS1); err != nil {
				return 0, fmt.Errorf("q=%v σ=%v α=%v: %w", q, sigma, alpha, err)
			}
		}
		if math.Max(logS0, logS1) < seriesCutoff {
			break
		}
		// C(α,k+1) = C(α,k)·(α−k)/(k+1); α is fractional so α−k ≠ 0.
		logCoef += math.Log(math.Abs(alpha-kf)) - math.Log(kf+1)
		if alpha-kf < 0 {
			positive = !positive
		}
	}
	return logAdd(logA0, logA1), nil
}

// logAdd returns log(e^x + e^y).
func logAdd(x, y float64) float64 {
	if x < y {
		x, y = y, x
	}
	if math.IsInf(y, -1) {
		return x
	}
	return x + math.Log1p(math.Exp(y-x))
}

// logSub returns log(e^x − e^y) for x ≥ y; x < y (a negative result) is an
// ErrNumerical error.
func logSub(x, y float64) (float64, error) {
	switch {
	case x < y:
		return 0, fmt.Errorf("%w: log-space subtraction went negative (%v − %v)", ErrNumerical, x, y)
	case math.IsInf(y, -1):
		return x, nil
	case x == y:
		return math.Inf(-1), nil
	}
	d := x - y
	// log(1 − e^−d): Log1p(−Exp(−d)) for large d, Log(−Expm1(−d)) near 0.
	if d > math.Ln2 {
		return x + math.Log1p(-math.Exp(-d)), nil
	}
	return x + math.Log(-math.Expm1(-d)), nil
}

// logErfc returns log(erfc(x)) accurately for all x. math.Erfc keeps full
// relative accuracy until it underflows near x ≈ 26.5; beyond x = 25 the
// asymptotic series
//
//	erfc(x) = e^(−x²)/(x√π) · (1 − 1/(2x²) + 3/(4x⁴) − 15/(8x⁶) + 105/(16x⁸) − …)
//
// is used, whose first neglected term is below 1e-14 there.
func logErfc(x float64) float64 {
	if x < 25 {
		return math.Log(math.Erfc(x))
	}
	t := 1 / (2 * x * x)
	// Partial sum Σ (−1)^n (2n−1)!! t^n for n = 0..5.
	s := 1 + t*(-1+t*(3+t*(-15+t*(105+t*(-945)))))
	return -x*x - math.Log(x) - 0.5*math.Log(math.Pi) + math.Log(s)
}
