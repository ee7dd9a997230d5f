// Package mech implements the basic differential-privacy mechanisms used by
// the reproductions: the Laplace, Gaussian, exponential and randomized-response
// mechanisms, report-noisy-max, and the spherical Laplace noise of objective
// and output perturbation.
//
// The mechanisms follow Sections 3.1–3.4 of the review by Nguyen (2019), which
// in turn follows Dwork & Roth (2014). Each exported name cites the definition
// or theorem that gives its privacy guarantee.
//
// # Privacy semantics
//
// Guarantees are stated for neighbouring datasets at distance 1 (one record
// changed); the caller supplies the sensitivity of its query under that
// adjacency. Every call that draws noise is one release: it spends the stated
// budget once, and repeated calls compose (ε adds up under pure DP, ρ adds
// up under zCDP). Sensitivities are worst-case bounds and are never estimated
// from the data here.
//
// # Randomness
//
// Every draw comes from a *rand.Rand (math/rand/v2) passed in by the caller;
// gonum distributions receive it as their Src. The package never uses the
// global math/rand source, a nil gonum Src, or time-based seeds, so a result
// is reproducible bit-for-bit from its seed on one platform. A *rand.Rand is
// not safe for concurrent use: give each goroutine its own generator. The
// mechanism values (Laplace, Gaussian) are immutable after construction and
// may be shared between goroutines.
//
// # Simulation only: not secure noise
//
// Seeded noise is for simulation and reproducibility. It is not a secure
// implementation of differential privacy and must not be used to protect real
// data. Reasons:
//   - a seeded generator is predictable to anyone who learns the seed;
//   - floating-point samplers leak through their least significant bits.
//     gonum's Laplace sampler (used by [LaplaceNoise]) is the single-uniform
//     inverse-CDF construction attacked by [Mironov 2012], and the Gaussian
//     and exponential samplers have the same kind of weakness;
//   - no care is taken against timing side channels.
//
// A production release would use a sampler designed for it, such as the
// secure noise of Google's differential-privacy library ([Google DP noise]),
// built on discrete distributions and snapping.
//
// # Errors and panics
//
// Constructors and mechanisms return a *[ParamError] (message prefix "mech: ")
// when a privacy parameter, sensitivity or scale is NaN, infinite or out of
// range, or an input is empty. The raw samplers [LaplaceNoise] and
// [ExponentialNoise], which have no error result, panic on a non-positive or
// non-finite scale: they are building blocks for code that has already
// validated its parameters. Slices of mismatched length passed by the program
// (dst and x) also panic, as in gonum.
//
// # Units
//
// ε (epsilon) and ρ (rho) are in nats. Sensitivities are in the units of the
// query output: l1Sensitivity is an L1 bound, l2Sensitivity an L2 bound.
// Laplace scales and Gaussian standard deviations are in the same units.
//
// [Mironov 2012]: https://doi.org/10.1145/2382196.2382264
// [Google DP noise]: https://github.com/google/differential-privacy/tree/main/go/noise
package mech
