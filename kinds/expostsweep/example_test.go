package expostsweep_test

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/kinds/expostsweep"
)

// outputCopy is output perturbation (Ligett et al. 2017, Algorithm 5 and
// Theorem 3.3) under a second name: a new generator needs only Name, Tasks,
// Sequence and Independent (here promoted from accfirst.Output, with
// TheoryEpsilon and TheoryRelease, so "theory-output-copy" is a method
// too). Its releases state their own privacy guarantees.
type outputCopy struct{ accfirst.Output }

func (outputCopy) Name() string { return "output-copy" }

// Register a hypothesis generator so that a spec can name it in
// accuracy_first.generator; a name is refused twice, so a program
// registers once, before loading specs.
func ExampleRegisterGenerator() {
	err := expostsweep.RegisterGenerator(outputCopy{})
	if err != nil && !errors.Is(err, expostsweep.ErrDuplicateGenerator) {
		fmt.Println(err)
		return
	}
	fmt.Println("registered:", slices.Contains(expostsweep.GeneratorNames(), "output-copy"))
	fmt.Println("tasks:", outputCopy{}.Tasks())

	// A second registration of a name is refused.
	fmt.Println(expostsweep.RegisterGenerator(accfirst.Covariance{}))
	// Output:
	// registered: true
	// tasks: [logistic ridge]
	// name already registered: generator "covariance"
}
