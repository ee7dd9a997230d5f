// Package noisered implements Noise Reduction, the gradual-release
// mechanism of Koufogiannis, Han & Pappas ([KHP17]) as stated in Ligett,
// Neel, Roth, Waggoner & Wu, "Accuracy First: Selecting a Differential
// Privacy Level for Accuracy-Constrained ERM" ([LNRWW17], arXiv:1705.10829v1,
// May 2017; NeurIPS 2017), Section 2.2, Algorithm 1 and Theorem 2.7:
//
//	Input: v, Δ, ε_1 < ε_2 < … < ε_T
//	v̂_T := v + Lap(Δ/ε_T)                              (i.i.d. per coordinate)
//	for t = T−1, …, 1:
//	    with probability (ε_t/ε_{t+1})²:  v̂_t := v̂_{t+1}
//	    else:                              v̂_t := v̂_{t+1} + Lap(Δ/ε_t)
//	return v̂_1, …, v̂_T
//
// [Chain] releases v̂_1, v̂_2, … lazily, most private first, as the
// accuracy-first searches consume them; [Reduce] is the literal eager
// algorithm, kept as the reference implementation. [Geometric] builds the
// usual ε grid.
//
// # Privacy guarantee
//
// Theorem 2.7 of [LNRWW17] (from [KHP17]): when v = f(D) has ℓ1 sensitivity
// Δ (‖f(D) − f(D′)‖₁ ≤ Δ for neighbouring D, D′), releasing the prefix
// (v̂_1, …, v̂_t) is ε_t-differentially private, for every t. The marginal
// of each v̂_t is v + Lap(Δ/ε_t) per coordinate, the Laplace mechanism at
// ε_t. A search that stops at step t has spent ε_t (ex post), not
// ε_1 + … + ε_t; the levels above t are drawn but never released. One
// chain is one release: a fresh chain on the same data spends its budget
// again.
//
// # Randomness
//
// Every draw comes from the *rand.Rand (math/rand/v2) passed to [New] or
// [Reduce]; the global source is never used. [New] draws the whole chain
// before it returns and keeps no reference to the generator. Laplace draws
// use [mech.LaplaceNoise]. The same seed gives bit-identical output on one
// platform. [Chain] and [Reduce] consume the generator in different orders,
// so they agree in distribution, not draw by draw. Seeded noise is
// simulation only, not a secure implementation of differential privacy
// (see package mech).
//
// # Errors and panics
//
// [New], [Reduce] and [Geometric] return an error (prefix "noisered: ") for
// invalid parameters: Δ, ε or a coordinate of v that is NaN, infinite or
// out of range, an ε list that is empty or not strictly increasing, or a
// Laplace scale Δ/ε that overflows or underflows. They do not panic on
// user input.
//
// # Units
//
// ε is in nats; Δ is an ℓ1 bound in the units of v; Laplace scales are in
// the units of v.
//
// [KHP17]: https://arxiv.org/abs/1504.00429
// [LNRWW17]: https://arxiv.org/abs/1705.10829v1
package noisered
