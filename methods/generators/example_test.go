package generators_test

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/methods/generators"
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
func ExampleRegister() {
	err := generators.Register(outputCopy{})
	if err != nil && !errors.Is(err, generators.ErrDuplicate) {
		fmt.Println(err)
		return
	}
	fmt.Println("registered:", slices.Contains(generators.Names(), "output-copy"))
	fmt.Println("tasks:", outputCopy{}.Tasks())
	fmt.Println("declared by:", generators.DeclaredBy(outputCopy{}))

	// A second registration of a name is refused.
	fmt.Println(generators.Register(accfirst.Covariance{}))
	// Output:
	// registered: true
	// tasks: [logistic ridge]
	// declared by: output-copy
	// name already registered: generator "covariance"
}
