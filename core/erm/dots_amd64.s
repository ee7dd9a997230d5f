//go:build !purego

#include "textflag.h"

// func dots4AVX2(u *float64, n int, c0, c1, c2, c3 *float64, out *[4]float64)
//
// out[l] = floats.Dot(u[:n], cl[:n]) for l = 0…3, n > 0, bit for bit: as
// gonum's DotUnitary (internal/asm/f64/dot_amd64.s, gonum v0.17.0), term i
// of the main loop is added to partial sum i mod 4 (here lane i mod 4 of
// one YMM accumulator per column, in the same order), the last n mod 4
// terms to partial sum 0 in order, and the result is (s1 + s3) + (s0 + s2).
// The four columns' chains run interleaved.
TEXT ·dots4AVX2(SB), NOSPLIT, $0-56
	MOVQ u+0(FP), AX
	MOVQ n+8(FP), DI
	MOVQ c0+16(FP), BX
	MOVQ c1+24(FP), CX
	MOVQ c2+32(FP), DX
	MOVQ c3+40(FP), SI
	MOVQ out+48(FP), R9
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ R8, R8
	MOVQ DI, R10
	ANDQ $-4, R10
	CMPQ R8, R10
	JGE split

loop:
	VMOVUPD (AX)(R8*8), Y4
	VMULPD (BX)(R8*8), Y4, Y5
	VMULPD (CX)(R8*8), Y4, Y6
	VMULPD (DX)(R8*8), Y4, Y7
	VMULPD (SI)(R8*8), Y4, Y8
	VADDPD Y5, Y0, Y0
	VADDPD Y6, Y1, Y1
	VADDPD Y7, Y2, Y2
	VADDPD Y8, Y3, Y3
	ADDQ $4, R8
	CMPQ R8, R10
	JLT loop

split:
	// Partial sums 2 and 3 aside, before scalar operations clear the
	// upper halves.
	VEXTRACTF128 $1, Y0, X10
	VEXTRACTF128 $1, Y1, X11
	VEXTRACTF128 $1, Y2, X12
	VEXTRACTF128 $1, Y3, X13
	CMPQ R8, DI
	JGE reduce

tail:
	VMOVSD (AX)(R8*8), X4
	VMULSD (BX)(R8*8), X4, X5
	VMULSD (CX)(R8*8), X4, X6
	VMULSD (DX)(R8*8), X4, X7
	VMULSD (SI)(R8*8), X4, X8
	VADDSD X5, X0, X0
	VADDSD X6, X1, X1
	VADDSD X7, X2, X2
	VADDSD X8, X3, X3
	INCQ R8
	CMPQ R8, DI
	JLT tail

reduce:
	VADDPD X10, X0, X0            // (s0 + s2, s1 + s3)
	VADDPD X11, X1, X1
	VADDPD X12, X2, X2
	VADDPD X13, X3, X3
	VPERMILPD $1, X0, X4
	VPERMILPD $1, X1, X5
	VPERMILPD $1, X2, X6
	VPERMILPD $1, X3, X7
	VADDSD X0, X4, X4             // (s1 + s3) + (s0 + s2)
	VADDSD X1, X5, X5
	VADDSD X2, X6, X6
	VADDSD X3, X7, X7
	VMOVSD X4, 0(R9)
	VMOVSD X5, 8(R9)
	VMOVSD X6, 16(R9)
	VMOVSD X7, 24(R9)
	VZEROUPPER
	RET
