package dpci

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/internal/stattest"
	"gonum.org/v1/gonum/mat"
)

// population is a finite-support law of (x, y): x uniform over K fixed
// points of the unit ball, y = ±1 with P(y = 1 | x) = S(θ*ᵀx). Its
// regularized risk E[f(x, y, θ)] + c‖θ‖² is a finite weighted sum, so the
// population minimizer θ₀ (the target of the intervals, Section 4.2) is
// computed exactly by a weighted fit over the 2K (x, y) pairs, with no
// Monte Carlo error.
type population struct {
	support *mat.Dense
	q       []float64 // P(y = 1 | x_k)
}

func newPopulation(rng *rand.Rand, k int, thetaStar []float64) population {
	d := len(thetaStar)
	pop := population{support: mat.NewDense(k, d, nil), q: make([]float64, k)}
	for i := 0; i < k; i++ {
		x := pop.support.RawRowView(i)
		ballRow(rng, x)
		pop.q[i] = sigmoid(dot(x, thetaStar))
	}
	return pop
}

// theta0 returns argmin E[f] + c‖θ‖² exactly (to GradTol 1e-13).
func (pop population) theta0(t *testing.T, p Params) []float64 {
	t.Helper()
	k, d := pop.support.Dims()
	X := mat.NewDense(2*k, d, nil)
	y := make([]float64, 2*k)
	w := make([]float64, 2*k)
	for i := 0; i < k; i++ {
		copy(X.RawRowView(2*i), pop.support.RawRowView(i))
		copy(X.RawRowView(2*i+1), pop.support.RawRowView(i))
		y[2*i], w[2*i] = 1, pop.q[i]
		y[2*i+1], w[2*i+1] = -1, 1-pop.q[i]
	}
	res, err := FitNonPrivate(erm.NewRows(X, y, nil).WithWeights(w), p, erm.FitOptions{GradTol: 1e-13})
	if err != nil || res.Status != erm.StatusConverged {
		t.Fatalf("population fit: %v %s", err, res.Status)
	}
	return res.W
}

func (pop population) sample(rng *rand.Rand, X *mat.Dense, y []float64) {
	k, _ := pop.support.Dims()
	for i := range y {
		s := rng.IntN(k)
		copy(X.RawRowView(i), pop.support.RawRowView(s))
		y[i] = -1
		if rng.Float64() < pop.q[s] {
			y[i] = 1
		}
	}
}

// TestNonPrivateAnalogue_Coverage checks the interval construction of
// Algorithms 3 and 5 without privacy noise: exact fit θ̂, exact H (Eq. 5)
// and Σ (Eq. 6) at θ̂, then the Monte Carlo interval of Eq. 4 with β
// dropped (ObjPertCI with ε′ = ∞, m = 1000) and the closed form of
// Algorithm 5 (GaussianCI, noiseVar = 0). Over R replicates of n = 20,000
// rows, each interval should cover θ₀ with probability ≈ 1 − α = 0.95.
//
// Tolerance: R Bernoulli(0.95) outcomes per coordinate, z·√(α(1−α)/R)
// with z = ZCrit(12) (2 models × 2 methods × 3 coordinates), ≈ 0.033 at
// R = 800; the asymptotic (CLT, Taylor) error at n = 20,000 and the Monte
// Carlo quantile error at m = 1000 (≈ 0.007 in coverage) are well inside.
func TestNonPrivateAnalogue_Coverage(t *testing.T) {
	const (
		n, d, k, R = 20000, 3, 40, 800
		alpha      = 0.05
	)
	if testing.Short() {
		t.Skip("coverage simulation skipped in short mode")
	}
	z := stattest.ZCrit(12)
	for _, p := range []Params{{Model: LR, C: 1e-3}, {Model: SVM, H: 0.5, C: 1e-3}} {
		t.Run(string(p.Model), func(t *testing.T) {
			t.Parallel()
			pop := newPopulation(randx.New(10, "pop"), k, []float64{2, -1.5, 1})
			th0 := pop.theta0(t, p)
			rng := randx.New(10, "cover", string(p.Model))
			X := mat.NewDense(n, d, nil)
			y := make([]float64, n)
			var covMC, covGauss [d]int
			for r := 0; r < R; r++ {
				pop.sample(rng, X, y)
				rows := erm.NewRows(X, y, nil)
				fit, err := FitNonPrivate(rows, p, erm.FitOptions{})
				if err != nil || fit.Status != erm.StatusConverged {
					t.Fatalf("fit: %v %s", err, fit.Status)
				}
				h, _ := Hessian(rows, p, fit.W)
				s, _ := GradCov(rows, p, fit.W)
				mc, err := ObjPertCI(context.Background(), rng, fit.W, h, s, n, math.Inf(1), alpha, 1000)
				if err != nil {
					t.Fatal(err)
				}
				g, err := GaussianCI(fit.W, h, s, n, 0, alpha)
				if err != nil {
					t.Fatal(err)
				}
				for j := 0; j < d; j++ {
					if mc.Covers(j, th0[j]) {
						covMC[j]++
					}
					if g.Covers(j, th0[j]) {
						covGauss[j]++
					}
				}
			}
			for j := 0; j < d; j++ {
				stattest.CheckProportion(t, fmt.Sprintf("MC coverage of θ₀[%d]", j), covMC[j], R, 1-alpha, z)
				stattest.CheckProportion(t, fmt.Sprintf("normal coverage of θ₀[%d]", j), covGauss[j], R, 1-alpha, z)
			}
			t.Logf("θ₀ = %.4f; coverage MC %v, normal %v of %d", th0, covMC, covGauss, R)
		})
	}
}
