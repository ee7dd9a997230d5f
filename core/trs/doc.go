// Package trs solves the trust-region subproblem (TRS)
//
//	minimize   q(θ) = ½·θᵀAθ − gᵀθ
//	subject to ‖θ‖₂ ≤ R
//
// exactly (the global minimizer) for a symmetric p×p matrix A of any inertia:
// positive definite, singular, indefinite or negative definite.
//
// # Why
//
// CovNR, Algorithm 3 of Ligett, Neel, Roth, Waggoner & Wu, "Accuracy First"
// ([LNRWW17], arXiv:1705.10829, May 2017 version; NeurIPS 2017), computes each
// hypothesis θᵗ from Eq. (1),
//
//	θᵗ = argmin_{‖θ‖₂ ≤ √(1/λ)} (1/2n)·(θᵀZᵗθ − 2⟨zᵗ, θ⟩) + (λ/2)‖θ‖²,
//
// where Zᵗ = XᵀX + noise and zᵗ = Xᵀy + noise are Laplace-perturbed sufficient
// statistics. With
//
//	A = Zᵗ/n + λI,   g = zᵗ/n,   R = √(1/λ)
//
// this is the TRS above. Zᵗ is noisy, so A can be indefinite: then the
// objective is non-convex, the minimizer lies on the sphere ‖θ‖ = R, and
// solving the unconstrained system and clipping θ to the ball is wrong.
//
// # Method
//
// θ is a global minimizer if and only if there is a multiplier μ with
// (the characterization used by Moré & Sorensen [MS83]; its lemma and
// section numbers were not checked against the paper, so none are cited)
//
//	(A + μI)θ = g,   A + μI ⪰ 0,   μ ≥ 0,   μ·(R − ‖θ‖) = 0,   ‖θ‖ ≤ R.
//
// [Solver.Solve] first tries [Solver.Interior] (one Cholesky factorization;
// μ = 0 when A ≻ 0 and ‖A⁻¹g‖ ≤ R). Otherwise it eigendecomposes A = QΛQᵀ
// (ascending λ₁ ≤ … ≤ λ_p), sets ĝ = Qᵀg, and solves the secular equation
//
//	φ(μ) = 1/‖θ(μ)‖ − 1/R = 0,   ‖θ(μ)‖² = Σᵢ ĝᵢ²/(λᵢ + μ)²,
//
// for μ > max(0, −λ₁) by Newton's method safeguarded by a bracket, the
// iteration of [MS83]. φ is concave and increasing there, so
// Newton's method started left of the root increases monotonically to it.
// In the hard case (ĝ is negligible on the eigenspace of λ₁ ≤ 0 and the
// pseudo-inverse solution θ̃ = Σ_{λᵢ>λ₁} ĝᵢ/(λᵢ − λ₁)·qᵢ has ‖θ̃‖ ≤ R)
// the equation has no root; then μ = −λ₁ and θ = θ̃ + τ·q₁ with τ chosen so
// that ‖θ‖ = R, as in [MS83].
//
// Deviation: [MS83] factorize A + μI by Cholesky at every Newton step and
// handle the hard case with an approximate null vector; here one symmetric
// eigendecomposition (LAPACK dsyev as implemented by gonum, the routine
// behind mat.EigenSym) makes each Newton step O(p) and gives the hard-case
// vector q₁ directly. The eigendecomposition costs about 9p³ flops against
// p³/3 for a Cholesky factorization, so Solve is fastest when the interior
// test succeeds.
//
// # Accuracy
//
// Solve works with the shifted multiplier ν = μ + λ₁, so that λᵢ + μ is
// evaluated as (λᵢ − λ₁) + ν without cancellation near the pole μ = −λ₁;
// this keeps ‖θ‖ = R to a few ulps (|‖θ‖ − R| ≤ (p + 8)·ε·R by the stopping
// rule) even when μ + λ₁ is tiny (the "nearly hard" case). The result is
// backward stable: it solves a problem whose A differs from the input by
// O(p·ε·‖A‖) and whose g differs by O(p·ε·(‖g‖ + ‖A‖·‖θ‖)), so the KKT
// residual ‖(A + μI)θ − g‖ is O(p·ε) relative to ‖A‖·‖θ‖ + μ‖θ‖ + ‖g‖, and
// A + μI ⪰ 0 holds up to O(p·ε·‖A‖) (ε = 2⁻⁵², ‖A‖ = max|λᵢ|). The tests
// observe relative residuals below 1e-13 for p ≤ 77, including 60,000
// adversarial cases run during development. At that scale, components of ĝ
// on the bottom eigenspace are treated as zero and eigenvalues within it of
// λ₁ as equal to λ₁; see [Solver.Solve].
//
// When the minimizer is not unique (hard case, or A singular with a
// degenerate bottom eigenspace) Solve returns one of the minimizers; which one
// is deterministic but may change under perturbations of A at rounding level.
//
// # Errors and panics
//
// Solve returns an error wrapping [ErrInvalid] for bad input (dimensions,
// non-finite entries, R not finite and > 0) and one wrapping
// [ErrNoConvergence] if the eigendecomposition or the Newton iteration
// fails; it does not panic. Interior reports false for bad input.
//
// # Concurrency and allocation
//
// A [Solver] owns O(p²) workspace, allocated once by [NewSolver]; Interior
// and Solve do not allocate. A Solver is not safe for concurrent use: give
// each goroutine its own.
//
// [LNRWW17]: https://arxiv.org/abs/1705.10829
// [MS83]: https://doi.org/10.1137/0904038
package trs
