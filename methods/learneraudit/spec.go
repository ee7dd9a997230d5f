package learneraudit

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/methods/learners"
	"github.com/dprepro/dprepro/runner"
	"github.com/dprepro/dprepro/runner/specdata"
)

// Setting is what a spec says about how it runs one of its learners: the
// configuration learners.Lookup gets, λ, the privacy grid and δ it hands
// the learner, and the share of a dataset's rows a training set holds.
type Setting struct {
	Config   learners.Config
	Lambda   float64
	Epsilons []float64
	Delta    float64
	// TrainShare is the training set's share of a dataset's rows, e.g.
	// (K−1)/K for K-fold cross-validation; in (0, 1].
	TrainShare float64
	// Points, when not empty, are the settings in which the kind hands
	// the learner its fits, when they differ by ε (a kind whose fits get
	// levels and training sets that depend on how it uses them, as the
	// selection methods of the cv-tuning kind do), sorted by ε, then δ,
	// then training share. The audit at an ε takes δ and the training
	// share of the first point at that ε (the smallest δ, then the
	// smallest training set), and Delta and TrainShare at an ε off them.
	Points []Point
	// Choice says, in words, how the kind's setting was chosen where the
	// kind runs the learner in more than one (e.g. "λ = 0.001, the
	// smallest of tuning.lambdas"); empty when there is nothing to choose.
	Choice string
}

// Point is one setting in which a kind hands a learner its fits: the
// level (ε, δ) and the training set's share of a dataset's rows, and Why,
// which of the kind's runs hand it (e.g. "stability at alpha=2").
type Point struct {
	Epsilon, Delta, TrainShare float64
	Why                        string
}

// point returns the first of st.Points at ε eps (equal up to a relative
// 1e-12: a flag's decimal against a quotient such as α/k), and whether
// there is one.
func (st Setting) point(eps float64) (Point, bool) {
	for _, p := range st.Points {
		if math.Abs(p.Epsilon-eps) <= 1e-12*math.Max(math.Abs(p.Epsilon), math.Abs(eps)) {
			return p, true
		}
	}
	return Point{}, false
}

// Source is implemented by the spec section of a kind that runs learners
// (the learner-comparison and cv-tuning kinds), so that `dprepro audit
// --learner` can audit them as the kind runs them.
type Source interface {
	// LearnerSetting returns the setting of learner name in spec, or an
	// error when the spec does not run it.
	LearnerSetting(spec *experiments.Spec, name string) (Setting, error)
}

// SpecOptions are the choices of an audit of a spec's learner beyond the
// spec: zero values mean the defaults stated.
type SpecOptions struct {
	// Epsilon is the level's ε; zero means the spec's ε closest to 1 (in
	// log scale).
	Epsilon float64
	// Lambda is the λ handed to every fit; zero means the spec's
	// (Setting.Lambda), otherwise finite and > 0.
	Lambda float64
	// Rows is the number of rows of the audited datasets; zero means the
	// spec's training-set size of its first dataset.
	Rows int
	// Data says where the data are.
	Data runner.DataOptions
	// Scratch is the folder of the matrices an external learner reads
	// (emptied); required for external learners.
	Scratch string
	// Log receives the workers' stderr; nil discards it.
	Log io.Writer
}

// Prepared is an audit of a spec's learner, ready to Run.
type Prepared struct {
	Learner learners.Learner
	Options Options
	// Dataset names the base rows' dataset and says whether they are
	// real or a synthetic stand-in.
	Dataset string
	// Setting says how the spec's setting of the learner was chosen
	// (Setting.Choice, the λ flag, the point of the audited ε); empty
	// when the spec runs the learner in one setting.
	Setting string
	set     *external.Set
}

// Close ends the external workers the audit started.
func (p *Prepared) Close() error {
	if p.set == nil {
		return nil
	}
	return p.set.Close()
}

// Prepare resolves learner name of spec through the same registry and
// worker protocol as the spec's runs (learners.Lookup with the spec's
// [[methods]]), loads the spec's first dataset and draws the base rows (a
// seeded sample of o.Rows rows, the spec's training-set size by default).
// Options' Releases, Seed, Workers and Confidence are left for the caller.
func Prepare(spec *experiments.Spec, name string, o SpecOptions) (*Prepared, error) {
	src, ok := spec.Section.(Source)
	if !ok {
		return nil, spec.Attribute(fmt.Errorf("kind %q runs no learners that can be audited (learner-comparison and cv-tuning specs do)", spec.Kind))
	}
	st, err := src.LearnerSetting(spec, name)
	if err != nil {
		return nil, err
	}
	if o.Lambda != 0 {
		if !(o.Lambda > 0) || math.IsInf(o.Lambda, 1) {
			return nil, fmt.Errorf("λ must be finite and > 0 (got %v)", o.Lambda)
		}
		st.Lambda = o.Lambda
		st.Choice = fmt.Sprintf("λ = %g, given", o.Lambda)
	}
	if len(spec.Data.Datasets) == 0 {
		return nil, spec.Attribute(fmt.Errorf("data.datasets is empty"))
	}
	dsName := spec.Data.Datasets[0]
	ds, err := specdata.Load(spec, dsName, o.Data.DataDir, o.Data.Named)
	if err != nil {
		return nil, err
	}
	opts, what, err := SpecBase(spec, st, ds, o.Epsilon, o.Rows)
	if err != nil {
		if o.Epsilon == 0 && len(st.Epsilons) == 0 {
			return nil, spec.Attribute(fmt.Errorf("the spec hands learner %s no ε: give --epsilon", name))
		}
		return nil, err
	}
	set := external.NewSet(spec)
	l, err := learners.Lookup(set, name, st.Config)
	if err != nil {
		set.Close()
		return nil, spec.Attribute(fmt.Errorf("--learner: %w", err))
	}
	if set.Has(name, experiments.ServesLearner) {
		if o.Scratch == "" {
			set.Close()
			return nil, fmt.Errorf("learner audit: an external learner needs a scratch folder")
		}
		log := o.Log
		if log == nil {
			log = io.Discard
		}
		if err := os.MkdirAll(o.Scratch, 0o755); err != nil {
			set.Close()
			return nil, err
		}
		if err := set.Open(o.Scratch, log); err != nil {
			set.Close()
			return nil, err
		}
	}
	p := &Prepared{Learner: l, set: set, Dataset: what, Options: opts, Setting: st.Choice}
	if pt, ok := st.point(opts.Level.Epsilon); ok {
		p.Setting = strings.TrimPrefix(p.Setting+"; "+pointWords(pt), "; ")
	}
	return p, nil
}

// DefaultEpsilon is the ε of grid closest to 1 in log scale (the first of
// two as close), the audit's default level; 0 for an empty grid.
func DefaultEpsilon(grid []float64) float64 {
	if len(grid) == 0 {
		return 0
	}
	return slices.MinFunc(grid, func(a, b float64) int {
		da, db := math.Abs(math.Log(a)), math.Abs(math.Log(b))
		switch {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return 0
	})
}

// pointWords describes point p for the audit's output.
func pointWords(p Point) string {
	return fmt.Sprintf("ε = %g, δ = %g: %s", p.Epsilon, p.Delta, p.Why)
}

// SpecBase returns the Options of an audit of a learner run as st says on
// dataset ds (a classification dataset of spec, its first): λ, the level
// (ε = eps, zero meaning DefaultEpsilon(st.Epsilons), δ = st.Delta), the
// loss, and the base rows of the searched pair, a sample of rows rows
// (zero: ⌊st.TrainShare·n⌋, the training-set size) drawn from the stream
// randx.New(spec seed, "learner-audit", "rows", ds.Name); and a
// description of those rows. Releases, Seed, Workers and Confidence are
// left for the caller. When st has a point at ε (Setting.Points), its δ
// and training share replace st.Delta and st.TrainShare.
// `dprepro audit --learner` (Prepare) and the learner-comparison kind's
// [comparison.audit] both build their audits here, so the same seed
// audits the same rows.
func SpecBase(spec *experiments.Spec, st Setting, ds *datasets.Dataset, eps float64, rows int) (Options, string, error) {
	if eps == 0 {
		eps = DefaultEpsilon(st.Epsilons)
	}
	if !(eps > 0) || math.IsInf(eps, 1) {
		return Options{}, "", fmt.Errorf("ε must be finite and > 0 (got %v)", eps)
	}
	if p, ok := st.point(eps); ok {
		st.Delta, st.TrainShare = p.Delta, p.TrainShare
	}
	if ds.Task != "classification" {
		return Options{}, "", specdata.At(spec, ds.Name, fmt.Errorf("a %s dataset; a learner audit needs classification", ds.Task))
	}
	n, d := ds.X.Dims()
	if rows == 0 {
		rows = int(math.Floor(st.TrainShare * float64(n)))
	}
	if rows < 4 || rows > n {
		return Options{}, "", fmt.Errorf("rows must be in [4, %d], the records of %s (got %d)", n, ds.Name, rows)
	}
	perm := randx.New(uint64(spec.Seed), "learner-audit", "rows", ds.Name).Perm(n)[:rows]
	slices.Sort(perm)
	x := mat.NewDense(rows, d, nil)
	y := make([]float64, rows)
	for k, i := range perm {
		x.SetRow(k, ds.X.RawRowView(i))
		y[k] = ds.Y[i]
	}
	what := fmt.Sprintf("%s (%s data), %d of its %d rows drawn with the spec's seed", ds.Name, ds.Source.Kind, rows, n)
	return Options{
		Lambda: st.Lambda, Level: learners.Level{Epsilon: eps, Delta: st.Delta},
		Loss: st.Config.Loss, N: rows, D: d, X: x, Y: y,
	}, what, nil
}
