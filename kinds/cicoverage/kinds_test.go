package cicoverage

import "github.com/dprepro/dprepro/runner"

// testKinds is the registry the tests load specs with: this package's
// kinds.
var testKinds = func() *runner.Registry {
	r, err := runner.NewRegistry(Kind)
	if err != nil {
		panic(err)
	}
	return r
}()
