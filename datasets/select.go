package datasets

import (
	"fmt"
	"math"
	"slices"

	"github.com/dprepro/dprepro/core/glm"
)

// Predictor selection choices for [Preprocessing.Select].
const (
	SelectNone        = "none"
	SelectStepwiseAIC = "stepwise-aic"
	SelectStepwiseBIC = "stepwise-bic"
)

// Coding choices for [Preprocessing.Coding].
const (
	// CodingOneHot gives every level of a categorical attribute its own
	// indicator (the default).
	CodingOneHot = "one-hot"
	// CodingTreatment drops the first level (in sorted order) of each
	// categorical attribute, as R's default treatment contrasts do
	// (contr.treatment: the first factor level is the reference).
	CodingTreatment = "treatment"
)

// SelectionInfo records a predictor selection ([Preprocessing.Select]): a
// NON-PRIVATE step that fits a logistic model to every record and its label
// before any experiment runs.
type SelectionInfo struct {
	// Method is the Select value ("stepwise-bic"), Criterion "AIC" or
	// "BIC", K its penalty per estimable coefficient (2 or log n).
	Method    string
	Criterion string
	K         float64
	// Records is the number of records the models were fitted to (all of
	// the dataset's records, before any subsample).
	Records int
	// Candidates lists the attributes the selection started from (file
	// order), Kept those it kept (file order), Dropped those it removed
	// (in the order of removal).
	Candidates []string
	Kept       []string
	Dropped    []string
	// Steps gives each removal with the criterion of the model after it.
	Steps []SelectionStep
	// Start is the criterion of the model with every candidate.
	Start float64
	// Deviance and Rank describe the final model (rank: estimable
	// coefficients, the intercept included); Columns counts its model-matrix
	// columns under treatment coding, the intercept included; Aliased names
	// its columns whose coefficient is not estimable (each is a linear
	// combination of earlier columns; R reports NA for them).
	Deviance float64
	Rank     int
	Columns  int
	Aliased  []string
	// Converged is false when some fit did not meet R's convergence rule
	// in 25 iterations (R warns and goes on; so does the selection);
	// Unconverged then says which fits and why (package glm).
	Converged   bool
	Unconverged []string
}

// SelectionStep is one removal of a stepwise selection.
type SelectionStep struct {
	Attribute string
	Criterion float64
	Deviance  float64
	Rank      int
	// Aliased is true when the attribute was removed because it added no
	// estimable coefficient (R's step removes such a term first).
	Aliased bool
}

// selectAttributes runs p.Select on t (classification only): a binomial
// GLM with the logit link on every record, the attributes p keeps as
// terms (numeric attributes as one column each, categorical ones in
// treatment coding, an intercept), reduced by backward elimination under
// AIC or BIC as R's step() does (package glm). It returns nil when p
// selects nothing.
//
// This is the selection of Chaudhuri & Vinterbo (NIPS 2013), Section 5,
// on Adult: "we selected 52 predictors using the step procedure for a
// model computed by glm with family binomial and logit link function"; the
// paper does not name the criterion. It looks at the labels of the whole
// data set: it is not differentially private, and the records used for
// testing take part in it (as in the paper).
//
// Numeric attributes enter on their raw scale (Log1p is not applied: the
// selection sees the attributes as R's glm(y ~ .) would on the file).
// Numeric columns are centred and divided by their standard deviation for
// the fit (with an intercept, the deviance, and hence the selection, is the
// same on any affine rescaling of a column; the rescaled columns keep the
// normal equations well conditioned where fnlwgt reaches 1.5e6).
func (p Preprocessing) selectAttributes(t *Table, task string) (*SelectionInfo, error) {
	p = p.WithDefaults()
	if p.Select == SelectNone {
		return nil, nil
	}
	if task != TaskClassification {
		return nil, fmt.Errorf("preprocess.select: %q fits a logistic model to the labels and needs a classification dataset, not %s", p.Select, task)
	}
	if err := p.checkNames(t, task); err != nil {
		return nil, err
	}
	var cands []string
	for _, a := range t.Attributes {
		if len(p.Columns) == 0 || slices.Contains(p.Columns, a) {
			cands = append(cands, a)
		}
	}
	type part struct {
		num       *NumericColumn
		cat       *CategoricalColumn
		off       int // first design column (1-based: column 0 is the intercept)
		mean, inv float64
	}
	parts := make([]part, len(cands))
	columns := make([][]string, len(cands))
	off := 1
	for k, a := range cands {
		if c := t.numeric(a); c != nil {
			mean, sd := meanSD(c.Values)
			inv := 0.0
			if sd > 0 {
				inv = 1 / sd
			}
			parts[k] = part{num: c, off: off, mean: mean, inv: inv}
			columns[k] = []string{a}
			off++
			continue
		}
		c := t.categorical(a)
		parts[k] = part{cat: c, off: off}
		for _, l := range c.Levels[min(1, len(c.Levels)):] {
			columns[k] = append(columns[k], a+"="+l)
		}
		if len(columns[k]) == 0 {
			// One level: no contrast column; R's glm refuses such a factor
			// ("contrasts can be applied only to factors with 2 or more
			// levels").
			return nil, fmt.Errorf("preprocess.select: categorical attribute %q has a single level; leave it out with data.columns", a)
		}
		off += len(columns[k])
	}
	d, err := glm.NewDesign(cands, columns)
	if err != nil {
		return nil, fmt.Errorf("preprocess.select: %w", err)
	}
	var cols []int32
	var vals []float64
	for i, y := range t.Y {
		cols, vals = cols[:0], vals[:0]
		for _, pt := range parts {
			if pt.num != nil {
				if v := (pt.num.Values[i] - pt.mean) * pt.inv; v != 0 {
					cols = append(cols, int32(pt.off))
					vals = append(vals, v)
				}
				continue
			}
			if code := int(pt.cat.Codes[i]); code > 0 {
				cols = append(cols, int32(pt.off+code-1))
				vals = append(vals, 1)
			}
		}
		if err := d.AddRow((y+1)/2, cols, vals); err != nil {
			return nil, fmt.Errorf("preprocess.select: %w", err)
		}
	}
	info := &SelectionInfo{Method: p.Select, Records: t.N(), Candidates: cands}
	switch p.Select {
	case SelectStepwiseAIC:
		info.Criterion, info.K = "AIC", 2
	case SelectStepwiseBIC:
		info.Criterion, info.K = "BIC", math.Log(float64(t.N()))
	default:
		return nil, fmt.Errorf("preprocess.select: unknown value %q", p.Select)
	}
	sel, err := glm.Backward(d, info.K)
	if err != nil {
		return nil, fmt.Errorf("preprocess.select: %w", err)
	}
	info.Start = sel.Start
	info.Converged, info.Unconverged = sel.Converged, sel.Unconverged
	for _, s := range sel.Steps {
		info.Dropped = append(info.Dropped, s.Term)
		info.Steps = append(info.Steps, SelectionStep{Attribute: s.Term, Criterion: s.Score, Deviance: s.Deviance, Rank: s.Rank, Aliased: s.Aliased})
	}
	for _, k := range sel.Kept {
		info.Kept = append(info.Kept, cands[k])
	}
	info.Deviance, info.Rank = sel.Final.Deviance, sel.Final.Rank
	info.Columns = 1
	for _, k := range sel.Kept {
		info.Columns += len(columns[k])
	}
	for _, j := range sel.Final.Aliased {
		info.Aliased = append(info.Aliased, d.ColNames[j])
	}
	if len(info.Kept) == 0 {
		return nil, fmt.Errorf("preprocess.select: %s kept no attribute (the intercept alone scores best)", p.Select)
	}
	return info, nil
}

// meanSD returns the mean and the sample standard deviation (n − 1) of v.
func meanSD(v []float64) (mean, sd float64) {
	if len(v) == 0 {
		return 0, 0
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}
