// Package learners is the private-learner extension point of the
// harness: the [Learner] interface (the training procedure T = (G, F) of
// Chaudhuri & Vinterbo, "A Stability-based Validation Procedure for
// Differentially Private Machine Learning", NIPS 2013, Section 2), its
// registry ([Register], [Names], [Lookup]), its built-ins and its
// adapter for learners served by an external worker ([External], the
// worker protocol of docs/worker-protocol.md).
//
// Two experiment kinds run learners by name: cv-tuning (kinds/cvtune,
// tuning.learners) and learner-comparison (kinds/learnercmp,
// comparison.learners), both through [Lookup], so a learner registered
// here, or served by a spec's [[methods]] table, serves both.
//
// # Built-ins
//
//   - [ObjectivePerturbation], "objective-perturbation" (Chaudhuri,
//     Monteleoni & Sarwate 2011, Algorithm 2, with the variants of
//     core/perturb);
//   - [OutputPerturbation], "output-perturbation" (their Algorithm 1);
//   - [NonPrivate], "non-private" (the exact fit, booked as not private).
//
// A spec chooses their loss and variant ([Config]: tuning.loss,
// tuning.huber_h and tuning.objective_perturbation).
//
// # Privacy
//
// Privacy is data: a learner returns each fit's privacy.Guarantee, which
// the kinds check against the [Level] they handed it ([CheckLevel]) and
// book. A learner that is not built in states its own guarantee
// ([DeclaredBy]); the harness records its fits in a traced run as
// declared releases ([RecordDeclared]) and never vouches for them.
//
// # Adding a learner
//
// A user's module implements [Learner] (and [StableLearner] for
// stability-based validation, [Configurer] to read the spec's loss),
// calls [Register] from main() before cli.Main, and names it in a spec.
// See examples/go-extension, built and run by the tests.
package learners
