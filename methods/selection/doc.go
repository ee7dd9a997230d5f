// Package selection is the private parameter-tuning (selection method)
// extension point of the cv-tuning and histogram-tuning kinds
// (kinds/cvtune): the [Selector] interface, what a selector trains and
// scores ([Candidates]), what it spends ([Budget], [Account], [Charge]),
// its registry ([Register], [Names], [Lookup]) and the five built-ins of
// Chaudhuri & Vinterbo, "A Stability-based Validation Procedure for
// Differentially Private Machine Learning" (NIPS 2013), Section 5:
// [Stability] (Algorithms 1–2, Theorem 2), [AlphaSplit] and [DataSplit]
// (Theorem 5), [Random] and [Control] (the non-private reference).
//
// A selector composes the guarantees its fits returned, and its
// selection step's, into an [Account] under the paper's theorem; the kind
// writes the rows' privacy columns and the ledger from it. A selector a
// user registers states its own Account ([DeclaredBy]); [Compose] builds
// one.
package selection
