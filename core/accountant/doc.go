// Package accountant computes the privacy of DP-SGD-style training by
// Rényi-DP accounting of the Poisson-subsampled Gaussian mechanism,
// converted to (ε, δ)-DP, and by a numerical privacy-loss-distribution
// accountant, which is tighter. It is the numerical core only: callers turn its
// ε and δ into a privacy.Guarantee (core/privacy).
//
// # What is computed
//
// SampledGaussian{Sigma, Q, Steps} is T = Steps rounds of: include each
// record independently with probability q, sum the records' vectors clipped
// to L2 norm C, add N(0, σ²C²·I). Neighbouring datasets differ by adding or
// removing one record. Its guarantee covers the release of every one of the
// T noisy sums (hence every intermediate model).
//
//   - RDPSampledGaussian and SampledGaussian.RDP give ε(α), the Rényi-DP of
//     order α (Mironov, "Rényi Differential Privacy", CSF 2017,
//     [arXiv:1702.07476v3]), from Mironov, Talwar & Zhang,
//     "Rényi Differential Privacy of the Sampled Gaussian Mechanism" (2019,
//     [arXiv:1908.10530v1], Section 3): ε(α) = log(A_α)/(α−1), A_α the
//     α-th moment of the likelihood ratio of (1−q)N(0,σ²) + qN(1,σ²) to
//     N(0,σ²). Integer α: the exact binomial sum; fractional α: their
//     two-sided series. T steps compose by adding RDP (Mironov 2017,
//     Proposition 1).
//
//   - EpsilonFromRDP and SampledGaussian.Epsilon give the smallest ε over a
//     grid of orders with the chosen Conversion: Tight (Balle et al. 2020,
//     [arXiv:1905.09982], Theorem 21 in the arXiv numbering cited by
//     Opacus; Canonne, Kamath & Steinke 2020, [arXiv:2004.00010v4],
//     Proposition 12 — what TF-Privacy's and Opacus's current accountants
//     use) or Classic (Mironov 2017, Proposition 3).
//     DeltaFromRDP and SampledGaussian.Delta invert them.
//
//   - SampledGaussian.EpsilonPLD and SampledGaussian.DeltaPLD give a
//     tighter, numerical ε(δ) and δ(ε) by privacy-loss distributions
//     (PLD; Meiser & Mohammadi 2018; Koskela, Jälkö & Honkela 2020,
//     [arXiv:1906.03049]; Google's dp_accounting PLD accountant): both
//     dominating pairs of add-or-remove-one adjacency (Zhu, Dong & Wang
//     2022), each privacy loss discretised on a grid of width h by
//     connect-the-dots (Doroshenko et al. 2022, [arXiv:2207.04380]),
//     composed T-fold by FFT, δ(ε) = mass at +∞ + Σ_{l>ε} p(l)(1 − e^(ε−l)).
//
// Every value is an upper bound on the mechanism's privacy loss: RDP at a
// grid of orders is exact up to rounding, and each conversion is a valid
// (not a tight) bound. A finer or wider grid can only lower ε.
//
// # Privacy-loss distributions
//
// The PLD value is an upper bound too, for reasons stated in full at
// EpsilonPLD: the discretised pair dominates the true one (its privacy
// profile interpolates the true convex profile from above), composition
// keeps dominance, the losses outside a window are moved up (to +∞ above,
// to the window's lower end below) and never down, the FFTs are padded so
// that nothing wraps around, and an ℓ1 worst-case estimate of the
// round-off of the discretisation and of every FFT (Higham's radix-2
// bound, applied to gonum's mixed-radix FFT; the quadrature's truncation
// error left out) is carried along and added to δ. It is typically 5–10 %
// below the RDP value on DP-SGD settings (e.g. σ = 1.1, q = 256/60000,
// T = 14063, δ = 1e-5: 2.39 against 2.60). The default grid h = min(1e-3, q·√(e^(1/σ²)−1)/5) puts ε
// within ~0.5 % of its h → 0 limit; one call costs tens to hundreds of
// milliseconds for T up to 10⁵ (the window, and so the cost, grows with
// ε; the grid is coarsened beyond 2¹⁷ points). The round-off budget is
// ~1e-8 to 1e-7 for T in the thousands to 10⁵, so at δ of that order it
// dominates (ε = +Inf when it exceeds δ); there the RDP value is the one
// to use. An optimistic variant (losses rounded down) exists for the
// tests only, to bracket the truth.
//
// # Orders
//
// The default grid is DPSGDOrders, the grid of TF-Privacy's
// compute_dp_sgd_privacy: 1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5,
// 5…63, 128, 256, 512. RdpAccountantOrders (TF-Privacy/dp_accounting's
// RdpAccountant default) and OpacusOrders (Opacus's DEFAULT_ALPHAS) are
// given to reproduce those libraries. The optimal order is returned; one at
// either end of the grid says the grid is too narrow.
//
// # Numerics
//
// Everything is in log space: binomial coefficients by math.Lgamma, log(1−q)
// by Log1p, sums by streaming log-sum-exp, Gaussian tails by log erfc (with
// an asymptotic series where math.Erfc underflows, x ≥ 25). The integer sum
// keeps the largest term apart and ends with Log1p, so that a tiny
// divergence (A_α = 1 + O(q²)) keeps its relative digits. The fractional
// series stops at terms below e^-40 (Deviation: the reference code stops at
// e^-30; see seriesCutoff). Accuracy, measured against numerical
// integration of both divergence directions: ≤ 1e-9 relative in log A_α
// plus ≈ 2e-16 absolute (the resolution of log A_α near 0), over q from 1e-7
// to 0.999, σ from 0.1 to 100 and α to 256. Cost is O(α) per integer order
// and a few dozen terms per fractional one; integer orders above 10⁷ are
// refused.
//
// Published values reproduced by the tests: TF-Privacy's
// compute_dp_sgd_privacy expectations (to 12–15 digits, both conversions),
// its tutorial's ε = 3.01, its rdp_accountant tests, and Opacus's RDP
// accountant test (12 digits). The newer TF-Privacy expectations for
// fractional optimal orders differ in the 5th–12th digit because
// dp_accounting's fractional series drops the signs of the negative
// binomial coefficients (an upper bound); a re-implementation of that
// variant in the tests reproduces them.
//
// # Errors and concurrency
//
// Invalid parameters (σ not finite and > 0, q outside [0, 1], T < 1, α ≤ 1,
// δ outside (0, 1), ε < 0, a PLD interval outside (0, 0.1], NaN anywhere)
// return errors wrapping ErrInvalid;
// nothing panics on user input. All functions are pure and safe for
// concurrent use. No randomness is involved.
//
// [arXiv:1702.07476v3]: https://arxiv.org/abs/1702.07476v3
// [arXiv:1908.10530v1]: https://arxiv.org/abs/1908.10530v1
// [arXiv:1905.09982]: https://arxiv.org/abs/1905.09982
// [arXiv:2004.00010v4]: https://arxiv.org/abs/2004.00010v4
// [arXiv:1906.03049]: https://arxiv.org/abs/1906.03049
// [arXiv:2207.04380]: https://arxiv.org/abs/2207.04380
package accountant
