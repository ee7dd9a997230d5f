package datasets

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// encode builds the design matrix, feature names and target of t under p
// (which must have passed Validate): with Scaling "public" by applyPublic,
// which also describes the bounds, else by apply (PublicInfo nil).
func (p Preprocessing) encode(t *Table, task string) (*mat.Dense, []float64, []string, *PublicInfo, error) {
	if p.WithDefaults().Scaling == ScalingPublic {
		return p.applyPublic(t, task)
	}
	x, y, names, err := p.apply(t, task)
	return x, y, names, nil, err
}

// applyPublic is apply under Scaling "public": every scale factor and the
// one-hot layout come from p.Domain and p.RowNormBound, and each record is
// clipped into the domain, so that row i of X depends on record i alone.
func (p Preprocessing) applyPublic(t *Table, task string) (*mat.Dense, []float64, []string, *PublicInfo, error) {
	p = p.WithDefaults()
	if err := p.checkNames(t, task); err != nil {
		return nil, nil, nil, nil, err
	}
	if err := p.checkDomain(t); err != nil {
		return nil, nil, nil, nil, err
	}
	n := t.N()
	keep := func(string) bool { return true }
	if len(p.Columns) > 0 {
		keep = func(name string) bool { return slices.Contains(p.Columns, name) }
	}

	type numPart struct {
		col    *NumericColumn
		off    int
		log1p  bool
		lo, hi float64 // the raw range
		div    float64 // column divisor (1 for ColumnScale "none")
	}
	type catPart struct {
		col   *CategoricalColumn
		off   int
		index []int // observed code → declared level's offset, or −1
	}
	var nums []numPart
	var cats []catPart
	var names []string
	var bound []float64 // |x_ij| ≤ bound[j] after column scaling
	var group []int
	var missing []string
	var undeclared []string // attributes whose missing level is not declared
	for _, a := range t.Attributes {
		if !keep(a) {
			continue
		}
		g := len(nums) + len(cats)
		if c := t.numeric(a); c != nil {
			r, ok := p.Domain.Ranges[a]
			if !ok {
				missing = append(missing, "bounds."+a)
				continue
			}
			lg := slices.Contains(p.Log1p, a)
			lo, hi := r.Lo, r.Hi
			name := a
			if lg {
				// The range maps through the increasing log1p; its low end
				// must lie above −1, where log1p is defined.
				if !(lo > -1) {
					return nil, nil, nil, nil, fmt.Errorf("preprocess.log1p: %s: the declared range [%v, %v] reaches −1 or below", a, r.Lo, r.Hi)
				}
				lo, hi = math.Log1p(lo), math.Log1p(hi)
				name = "log1p(" + a + ")"
			}
			m := math.Max(math.Abs(lo), math.Abs(hi))
			div := 1.0
			if p.ColumnScale == ScaleMaxAbs {
				div = m
			}
			nums = append(nums, numPart{col: c, off: len(names), log1p: lg, lo: r.Lo, hi: r.Hi, div: div})
			names = append(names, name)
			bound = append(bound, m/div)
			group = append(group, g)
			continue
		}
		c := t.categorical(a)
		levels, ok := p.Domain.Levels[a]
		if !ok {
			missing = append(missing, "levels."+a)
			continue
		}
		sorted := slices.Sorted(slices.Values(levels))
		if m := t.missingLevel; m != "" && slices.Contains(c.Levels, m) && !slices.Contains(sorted, m) {
			undeclared = append(undeclared, a)
		}
		index := make([]int, len(c.Levels))
		for k, l := range c.Levels {
			index[k] = slices.Index(sorted, l) // −1: outside the domain
		}
		cats = append(cats, catPart{col: c, off: len(names), index: index})
		for _, l := range sorted {
			names = append(names, a+"="+l)
			bound = append(bound, 1)
			group = append(group, g)
		}
	}
	if len(undeclared) > 0 {
		// A level outside the domain would be encoded as all zeros:
		// under data.missing = "level" the marker is a level like any
		// other, so it must be declared like any other.
		return nil, nil, nil, nil, &UndeclaredMissingLevelError{Marker: t.missingLevel, Attributes: undeclared}
	}
	if len(missing) > 0 {
		return nil, nil, nil, nil, fmt.Errorf("preprocess: public scaling needs a declared domain for every attribute kept; none for %s (declare it in [data.bounds.NAME] / [data.levels.NAME], or leave the attribute out with data.columns)",
			strings.Join(missing, ", "))
	}
	dFeat := len(names)
	d := dFeat
	if p.Intercept {
		names = append(names, InterceptName)
		bound = append(bound, 1)
		group = append(group, len(nums)+len(cats))
		d++
	}
	if d == 0 {
		return nil, nil, nil, nil, errors.New("preprocess: no feature columns selected")
	}
	info := &PublicInfo{FeatureGroup: group, Records: n}
	// The implied row bound: each attribute's largest |value| (one
	// indicator of a categorical attribute), as the norm of the row
	// normalisation.
	largest := make([]float64, len(nums)+len(cats)+1)
	for j, b := range bound {
		largest[group[j]] = math.Max(largest[group[j]], b)
	}
	info.ImpliedRowBound = rowNorm(largest, p.RowNorm)
	info.RowBound = info.ImpliedRowBound
	if p.RowNormBound > 0 {
		info.RowBound = p.RowNormBound
	}
	if (p.RowNorm == RowL2Max || p.RowNorm == RowL1Max) && !finite(info.RowBound) {
		return nil, nil, nil, nil, &OverflowError{Step: "row_norm", Scaling: p.RowNorm,
			Why: fmt.Sprintf("the row bound the declared ranges imply is %v (column_scale = %q): declare data.row_norm_bound, or use column_scale = \"maxabs\"", info.RowBound, p.ColumnScale)}
	}

	data := make([]float64, n*d)
	for i := range n {
		row := data[i*d : (i+1)*d]
		changed := false
		for _, np := range nums {
			v := np.col.Values[i]
			switch {
			case math.IsNaN(v):
				return nil, nil, nil, nil, fmt.Errorf("preprocess: %s: value NaN in record %d", np.col.Name, i+1)
			case v < np.lo:
				v, changed = np.lo, true
				info.ClippedValues++
			case v > np.hi:
				v, changed = np.hi, true
				info.ClippedValues++
			}
			if np.log1p {
				v = math.Log1p(v)
			}
			// Division rather than multiplication by 1/div, so that
			// |v| ≤ div gives |v/div| ≤ 1 exactly (see scaleRow).
			row[np.off] = v / np.div
		}
		for _, cp := range cats {
			k := cp.index[cp.col.Codes[i]]
			if k < 0 {
				changed = true
				info.OutOfDomain++
				continue
			}
			row[cp.off+k] = 1
		}
		if p.Intercept {
			row[d-1] = 1
		}
		switch p.RowNorm {
		case RowL2Max, RowL1Max:
			// A row longer than R is divided by its own norm (so it lands
			// on the sphere of radius 1, as x·R/‖x‖ divided by R would),
			// every other row by R.
			r := rowNorm(row, p.RowNorm)
			if !finite(r) {
				return nil, nil, nil, nil, rowNormOverflow(p, i, row)
			}
			if r > info.RowBound {
				divide(row, r)
				// A row at the corner of the domain can exceed the implied
				// bound by the rounding of its norm: not a clip.
				if r > info.RowBound*(1+1e-12) {
					changed = true
					info.ClippedRows++
				}
			} else {
				divide(row, info.RowBound)
			}
		case RowL2Clip, RowL2Unit:
			r := rowNorm(row, p.RowNorm)
			if !finite(r) {
				return nil, nil, nil, nil, rowNormOverflow(p, i, row)
			}
			if r > 1 || (p.RowNorm == RowL2Unit && r > 0) {
				divide(row, r)
			}
		}
		if changed {
			info.ClippedRecords++
		}
	}
	// The bounds of the scaled entries.
	for j := range bound {
		switch p.RowNorm {
		case RowL2Max, RowL1Max:
			bound[j] = math.Min(bound[j]/info.RowBound, 1)
		case RowL2Clip, RowL2Unit:
			bound[j] = math.Min(bound[j], 1)
		}
	}
	info.FeatureBound = bound

	y := slices.Clone(t.Y)
	if p.TargetLog1p {
		for i, v := range y {
			if !(v > -1) {
				return nil, nil, nil, nil, fmt.Errorf("preprocess.target_log1p: target %v in record %d is ≤ −1", v, i+1)
			}
			y[i] = math.Log1p(v)
		}
	}
	return mat.NewDense(n, d, data), y, names, info, nil
}

// checkDomain checks that the declared domain names attributes of t of
// the right kind: a range for a numeric attribute, levels for a
// categorical one.
func (p Preprocessing) checkDomain(t *Table) error {
	var errs []error
	for _, a := range slices.Sorted(maps.Keys(p.Domain.Ranges)) {
		if t.numeric(a) == nil {
			if t.categorical(a) != nil {
				errs = append(errs, fmt.Errorf("preprocess.bounds.%s: %q is categorical: declare its levels, not a range", a, a))
			} else {
				errs = append(errs, fmt.Errorf("preprocess.bounds.%s: unknown attribute %q (have %s)", a, a, oneOf(t.Attributes)))
			}
		}
	}
	for _, a := range slices.Sorted(maps.Keys(p.Domain.Levels)) {
		if t.categorical(a) == nil {
			if t.numeric(a) != nil {
				errs = append(errs, fmt.Errorf("preprocess.levels.%s: %q is numeric: declare a range, not levels", a, a))
			} else {
				errs = append(errs, fmt.Errorf("preprocess.levels.%s: unknown attribute %q (have %s)", a, a, oneOf(t.Attributes)))
			}
		}
	}
	return errors.Join(errs...)
}

// UndeclaredMissingLevelError is public scaling refusing a missing-value
// level (data.missing = "level") that the declared domain does not list:
// it would be encoded as all zeros. Dataset is filled in by Load.
type UndeclaredMissingLevelError struct {
	Dataset    string
	Marker     string
	Attributes []string
}

func (e *UndeclaredMissingLevelError) Error() string {
	name := e.Dataset
	if name == "" {
		name = "NAME"
	}
	attrs := strings.Join(e.Attributes, ", ")
	return fmt.Sprintf("preprocess: data.missing = %q keeps %q as a level of %s, which the public domain does not declare: with scaling = \"public\" declare it like any other level — a [data.levels.%s] list for %s replaces the built-in one (the documented levels: docs/privacy.md, \"Declared domains of the built-in datasets\"), so list those levels and %q — or use missing = %q",
		MissingLevel, e.Marker, attrs, name, attrs, e.Marker, MissingDrop)
}
