// Package kinds lists the built-in experiment kinds of dprepro, one
// package each:
//
//   - cvtune: cv-tuning and histogram-tuning (Chaudhuri & Vinterbo 2013);
//   - expostsweep: expost-sweep (Ligett et al. 2017);
//   - cicoverage: ci-coverage (Wang, Kifer & Lee 2019);
//   - mechbounds: mechanism-bounds (Nguyen 2019's accuracy bounds);
//   - privaudit: privacy-audit (empirical lower bounds on ε);
//   - learnercmp: learner-comparison (private learners against ε on the
//     same folds, beside the non-private fit).
//
// The command (package cli) registers them in runner.Kinds; a user's
// module adds its own kinds with runner.RegisterKind.
package kinds

import (
	"github.com/dprepro/dprepro/kinds/cicoverage"
	"github.com/dprepro/dprepro/kinds/cvtune"
	"github.com/dprepro/dprepro/kinds/expostsweep"
	"github.com/dprepro/dprepro/kinds/learnercmp"
	"github.com/dprepro/dprepro/kinds/mechbounds"
	"github.com/dprepro/dprepro/kinds/privaudit"
	"github.com/dprepro/dprepro/runner"
)

// Builtin returns the built-in kinds, in the order `dprepro help` lists
// them.
func Builtin() []runner.Kind {
	return []runner.Kind{
		cvtune.Kind, expostsweep.Kind, cicoverage.Kind, cvtune.HistKind, mechbounds.Kind, privaudit.Kind, learnercmp.Kind,
	}
}

// Register adds the built-in kinds to r.
func Register(r *runner.Registry) error {
	for _, k := range Builtin() {
		if err := r.Register(k); err != nil {
			return err
		}
	}
	return nil
}

// Registry returns a new registry of the built-in kinds (for tests and
// programs that do not use runner.Kinds).
func Registry() *runner.Registry {
	r := &runner.Registry{}
	if err := Register(r); err != nil {
		panic("kinds: " + err.Error()) // the built-in names are distinct
	}
	return r
}
