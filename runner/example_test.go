package runner_test

import (
	"fmt"

	"github.com/dprepro/dprepro/kinds"
	"github.com/dprepro/dprepro/runner"
)

// ExampleRegistry builds a registry of the built-in experiment kinds, the
// way the command does (runner.Kinds): specs are loaded and validated
// against it, and Registry.New builds the runnable experiment of a spec.
// A user's module adds its own kind with runner.RegisterKind before
// cli.Main; a name is registered once.
func ExampleRegistry() {
	var r *runner.Registry = kinds.Registry()
	fmt.Println(r.Names())
	s, err := r.LoadBuiltin("mechanisms", "quick")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: kind %s, section %T\n", s.ID, s.Kind, s.Section)
	k, _ := r.Lookup("mechanism-bounds")
	fmt.Println(r.Register(k))
	// Output:
	// [cv-tuning expost-sweep ci-coverage histogram-tuning mechanism-bounds privacy-audit learner-comparison]
	// mechanisms: kind mechanism-bounds, section *mechbounds.Section
	// runner: kind "mechanism-bounds" is already registered
}
