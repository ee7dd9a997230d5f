package tune

import (
	"math/rand/v2"
	"slices"
)

// Partition returns a uniformly random partition of 0..n-1 into k folds whose
// sizes differ by at most one, each fold's indices sorted: the folds of
// one repetition of the k-fold cross-validation protocol of Chaudhuri &
// Vinterbo 2013, Section 5. It draws one permutation from rng.
func Partition(rng *rand.Rand, n, k int) [][]int {
	perm := rng.Perm(n)
	folds := make([][]int, k)
	for j, i := range perm {
		folds[j%k] = append(folds[j%k], i)
	}
	for _, f := range folds {
		slices.Sort(f)
	}
	return folds
}
