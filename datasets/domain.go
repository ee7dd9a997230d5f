package datasets

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Domain is the public domain of a dataset's records: what a data owner
// can state about every record that could occur without looking at the
// records that did. [Preprocessing] with Scaling "public" scales by it
// alone and clips each record into it, so that the scaled row of a record
// depends on that record only (see [PublicInfo]).
//
// A Domain is read only after it is handed to Preprocessing; copy it
// (Clone) to change it.
type Domain struct {
	// Ranges bounds each numeric attribute by name: the raw value, before
	// any log1p, in [Lo, Hi].
	Ranges map[string]Range
	// Levels lists every level of each categorical attribute by name (the
	// one-hot columns, in byte-wise sorted order); a record's level outside
	// the list is encoded as all zeros. Without a declared list the
	// observed levels would decide the design matrix's columns, which a
	// single record can change.
	Levels map[string][]string
	// Sources says, per attribute, where its range or levels come from
	// (documentation, a declared cap); copied to the manifest.
	Sources map[string]string
}

// Range is a closed interval [Lo, Hi] of a numeric attribute, Lo < Hi.
type Range struct {
	Lo, Hi float64
}

// Clone returns a deep copy of d.
func (d Domain) Clone() Domain {
	c := Domain{Ranges: maps.Clone(d.Ranges), Sources: maps.Clone(d.Sources)}
	if d.Levels != nil {
		c.Levels = make(map[string][]string, len(d.Levels))
		for k, v := range d.Levels {
			c.Levels[k] = slices.Clone(v)
		}
	}
	return c
}

// With returns a copy of d in which the ranges and levels of o replace
// those of the same attributes (a spec's [data.bounds.NAME] and
// [data.levels.NAME] over the registry's documented domain); source names
// where o came from, e.g. "declared in the spec".
func (d Domain) With(o Domain, source string) Domain {
	c := d.Clone()
	if c.Ranges == nil {
		c.Ranges = map[string]Range{}
	}
	if c.Levels == nil {
		c.Levels = map[string][]string{}
	}
	if c.Sources == nil {
		c.Sources = map[string]string{}
	}
	for k, r := range o.Ranges {
		c.Ranges[k] = r
		c.Sources[k] = source
	}
	for k, l := range o.Levels {
		c.Levels[k] = slices.Clone(l)
		c.Sources[k] = source
	}
	return c
}

// Validate checks the ranges (finite, Lo < Hi) and the level lists
// (non-empty, no empty or repeated level), naming each problem as
// "bounds.ATTR" or "levels.ATTR".
func (d Domain) Validate() error {
	var errs []string
	for _, k := range slices.Sorted(maps.Keys(d.Ranges)) {
		r := d.Ranges[k]
		if math.IsNaN(r.Lo) || math.IsNaN(r.Hi) || math.IsInf(r.Lo, 0) || math.IsInf(r.Hi, 0) || !(r.Lo < r.Hi) {
			errs = append(errs, fmt.Sprintf("bounds.%s: want finite lo < hi (got [%v, %v])", k, r.Lo, r.Hi))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(d.Levels)) {
		l := d.Levels[k]
		if len(l) == 0 {
			errs = append(errs, fmt.Sprintf("levels.%s: empty list", k))
		}
		seen := map[string]bool{}
		for i, v := range l {
			switch {
			case v == "":
				errs = append(errs, fmt.Sprintf("levels.%s[%d]: empty level", k, i))
			case seen[v]:
				errs = append(errs, fmt.Sprintf("levels.%s[%d]: duplicate level %q", k, i, v))
			}
			seen[v] = true
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("preprocess: %s", strings.Join(errs, "; "))
	}
	return nil
}

// PublicInfo describes a design matrix built with Scaling "public": the
// bounds that every row obeys whatever the records are, and how many
// values the clipping changed. Each row is a function of its own record
// and of the declared domain alone, so two raw datasets that differ in one
// record give design matrices that differ in one row: a mechanism's
// guarantee for neighbouring rows then holds for neighbouring raw records.
type PublicInfo struct {
	// FeatureBound[j] bounds |X_ij| for every record that could occur
	// (after column and row scaling).
	FeatureBound []float64
	// FeatureGroup[j] numbers the raw attribute column j comes from (the
	// intercept has its own); the one-hot columns of one categorical
	// attribute share it, and at most one of them is non-zero in a row.
	FeatureGroup []int
	// RowBound is the bound R on the row norm (ℓ2; ℓ1 for row_norm
	// "l1-max") before row scaling: the declared row_norm_bound, or else
	// ImpliedRowBound. Rows are divided by it under "l2-max" and "l1-max".
	RowBound float64
	// ImpliedRowBound is the row-norm bound that the declared ranges and
	// levels imply: the norm of the vector of the largest |value| of each
	// attribute (one indicator per categorical attribute, 1 for the
	// intercept), after column scaling.
	ImpliedRowBound float64
	// Records is the number of records encoded.
	Records int
	// ClippedValues counts the numeric values outside their range, moved
	// to its nearer end.
	ClippedValues int
	// OutOfDomain counts the categorical values outside their declared
	// levels, encoded as all zeros.
	OutOfDomain int
	// ClippedRows counts the rows whose norm exceeded RowBound and were
	// scaled down to it (only with a declared row_norm_bound below the
	// implied one).
	ClippedRows int
	// ClippedRecords counts the records changed by any of the three.
	ClippedRecords int
}

// L2Bound returns the bound on the ℓ2 norm of the first cols columns of
// every row: the norm of the vector of each attribute's largest
// FeatureBound among those columns (at most one indicator of a categorical
// attribute is non-zero). It holds whatever the records are, so a kind
// that keeps only some columns can scale them by it without looking at
// the data.
func (p *PublicInfo) L2Bound(cols int) float64 {
	if cols > len(p.FeatureBound) {
		panic(fmt.Sprintf("datasets: L2Bound of %d columns of %d", cols, len(p.FeatureBound)))
	}
	largest := map[int]float64{}
	for j := range cols {
		g := p.FeatureGroup[j]
		largest[g] = math.Max(largest[g], p.FeatureBound[j])
	}
	var s float64
	for _, g := range slices.Sorted(maps.Keys(largest)) {
		s += largest[g] * largest[g]
	}
	return math.Sqrt(s)
}

// Summary says in one line what the public preprocessing changed, for the
// manifest, e.g. "30162 records: 12 values clipped to their ranges, 0
// levels outside their lists, 0 rows clipped to R = 3.873 (implied
// 3.873); 12 records changed".
func (p *PublicInfo) Summary() string {
	return fmt.Sprintf("%d records: %d values clipped to their ranges, %d levels outside their lists, %d rows clipped to R = %.4g (implied %.4g); %d records changed",
		p.Records, p.ClippedValues, p.OutOfDomain, p.ClippedRows, p.RowBound, p.ImpliedRowBound, p.ClippedRecords)
}
