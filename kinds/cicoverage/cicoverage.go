// Package cicoverage is the "ci-coverage" experiment kind: the bootstrap
// coverage and length of the private confidence intervals of Wang, Kifer &
// Lee, "Differentially Private Confidence Intervals for Empirical Risk
// Minimization" (Journal of Privacy and Confidentiality 9(1), 2019;
// arXiv:1804.03794), Section 7, Tables 2–6 and Figures 1–4.
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
//     replacement, as weights) a private CI per replicate from
//     [dpci.ObjPertCI] or [dpci.OutPertCI]; the fraction of (replicate,
//     coordinate) pairs whose interval holds θ₀[j]. The coordinates are all
//     d' = d+1 of θ₀, the constant's included, as in the paper's formula
//     ("d' is the dimensionality of θ₀"); coverage_features in rows.csv
//     leaves the constant out.
//   - ci_length and vi_length: when d is swept, the length of the first
//     coordinate's interval; otherwise the mean length over all coordinates
//     (Section 7.3). The variability interval is, per coordinate, the α/2 and
//     1−α/2 quantiles of m private fits (budget φ₁ only) on bootstrap
//     replicates.
//
// # Shared work
//
// Within a replicate one non-private fit θ̂ serves the DP and zCDP output
// perturbations (their noise differs), and one objective-perturbation fit
// serves the DP and zCDP objective-perturbation methods: with ρ₁ = ε₁²/2 both
// run Algorithm 1 at the same ε₁ (Theorem 2), so the mechanism is identical.
// The Hessian and covariance releases (Algorithm 2) and the Monte Carlo
// intervals are drawn per privacy notion. The variability intervals share
// the same way, and across the swept values too where those do not change
// them: a VI spends only φ₁ on the (sub)dataset, so an ε₂ or ε₃ sweep
// (Tables 5 and 6) has one VI per model, reported at every x. Every step
// draws from its own stream keyed by (seed, dataset, x, model, replicate,
// step) — for a VI fit (seed, dataset, n, d, ε₁, model, fit, step) — so
// results do not depend on the worker count, the block size or which other
// methods are requested.
package cicoverage

import (
	"context"
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
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
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
	spec    *Spec
	data    []*datasets.Dataset
	points  []*point
	methods []method
	models  []dpci.Model
	units   []string
	byKey   map[string]unit
}

// method is one parsed method name "<privacy>-<perturbation>-<model>".
type method struct {
	name    string
	privacy dpci.Privacy
	obj     bool // objective perturbation; false = output perturbation
	model   dpci.Model
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
	// viKey names what a variability interval depends on: the records, the
	// features and ε₁ (not ε₂, ε₃, which it does not spend). Points with the
	// same key share one VI unit and its random streams.
	viKey string
}

type unit struct {
	key    string // the unit key (runner.Unit)
	pt     int
	model  dpci.Model
	vi     bool
	group  []int // VI units: the points served, pt first
	lo, hi int   // coverage replicates [lo, hi), 0-based
}

// Key implements runner.Unit.
func (u unit) Key() string { return u.key }

// Options configures New.
type Options struct {
	// DataDir is the data directory; empty means the default search
	// (datasets.ResolveDataDir with no flag).
	DataDir string
	// Named reports that the user named DataDir (datasets.DataDir.Named):
	// a file absent from it is then an error unless the spec's
	// data.synthetic is "allow" or "always".
	Named bool
}

// New loads the datasets of spec, builds each swept (sub)dataset, fits θ₀
// and lays out the units.
func New(es *experiments.Spec, o Options) (*Experiment, error) {
	spec, err := ciSpec(es)
	if err != nil {
		return nil, err
	}
	ci := spec.ConfidenceIntervals
	e := &Experiment{spec: spec, byKey: map[string]unit{}}
	for _, name := range ci.Methods {
		m, err := parseMethod(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec.ID, err)
		}
		e.methods = append(e.methods, m)
		if !slices.Contains(e.models, m.model) {
			e.models = append(e.models, m.model)
		}
	}
	for di, name := range spec.Data.Datasets {
		ds, err := specdata.Load(es, name, o.DataDir, o.Named)
		if err != nil {
			return nil, err
		}
		if ds.Task != datasets.TaskClassification {
			return nil, fmt.Errorf("%s: dataset %s is a %s dataset; ci-coverage needs ±1 labels", spec.ID, name, ds.Task)
		}
		e.data = append(e.data, ds)
		perm := runner.Stream(es, "ci-coverage", "permutation", name).Perm(len(ds.Y))
		for _, x := range ci.Values {
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
				return nil, fmt.Errorf("%s: dataset %s, %s = %v: %w", spec.ID, name, ci.Sweep, x, err)
			}
			pt.data, pt.n, pt.d = data, n, d
			pt.viKey = fmt.Sprintf("n=%d,d=%d,eps1=%s", n, d, results.FormatFloat(pt.eps[0]))
			for _, model := range e.models {
				res, err := dpci.FitNonPrivate(data.full, e.params(model, dpci.DP, pt), erm.FitOptions{})
				if err != nil {
					return nil, fmt.Errorf("%s: dataset %s, %s = %v: θ₀: %w", spec.ID, name, ci.Sweep, x, err)
				}
				if res.Status != erm.StatusConverged {
					return nil, fmt.Errorf("%s: dataset %s, %s = %v: θ₀ (%s): %s", spec.ID, name, ci.Sweep, x, model, res.Status)
				}
				pt.theta0[model] = res.W
			}
			pi := len(e.points)
			e.points = append(e.points, pt)
			xs := results.FormatFloat(x)
			for _, model := range e.models {
				for lo := 0; lo < ci.Replicates; lo += ci.BlockSize {
					hi := min(lo+ci.BlockSize, ci.Replicates)
					key := fmt.Sprintf("%s/%s=%s/%s/ci/rep=%d-%d", name, ci.Sweep, xs, model, lo+1, hi)
					e.units = append(e.units, key)
					e.byKey[key] = unit{pt: pi, model: model, lo: lo, hi: hi}
				}
				// One VI unit per distinct viKey: an ε₂ or ε₃ sweep has one.
				key := fmt.Sprintf("%s/vi/%s/%s", name, pt.viKey, model)
				if u, ok := e.byKey[key]; ok {
					u.group = append(u.group, pi)
					e.byKey[key] = u
					continue
				}
				e.units = append(e.units, key)
				e.byKey[key] = unit{pt: pi, model: model, vi: true, group: []int{pi}}
			}
		}
	}
	return e, nil
}

func parseMethod(name string) (method, error) {
	parts := strings.Split(name, "-")
	if len(parts) != 3 {
		return method{}, fmt.Errorf("cicoverage: bad method %q (want <dp|zcdp>-<obj|output>-<lr|svm>)", name)
	}
	m := method{name: name, privacy: dpci.Privacy(parts[0]), obj: parts[1] == "obj", model: dpci.Model(parts[2])}
	if (m.privacy != dpci.DP && m.privacy != dpci.ZCDP) || (parts[1] != "obj" && parts[1] != "output") || (m.model != dpci.LR && m.model != dpci.SVM) {
		return method{}, fmt.Errorf("cicoverage: bad method %q (want <dp|zcdp>-<obj|output>-<lr|svm>)", name)
	}
	return m, nil
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
}

// distinct builds the sample of the n records (x, y).
func distinct(x *mat.Dense, y []float64) *sample {
	n, cols := x.Dims()
	index := make(map[string]int32, n)
	rec := make([]int32, n)
	var first []int
	var mult []float64
	key := make([]byte, 8*(cols+1))
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			binary.LittleEndian.PutUint64(key[8*j:], math.Float64bits(v))
		}
		binary.LittleEndian.PutUint64(key[8*cols:], math.Float64bits(y[i]))
		u, ok := index[string(key)]
		if !ok {
			u = int32(len(first))
			index[string(key)] = u
			first = append(first, i)
			mult = append(mult, 0)
		}
		mult[u]++
		rec[i] = u
	}
	base := erm.NewRows(x, y, first)
	return &sample{base: base, full: base.WithWeights(mult), rec: rec}
}

// subset keeps the records perm[:n] and the first d features of ds (0 keeps
// all), appends the constant feature and scales the rows again.
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
	scaleRows(x, rowNorm)
	return distinct(x, y), n, d, nil
}

// scaleRows applies the l2 row scalings of datasets.Preprocessing.RowNorm.
// With the constant 1 appended every row has ‖x‖₂ ≥ 1, so l2-clip and
// l2-unit coincide here.
func scaleRows(x *mat.Dense, rowNorm string) {
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

// params returns the dpci parameters of (model, privacy) at pt. Under zCDP
// the budgets are ρᵢ = εᵢ²/2, except φ₁ of objective perturbation, which is
// always the ε of Algorithm 1 (its ε₁-DP run is ε₁²/2-zCDP, Theorem 2);
// callers pick that φ₁ themselves.
func (e *Experiment) params(model dpci.Model, privacy dpci.Privacy, pt *point) dpci.Params {
	ci := e.spec.ConfidenceIntervals
	p := dpci.Params{Model: model, H: ci.H, C: ci.C, Privacy: privacy, Alpha: ci.Alpha, M: ci.MCSamples,
		Phi1: pt.eps[0], Phi2: pt.eps[1], Phi3: pt.eps[2]}
	if privacy == dpci.ZCDP {
		p.Phi1, p.Phi2, p.Phi3 = rho(pt.eps[0]), rho(pt.eps[1]), rho(pt.eps[2])
	}
	return p
}

func rho(eps float64) float64 { return eps * eps / 2 }

// Spec implements runner.Experiment.
func (e *Experiment) Spec() *experiments.Spec { return e.spec.Spec }

// Units implements runner.Experiment.
func (e *Experiment) Units() []runner.Unit {
	us := make([]runner.Unit, len(e.units))
	for i, k := range e.units {
		u := e.byKey[k]
		u.key = k
		us[i] = u
	}
	return us
}

// Columns implements runner.Experiment.
func (e *Experiment) Columns() []string { return Columns }

// viStream returns the random stream of one step of one variability fit:
// keyed by pt.viKey, not by the swept value, so that points which share a
// VI unit share its draws.
func (e *Experiment) viStream(env runner.Env, pt *point, model dpci.Model, i int, step string) *rand.Rand {
	return env.Stream(e.data[pt.ds].Name, "vi", pt.viKey, string(model), fmt.Sprint(i), step)
}

// stream returns the random stream of one step of one replicate.
func (e *Experiment) stream(env runner.Env, pt *point, model dpci.Model, kind string, rep int, step string) *rand.Rand {
	return env.Stream(e.data[pt.ds].Name, e.spec.ConfidenceIntervals.Sweep,
		results.FormatFloat(pt.x), string(model), kind, fmt.Sprint(rep), step)
}

// resampler draws bootstrap replicates of one sample into reused storage.
type resampler struct {
	s      *sample
	counts []int32
	dst    erm.Rows
}

func newResampler(s *sample) *resampler {
	return &resampler{s: s, counts: make([]int32, s.base.N())}
}

// draw returns the replicate of n records drawn with replacement (n =
// len(s.rec)) as the distinct rows drawn at least once, weighted by how
// often they were drawn ([erm.Rows.Resample]). The result is valid until
// the next draw.
func (r *resampler) draw(rng *rand.Rand) *erm.Rows {
	rec := r.s.rec
	n := len(rec)
	clear(r.counts)
	for i := 0; i < n; i++ {
		r.counts[rec[rng.IntN(n)]]++
	}
	return r.s.base.Resample(&r.dst, r.counts)
}

// privMatrices releases the Hessian and gradient covariance at theta
// (Algorithm 2 twice, budgets p.Phi2 and p.Phi3), as dpci's Algorithms 3
// and 5 do.
func privMatrices(rng *rand.Rand, rows *erm.Rows, p dpci.Params, theta []float64) (h, sigma *mat.SymDense, err error) {
	n := rows.SumWeights()
	hm, err := dpci.Hessian(rows, p, theta)
	if err != nil {
		return nil, nil, err
	}
	sh, err := dpci.SensHessian(p, n)
	if err != nil {
		return nil, nil, err
	}
	if h, err = dpci.PrivSPDMat(nil, rng, hm, sh, p.Phi2, p.C, p.Privacy); err != nil {
		return nil, nil, err
	}
	sm, err := dpci.GradCov(rows, p, theta)
	if err != nil {
		return nil, nil, err
	}
	ss, err := dpci.SensGradCov(p, n, theta)
	if err != nil {
		return nil, nil, err
	}
	if sigma, err = dpci.PrivSPDMat(nil, rng, sm, ss, p.Phi3, p.C, p.Privacy); err != nil {
		return nil, nil, err
	}
	return h, sigma, nil
}

// RunUnit implements runner.Experiment.
func (e *Experiment) RunUnit(ctx context.Context, ru runner.Unit, env runner.Env) ([]results.Row, error) {
	u, ok := ru.(unit)
	if !ok {
		return nil, fmt.Errorf("cicoverage: unit %q is not of this experiment", ru.Key())
	}
	key := u.key
	if u.vi {
		return e.runVI(ctx, env, key, u)
	}
	return e.runCI(ctx, env, key, u)
}

// sel returns the requested methods of model.
func (e *Experiment) sel(model dpci.Model) (obj, out []method) {
	for _, m := range e.methods {
		if m.model != model {
			continue
		}
		if m.obj {
			obj = append(obj, m)
		} else {
			out = append(out, m)
		}
	}
	return obj, out
}

// runCI computes the coverage replicates [u.lo, u.hi) of one model.
func (e *Experiment) runCI(ctx context.Context, env runner.Env, key string, u unit) ([]results.Row, error) {
	pt := e.points[u.pt]
	theta0 := pt.theta0[u.model]
	objMs, outMs := e.sel(u.model)
	fit := erm.FitOptions{Init: theta0, Work: new(erm.Workspace), Context: ctx}
	rs := newResampler(pt.data)
	var out []results.Row
	for rep := u.lo; rep < u.hi; rep++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		byMethod, err := e.replicate(ctx, env, key, pt, u.model, rep, objMs, outMs, fit, rs)
		if err != nil {
			return nil, err
		}
		for _, m := range e.methods { // rows in the spec's method order
			if r, ok := byMethod[m.name]; ok {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// replicate computes the intervals of one bootstrap replicate for the
// requested methods of one model, keyed by method name.
func (e *Experiment) replicate(ctx context.Context, env runner.Env, key string, pt *point, model dpci.Model, rep int, objMs, outMs []method, fit erm.FitOptions, rs *resampler) (map[string]results.Row, error) {
	theta0 := pt.theta0[model]
	out := map[string]results.Row{}
	rows := rs.draw(e.stream(env, pt, model, "ci", rep, "resample"))
	n := rows.SumWeights()
	if len(outMs) > 0 {
		p := e.params(model, dpci.DP, pt)
		hat, err := dpci.FitNonPrivate(rows, p, fit)
		if err != nil {
			return nil, err
		}
		for _, m := range outMs {
			p := e.params(model, m.privacy, pt)
			rng := e.stream(env, pt, model, "ci", rep, string(m.privacy)+"-output")
			theta, err := dpci.OutPertNoise(nil, rng, hat.W, n, p.C, p.Phi1, p.Privacy)
			if err != nil {
				return nil, err
			}
			h, sigma, err := privMatrices(rng, rows, p, theta)
			if err != nil {
				return nil, err
			}
			iv, err := dpci.OutPertCI(ctx, rng, theta, h, sigma, n, p.C, p.Phi1, p.Privacy, p.Alpha, p.M)
			if err != nil {
				return nil, err
			}
			out[m.name] = e.ciRow(key, pt, m, rep, iv, theta0, math.NaN(), hat.Status)
		}
	}
	if len(objMs) > 0 {
		// One Algorithm 1 run at ε₁ serves DP and zCDP (ρ₁ = ε₁²/2).
		p := e.params(model, dpci.DP, pt)
		p.Fit = fit
		res, ep, err := dpci.ObjPertFit(e.stream(env, pt, model, "ci", rep, "obj-fit"), rows, p)
		if errors.Is(err, dpci.ErrEpsilonPrime) {
			for _, m := range objMs {
				out[m.name] = e.failRow(key, pt, m, rep, ep, "epsilon-prime<=0")
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		for _, m := range objMs {
			p := e.params(model, m.privacy, pt)
			rng := e.stream(env, pt, model, "ci", rep, string(m.privacy)+"-obj-ci")
			h, sigma, err := privMatrices(rng, rows, p, res.W)
			if err != nil {
				return nil, err
			}
			iv, err := dpci.ObjPertCI(ctx, rng, res.W, h, sigma, n, ep, p.Alpha, p.M)
			if err != nil {
				return nil, err
			}
			out[m.name] = e.ciRow(key, pt, m, rep, iv, theta0, ep, res.Status)
		}
	}
	return out, nil
}

// runVI computes the variability intervals of one model: VIFits private
// fits (budget φ₁ only) on bootstrap replicates.
func (e *Experiment) runVI(ctx context.Context, env runner.Env, key string, u unit) ([]results.Row, error) {
	ci := e.spec.ConfidenceIntervals
	pt := e.points[u.pt]
	theta0 := pt.theta0[u.model]
	objMs, outMs := e.sel(u.model)
	fit := erm.FitOptions{Init: theta0, Work: new(erm.Workspace), Context: ctx}
	rs := newResampler(pt.data)
	dim := len(theta0)
	// samples[variant][j][i]: variant "obj" (shared) or "<privacy>-output".
	samples := map[string][][]float64{}
	alloc := func(v string) {
		s := make([][]float64, dim)
		for j := range s {
			s[j] = make([]float64, 0, ci.VIFits)
		}
		samples[v] = s
	}
	if len(objMs) > 0 {
		alloc("obj")
	}
	for _, m := range outMs {
		alloc(string(m.privacy) + "-output")
	}
	var ep float64
	status := "ok"
	nonConv := 0
	for i := 0; i < ci.VIFits; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rows := rs.draw(e.viStream(env, pt, u.model, i, "resample"))
		n := rows.SumWeights()
		if len(outMs) > 0 {
			hat, err := dpci.FitNonPrivate(rows, e.params(u.model, dpci.DP, pt), fit)
			if err != nil {
				return nil, err
			}
			if hat.Status != erm.StatusConverged {
				nonConv++
			}
			for _, m := range outMs {
				p := e.params(u.model, m.privacy, pt)
				theta, err := dpci.OutPertNoise(nil, e.viStream(env, pt, u.model, i, string(m.privacy)+"-output"), hat.W, n, p.C, p.Phi1, p.Privacy)
				if err != nil {
					return nil, err
				}
				add(samples[string(m.privacy)+"-output"], theta)
			}
		}
		if len(objMs) > 0 {
			p := e.params(u.model, dpci.DP, pt)
			p.Fit = fit
			res, e1, err := dpci.ObjPertFit(e.viStream(env, pt, u.model, i, "obj-fit"), rows, p)
			ep = e1
			if errors.Is(err, dpci.ErrEpsilonPrime) {
				delete(samples, "obj") // its rows report epsilon-prime<=0 below
				objMs = nil
				continue
			}
			if err != nil {
				return nil, err
			}
			if res.Status != erm.StatusConverged {
				nonConv++
			}
			add(samples["obj"], res.W)
		}
	}
	if nonConv > 0 {
		status = fmt.Sprintf("%d fits not converged", nonConv)
	}
	// The lengths per variant, then a row per (point, method).
	lens := map[string][]float64{}
	for v, sv := range samples {
		l := make([]float64, dim)
		for j, x := range sv {
			if err := ctx.Err(); err != nil {
				return nil, err // a sort of VIFits values per coordinate
			}
			slices.Sort(x)
			l[j] = stat.Quantile(1-ci.Alpha/2, stat.Empirical, x, nil) - stat.Quantile(ci.Alpha/2, stat.Empirical, x, nil)
		}
		lens[v] = l
	}
	var out []results.Row
	for _, pi := range u.group {
		for _, m := range e.methods {
			if m.model != u.model {
				continue
			}
			v := string(m.privacy) + "-output"
			if m.obj {
				v = "obj"
			}
			r := e.baseRow(key, e.points[pi], m, "vi", 0)
			r.SetFloat("epsilon_prime", math.NaN())
			for _, c := range []string{"coverage", "coverage_features", "ci_length", "ci_length_mean", "ci_length_first"} {
				r.SetFloat(c, math.NaN())
			}
			l, ok := lens[v]
			if !ok {
				for _, c := range []string{"vi_length", "vi_length_mean", "vi_length_first"} {
					r.SetFloat(c, math.NaN())
				}
				r.Set("status", "epsilon-prime<=0")
				out = append(out, r)
				continue
			}
			mean, first := stat.Mean(l, nil), l[0]
			r.SetFloat("vi_length", e.reported(mean, first))
			r.SetFloat("vi_length_mean", mean)
			r.SetFloat("vi_length_first", first)
			if m.obj {
				r.SetFloat("epsilon_prime", ep)
			}
			r.Set("status", status)
			out = append(out, r)
		}
	}
	return out, nil
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

func (e *Experiment) baseRow(key string, pt *point, m method, rowType string, rep int) results.Row {
	ci := e.spec.ConfidenceIntervals
	ds := e.data[pt.ds]
	r := results.Row{}
	r.Set("experiment", e.spec.ID)
	r.Set("dataset", ds.Name)
	r.Set("data_source", ds.Source.Kind)
	r.Set("method", m.name)
	r.Set("privacy", string(m.privacy))
	if m.obj {
		r.Set("perturbation", "obj")
	} else {
		r.Set("perturbation", "output")
	}
	r.Set("model", string(m.model))
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
		r.SetFloat("rho"+name, rho(pt.eps[i]))
	}
	r.SetInt("mc_samples", ci.MCSamples)
	r.SetInt("vi_fits", ci.VIFits)
	return r
}

// ciRow records one replicate's interval: coverage of θ₀ over all d+1
// coordinates (the paper's d') and over the d features.
func (e *Experiment) ciRow(key string, pt *point, m method, rep int, iv dpci.Interval, theta0 []float64, ep float64, fitStatus string) results.Row {
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
	status := "ok"
	if fitStatus != erm.StatusConverged {
		status = "fit " + fitStatus
	}
	r.Set("status", status)
	return r
}

func (e *Experiment) failRow(key string, pt *point, m method, rep int, ep float64, status string) results.Row {
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
	cov := plots.FigureSpec{Name: "coverage", Title: e.spec.Title + ": coverage (dashed: 1−α)", Metric: "coverage",
		XLabel: e.xLabel(), YLabel: "coverage", Methods: slices.Clone(ci.Methods), Jitter: 0.2, RefLine: &target}
	figs := []plots.FigureSpec{cov}
	what := "mean over coordinates"
	if ci.Sweep == "d" {
		what = "first coordinate"
	}
	for _, f := range comparisons {
		var ms []string
		for _, model := range []string{"lr", "svm"} {
			for _, name := range f.methods {
				if name += "-" + model; slices.Contains(ci.Methods, name) {
					ms = append(ms, name)
				}
			}
		}
		if len(ms) == 0 {
			continue
		}
		figs = append(figs, plots.FigureSpec{
			Name:    f.name,
			Title:   fmt.Sprintf("%s, %s: %s (%s; bars ±1 sd of the CI length)", f.paper, f.title, e.spec.Title, what),
			Metrics: []string{"ci_length", "vi_length"}, Methods: ms,
			XLabel: e.xLabel(), YLabel: "interval length", Jitter: 0.1,
			ErrorBars: "sd", PanelBy: modelPanel,
		})
	}
	return figs
}

// comparisons are the four comparisons of Section 7.3 (Figures 1–4): the
// two methods compared, without their model suffix.
var comparisons = []struct {
	name, paper, title string
	methods            [2]string
}{
	{"figure1-dp-vs-zcdp-obj", "Figure 1", "DP vs zCDP, objective perturbation", [2]string{"dp-obj", "zcdp-obj"}},
	{"figure2-dp-vs-zcdp-output", "Figure 2", "DP vs zCDP, output perturbation", [2]string{"dp-output", "zcdp-output"}},
	{"figure3-obj-vs-output-dp", "Figure 3", "objective vs output perturbation, DP", [2]string{"dp-obj", "dp-output"}},
	{"figure4-obj-vs-output-zcdp", "Figure 4", "objective vs output perturbation, zCDP", [2]string{"zcdp-obj", "zcdp-output"}},
}

// PaperFigures returns Figures 1–4 across runs, as the paper gathers
// panels of several tables' sweeps into one figure: drawn from the summary
// rows of several ci-coverage runs (concatenated), one panel per (dataset,
// model) in order of first appearance, each with its own swept quantity on
// the x axis, in a grid of four columns. Methods a run did not request are
// simply absent. The paper's figures show nine panels chosen from these.
func PaperFigures() []plots.FigureSpec {
	var figs []plots.FigureSpec
	for _, f := range comparisons {
		var ms []string
		for _, model := range []string{"lr", "svm"} {
			for _, m := range f.methods {
				ms = append(ms, m+"-"+model)
			}
		}
		figs = append(figs, plots.FigureSpec{
			Name: f.name,
			Title: fmt.Sprintf("Wang, Kifer & Lee 2019, %s: %s — CI vs VI length (bars ±1 sd of the CI length; "+
				"first coordinate for the d sweep, else mean over coordinates)", f.paper, f.title),
			Metrics: []string{"ci_length", "vi_length"}, Methods: ms, YLabel: "interval length",
			Jitter: 0.1, ErrorBars: "sd", PanelBy: sweepPanel, Columns: 4, Width: 4, Height: 3.2,
		})
	}
	return figs
}

// sweepPanel is modelPanel with the swept quantity, for figures across
// runs.
func sweepPanel(r results.SummaryRow) string {
	return modelPanel(r) + " (" + r.XName + " sweep)"
}

// modelPanel puts a summary row in the panel of its dataset and model: the
// last part of "<privacy>-<perturbation>-<model>", before the ": metric"
// that plots appends for a several-metrics figure.
func modelPanel(r results.SummaryRow) string {
	m, _, _ := strings.Cut(r.Method, ":")
	return r.Dataset + ", " + strings.ToUpper(m[strings.LastIndex(m, "-")+1:])
}

// Datasets implements runner.Experiment.
func (e *Experiment) Datasets() []results.DatasetInfo {
	var out []results.DatasetInfo
	for _, ds := range e.data {
		out = append(out, specdata.Info(e.spec.Spec, ds))
	}
	return out
}

// Warnings implements runner.Experiment.
func (e *Experiment) Warnings() []string {
	return specdata.Warnings(e.data)
}

// Ledger implements runner.Experiment: per method and x, the budgets of
// Theorem 2 (objective perturbation) or Theorem 4 (output perturbation)
// for one released interval. zCDP charges are ρ values; the total of a
// zCDP method is ρ (Proposition 2 converts it to (ε, δ)).
func (e *Experiment) Ledger([]results.Row) []results.LedgerEntry {
	var out []results.LedgerEntry
	F := func(v float64) results.Float { return results.Float(v) }
	for _, pt := range e.points {
		for _, m := range e.methods {
			p := e.params(m.model, m.privacy, pt)
			var g dpci.Guarantee
			phi1 := p.Phi1
			if m.obj {
				phi1 = pt.eps[0]
				p.Phi1 = phi1
				g = dpci.ObjPertGuarantee(p)
			} else {
				g = dpci.OutPertGuarantee(p)
			}
			unitName := "ε"
			total := g.Epsilon
			if m.privacy == dpci.ZCDP {
				unitName, total = "ρ", g.Rho
			}
			le := results.LedgerEntry{Method: m.name, Setting: fmt.Sprintf("dataset=%s %s=%s", e.data[pt.ds].Name, e.spec.ConfidenceIntervals.Sweep, results.FormatFloat(pt.x))}
			theta := "θ̃ (output perturbation, Algorithm 4)"
			if m.obj {
				theta = "θ̃ (objective perturbation, Algorithm 1 at ε₁; as zCDP it counts ε₁²/2)"
				if m.privacy == dpci.ZCDP {
					phi1 = phi1 * phi1 / 2 // Theorem 2: ε₁-DP objective perturbation is ε₁²/2-zCDP
				}
			}
			le.Components = []results.LedgerCharge{
				{Part: "training", Release: theta, Data: "D", Epsilon: F(phi1), Private: true},
				{Part: "hessian", Release: "Hessian (Algorithm 2)", Data: "D", Epsilon: F(p.Phi2), Private: true},
				{Part: "covariance", Release: "gradient covariance (Algorithm 2)", Data: "D", Epsilon: F(p.Phi3), Private: true},
			}
			le.Total = results.PrivacyGuarantee{Epsilon: F(total), Private: true}
			le.Rule = g.Source + "; values are " + unitName + " (" + string(m.privacy) + ")"
			out = append(out, le)
		}
	}
	return out
}
