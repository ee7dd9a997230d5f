package datasets

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/dprepro/dprepro/core/randx"
)

// Synthetic generator names recorded in [Source.Generator].
const (
	GeneratorPlantedLogistic  = "planted-logistic/v1"
	GeneratorPlantedLogLinear = "planted-loglinear/v1"
)

// Planted-model constants (chosen, not fitted; recorded in Source.Params).
const (
	// synthSignalSD is the standard deviation of the planted logit across
	// records (classification stand-ins): a logit sd of 2
	// gives a learnable but not separable problem (AUC of the true logit
	// ≈ 0.86 when the logit is normal with a zero intercept, by a 200,000
	// draw simulation).
	synthSignalSD = 2.0
	// twitterSignalSD, twitterNoiseSD and twitterTargetMean define
	// log(1+y) = twitterTargetMean + η + twitterNoiseSD·ε with sd(η) =
	// twitterSignalSD. The mean 4 ≈ log(1+55) puts the median target near 55
	// active discussions with a long right tail.
	twitterSignalSD   = 1.0
	twitterNoiseSD    = 0.5
	twitterTargetMean = 4.0
)

// quantileProbs is the probability grid at which the numeric marginals of
// the synthetic stand-ins are pinned: dense in the tails, so heavy tails
// (KDD byte counts, capital gains) are kept without spreading mass up to the
// maximum.
var quantileProbs = []float64{0, 0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5,
	0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1}

// synthSchema describes a synthetic stand-in: the marginals of every
// attribute, in the registry's attribute order.
type synthSchema struct {
	numeric     []numericMarginal
	categorical []categoricalMarginal
	// twitter selects the hand-set Twitter generator instead.
	twitter bool
}

// numericMarginal pins a numeric attribute's distribution by its quantiles
// at quantileProbs. Draws invert the piecewise interpolated CDF: linear in
// log(1+x) when logScale (non-negative columns, so tails are log-uniform
// between pinned quantiles), else linear in x. Ties between pinned quantiles
// (e.g. 90% zeros in capital-gain) become point masses.
type numericMarginal struct {
	name     string
	q        []float64
	logScale bool
	// decimals rounds draws to the resolution of the real column
	// (0 = integers); −1 means no rounding.
	decimals int
}

// categoricalMarginal gives the levels of a categorical attribute and their
// counts in the real data.
type categoricalMarginal struct {
	name   string
	levels []string
	counts []int
}

// synthesize generates the stand-in table of e; it is deterministic in seed
// (same seed, same platform → same bits).
func synthesize(e *Entry, seed uint64) (*Table, Source) {
	rng := randx.New(seed, "datasets/synthetic", e.Name)
	var t *Table
	var params map[string]string
	gen := GeneratorPlantedLogistic
	if e.synth.twitter {
		t, params = synthTwitter(e, rng)
		gen = GeneratorPlantedLogLinear
	} else {
		t, params = synthClassification(e, rng)
	}
	t.check()
	params["stand_in_for"] = e.Name
	params["seed"] = strconv.FormatUint(seed, 10)
	params["n"] = strconv.Itoa(t.N())
	params["d"] = strconv.Itoa(t.Dim())
	params["d_numeric"] = strconv.Itoa(len(t.Numeric))
	params["d_categorical"] = strconv.Itoa(len(t.Categorical))
	return t, Source{Kind: KindSynthetic, Generator: gen, Params: params}
}

// synthClassification draws the attributes independently from their pinned
// marginals, then labels from a planted logistic model
//
//	P(y_i = +1) = σ(b + η_i),  η_i = Σ_j w_j·z_ij + Σ_c a_c[level_ic]
//
// where z_ij is numeric attribute j standardised (after log(1+x) for
// non-negative columns, so outliers do not dominate), w_j and the level
// effects a_c ~ N(0, 1), all rescaled so that sd(η) = synthSignalSD, and the
// intercept b is solved by bisection so that mean_i σ(b + η_i) equals the
// real positive rate. The expected number of positives given the features
// is then exactly n·rate.
func synthClassification(e *Entry, rng *rand.Rand) (*Table, map[string]string) {
	n := e.Records
	t := drawMarginals(e, rng, n)

	eta := make([]float64, n)
	z := make([]float64, n)
	for j, c := range t.Numeric {
		logScale := e.synth.numeric[j].logScale
		for i, v := range c.Values {
			if logScale {
				v = math.Log1p(v)
			}
			z[i] = v
		}
		mean, sd := popMeanSD(z)
		w := rng.NormFloat64()
		if sd == 0 {
			continue
		}
		for i := range eta {
			eta[i] += w * (z[i] - mean) / sd
		}
	}
	for _, c := range t.Categorical {
		a := make([]float64, len(c.Levels))
		for l := range a {
			a[l] = rng.NormFloat64()
		}
		for i, code := range c.Codes {
			eta[i] += a[code]
		}
	}
	mean, sd := popMeanSD(eta)
	for i := range eta {
		eta[i] -= mean
		if sd > 0 {
			eta[i] *= synthSignalSD / sd
		}
	}

	rate := float64(e.Positives) / float64(e.Records)
	b := solveIntercept(eta, rate)
	pos := 0
	t.Y = make([]float64, n)
	for i := range eta {
		if rng.Float64() < sigmoid(b+eta[i]) {
			t.Y[i] = 1
			pos++
		} else {
			t.Y[i] = -1
		}
	}
	return t, map[string]string{
		"positive_rate_target": strconv.FormatFloat(rate, 'g', -1, 64),
		"positives":            strconv.Itoa(pos),
		"signal_sd":            strconv.FormatFloat(synthSignalSD, 'g', -1, 64),
		"intercept":            strconv.FormatFloat(b, 'g', -1, 64),
		"marginals":            "independent; numeric from pinned real quantiles, categorical from real level frequencies",
	}
}

// drawMarginals draws n records of e's attributes independently, column by
// column in attribute order.
func drawMarginals(e *Entry, rng *rand.Rand, n int) *Table {
	t := &Table{Target: e.Target}
	ni, ci := 0, 0
	for _, a := range e.format.attrs {
		t.Attributes = append(t.Attributes, a.name)
		if a.kind == numericAttr {
			m := &e.synth.numeric[ni]
			ni++
			if m.name != a.name {
				panic("datasets: synthetic schema out of order at " + a.name)
			}
			lq := m.logQuantiles()
			v := make([]float64, n)
			for i := range v {
				v[i] = m.draw(rng.Float64(), lq)
			}
			t.Numeric = append(t.Numeric, NumericColumn{Name: a.name, Values: v})
			continue
		}
		m := &e.synth.categorical[ci]
		ci++
		if m.name != a.name {
			panic("datasets: synthetic schema out of order at " + a.name)
		}
		cum := make([]float64, len(m.counts))
		var total float64
		for l, c := range m.counts {
			total += float64(c)
			cum[l] = total
		}
		codes := make([]int32, n)
		for i := range codes {
			u := rng.Float64() * total
			// The level is the first l with cum[l] > u; u < total = cum[last].
			codes[i] = int32(sort.Search(len(cum), func(l int) bool { return cum[l] > u }))
		}
		t.Categorical = append(t.Categorical, CategoricalColumn{Name: a.name, Levels: m.levels, Codes: codes})
	}
	return t
}

// logQuantiles returns log(1+q) for a log-scale marginal, else nil.
func (m *numericMarginal) logQuantiles() []float64 {
	if !m.logScale {
		return nil
	}
	lq := make([]float64, len(m.q))
	for k, v := range m.q {
		lq[k] = math.Log1p(v)
	}
	return lq
}

// draw maps u ∈ [0, 1) through the interpolated inverse CDF; lq is
// m.logQuantiles().
func (m *numericMarginal) draw(u float64, lq []float64) float64 {
	p := quantileProbs
	k := sort.SearchFloat64s(p, u) // p[k-1] < u ≤ p[k]
	if k == 0 {
		return m.round(m.q[0])
	}
	lo, hi := m.q[k-1], m.q[k]
	s := (u - p[k-1]) / (p[k] - p[k-1])
	var v float64
	if m.logScale {
		a, b := lq[k-1], lq[k]
		v = math.Expm1(a + s*(b-a))
	} else {
		v = lo + s*(hi-lo)
	}
	// Keep v within the pinned interval despite rounding in log/exp.
	v = math.Max(lo, math.Min(hi, v))
	return m.round(v)
}

func (m *numericMarginal) round(v float64) float64 {
	if m.decimals < 0 {
		return v
	}
	s := pow10[m.decimals]
	return math.Round(v*s) / s
}

// solveIntercept finds b with mean_i σ(b + eta_i) = rate by bisection; the
// mean is continuous and increasing in b. 200 halvings of [−60, 60] reach
// the float64 resolution of b.
func solveIntercept(eta []float64, rate float64) float64 {
	lo, hi := -60.0, 60.0
	for it := 0; it < 200 && hi-lo > 1e-13; it++ {
		mid := (lo + hi) / 2
		var s float64
		for _, v := range eta {
			s += sigmoid(mid + v)
		}
		if s/float64(len(eta)) < rate {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// sigmoid is 1/(1+e^−x), computed without overflow for either sign of x.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// popMeanSD returns the mean and population (biased, divide-by-n) standard
// deviation; only their ratio to the data matters here.
func popMeanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)))
}

// twitterFamily is a hand-set marginal for one Twitter feature family. No
// copy of Twitter.data was available, so these are plausible shapes, not
// fitted values: counts are log-normal, floor(expm1(max(0, mu + sigma·L +
// 0.4·sigma·ε))) with L the record's latent activity shared by all
// families; ratios are σ(mu + sigma·L + 0.5·ε) ∈ (0, 1); "ge1" families
// are 1 + exp(mu + sigma·L + 0.5·ε).
type twitterFamily struct {
	kind      string // "count", "ratio" or "ge1"
	mu, sigma float64
}

var twitterFamilyShapes = map[string]twitterFamily{
	"NCD":     {"count", 2.0, 1.5}, // number of created discussions
	"AI":      {"count", 2.5, 1.5}, // author increase
	"AS(NA)":  {"ratio", -2.0, 0.8},
	"BL":      {"ratio", -1.0, 0.6}, // burstiness level
	"NAC":     {"count", 3.0, 1.6},  // number of atomic containers
	"AS(NAC)": {"ratio", -2.0, 0.8},
	"CS":      {"ratio", 0.5, 0.5}, // contribution sparseness
	"AT":      {"ge1", -1.0, 0.4},  // author interaction
	"NA":      {"count", 2.8, 1.5}, // number of authors
	"ADL":     {"ge1", 0.0, 0.5},   // average discussion length
	"NAD":     {"count", 3.5, 1.6}, // number of active discussions
}

// twitterSynth marks the Twitter stand-in (see synthTwitter).
var twitterSynth = &synthSchema{twitter: true}

// synthTwitter generates the Twitter stand-in: heavy-tailed count and ratio
// features from twitterFamilyShapes, and a target from a planted log-linear
// model
//
//	log(1+y_i) = twitterTargetMean + η_i + twitterNoiseSD·ε_i,  y_i ≥ 0,
//
// where η_i = Σ_j β_j·z_ij over the standardised log(1+x_ij), β_j ~ N(0,1)
// rescaled so sd(η) = twitterSignalSD. With TargetLog1p the regression is
// therefore linear in the log features plus noise.
func synthTwitter(e *Entry, rng *rand.Rand) (*Table, map[string]string) {
	n := e.Records
	t := &Table{Target: e.Target}
	latent := make([]float64, n)
	for i := range latent {
		latent[i] = rng.NormFloat64()
	}
	for _, a := range e.format.attrs {
		fam := a.name[:len(a.name)-2] // strip "_t"
		sh, ok := twitterFamilyShapes[fam]
		if !ok {
			panic("datasets: no Twitter shape for " + a.name)
		}
		v := make([]float64, n)
		for i := range v {
			l := sh.mu + sh.sigma*latent[i]
			switch sh.kind {
			case "count":
				v[i] = math.Floor(math.Expm1(math.Max(0, l+0.4*sh.sigma*rng.NormFloat64())))
			case "ratio":
				v[i] = sigmoid(l + 0.5*rng.NormFloat64())
			default: // ge1
				v[i] = 1 + math.Exp(l+0.5*rng.NormFloat64())
			}
		}
		t.Attributes = append(t.Attributes, a.name)
		t.Numeric = append(t.Numeric, NumericColumn{Name: a.name, Values: v})
	}

	eta := make([]float64, n)
	z := make([]float64, n)
	for _, c := range t.Numeric {
		for i, v := range c.Values {
			z[i] = math.Log1p(v)
		}
		mean, sd := popMeanSD(z)
		beta := rng.NormFloat64()
		if sd == 0 {
			continue
		}
		for i := range eta {
			eta[i] += beta * (z[i] - mean) / sd
		}
	}
	mean, sd := popMeanSD(eta)
	t.Y = make([]float64, n)
	for i := range eta {
		h := eta[i] - mean
		if sd > 0 {
			h *= twitterSignalSD / sd
		}
		t.Y[i] = math.Max(0, math.Expm1(twitterTargetMean+h+twitterNoiseSD*rng.NormFloat64()))
	}
	return t, map[string]string{
		"signal_sd":         strconv.FormatFloat(twitterSignalSD, 'g', -1, 64),
		"noise_sd":          strconv.FormatFloat(twitterNoiseSD, 'g', -1, 64),
		"target_mean_log1p": strconv.FormatFloat(twitterTargetMean, 'g', -1, 64),
		"marginals":         "hand-set log-normal counts and logistic ratios sharing a latent activity level (no real copy to fit)",
	}
}
