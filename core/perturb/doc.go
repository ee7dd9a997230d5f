// Package perturb implements the differentially private training procedures
// for L2-regularized linear classifiers of Chaudhuri, Monteleoni & Sarwate
// ([CMS11], JMLR 12:1069–1109, 2011, published version): objective
// perturbation (Algorithm 2) and output perturbation (Algorithm 1), as
// restated by Chaudhuri & Vinterbo ([CV13], NIPS 2013, Section 4.1,
// Algorithms 3 and 4) for their stability-based validation procedure.
//
// # Noise first, then a deterministic fit
//
// [CV13] write a private trainer as a pair T = (G, F): a noise distribution
// G and a deterministic map F(T, λ, ε, R). Each procedure here is split the
// same way. A plan ([PlanObjPert], [PlanOutPert]) is computed from the
// parameters and the number of rows n alone, without randomness or data; its
// DrawNoise method is G; its Fit method is F, deterministic given the noise.
// Fitting neighbouring datasets with the same noise is how the training
// stability of [CV13] Theorem 4 (‖F(T,R) − F(T′,R)‖ ≤ 2/(λn)) is tested,
// and output perturbation can reuse one non-private fit for many noise
// draws ([OutPertPlan.Release]).
//
// # Privacy guarantee
//
// Neighbouring datasets have the same size n and differ in one labelled row
// (replacement). Provided every row has ‖xᵢ‖₂ ≤ 1, every label is ±1, and
// the loss is convex, differentiable and 1-Lipschitz (and, for objective
// perturbation, twice differentiable with ℓ″ ≤ c), one DrawNoise followed
// by one Fit releases W, which is EpsilonDelivered-differentially private
// (pure ε-DP, δ = 0). Only Result.W is covered: Iter, GradNorm, Value and
// Status are computed from the data without noise and are diagnostics for
// the simulation, not releases. Every call of DrawNoise with a Fit on real
// data spends the budget again. Fit checks the norm and label conditions
// and returns an error instead of fitting when they fail.
//
// Deviation: the guarantees assume the exact minimizer; Fit stops at
// ‖∇J‖₂ ≤ GradTol (default 1e-10), so W is within GradTol/λ of it (the
// privacy analysis of inexact minimizers is outside the scope of this
// simulation harness).
//
// # Notes from the reproduction
//
// From docs/original-code.md, CV-1 and CV-2 (facts about the co-author's R
// package PrivateLR 1.2-22, function dplr, on CRAN and mirrored at
// https://github.com/cran/PrivateLR): it matches CMS11
// in λ and ε, but prepends its intercept column after scaling rows to the
// unit ball, so ‖x‖ reaches √2 and the delivered ε is about 1.4× the stated
// one. This package does not prepend anything: callers append the constant
// before scaling, and Fit rejects rows with ‖x‖ > 1 + 1e-9. The variant
// "privatelr-1.1-69" of [ObjPertOptions] reproduces the earlier 2013 release of the
// package, which differs; see there.
//
// # Randomness
//
// Noise comes from [mech.SphericalLaplace] with the *rand.Rand passed by the
// caller (math/rand/v2); the global source is never used. Seeded noise is
// simulation only, not a secure implementation (see package mech).
//
// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
// [CV13]: https://proceedings.neurips.cc/paper/2013
package perturb
