package datasets

import (
	"github.com/dprepro/dprepro/core/randx"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// zTol is the two-sided normal quantile for a failure probability of 1e-5:
// 2·(1 − Φ(4.42)) ≈ 9.9e-6 (scipy.stats.norm.sf(4.42)·2 = 9.87e-6).
const zTol = 4.42

// TestSchema_MatchesRegistry checks that each synthetic schema lists the
// registry's attributes in order and, after one-hot, the registry's Dim.
func TestSchema_MatchesRegistry(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		e := builtinEntry(name)
		if e.synth.twitter || e.synth.census != nil {
			continue // hand-set generators; see TestSynthetic_Twitter, TestSynthetic_IPUMS
		}
		var num, cat []string
		d := 0
		for _, m := range e.synth.numeric {
			num = append(num, m.name)
			d++
			if len(m.q) != len(quantileProbs) || !slices.IsSorted(m.q) {
				t.Errorf("%s: %s: %d quantiles (want %d), sorted=%v", name, m.name, len(m.q), len(quantileProbs), slices.IsSorted(m.q))
			}
			if m.logScale && m.q[0] < 0 {
				t.Errorf("%s: %s: log-scale marginal with negative minimum", name, m.name)
			}
		}
		for _, c := range e.synth.categorical {
			cat = append(cat, c.name)
			d += len(c.levels)
			if len(c.levels) != len(c.counts) || !slices.IsSorted(c.levels) {
				t.Errorf("%s: %s: %d levels, %d counts, sorted=%v", name, c.name, len(c.levels), len(c.counts), slices.IsSorted(c.levels))
			}
			total := 0
			for _, k := range c.counts {
				total += k
				if k <= 0 {
					t.Errorf("%s: %s: non-positive level count", name, c.name)
				}
			}
			if total != e.Records {
				t.Errorf("%s: %s: level counts sum to %d, want %d records", name, c.name, total, e.Records)
			}
		}
		if !slices.Equal(num, e.Numeric) || !slices.Equal(cat, e.Categorical) || d != e.Dim {
			t.Errorf("%s: schema numeric %q categorical %q dim %d; registry %q %q %d", name, num, cat, d, e.Numeric, e.Categorical, e.Dim)
		}
	}
}

// TestSynthetic_ShapeAndBalance loads each stand-in and checks n, d, the
// feature names, the labels and the class balance.
//
// Tolerance: given the features, the labels are independent Bernoulli(π_i)
// whose means sum to exactly n·p (the intercept is solved for that, to
// 1e-13). The number of positives K has variance Σπ_i(1−π_i) ≤ n·p(1−p)
// (π(1−π) is concave), and with n·p(1−p) > 4000 here the normal
// approximation is accurate, so |K/n − p| ≤ zTol·√(p(1−p)/n) fails with
// probability below 1e-5 for any seed.
func TestSynthetic_ShapeAndBalance(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"adult", "magic", "bank", "kddcup99"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if name == "kddcup99" && testing.Short() {
				t.Skip("kddcup99 stand-in has 494,021 rows; skipped under -short")
			}
			e := builtinEntry(name)
			ds, err := Load(name, Options{Synthetic: SyntheticAlways, Seed: 20240601})
			if err != nil {
				t.Fatal(err)
			}
			n, d := ds.X.Dims()
			if n != e.Records || d != e.Dim || len(ds.FeatureNames) != d {
				t.Fatalf("stand-in is %d×%d (%d names), want %d×%d", n, d, len(ds.FeatureNames), e.Records, e.Dim)
			}
			if got := wantFeatureNames(e); !slices.Equal(ds.FeatureNames, got) {
				t.Errorf("feature names %q, want %q", ds.FeatureNames, got)
			}
			if ds.Source.Kind != KindSynthetic || ds.Source.Generator != GeneratorPlantedLogistic || len(ds.Source.Files) != 0 {
				t.Errorf("source = %+v, want a synthetic planted-logistic source", ds.Source)
			}
			for _, k := range []string{"stand_in_for", "reason", "seed", "n", "d", "positive_rate_target", "positives", "intercept", "signal_sd"} {
				if ds.Source.Params[k] == "" {
					t.Errorf("Source.Params[%q] missing", k)
				}
			}
			if got := ds.Source.String(); got[:9] != "SYNTHETIC" {
				t.Errorf("Source.String() = %q, want it to start with SYNTHETIC", got)
			}
			pos := 0
			for _, y := range ds.Y {
				switch y {
				case 1:
					pos++
				case -1:
				default:
					t.Fatalf("label %v, want ±1", y)
				}
			}
			if ds.Source.Params["positives"] != strconv.Itoa(pos) {
				t.Errorf("Params[positives] = %s, counted %d", ds.Source.Params["positives"], pos)
			}
			p := float64(e.Positives) / float64(e.Records)
			tol := zTol * math.Sqrt(p*(1-p)/float64(n))
			if got := float64(pos) / float64(n); math.Abs(got-p) > tol {
				t.Errorf("positive rate %v, want %v ± %v", got, p, tol)
			}
		})
	}
}

// wantFeatureNames lists the one-hot feature names implied by the registry
// and the schema levels.
func wantFeatureNames(e *Entry) []string {
	var names []string
	ci := 0
	for _, a := range e.format.attrs {
		if a.kind == numericAttr {
			names = append(names, a.name)
			continue
		}
		for _, l := range e.synth.categorical[ci].levels {
			names = append(names, a.name+"="+l)
		}
		ci++
	}
	return names
}

func TestSynthetic_Deterministic(t *testing.T) {
	t.Parallel()
	load := func(seed uint64) *Dataset {
		t.Helper()
		ds, err := Load("adult", Options{Synthetic: SyntheticAlways, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	a, b, c := load(7), load(7), load(8)
	if !mat.Equal(a.X, b.X) || !slices.Equal(a.Y, b.Y) {
		t.Error("same seed gave different stand-ins")
	}
	if mat.Equal(a.X, c.X) {
		t.Error("seeds 7 and 8 gave the same design matrix")
	}
	// Different datasets with the same seed use different streams.
	if randx.Seed(7, "datasets/synthetic", "adult") == randx.Seed(7, "datasets/synthetic", "bank") {
		t.Error("seed derivation ignores the dataset name")
	}
}

// twitterStandIn loads the Twitter stand-in once for all tests (583,250 ×
// 77, ≈ 2 s to synthesize), with the preprocessing of Ligett et al.
// (2017), arXiv:1705.10829v1, Appendix B.1.
var twitterStandIn = sync.OnceValues(func() (*Dataset, error) {
	return Load("twitter", Options{Synthetic: SyntheticAlways, Seed: 3,
		Preprocess: Preprocessing{ColumnScale: ScaleNone, RowNorm: RowL1Max, TargetLog1p: true, TargetScale: TargetScaleMaxAbs}})
})

func TestSynthetic_Twitter(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("twitter stand-in has 583,250 × 77 entries; skipped under -short")
	}
	ds, err := twitterStandIn()
	if err != nil {
		t.Fatal(err)
	}
	n, d := ds.X.Dims()
	if n != twitterRecords || d != twitterDim || ds.Task != TaskRegression {
		t.Fatalf("twitter stand-in %d×%d %s, want %d×%d regression", n, d, ds.Task, twitterRecords, twitterDim)
	}
	if ds.Source.Kind != KindSynthetic || ds.Source.Generator != GeneratorPlantedLogLinear {
		t.Errorf("source = %v", ds.Source)
	}
	maxY := 0.0
	for _, y := range ds.Y {
		if !(y >= 0 && y <= 1) {
			t.Fatalf("preprocessed target %v outside [0, 1]", y)
		}
		maxY = math.Max(maxY, y)
	}
	if maxY != 1 {
		t.Errorf("max target %v, want 1 after maxabs scaling", maxY)
	}
	var maxL1 float64
	for i := 0; i < n; i++ {
		maxL1 = math.Max(maxL1, l1(ds.X.RawRowView(i)))
	}
	if math.Abs(maxL1-1) > normTol {
		t.Errorf("max ‖x‖₁ = %v, want 1", maxL1)
	}
}

func TestNumericMarginal_Draw(t *testing.T) {
	t.Parallel()
	// 95% zeros, then a log-scale tail up to 1e6.
	m := numericMarginal{name: "x", logScale: true, decimals: 0,
		q: []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 1000, 1e6}}
	for _, tt := range []struct{ u, want float64 }{
		{0, 0}, {0.5, 0}, {0.95, 0}, {0.999, 1000}, {0.9999999999, 1e6},
	} {
		// Rounding to integers (0.5) plus the slope of the top interval
		// times the distance of u from its end (1e-10/1e-3 of log 1e3).
		if got := m.draw(tt.u, m.logQuantiles()); math.Abs(got-tt.want) > 0.5+1e-5*tt.want {
			t.Errorf("draw(%v) = %v, want %v", tt.u, got, tt.want)
		}
	}
	// Log interpolation: halfway (in probability) between 10 and 1000 is
	// √(11·1001) − 1 ≈ 103.9 on the log(1+x) scale.
	if got, want := m.draw((0.99+0.999)/2, m.logQuantiles()), math.Round(math.Sqrt(11*1001)-1); got != want {
		t.Errorf("draw(mid) = %v, want %v", got, want)
	}
}

func TestSolveIntercept(t *testing.T) {
	t.Parallel()
	eta := []float64{-3, -1, 0, 0.5, 2, 4}
	for _, rate := range []float64{0.01, 0.2487, 0.5, 0.8031, 0.99} {
		b := solveIntercept(eta, rate)
		var s float64
		for _, v := range eta {
			s += sigmoid(b + v)
		}
		if got := s / float64(len(eta)); math.Abs(got-rate) > 1e-12 {
			t.Errorf("rate %v: mean σ = %v", rate, got)
		}
	}
}

// TestTwitterStandInRidgeSignal checks that the Twitter stand-in leaves the
// Accuracy First ridge experiment something to learn: the excess risk of
// θ = 0 must be well above the largest target α = 0.2, here at least 0.25
// (the authors' own synthetic ridge data failed this: docs/original-code.md,
// AF-6; "note 6" in the failure message below).
//
// Setup as in Ligett et al. (2017), arXiv:1705.10829v1, Appendix B.1:
// λ = 0.005, n = 100,000 rows drawn without replacement (fixed seed) from
// the preprocessed stand-in, and
//
//	L(θ) = (1/2n)‖y − Xθ‖² + (λ/2)‖θ‖²,
//
// minimised by θ* solving (XᵀX/n + λI)θ = Xᵀy/n (Cholesky; SPD as λ > 0).
//
// Measured (seed 3): L(0) = 0.3907, L(θ*) = 0.0622, L(0) − L(θ*) = 0.3285,
// ‖θ*‖₂ = 4.222, uncentered R² = 0.955. The threshold 0.25 is a design
// requirement (well above α = 0.2), not a statistical tolerance. Over
// stand-in seeds 1–20 the excess was 0.301–0.329 (mean 0.318, sd 0.007;
// seed 3 is the largest), and another subsample seed moves it by < 0.001,
// so 0.25 is about 10 sd below the mean.
func TestTwitterStandInRidgeSignal(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("twitter stand-in has 583,250 × 77 entries; skipped under -short")
	}
	ds, err := twitterStandIn()
	if err != nil {
		t.Fatal(err)
	}
	const (
		nSub   = 100000 // Appendix B.1
		lambda = 0.005  // Appendix B.1
		// Gradient tolerance: with ‖x_i‖₂ ≤ ‖x_i‖₁ ≤ 1 and |y_i| ≤ 1 every
		// sum over rows has rounding error ≲ n·u ≈ 1e-11 relative to a
		// term of size ≤ max(1, ‖θ*‖₂), and cond(XᵀX/n + λI) ≤ (1+λ)/λ ≈
		// 201, so a correct solve leaves a gradient far below 1e-9.
		gradTol = 1e-9
	)
	n, d := ds.X.Dims()
	for i := 0; i < n; i++ {
		if a := l1(ds.X.RawRowView(i)); a > 1+normTol {
			t.Fatalf("‖x_%d‖₁ = %v > 1", i, a)
		}
		if !(math.Abs(ds.Y[i]) <= 1) {
			t.Fatalf("|y_%d| = %v > 1", i, ds.Y[i])
		}
	}

	rng := randx.New(1, "datasets/test", "twitter-subsample")
	idx := rng.Perm(n)[:nSub]
	slices.Sort(idx)
	x := mat.NewDense(nSub, d, nil)
	y := make([]float64, nSub)
	for k, i := range idx {
		x.SetRow(k, ds.X.RawRowView(i))
		y[k] = ds.Y[i]
	}
	yv := mat.NewVecDense(nSub, y)
	var a mat.SymDense
	a.SymOuterK(1/float64(nSub), x.T())
	for j := 0; j < d; j++ {
		a.SetSym(j, j, a.At(j, j)+lambda)
	}
	var b mat.VecDense
	b.MulVec(x.T(), yv)
	b.ScaleVec(1/float64(nSub), &b)
	var ch mat.Cholesky
	if !ch.Factorize(&a) {
		t.Fatal("XᵀX/n + λI is not positive definite")
	}
	var theta mat.VecDense
	if err := ch.SolveVecTo(&theta, &b); err != nil {
		t.Fatal(err)
	}

	var r mat.VecDense // residual y − Xθ*
	r.MulVec(x, &theta)
	r.SubVec(yv, &r)
	var grad mat.VecDense // Xᵀr − nλθ* = −n·∇L(θ*)
	grad.MulVec(x.T(), &r)
	grad.AddScaledVec(&grad, -float64(nSub)*lambda, &theta)
	if g := mat.Norm(&grad, 2) / float64(nSub); g > gradTol {
		t.Errorf("‖∇L(θ*)‖₂ = %v, want ≤ %v", g, gradTol)
	}

	nf := float64(nSub)
	sse := mat.Dot(&r, &r)
	sy2 := mat.Dot(yv, yv)
	meanY := floats.Sum(y) / nf
	thetaNorm := mat.Norm(&theta, 2)
	l0 := sy2 / (2 * nf)
	lStar := sse/(2*nf) + lambda/2*thetaNorm*thetaNorm
	// Uncentered R² (the usual one for a model without intercept) and
	// centered R²; the latter is far below 0 because the penalty shrinks
	// the fitted level while y varies little about its mean.
	t.Logf("L(0) = %.4f, L(θ*) = %.4f, L(0) − L(θ*) = %.4f, ‖θ*‖₂ = %.3f, R² uncentered %.4f, centered %.1f, mean y %.3f",
		l0, lStar, l0-lStar, thetaNorm, 1-sse/sy2, 1-sse/(sy2-nf*meanY*meanY), meanY)

	if bound := 1 / math.Sqrt(lambda); thetaNorm > bound {
		t.Errorf("‖θ*‖₂ = %v exceeds 1/√λ = %v (Lemma A.4)", thetaNorm, bound)
	}
	if excess := l0 - lStar; excess < 0.25 {
		t.Errorf("L(0) − L(θ*) = %.4f, want ≥ 0.25: θ = 0 would meet α = 0.2 (docs/original-code.md, AF-6)", excess)
	}
}
