// Package cvtune holds the two tuning experiment kinds of Chaudhuri &
// Vinterbo, "A Stability-based Validation Procedure for Differentially
// Private Machine Learning" (NIPS 2013): "cv-tuning" ([Experiment]), the
// classifier study of Section 5, Figures 1–2, and "histogram-tuning"
// ([Hist]), the histogram case study of its Appendix 6.3.
//
// A replicate unit is one (dataset, α, method, repetition, fold), and one
// learner when the spec lists tuning.learners. In round f of a
// repetition, fold f is the test set W, fold (f mod K)+1 the validation
// set V and the other K−2 folds the training set T (1-based, as the paper
// writes it). The method selects a candidate parameter (λ ∈ Θ, or a bin
// width) from private fits on T scored on V; the released model is scored
// on W.
//
// # Extension points
//
// The kind runs two extension points, each with its own package under
// methods/ (STYLE: kinds import methods, never each other), extended by a
// user's module from its main() before cli.Main:
//
//   - learners.Learner (package methods/learners): a private learner,
//     the training procedure T = (G, F) of the paper's Section 2, run by
//     this kind and by the learner-comparison kind (kinds/learnercmp),
//     which both resolve names through learners.Lookup.
//   - selection.Selector (package methods/selection): a selection
//     method of both kinds of this package. Built-ins: the paper's five
//     methods of Section 5 under their names "stability", "alphaSplit",
//     "dataSplit", "random" and "control".
//
// A selector trains through [selection.Candidates], which each kind
// implements per unit: the cv-tuning kind over a Learner, the histogram
// kind over Algorithm 5 (core/histogram), which is that kind's one fixed
// learner, not a registry entry. A name a spec lists that is not
// registered is an error when the kind loads the spec; there is no
// default.
//
// # Privacy accounting
//
// Privacy is data, never decided by a name. A learner returns each fit's
// privacy.Guarantee; a selector composes the guarantees of the fits it
// trained, and its selection step's, into an [selection.Account] (charges and their
// composition under the paper's theorem); the rows' eps_train,
// eps_tuning, delta, eps_total and private columns are written from that
// Account, and the manifest's ledger from those columns and the
// selector's [selection.Selector.Plan] (see [Experiment.Ledger]).
//
// Each fit's guarantee is checked against the [learners.Level] the selector handed
// the learner ([learners.CheckLevel]): one over it (ε or δ above the level's,
// beyond a relative 1e-9) is booked as returned and flagged in the row's
// status ("learner NAME returned … for a level of …"), the manifest's
// warnings and stderr ([Experiment.RowWarnings]); one below it (ε = 0
// for a private level, a fraction of the ε handed) is flagged alike
// ("learner NAME returned … below its level of …") and booked at the
// level, which is what the selector's theorem charges the fit; the
// ledger's training charge shows the learner's claim beside what it
// books. One that cannot be compared with a level (not private, ex-post,
// ρ-zCDP) fails the unit, naming the learner.
//
// # Randomness
//
// A unit draws from its runner stream (runner.Env.RNG) only, in the order
// the selector fixes: for dataSplit the partition of T first, then the
// training noise and selection draws in the order package tune documents.
package cvtune
