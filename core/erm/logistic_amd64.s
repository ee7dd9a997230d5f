//go:build !purego

#include "textflag.h"

// Four copies of a float64 bit pattern: an AVX2 memory operand.
#define CONST4(name, bits) \
	DATA name<>+0(SB)/8, $bits \
	DATA name<>+8(SB)/8, $bits \
	DATA name<>+16(SB)/8, $bits \
	DATA name<>+24(SB)/8, $bits \
	GLOBL name<>(SB), RODATA|NOPTR, $32

CONST4(absmask, 0x7fffffffffffffff)
CONST4(signmask, 0x8000000000000000)
CONST4(log2e, 0x3ff71547652b82fe)
CONST4(ln2hi, 0x3fe62e42fee00000)
CONST4(ln2lo, 0x3dea39ef35793c76)
CONST4(half, 0x3fe0000000000000)
CONST4(one, 0x3ff0000000000000)
CONST4(c708, 0x4086200000000000)
CONST4(c6, 0x3fc5555555555555)
CONST4(c24, 0x3fa5555555555555)
CONST4(c120, 0x3f81111111111111)
CONST4(c720, 0x3f56c16c16c16c17)
CONST4(c5040, 0x3f2a01a01a01a01a)
CONST4(c40320, 0x3efa01a01a01a01a)
CONST4(c362880, 0x3ec71de3a556c734)
CONST4(c3628800, 0x3e927e4fb7789f5c)
CONST4(c39916800, 0x3e5ae64567f544e4)
CONST4(c479001600, 0x3e21eed8eff8d898)

// EXPNEG sets Y6 = expNeg(Y1) with Y1 = |Y0| = x, four lanes, as the Go
// code: k = floor(x·log2e + 1/2), r = (k·ln2Hi − x) + k·ln2Lo, the degree-12
// polynomial p in Estrin's grouping, e = bits(p) − k<<52; then 0 where
// x > 708 (false for NaN: the compare is ordered) and x itself where x is
// NaN. It uses Y15 (absmask) and clobbers Y2–Y11.
#define EXPNEG \
	VANDPD Y15, Y0, Y1; \
	VMULPD log2e<>(SB), Y1, Y2; \
	VADDPD half<>(SB), Y2, Y2; \
	VROUNDPD $1, Y2, Y2; \
	VMULPD ln2hi<>(SB), Y2, Y3; \
	VSUBPD Y1, Y3, Y3; \
	VMULPD ln2lo<>(SB), Y2, Y4; \
	VADDPD Y4, Y3, Y3; \
	VMULPD Y3, Y3, Y4; \
	VMULPD Y4, Y4, Y5; \
	VADDPD one<>(SB), Y3, Y6; \
	VMULPD c6<>(SB), Y3, Y7; \
	VADDPD half<>(SB), Y7, Y7; \
	VMULPD c120<>(SB), Y3, Y8; \
	VADDPD c24<>(SB), Y8, Y8; \
	VMULPD c5040<>(SB), Y3, Y9; \
	VADDPD c720<>(SB), Y9, Y9; \
	VMULPD c362880<>(SB), Y3, Y10; \
	VADDPD c40320<>(SB), Y10, Y10; \
	VMULPD c39916800<>(SB), Y3, Y11; \
	VADDPD c3628800<>(SB), Y11, Y11; \
	VMULPD Y4, Y7, Y7; \
	VADDPD Y7, Y6, Y6; \
	VMULPD Y4, Y9, Y9; \
	VADDPD Y9, Y8, Y8; \
	VMULPD Y5, Y8, Y8; \
	VADDPD Y8, Y6, Y6; \
	VMULPD Y4, Y11, Y11; \
	VADDPD Y11, Y10, Y10; \
	VMULPD c479001600<>(SB), Y5, Y7; \
	VADDPD Y7, Y10, Y10; \
	VMULPD Y5, Y5, Y5; \
	VMULPD Y10, Y5, Y5; \
	VADDPD Y5, Y6, Y6; \
	VCVTTPD2DQY Y2, X7; \
	VPMOVZXDQ X7, Y7; \
	VPSLLQ $52, Y7, Y7; \
	VPSUBQ Y7, Y6, Y6; \
	VCMPPD $2, c708<>(SB), Y1, Y7; \
	VANDPD Y7, Y6, Y6; \
	VCMPPD $3, Y1, Y1, Y7; \
	VANDPD Y1, Y7, Y7; \
	VORPD Y7, Y6, Y6;

// HINGE sets Y11 = max(−Y0, 0) as the Go code selects it: −z where the
// sign bit of z is set, else +0. It uses Y14 (signmask) and clobbers Y5.
#define HINGE \
	VXORPD Y14, Y0, Y11; \
	VXORPD Y5, Y5, Y5; \
	VBLENDVPD Y0, Y11, Y5, Y11

// DERIV2 sets, from e in Y6, Y7 = 1 + e, Y8 = r = 1/(1 + e), Y9 = er = e·r
// and Y10 = ℓ″ = er·r, as the Go code computes them.
#define DERIV2 \
	VADDPD one<>(SB), Y6, Y7; \
	VMOVUPD one<>(SB), Y8; \
	VDIVPD Y7, Y8, Y8; \
	VMULPD Y8, Y6, Y9; \
	VMULPD Y8, Y9, Y10

// DERIV1 sets Y10 = ℓ′: −r (Y8) where the sign bit of z (Y0) is set, else
// −er (Y9), the Go code's branch-free select. It uses Y14 (signmask) and
// negates Y8 and Y9.
#define DERIV1 \
	VXORPD Y14, Y8, Y8; \
	VXORPD Y14, Y9, Y9; \
	VBLENDVPD Y0, Y8, Y9, Y10

// func logisticRowsAVX2(z, y, g1, g2 *float64, n int, hinge, prod float64) (hingeOut, prodOut float64)
//
// The row loop of logisticRange (see logisticRowsGo, its reference) four
// rows at a time, n a multiple of 4. Every lane performs the operations of
// the Go loop in the same order (no fused multiply-add); the hinge sum and
// the product of the factors 1 + e continue in row order in scalar
// registers.
TEXT ·logisticRowsAVX2(SB), NOSPLIT, $0-72
	MOVQ z+0(FP), AX
	MOVQ y+8(FP), BX
	MOVQ g1+16(FP), CX
	MOVQ g2+24(FP), DX
	MOVQ n+32(FP), DI
	SHLQ $3, DI
	MOVSD hinge+40(FP), X12
	MOVSD prod+48(FP), X13
	VMOVUPD signmask<>(SB), Y14
	VMOVUPD absmask<>(SB), Y15
	XORQ R8, R8
	CMPQ R8, DI
	JGE done

loop:
	VMOVUPD (AX)(R8*1), Y0        // z
	EXPNEG
	DERIV2                        // Y7 = 1 + e, Y8 = r, Y9 = er, Y10 = ℓ″
	VMOVUPD Y10, (DX)(R8*1)
	DERIV1                        // Y10 = ℓ′
	VMULPD (BX)(R8*1), Y10, Y10   // y·ℓ′
	VMOVUPD Y10, (CX)(R8*1)
	HINGE                         // hz

	// The sums, in row order.
	VADDSD X11, X12, X12
	VMULSD X7, X13, X13
	VPERMILPD $1, X11, X1
	VPERMILPD $1, X7, X2
	VADDSD X1, X12, X12
	VMULSD X2, X13, X13
	VEXTRACTF128 $1, Y11, X1
	VEXTRACTF128 $1, Y7, X2
	VADDSD X1, X12, X12
	VMULSD X2, X13, X13
	VPERMILPD $1, X1, X1
	VPERMILPD $1, X2, X2
	VADDSD X1, X12, X12
	VMULSD X2, X13, X13

	ADDQ $32, R8
	CMPQ R8, DI
	JLT loop

done:
	VZEROUPPER
	MOVSD X12, hingeOut+56(FP)
	MOVSD X13, prodOut+64(FP)
	RET

// func weightedRowsAVX2(z, y, omega, g1, g2, e, hz *float64, n int)
//
// The per-row values of weightedLogisticPass (see weightedRowsGo, its
// reference) four rows at a time, n a multiple of 4: e = expNeg(|z|) and
// hz = max(−z, 0) (selected on the sign bit of z, as there) into e and hz,
// g1 = y·(ℓ′·ω) and g2 = (e·r·r)·ω, both +0 where ω = 0. Every lane
// performs the Go loop's operations in the same order (no fused
// multiply-add): the same values bit for bit.
TEXT ·weightedRowsAVX2(SB), NOSPLIT, $0-64
	MOVQ z+0(FP), AX
	MOVQ y+8(FP), BX
	MOVQ omega+16(FP), R11
	MOVQ g1+24(FP), CX
	MOVQ g2+32(FP), DX
	MOVQ e+40(FP), R9
	MOVQ hz+48(FP), SI
	MOVQ n+56(FP), DI
	SHLQ $3, DI
	VMOVUPD signmask<>(SB), Y14
	VMOVUPD absmask<>(SB), Y15
	XORQ R8, R8
	CMPQ R8, DI
	JGE done

loop:
	VMOVUPD (AX)(R8*1), Y0        // z
	EXPNEG
	VMOVUPD Y6, (R9)(R8*1)        // e
	DERIV2                        // Y7 = 1 + e, Y8 = r, Y9 = er, Y10 = ℓ″
	VMOVUPD (R11)(R8*1), Y12      // ω
	VMULPD Y12, Y10, Y10          // (er·r)·ω
	VXORPD Y13, Y13, Y13
	VCMPPD $0, Y13, Y12, Y13      // ω = 0
	VANDNPD Y10, Y13, Y10         // +0 there
	VMOVUPD Y10, (DX)(R8*1)
	DERIV1                        // Y10 = ℓ′
	VMULPD Y12, Y10, Y10          // ℓ′·ω
	VMULPD (BX)(R8*1), Y10, Y10   // y·(ℓ′·ω)
	VANDNPD Y10, Y13, Y10         // +0 where ω = 0
	VMOVUPD Y10, (CX)(R8*1)
	HINGE                         // hz
	VMOVUPD Y11, (SI)(R8*1)
	ADDQ $32, R8
	CMPQ R8, DI
	JLT loop

done:
	VZEROUPPER
	RET
