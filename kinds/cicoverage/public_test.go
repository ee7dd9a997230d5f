package cicoverage

import (
	"math"
	"slices"
	"testing"

	"github.com/dprepro/dprepro/datasets"
	"gonum.org/v1/gonum/mat"
)

// denseRow returns record i of s as a dense row of d columns.
func denseRow(s *sample, i, d int) []float64 {
	row := make([]float64, d)
	cols, vals := s.base.Row(int(s.rec[i]))
	for k, c := range cols {
		row[c] = vals[k]
	}
	return row
}

// TestSubset_PublicBound: under public scaling the sample's rows are
// divided by the public bound of the kept columns and the constant, not
// by the largest row norm of the records, so that replacing one record
// by a longer one changes its own row only; under data-dependent scaling
// the same neighbour rescales every row.
func TestSubset_PublicBound(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(4, 3, []float64{
		0.1, 0.5, 0,
		0.2, 0, 0.5,
		0.3, 0.5, 0,
		0.4, 0, 0.5,
	})
	y := []float64{1, -1, 1, -1}
	// Column 0 is a numeric attribute (|x| ≤ 0.5), columns 1–2 the two
	// indicators of one categorical attribute (≤ 0.5).
	pub := &datasets.PublicInfo{FeatureBound: []float64{0.5, 0.5, 0.5}, FeatureGroup: []int{0, 1, 1}}
	perm := []int{0, 1, 2, 3}
	const d = 3
	bound := math.Sqrt(0.5*0.5 + 0.5*0.5 + 1) // one indicator of the group, and the constant
	neighbour := mat.DenseCopyOf(x)
	neighbour.SetRow(2, []float64{0.5, 0.5, 0}) // record 2 replaced by the longest possible one

	for _, tt := range []struct {
		name      string
		public    *datasets.PublicInfo
		wantDiffs int
	}{
		{"public", pub, 1},
		{"data-dependent", nil, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, _, _, err := subset(&datasets.Dataset{X: x, Y: y, Public: tt.public}, perm, 4, d, "l2-max")
			if err != nil {
				t.Fatal(err)
			}
			b, _, _, err := subset(&datasets.Dataset{X: neighbour, Y: y, Public: tt.public}, perm, 4, d, "l2-max")
			if err != nil {
				t.Fatal(err)
			}
			diffs := 0
			for i := range 4 {
				if !slices.Equal(denseRow(a, i, d+1), denseRow(b, i, d+1)) {
					diffs++
				}
			}
			if diffs != tt.wantDiffs {
				t.Errorf("%d rows differ between the neighbours, want %d", diffs, tt.wantDiffs)
			}
			if tt.public != nil {
				if got, want := denseRow(a, 0, d+1), []float64{0.1 / bound, 0.5 / bound, 0, 1 / bound}; !slices.Equal(got, want) {
					t.Errorf("row 0 = %v, want %v (divided by the public bound %v)", got, want, bound)
				}
			}
		})
	}
}
