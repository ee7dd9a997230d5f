package erm

import "gonum.org/v1/gonum/floats"

// addColumnDots adds floats.Dot(u, cₖ) to dst[idx[k−k0]] (dst[k] when idx
// is nil) for the dense columns k ∈ [k0, k1) of r, each restricted to the
// rows [lo, lo+len(u)): cₖ = r.dm[k·n+lo : k·n+lo+len(u)]. The sums are
// added in column order. With AVX2 (useAVX2) four columns at a time go
// through dots4AVX2, which computes each Dot bit for bit as gonum does (a
// group short of four repeats its last column and drops the extra
// results), so the values are the same either way.
func (r *Rows) addColumnDots(dst []float64, idx []int, u []float64, lo, k0, k1 int) {
	n, m := r.n, len(u)
	at := func(k int) int {
		if idx != nil {
			return idx[k-k0]
		}
		return k
	}
	if k1 <= k0 {
		return
	}
	if !useAVX2 || m == 0 {
		for k := k0; k < k1; k++ {
			dst[at(k)] += floats.Dot(u, r.dm[k*n+lo:k*n+lo+m])
		}
		return
	}
	_ = r.dm[(k1-1)*n+lo+m-1] // every column's rows are in range
	var out [4]float64
	for k := k0; k < k1; k += 4 {
		c3 := min(k+3, k1-1)
		c2, c1 := min(k+2, c3), min(k+1, c3)
		dots4AVX2(&u[0], m, &r.dm[k*n+lo], &r.dm[c1*n+lo], &r.dm[c2*n+lo], &r.dm[c3*n+lo], &out)
		for l := 0; l < 4 && k+l < k1; l++ {
			dst[at(k+l)] += out[l]
		}
	}
}

// maxKernelCols bounds the dense columns that marginsBlock hands to
// marginsAVX2 (its weights and offsets live in arrays on the stack, 4 KiB);
// a design with more runs the Go loop. 256 covers standardized Adult with
// all attributes (105 dense columns): its quick cv13-adult-all run takes
// 0.78 of the CPU it took with a bound of 64, which sent it to the Go loop.
const maxKernelCols = 256
