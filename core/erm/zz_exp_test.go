package erm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestZZExperiment(t *testing.T) {
	rng := rand.New(rand.NewPCG(2013, 1))
	Xa, ya := adultShape(rng, 24000)
	ra := NewRows(Xa, ya, nil)
	Xm, ym := magicShape(rng, 15000)
	rm := NewRows(Xm, ym, nil)
	noise := func(d int, scale float64) []float64 {
		b := make([]float64, d)
		var ss float64
		for j := range b {
			b[j] = rng.NormFloat64()
			ss += b[j] * b[j]
		}
		for j := range b {
			b[j] *= scale / math.Sqrt(ss)
		}
		return b
	}
	type sc struct {
		name string
		rows *Rows
		lam  float64
		lin  float64
	}
	var scs []sc
	for _, r := range []struct {
		n string
		r *Rows
	}{{"adult", ra}, {"magic", rm}} {
		for _, lam := range []float64{1e-1, 1e-2, 1e-3, 1e-4, 1e-5} {
			scs = append(scs, sc{r.n, r.r, lam, 0})
		}
		scs = append(scs, sc{r.n + "/op-eps0.1", r.r, 1e-3, 0.11}, sc{r.n + "/op-eps1", r.r, 1e-3, 0.011}, sc{r.n + "/op-eps0.1-lam1e-2", r.r, 1e-2, 0.11})
	}
	for _, ratio := range []float64{reuseRatio} {
		var tot time.Duration
		for _, s := range scs {
			var lin []float64
			if s.lin > 0 {
				lin = noise(s.rows.D(), s.lin)
			}
			obj := Objective{Loss: Logistic{}, Lambda: s.lam, Linear: lin}
			best := time.Hour
			var res Result
			ws := new(Workspace)
			for k := 0; k < 5; k++ {
				t0 := time.Now()
				res, _ = Fit(s.rows, obj, FitOptions{Work: ws})
				if e := time.Since(t0); e < best {
					best = e
				}
			}
			tot += best
			fmt.Printf("r=%.2f %-24s lam=%g %6.2fms it=%2d H=%d %s g=%.1e |w|=%.1f\n", ratio, s.name, s.lam, best.Seconds()*1e3, res.Iter, res.Hessians, res.Status, res.GradNorm, math.Sqrt(dot(res.W, res.W)))
		}
		fmt.Printf("r=%.2f TOTAL %.1fms\n", ratio, tot.Seconds()*1e3)
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
