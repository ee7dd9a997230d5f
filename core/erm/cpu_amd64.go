//go:build !purego

package erm

// cpuid executes CPUID with EAX = leaf and ECX = sub (cpu_amd64.s).
func cpuid(leaf, sub uint32) (a, b, c, d uint32)

// xgetbv0 reads the extended control register XCR0 (cpu_amd64.s); call it
// only when CPUID reports OSXSAVE.
func xgetbv0() (a, d uint32)

// hasAVX2 reports whether the processor has AVX2 and the operating system
// saves the YMM registers (CPUID leaf 1 ECX bits 27 OSXSAVE and 28 AVX, XCR0
// bits 1 and 2, CPUID leaf 7 EBX bit 5; Intel SDM Vol. 1 §14.3).
func hasAVX2() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, c1, _ := cpuid(1, 0)
	const osxsave, avx = 1 << 27, 1 << 28
	if c1&osxsave == 0 || c1&avx == 0 {
		return false
	}
	if xcr0, _ := xgetbv0(); xcr0&6 != 6 {
		return false
	}
	_, b7, _, _ := cpuid(7, 0)
	return b7&(1<<5) != 0
}
