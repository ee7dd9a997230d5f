//go:build !purego

#include "textflag.h"

// func marginsAVX2(seg *float64, m int, x *float64, offs *int, ws *float64, ncols int)
//
// seg[i] = Σ_c ws[c]·x[offs[c]+i] for i < m, the sum from +0 over c in
// order, each term the product then the add: the values of clear(seg)
// followed by floats.AddScaled(seg, ws[c], x[offs[c]:offs[c]+m]) for each
// c (gonum's AxpyUnitary multiplies, then adds; no fused multiply-add),
// bit for bit. Rows go 32 at a time (eight YMM accumulators), then 4 at a
// time, then one at a time; every row's sum is its own chain.
TEXT ·marginsAVX2(SB), NOSPLIT, $0-48
	MOVQ seg+0(FP), AX
	MOVQ m+8(FP), BX
	MOVQ x+16(FP), CX
	MOVQ offs+24(FP), DX
	MOVQ ws+32(FP), SI
	MOVQ ncols+40(FP), DI
	XORQ R8, R8

rows32:
	LEAQ 32(R8), R12
	CMPQ R12, BX
	JGT rows4
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ R9, R9

cols32:
	CMPQ R9, DI
	JGE store32
	MOVQ (DX)(R9*8), R10
	ADDQ R8, R10
	LEAQ (CX)(R10*8), R11
	VBROADCASTSD (SI)(R9*8), Y8
	VMULPD 0(R11), Y8, Y9
	VMULPD 32(R11), Y8, Y10
	VMULPD 64(R11), Y8, Y11
	VMULPD 96(R11), Y8, Y12
	VADDPD Y9, Y0, Y0
	VADDPD Y10, Y1, Y1
	VADDPD Y11, Y2, Y2
	VADDPD Y12, Y3, Y3
	VMULPD 128(R11), Y8, Y9
	VMULPD 160(R11), Y8, Y10
	VMULPD 192(R11), Y8, Y11
	VMULPD 224(R11), Y8, Y12
	VADDPD Y9, Y4, Y4
	VADDPD Y10, Y5, Y5
	VADDPD Y11, Y6, Y6
	VADDPD Y12, Y7, Y7
	INCQ R9
	JMP cols32

store32:
	LEAQ (AX)(R8*8), R11
	VMOVUPD Y0, 0(R11)
	VMOVUPD Y1, 32(R11)
	VMOVUPD Y2, 64(R11)
	VMOVUPD Y3, 96(R11)
	VMOVUPD Y4, 128(R11)
	VMOVUPD Y5, 160(R11)
	VMOVUPD Y6, 192(R11)
	VMOVUPD Y7, 224(R11)
	MOVQ R12, R8
	JMP rows32

rows4:
	LEAQ 4(R8), R12
	CMPQ R12, BX
	JGT rows1
	VXORPD Y0, Y0, Y0
	XORQ R9, R9

cols4:
	CMPQ R9, DI
	JGE store4
	MOVQ (DX)(R9*8), R10
	ADDQ R8, R10
	VBROADCASTSD (SI)(R9*8), Y8
	VMULPD (CX)(R10*8), Y8, Y9
	VADDPD Y9, Y0, Y0
	INCQ R9
	JMP cols4

store4:
	VMOVUPD Y0, (AX)(R8*8)
	MOVQ R12, R8
	JMP rows4

rows1:
	CMPQ R8, BX
	JGE done
	VXORPD X0, X0, X0
	XORQ R9, R9

cols1:
	CMPQ R9, DI
	JGE store1
	MOVQ (DX)(R9*8), R10
	ADDQ R8, R10
	VMOVSD (SI)(R9*8), X8
	VMULSD (CX)(R10*8), X8, X9
	VADDSD X9, X0, X0
	INCQ R9
	JMP cols1

store1:
	VMOVSD X0, (AX)(R8*8)
	INCQ R8
	JMP rows1

done:
	VZEROUPPER
	RET
