package privaudit

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/audit"
	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/perturb"
)

// NoDelta is objective perturbation (CMS11 Algorithm 2) in its
// Δ-regularized branch (ε′ ≤ 0) with the extra regularization Δ dropped
// from the fitted objective: the plan (ε′ = ε/2, noise rate ε/4) is right
// but the curvature term it was paid for is not.
const NoDelta = "no-delta"

// Parameters of the audit of CMS11's Δ-regularized branch: n = ermN
// records, λ = deltaLambda, so nλ = 0.05 and
// ε − log(1 + 2c/(nλ) + c²/(n²λ²)) = ε − 2·log 6 ≤ 0 for every ε ≤ 3.58
// (logistic loss, c = 1/4): the branch is taken at every audited ε.
const deltaLambda = 0.005

// curvaturePair builds the neighbouring training sets that drive the
// Jacobian term of objective perturbation's privacy loss (the
// log-determinant ratio of the proof of CMS11 Theorem 6 / Wang, Kifer & Lee
// Theorem 1): n−1 records at x = 0 with label +1 (no influence on the
// objective), and the replaced record at x = e₁ with label +1 on D and at
// x = 0 on D′. At θ₁ = 0 the record's curvature ℓ″(0)·e₁e₁ᵀ = c·e₁e₁ᵀ is
// present on D and absent on D′, the largest ratio
// det(nΛI + c·e₁e₁ᵀ)/det(nΛI) = 1 + c/(nΛ) a replace-one pair can make
// (Λ the total ℓ2 coefficient). The label-flip pair of auditRows cannot
// show it: ℓ″ is even, so the flip leaves the Hessian unchanged.
func curvaturePair(n, d int) [2]*erm.Rows {
	var out [2]*erm.Rows
	for side := range 2 {
		x := mat.NewDense(n, d, nil)
		if side == 0 {
			x.Set(n-1, 0, 1)
		}
		y := make([]float64, n)
		for i := range y {
			y[i] = 1
		}
		out[side] = erm.NewRows(x, y, nil)
	}
	return out
}

// objPertDelta audits CMS11 Algorithm 2 (core/perturb, as the tuning
// experiments run it) in its Δ-regularized branch on curvaturePair. With Δ
// the log-determinant term is at most ε/4 (Δ is chosen so that
// log(1 + c/(n(λ + Δ))) = ε/4); without it (NoDelta) the term reaches
// log(1 + c/(nλ)) = log 6 ≈ 1.79 at θ₁ = 0, whatever ε.
func objPertDelta() target {
	return target{
		name: "objpert-cms11-delta",
		what: "10 records: 9 at x=0, the replaced one at x=e₁ on D and at x=0 on D′ (labels +1); logistic, λ=0.005 (nλ = 0.05: ε′ ≤ 0, CMS11 Algorithm 2's Δ-regularized branch at every ε ≤ 3.58); s0 = θ₁, s1 = |θ₁|",
		// The telling event, |θ₁| small, has probability about 1 % on D′
		// (θ = −b/(nΛ) there is spread over hundreds).
		fits: true, drawsMul: 5,
		stats: 2, variants: []string{NoDelta},
		ok: func(x float64) bool {
			p, err := perturb.PlanObjPert(perturb.ObjPertOptions{Epsilon: x, Lambda: deltaLambda}, ermN)
			return err == nil && p.Fallback
		},
		sampler: func(x float64, v string, _ float64) (audit.Sampler, error) {
			rows := curvaturePair(ermN, ermD)
			plan, err := perturb.PlanObjPert(perturb.ObjPertOptions{Epsilon: x, Lambda: deltaLambda}, ermN)
			if err != nil {
				return nil, err
			}
			if v == NoDelta {
				plan.Delta = 0
			}
			b := make([]float64, ermD)
			return func(dst []float64, rng *rand.Rand, side int) error {
				var res erm.Result
				var err error
				if v == NoDelta {
					if err := plan.DrawNoise(b, rng); err != nil {
						return err
					}
					res, err = plan.Fit(rows[side], b, erm.FitOptions{})
				} else {
					res, _, err = perturb.ObjectivePerturbation(rng, rows[side], perturb.ObjPertOptions{Epsilon: x, Lambda: deltaLambda}, erm.FitOptions{})
				}
				if err != nil {
					return err
				}
				dst[0] = res.W[0]
				dst[1] = math.Abs(res.W[0])
				return nil
			}, nil
		},
	}
}
