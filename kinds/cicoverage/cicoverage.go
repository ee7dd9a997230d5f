// Package cicoverage is the "ci-coverage" experiment kind: the bootstrap
// coverage and length of the private confidence intervals of Wang, Kifer &
// Lee, "Differentially Private Confidence Intervals for Empirical Risk
// Minimization" (Journal of Privacy and Confidentiality 9(1), 2019;
// arXiv:1804.03794), Section 7, Tables 2–6 and Figures 1–4.
//
// # Methods
//
// A confidence-interval method is a [cimethods.Method] (package
// methods/cimethods, the extension point): it fits θ̃ privately on a
// bootstrap replicate, releases per-coordinate intervals, fits θ̃ alone for
// the variability interval, and states its privacy cost as
// [privacy.Guarantee] values ([cimethods.Cost]). A spec's
// confidence_intervals.methods are names in its registry
// ([cimethods.Names], [cimethods.Lookup]); an unknown name is an error.
// The registry holds the paper's eight methods ([cimethods.NewWKL]:
// dp|zcdp × obj|output × lr|svm, e.g. "dp-obj-lr") and whatever
// [cimethods.Register] adds; a spec may also name its own [[methods]]
// tables with serves = "ci", methods in another language served over the
// worker protocol ([cimethods.External]), which get the (sub)dataset as a
// file and each replicate as counts over its records
// ([cimethods.Records], which the kind builds: [cimethods.NewRecords]).
// Rows, tables and figures label and group methods by their
// [cimethods.Attributes]; the manifest's privacy ledger composes the costs
// the methods state (an external method's as declared by it).
//
// # Data
//
// The dataset is loaded with the spec's preprocessing (one-hot categorical
// attributes, column_scale maxabs, rows scaled to ‖x‖₂ ≤ 1, no intercept).
// For each swept value the records are permuted with a seeded permutation
// (one per dataset, so the subsets of an n sweep are nested), the first n₁
// records and first d₁ features are kept, a constant feature 1 is appended
// and the rows are scaled again with the spec's row_norm (Section 7). d is
// reported without the constant. θ₀ is the non-private fit
// ([dpci.FitNonPrivate]) on that (sub)dataset: its empirical distribution is
// the population.
//
// # Measures (Section 7.1)
//
//   - coverage: over k bootstrap replicates (n records drawn with
//     replacement, as weights) a private CI per replicate and method
//     ([cimethods.Method.Interval]; for the built-ins Algorithms 3 and 5);
//     the fraction of (replicate, coordinate) pairs whose interval holds
//     θ₀[j]. The coordinates are all d' = d+1 of θ₀, the constant's
//     included, as in the paper's formula ("d' is the dimensionality of
//     θ₀"); coverage_features in rows.csv leaves the constant out.
//   - ci_length and vi_length: when d is swept, the length of the first
//     coordinate's interval; otherwise the mean length over all coordinates
//     (Section 7.3). The variability interval is, per coordinate, the α/2
//     and 1−α/2 quantiles of m private fits ([cimethods.Method.Fit], budget
//     φ₁ only) on bootstrap replicates.
//
// # Shared work
//
// All methods of one model share each replicate (one "resample" draw).
// Within a replicate one non-private fit θ̂ serves the DP and zCDP output
// perturbations (their noise differs), and one objective-perturbation fit
// serves the DP and zCDP objective-perturbation methods: with ρ₁ = ε₁²/2
// both run Algorithm 1 at the same ε₁ (Theorem 2), so the mechanism is
// identical ([cimethods.Shared], [cimethods.Share]). The Hessian and
// covariance releases (Algorithm 2) and the Monte Carlo intervals are drawn
// per privacy notion. The coverage replicates are shared across the
// swept values of an ε sweep too (one unit per model and replicate block
// serves every value, runCI): the replicate is drawn once, output
// perturbation's θ̂ fitted once, and in an ε₂ or ε₃ sweep (Tables 5 and 6,
// Figures 4g–4l), whose values share ε₁, θ̃ and the exact matrices at θ̃ are
// computed once, each value drawing H̃, Σ̃ and its intervals from the same
// streams at its own ε₂, ε₃ (common random numbers; each value's law is
// the paper's). The variability intervals share the same way, and across
// the swept values where those do not change them: a VI spends only φ₁
// on the (sub)dataset, so an ε₂ or ε₃ sweep has one VI per model, reported
// at every x. Every step draws from its own stream keyed by (seed,
// dataset, x, model, replicate, step) — x replaced by n and d for the
// replicate's own draw in an ε sweep, and by ε₁ for every step of an ε₂ or
// ε₃ sweep; for a VI fit (seed, dataset, n, d, ε₁, model, fit, step) — so
// results do not depend on
// the worker count, the block size, which other methods are requested, or
// whether a method is computed in units of its own (an external method is,
// so that its worker's faults fail its units only). Each method's
// variability interval counts the non-converged fits of its own fits only.
package cicoverage

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/methods/external"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
	"github.com/dprepro/dprepro/runner/specdata"
)

// Columns is the rows.csv schema of the kind. A "ci" row is one (bootstrap
// replicate, method); a "vi" row is the variability interval of one method
// at one x. Metrics a row does not measure are NaN.
var Columns = []string{
	"experiment", "dataset", "data_source", "method", "privacy", "perturbation", "model",
	"sweep", "x", "row_type", "replicate", "unit",
	"coverage", "coverage_features", "ci_length", "ci_length_mean", "ci_length_first",
	"vi_length", "vi_length_mean", "vi_length_first",
	"n", "d", "alpha", "c", "h", "eps1", "eps2", "eps3", "rho1", "rho2", "rho3",
	"epsilon_prime", "mc_samples", "vi_fits", "status",
}

// Metrics are the summarized metrics, against x = the swept value.
var Metrics = []string{"coverage", "ci_length", "vi_length"}

// Experiment is a loaded ci-coverage spec.
type Experiment struct {
	spec          *Spec
	data          []*datasets.Dataset
	points        []*point
	methods       []cimethods.Method // the spec's, in its order
	models        []dpci.Model       // the methods' models, in order of first appearance
	units         []string
	byKey         map[string]unit
	external.Runs // the spec's external methods: runner.Opener and Versioner
}

// point is one (dataset, swept value): the (sub)dataset, its θ₀ per model
// and the budgets.
type point struct {
	ds     int
	x      float64
	n, d   int // records; features without the constant
	data   *sample
	theta0 map[dpci.Model][]float64
	eps    [3]float64
	// costs[i] is the cost of one interval of methods[i] at eps, and
	// totals[i] its composition: the ledger.
	costs  []cimethods.Cost
	totals []privacy.Guarantee
	// viData names the data a variability interval is drawn from: the
	// records and the features. Points with the same viData share one VI
	// unit, which draws each bootstrap replicate once and fits it at
	// every ε₁ of its points (see runVI).
	viData string
	// viKey adds ε₁, which the VI spends (not ε₂, ε₃): it names the
	// streams of the methods' draws of a VI fit.
	viKey string
	// ciData names the stream of a coverage replicate's draw, and the
	// points that share a coverage unit per replicate block (see runCI):
	// the swept value when it sets the data (n, d), else — an ε sweep —
	// viData, so that the points of an ε sweep draw each replicate once.
	// ciKey names the streams of the methods' draws: the swept value
	// when it sets ε₁ or the data, else — an ε₂ or ε₃ sweep — ε₁ alone
	// ("eps1=…"), so that its points draw θ̃ and the releases' noise from
	// the same streams.
	ciData, ciKey string
}

type unit struct {
	key    string // the unit key (runner.Unit)
	pt     int
	model  dpci.Model
	ms     []int // the methods computed (indices in Experiment.methods), in the spec's order
	vi     bool
	group  []int     // the points served, pt first (a coverage unit: the points of one ciData)
	eps1s  []float64 // the distinct ε₁ of group, in order of first appearance
	lo, hi int       // coverage replicates [lo, hi), 0-based
}

// Key implements runner.Unit.
func (u unit) Key() string { return u.key }

func (u unit) withKey(k string) unit { u.key = k; return u }

// Options configures New: where the datasets are read from.
type Options = runner.DataOptions

// New loads the datasets of spec, builds each swept (sub)dataset, fits θ₀
// and lays out the units.
func New(es *experiments.Spec, o Options) (*Experiment, error) {
	spec, err := ciSpec(es)
	if err != nil {
		return nil, err
	}
	ci := spec.ConfidenceIntervals
	ext := external.NewSet(es)
	built := false
	defer func() {
		if !built { // end the workers the handshakes started
			ext.Close()
		}
	}()
	e := &Experiment{spec: spec, byKey: map[string]unit{}, Runs: external.Runs{Methods: ext}}
	ms, err := lookupMethods(es, ci.Methods, ext)
	if err != nil {
		return nil, err
	}
	e.methods = ms
	for _, m := range ms {
		if model := m.Attributes().Model; !slices.Contains(e.models, model) {
			e.models = append(e.models, model)
		}
	}
	for di, name := range spec.Data.Datasets {
		ds, err := specdata.Load(es, name, o.DataDir, o.Named)
		if err != nil {
			return nil, err
		}
		if ds.Task != datasets.TaskClassification {
			return nil, specdata.At(es, name, fmt.Errorf("a %s dataset; ci-coverage needs ±1 labels", ds.Task))
		}
		e.data = append(e.data, ds)
		perm := runner.Stream(es, "ci-coverage", "permutation", name).Perm(len(ds.Y))
		for vi, x := range ci.Values {
			// An error at a swept value: confidence_intervals.values[vi].
			at := func(err error) error {
				return es.ErrorAt("confidence_intervals.values", fmt.Sprintf("confidence_intervals.values[%d]", vi),
					fmt.Errorf("dataset %s, %s = %v: %w", name, ci.Sweep, x, err))
			}
			pt := &point{ds: di, x: x, n: ci.N1, d: ci.D1, eps: [3]float64{ci.Eps1, ci.Eps2, ci.Eps3}, theta0: map[dpci.Model][]float64{}}
			switch ci.Sweep {
			case "n":
				pt.n = int(x)
			case "d":
				pt.d = int(x)
			case "eps1":
				pt.eps[0] = x
			case "eps2":
				pt.eps[1] = x
			case "eps3":
				pt.eps[2] = x
			}
			data, n, d, err := subset(ds, perm, pt.n, pt.d, spec.Data.RowNorm)
			if err != nil {
				return nil, at(err)
			}
			pt.data, pt.n, pt.d = data, n, d
			data.key = sampleKey(di, name, n, d)
			pt.viData = fmt.Sprintf("n=%d,d=%d", n, d)
			pt.viKey = fmt.Sprintf("%s,eps1=%s", pt.viData, results.FormatFloat(pt.eps[0]))
			pt.ciData = results.FormatFloat(x)
			pt.ciKey = pt.ciData
			ciUnit := fmt.Sprintf("%s=%s", ci.Sweep, pt.ciData)
			switch ci.Sweep {
			case "eps1", "eps2", "eps3":
				pt.ciData = pt.viData
				ciUnit = pt.viData
				if ci.Sweep != "eps1" {
					pt.ciKey = "eps1=" + results.FormatFloat(pt.eps[0])
				}
			}
			if err := pt.cost(e.methods); err != nil {
				return nil, at(err)
			}
			for _, model := range e.models {
				res, err := dpci.FitNonPrivate(data.full, dpci.Params{Model: model, H: ci.H, C: ci.C}, erm.FitOptions{})
				if err != nil {
					return nil, at(fmt.Errorf("θ₀: %w", err))
				}
				if res.Status != erm.StatusConverged {
					return nil, at(fmt.Errorf("θ₀ (%s): %s", model, res.Status))
				}
				pt.theta0[model] = res.W
			}
			pi := len(e.points)
			e.points = append(e.points, pt)
			for _, model := range e.models {
				groups := e.unitGroups(model)
				// One coverage unit per replicate block and ciData: the
				// points of an ε sweep share it (runCI).
				for lo := 0; lo < ci.Replicates; lo += ci.BlockSize {
					hi := min(lo+ci.BlockSize, ci.Replicates)
					for _, g := range groups {
						key := fmt.Sprintf("%s/%s/%s/ci/rep=%d-%d%s", name, ciUnit, model, lo+1, hi, g.suffix)
						e.serve(key, pi, pt.eps[0], unit{model: model, ms: g.ms, lo: lo, hi: hi})
					}
				}
				// One VI unit per distinct viData: an ε₁, ε₂ or ε₃ sweep
				// has one, serving each of its ε₁; a group with
				// viPerEps1 has one per viKey instead.
				for _, g := range groups {
					vk := pt.viData
					if g.viPerEps1 {
						vk = pt.viKey
					}
					key := fmt.Sprintf("%s/vi/%s/%s%s", name, vk, model, g.suffix)
					e.serve(key, pi, pt.eps[0], unit{model: model, ms: g.ms, vi: true})
				}
			}
		}
	}
	built = true
	return e, nil
}

// serve adds point pi (of ε₁ eps1) to the group of the unit key: to the
// unit already laid out under key, or to a new unit u (laid out in order)
// whose first point it is.
func (e *Experiment) serve(key string, pi int, eps1 float64, u unit) {
	if have, ok := e.byKey[key]; ok {
		have.group = append(have.group, pi)
		if !slices.Contains(have.eps1s, eps1) {
			have.eps1s = append(have.eps1s, eps1)
		}
		e.byKey[key] = have
		return
	}
	u.pt, u.group, u.eps1s = pi, []int{pi}, []float64{eps1}
	e.units = append(e.units, key)
	e.byKey[key] = u
}

// lookupMethods returns the methods of a spec's
// confidence_intervals.methods: the external methods of ext (the spec's
// [[methods]] with serves = "ci", whose first workers start here to read
// their hellos) and the registered ones, or an error per unknown or
// repeated name.
//
// Spec validation checks the names too; this check is the registry's at
// run time, so that a method registered by another module is accepted
// here. The spec's external methods (ext) are started and shaken hands
// with.
func lookupMethods(spec *experiments.Spec, names []string, ext *external.Set) ([]cimethods.Method, error) {
	const key = "confidence_intervals.methods"
	var errs []error
	if len(names) == 0 {
		errs = append(errs, spec.Errorf(key, "must list at least one method (known: %s)", strings.Join(cimethods.Names(), ", ")))
	}
	var ms []cimethods.Method
	for i, name := range names {
		path := fmt.Sprintf("%s[%d]", key, i)
		var m cimethods.Method
		var err error
		if ext != nil && ext.Has(name, experiments.ServesCI) {
			m, err = cimethods.NewExternal(context.Background(), ext, name)
		} else {
			m, err = cimethods.Lookup(name)
		}
		var se *experiments.SpecError
		switch {
		case errors.As(err, &se):
			errs = append(errs, err) // already at its key (methods[i].command)
		case err != nil:
			errs = append(errs, spec.ErrorAt(key, path, err))
		case slices.Contains(names[:i], name):
			errs = append(errs, spec.ErrorAt(key, path, fmt.Errorf("duplicate method %q", name)))
		default:
			ms = append(ms, m)
		}
	}
	return ms, errors.Join(errs...)
}

// budget is the spec's budget at pt.
func (pt *point) budget() cimethods.Budget {
	return cimethods.Budget{Eps1: pt.eps[0], Eps2: pt.eps[1], Eps3: pt.eps[2]}
}

// cost fills pt.costs and pt.totals: what one interval of each method
// costs at pt's budget, and its composition. An invalid or uncomposable
// cost is an error (a method's bug).
func (pt *point) cost(ms []cimethods.Method) error {
	for _, m := range ms {
		c := m.Cost(pt.budget())
		if len(c.Charges) == 0 {
			return fmt.Errorf("method %s states no privacy cost", m.Name())
		}
		total, err := c.Total()
		if err != nil {
			return fmt.Errorf("method %s: cost: %w", m.Name(), err)
		}
		pt.costs = append(pt.costs, c)
		pt.totals = append(pt.totals, total)
	}
	return nil
}

// sample is a (sub)dataset of n records stored as its distinct records.
// Every quantity of the paper is a sum over records, so a record that
// occurs k times can be stored once with weight k: full (base weighted by
// the multiplicities) has exactly the objective, gradient, Hessian and
// covariance of the n records, and a bootstrap replicate (n records drawn
// with replacement, counted per distinct record) is base weighted by those
// counts. On KDD-99 with d = 10 the 450,000 records are 2,489 distinct rows,
// on Bank 45,211 are 909: the fits run over those.
type sample struct {
	base *erm.Rows // each distinct (x, y) once, unweighted
	full *erm.Rows // base weighted by the multiplicities of the n records
	rec  []int32   // rec[i] is the row of base that record i equals
	mult []int32   // mult[u] is the number of records equal to row u
	key  string    // names the (sub)dataset (cimethods.Records.Key)
	// digest is the SHA-256 of the records in order (each row's values
	// and label, bit for bit, and the shape): the sample's content, for
	// keys of results shared between runs (viMemoKey).
	digest [sha256.Size]byte
}

// distinct builds the sample of the n records (x, y).
func distinct(x *mat.Dense, y []float64) *sample {
	n, cols := x.Dims()
	index := make(map[string]int32, n)
	rec := make([]int32, n)
	var first []int
	var mult []float64
	var counts []int32
	key := make([]byte, 8*(cols+1))
	h := sha256.New()
	fmt.Fprintf(h, "%d×%d\x00", n, cols)
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			binary.LittleEndian.PutUint64(key[8*j:], math.Float64bits(v))
		}
		binary.LittleEndian.PutUint64(key[8*cols:], math.Float64bits(y[i]))
		h.Write(key)
		u, ok := index[string(key)]
		if !ok {
			u = int32(len(first))
			index[string(key)] = u
			first = append(first, i)
			mult = append(mult, 0)
			counts = append(counts, 0)
		}
		mult[u]++
		counts[u]++
		rec[i] = u
	}
	base := erm.NewRows(x, y, first)
	s := &sample{base: base, full: base.WithWeights(mult), rec: rec, mult: counts}
	h.Sum(s.digest[:0])
	return s
}

// sampleKey names the (sub)dataset of n records and d features of the
// di-th dataset, name, as a safe file name: the swept settings that keep
// the same records and features (an ε sweep) share it.
func sampleKey(di int, name string, n, d int) string {
	safe := []byte(name)
	for i, c := range safe {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			safe[i] = '_'
		}
	}
	return fmt.Sprintf("ci-%d-%s-n=%d-d=%d", di, safe, n, d)
}

// subset keeps the records perm[:n] and the first d features of ds (0 keeps
// all), appends the constant feature and scales the rows again. Under
// public scaling (ds.Public) "l2-max" divides by the public bound of the
// kept columns and the constant, not by the largest row norm of the
// records, so that each row still depends on its own record only.
func subset(ds *datasets.Dataset, perm []int, n, d int, rowNorm string) (*sample, int, int, error) {
	N, P := ds.X.Dims()
	if n == 0 {
		n = N
	}
	if d == 0 {
		d = P
	}
	if n > N {
		return nil, 0, 0, fmt.Errorf("n1 = %d exceeds the %d records", n, N)
	}
	if d > P {
		return nil, 0, 0, fmt.Errorf("d1 = %d exceeds the %d features", d, P)
	}
	x := mat.NewDense(n, d+1, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		copy(row, ds.X.RawRowView(perm[i])[:d])
		row[d] = 1
		y[i] = ds.Y[perm[i]]
	}
	bound := 0.0
	if ds.Public != nil {
		b := ds.Public.L2Bound(d)
		bound = math.Sqrt(b*b + 1)
	}
	scaleRows(x, rowNorm, bound)
	return distinct(x, y), n, d, nil
}

// scaleRows applies the l2 row scalings of datasets.Preprocessing.RowNorm.
// With the constant 1 appended every row has ‖x‖₂ ≥ 1, so l2-clip and
// l2-unit coincide here. A bound > 0 is a public bound on every row's
// norm, which "l2-max" divides by instead of the largest row norm.
func scaleRows(x *mat.Dense, rowNorm string, bound float64) {
	n, _ := x.Dims()
	norms := make([]float64, n)
	maxNorm := 0.0
	for i := range norms {
		r := x.RawRowView(i)
		norms[i] = math.Sqrt(dot(r, r))
		maxNorm = math.Max(maxNorm, norms[i])
	}
	for i := range norms {
		var s float64
		switch rowNorm {
		case "l2-max":
			s = maxNorm
			if bound > 0 {
				s = math.Max(bound, norms[i]) // the max: rounding only
			}
		case "l2-clip":
			s = math.Max(1, norms[i])
		case "l2-unit":
			s = norms[i]
		default:
			panic("cicoverage: row_norm " + rowNorm + " not validated")
		}
		if s > 0 {
			r := x.RawRowView(i)
			for j := range r {
				r[j] /= s
			}
		}
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// problem returns the ERM problem and interval settings of the spec, with
// solver options fit.
func (e *Experiment) problem(fit erm.FitOptions) cimethods.Problem {
	ci := e.spec.ConfidenceIntervals
	var floor float64
	if ci.SigmaFloor != nil {
		floor = *ci.SigmaFloor
	}
	return cimethods.Problem{C: ci.C, H: ci.H, Alpha: ci.Alpha, MCSamples: ci.MCSamples, SigmaFloor: floor, Fit: fit}
}

// Spec implements runner.Experiment.
func (e *Experiment) Spec() *experiments.Spec { return e.spec.Spec }

// Variant reports whether the run varies the paper's protocol: a
// calibration variant (confidence_intervals.sigma_floor set to other than
// the text's 2) or public bounds instead of the paper's data-dependent
// scaling. Figures 1–4 drawn across runs ([PaperFigures]) take the paper's
// protocol only, so a variant never shares a panel with the run it varies.
func (e *Experiment) Variant() bool {
	f := e.spec.ConfidenceIntervals.SigmaFloor
	return f != nil && *f != 2 || e.spec.PublicScaling()
}

// Units implements runner.Experiment.
func (e *Experiment) Units() []runner.Unit { return runner.UnitsOf(e.units, e.byKey, unit.withKey) }

// Mechanisms implements runner.Releaser: the mechanisms the spec's methods
// release, as each states them ([cimethods.Mechanisms]): for the built-ins
// objective perturbation (Algorithm 1) or output perturbation (Algorithm
// 4) and the two PrivSPDMat matrices (Algorithm 2); a method that is not
// one of the paper's as mech.Declared(NAME), as a traced run records an
// external method's releases: the manifest cannot vouch for its noise.
func (e *Experiment) Mechanisms() []string {
	var out []string
	for _, m := range e.methods {
		out = append(out, cimethods.Mechanisms(m)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Columns implements runner.Experiment.
func (e *Experiment) Columns() []string { return Columns }

// viStream returns the random stream of one step of variability fit i:
// keyed by the VI's data and ε₁ (viKey, as pt.viKey), not by the swept
// value, so that the VI of (n, d, ε₁) draws the same whichever sweep asks
// for it. The replicate's own draw (resampleStep) is keyed by the data
// only (pt.viData): the fits at every ε₁ of a VI unit are of one
// replicate.
func (e *Experiment) viStream(env runner.Env, pt *point, viKey string, model dpci.Model, i int, step string) *rand.Rand {
	return env.Stream(e.data[pt.ds].Name, "vi", viKey, string(model), fmt.Sprint(i), step)
}

// stream returns the random stream of one step of one coverage
// replicate: keyed by pt.ciData for the replicate's own draw
// (resampleStep), by pt.ciKey for the methods' steps.
func (e *Experiment) stream(env runner.Env, pt *point, model dpci.Model, kind string, rep int, step string) *rand.Rand {
	key := pt.ciKey
	if step == resampleStep {
		key = pt.ciData
	}
	return env.Stream(e.data[pt.ds].Name, e.spec.ConfidenceIntervals.Sweep,
		key, string(model), kind, fmt.Sprint(rep), step)
}

// resampler draws bootstrap replicates of one sample into reused storage.
type resampler struct {
	s      *sample
	counts []int32
	dst    erm.Rows
	// records, when set, also counts the draws per record (for the
	// methods that read the records, [cimethods.RecordUser]).
	records *cimethods.Records
}

// newResampler returns the resampler of s; with records it also counts
// every replicate per record into a Records of s (cimethods.Data.Records).
func newResampler(s *sample, records bool) *resampler {
	r := &resampler{s: s, counts: make([]int32, s.base.N())}
	if records {
		r.records = cimethods.NewRecords(s.key, s.base, s.rec)
	}
	return r
}

// draw returns the replicate of n records drawn with replacement (n =
// len(s.rec)) as the distinct rows drawn at least once, weighted by how
// often they were drawn ([erm.Rows.Resample]). The result is valid until
// the next draw.
//
// When the records repeat enough (see [multinomialRatio]) and no method
// reads the replicate record by record, the counts per distinct row are
// drawn at once as their multinomial ([multinomialCounts]), the same
// distribution as n draws of a record; otherwise the n records are drawn
// one by one with rng.IntN(n) (and, with records, counted per record as
// well, which draws the same numbers).
func (r *resampler) draw(rng *rand.Rand) *erm.Rows {
	rec := r.s.rec
	n := len(rec)
	switch {
	case r.records == nil && multinomialRatio*len(r.s.mult) <= n:
		multinomialCounts(r.counts, rng, r.s.mult, n)
	case r.records == nil:
		clear(r.counts)
		for i := 0; i < n; i++ {
			r.counts[rec[rng.IntN(n)]]++
		}
	default:
		clear(r.counts)
		byRecord := r.records.Counts
		clear(byRecord)
		for i := 0; i < n; i++ {
			j := rng.IntN(n)
			r.counts[rec[j]]++
			byRecord[j]++
		}
	}
	return r.s.base.Resample(&r.dst, r.counts)
}

// multinomialRatio is how many records per distinct row a sample needs for
// its replicates to be drawn as a multinomial: one binomial per row costs
// about as much as this many uniform draws of a record (measured with
// BenchmarkResampleCounts). The choice depends on the data only, so a
// replicate's draws do not depend on anything but its stream.
const multinomialRatio = 16

// usesRecords reports whether one of the methods ms (indices in e.methods)
// reads the replicate record by record.
func (e *Experiment) usesRecords(ms []int) bool {
	for _, i := range ms {
		if ru, ok := e.methods[i].(cimethods.RecordUser); ok && ru.UsesRecords() {
			return true
		}
	}
	return false
}

// RunUnit implements runner.Experiment.
func (e *Experiment) RunUnit(ctx context.Context, ru runner.Unit, env runner.Env) ([]results.Row, error) {
	u, err := runner.Begin[unit](ctx, ru)
	if err != nil {
		return nil, err // before a VI unit allocates room for all its fits
	}
	key := u.key
	if u.vi {
		return e.runVI(ctx, env, key, u)
	}
	return e.runCI(ctx, env, key, u)
}

// external reports whether u computes an external method
// ([cimethods.External]): such units are one method's (unitGroups).
func (e *Experiment) external(u unit) bool {
	_, ok := e.methods[u.ms[0]].(*cimethods.External)
	return ok
}

// sel returns the indices in e.methods of the methods of model, in the
// spec's order.
func (e *Experiment) sel(model dpci.Model) []int {
	var out []int
	for i, m := range e.methods {
		if m.Attributes().Model == model {
			out = append(out, i)
		}
	}
	return out
}

// unitGroup is a set of methods of one model computed by one unit, and
// the suffix of the units' keys ("" for the in-process methods).
// viPerEps1 puts its variability intervals in a unit per ε₁ of an ε₁
// sweep (an external method: its fits share nothing across ε₁, and its
// worker serves one request at a time, so units per ε₁ run side by side);
// the in-process methods' VI is one unit serving every ε₁ (their fits
// share each replicate and θ̂).
type unitGroup struct {
	ms        []int
	suffix    string
	viPerEps1 bool
}

// unitGroups splits the methods of model into the groups that units
// compute: the in-process methods (built-in or registered) together, as
// the paper's share each replicate's fits, and each external method
// ([cimethods.External]) in units of its own, keyed "…/<name>", so that a
// fault of its worker (a reply the harness refuses) fails that method's
// units and not the others' (whose rows are checkpointed). The draws do
// not depend on the grouping: every stream is keyed by the replicate and
// step, not by the unit. Groups come in the order of their first method
// in the spec, so rows (and the summary) keep the spec's method order
// where the external methods come first or last.
func (e *Experiment) unitGroups(model dpci.Model) []unitGroup {
	var out []unitGroup
	in := -1 // the index in out of the in-process group
	for _, i := range e.sel(model) {
		if m, ok := e.methods[i].(*cimethods.External); ok {
			out = append(out, unitGroup{ms: []int{i}, suffix: "/" + m.Name(), viPerEps1: true})
			continue
		}
		if in < 0 {
			in = len(out)
			out = append(out, unitGroup{})
		}
		out[in].ms = append(out[in].ms, i)
	}
	return out
}

// resampleStep is the step of the replicate's own draw, which no method
// may name.
const resampleStep = "resample"

// streams returns the Streams of a replicate or variability fit: step
// names are passed to stream.
func streams(stream func(step string) *rand.Rand) cimethods.Streams {
	return func(step string) *rand.Rand {
		if step == resampleStep {
			panic("cicoverage: a method asked for the stream " + resampleStep + ", which draws the replicate")
		}
		return stream(step)
	}
}

// runCI computes the coverage replicates [u.lo, u.hi) of one model at
// each point of the unit's group: per replicate, one interval of each of
// the model's methods at each point. Replicates are independent — each
// draws only from the streams keyed by its index — so the unit hands them
// to runner.Env.Parallel (tail help, issue 27) and returns their rows
// point by point, each point's in replicate order; the error returned is
// the first in replicate order, as a single loop's. External methods'
// units keep one loop (see runVI).
//
// The points of an ε sweep (one ciData: the same records and features)
// are one unit's group, and a replicate is drawn once for all of them
// (from the stream of its data, not of a swept value), with one
// cimethods.Shared: output perturbation's non-private θ̂ (Eq. 7) is fitted
// once per replicate for every point. The methods' streams are keyed by
// the replicate and ε₁ (ciKey): in an ε₂ or ε₃ sweep, whose points share
// ε₁, the points also share θ̃ (Algorithm 1 or 4 at ε₁) and what is
// computed from it (the exact H and Σ at θ̃), which leaves only H̃, Σ̃ and
// the Monte Carlo intervals to each point; in an ε₁ sweep each point
// draws θ̃ and the rest from streams of its own ε₁. Each point's
// intervals follow the paper's protocol (its replicates are independent
// bootstrap samples, its θ̃ at its ε₁, H̃ and Σ̃ at its ε₂ and ε₃); across
// the points the replicates are common random numbers — in an ε₂ or ε₃
// sweep the noise of H̃ and Σ̃ and the Monte Carlo draws are even the same
// normals at each point's scale —, which leaves each point's coverage
// and lengths with the law they had and makes their differences across
// the sweep less noisy, as for the variability intervals (runVI). With
// secure noise every stream is fresh (nothing replays): the points share
// the replicate, θ̂ and objective perturbation's θ̃ (drawn once, Share),
// while output perturbation draws θ̃ per point, its exact matrices keyed
// by θ̃ bit for bit. An n or d sweep sets the data per point: its groups
// are one point each.
func (e *Experiment) runCI(ctx context.Context, env runner.Env, key string, u unit) ([]results.Row, error) {
	pt := e.points[u.pt] // the group's data, θ₀ and streams: the same at every point
	theta0 := pt.theta0[u.model]
	ms := u.ms
	records := e.usesRecords(ms)
	byRep := make([][][]results.Row, u.hi-u.lo) // [replicate][point of the group]
	worker := func() func(k int) error {
		prob := e.problem(erm.FitOptions{Init: theta0, Work: new(erm.Workspace), Context: ctx})
		rs := newResampler(pt.data, records)
		return func(k int) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			rep := u.lo + k
			rows := rs.draw(e.stream(env, pt, u.model, "ci", rep, resampleStep))
			shared := new(cimethods.Shared)
			byRep[k] = make([][]results.Row, len(u.group))
			for q, pi := range u.group {
				at := e.points[pi]
				d := cimethods.Data{
					Rows:    rows,
					Records: rs.records,
					Problem: prob,
					Streams: streams(func(step string) *rand.Rand { return e.stream(env, at, u.model, "ci", rep, step) }),
					Shared:  shared,
					Scope:   mech.Records{Dataset: e.data[pt.ds].Name, Part: fmt.Sprintf("ci replicate %d", rep+1), N: pt.n},
				}
				out := make([]results.Row, 0, len(ms))
				for _, i := range ms { // rows in the spec's method order
					m := e.methods[i]
					rel, err := m.Interval(ctx, d, at.budget())
					if err != nil {
						return fmt.Errorf("%s: %w", m.Name(), err)
					}
					if !rel.Cost.Equal(at.costs[i]) {
						return fmt.Errorf("cicoverage: method %s released under a cost other than the one it states for the ledger", m.Name())
					}
					if rel.Interval.Lo == nil {
						out = append(out, e.failRow(key, at, m, rep, rel.EpsilonPrime, rel.Status))
						continue
					}
					th := at.theta0[u.model] // θ₀ of the group's data: the same at every point
					if len(rel.Interval.Lo) != len(th) || len(rel.Interval.Hi) != len(th) {
						return fmt.Errorf("cicoverage: method %s released %d/%d intervals for %d coordinates", m.Name(), len(rel.Interval.Lo), len(rel.Interval.Hi), len(th))
					}
					out = append(out, e.ciRow(key, at, m, rep, rel.Interval, th, rel.EpsilonPrime, rel.Status))
				}
				byRep[k][q] = out
			}
			return nil
		}
	}
	run := env.Parallel
	if e.external(u) {
		run = runner.Sequential
	}
	if err := run(ctx, len(byRep), worker); err != nil {
		return nil, err
	}
	var out []results.Row
	for q := range u.group {
		for _, rows := range byRep {
			out = append(out, rows[q]...)
		}
	}
	return out, nil
}

// runVI computes the variability intervals of one model: per ε₁ of the
// unit's points and per method, VIFits private fits
// (cimethods.Method.Fit, budget ε₁ only) on bootstrap replicates, and per
// coordinate the α/2 and 1−α/2 quantiles of the fits (Wang, Kifer & Lee
// 2019, Section 7.1, "Variability Intervals").
//
// Replicate i is drawn once (from the stream of the unit's data, not of an
// ε₁) and fitted at every ε₁ of the unit, the methods' draws from streams
// keyed by that ε₁ (viStream). What a fit shares within the replicate
// (cimethods.Share) is shared across the ε₁ too: output perturbation's
// non-private θ̂ (Eq. 7), which does not depend on ε₁, is fitted once per
// replicate for all the values of an ε₁ sweep, where Algorithm 1 runs once
// per ε₁. Each ε₁'s VI is the paper's (m = vi_fits fits, one per
// replicate); the VIs of one unit's ε₁ values are drawn from the same
// replicates (common random numbers), which leaves each VI's law
// unchanged and makes their differences across ε₁ less noisy.
//
// The fits are independent — fit i draws only from the streams keyed by
// i — so the unit hands them to runner.Env.Parallel, which spreads a long
// VI over the workers idle at the end of a run (issue 27). The outcome is
// then read in the order a single loop would have it: a method whose fit
// i gives no θ̃ at an ε₁ has its VI at that ε₁ not computed (status of
// that fit), and an error of a method's fit fails the unit only where that
// method had not already failed at that ε₁. Fits of a method after its
// first failure may run (other goroutines do not know of it) but count for
// nothing; what methods share within a fit (cimethods.Share) is drawn from
// the fit's own streams, so a shared value is the same whichever method
// computes it. External methods' units keep one loop: their workers serve
// one request at a time.
//
// The lengths depend on the unit's sample, θ₀, methods, ε₁ values and
// streams only, which the tables and sweeps of a dataset share (the VI at
// (n, d, ε₁) of wkl-table3-adult is that of its sigma_floor variant): a
// unit of a built-in method takes them from an identical unit of an
// earlier run of the same command when there is one (runner.Env.Shared,
// keyed by viMemoKey), bit for bit what it would have computed.
func (e *Experiment) runVI(ctx context.Context, env runner.Env, key string, u unit) ([]results.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // before allocating vi_fits samples per coordinate
	}
	var res *viResult
	if e.external(u) {
		r, err := e.viLengths(ctx, env, u)
		if err != nil {
			return nil, err
		}
		res = r
	} else {
		v, _, err := env.Shared(ctx, e.viMemoKey(u), func() (any, error) { return e.viLengths(ctx, env, u) })
		if err != nil {
			return nil, err
		}
		res = v.(*viResult)
	}
	ms := u.ms
	var out []results.Row
	for _, pi := range u.group {
		q := slices.Index(u.eps1s, e.points[pi].eps[0])
		for k, mi := range ms {
			at := q*len(ms) + k
			r := e.baseRow(key, e.points[pi], e.methods[mi], "vi", 0)
			r.SetFloat("epsilon_prime", math.NaN())
			for _, c := range []string{"coverage", "coverage_features", "ci_length", "ci_length_mean", "ci_length_first"} {
				r.SetFloat(c, math.NaN())
			}
			if res.failed[at] != "" {
				for _, c := range []string{"vi_length", "vi_length_mean", "vi_length_first"} {
					r.SetFloat(c, math.NaN())
				}
				r.Set("status", res.failed[at])
				out = append(out, r)
				continue
			}
			lens := res.lens[at]
			mean, first := stat.Mean(lens, nil), lens[0]
			r.SetFloat("vi_length", e.reported(mean, first))
			r.SetFloat("vi_length_mean", mean)
			r.SetFloat("vi_length_first", first)
			r.SetFloat("epsilon_prime", res.ep[at])
			status := "ok"
			if res.nonConv[at] > 0 {
				status = fmt.Sprintf("%d fits not converged", res.nonConv[at])
			}
			r.Set("status", status)
			out = append(out, r)
		}
	}
	return out, nil
}

// viResult is what a VI unit computes before its rows: per ε₁ q of the
// unit and method k (index q·len(ms) + k, ms the unit's methods) the VI
// lengths per coordinate (nil when not computed), the status of its first
// fit without θ̃ ("" when none), its fits that did not converge and its
// last ε′. Shared between runs (runner.Env.Shared): read only.
type viResult struct {
	lens    [][]float64
	failed  []string
	nonConv []int
	ep      []float64
}

// viLengths runs the VIFits bootstrap fits of u at each of its ε₁ and
// returns their lengths (see runVI).
func (e *Experiment) viLengths(ctx context.Context, env runner.Env, u unit) (*viResult, error) {
	ci := e.spec.ConfidenceIntervals
	pt := e.points[u.pt]
	theta0 := pt.theta0[u.model]
	ms := u.ms
	dim := len(theta0)
	nf, nm := ci.VIFits, len(ms)*len(u.eps1s)
	// Per ε₁ q and method k (index q·len(ms) + k, as viResult):
	// samples[qk][j][i] fit i's coordinate j. Per fit i, ε₁ q and method k
	// (index i·nm + qk): the fit's status ("" for no θ̃ yet: not run), ε′,
	// and error.
	samples := make([][][]float64, nm)
	for qk := range samples {
		samples[qk] = make([][]float64, dim)
		for j := range samples[qk] {
			samples[qk][j] = make([]float64, nf)
		}
	}
	status := make([]string, nf*nm)
	noTheta := make([]bool, nf*nm)
	eps := make([]float64, nf*nm)
	errs := make([]error, nf*nm)
	records := e.usesRecords(ms)
	viKeys := make([]string, len(u.eps1s)) // per ε₁: its points' viKey
	for _, pi := range u.group {
		viKeys[slices.Index(u.eps1s, e.points[pi].eps[0])] = e.points[pi].viKey
	}
	// Logistic regression: the full-data Hessian at θ₀, factored once for
	// the unit. Each fit, warm-started at θ₀ on its bootstrap replicate,
	// takes its first Newton step with it (a chord step,
	// erm.FitOptions.Factor) and builds a Hessian of its own only if that
	// contracts poorly: on wkl-eps1-adult's quick VI units 4.4–4.6 steps and no
	// Hessian per fit, against 4.1 steps and one Hessian. The fits converge
	// to the same tolerance; θ̃ moves by at most 2·GradTol/(2c). Not for
	// the Huberized SVM: its loss is piecewise quadratic, so the exact
	// Hessian at θ₀ mostly ends the fit in one step (1.0 steps per fit),
	// which a chord step cannot (4.7).
	var factor *erm.Factor
	if u.model == dpci.LR {
		var err error
		factor, err = dpci.HessianFactor(pt.data.full, dpci.Params{Model: u.model, H: ci.H, C: ci.C}, theta0)
		if err != nil {
			return nil, fmt.Errorf("cicoverage: variability interval: %w", err)
		}
	}
	worker := func() func(i int) error {
		prob := e.problem(erm.FitOptions{Init: theta0, Work: new(erm.Workspace), Context: ctx, Factor: factor})
		rs := newResampler(pt.data, records)
		return func(i int) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			rows := rs.draw(e.viStream(env, pt, pt.viData, u.model, i, resampleStep))
			shared := new(cimethods.Shared)
			for q, e1 := range u.eps1s {
				d := cimethods.Data{
					Rows:    rows,
					Records: rs.records,
					Problem: prob,
					Streams: streams(func(step string) *rand.Rand { return e.viStream(env, pt, viKeys[q], u.model, i, step) }),
					Shared:  shared,
					Scope:   mech.Records{Dataset: e.data[pt.ds].Name, Part: fmt.Sprintf("vi fit %d", i+1), N: pt.n},
				}
				for k, mi := range ms {
					qk := q*len(ms) + k
					at := i*nm + qk
					m := e.methods[mi]
					est, err := m.Fit(ctx, d, e1)
					if err != nil {
						errs[at] = fmt.Errorf("%s: %w", m.Name(), err)
						continue
					}
					status[at], eps[at] = est.Status, est.EpsilonPrime
					if est.Theta == nil {
						noTheta[at] = true
						continue
					}
					if len(est.Theta) != dim {
						errs[at] = fmt.Errorf("cicoverage: method %s fitted %d coefficients, want %d", m.Name(), len(est.Theta), dim)
						continue
					}
					for j, v := range est.Theta {
						samples[qk][j][i] = v
					}
				}
			}
			return nil
		}
	}
	run := env.Parallel
	if e.external(u) {
		run = runner.Sequential
	}
	if err := run(ctx, nf, worker); err != nil {
		return nil, err
	}
	// The fits in a single loop's order: failed[qk] the status of the
	// first fit of method k at ε₁ q without θ̃ (its VI is then not
	// computed), nonConv[qk] its fits that did not converge, ep[qk] its
	// last ε′.
	failed := make([]string, nm)
	nonConv := make([]int, nm)
	ep := make([]float64, nm)
	for i := 0; i < nf; i++ {
		for qk := range nm {
			at := i*nm + qk
			switch {
			case failed[qk] != "":
			case errs[at] != nil:
				return nil, errs[at]
			case noTheta[at]:
				failed[qk] = status[at]
			default:
				ep[qk] = eps[at]
				if status[at] != "ok" {
					nonConv[qk]++
				}
			}
		}
	}
	// The lengths per ε₁ and method.
	lens := make([][]float64, nm)
	for qk := range nm {
		if failed[qk] != "" {
			continue
		}
		l := make([]float64, dim)
		for j, x := range samples[qk] {
			if err := ctx.Err(); err != nil {
				return nil, err // a sort of VIFits values per coordinate
			}
			slices.Sort(x)
			l[j] = stat.Quantile(1-ci.Alpha/2, stat.Empirical, x, nil) - stat.Quantile(ci.Alpha/2, stat.Empirical, x, nil)
		}
		lens[qk] = l
	}
	return &viResult{lens: lens, failed: failed, nonConv: nonConv, ep: ep}, nil
}

// viMemoKey describes everything a VI unit's lengths depend on besides the
// run's seed and kind (which runner.Env.Shared adds): the sample's
// content (its digest), the dataset's name and the unit's data key and
// model (which name its streams, viStream), θ₀ bit for bit, the methods
// (built-in ones only: an external method's unit is never shared), the
// parameters their fits read (c and h: cimethods.Method.Fit reads no
// interval parameter, so runs that differ in sigma_floor or mc_samples
// share), the ε₁ values in the unit's order, the number of fits and α
// (the lengths' quantiles).
func (e *Experiment) viMemoKey(u unit) string {
	ci := e.spec.ConfidenceIntervals
	pt := e.points[u.pt]
	var b strings.Builder
	fmt.Fprintf(&b, "cicoverage/vi/v2\x00sample %x n %d\x00dataset %q vi %q model %q\x00theta0", pt.data.digest, pt.n, e.data[pt.ds].Name, pt.viData, u.model)
	for _, v := range pt.theta0[u.model] {
		fmt.Fprintf(&b, " %x", math.Float64bits(v))
	}
	b.WriteString("\x00methods")
	for _, mi := range u.ms {
		m := e.methods[mi]
		fmt.Fprintf(&b, " %q(%T)", m.Name(), m)
	}
	b.WriteString("\x00eps1")
	for _, e1 := range u.eps1s {
		fmt.Fprintf(&b, " %x", math.Float64bits(e1))
	}
	fmt.Fprintf(&b, "\x00c %x h %x alpha %x fits %d",
		math.Float64bits(ci.C), math.Float64bits(ci.H), math.Float64bits(ci.Alpha), ci.VIFits)
	return b.String()
}

func add(s [][]float64, theta []float64) {
	for j, v := range theta {
		s[j] = append(s[j], v)
	}
}

// reported is the length the paper reports (Section 7.3): the first
// coordinate's when d is swept, else the mean over all coordinates.
func (e *Experiment) reported(mean, first float64) float64 {
	if e.spec.ConfidenceIntervals.Sweep == "d" {
		return first
	}
	return mean
}

func (e *Experiment) baseRow(key string, pt *point, m cimethods.Method, rowType string, rep int) results.Row {
	ci := e.spec.ConfidenceIntervals
	ds := e.data[pt.ds]
	a := m.Attributes()
	r := results.Row{}
	r.Set("experiment", e.spec.ID)
	r.Set("dataset", ds.Name)
	r.Set("data_source", ds.Source.Kind)
	r.Set("method", m.Name())
	r.Set("privacy", a.Privacy)
	r.Set("perturbation", a.Perturbation)
	r.Set("model", string(a.Model))
	r.Set("sweep", ci.Sweep)
	r.SetFloat("x", pt.x)
	r.Set("row_type", rowType)
	r.SetInt("replicate", rep)
	r.Set("unit", key)
	r.SetInt("n", pt.n)
	r.SetInt("d", pt.d)
	r.SetFloat("alpha", ci.Alpha)
	r.SetFloat("c", ci.C)
	r.SetFloat("h", ci.H)
	for i, name := range []string{"1", "2", "3"} {
		r.SetFloat("eps"+name, pt.eps[i])
		r.SetFloat("rho"+name, cimethods.Rho(pt.eps[i]))
	}
	r.SetInt("mc_samples", ci.MCSamples)
	r.SetInt("vi_fits", ci.VIFits)
	return r
}

// ciRow records one replicate's interval: coverage of θ₀ over all d+1
// coordinates (the paper's d') and over the d features.
func (e *Experiment) ciRow(key string, pt *point, m cimethods.Method, rep int, iv dpci.Interval, theta0 []float64, ep float64, status string) results.Row {
	r := e.baseRow(key, pt, m, "ci", rep+1)
	dim := len(theta0)
	covered, lens := 0, make([]float64, dim)
	for j, v := range theta0 {
		if iv.Covers(j, v) {
			covered++
		}
		lens[j] = iv.Hi[j] - iv.Lo[j]
	}
	coveredFeat := covered
	if iv.Covers(dim-1, theta0[dim-1]) {
		coveredFeat--
	}
	r.SetFloat("coverage", float64(covered)/float64(dim))
	r.SetFloat("coverage_features", float64(coveredFeat)/float64(dim-1))
	mean, first := stat.Mean(lens, nil), lens[0]
	r.SetFloat("ci_length", e.reported(mean, first))
	r.SetFloat("ci_length_mean", mean)
	r.SetFloat("ci_length_first", first)
	for _, c := range []string{"vi_length", "vi_length_mean", "vi_length_first"} {
		r.SetFloat(c, math.NaN())
	}
	r.SetFloat("epsilon_prime", ep)
	r.Set("status", status)
	return r
}

func (e *Experiment) failRow(key string, pt *point, m cimethods.Method, rep int, ep float64, status string) results.Row {
	r := e.baseRow(key, pt, m, "ci", rep+1)
	for _, c := range []string{"coverage", "coverage_features", "ci_length", "ci_length_mean", "ci_length_first", "vi_length", "vi_length_mean", "vi_length_first"} {
		r.SetFloat(c, math.NaN())
	}
	r.SetFloat("epsilon_prime", ep)
	r.Set("status", status)
	return r
}

// Summary implements runner.Experiment: mean coverage and CI length over
// the replicates, and the VI length, per (method, x).
func (e *Experiment) Summary(rows []results.Row) []results.SummaryRow {
	return results.Summarize(rows, results.SummaryOptions{
		Experiment: e.spec.ID, XName: e.spec.ConfidenceIntervals.Sweep, XCol: "x", Metrics: Metrics,
		Bootstrap: e.spec.Output.Bootstrap, Level: e.spec.Output.CILevel, Seed: e.spec.Seed,
	})
}

// xLabel is the axis label of the swept parameter.
func (e *Experiment) xLabel() string {
	switch e.spec.ConfidenceIntervals.Sweep {
	case "n":
		return "n (records)"
	case "d":
		return "d (features, without the constant)"
	default:
		s := e.spec.ConfidenceIntervals.Sweep
		return "ε" + s[3:] + " (zCDP: ρ" + s[3:] + " = ε" + s[3:] + "²/2)"
	}
}

// Figures implements runner.Experiment: the coverage of Tables 2–6 as a
// figure (dashed: 1−α), and the four comparisons of Section 7.3 as
// Figures 1–4 lay them out: CI and VI length against the swept value, one
// panel per model, error bars ±1 standard deviation of the CI lengths over
// the replicates ("Error bars correspond to one standard deviation for
// CI"; a VI is one interval per x and has none).
//
//	figure1-dp-vs-zcdp-obj       DP vs zCDP, objective perturbation
//	figure2-dp-vs-zcdp-output    DP vs zCDP, output perturbation
//	figure3-obj-vs-output-dp     objective vs output perturbation, DP
//	figure4-obj-vs-output-zcdp   objective vs output perturbation, zCDP
//
// The paper's figures gather panels of several tables' sweeps (e.g.
// Figure 1a is KDD-99's n sweep, 1b–c Adult's d sweep); each spec draws the
// panels of its own sweep.
func (e *Experiment) Figures() []plots.FigureSpec {
	ci := e.spec.ConfidenceIntervals
	target := 1 - ci.Alpha
	styles := figureStyles(e.methods)
	cov := plots.FigureSpec{Name: "coverage", Title: e.spec.Title + ": coverage (dashed: 1−α)", Metric: "coverage",
		XLabel: e.xLabel(), YLabel: "coverage", Methods: slices.Clone(ci.Methods), Styles: styles, Jitter: 0.2,
		RefLines: []plots.RefLine{{Y: target, Label: fmt.Sprintf("target 1−α = %g", target)}}}
	figs := []plots.FigureSpec{cov}
	what := "mean over coordinates"
	if ci.Sweep == "d" {
		what = "first coordinate"
	}
	for _, f := range comparisons {
		ms := f.pick(e.methods)
		if len(ms) == 0 {
			continue
		}
		figs = append(figs, plots.FigureSpec{
			Name:    f.name,
			Title:   fmt.Sprintf("%s, %s: %s (%s)", f.paper, f.title, e.spec.Title, what),
			Caption: lengthCaption(f),
			Metrics: []string{"ci_length", "vi_length"}, MetricLabels: lengthLabels, Methods: ms, Styles: styles,
			XLabel: e.xLabel(), YLabel: "interval length", Jitter: 0.1,
			ErrorBars: "sd", PanelBy: func(r results.SummaryRow) []string { return []string{e.modelPanel(r)} },
		})
	}
	return figs
}

// lengthLabels name the interval lengths in the figures' legends.
var lengthLabels = map[string]string{"ci_length": "CI length", "vi_length": "VI length"}

// lengthCaption is the caption of a length figure: the paper's error bars,
// and in Figure 1 that the two variability intervals are one.
func lengthCaption(c comparison) plots.Caption {
	cap := plots.Caption{Bars: "±1 sd of the CI length over the replicates (the paper's); a VI is one interval per x, no bar"}
	if c.sides[0].perturbation == c.sides[1].perturbation && c.sides[0].perturbation == cimethods.ObjPert {
		cap.Note = "DP and zCDP objective perturbation share one fit at ε1 (Algorithm 1 is ε1²/2-zCDP, Theorem 2), " +
			"so their variability intervals coincide by construction: the zCDP VI (dashed) lies on the DP VI."
	}
	return cap
}

// figureStyles gives each method a fixed colour and marker in every figure
// of the paper, from its attributes: the colour by privacy and
// perturbation (DP obj blue, zCDP obj red, DP output green, zCDP output
// orange), the marker by model (LR ring, SVM triangle). Methods with other
// attributes get the figures' free palette styles.
func figureStyles(ms []cimethods.Method) map[string]plots.Style {
	colour := map[[2]string]int{
		{string(dpci.DP), string(cimethods.ObjPert)}: 0, {string(dpci.ZCDP), string(cimethods.ObjPert)}: 1,
		{string(dpci.DP), string(cimethods.OutPert)}: 2, {string(dpci.ZCDP), string(cimethods.OutPert)}: 3,
	}
	shape := map[dpci.Model]int{dpci.LR: 0, dpci.SVM: 2}
	out := map[string]plots.Style{}
	for _, m := range ms {
		a := m.Attributes()
		c, ok1 := colour[[2]string{a.Privacy, a.Perturbation}]
		sh, ok2 := shape[a.Model]
		if ok1 && ok2 {
			out[m.Name()] = plots.Style{Color: plots.PaletteColor(c), Shape: plots.PaletteShape(sh)}
		}
	}
	return out
}

// comparisons are the four comparisons of Section 7.3 (Figures 1–4):
// the attributes (privacy, perturbation) of the two sides compared, each
// drawn for every model.
var comparisons = []comparison{
	{"figure1-dp-vs-zcdp-obj", "Figure 1", "DP vs zCDP, objective perturbation", [2]side{{dpci.DP, cimethods.ObjPert}, {dpci.ZCDP, cimethods.ObjPert}}},
	{"figure2-dp-vs-zcdp-output", "Figure 2", "DP vs zCDP, output perturbation", [2]side{{dpci.DP, cimethods.OutPert}, {dpci.ZCDP, cimethods.OutPert}}},
	{"figure3-obj-vs-output-dp", "Figure 3", "objective vs output perturbation, DP", [2]side{{dpci.DP, cimethods.ObjPert}, {dpci.DP, cimethods.OutPert}}},
	{"figure4-obj-vs-output-zcdp", "Figure 4", "objective vs output perturbation, zCDP", [2]side{{dpci.ZCDP, cimethods.ObjPert}, {dpci.ZCDP, cimethods.OutPert}}},
}

type comparison struct {
	name, paper, title string
	sides              [2]side
}

// side is one side of a comparison: the methods with these attributes.
type side struct {
	privacy      dpci.Privacy
	perturbation cimethods.Perturbation
}

// pick returns the names of the methods of ms on either side of c: per
// model (in the registry's order of models: LR, then SVM), the first
// side's then the second's, each in the order of ms.
func (c comparison) pick(ms []cimethods.Method) []string {
	var out []string
	for _, model := range registryModels() {
		for _, s := range c.sides {
			for _, m := range ms {
				if a := m.Attributes(); a.Model == model && a.Privacy == string(s.privacy) && a.Perturbation == string(s.perturbation) {
					out = append(out, m.Name())
				}
			}
		}
	}
	return out
}

// registryModels returns the models of the registered methods in order of
// first registration.
func registryModels() []dpci.Model {
	var models []dpci.Model
	for _, m := range cimethods.All() {
		if model := m.Attributes().Model; !slices.Contains(models, model) {
			models = append(models, model)
		}
	}
	return models
}

// PaperFigures returns Figures 1–4 across runs, laid out as the paper's
// 3×3 grids of sub-figures (a)–(i): drawn from the summary rows of several
// ci-coverage runs (concatenated), each panel a (dataset, model, swept
// quantity) of [PaperPanels], with its own swept quantity on the x axis.
// A panel whose sweep no run made is drawn empty and titled "not run";
// rows of other (dataset, model, sweep) cells are not drawn. The methods
// of each figure are the registered methods with the attributes it
// compares; methods a run did not request are simply absent.
func PaperFigures() []plots.FigureSpec {
	var figs []plots.FigureSpec
	all := cimethods.All()
	for _, f := range comparisons {
		layout := PaperPanels[f.name]
		keys := make([]string, len(layout))
		for i, p := range layout {
			keys[i] = p.key(i)
		}
		cap := lengthCaption(f)
		cap.Note = strings.TrimSpace("Interval length: of the first coordinate for the d sweep, else the mean over the coordinates. " +
			"Sub-figures as the paper's captions and text place them; where they do not say which learner or dataset a panel shows, " +
			"as PaperPanels documents. " + cap.Note)
		figs = append(figs, plots.FigureSpec{
			Name:    f.name,
			Title:   fmt.Sprintf("Wang, Kifer & Lee 2019, %s: %s — CI vs VI length", f.paper, f.title),
			Caption: cap,
			Metrics: []string{"ci_length", "vi_length"}, MetricLabels: lengthLabels, Methods: f.pick(all), Styles: figureStyles(all),
			YLabel: "interval length", XLabels: sweepLabels,
			Jitter: 0.1, ErrorBars: "sd", Panels: keys, PanelBy: func(r results.SummaryRow) []string { return paperPanelOf(layout, r) },
			Columns: 3, Width: 4, Height: 3.2,
		})
	}
	return figs
}

// sweepLabels are the x labels of the swept quantities.
var sweepLabels = map[string]string{
	"n": "n (records)", "d": "d (features, without the constant)",
	"eps1": "ε1 (zCDP: ρ1 = ε1²/2)", "eps2": "ε2 (zCDP: ρ2 = ε2²/2)", "eps3": "ε3 (zCDP: ρ3 = ε3²/2)",
}

// PaperPanel is one sub-figure of Wang, Kifer & Lee's Figures 1–4: the
// dataset (registry name), the model and the swept quantity it plots.
type PaperPanel struct {
	Dataset string
	Model   dpci.Model
	Sweep   string // "n", "d", "eps1", "eps2" or "eps3"
}

// paperNames are the datasets' names in the paper's sub-captions.
var paperNames = map[string]string{"kddcup99": "KDDCUP99", "adult": "Adult", "bank": "Banking", "ipums-us": "US", "ipums-br": "BR"}

// key is the panel's key and title, e.g. "(f) BR, LR (eps1 sweep)".
func (p PaperPanel) key(i int) string {
	return fmt.Sprintf("(%c) %s, %s (%s sweep)", 'a'+i, cmp.Or(paperNames[p.Dataset], p.Dataset), strings.ToUpper(string(p.Model)), p.Sweep)
}

// PaperPanels are the sub-figures (a)–(i) of Figures 1–4, by figure name.
// Figure 1's are the paper's sub-captions. Figures 2–4 have none in the
// text; their captions fix (a)–(d) as the n and d sweeps ("n = 450,000
// in Figures 2a and 2b": KDDCUP99 n sweeps, LR then SVM; then Adult's d
// sweeps) and give the dataset and fixed budgets of (e)–(i), so the swept
// quantity: Figure 2 (e)–(f) Adult and US ε1, (g) ε2 and (h)–(i) ε3 on
// "BR, Banking"; Figure 3 (e)–(f) Adult and US ε1, (g)–(h) ε2 on BR and
// Banking, (i) ε3; Figure 4 (e)–(f) Banking ε1, (g) Adult ε2, (h)–(i)
// Adult and US ε3. Inferred, not stated: the learner of a single panel of
// a dataset's sweep (LR is drawn), 4e–4f as LR then SVM, which of BR and
// Banking 2h, 2i, 3g, 3h and 3i show (BR first, as listed; 3i as 2i,
// Banking).
var PaperPanels = map[string][]PaperPanel{
	"figure1-dp-vs-zcdp-obj": {
		{"kddcup99", dpci.LR, "n"}, {"adult", dpci.LR, "d"}, {"adult", dpci.SVM, "d"},
		{"bank", dpci.LR, "eps1"}, {"bank", dpci.SVM, "eps1"}, {"ipums-br", dpci.LR, "eps1"},
		{"ipums-us", dpci.LR, "eps2"}, {"ipums-us", dpci.SVM, "eps2"}, {"ipums-br", dpci.SVM, "eps3"},
	},
	"figure2-dp-vs-zcdp-output": {
		{"kddcup99", dpci.LR, "n"}, {"kddcup99", dpci.SVM, "n"}, {"adult", dpci.LR, "d"},
		{"adult", dpci.SVM, "d"}, {"adult", dpci.LR, "eps1"}, {"ipums-us", dpci.LR, "eps1"},
		{"ipums-br", dpci.LR, "eps2"}, {"ipums-br", dpci.LR, "eps3"}, {"bank", dpci.LR, "eps3"},
	},
	"figure3-obj-vs-output-dp": {
		{"kddcup99", dpci.LR, "n"}, {"kddcup99", dpci.SVM, "n"}, {"adult", dpci.LR, "d"},
		{"adult", dpci.SVM, "d"}, {"adult", dpci.LR, "eps1"}, {"ipums-us", dpci.LR, "eps1"},
		{"ipums-br", dpci.LR, "eps2"}, {"bank", dpci.LR, "eps2"}, {"bank", dpci.LR, "eps3"},
	},
	"figure4-obj-vs-output-zcdp": {
		{"kddcup99", dpci.LR, "n"}, {"kddcup99", dpci.SVM, "n"}, {"adult", dpci.LR, "d"},
		{"adult", dpci.SVM, "d"}, {"bank", dpci.LR, "eps1"}, {"bank", dpci.SVM, "eps1"},
		{"adult", dpci.LR, "eps2"}, {"adult", dpci.LR, "eps3"}, {"ipums-us", dpci.LR, "eps3"},
	},
}

// paperPanelOf returns the key of the panel of layout a summary row falls
// in (none when its dataset, model and sweep are not one of them).
func paperPanelOf(layout []PaperPanel, r results.SummaryRow) []string {
	name, _, _ := strings.Cut(r.Method, ":")
	m, _, ok := cimethods.Rank(name)
	if !ok {
		return nil
	}
	for i, p := range layout {
		if p.Dataset == r.Dataset && p.Model == m.Attributes().Model && p.Sweep == r.XName {
			return []string{p.key(i)}
		}
	}
	return nil
}

// modelPanel puts a summary row in the panel of its dataset and its
// method's model (the model label of the method's Attributes; the method
// is the part of r.Method before the ": metric" that plots appends for a
// several-metrics figure). A method not registered gets a panel of its
// own name.
func modelPanel(r results.SummaryRow) string {
	name, _, _ := strings.Cut(r.Method, ":")
	m, _, ok := cimethods.Rank(name)
	if !ok {
		return r.Dataset + ", " + name
	}
	_, _, model := m.Attributes().Labels()
	return r.Dataset + ", " + model
}

// modelPanel is modelPanel knowing the experiment's own methods too (its
// external methods are in no registry).
func (e *Experiment) modelPanel(r results.SummaryRow) string {
	name, _, _ := strings.Cut(r.Method, ":")
	for _, m := range e.methods {
		if m.Name() == name {
			_, _, model := m.Attributes().Labels()
			return r.Dataset + ", " + model
		}
	}
	return modelPanel(r)
}

// Datasets implements runner.Experiment.
func (e *Experiment) Datasets() []results.DatasetInfo { return specdata.Infos(e.spec.Spec, e.data) }

// Warnings implements runner.Experiment.
func (e *Experiment) Warnings() []string {
	w := specdata.Warnings(e.data)
	if f := e.spec.ConfidenceIntervals.SigmaFloor; f != nil && *f != 2 {
		effect := "narrower"
		if *f > 2 {
			effect = "wider"
		}
		w = append(w, fmt.Sprintf("calibration variant sigma_floor = %v: the private gradient covariance's eigenvalues are floored at %v·c, not at the 2c of the paper's text (Algorithm 2 line 12 as Algorithms 3 and 5 apply it); "+
			"the privacy guarantee is the same (the floor is post-processing), the intervals %s where the covariance has eigenvalues below the floor (docs/analysis.md)", *f, *f, effect))
	}
	return w
}

// Ledger implements runner.Experiment: per method and x, the cost of one
// released interval as the method states it ([cimethods.Method.Cost];
// for the built-ins Theorem 2 or Theorem 4 of Wang, Kifer & Lee 2019),
// each charge with what it covers, and their sequential composition
// ([privacy.Compose]), each with its notion (results.NewCharge): a zCDP
// charge or total is recorded as its ρ (rho; epsilon "nan"), not converted
// ([privacy.Guarantee.ToApprox] converts it to (ε, δ) at a δ of the
// reader's choice). A method that is not one of the paper's is named in
// its charges' DeclaredBy ([cimethods.DeclaredBy]).
func (e *Experiment) Ledger([]results.Row) []results.LedgerEntry {
	var out []results.LedgerEntry
	for _, pt := range e.points {
		for i, m := range e.methods {
			c, total := pt.costs[i], pt.totals[i]
			le := results.LedgerEntry{Method: m.Name(), Setting: fmt.Sprintf("dataset=%s %s=%s", e.data[pt.ds].Name, e.spec.ConfidenceIntervals.Sweep, results.FormatFloat(pt.x))}
			declared := cimethods.DeclaredBy(m)
			for _, ch := range c.Charges {
				lc := results.NewCharge(ch.Part, ch.Guarantee.Covers, "D", ch.Guarantee)
				lc.DeclaredBy = declared
				le.Components = append(le.Components, lc)
			}
			le.Total = results.NewTotal(total)
			le.Rule = c.Rule
			out = append(out, le)
		}
	}
	return out
}

// RowWarnings implements runner.RowWarner: the methods that released no
// interval where they were asked for one. For each method, in the spec's
// order: when none of its coverage replicates released an interval (every
// reply a status such as "not converged" or "epsilon-prime<=0"), that it
// never did, with the statuses counted; otherwise the (dataset, x) cells
// where it released none, if any; and the cells whose variability
// interval was not computed (a fit that returned no θ̃). Their summary
// rows are NaN with n = 0 and the tables say "no interval in N of N
// replicates".
func (e *Experiment) RowWarnings(rows []results.Row) []string {
	type cell struct {
		name     string // "dataset=…, n=…"
		ci, none int    // coverage replicates, and those without an interval
		statuses map[string]int
		viFailed string // the VI's status when it was not computed
	}
	type tally struct {
		cells []*cell
		byKey map[string]*cell
	}
	byMethod := map[string]*tally{}
	sweep := e.spec.ConfidenceIntervals.Sweep
	for _, r := range rows {
		t := byMethod[r["method"]]
		if t == nil {
			t = &tally{byKey: map[string]*cell{}}
			byMethod[r["method"]] = t
		}
		k := r["dataset"] + "|" + r["x"]
		c := t.byKey[k]
		if c == nil {
			c = &cell{name: fmt.Sprintf("dataset %s, %s = %s", r["dataset"], sweep, r["x"]), statuses: map[string]int{}}
			t.byKey[k] = c
			t.cells = append(t.cells, c)
		}
		switch r["row_type"] {
		case "ci":
			c.ci++
			if math.IsNaN(r.Float("coverage")) {
				c.none++
				c.statuses[r["status"]]++
			}
		case "vi":
			if math.IsNaN(r.Float("vi_length")) {
				c.viFailed = r["status"]
			}
		}
	}
	counted := func(statuses map[string]int) string {
		keys := make([]string, 0, len(statuses))
		for s := range statuses {
			keys = append(keys, s)
		}
		slices.Sort(keys)
		var parts []string
		for _, s := range keys {
			parts = append(parts, fmt.Sprintf("%q ×%d", s, statuses[s]))
		}
		return strings.Join(parts, ", ")
	}
	var w []string
	for _, m := range e.methods {
		t := byMethod[m.Name()]
		if t == nil {
			continue
		}
		all, inEmpty := map[string]int{}, map[string]int{}
		var ci, none int
		var empty, noVI []string
		for _, c := range t.cells {
			ci, none = ci+c.ci, none+c.none
			for s, n := range c.statuses {
				all[s] += n
			}
			if c.ci > 0 && c.none == c.ci {
				empty = append(empty, c.name)
				for s, n := range c.statuses {
					inEmpty[s] += n
				}
			}
			if c.viFailed != "" {
				noVI = append(noVI, fmt.Sprintf("%s (%q)", c.name, c.viFailed))
			}
		}
		switch {
		case ci > 0 && none == ci:
			w = append(w, fmt.Sprintf("method %s never released an interval: no interval in %d of %d replicates (%s); its coverage and CI length are NaN (n = 0) in summary.csv", m.Name(), none, ci, counted(all)))
		case len(empty) > 0:
			w = append(w, fmt.Sprintf("method %s released no interval at %s: no interval in any replicate there (%s); their coverage and CI length are NaN (n = 0) in summary.csv", m.Name(), strings.Join(empty, "; "), counted(inEmpty)))
		}
		if len(noVI) > 0 {
			w = append(w, fmt.Sprintf("method %s: no variability interval at %s: a private fit returned no θ̃; vi_length is NaN there", m.Name(), strings.Join(noVI, "; ")))
		}
	}
	return w
}

// PairKey implements runner.Pairer: the columns that identify a replicate
// of the rows, the bootstrap replicate and the row type (interval or
// variability fit), at one dataset and x; the paper's claims comparing two
// methods are decided on differences paired by them.
func (e *Experiment) PairKey() []string { return Kind.PairKey() }

// SharedHash implements runner.UnitReader: the spec without
// confidence_intervals.methods and the [[methods]] tables — the methods
// a unit computes are its own inputs (UnitInputs) — so that a method
// added, removed or edited (an external one's script, files or
// parameter values) computes only the units of its group and resumes the
// others. Everything else (the sweep and its values, the replicates and
// blocks, the budget, the data) stays in it: a change there starts over.
// The draws do not depend on the grouping (see unitGroups), so a unit
// recomputed for its methods gives the rows a fresh run would.
func (e *Experiment) SharedHash() string {
	sec := *e.spec.Section
	sec.ConfidenceIntervals.Methods = nil
	return e.spec.Spec.SharedHash(&sec)
}

// UnitInputs implements runner.UnitReader: the identity of every method
// the unit computes (experiments.Spec.MethodIdentity, with an external
// method's parameter values, which it leaves out), in the unit's order.
func (e *Experiment) UnitInputs(ru runner.Unit) map[string]string {
	u, ok := ru.(unit)
	if !ok {
		return nil
	}
	var ids []string
	for _, i := range u.ms {
		m := e.methods[i]
		ids = append(ids, experiments.WithSettings(e.spec.Spec.MethodIdentity(m.Name()), external.SettingOf(m)))
	}
	return map[string]string{"methods": strings.Join(ids, "; ")}
}
