// Package erm solves the L2-regularized empirical risk minimization problems
// behind the private linear classifiers of Chaudhuri, Monteleoni & Sarwate
// ([CMS11]) and Chaudhuri & Vinterbo ([CV13] Section 4.1): margin losses
// (logistic, Huber-hinge, hinge, ramp), the objective
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
// the optimum. The stopping rule is absolute, ‖∇J(w)‖₂ ≤ GradTol (default
// 1e-10); by strong convexity this certifies ‖w − w*‖₂ ≤ GradTol/Lambda.
//
// Non-convergence is not an error: [Result.Status] records it, because
// per-trial outcomes are data. Errors are returned only for invalid inputs:
// Lambda ≤ 0, NaN or infinite values, mismatched dimensions, or a loss the
// solver does not support (hinge and ramp are not smooth, ramp is not
// convex, squared loss goes through [FitRidge]).
//
// # Concurrency
//
// Functions allocate their own buffers unless given a [Workspace]; a
// Workspace must be used by one goroutine at a time. Loss values, Rows and
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
