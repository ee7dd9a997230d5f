package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Census block kinds for [censusBlock].
const (
	blockNormalInt = "normal-int" // round(mean + sd·N(0,1)), clipped to [lo, hi]
	blockPoisson   = "poisson"    // lo + Poisson(lambda), clipped to hi
	blockBinary    = "binary"     // 1 with probability p, else 0
	blockOneHot    = "onehot"     // width indicators, exactly one is 1
)

// censusBlock is one hand-set group of columns of the census stand-in.
type censusBlock struct {
	// label says what the block imitates (documentation and Source.Params
	// only: the real extracts' column coding is not known, so the feature
	// names stay f1 … fd).
	label string
	// kind is blockNormalInt, blockPoisson, blockBinary or blockOneHot.
	kind string
	// mean, sd (normal-int), lambda (poisson), lo, hi: integer columns.
	mean, sd, lambda, lo, hi float64
	// p is the probability of a 1 (binary).
	p float64
	// width is the number of indicators (onehot); level l has probability
	// ∝ decay^l, so level 0 is the most common and the rarest has
	// probability ≥ 0.1% in every layout below (≥ 38 expected records).
	width int
	decay float64
}

// columns returns the number of design-matrix columns of the block.
func (b censusBlock) columns() int {
	if b.kind == blockOneHot {
		return b.width
	}
	return 1
}

// String describes the block for Source.Params, e.g.
// "f1 age:normal-int(mean=42,sd=15,[18,93])".
func (b censusBlock) String() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch b.kind {
	case blockNormalInt:
		return fmt.Sprintf("%s:normal-int(mean=%s,sd=%s,[%s,%s])", b.label, f(b.mean), f(b.sd), f(b.lo), f(b.hi))
	case blockPoisson:
		return fmt.Sprintf("%s:%s+poisson(%s)≤%s", b.label, f(b.lo), f(b.lambda), f(b.hi))
	case blockBinary:
		return fmt.Sprintf("%s:binary(p=%s)", b.label, f(b.p))
	default:
		return fmt.Sprintf("%s:onehot(width=%d,decay=%s)", b.label, b.width, f(b.decay))
	}
}

// censusLayout is the hand-set shape of a census stand-in: its column
// blocks in file order and the positive rate of the planted label.
type censusLayout struct {
	blocks []censusBlock
	// positiveRate is the target share of +1 labels.
	positiveRate float64
}

// censusPositiveRate is the class balance of the IPUMS stand-ins. The
// balance of the real coded extracts is not documented anywhere available
// to us (no copy may be redistributed), so it is chosen, not fitted: 30%
// positives, a moderately imbalanced binary census outcome in the range of
// the other census income label in the registry (Adult: 7,508 of 30,162
// records > $50K, 24.9%). Results on the stand-ins do not depend on this
// matching the real extracts; they only exercise the pipeline at real size.
const censusPositiveRate = 0.30

// ipumsUSSynth: hand-set layout of the IPUMS-US stand-in, 57 columns:
// 4 integer/binary columns then 6 one-hot blocks (53 indicators), in the
// style of a coded person record (age, sex, family size, children, marital
// status, race, education, class of worker, occupation, industry). The
// blocks are plausible shapes, not the real coding.
var ipumsUSSynth = &synthSchema{census: &censusLayout{
	positiveRate: censusPositiveRate,
	blocks: []censusBlock{
		{label: "age", kind: blockNormalInt, mean: 42, sd: 15, lo: 18, hi: 93},
		{label: "sex", kind: blockBinary, p: 0.49},
		{label: "family size", kind: blockPoisson, lo: 1, lambda: 1.8, hi: 16},
		{label: "children", kind: blockPoisson, lo: 0, lambda: 0.8, hi: 9},
		{label: "marital status", kind: blockOneHot, width: 6, decay: 0.5},
		{label: "race", kind: blockOneHot, width: 7, decay: 0.35},
		{label: "education", kind: blockOneHot, width: 11, decay: 0.8},
		{label: "class of worker", kind: blockOneHot, width: 5, decay: 0.5},
		{label: "occupation", kind: blockOneHot, width: 10, decay: 0.8},
		{label: "industry", kind: blockOneHot, width: 14, decay: 0.8},
	},
}}

// ipumsBRSynth: hand-set layout of the IPUMS-BR stand-in, 52 columns:
// 4 integer/binary columns then 6 one-hot blocks (48 indicators); larger
// families and more children than the US layout. Plausible shapes, not the
// real coding.
var ipumsBRSynth = &synthSchema{census: &censusLayout{
	positiveRate: censusPositiveRate,
	blocks: []censusBlock{
		{label: "age", kind: blockNormalInt, mean: 38, sd: 14, lo: 18, hi: 90},
		{label: "sex", kind: blockBinary, p: 0.5},
		{label: "family size", kind: blockPoisson, lo: 1, lambda: 2.5, hi: 20},
		{label: "children", kind: blockPoisson, lo: 0, lambda: 1.2, hi: 12},
		{label: "marital status", kind: blockOneHot, width: 5, decay: 0.5},
		{label: "race", kind: blockOneHot, width: 5, decay: 0.5},
		{label: "education", kind: blockOneHot, width: 10, decay: 0.75},
		{label: "class of worker", kind: blockOneHot, width: 5, decay: 0.5},
		{label: "occupation", kind: blockOneHot, width: 10, decay: 0.8},
		{label: "industry", kind: blockOneHot, width: 13, decay: 0.8},
	},
}}

// columns returns the total number of columns of the layout.
func (l *censusLayout) columns() int {
	d := 0
	for _, b := range l.blocks {
		d += b.columns()
	}
	return d
}

// synthCensus generates a census stand-in (planted-logistic-census/v1).
// Records are independent and so are the blocks within a record; each
// block is drawn as its censusBlock says (a one-hot block sets exactly one
// of its indicators). The label is the planted logistic model of
// synthClassification over all d columns,
//
//	P(y_i = +1) = σ(b + η_i),  η_i = Σ_j w_j·z_ij,  w_j ~ N(0, 1),
//
// with z_ij column j standardised (constant columns skipped), η rescaled to
// sd synthSignalSD and b solved so that the expected share of positives is
// layout.positiveRate (plantLabels). Draw order: blocks in file order
// (record by record within a block), then the weights, then the labels.
func synthCensus(e *Entry, rng *rand.Rand) (*Table, map[string]string) {
	lay := e.synth.census
	n := e.Records
	if lay.columns() != len(e.format.attrs) {
		panic(fmt.Sprintf("datasets: census layout of %s has %d columns, format %d", e.Name, lay.columns(), len(e.format.attrs)))
	}
	cols := make([][]float64, 0, len(e.format.attrs))
	desc := make([]string, len(lay.blocks))
	for k, b := range lay.blocks {
		first := len(cols) + 1
		switch b.kind {
		case blockNormalInt:
			v := make([]float64, n)
			for i := range v {
				v[i] = math.Max(b.lo, math.Min(b.hi, math.Round(b.mean+b.sd*rng.NormFloat64())))
			}
			cols = append(cols, v)
		case blockPoisson:
			pois := distuv.Poisson{Lambda: b.lambda, Src: rng}
			v := make([]float64, n)
			for i := range v {
				v[i] = math.Min(b.hi, b.lo+pois.Rand())
			}
			cols = append(cols, v)
		case blockBinary:
			v := make([]float64, n)
			for i := range v {
				if rng.Float64() < b.p {
					v[i] = 1
				}
			}
			cols = append(cols, v)
		case blockOneHot:
			cum := make([]float64, b.width)
			w, total := 1.0, 0.0
			for l := range cum {
				total += w
				cum[l] = total
				w *= b.decay
			}
			ind := make([][]float64, b.width)
			for l := range ind {
				ind[l] = make([]float64, n)
			}
			for i := 0; i < n; i++ {
				u := rng.Float64() * total
				// The level is the first l with cum[l] > u; u < total = cum[last].
				l := sort.Search(len(cum), func(l int) bool { return cum[l] > u })
				ind[l][i] = 1
			}
			cols = append(cols, ind...)
		default:
			panic("datasets: unknown census block kind " + b.kind)
		}
		if last := len(cols); last > first {
			desc[k] = fmt.Sprintf("f%d-f%d %s", first, last, b)
		} else {
			desc[k] = fmt.Sprintf("f%d %s", first, b)
		}
	}

	t := &Table{Target: e.Target}
	for j, a := range e.format.attrs {
		t.Attributes = append(t.Attributes, a.name)
		t.Numeric = append(t.Numeric, NumericColumn{Name: a.name, Values: cols[j]})
	}

	eta := make([]float64, n)
	for _, c := range cols {
		mean, sd := popMeanSD(c)
		w := rng.NormFloat64()
		if sd == 0 {
			continue
		}
		for i, v := range c {
			eta[i] += w * (v - mean) / sd
		}
	}
	var params map[string]string
	t.Y, params = plantLabels(eta, lay.positiveRate, rng)
	params["layout"] = strings.Join(desc, "; ")
	params["marginals"] = "hand-set, not fitted (the extracts may not be redistributed; their column coding is unknown): " +
		"independent census-like blocks of small integers, binary columns and one-hot indicators"
	return t, params
}
