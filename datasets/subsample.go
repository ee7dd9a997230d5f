package datasets

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// Subsample returns ds restricted to m rows drawn uniformly without
// replacement (kept in their original order), or ds itself when m >= n.
// The source parameters record "subsample" = m. Ligett et al. (2017,
// Appendix B.1) subsample KDD-99 and Twitter to n = 100,000.
func Subsample(rng *rand.Rand, ds *Dataset, m int) *Dataset {
	n, d := ds.X.Dims()
	if m >= n {
		return ds
	}
	idx := rng.Perm(n)[:m]
	slices.Sort(idx)
	out := *ds
	out.X = mat.NewDense(m, d, nil)
	out.Y = make([]float64, m)
	for j, i := range idx {
		out.X.SetRow(j, ds.X.RawRowView(i))
		out.Y[j] = ds.Y[i]
	}
	out.Source.Params = maps.Clone(ds.Source.Params)
	if out.Source.Params == nil {
		out.Source.Params = map[string]string{}
	}
	out.Source.Params["subsample"] = strconv.Itoa(m)
	return &out
}
