//go:build !amd64 || purego

package erm

// useAVX2 is false where there is no assembly kernel: logisticRows
// runs the Go loop.
var useAVX2 = false

func logisticRowsAVX2(z, y, g1, g2 *float64, n int, hinge, prod float64) (hingeOut, prodOut float64) {
	panic("erm: logisticRowsAVX2 without the amd64 kernel")
}

func dots4AVX2(u *float64, n int, c0, c1, c2, c3 *float64, out *[4]float64) {
	panic("erm: dots4AVX2 without the amd64 kernel")
}

func marginsAVX2(seg *float64, m int, x *float64, offs *int, ws *float64, ncols int) {
	panic("erm: marginsAVX2 without the amd64 kernel")
}

func weightedRowsAVX2(z, y, omega, g1, g2, e, hz *float64, n int) {
	panic("erm: weightedRowsAVX2 without the amd64 kernel")
}
