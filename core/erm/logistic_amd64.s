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
	VANDPD Y15, Y0, Y1            // x = |z|
	VMULPD log2e<>(SB), Y1, Y2    // x·log2e
	VADDPD half<>(SB), Y2, Y2     // + 1/2
	VROUNDPD $1, Y2, Y2           // k = floor(·)
	VMULPD ln2hi<>(SB), Y2, Y3    // k·ln2Hi
	VSUBPD Y1, Y3, Y3             // k·ln2Hi − x
	VMULPD ln2lo<>(SB), Y2, Y4    // k·ln2Lo
	VADDPD Y4, Y3, Y3             // r
	VMULPD Y3, Y3, Y4             // r2
	VMULPD Y4, Y4, Y5             // r4
	VADDPD one<>(SB), Y3, Y6      // p01 = 1 + r
	VMULPD c6<>(SB), Y3, Y7
	VADDPD half<>(SB), Y7, Y7     // p23 = 1/2 + r/6
	VMULPD c120<>(SB), Y3, Y8
	VADDPD c24<>(SB), Y8, Y8      // p45
	VMULPD c5040<>(SB), Y3, Y9
	VADDPD c720<>(SB), Y9, Y9     // p67
	VMULPD c362880<>(SB), Y3, Y10
	VADDPD c40320<>(SB), Y10, Y10 // p89
	VMULPD c39916800<>(SB), Y3, Y11
	VADDPD c3628800<>(SB), Y11, Y11 // pab
	VMULPD Y4, Y7, Y7
	VADDPD Y7, Y6, Y6             // p01 + r2·p23
	VMULPD Y4, Y9, Y9
	VADDPD Y9, Y8, Y8             // p45 + r2·p67
	VMULPD Y5, Y8, Y8
	VADDPD Y8, Y6, Y6             // … + r4·(p45 + r2·p67)
	VMULPD Y4, Y11, Y11
	VADDPD Y11, Y10, Y10          // p89 + r2·pab
	VMULPD c479001600<>(SB), Y5, Y7
	VADDPD Y7, Y10, Y10           // … + r4·pc
	VMULPD Y5, Y5, Y5             // r4·r4
	VMULPD Y10, Y5, Y5
	VADDPD Y5, Y6, Y6             // p
	VCVTTPD2DQY Y2, X7            // k as int32 (0 ≤ k ≤ 1021)
	VPMOVZXDQ X7, Y7
	VPSLLQ $52, Y7, Y7
	VPSUBQ Y7, Y6, Y6             // bits(p) − k<<52
	VCMPPD $2, c708<>(SB), Y1, Y7 // x ≤ 708 (false for NaN)
	VANDPD Y7, Y6, Y6             // else 0 …
	VCMPPD $3, Y1, Y1, Y7         // … or x itself when NaN
	VANDPD Y1, Y7, Y7
	VORPD Y7, Y6, Y6              // e
	VADDPD one<>(SB), Y6, Y7      // 1 + e
	VMOVUPD one<>(SB), Y8
	VDIVPD Y7, Y8, Y8             // r = 1/(1 + e)
	VMULPD Y8, Y6, Y9             // er = e·r
	VMULPD Y8, Y9, Y10            // ℓ″ = er·r
	VMOVUPD Y10, (DX)(R8*1)
	VXORPD Y14, Y8, Y8            // −r
	VXORPD Y14, Y9, Y9            // −er
	VBLENDVPD Y0, Y8, Y9, Y10     // ℓ′: −r where the sign bit of z is set, else −er
	VMULPD (BX)(R8*1), Y10, Y10   // y·ℓ′
	VMOVUPD Y10, (CX)(R8*1)
	VXORPD Y14, Y0, Y11           // −z
	VXORPD Y5, Y5, Y5
	VBLENDVPD Y0, Y11, Y5, Y11    // hz: −z where the sign bit of z is set, else +0

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
