//go:build !purego

package erm

// logisticRowsAVX2 is logisticRowsGo over the n rows at z, y, g1 and g2
// (n > 0, a multiple of 4), four rows at a time with AVX2 instructions in
// logistic_amd64.s: every lane performs the same IEEE operations in the
// same order as the Go loop compiled for amd64 without fused multiply-add
// (the default GOAMD64=v1), and the hinge sum and the product continue in
// row order, so the results are the same bit for bit.
//
//go:noescape
func logisticRowsAVX2(z, y, g1, g2 *float64, n int, hinge, prod float64) (hingeOut, prodOut float64)

// useAVX2 reports whether the kernels of this package run their AVX2 versions
// (logisticRowsAVX2, weightedRowsAVX2, dots4AVX2, marginsAVX2). It is a
// variable only so that a test can run the Go loop on a machine with AVX2
// and compare; nothing else assigns it.
var useAVX2 = hasAVX2()

// dots4AVX2 sets out[l] = floats.Dot(u[:n], cl[:n]) for l = 0…3 (n > 0),
// bit for bit (dots_amd64.s).
//
//go:noescape
func dots4AVX2(u *float64, n int, c0, c1, c2, c3 *float64, out *[4]float64)

// marginsAVX2 sets seg[i] = Σ_c ws[c]·x[offs[c]+i] for i < m (the sum
// from +0 in column order, each term multiplied then added), the values of
// clear followed by one floats.AddScaled per column, bit for bit
// (margins_amd64.s).
//
//go:noescape
func marginsAVX2(seg *float64, m int, x *float64, offs *int, ws *float64, ncols int)

// weightedRowsAVX2 is weightedRowsGo over the n rows at its pointers (n >
// 0, a multiple of 4), four rows at a time (logistic_amd64.s), bit for bit.
//
//go:noescape
func weightedRowsAVX2(z, y, omega, g1, g2, e, hz *float64, n int)
