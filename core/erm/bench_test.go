package erm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// benchRows builds the benchmark datasets: Adult-shaped (n = 24,000,
// d = 105, 15 nonzeros per row, one-hot) and Magic-shaped (n = 15,000,
// d = 11, dense), rows scaled to max ‖xᵢ‖₂ = 1.
func benchRows(b *testing.B, shape string) *Rows {
	b.Helper()
	rng := rand.New(rand.NewPCG(2013, 1))
	switch shape {
	case "adult":
		X, y := adultShape(rng, 24000)
		return NewRows(X, y, nil)
	case "magic":
		X, y := magicShape(rng, 15000)
		return NewRows(X, y, nil)
	case "adultstd":
		// Adult-shaped and standardized (every column centred and scaled,
		// as cv13-adult-all's data): every entry nonzero, d = 105 dense
		// columns.
		X, y := adultShape(rng, 24000)
		n, d := X.Dims()
		for j := 1; j < d; j++ {
			var m, ss float64
			for i := 0; i < n; i++ {
				m += X.At(i, j)
			}
			m /= float64(n)
			for i := 0; i < n; i++ {
				ss += (X.At(i, j) - m) * (X.At(i, j) - m)
			}
			sd := math.Sqrt(ss / float64(n))
			if sd == 0 {
				// A level the sample never drew (the real data have every
				// level): normal values, so that every column is dense.
				for i := 0; i < n; i++ {
					X.Set(i, j, rng.NormFloat64()/math.Sqrt(float64(d)))
				}
				continue
			}
			for i := 0; i < n; i++ {
				X.Set(i, j, (X.At(i, j)-m)/sd/math.Sqrt(float64(d)))
			}
		}
		return NewRows(X, y, nil)
	}
	b.Fatalf("unknown shape %q", shape)
	return nil
}

// benchCase is one fitting scenario of the experiments.
type benchCase struct {
	name   string
	lambda float64
	// linNorm is ‖Linear‖ = ‖b‖/n; 0.11 is objective perturbation at
	// ε = 0.1, λ = 1e-3, n = 24,000, d = 105: γ = ε′/2 ≈ 0.04, E‖b‖ = d/γ.
	linNorm float64
	// warm: start from the solution at 1.5λ (a regularization path).
	warm bool
	// bootstrap: multinomial weights, started from the full-data solution
	// (bootstrap by multiplicity: a replicate is a vector of row weights,
	// so no data is copied).
	bootstrap bool
}

var benchCases = []benchCase{
	{name: "lambda=1e-3", lambda: 1e-3},
	{name: "lambda=1e-3/warm", lambda: 1e-3, warm: true},
	{name: "lambda=1e-5", lambda: 1e-5},
	{name: "objpert/eps=0.1/lambda=1e-3", lambda: 1e-3, linNorm: 0.11},
	{name: "bootstrap/warm", lambda: 1e-3, bootstrap: true},
}

func benchFit(b *testing.B, shape string, bc benchCase) {
	rows := benchRows(b, shape)
	rng := rand.New(rand.NewPCG(7, 7))
	var lin []float64
	if bc.linNorm > 0 {
		lin = make([]float64, rows.D())
		for j := range lin {
			lin[j] = bc.linNorm * rng.NormFloat64() / math.Sqrt(float64(rows.D()))
		}
	}
	obj := Objective{Loss: Logistic{}, Lambda: bc.lambda, Linear: lin}
	var init []float64
	switch {
	case bc.warm:
		r0, err := Fit(rows, Objective{Loss: Logistic{}, Lambda: 1.5 * bc.lambda}, FitOptions{})
		if err != nil {
			b.Fatal(err)
		}
		init = r0.W
	case bc.bootstrap:
		r0, err := Fit(rows, obj, FitOptions{})
		if err != nil {
			b.Fatal(err)
		}
		init = r0.W
		omega := make([]float64, rows.N())
		for k := 0; k < rows.N(); k++ {
			omega[rng.IntN(rows.N())]++
		}
		rows = rows.WithWeights(omega)
		rows.gramMatrix() // not used from a warm start; keep it out of the timing
	default:
		rows.gramMatrix() // cached per Rows across the many fits of a fold
	}
	ws := new(Workspace)
	var iters, hess int
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := Fit(rows, obj, FitOptions{Init: init, Work: ws})
		if err != nil {
			b.Fatal(err)
		}
		if res.Status != StatusConverged {
			b.Fatalf("status %s after %d iterations, gradient norm %g", res.Status, res.Iter, res.GradNorm)
		}
		iters, hess = res.Iter, res.Hessians
	}
	b.ReportMetric(float64(iters), "newton-iters")
	b.ReportMetric(float64(hess), "hessians")
}

func BenchmarkFitLogisticAdultShape(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) { benchFit(b, "adult", bc) })
	}
}

func BenchmarkFitLogisticMagicShape(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) { benchFit(b, "magic", bc) })
	}
}

// BenchmarkHessianBuild times one Hessian build (sparse pair accumulation on
// Adult, column dot products on Magic).
func BenchmarkHessianBuild(b *testing.B) {
	for _, shape := range []string{"adult", "magic", "adultstd"} {
		b.Run(shape, func(b *testing.B) {
			rows := benchRows(b, shape)
			s := make([]float64, rows.N())
			for i := range s {
				s[i] = 0.25
			}
			h := make([]float64, rows.D()*rows.D())
			scratch := make([]float64, rows.N())
			b.ResetTimer()
			for b.Loop() {
				buildHessian(h, rows, s, scratch, 1e-3, 1/rows.SumWeights())
			}
		})
	}
}

// BenchmarkGradientPass times the per-step passes: margins, fused loss and
// gradient (XᵀΩ·ℓ′).
func BenchmarkGradientPass(b *testing.B) {
	for _, shape := range []string{"adult", "magic"} {
		b.Run(shape, func(b *testing.B) {
			rows := benchRows(b, shape)
			n, d := rows.N(), rows.D()
			w := make([]float64, d)
			for j := range w {
				w[j] = 0.1 * float64(j%7-3)
			}
			m, g1, g2, g := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, d)
			b.ResetTimer()
			for b.Loop() {
				rows.margins(m, w, rows.y)
				evalLoss(Logistic{}, m, rows.y, nil, g1, g2)
				clear(g)
				rows.mulTransAdd(g, g1)
			}
		})
	}
}

// BenchmarkEvalLoss times evalLoss alone, the per-row logistic loss and
// its first two derivatives that every Newton step and line-search trial
// evaluates: unweighted (a fit on the data) and with bootstrap
// multiplicities as row weights (the variability-interval and bootstrap
// fits; about 37 % of the weights 0, the rest small integers).
func BenchmarkEvalLoss(b *testing.B) {
	for _, shape := range []string{"adult", "magic"} {
		for _, weighted := range []bool{false, true} {
			name := shape + "/unweighted"
			if weighted {
				name = shape + "/bootstrap"
			}
			b.Run(name, func(b *testing.B) {
				rows := benchRows(b, shape)
				n, d := rows.N(), rows.D()
				w := make([]float64, d)
				for j := range w {
					w[j] = 0.1 * float64(j%7-3)
				}
				m, g1, g2 := make([]float64, n), make([]float64, n), make([]float64, n)
				rows.margins(m, w, rows.y)
				var omega []float64
				if weighted {
					rng := rand.New(rand.NewPCG(7, 8))
					omega = make([]float64, n)
					for k := 0; k < n; k++ {
						omega[rng.IntN(n)]++
					}
				}
				b.ReportAllocs()
				for b.Loop() {
					evalLoss(Logistic{}, m, rows.y, omega, g1, g2)
				}
			})
		}
	}
}

// BenchmarkWeightedLogisticTrial times one line-search trial of Fit on
// weighted logistic rows — trial margins m + t·q, the loss sum and its
// first two derivatives — fused (weightedLogisticPass) against the path
// it replaced (floats.AddScaledTo, then the weighted loop evalLoss had,
// refWeightedLogisticLoop), with bootstrap multiplicities as weights:
// "withweights" keeps the ≈ 37 % zero-weight rows (Rows.WithWeights),
// "resample" stores only the drawn rows, all weights ≥ 1 (Rows.Resample,
// as the variability-interval fits of kinds/cicoverage do).
func BenchmarkWeightedLogisticTrial(b *testing.B) {
	for _, shape := range []string{"adult", "magic"} {
		for _, layout := range []string{"withweights", "resample"} {
			for _, impl := range []string{"fused", "reference"} {
				b.Run(shape+"/"+layout+"/"+impl, func(b *testing.B) {
					rows := benchRows(b, shape)
					n := rows.N()
					rng := rand.New(rand.NewPCG(7, 9))
					counts := make([]int32, n)
					for k := 0; k < n; k++ {
						counts[rng.IntN(n)]++
					}
					omega := make([]float64, 0, n)
					for _, c := range counts {
						if c > 0 || layout == "withweights" {
							omega = append(omega, float64(c))
						}
					}
					n = len(omega)
					m, q, y := make([]float64, n), make([]float64, n), make([]float64, n)
					for i := range m {
						m[i] = 2 * rng.NormFloat64()
						q[i] = 0.5 * rng.NormFloat64()
						y[i] = float64(2*rng.IntN(2) - 1)
					}
					dst, g1, g2 := make([]float64, n), make([]float64, n), make([]float64, n)
					b.ReportAllocs()
					for b.Loop() {
						if impl == "fused" {
							weightedLogisticPass(dst, m, 0.5, q, y, omega, g1, g2)
						} else {
							refWeightedPass(dst, m, 0.5, q, y, omega, g1, g2)
						}
					}
				})
			}
		}
	}
}

// BenchmarkLogisticSum times the streaming loss evaluation of a fixed
// hypothesis ([Rows.LogisticSum], the Accuracy-First excess-risk query and
// the privacy audit's doubling test): "magic" on the Magic-shaped rows, and
// "tiny" on 12 rows of dimension 3 (the audit's neighbouring datasets),
// where per-call overhead such as allocating the margin buffer dominates.
func BenchmarkLogisticSum(b *testing.B) {
	tiny := NewRows(mat.NewDense(12, 3, []float64{
		1, 0, 0, 0, 1, 0, 0, 0, 1, 0.5, 0.5, 0, 0, 0.5, 0.5, 0.5, 0, 0.5,
		-1, 0, 0, 0, -1, 0, 0, 0, -1, 0.3, -0.3, 0, 0, 0.3, -0.3, -0.3, 0, 0.3,
	}), []float64{1, 1, 1, -1, -1, -1, 1, -1, 1, -1, 1, -1}, nil)
	for _, c := range []struct {
		name string
		rows func() *Rows
	}{{"tiny", func() *Rows { return tiny }}, {"magic", func() *Rows { return benchRows(b, "magic") }}} {
		b.Run(c.name, func(b *testing.B) {
			rows := c.rows()
			w := make([]float64, rows.D())
			for j := range w {
				w[j] = 0.1 * float64(j%7-3)
			}
			b.ReportAllocs()
			for b.Loop() {
				rows.LogisticSum(w)
			}
		})
	}
}

// BenchmarkSubset times building a training fold (80 % of the rows, in
// order) from a dataset's rows: "adult" one-hot (sparse columns beside a
// few dense ones), "adultstd" standardized (every column dense in every
// row), "magic" dense.
func BenchmarkSubset(b *testing.B) {
	for _, shape := range []string{"adult", "adultstd", "magic"} {
		b.Run(shape, func(b *testing.B) {
			rows := benchRows(b, shape)
			rng := rand.New(rand.NewPCG(3, 4))
			var idx []int
			for i := 0; i < rows.N(); i++ {
				if rng.Float64() < 0.8 {
					idx = append(idx, i)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				rows.Subset(idx)
			}
		})
	}
}
