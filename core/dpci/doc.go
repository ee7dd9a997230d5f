// Package dpci computes differentially private confidence intervals for the
// coefficients of L2-regularized empirical risk minimization (logistic
// regression and the Huberized-hinge SVM), following [Wang, Kifer & Lee 2019]
// (Yue Wang, Daniel Kifer and Jaewoo Lee, "Differentially Private
// Confidence Intervals for Empirical Risk Minimization", Journal of Privacy
// and Confidentiality 9(1), 2019; arXiv:1804.03794). Algorithm, theorem,
// lemma and equation numbers refer to that version.
//
// The pieces are:
//   - [ObjPertFit]: objective perturbation (Algorithm 1), ε-DP and
//     ε²/2-zCDP (Theorem 1, Proposition 1);
//   - [FitNonPrivate], [OutPertNoise], [OutPertFit]: output perturbation
//     (Eq. 7, Algorithm 4), ϕ-DP or ϕ-zCDP (Theorem 3);
//   - [Hessian] (Eq. 5), [GradCov] (Eq. 6) and their L2 sensitivities
//     [SensHessian], [SensGradCov] (Lemmas 2–5);
//   - [PrivSPDMat]: private symmetric positive definite matrix release
//     (Algorithm 2, Lemma 1);
//   - [ObjPertCI] (Algorithm 3, lines 7–15, Eq. 4), [OutPertCI] (Algorithm 5,
//     lines 6–22, Eq. 8) and [GaussianCI] (the closed form of Algorithm 5
//     under zCDP, also the non-private sandwich interval);
//   - [ObjectivePerturbation] (Algorithm 3) and [OutputPerturbation]
//     (Algorithm 5), which run everything and report the composed
//     [Guarantee] (Theorems 2 and 4);
//   - [ObjPertParts] and [OutPertParts]: the guarantee of each release of
//     Algorithms 3 and 5 as core/privacy Guarantee values, which compose to
//     Theorems 2 and 4.
//
// # Objective and notation
//
// The paper's objective (1/n)Σᵢ[f(xᵢ, yᵢ, θ) + c‖θ‖²] + (1/n)βᵀθ is the
// [erm.Objective] with Lambda = 2c and Linear = β/n. The sample size n is
// [erm.Rows.SumWeights] (the number of rows when unweighted), so bootstrap
// multiplicities act as duplicated rows. The privacy statements assume
// unweighted rows, labels in {−1, +1} and ‖xᵢ‖₂ ≤ 1 under replace-one
// adjacency; the private entry points check the last two and reject rows
// that violate them.
//
// # Randomness
//
// Every draw comes from a *rand.Rand (math/rand/v2) passed in by the caller;
// nothing uses the global source. A *rand.Rand is not safe for concurrent use.
// The Monte Carlo samples of the intervals, which release nothing, come
// from a randx.Sim seeded by four words of the caller's generator (see
// mcInterval): the releases draw from the generator itself.
// Seeded noise is simulation only and not a secure DP implementation (see
// package mech).
//
// # Errors and panics
//
// Invalid privacy parameters, models, data that break the privacy
// assumptions, and an objective-perturbation budget that cannot absorb the
// curvature term (ε′ ≤ 0, [ErrEpsilonPrime]) are returned as errors.
// Solver non-convergence is not an error: it is reported in Result.Status.
// Mismatched dimensions of matrices and slices passed by the program panic.
//
// [Wang, Kifer & Lee 2019]: https://arxiv.org/abs/1804.03794
package dpci
