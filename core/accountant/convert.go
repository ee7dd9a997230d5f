package accountant

import (
	"fmt"
	"math"
)

// Conversion names a rule turning an RDP curve into an (ε, δ)-DP
// guarantee. The zero value is Tight.
type Conversion int

const (
	// Tight is the conversion of Balle, Barthe, Gaboardi, Hsu & Sato,
	// "Hypothesis Testing Interpretations and Rényi Differential Privacy"
	// (AISTATS 2020, [arXiv:1905.09982], Theorem 21 in the arXiv numbering
	// cited by Opacus; the version was not checked), also Canonne, Kamath &
	// Steinke, "The Discrete Gaussian for Differential Privacy"
	// (NeurIPS 2020, [arXiv:2004.00010v4], Proposition 12): an
	// (α, r)-RDP mechanism is (ε, δ)-DP for
	//
	//	ε = r + log((α−1)/α) − (log δ + log α)/(α−1).
	//
	// It is the formula of TF-Privacy's rdp_privacy_accountant
	// _compute_epsilon and of Opacus's analysis/rdp.get_privacy_spent
	// (both read from their source). Like TF-Privacy, each order also
	// gets the KL bound δ ≤ √(1 − e^−r) (Bretagnolle–Huber, with
	// KL = D_1 ≤ D_α = r): where it already gives δ, ε = 0. ε is clamped at
	// 0. Deviation: TF-Privacy skips the formula for α ≤ 1.01 (numerical
	// caution); here every α > 1 is used — the formula is finite there and
	// its ε is never below the true one, so this only matters for grids
	// with orders in (1, 1.01].
	//
	// [arXiv:1905.09982]: https://arxiv.org/abs/1905.09982
	// [arXiv:2004.00010v4]: https://arxiv.org/abs/2004.00010v4
	Tight Conversion = iota
	// Classic is Mironov, "Rényi Differential Privacy" (CSF 2017,
	// [arXiv:1702.07476v3], Proposition 3):
	//
	//	ε = r + log(1/δ)/(α−1).
	//
	// It is what TF-Privacy and Opacus used before they switched to
	// Tight; published values from that time are reproduced with it.
	//
	// [arXiv:1702.07476v3]: https://arxiv.org/abs/1702.07476v3
	Classic
)

// String returns "tight" or "classic".
func (c Conversion) String() string {
	switch c {
	case Tight:
		return "tight"
	case Classic:
		return "classic"
	}
	return fmt.Sprintf("Conversion(%d)", int(c))
}

// DPSGDOrders is the grid of RDP orders of TF-Privacy's
// compute_dp_sgd_privacy_lib.compute_dp_sgd_privacy (read from
// tensorflow/privacy, tensorflow_privacy/privacy/analysis/
// compute_dp_sgd_privacy_lib.py):
//
//	[1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5] + [5, 6, …, 63] + [128, 256, 512]
//
// 72 orders; it is the default of SampledGaussian.Epsilon. Its fractional
// orders near 1 serve small ε (large σ, small q·√T), its large orders
// large ε. Do not modify it; copy it first.
var DPSGDOrders = func() []float64 {
	o := []float64{1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5}
	for a := 5; a < 64; a++ {
		o = append(o, float64(a))
	}
	return append(o, 128, 256, 512)
}()

// RdpAccountantOrders is the default grid of TF-Privacy's (and
// dp_accounting's) RdpAccountant (read from tensorflow/privacy,
// tensorflow_privacy/privacy/analysis/rdp_privacy_accountant.py):
// 2…10, 12, 14, 16, 20, 24, 28, 32, 48, 64, 128, 256, 512, 1024.
var RdpAccountantOrders = []float64{2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 20, 24, 28, 32, 48, 64, 128, 256, 512, 1024}

// OpacusOrders is Opacus's RDPAccountant.DEFAULT_ALPHAS (read from
// pytorch/opacus, opacus/accountants/rdp.py): 1.1, 1.2, …, 10.9 (step 0.1,
// computed as 1 + x/10 like the Python) and 12, 13, …, 63.
var OpacusOrders = func() []float64 {
	var o []float64
	for x := 1; x < 100; x++ {
		o = append(o, 1+float64(x)/10)
	}
	for a := 12; a < 64; a++ {
		o = append(o, float64(a))
	}
	return o
}()

// EpsilonFromRDP returns the smallest ε over orders such that a mechanism
// with Rényi-DP rdp[i] at order orders[i] for every i is (ε, δ)-DP by the
// conversion conv, and the order that attains it. It is the function
// TF-Privacy calls _compute_epsilon and Opacus get_privacy_spent. An order
// with rdp = +Inf yields ε = +Inf there; if every order does, ε = +Inf and
// order is the first order.
//
// Errors (wrapping ErrInvalid): len(orders) ≠ len(rdp) or zero, an order
// ≤ 1, +Inf or NaN, an rdp value < 0 or NaN, δ outside (0, 1), an unknown conv.
func EpsilonFromRDP(orders, rdp []float64, delta float64, conv Conversion) (epsilon, order float64, err error) {
	if err := checkCurve(orders, rdp); err != nil {
		return 0, 0, err
	}
	if math.IsNaN(delta) || delta <= 0 || delta >= 1 {
		return 0, 0, fmt.Errorf("%w: δ must be in (0, 1) (got %v)", ErrInvalid, delta)
	}
	if conv != Tight && conv != Classic {
		return 0, 0, fmt.Errorf("%w: unknown conversion %v", ErrInvalid, conv)
	}
	logDelta := math.Log(delta)
	best, bestOrder := math.Inf(1), orders[0]
	for i, a := range orders {
		r := rdp[i]
		var e float64
		switch {
		case math.IsInf(r, 1):
			e = math.Inf(1)
		case conv == Classic:
			e = r - logDelta/(a-1)
		// KL bound: δ ≥ √(1−e^−r) ⇔ δ² + expm1(−r) ≥ 0 (TF-Privacy's test,
		// written to keep precision for tiny r).
		case delta*delta+math.Expm1(-r) >= 0:
			e = 0
		default:
			// log((α−1)/α) = Log1p(−1/α).
			e = r + math.Log1p(-1/a) - (logDelta+math.Log(a))/(a-1)
		}
		if e < best {
			best, bestOrder = e, a
		}
	}
	return math.Max(best, 0), bestOrder, nil
}

// DeltaFromRDP returns the smallest δ over orders such that a mechanism
// with Rényi-DP rdp[i] at order orders[i] is (ε, δ)-DP by conv, and the
// order attaining it; the inverse of EpsilonFromRDP at fixed orders. With
// Tight, log δ = (α−1)(r − ε + log(1 − 1/α)) − log α (Canonne, Kamath &
// Steinke 2020, Proposition 12), and the KL bound √(1 − e^−r) is also
// taken, as in TF-Privacy's _compute_delta; with Classic, δ = e^((α−1)(r−ε))
// (Mironov 2017, Proposition 3). δ is capped at 1. Computed in log space,
// so a tiny δ does not underflow before the minimum is taken.
//
// Errors (wrapping ErrInvalid): as EpsilonFromRDP, with ε < 0 or NaN in
// place of a bad δ (ε = +Inf gives δ = 0).
func DeltaFromRDP(orders, rdp []float64, epsilon float64, conv Conversion) (delta, order float64, err error) {
	if err := checkCurve(orders, rdp); err != nil {
		return 0, 0, err
	}
	if math.IsNaN(epsilon) || epsilon < 0 {
		return 0, 0, fmt.Errorf("%w: ε must be ≥ 0 (got %v)", ErrInvalid, epsilon)
	}
	if conv != Tight && conv != Classic {
		return 0, 0, fmt.Errorf("%w: unknown conversion %v", ErrInvalid, conv)
	}
	if math.IsInf(epsilon, 1) {
		return 0, orders[0], nil
	}
	best, bestOrder := math.Inf(1), orders[0]
	for i, a := range orders {
		r := rdp[i]
		var ld float64
		switch {
		case math.IsInf(r, 1):
			ld = 0
		case conv == Classic:
			ld = (a - 1) * (r - epsilon)
		default:
			ld = (a-1)*(r-epsilon+math.Log1p(-1/a)) - math.Log(a)
			if r == 0 {
				ld = math.Inf(-1)
			} else {
				ld = math.Min(ld, 0.5*math.Log(-math.Expm1(-r)))
			}
		}
		if ld < best {
			best, bestOrder = ld, a
		}
	}
	return math.Min(math.Exp(best), 1), bestOrder, nil
}

func checkCurve(orders, rdp []float64) error {
	if len(orders) == 0 || len(orders) != len(rdp) {
		return fmt.Errorf("%w: need as many RDP values as orders, at least one (got %d orders, %d values)", ErrInvalid, len(orders), len(rdp))
	}
	for i, a := range orders {
		if math.IsNaN(a) || math.IsInf(a, 1) || a <= 1 {
			return fmt.Errorf("%w: orders[%d] must be finite and > 1 (got %v)", ErrInvalid, i, a)
		}
		if r := rdp[i]; math.IsNaN(r) || r < 0 {
			return fmt.Errorf("%w: rdp[%d] must be ≥ 0 (got %v)", ErrInvalid, i, r)
		}
	}
	return nil
}
