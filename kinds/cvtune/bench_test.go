package cvtune

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/dprepro/dprepro/runner"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/perturb"
	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/experiments"
)

// benchExperiment loads the paper spec of a dataset (real data from
// $DPREPRO_DATA, else the synthetic stand-in of the same shape).
func benchExperiment(b *testing.B, name string) *Experiment {
	b.Helper()
	s, err := experiments.Load("../../experiments/cv13-"+name+".toml", "paper", testKinds)
	if err != nil {
		b.Fatal(err)
	}
	e, err := New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %s data", name, e.data[0].Source.Kind)
	return e
}

// BenchmarkObjPertFit times one objective-perturbation logistic fit
// (CMS11 Algorithm 2) on the training set of one CV round (8 of 10 folds):
// Adult n = 24,130, d = 105 (sparse one-hot); Magic n = 15,216, d = 11.
func BenchmarkObjPertFit(b *testing.B) {
	for _, name := range []string{"adult", "magic"} {
		for _, c := range []struct{ eps, lambda float64 }{{0.5, 0.001}, {0.5, 1}, {5, 0.112}} {
			b.Run(fmt.Sprintf("%s/eps=%v/lambda=%v", name, c.eps, c.lambda), func(b *testing.B) {
				e := benchExperiment(b, name)
				ds := e.data[0]
				folds := e.folds[foldKey(ds.Name, 1)]
				var train []int
				for _, f := range folds[2:] {
					train = append(train, f...)
				}
				rows := erm.NewRows(ds.X, ds.Y, train)
				plan, err := perturb.PlanObjPert(perturb.ObjPertOptions{Epsilon: c.eps, Lambda: c.lambda, Loss: erm.Logistic{}}, rows.N())
				if err != nil {
					b.Fatal(err)
				}
				_, d := ds.X.Dims()
				noise := make([]float64, d)
				rng := randx.New(1, "bench")
				iters, hessians := 0, 0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := plan.DrawNoise(noise, rng); err != nil {
						b.Fatal(err)
					}
					res, err := plan.Fit(rows, noise, erm.FitOptions{})
					if err != nil {
						b.Fatal(err)
					}
					iters += res.Iter
					hessians += res.Hessians
				}
				b.ReportMetric(float64(iters)/float64(b.N), "newton-iters/op")
				b.ReportMetric(float64(hessians)/float64(b.N), "hessians/op")
			})
		}
	}
}

// BenchmarkCVCell times one replicate unit (one method at one α on one CV
// round), including building T, V and W and scoring on W.
func BenchmarkCVCell(b *testing.B) {
	for _, name := range []string{"adult", "magic"} {
		for _, m := range []string{"stability", "alphaSplit", "dataSplit", "random", "control"} {
			b.Run(name+"/"+m, func(b *testing.B) {
				e := benchExperiment(b, name)
				key := fmt.Sprintf("%s/alpha=1/%s/rep=1/fold=1", name, m)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := runner.RunKey(context.Background(), e, key); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
