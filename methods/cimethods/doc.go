// Package cimethods is the extension point of private confidence-interval
// methods, which the ci-coverage kind (kinds/cicoverage) runs: the [Method]
// interface and the types of its signature, the registry that a spec's
// confidence_intervals.methods are names in ([Register], [Names],
// [Lookup]), the eight methods of Wang, Kifer & Lee, "Differentially
// Private Confidence Intervals for Empirical Risk Minimization" (Journal
// of Privacy and Confidentiality 9(1), 2019; [arXiv:1804.03794]), Section
// 7, as its built-ins ([NewWKL]), and the adapter of methods served by an
// external command over the worker protocol ([External]).
//
// # Methods
//
// A [Method] fits θ̃ privately on a bootstrap replicate ([Data]), releases
// per-coordinate intervals ([Method.Interval]; for the built-ins
// Algorithms 3 and 5), fits θ̃ alone for the variability interval
// ([Method.Fit]), and states its privacy cost as [privacy.Guarantee]
// values ([Cost]), from which the kind's ledger is composed. The registry
// holds the paper's eight methods (dp|zcdp × obj|output × lr|svm, e.g.
// "dp-obj-lr") and whatever [Register] adds; an unknown name is an error,
// never a default. A spec may also name its own [[methods]] tables with
// serves = "ci" ([External]), which get the (sub)dataset as a file and
// each replicate as counts over its records ([Records]). Rows, tables and
// figures label and group methods by their [Attributes], never by name; a
// method that is not one of the paper's is named in the ledger as having
// declared its cost ([DeclaredBy]).
//
// # Randomness
//
// A method draws from the streams the kind derives for each named step of
// each replicate ([Streams]); it keeps no generator of its own and no
// state between calls, so results do not depend on the worker count or on
// which other methods run.
//
// # Shared work
//
// The methods of one replicate share work through [Share]: one
// non-private fit θ̂ serves the DP and zCDP output perturbations (their
// noise differs), and one objective-perturbation fit serves the DP and
// zCDP objective perturbations: with ρ₁ = ε₁²/2 both run Algorithm 1 at
// the same ε₁ (Theorem 2), so the mechanism is identical. The Hessian and
// covariance releases (Algorithm 2) and the Monte Carlo intervals are
// drawn per privacy notion.
//
// [arXiv:1804.03794]: https://arxiv.org/abs/1804.03794
package cimethods
