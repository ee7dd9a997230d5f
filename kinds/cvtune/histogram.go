package cvtune

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/dprepro/dprepro/core/histogram"
	"github.com/dprepro/dprepro/core/tune"
	"github.com/dprepro/dprepro/datasets"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/plots"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
	"github.com/dprepro/dprepro/runner/specdata"
)

// HistColumns is the rows.csv schema of the histogram-tuning kind.
var HistColumns = []string{
	"experiment", "dataset", "data_source", "method", "alpha", "rep", "fold", "unit",
	"index", "bins", "bin_width", "ise", "ise_estimate", "val_score",
	"n_train", "n_val", "n_test", "fits", "eps_train", "eps_tuning", "delta", "eps_total", "private",
	"beta", "status",
}

// HistMetrics are the summarized metrics of the histogram-tuning kind.
var HistMetrics = []string{"ise", "ise_estimate", "bin_width", "index"}

// histWords are the ledger words of the histogram-tuning kind.
var histWords = ledgerWords{
	fit: "Algorithm 5 histogram", param: "bin width",
	utility: "the validation score scaled to sensitivity 1, -q(f,V)·m·h_min/2", score: "validation score q (Eq. 6)",
}

// Hist is the "histogram-tuning" experiment kind: the histogram case study
// of Chaudhuri & Vinterbo 2013, Appendix 6.3, run as its classifier study
// is (Section 5): repeated K-fold CV, in round f fold f the test set W,
// fold (f mod K)+1 the validation set V and the rest the training set T;
// each method of package tune chooses the number of bins of Algorithm 5
// ([histogram.Procedure]) and the released estimate is scored on W.
//
// A source is a synthetic density with a known f ([histogram.Densities];
// the exact ISE ∫(f̂ − f)² is reported) or a real numeric attribute mapped
// to [0, 1] by public bounds (only the test-fold estimate is available).
// ise_estimate = −q(f̂, W) = ISE − ∫f² up to sampling error on W, for both.
//
// Stability runs Algorithms 1–2 at α₁ = α₂ = α/2 with (β₁, β₂) of Theorem 6
// at the training α₁ and h_min; New refuses a spec whose training folds are
// smaller than Theorem 6 requires at the smallest α.
type Hist struct {
	spec    *HistSpec
	data    []*datasets.Dataset // real datasets, for provenance
	sources []*histSource
	units   []string
	byKey   map[string]histUnit
}

type histSource struct {
	name    string
	kind    string // datasets.KindReal or KindSynthetic
	x       []float64
	f       histogram.Density // nil for a real attribute
	folds   [][][]int         // repetition → fold → indices
	clipped int               // points clipped to the public bounds
	info    results.DatasetInfo
}

type histUnit struct {
	key       string // the unit key (runner.Unit)
	src       int
	alpha     float64
	method    string
	rep, fold int // 1-based
}

// Key implements runner.Unit.
func (u histUnit) Key() string { return u.key }

// NewHist loads the sources of spec, lays out folds and units, and checks
// Theorem 6's sample-size requirement.
func NewHist(es *experiments.Spec, o Options) (*Hist, error) {
	spec, err := histSpec(es)
	if err != nil {
		return nil, err
	}
	h := spec.Histogram
	e := &Hist{spec: spec, byKey: map[string]histUnit{}}
	for _, name := range h.Densities {
		f, ok := histogram.Densities[name]
		if !ok {
			return nil, fmt.Errorf("%s: unknown density %q", spec.ID, name)
		}
		rng := runner.Stream(es, "histogram-tuning", "density", name)
		x := make([]float64, h.Records)
		for i := range x {
			x[i] = f.Rand(rng)
		}
		params := map[string]string{"weights": fmt.Sprint(f.W), "a": fmt.Sprint(f.A), "b": fmt.Sprint(f.B), "records": strconv.Itoa(h.Records)}
		e.sources = append(e.sources, &histSource{name: name, kind: datasets.KindSynthetic, x: x, f: f,
			info: results.DatasetInfo{Name: name, Source: datasets.KindSynthetic, Generator: "beta-mixture", Params: params, N: h.Records, D: 1, Preproc: "none: drawn on [0, 1]"}})
	}
	loaded := map[string]*datasets.Dataset{}
	for _, a := range h.Attributes {
		ds := loaded[a.Dataset]
		if ds == nil {
			var err error
			if ds, err = specdata.Load(es, a.Dataset, o.DataDir, o.Named); err != nil {
				return nil, err
			}
			loaded[a.Dataset] = ds
			e.data = append(e.data, ds)
		}
		col := slices.Index(ds.FeatureNames, a.Column)
		if col < 0 {
			return nil, fmt.Errorf("%s: dataset %s has no numeric column %q (columns: %v)", spec.ID, a.Dataset, a.Column, ds.FeatureNames)
		}
		n, _ := ds.X.Dims()
		s := &histSource{name: a.Dataset + ":" + a.Column, kind: ds.Source.Kind, x: make([]float64, n)}
		for i := range s.x {
			v := (ds.X.At(i, col) - a.Lo) / (a.Hi - a.Lo)
			if v < 0 || v > 1 {
				s.clipped++
				v = math.Min(1, math.Max(0, v))
			}
			s.x[i] = v
		}
		s.info = specdata.Info(es, ds)
		s.info.Name = s.name
		s.info.D = 1
		s.info.Preproc += fmt.Sprintf("; column %s mapped to [0, 1] by public bounds [%v, %v], %d values clipped", a.Column, a.Lo, a.Hi, s.clipped)
		e.sources = append(e.sources, s)
	}
	k := len(h.Bins)
	hmin := 1 / float64(slices.Max(h.Bins))
	for si, s := range e.sources {
		n := len(s.x)
		if min := spec.CV.Folds * k * 2; n < min {
			return nil, fmt.Errorf("%s: source %s has %d points; %d folds and dataSplit into %d parts need at least %d", spec.ID, s.name, n, spec.CV.Folds, k, min)
		}
		if slices.Contains(spec.Tuning.Methods, "stability") {
			// The smallest training set: n minus the two largest folds.
			nTrain := n - 2*((n+spec.CV.Folds-1)/spec.CV.Folds)
			amin := slices.Min(spec.Tuning.Alphas)
			if _, _, err := histogram.StabilityConstants(hmin, k, nTrain, amin/2, spec.Tuning.Delta); err != nil {
				return nil, fmt.Errorf("%s: source %s, alpha = %v (training at alpha/2): %w", spec.ID, s.name, amin, err)
			}
		}
		for rep := 1; rep <= spec.CV.Repetitions; rep++ {
			s.folds = append(s.folds, Partition(runner.Stream(es, "cv-partition", s.name, strconv.Itoa(rep)), n, spec.CV.Folds))
		}
		for _, a := range spec.Tuning.Alphas {
			for _, m := range spec.Tuning.Methods {
				for rep := 1; rep <= spec.CV.Repetitions; rep++ {
					for f := 1; f <= spec.CV.Folds; f++ {
						key := fmt.Sprintf("%s/alpha=%s/%s/rep=%d/fold=%d", s.name, results.FormatFloat(a), m, rep, f)
						e.units = append(e.units, key)
						e.byKey[key] = histUnit{src: si, alpha: a, method: m, rep: rep, fold: f}
					}
				}
			}
		}
	}
	return e, nil
}

// Spec implements runner.Experiment.
func (e *Hist) Spec() *experiments.Spec { return e.spec.Spec }

// Units implements runner.Experiment.
func (e *Hist) Units() []runner.Unit {
	us := make([]runner.Unit, len(e.units))
	for i, k := range e.units {
		u := e.byKey[k]
		u.key = k
		us[i] = u
	}
	return us
}

// Columns implements runner.Experiment.
func (e *Hist) Columns() []string { return HistColumns }

func values(x []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for i, j := range idx {
		out[i] = x[j]
	}
	return out
}

// RunUnit implements runner.Experiment.
func (e *Hist) RunUnit(ctx context.Context, ru runner.Unit, env runner.Env) ([]results.Row, error) {
	u, ok := ru.(histUnit)
	if !ok {
		return nil, fmt.Errorf("cvtune: unit %q is not of this experiment", ru.Key())
	}
	key := u.key
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := e.sources[u.src]
	trainIdx, valIdx, testIdx := roles(s.folds[u.rep-1], u.fold)
	train, val, test := values(s.x, trainIdx), values(s.x, valIdx), values(s.x, testIdx)
	bins := e.spec.Histogram.Bins
	p, err := histogram.NewProcedure(train, val, bins)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	rng := env.RNG()
	alpha := u.alpha
	// Theorem 6's β at the training α₁ = α/2 (only Stability uses it).
	beta := math.NaN()
	if u.method == "stability" {
		b1, b2, err := histogram.StabilityConstants(p.HMin(), p.K(), len(train), alpha/2, e.spec.Tuning.Delta)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		beta = tune.StabilityBeta(b1, b2, len(train), len(val))
	}
	c, err := choose[histogram.Estimate](rng, stopping[histogram.Estimate]{p, ctx}, u.method, alpha, beta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	// What the release cost; each Algorithm 5 run delivers exactly its ε.
	var priv privacy
	switch u.method {
	case "stability":
		priv = privacy{train: alpha / 2, tuning: alpha / 2, delta: e.spec.Tuning.Delta, total: alpha, private: true}
	case "alphaSplit", "dataSplit": // k·(α/k) on T, or α on disjoint parts; α on V
		priv = privacy{train: alpha, tuning: alpha, total: alpha, private: true}
	case "random":
		priv = privacy{train: alpha, total: alpha, private: true}
	default: // control: k runs at α on T; the argmax is not private
		priv = privacy{train: float64(p.K()) * alpha, tuning: math.Inf(1), total: math.Inf(1)}
	}

	r := results.Row{}
	r.Set("experiment", e.spec.ID)
	r.Set("dataset", s.name)
	r.Set("data_source", s.kind)
	r.Set("method", u.method)
	r.SetFloat("alpha", alpha)
	r.SetInt("rep", u.rep)
	r.SetInt("fold", u.fold)
	r.Set("unit", key)
	r.SetInt("index", c.Index+1)
	r.SetInt("bins", bins[c.Index])
	r.SetFloat("bin_width", 1/float64(bins[c.Index]))
	ise := math.NaN()
	if s.f != nil {
		ise = histogram.ISE(c.Model, s.f)
	}
	r.SetFloat("ise", ise)
	r.SetFloat("ise_estimate", -histogram.Score(c.Model, test))
	r.SetFloat("val_score", p.Score(c.Model))
	r.SetInt("n_train", len(train))
	r.SetInt("n_val", len(val))
	r.SetInt("n_test", len(test))
	r.SetInt("fits", c.Fits)
	r.SetFloat("eps_train", priv.train)
	r.SetFloat("eps_tuning", priv.tuning)
	r.SetFloat("delta", priv.delta)
	r.SetFloat("eps_total", priv.total)
	r.Set("private", strconv.FormatBool(priv.private))
	r.SetFloat("beta", beta)
	r.Set("status", "ok")
	return []results.Row{r}, nil
}

// Summary implements runner.Experiment: ise (synthetic sources only),
// ise_estimate, bin_width and index against x = α.
func (e *Hist) Summary(rows []results.Row) []results.SummaryRow {
	all := results.Summarize(rows, results.SummaryOptions{
		Experiment: e.spec.ID, XName: "alpha", XCol: "alpha", Metrics: HistMetrics,
		Bootstrap: e.spec.Output.Bootstrap, Level: e.spec.Output.CILevel, Seed: e.spec.Seed,
	})
	// A real attribute has no exact ISE: drop its empty ise cells rather
	// than draw empty panels.
	return slices.DeleteFunc(all, func(r results.SummaryRow) bool { return r.Metric == "ise" && r.N == 0 })
}

// Figures implements runner.Experiment, as the classifier study's: the
// exact ISE (synthetic densities), the test-fold ISE estimate and the chosen
// bin width against α, one panel per source.
func (e *Hist) Figures() []plots.FigureSpec {
	base := plots.FigureSpec{XLabel: "privacy level α", LogX: true, Methods: e.spec.Tuning.Methods, Jitter: 0.15}
	mk := func(name, title, metric, ylabel string, logY bool) plots.FigureSpec {
		f := base
		f.Name, f.Title, f.Metric, f.YLabel, f.LogY = name, title, metric, ylabel, logY
		return f
	}
	figs := []plots.FigureSpec{
		mk("ise-estimate", "Histogram: test-fold ISE estimate −q(f̂, W) = ISE − ∫f²", "ise_estimate", "ISE − ∫f² (lower is better)", false),
		mk("bin-width", "Histogram: chosen bin width", "bin_width", "bin width h", true),
	}
	if len(e.spec.Histogram.Densities) > 0 {
		figs = append([]plots.FigureSpec{mk("ise", "Histogram: exact ISE ∫(f̂ − f)² on known densities", "ise", "ISE (lower is better)", true)}, figs...)
	}
	return figs
}

// Datasets implements runner.Experiment.
func (e *Hist) Datasets() []results.DatasetInfo {
	var out []results.DatasetInfo
	for _, s := range e.sources {
		out = append(out, s.info)
	}
	return out
}

// Warnings implements runner.Experiment.
func (e *Hist) Warnings() []string {
	w := specdata.Warnings(e.data)
	for _, s := range e.sources {
		if s.clipped > 0 {
			w = append(w, fmt.Sprintf("source %s: %d of %d values lie outside the public bounds and were clipped", s.name, s.clipped, len(s.x)))
		}
	}
	return w
}

// Ledger implements runner.Experiment.
func (e *Hist) Ledger(rows []results.Row) []results.LedgerEntry {
	return ledger(&e.spec.Tuning, rows, histWords)
}
