package erm

import (
	"math/rand/v2"
	"testing"
)

// benchProblem builds the benchmark datasets once per benchmark.
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
	}
	b.Fatalf("unknown shape %q", shape)
	return nil
}

func benchFit(b *testing.B, shape string, lambda float64, warm bool) {
	rows := benchRows(b, shape)
	obj := Objective{Loss: Logistic{}, Lambda: lambda}
	ws := new(Workspace)
	var init []float64
	if warm {
		// Warm start from the solution at a neighbouring λ, as in a
		// regularization path or a bootstrap replicate.
		r0, err := Fit(rows, Objective{Loss: Logistic{}, Lambda: 1.5 * lambda}, FitOptions{})
		if err != nil {
			b.Fatal(err)
		}
		init = r0.W
	}
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
	for _, bc := range []struct {
		name   string
		lambda float64
		warm   bool
	}{
		{"lambda=1e-3", 1e-3, false},
		{"lambda=1e-3/warm", 1e-3, true},
		{"lambda=1e-5", 1e-5, false},
	} {
		b.Run(bc.name, func(b *testing.B) { benchFit(b, "adult", bc.lambda, bc.warm) })
	}
}

func BenchmarkFitLogisticMagicShape(b *testing.B) {
	for _, bc := range []struct {
		name   string
		lambda float64
		warm   bool
	}{
		{"lambda=1e-3", 1e-3, false},
		{"lambda=1e-3/warm", 1e-3, true},
		{"lambda=1e-5", 1e-5, false},
	} {
		b.Run(bc.name, func(b *testing.B) { benchFit(b, "magic", bc.lambda, bc.warm) })
	}
}

func BenchmarkHessianBuild(b *testing.B) {
	for _, shape := range []string{"adult", "magic"} {
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
