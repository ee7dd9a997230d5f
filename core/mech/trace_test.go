package mech

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dprepro/dprepro/core/privacy"
)

// TestIsSecure_SurvivesWrappingAndCopying: the mode travels with the
// generator: a secure stream wrapped by rand.New, copied by value, or
// both, is still secure, and AddLaplace takes its floating-point-safe
// construction; a seeded generator wrapped the same way is not.
func TestIsSecure_SurvivesWrappingAndCopying(t *testing.T) {
	sec := SecureStream("k/u", "u", false, nil)
	cp := *sec
	seeded := rand.New(rand.NewChaCha8([32]byte{1}))
	scp := *seeded
	for name, c := range map[string]struct {
		rng  *rand.Rand
		want bool
	}{
		"crypto":          {CryptoRand(), true},
		"stream":          {sec, true},
		"wrapped":         {rand.New(sec), true},
		"wrapped twice":   {rand.New(rand.New(sec)), true},
		"copied":          {&cp, true},
		"wrapped crypto":  {rand.New(CryptoRand()), true},
		"named seeded":    {NamedStream(rand.NewChaCha8([32]byte{1}), "k/u", "u", false, NewTrace()), false},
		"seeded":          {seeded, false},
		"seeded wrapped":  {rand.New(seeded), false},
		"seeded copied":   {&scp, false},
		"wrapped pcg src": {rand.New(rand.NewPCG(1, 2)), false},
	} {
		if got := IsSecure(c.rng); got != c.want {
			t.Errorf("%s: IsSecure = %v, want %v", name, got, c.want)
		}
	}
	// A snapped release is a multiple of its grid; 40 seeded draws never
	// all are (probability 2^-40·…).
	x := 0.3
	g := GridGranularity(1)
	for _, rng := range []*rand.Rand{rand.New(sec), &cp} {
		for i := 0; i < 40; i++ {
			if v := AddLaplace(rng, x, 1); v/g != float64(int64(v/g)) {
				t.Fatalf("AddLaplace on a wrapped or copied secure stream returned %v, off the grid %v", v, g)
			}
		}
	}
}

// TestNamedStream_SameBits: a traced stream draws the bits of the
// untraced one.
func TestNamedStream_SameBits(t *testing.T) {
	tr := NewTrace()
	defer tr.Close()
	seed := [32]byte{7}
	a := rand.New(rand.NewChaCha8(seed))
	b := NamedStream(rand.NewChaCha8(seed), "s", "u", false, tr)
	for i := 0; i < 1000; i++ {
		if x, y := a.Uint64(), b.Uint64(); x != y {
			t.Fatalf("draw %d: %d != %d", i, x, y)
		}
	}
	if StreamName(rand.New(b)) != "s" || StreamName(a) != "" {
		t.Fatalf("StreamName: %q, %q", StreamName(rand.New(b)), StreamName(a))
	}
}

// TestTrace_Records: a release recorded on a traced stream carries the
// scope, the stream, the draws noted since the previous release and
// whether they were floating-point safe; a replay of a seeded stream has
// the first instance's digest, a secure stream never does.
func TestTrace_Records(t *testing.T) {
	tr := NewTrace()
	defer tr.Close()
	seed := [32]byte{3}
	open := func() *rand.Rand { return NamedStream(rand.NewChaCha8(seed), "k/u/fit", "u", false, tr) }
	r1, r2 := open(), open()
	for _, rng := range []*rand.Rand{r1, r2} {
		Scope(rng, "training", Records{Dataset: "d", Part: "T", Index: []int{1, 2}, N: 2})
		AddLaplace(rng, 0, 1)
		AddLaplace(rng, 0, 1)
		Record(rng, Release{Mechanism: "laplace", Scale: 1, Sensitivity: 1, Dim: 2, Guarantee: privacy.EpsDP(2, "x")})
	}
	s1, s2 := SecureStream("k/u/fit", "u", false, tr), SecureStream("k/u/fit", "u", false, tr)
	for _, rng := range []*rand.Rand{s1, s2} {
		Scope(rng, "secure", Records{Dataset: "d", Part: "all", N: 10})
		AddLaplace(rng, 0, 1)
		Record(rng, Release{Mechanism: "laplace", Scale: 1, Sensitivity: 1, Dim: 1, Guarantee: privacy.EpsDP(1, "x")})
		SphericalLaplace(make([]float64, 3), rng, 1)
		Record(rng, Release{Mechanism: "spherical-laplace", Scale: 1, Sensitivity: 1, Dim: 3, Guarantee: privacy.EpsDP(1, "x")})
	}
	rs := tr.Releases()
	if len(rs) != 6 {
		t.Fatalf("%d releases: %v", len(rs), rs)
	}
	var seeded, secure []Release
	for _, r := range rs {
		if r.Secure {
			secure = append(secure, r)
		} else {
			seeded = append(seeded, r)
		}
	}
	if len(seeded) != 2 || len(secure) != 4 {
		t.Fatalf("seeded %v, secure %v", seeded, secure)
	}
	a, b := seeded[0], seeded[1]
	if a.What != "training" || a.Data.Part != "T" || a.Stream != "k/u/fit" || a.Unit != "u" || a.Draws != 2 || a.FloatSafe {
		t.Errorf("seeded release %v", a)
	}
	if a.Instance == b.Instance || a.Digest != b.Digest {
		t.Errorf("a replayed seeded stream: instances %d, %d, digests %x, %x", a.Instance, b.Instance, a.Digest, b.Digest)
	}
	for _, r := range secure {
		if want := r.Mechanism == "laplace"; r.FloatSafe != want || r.Draws != 1 {
			t.Errorf("secure release %v: float-safe %v, want %v, 1 draw", r, r.FloatSafe, want)
		}
	}
	if secure[0].Digest == secure[2].Digest && secure[1].Digest == secure[3].Digest {
		t.Errorf("two secure streams of one name replayed: %v", secure)
	}
	if got := tr.Opened()["k/u/fit"]; got != 4 {
		t.Errorf("opened %d generators on the stream, want 4", got)
	}
	// An untraced or closed trace records nothing.
	tr.Close()
	Record(r1, Release{Mechanism: "laplace"})
	if len(tr.Releases()) != 6 {
		t.Errorf("a closed trace recorded")
	}
}

// TestTrace_DrawnScales: every sampler notes the scale it drew at, in the
// units of Release.Scale, and ScaleMismatch finds a release whose draws
// were at a scale it does not record (half the noise it books).
func TestTrace_DrawnScales(t *testing.T) {
	tr := NewTrace()
	defer tr.Close()
	rng := NamedStream(rand.NewPCG(1, 2), "k/u", "u", false, tr)
	sec := SecureStream("k/s", "u", false, tr)
	// record records r and returns it as the trace holds it (Releases
	// sorts; each scope below has its own What).
	record := func(rng *rand.Rand, r Release) Release {
		t.Helper()
		Record(rng, r)
		what := ""
		if s, _ := unwrap(rng); s != nil {
			what = s.what
		}
		for _, got := range tr.Releases() {
			if got.What == what && got.Mechanism == r.Mechanism && got.Stream == StreamName(rng) {
				r = got
			}
		}
		return r
	}
	cases := []struct {
		name  string
		rng   *rand.Rand
		draw  func(rng *rand.Rand)
		scale float64
		drawn []float64
	}{
		{"laplace", rng, func(r *rand.Rand) { AddLaplace(r, 0, 2); LaplaceNoise(r, 2) }, 2, []float64{2}},
		{"secure laplace", sec, func(r *rand.Rand) { AddLaplace(r, 0, 3) }, 3, []float64{3}},
		{"gaussian", rng, func(r *rand.Rand) { AddGaussian(r, 0, 4); GaussianNoise(r, 4) }, 4, []float64{4}},
		{"secure gaussian", sec, func(r *rand.Rand) { AddGaussian(r, 0, 5) }, 5, []float64{5}},
		{"spherical", rng, func(r *rand.Rand) { SphericalLaplace(make([]float64, 2), r, 6) }, 6, []float64{6}},
		{"exponential noise", rng, func(r *rand.Rand) { ExponentialNoise(r, 7) }, 7, []float64{7}},
		{"scaled exponential noise", rng, func(r *rand.Rand) { ExponentialNoiseScaled(r, 2, 0.25) }, 0.5, []float64{0.5}},
		{"half the noise", rng, func(r *rand.Rand) { AddLaplace(r, 0, 1); AddLaplace(r, 0, 0.5) }, 1, []float64{1, 0.5}},
	}
	for _, c := range cases {
		Scope(c.rng, c.name, Records{Dataset: "d", Part: "all", N: 1})
		c.draw(c.rng)
		r := record(c.rng, Release{Mechanism: "laplace", Scale: c.scale})
		if !slices.Equal(r.Drawn, c.drawn) {
			t.Errorf("%s: drawn %v, want %v", c.name, r.Drawn, c.drawn)
		}
		want := c.name == "half the noise"
		if got := r.ScaleMismatch() != nil; got != want {
			t.Errorf("%s: mismatch %v, want %v", c.name, r.ScaleMismatch(), want)
		}
	}
	// A selection notes its λ; a chain's scales are all recorded ones.
	Scope(rng, "selection", Records{Dataset: "d", Part: "all", N: 1})
	Exponential(rng, []float64{0, 1}, 1, 0.5)
	for _, r := range tr.Releases() {
		if r.What == "selection" && (r.ScaleMismatch() != nil || len(r.Drawn) != 1 || r.Drawn[0] != r.Scale) {
			t.Errorf("exponential mechanism: drawn %v, scale %g", r.Drawn, r.Scale)
		}
	}
	Scope(rng, "chain", Records{Dataset: "d", Part: "all", N: 1})
	AddLaplace(rng, 0, 8)
	AddLaplace(rng, 0, 4)
	if r := record(rng, Release{Mechanism: "noise-reduction", Scale: 4, Scales: []float64{8, 4}}); r.ScaleMismatch() != nil {
		t.Errorf("chain: mismatch %v", r.ScaleMismatch())
	}
	// The scales noted before a Scope are not the next release's.
	AddLaplace(rng, 0, 9)
	Scope(rng, "after", Records{Dataset: "d", Part: "all", N: 1})
	AddLaplace(rng, 0, 1)
	if r := record(rng, Release{Mechanism: "laplace", Scale: 1}); !slices.Equal(r.Drawn, []float64{1}) {
		t.Errorf("drawn %v after a scope, want [1]", r.Drawn)
	}
}
