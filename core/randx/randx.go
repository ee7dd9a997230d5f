// Package randx derives deterministic, independent random streams from a
// root seed and a stable unit key.
//
// # Policy
//
// Every random draw in dprepro comes from a *rand.Rand (math/rand/v2) that is
// passed in explicitly. Streams are derived by hashing (root seed, key parts)
// with SHA-256 into a ChaCha8 seed, so a unit's numbers depend only on its
// identity (spec, dataset, method, grid point, repetition, fold), never on the
// worker count, scheduling order, or on which other units exist (adding a
// method or a grid point changes no other unit's numbers). The global
// math/rand source is never used; a repo-wide test (internal/lint) enforces
// this.
//
// A simulation that releases nothing and draws millions of numbers (the
// Monte Carlo samples of Wang, Kifer & Lee's intervals) may draw from a
// [Sim] instead, seeded by four words of its stream: as reproducible as
// the stream, and about 2.8 times faster for normals.
//
// Seeded streams are for simulation and reproducibility only. They are not a
// secure source of noise for protecting real data.
package randx

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
)

// Seed returns the 32-byte ChaCha8 seed for (root, key...). Key parts are
// length-prefixed before hashing so that ("ab","c") and ("a","bc") differ.
func Seed(root uint64, key ...string) [32]byte {
	h := sha256.New()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], root)
	h.Write([]byte("dprepro/randx/v1"))
	h.Write(buf[:])
	for _, k := range key {
		binary.LittleEndian.PutUint64(buf[:], uint64(len(k)))
		h.Write(buf[:])
		h.Write([]byte(k))
	}
	var seed [32]byte
	copy(seed[:], h.Sum(nil))
	return seed
}

// New returns a new generator for the stream named by (root, key...).
// The generator must be used by one goroutine at a time.
func New(root uint64, key ...string) *rand.Rand {
	return rand.New(rand.NewChaCha8(Seed(root, key...)))
}

// Uint64 returns a 64-bit value derived from (root, key...), for use as the
// root seed of a sub-computation.
func Uint64(root uint64, key ...string) uint64 {
	s := Seed(root, key...)
	return binary.LittleEndian.Uint64(s[:8])
}
