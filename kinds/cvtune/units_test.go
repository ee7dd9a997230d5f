package cvtune

import "github.com/dprepro/dprepro/runner"

// unitKeys returns the keys of e's units, in order.
func unitKeys(e runner.Experiment) []string {
	var keys []string
	for _, u := range e.Units() {
		keys = append(keys, u.Key())
	}
	return keys
}
