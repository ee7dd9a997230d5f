package privaudit

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/audit"
	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/core/histogram"
	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/core/noisered"
	"github.com/dprepro/dprepro/core/perturb"
	"github.com/dprepro/dprepro/core/tune"
)

// Variants of a mechanism. Correct is the mechanism as the harness runs
// it; the others are deliberately broken so that the audit's power to
// catch each kind of bug is measured.
const (
	Correct = "correct"
	// HalfNoise calibrates the mechanism to twice the claimed privacy
	// parameter: half the noise scale for ε-calibrated additive noise. For
	// objective perturbation it is "ε doubled", which is not half of its
	// noise: the split ε′ = ε − (regularisation term) and the fallback that
	// adds regularisation when ε′ ≤ 0 change with ε (at ε = 0.25 the correct
	// CMS11 run falls back and the broken one draws more noise but with less
	// regularisation). Either way the release is not ε-private.
	HalfNoise = "half-noise"
	// Sensitivity2 runs the mechanism calibrated to sensitivity Δ on a
	// neighbouring pair whose query values differ by 2Δ (a sensitivity
	// computed wrong by a factor 2).
	Sensitivity2 = "sensitivity-x2"
	// NoThresholdNoise is InteractiveAboveThreshold without the noise on the
	// threshold (Lyu, Su & Li 2017, the "SVT variants" that are not private).
	NoThresholdNoise = "no-threshold-noise"
)

// Variants lists the broken variants in a fixed order.
var Variants = []string{HalfNoise, Sensitivity2, NoThresholdNoise, KeepUnsquared, ScaleNextLevel, NoDelta}

// target is one mechanism of the harness under audit: the neighbouring
// pair (D, D′) it runs on, the statistics of a release that the events are
// built on, and the claim.
type target struct {
	name string
	// what describes the pair and the statistics, for the rows.
	what string
	// fits is true when a release fits a model (FitDraws applies).
	fits bool
	// drawsMul multiplies the draws (0 means 1), for cheap mechanisms whose
	// best event is rare.
	drawsMul int
	// stats is the number of statistics per release.
	stats int
	// zcdp is true when the parameter x is read as ρ = x²/2 (zCDP); the
	// claim is then (ρ + 2√(ρ ln(1/δ)), δ) (Bun & Steinke 2016, Prop. 1.3).
	zcdp bool
	// approx is true for (ε, δ) mechanisms whose δ is the spec's delta.
	approx bool
	// ok reports whether the target runs at parameter x (nil: always).
	ok func(x float64) bool
	// variants are the broken variants it supports.
	variants []string
	// sampler returns the release sampler at parameter x (ε, or the ε that
	// gives ρ = ε²/2) in variant v; delta is the spec's δ.
	sampler func(x float64, v string, delta float64) (audit.Sampler, error)
}

// claim returns the claimed (ε, δ) of t at parameter x.
func (t target) claim(x, delta float64) audit.Claim {
	switch {
	case t.zcdp:
		rho := x * x / 2
		return audit.Claim{Epsilon: rho + 2*math.Sqrt(rho*math.Log(1/delta)), Delta: delta}
	case t.approx:
		return audit.Claim{Epsilon: x, Delta: delta}
	}
	return audit.Claim{Epsilon: x}
}

// supports reports whether t runs variant v at x.
func (t target) supports(v string, x float64) bool {
	if t.ok != nil && !t.ok(x) {
		return false
	}
	if v == Correct {
		return true
	}
	for _, w := range t.variants {
		if w == v {
			return true
		}
	}
	return false
}

// noiseScale returns the multiplier of the privacy parameter that a variant
// applies (2 for HalfNoise), and the distance of the neighbouring query
// values (2 for Sensitivity2).
func noiseScale(v string) (paramMul, shift float64) {
	paramMul, shift = 1, 1
	switch v {
	case HalfNoise:
		paramMul = 2
	case Sensitivity2:
		shift = 2
	}
	return paramMul, shift
}

// sideValue is the query value on side 0 (D) and 1 (D′).
func sideValue(side int, shift float64) float64 { return float64(side) * shift }

// auditRows builds the two neighbouring training sets of the ERM audits:
// n−1 records at x = 0 (no influence on the loss) and one record at
// x = (1, 0, …) with label +1 on D and −1 on D′, the replace-one pair whose
// gradients differ most (‖∇ℓ − ∇ℓ′‖ = 2 at θ = 0).
func auditRows(n, d int) [2]*erm.Rows {
	var out [2]*erm.Rows
	for side := range 2 {
		x := mat.NewDense(n, d, nil)
		x.Set(n-1, 0, 1)
		y := make([]float64, n)
		for i := range y {
			y[i] = 1
		}
		if side == 1 {
			y[n-1] = -1
		}
		out[side] = erm.NewRows(x, y, nil)
	}
	return out
}

// balancedRows builds the neighbouring training sets of the Huber-loss
// output-perturbation audits: (n−2)/2 pairs of records at x = e₁ with labels
// +1 and −1, one record at x = 0, and the replaced record at x = e₁ with
// label +1 on D and −1 on D′. The pairs hold θ̂₁ near 0, where the Huber
// loss of both labels is in its linear part (margin < 1 − h), so the
// replaced record's gradient flips from −e₁ to +e₁ and ‖θ̂(D) − θ̂(D′)‖
// reaches the sensitivity bound (2/(nλ) for CMS11, 1/(nc) for Wang, Kifer &
// Lee) exactly.
func balancedRows(n, d int) [2]*erm.Rows {
	var out [2]*erm.Rows
	for side := range 2 {
		x := mat.NewDense(n, d, nil)
		y := make([]float64, n)
		for i := 0; i < n-2; i++ {
			x.Set(i, 0, 1)
			y[i] = float64(1 - 2*(i%2))
		}
		y[n-2] = 1
		x.Set(n-1, 0, 1)
		y[n-1] = float64(1 - 2*side)
		out[side] = erm.NewRows(x, y, nil)
	}
	return out
}

const (
	ermN = 10 // records of the ERM audits
	ermD = 2  // features of the ERM audits
)

// fixedH is a hypothesis with a known excess risk, the query answer of the
// AboveThreshold audit.
type fixedH float64

func (h fixedH) Bounds() (float64, float64) { return float64(h), float64(h) }
func (h fixedH) Excess() (float64, error)   { return float64(h), nil }
func (h fixedH) Theta() ([]float64, error)  { return nil, nil }

// atQueries is the number of queries of the AboveThreshold audit.
const atQueries = 8

// scoreProc is a tune.Procedure with fixed validation scores: candidate i
// "trains" to i and scores q[i]. It isolates the selection step of
// Algorithm 1 (the training noise is not what the selection must hide).
type scoreProc struct{ q []float64 }

func (p scoreProc) K() int { return len(p.q) }
func (p scoreProc) Train(_ *rand.Rand, i int, _ float64, _, _ int) (int, error) {
	return i, nil
}
func (p scoreProc) Score(h int) float64  { return p.q[h] }
func (p scoreProc) Errors(h int) float64 { return -p.q[h] }

// selectionScores are the candidate scores of the selection audits on D
// and D′: candidate 0 leads on D by s, every other leads on D′ by s, the
// pair that drives the exponential mechanism's ratio towards e^ε.
func selectionScores(k int, s float64) [2][]float64 {
	var q [2][]float64
	for side := range 2 {
		q[side] = make([]float64, k)
		for i := range q[side] {
			if (i == 0) == (side == 0) {
				q[side][i] = s
			}
		}
	}
	return q
}

// targets returns the audited mechanisms by name.
func targets() map[string]target {
	list := []target{
		scalar(target{name: "laplace", what: "f(D)=0, f(D′)=Δ=1; s0 = the release"}, 0,
			func(x, mul, _ float64) (func(*rand.Rand, float64) float64, error) {
				m, err := mech.NewLaplace(mul*x, 1)
				if err != nil {
					return nil, err
				}
				// The release path of the harness (secure construction
				// under --secure-noise; f + Lap(b) otherwise).
				return func(rng *rand.Rand, f float64) float64 { return mech.AddLaplace(rng, f, m.Scale()) }, nil
			}),
		scalar(target{name: "laplace-secure", what: "f(D)=0.1, f(D′)=1.1 (Δ=1), the floating-point-safe construction of --secure-noise (grid + exact discrete Laplace) on seeded bits; s0 = the release"}, 0.1,
			func(x, mul, _ float64) (func(*rand.Rand, float64) float64, error) {
				b := 1 / (mul * x)
				return func(rng *rand.Rand, f float64) float64 { return mech.SecureLaplace(rng, f, b) }, nil
			}),
		scalar(target{name: "gaussian-zcdp-secure", what: "f(D)=0.1, f(D′)=1.1 (Δ₂=1), ρ = ε²/2, the floating-point-safe construction of --secure-noise (grid + exact discrete Gaussian) on seeded bits; s0 = the release", zcdp: true}, 0.1,
			func(x, mul, _ float64) (func(*rand.Rand, float64) float64, error) {
				sigma := 1 / (mul * x) // σ = Δ/√(2ρ) with ρ = (mul·x)²/2
				return func(rng *rand.Rand, f float64) float64 { return mech.SecureGaussian(rng, f, sigma) }, nil
			}),
		scalar(target{name: "gaussian-dp", what: "f(D)=0, f(D′)=Δ₂=1, σ of Dwork & Roth Thm A.1 (half noise: calibrated to Δ₂ = 1/2); s0 = the release", approx: true,
			ok: func(x float64) bool { return x < 1 }}, 0,
			func(x, mul, delta float64) (func(*rand.Rand, float64) float64, error) {
				// Theorem A.1 needs ε < 1: halve the noise through the
				// sensitivity instead of doubling ε.
				m, err := mech.NewGaussianDP(x, delta, 1/mul)
				if err != nil {
					return nil, err
				}
				return func(rng *rand.Rand, f float64) float64 { return mech.AddGaussian(rng, f, m.Sigma()) }, nil
			}),
		scalar(target{name: "gaussian-zcdp", what: "f(D)=0, f(D′)=Δ₂=1, ρ = ε²/2; s0 = the release", zcdp: true}, 0,
			func(x, mul, _ float64) (func(*rand.Rand, float64) float64, error) {
				m, err := mech.NewGaussianZCDP(mul*mul*x*x/2, 1)
				if err != nil {
					return nil, err
				}
				return func(rng *rand.Rand, f float64) float64 { return mech.AddGaussian(rng, f, m.Sigma()) }, nil
			}),
		{
			name: "spherical-laplace", what: "f(D)=0, f(D′)=e₁ in R⁴ (Δ₂=1), density ∝ exp(−ε‖b‖); s0 = first coordinate, s1 = norm",
			stats: 2, variants: []string{HalfNoise, Sensitivity2},
			sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
				mul, shift := noiseScale(v)
				b := make([]float64, 4)
				return func(dst []float64, rng *rand.Rand, side int) error {
					if err := mech.SphericalLaplace(b, rng, mul*x); err != nil {
						return err
					}
					b[0] += sideValue(side, shift)
					dst[0] = b[0]
					dst[1] = math.Sqrt(b[0]*b[0] + b[1]*b[1] + b[2]*b[2] + b[3]*b[3])
					return nil
				}, nil
			},
		},
		selector("exponential", "", mech.Exponential),
		selector("report-noisy-max", ", exponential noise", mech.ReportNoisyMax),
		{
			name: "randomized-response", what: "private bit 0 on D, 1 on D′; s0 = the report",
			stats: 1, variants: []string{HalfNoise},
			sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
				mul, _ := noiseScale(v)
				return func(dst []float64, rng *rand.Rand, side int) error {
					b, err := mech.RandomizedResponse(rng, side == 1, mul*x)
					dst[0] = 0
					if b {
						dst[0] = 1
					}
					return err
				}, nil
			},
		},
		objPertCMS("objpert-cms11-lr", nil),
		objPertCMS("objpert-cms11-huber", erm.Huber{H: 0.5}),
		objPertWKL("objpert-wkl-lr", dpci.LR),
		objPertWKL("objpert-wkl-svm", dpci.SVM),
		{
			name: "outpert-cms11-huber", what: "10 records: 4 pairs at x=e₁ with labels ±1, one at x=0, one at x=e₁ with label +1 on D and −1 on D′; Huber h=0.5, λ=1 (CMS11 Algorithm 1; ‖θ̂(D) − θ̂(D′)‖ = 2/(nλ), the sensitivity); s0 = θ₁, s1 = θ₂",
			fits: true, stats: 2, variants: []string{HalfNoise},
			sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
				mul, _ := noiseScale(v)
				rows := balancedRows(ermN, ermD)
				opts := perturb.OutPertOptions{Epsilon: mul * x, Lambda: 1, Loss: erm.Huber{H: 0.5}}
				return func(dst []float64, rng *rand.Rand, side int) error {
					res, _, err := perturb.OutputPerturbation(rng, rows[side], opts, erm.FitOptions{})
					if err != nil {
						return err
					}
					copy(dst, res.W)
					return nil
				}, nil
			},
		},
		outPertWKL("outpert-wkl-dp", dpci.DP),
		outPertWKL("outpert-wkl-zcdp", dpci.ZCDP),
		{
			name: "noise-reduction", what: "f(D)=0, f(D′)=Δ=1, noise-reduction chain of 8 levels from ε/8 to ε, the whole prefix released; s0 = last value, s1 = mean of the prefix",
			stats: 2, variants: []string{HalfNoise, Sensitivity2},
			sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
				mul, shift := noiseScale(v)
				grid, err := noisered.Geometric(mul*x/8, mul*x, 8)
				if err != nil {
					return nil, err
				}
				val := make([]float64, 1)
				return func(dst []float64, rng *rand.Rand, side int) error {
					val[0] = sideValue(side, shift)
					c, err := noisered.New(rng, val, 1, grid)
					if err != nil {
						return err
					}
					var sum float64
					for c.Next() {
						sum += c.Value()[0]
					}
					dst[0] = c.Value()[0]
					dst[1] = sum / float64(c.Len())
					return nil
				}, nil
			},
		},
		{
			name: "above-threshold", what: "InteractiveAboveThreshold (Ligett et al. Algorithm 2), threshold 0, 8 queries all 0 on D; on D′ the first 7 are −Δ and the last +Δ (Δ=1; each query moves by Δ, the pair of the tight SVT analysis); s0 = index of the first query above (9: none)",
			stats: 1, variants: []string{HalfNoise, Sensitivity2, NoThresholdNoise},
			// The best events (stopping at the last query, or never) have
			// probability ≈ 2⁻⁸.
			drawsMul: 10,
			sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
				mul, shift := noiseScale(v)
				eps := mul * x
				return func(dst []float64, rng *rand.Rand, side int) error {
					// Excess risk e of query t (the query is f = −e): 0 on D;
					// on D′ every query but the last moves down by Δ and the
					// last moves up by Δ.
					query := func(t int) fixedH {
						if t == atQueries {
							return fixedH(-sideValue(side, shift))
						}
						return fixedH(sideValue(side, shift))
					}
					dst[0] = atQueries + 1
					if v == NoThresholdNoise {
						// The broken variant, written out here: the same
						// comparisons with Ŵ = W.
						for t := 1; t <= atQueries; t++ {
							if -float64(query(t))+mech.LaplaceNoise(rng, 4/eps) >= 0 {
								dst[0] = float64(t)
								break
							}
						}
						return nil
					}
					at, err := expost.NewAboveThreshold(rng, eps, 0, 1)
					if err != nil {
						return err
					}
					for t := 1; t <= atQueries; t++ {
						ok, err := at.Test(query(t))
						if err != nil {
							return err
						}
						if ok {
							dst[0] = float64(t)
							break
						}
					}
					return nil
				}, nil
			},
		},
		{
			name: "stability-validation", what: "Chaudhuri & Vinterbo Algorithm 1's selection (tune.Validate), 5 candidates, validation scores (β,0,…,0) on D and (0,β,…,β) on D′, β=0.1; s0 = chosen index",
			stats: 1, variants: []string{HalfNoise, Sensitivity2},
			sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
				mul, shift := noiseScale(v)
				const beta = 0.1
				q := selectionScores(5, shift*beta)
				return func(dst []float64, rng *rand.Rand, side int) error {
					c, err := tune.Validate[int](rng, scoreProc{q[side]}, x, mul*x, beta)
					dst[0] = float64(c.Index)
					return err
				}, nil
			},
		},
		privSPD("privspdmat-dp", matHessian, dpci.DP),
		privSPD("privspdmat-zcdp", matHessian, dpci.ZCDP),
		privSPD("privspdmat-cov-dp", matGradCov, dpci.DP),
		privSPD("privspdmat-cov-zcdp", matGradCov, dpci.ZCDP),
		nrLevelTarget(),
		nrStepTarget(),
		objPertDelta(),
		doublingTarget(),
		{
			name: "histogram", what: "Algorithm 5 of Chaudhuri & Vinterbo, 4 bins, counts (21,20,20,20) on D and (20,21,20,20) on D′ (one record moved); s0 = density of bin 1 − bin 2, s1 = density of bin 1",
			stats: 2, variants: []string{HalfNoise},
			sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
				mul, _ := noiseScale(v)
				counts := [2][]int{{21, 20, 20, 20}, {20, 21, 20, 20}}
				return func(dst []float64, rng *rand.Rand, side int) error {
					e, err := histogram.Private(rng, counts[side], mul*x)
					if err != nil {
						return err
					}
					dst[0] = e.Dens[0] - e.Dens[1]
					dst[1] = e.Dens[0]
					return nil
				}, nil
			},
		},
	}
	m := map[string]target{}
	for _, t := range list {
		m[t.name] = t
	}
	return m
}

// scalar completes t as the audit of a scalar release on f(D) = base and
// f(D′) = base + Δ (Δ = 1; 2 for Sensitivity2), one statistic (the
// release). release builds the release function at parameter x with the
// privacy parameter multiplied by mul (2 for HalfNoise).
func scalar(t target, base float64, release func(x, mul, delta float64) (func(rng *rand.Rand, f float64) float64, error)) target {
	t.stats = 1
	t.variants = []string{HalfNoise, Sensitivity2}
	t.sampler = func(x float64, v string, delta float64) (audit.Sampler, error) {
		mul, shift := noiseScale(v)
		rel, err := release(x, mul, delta)
		if err != nil {
			return nil, err
		}
		return func(dst []float64, rng *rand.Rand, side int) error {
			dst[0] = rel(rng, base+sideValue(side, shift))
			return nil
		}, nil
	}
	return t
}

// selector audits a selection mechanism (the exponential mechanism,
// report-noisy-max) on 10 candidates with sensitivity-1 scores.
func selector(name, noise string, pick func(rng *rand.Rand, scores []float64, epsilon, sensitivity float64) (int, error)) target {
	return target{
		name: name, what: "10 candidates, scores (1,0,…,0) on D and (0,1,…,1) on D′, Δ=1" + noise + "; s0 = chosen index",
		stats: 1, variants: []string{HalfNoise, Sensitivity2},
		sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
			mul, shift := noiseScale(v)
			q := selectionScores(10, shift)
			return func(dst []float64, rng *rand.Rand, side int) error {
				i, err := pick(rng, q[side], mul*x, 1)
				dst[0] = float64(i)
				return err
			}, nil
		},
	}
}

// objPertCMS audits objective perturbation as the tuning experiments run it
// (core/perturb, CMS11 Algorithm 2).
func objPertCMS(name string, loss erm.Loss) target {
	what, lambda, rows := "10 records, one at x=e₁ with label +1 on D and −1 on D′, λ=0.1 (CMS11 Algorithm 2); s0 = θ₁, s1 = θ₂", 0.1, auditRows(ermN, ermD)
	if _, ok := loss.(erm.Huber); ok {
		what, lambda, rows = "10 records: 4 pairs at x=e₁ with labels ±1, one at x=0, one at x=e₁ with label +1 on D and −1 on D′; Huber h=0.5, λ=5 keeps θ₁ in the loss's linear part, where the gradients differ by 2 (CMS11 Algorithm 2); s0 = θ₁, s1 = θ₂", 5, balancedRows(ermN, ermD)
	}
	return target{
		name: name, what: what,
		fits: true, stats: 2, variants: []string{HalfNoise},
		sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
			mul, _ := noiseScale(v)
			opts := perturb.ObjPertOptions{Epsilon: mul * x, Lambda: lambda, Loss: loss}
			return func(dst []float64, rng *rand.Rand, side int) error {
				res, _, err := perturb.ObjectivePerturbation(rng, rows[side], opts, erm.FitOptions{})
				if err != nil {
					return err
				}
				copy(dst, res.W)
				return nil
			}, nil
		},
	}
}

// wklParams are the dpci parameters of the audits of Wang, Kifer & Lee's
// mechanisms (c = 0.1 keeps ε′ > 0 down to ε = 0.25 at n = 10).
func wklParams(model dpci.Model, privacy dpci.Privacy, phi float64) dpci.Params {
	return dpci.Params{Model: model, H: 1, C: 0.1, Privacy: privacy, Phi1: phi, Phi2: 1, Phi3: 1, Alpha: 0.05}
}

// objPertWKL audits Algorithm 1 of Wang, Kifer & Lee (dpci.ObjPertFit).
func objPertWKL(name string, model dpci.Model) target {
	what, c, rows := "10 records, one at x=e₁ with label +1 on D and −1 on D′, c=0.1 (Wang, Kifer & Lee Algorithm 1); s0 = θ₁, s1 = θ₂", 0.1, auditRows(ermN, ermD)
	if model == dpci.SVM {
		what, c, rows = "10 records: 4 pairs at x=e₁ with labels ±1, one at x=0, one at x=e₁ with label +1 on D and −1 on D′; Huber SVM h=0.5, c=2.5 keeps θ₁ in the loss's linear part, where the gradients differ by 2 (Wang, Kifer & Lee Algorithm 1); s0 = θ₁, s1 = θ₂", 2.5, balancedRows(ermN, ermD)
	}
	params := func(phi float64) dpci.Params {
		p := wklParams(model, dpci.DP, phi)
		p.C = c
		if model == dpci.SVM {
			p.H = 0.5
		}
		return p
	}
	return target{
		name: name, what: what,
		fits: true, stats: 2, variants: []string{HalfNoise},
		ok: func(x float64) bool {
			p := params(x)
			_, err := dpci.EpsilonPrime(x, ermN, p.C, p.T())
			return err == nil
		},
		sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
			mul, _ := noiseScale(v)
			p := params(mul * x)
			return func(dst []float64, rng *rand.Rand, side int) error {
				res, _, err := dpci.ObjPertFit(rng, rows[side], p)
				if err != nil {
					return err
				}
				copy(dst, res.W)
				return nil
			}, nil
		},
	}
}

// outPertWKL audits Algorithm 4 of Wang, Kifer & Lee (dpci.OutPertFit).
func outPertWKL(name string, privacy dpci.Privacy) target {
	return target{
		name: name, what: "10 records: 4 pairs at x=e₁ with labels ±1, one at x=0, one at x=e₁ with label +1 on D and −1 on D′; Huber SVM h=0.5, c=0.5 (Wang, Kifer & Lee Algorithm 4; ‖θ̂(D) − θ̂(D′)‖ = 1/(nc), the sensitivity); s0 = θ₁, s1 = θ₂",
		fits: true, stats: 2, zcdp: privacy == dpci.ZCDP, variants: []string{HalfNoise},
		sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
			mul, _ := noiseScale(v)
			rows := balancedRows(ermN, ermD)
			phi := mul * x
			if privacy == dpci.ZCDP {
				phi = phi * phi / 2
			}
			p := wklParams(dpci.SVM, privacy, phi)
			p.H, p.C = 0.5, 0.5
			return func(dst []float64, rng *rand.Rand, side int) error {
				theta, _, err := dpci.OutPertFit(rng, rows[side], p)
				if err != nil {
					return err
				}
				copy(dst, theta)
				return nil
			}, nil
		},
	}
}
