// Package erm solves the L2-regularized empirical risk minimization problems
// behind the private linear classifiers of Chaudhuri, Monteleoni & Sarwate
// ([CMS11]: "Differentially Private Empirical Risk Minimization", JMLR
// 12:1069–1109, 2011, published version) and Chaudhuri & Vinterbo ([CV13]:
// "A Stability-based Validation Procedure for Differentially Private Machine
// Learning", NIPS 2013, with supplementary material; Section 4.1): margin
// losses (logistic, Huber-hinge, hinge, ramp), the objective
//
//	J(w) = (Lambda/2)‖w‖² + (1/N)·Σᵢ ωᵢ·ℓ(yᵢ·xᵢᵀw) + Linearᵀw + (ExtraL2/2)‖w‖²
//
// minimized by a damped Newton method ([Fit]), and ridge regression from
// sufficient statistics ([Gram], [FitRidge]).
//
// # Data
//
// [Rows] is a compressed-sparse-row (CSR) copy of selected rows of a dense
// design matrix with their labels and optional per-row weights ωᵢ (bootstrap
// multiplicities; nil means all 1). With weights, the N in 1/N is the
// effective sample size N = Σᵢ ωᵢ, so integer weights are exactly equivalent
// to duplicating rows. Rows are immutable after construction and may be
// shared by concurrent fits.
//
// # Solver
//
// [Fit] is Newton's method with an Armijo backtracking line search. The
// Hessian is formed explicitly (d × d), accumulating each row's outer product
// over its nonzeros only (cost Σᵢ nnzᵢ²/2 per build, not n·d²/2), and solved
// with a Cholesky factorization. J is (Lambda+ExtraL2)-strongly convex for the
// supported losses, so the iteration converges globally and quadratically near
// the optimum. Because a Hessian build costs several gradient passes on
// sparse data, the Hessian at w = 0 comes from a cached Gram matrix and a
// factor is reused for the next step after a step that reduced ‖∇J‖ tenfold
// (Shamanskii's modified Newton method); see [Fit].
//
// The stopping rule is absolute, ‖∇J(w)‖₂ ≤ GradTol (default 1e-10); by strong
// convexity this certifies ‖w − w*‖₂ ≤ GradTol/Lambda. An absolute rule fits
// because the scale of ∇J is fixed by the data conventions (‖xᵢ‖ ≤ 1,
// |ℓ′| ≤ 1): the data part of ∇J has norm ≤ 1. 1e-10 is far above the
// float64 floor: fits of the Adult- and Magic-shaped benchmark problems with
// GradTol = 1e-30 (λ from 1e-5 to 0.1, with and without a linear term of
// norm 0.11, ‖w‖ up to 10⁴) stop with StatusLineSearchFailed at
// ‖∇J‖ = 1e-21 to 2e-17.
//
// Non-convergence is not an error: [Result.Status] records it, because
// per-trial outcomes are data. Errors are returned only for invalid inputs:
// Lambda ≤ 0, NaN or infinite values, mismatched dimensions, or a loss the
// solver does not support (hinge and ramp are not smooth, ramp is not
// convex, squared loss goes through [FitRidge]).
//
// # Kernels
//
// On amd64 processors with AVX2 (detected at start-up; not with the build
// tag purego), four loops of the logistic fit run as assembly kernels four
// rows at a time: the unweighted loss pass (exp(−|z|), ℓ′, ℓ″, the hinge sum
// and the product of the factors 1 + e), the per-row values of the weighted
// pass (its sums stay in Go, in row order), the margins of the dense
// columns, and the column dot products of the gradient and the Hessian.
// Each lane performs the IEEE operations of the Go code in the same order
// (no fused multiply-add), and a dot product keeps gonum's four partial
// sums and their final order, so every result is the same bit for bit with
// or without them (TestFit_AVX2SameBits and the tests beside it compare
// each kernel with the Go loop it replaces). The Go code is the reference:
// a build with GOAMD64=v3, which lets the compiler fuse multiply-adds in
// the Go loops, may differ from both in the last bits.
//
// # Concurrency
//
// [Fit] uses the [Workspace] it is given, else borrows one from a
// package-level sync.Pool (safe for concurrent fits); other functions
// allocate their own buffers. A Workspace must be used by one goroutine at
// a time. Loss values, Rows and
// Objective values are read-only and may be shared.
//
// # Panics
//
// Mismatched slice lengths passed by the program (for example len(y) ≠ rows
// of X in [NewRows], or a dst of the wrong length) panic with a message
// prefixed "erm:", as in gonum. Invalid values (NaN, infinite, negative
// weights) are recorded by [NewRows] and [Rows.WithWeights] and reported as
// errors by the solvers; see [Rows.Err].
//
// [CMS11]: https://jmlr.org/papers/v12/chaudhuri11a.html
// [CV13]: https://proceedings.neurips.cc/paper/2013
package erm
