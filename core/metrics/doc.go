// Package metrics computes evaluation metrics for linear classifiers and
// summary statistics of replicated metric values.
//
// # Labels and scores
//
// Labels are ±1 with +1 the positive class. A score (margin) is s = wᵀx; the
// predicted label is sign(s), with s = 0 predicting +1. Probabilities are
// in [0, 1] and refer to the positive class.
//
// # Panics
//
// Functions panic, with a message prefixed "metrics:", when paired slices
// have different lengths or a label is not ±1: these are broken invariants of
// data that the harness built and validated, not user input.
//
// # NaN
//
// Empty input gives NaN (0/0). A NaN score or probability propagates to a
// NaN result, except in [ErrorCount], where it counts as an error. Callers
// filter NaN replicates before summarising; [MeanCI] and [MeanSD] return
// NaN when any input is NaN.
//
// # Randomness
//
// Only [MeanCI] draws random numbers, from the *rand.Rand (math/rand/v2) it
// is given; the global source is never used. A generator must not be shared
// between goroutines.
package metrics
