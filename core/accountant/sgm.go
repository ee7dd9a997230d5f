package accountant

import (
	"fmt"
	"math"
)

// SampledGaussian is T steps of the Poisson-subsampled Gaussian mechanism
// (DP-SGD's noisy step, Abadi et al. 2016, Algorithm 1, with Poisson
// sampling): each step draws a batch by including every record
// independently with probability Q, clips each record's vector to L2 norm
// C and releases the sum plus N(0, Sigma²·C²·I). The guarantee covers the
// release of all T noisy sums (so every intermediate model), under
// add-or-remove-one adjacency. The value is immutable; its methods are
// safe for concurrent use.
type SampledGaussian struct {
	// Sigma is the noise multiplier: the standard deviation of the noise
	// divided by the L2 clipping bound C. Required, finite, > 0.
	Sigma float64
	// Q is the sampling rate (expected batch size / dataset size).
	// Required, in [0, 1]; 0 releases nothing about any record, 1 is the
	// full-batch Gaussian mechanism.
	Q float64
	// Steps is T, the number of steps composed. Required, ≥ 1.
	Steps int
}

// Validate reports whether the mechanism's parameters are in their
// domains; every method calls it first.
func (m SampledGaussian) Validate() error {
	if err := checkQSigma(m.Q, m.Sigma); err != nil {
		return err
	}
	if m.Steps < 1 {
		return fmt.Errorf("%w: steps T must be ≥ 1 (got %d)", ErrInvalid, m.Steps)
	}
	return nil
}

// RDP returns the Rényi-DP ε(α) of the T steps: T times the per-step
// value of RDPSampledGaussian, since RDP composes additively (Mironov
// 2017, [arXiv:1702.07476v3], Proposition 1).
//
// [arXiv:1702.07476v3]: https://arxiv.org/abs/1702.07476v3
func (m SampledGaussian) RDP(alpha float64) (float64, error) {
	if err := m.Validate(); err != nil {
		return 0, err
	}
	r, err := RDPSampledGaussian(m.Q, m.Sigma, alpha)
	if err != nil {
		return 0, err
	}
	return float64(m.Steps) * r, nil
}

// RDPCurve fills dst with RDP(orders[i]) and returns it; dst is allocated
// when nil and must otherwise have len(orders).
func (m SampledGaussian) RDPCurve(dst, orders []float64) ([]float64, error) {
	if dst == nil {
		dst = make([]float64, len(orders))
	}
	if len(dst) != len(orders) {
		return nil, fmt.Errorf("%w: dst has %d elements for %d orders", ErrInvalid, len(dst), len(orders))
	}
	for i, a := range orders {
		r, err := m.RDP(a)
		if err != nil {
			return nil, fmt.Errorf("order %v: %w", a, err)
		}
		dst[i] = r
	}
	return dst, nil
}

// Epsilon returns the ε for which the T steps are (ε, δ)-DP, minimised
// over DPSGDOrders with the Tight conversion, and the minimising order.
// This is what TF-Privacy's compute_dp_sgd_privacy reports for the same
// (q, σ, T, δ). An optimal order at either end of the grid means a wider
// grid might give a smaller ε; use EpsilonWith to pass one.
//
// Errors (wrapping ErrInvalid): see Validate; δ outside (0, 1) or NaN.
func (m SampledGaussian) Epsilon(delta float64) (epsilon, order float64, err error) {
	return m.EpsilonWith(delta, nil, Tight)
}

// EpsilonWith is Epsilon over the given orders (nil means DPSGDOrders)
// with the given conversion.
func (m SampledGaussian) EpsilonWith(delta float64, orders []float64, conv Conversion) (epsilon, order float64, err error) {
	if err := m.Validate(); err != nil {
		return 0, 0, err
	}
	if math.IsNaN(delta) || delta <= 0 || delta >= 1 {
		return 0, 0, fmt.Errorf("%w: δ must be in (0, 1) (got %v)", ErrInvalid, delta)
	}
	if orders == nil {
		orders = DPSGDOrders
	}
	rdp, err := m.RDPCurve(nil, orders)
	if err != nil {
		return 0, 0, err
	}
	return EpsilonFromRDP(orders, rdp, delta, conv)
}

// Delta returns the δ for which the T steps are (ε, δ)-DP, minimised over
// DPSGDOrders with the Tight conversion, and the minimising order.
//
// Errors (wrapping ErrInvalid): see Validate; ε < 0 or NaN.
func (m SampledGaussian) Delta(epsilon float64) (delta, order float64, err error) {
	return m.DeltaWith(epsilon, nil, Tight)
}

// DeltaWith is Delta over the given orders (nil means DPSGDOrders) with
// the given conversion.
func (m SampledGaussian) DeltaWith(epsilon float64, orders []float64, conv Conversion) (delta, order float64, err error) {
	if err := m.Validate(); err != nil {
		return 0, 0, err
	}
	if orders == nil {
		orders = DPSGDOrders
	}
	rdp, err := m.RDPCurve(nil, orders)
	if err != nil {
		return 0, 0, err
	}
	return DeltaFromRDP(orders, rdp, epsilon, conv)
}
