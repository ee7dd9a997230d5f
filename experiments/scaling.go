package experiments

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/dprepro/dprepro/datasets"
)

// Scaling statements of a run's manifest (results.DatasetInfo.Scaling):
// whose records the stated ε covers.
const (
	// StatementDataDependent is the statement of data-dependent scaling
	// (the papers' preprocessing, the default).
	StatementDataDependent = "data-dependent scaling: ε holds for the scaled rows only"
	// StatementPublic is the statement of public scaling (data.scaling =
	// "public"), or of a kind that maps the attributes it reads by public
	// bounds of its own (RawReader).
	StatementPublic = "public bounds: ε holds for the raw records"
	// StatementSelected is the statement of data-dependent scaling after a
	// non-private predictor selection (data.select): the selection read
	// every record's label, so ε holds neither for the raw records nor for
	// the choice of attributes.
	StatementSelected = "non-private predictor selection and data-dependent scaling: ε holds for the selected, scaled rows only"
)

// RawReader is implemented by a Section whose kind reads the attributes it
// uses raw and maps them by public bounds of its own (cv13-histogram), so
// that data.scaling does not decide what its guarantee covers.
type RawReader interface {
	// ReadsRaw reports whether the kind, as s configures it, reads its
	// attributes raw.
	ReadsRaw(s *Spec) bool
}

// PublicScaling reports whether the spec's datasets are scaled by public
// bounds alone (data.scaling = "public") or read raw by a kind that maps
// them by public bounds of its own (RawReader); false for a spec that
// reads no dataset.
func (s *Spec) PublicScaling() bool {
	if s.Data.Scaling == datasets.ScalingPublic {
		return true
	}
	r, ok := s.Section.(RawReader)
	return ok && r.ReadsRaw(s)
}

// DataDependentScaling reports whether the spec reads datasets whose
// preprocessing takes its scale factors and one-hot levels from the
// records themselves, so that the stated ε holds for the scaled rows, not
// for the raw records.
func (s *Spec) DataDependentScaling() bool {
	return len(s.Data.Datasets) > 0 && !s.PublicScaling()
}

// ScalingStatement returns the manifest's statement of what the spec's
// ε covers: StatementPublic, StatementSelected or StatementDataDependent.
func (s *Spec) ScalingStatement() string {
	if s.PublicScaling() {
		return StatementPublic
	}
	if s.Data.Select != "" && s.Data.Select != datasets.SelectNone {
		return StatementSelected
	}
	return StatementDataDependent
}

// ErrDataDependentScaling is wrapped by the error of a spec run with
// secure noise on data-dependent scaling that it does not accept.
var ErrDataDependentScaling = errors.New("secure noise refuses data-dependent scaling")

// CheckSecureNoise returns an error at data.scaling (a *SpecError
// wrapping ErrDataDependentScaling) when the spec runs with secure noise
// (output.secure_noise, --secure-noise) on data-dependent scaling without
// data.accept_data_dependent_scaling; nil otherwise. Secure noise is for
// data that must stay private, and there a scale computed from the records
// is itself a release that no ε accounts for: one record far outside the
// others changes every row's scale (objective perturbation then loses up
// to 1.5 at ε = 1 on the raw records).
func (s *Spec) CheckSecureNoise() error {
	if !s.Output.SecureNoise || !s.DataDependentScaling() || s.Data.AcceptDataDependentScaling {
		return nil
	}
	return s.ErrorAt("data.scaling", "data.scaling", secureNoiseErr())
}

func secureNoiseErr() error {
	return fmt.Errorf("%w: the column and row scale factors and the one-hot levels are computed from the private records, "+
		"so ε holds for the scaled rows, not for the raw records; "+
		"set scaling = \"public\" (bounds declared without looking at the records, records clipped to them) "+
		"or accept it with accept_data_dependent_scaling = true", ErrDataDependentScaling)
}

// Domain returns the declared public domain of dataset name for
// data.scaling = "public": the registry's documented domain
// (datasets.Entry.Domain, none for a data file or a dataset without one)
// with the spec's [data.bounds.NAME] and [data.levels.NAME] over it.
func (s *Spec) Domain(name string) datasets.Domain {
	var base datasets.Domain
	if _, file := s.DataFileOptions(name); !file {
		if e, ok := datasets.Lookup(name); ok && e.Domain != nil {
			base = *e.Domain
		}
	}
	o := datasets.Domain{Ranges: map[string]datasets.Range{}, Levels: map[string][]string{}}
	for a, r := range s.Data.Bounds[name] {
		if len(r) == 2 {
			o.Ranges[a] = datasets.Range{Lo: r[0], Hi: r[1]}
		}
	}
	for a, l := range s.Data.Levels[name] {
		o.Levels[a] = slices.Clone(l)
	}
	return base.With(o, "declared in the spec")
}

// validateScaling checks data.scaling and the keys that go with it.
func (s *Spec) validateScaling() []fieldErr {
	var errs []fieldErr
	add := func(key, path, format string, args ...any) {
		errs = append(errs, fieldErr{key: key, path: path, msg: fmt.Sprintf(format, args...)})
	}
	d := s.Data
	public := d.Scaling == datasets.ScalingPublic
	switch d.Scaling {
	case "", datasets.ScalingDataDependent, datasets.ScalingPublic:
	default:
		allowed := []string{datasets.ScalingDataDependent, datasets.ScalingPublic}
		add("data.scaling", "data.scaling", "must be one of %s (got %q)%s", "data-dependent, public", d.Scaling, Hint(d.Scaling, allowed))
	}
	if public {
		if d.ColumnScale != datasets.ScaleMaxAbs && d.ColumnScale != datasets.ScaleNone {
			add("data.column_scale", "data.column_scale", "%q takes a statistic of the data: with scaling = \"public\" use \"maxabs\" (by the declared ranges) or \"none\"", d.ColumnScale)
		}
		if d.TargetScale != datasets.TargetScaleNone {
			add("data.target_scale", "data.target_scale", "%q divides by the data's max |y|: with scaling = \"public\" use \"none\"", d.TargetScale)
		}
		if d.AcceptDataDependentScaling {
			add("data.accept_data_dependent_scaling", "data.accept_data_dependent_scaling", "only with data-dependent scaling (scaling = \"public\" has nothing to accept)")
		}
	} else {
		// At the first table written ([data.bounds.NAME]).
		if len(d.Bounds) > 0 {
			add("data.bounds."+slices.Sorted(maps.Keys(d.Bounds))[0], "data.bounds", "declared bounds are used only with scaling = \"public\"")
		}
		if len(d.Levels) > 0 {
			add("data.levels."+slices.Sorted(maps.Keys(d.Levels))[0], "data.levels", "declared levels are used only with scaling = \"public\"")
		}
		if d.RowNormBound != 0 {
			add("data.row_norm_bound", "data.row_norm_bound", "used only with scaling = \"public\"")
		}
	}
	if r := d.RowNormBound; math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
		add("data.row_norm_bound", "data.row_norm_bound", "must be finite and > 0 (got %v)", r)
	} else if r > 0 && public && d.RowNorm != datasets.RowL2Max && d.RowNorm != datasets.RowL1Max {
		add("data.row_norm_bound", "data.row_norm_bound", "used only with row_norm = \"l2-max\" or \"l1-max\" (got %q)", d.RowNorm)
	}
	for _, name := range slices.Sorted(maps.Keys(d.Bounds)) {
		key := "data.bounds." + name
		if !slices.Contains(d.Datasets, name) {
			add(key, key, "%q is not in data.datasets", name)
		}
		for _, a := range slices.Sorted(maps.Keys(d.Bounds[name])) {
			r, k := d.Bounds[name][a], key+"."+a
			if len(r) != 2 || math.IsNaN(r[0]) || math.IsNaN(r[1]) || math.IsInf(r[0], 0) || math.IsInf(r[1], 0) || !(r[0] < r[1]) {
				add(k, k, "want [lo, hi], finite, lo < hi (got %v)", r)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.Levels)) {
		key := "data.levels." + name
		if !slices.Contains(d.Datasets, name) {
			add(key, key, "%q is not in data.datasets", name)
		}
		for _, a := range slices.Sorted(maps.Keys(d.Levels[name])) {
			l, k := d.Levels[name][a], key+"."+a
			if len(l) == 0 {
				add(k, k, "an empty list of levels")
			}
			for i, v := range l {
				if v == "" || slices.Contains(l[:i], v) {
					add(k, fmt.Sprintf("%s[%d]", k, i), "empty or repeated level %q", v)
				}
			}
		}
	}
	if s.Output.SecureNoise && s.DataDependentScaling() && !d.AcceptDataDependentScaling {
		add("output.secure_noise", "output.secure_noise", "%v", secureNoiseErr())
	}
	return errs
}
