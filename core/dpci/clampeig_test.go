package dpci

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// clampEigReference is clampEig as it was before its scratch: through
// mat.EigenSym on a copy of s.
func clampEigReference(dst *mat.SymDense, s mat.Symmetric, floor float64) (*mat.SymDense, error) {
	d := s.SymmetricDim()
	if dst == nil {
		dst = mat.NewSymDense(d, nil)
	} else if dst.SymmetricDim() != d {
		panic(fmt.Sprintf("dpci: dst is %d×%d, want %d×%d", dst.SymmetricDim(), dst.SymmetricDim(), d, d))
	}
	var es mat.EigenSym
	if !es.Factorize(s, true) {
		return nil, fmt.Errorf("dpci: eigendecomposition failed")
	}
	lam := es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	for k := range lam {
		lam[k] = math.Max(lam[k], floor)
	}
	// Build Σₖ λₖ vₖvₖᵀ entry by entry (upper triangle), so the output is
	// exactly symmetric.
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			var sum float64
			for k, l := range lam {
				sum += l * v.At(i, k) * v.At(j, k)
			}
			dst.SetSym(i, j, sum)
		}
	}
	return dst, nil
}

// TestClampEig_SameBits checks that the pooled clampEig (dsyev run in
// place on the scratch) gives, bit for bit, what mat.EigenSym gave, on
// random symmetric matrices of the sizes the harness uses (3 in the audit,
// 11 in the tables) and others, with floors below, among and above the
// eigenvalues, and that a reused scratch keeps nothing of an earlier call.
func TestClampEig_SameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	for _, d := range []int{1, 2, 3, 5, 11, 3} {
		for trial := 0; trial < 50; trial++ {
			s := mat.NewSymDense(d, nil)
			for i := 0; i < d; i++ {
				for j := i; j < d; j++ {
					s.SetSym(i, j, rng.NormFloat64()*math.Exp(3*rng.NormFloat64()))
				}
			}
			for _, floor := range []float64{1e-9, 0.3, 5} {
				want, err := clampEigReference(nil, s, floor)
				if err != nil {
					t.Fatal(err)
				}
				sc := eigPool.Get().(*eigScratch)
				sc.reset(d)
				for i := 0; i < d; i++ {
					for j := i; j < d; j++ {
						sc.a[i*d+j] = s.At(i, j)
					}
				}
				got, err := sc.clampEig(nil, d, floor)
				eigPool.Put(sc)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < d; i++ {
					for j := 0; j < d; j++ {
						if math.Float64bits(got.At(i, j)) != math.Float64bits(want.At(i, j)) {
							t.Fatalf("d = %d, floor %v: [%d][%d] = %v, mat.EigenSym's %v", d, floor, i, j, got.At(i, j), want.At(i, j))
						}
					}
				}
			}
		}
	}
}
