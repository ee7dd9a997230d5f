package erm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// needAVX2 skips a test of the AVX2 kernels where they do not run.
func needAVX2(t *testing.T) {
	t.Helper()
	if !useAVX2 {
		t.Skip("erm: no AVX2 on this processor (or built with -tags purego): the Go loops run and there is no kernel to compare")
	}
}

// kernelMargins returns margins of every regime the logistic kernel must
// reproduce: typical and tiny ones, both signs of 0, the 708 cut of expNeg
// and its neighbours, beyond it, ±Inf, and values x for which
// x·log2e + 1/2 falls within a few ulps of an integer (where the rounding
// of the reduction decides k).
func kernelMargins(rng *rand.Rand) []float64 {
	zs := []float64{0, math.Copysign(0, -1), 5e-324, 1e-300, 1e-17, 0.5 * math.Ln2, math.Ln2, 1, 36, 37, 700,
		708, math.Nextafter(708, 0), math.Nextafter(708, 1000), 709, 745, 746, 800, 1e300, math.MaxFloat64}
	for j := 1; j <= 1021; j += 7 {
		x := (float64(j) - 0.5) / 1.4426950408889634
		for u := -3; u <= 3; u++ {
			zs = append(zs, x+float64(u)*x*0x1p-52)
		}
	}
	for k := 0; k < 20000; k++ {
		switch k % 4 {
		case 0:
			zs = append(zs, rng.NormFloat64()*3)
		case 1:
			zs = append(zs, (rng.Float64()-0.5)*1600)
		case 2:
			zs = append(zs, rng.NormFloat64()*0.01)
		default:
			zs = append(zs, rng.NormFloat64()*40)
		}
	}
	n := len(zs)
	for i := 0; i < n; i++ {
		zs = append(zs, -zs[i])
	}
	rng.Shuffle(len(zs), func(i, j int) { zs[i], zs[j] = zs[j], zs[i] })
	return zs
}

// TestLogisticRows_AVX2SameBits checks the AVX2 row loop of logisticRange
// against the Go loop, bit for bit: ℓ′·y, ℓ″, the hinge sum and the
// product of the factors 1 + e, on the margins of kernelMargins cut into
// runs of every length 1…32 (the kernel takes the multiple of 4, the Go
// loop the rest), with sums carried in from earlier rows, labels ±1 and
// arbitrary ones; and on runs holding ±Inf or NaN (compared as both NaN).
func TestLogisticRows_AVX2SameBits(t *testing.T) {
	needAVX2(t)
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 7))
	zs := kernelMargins(rng)
	special := []float64{math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN()}
	var runs int
	for lo, length := 0, 1; lo < len(zs); lo, length = lo+length, length%32+1 {
		z := append([]float64(nil), zs[lo:min(lo+length, len(zs))]...)
		if runs%50 == 49 {
			z[rng.IntN(len(z))] = special[rng.IntN(len(special))]
		}
		runs++
		y := make([]float64, len(z))
		for i := range y {
			y[i] = float64(2*rng.IntN(2) - 1)
			if runs%3 == 0 {
				y[i] = rng.NormFloat64()
			}
		}
		hinge, prod := 37*rng.Float64(), 1+rng.Float64()
		g1, g2 := make([]float64, len(z)), make([]float64, len(z))
		r1, r2 := make([]float64, len(z)), make([]float64, len(z))
		gh, gp := logisticRows(z, y, g1, g2, hinge, prod)
		wh, wp := logisticRowsGo(z, y, r1, r2, hinge, prod)
		if !sameFloat(gh, wh) || !sameFloat(gp, wp) {
			t.Fatalf("margins %v: (hinge, prod) = (%v, %v), Go loop (%v, %v)", z, gh, gp, wh, wp)
		}
		for i := range z {
			if !sameFloat(g1[i], r1[i]) || !sameFloat(g2[i], r2[i]) {
				t.Fatalf("margin %v (row %d of %d): g1, g2 = %v, %v; Go loop %v, %v", z[i], i, len(z), g1[i], g2[i], r1[i], r2[i])
			}
		}
	}
	if runs < 1000 {
		t.Fatalf("only %d runs compared", runs)
	}
}

// TestDots4_SameBitsAsGonum checks that dots4AVX2 gives floats.Dot of each
// of its four columns bit for bit, for lengths 1…70 (every remainder mod
// 4, below and above one main-loop step) and block sizes, on terms whose
// magnitudes span 16 decades with both signs, so that any other order of
// summation rounds differently; and through addColumnDots, whose groups
// short of four columns repeat the last one.
func TestDots4_SameBitsAsGonum(t *testing.T) {
	needAVX2(t)
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 8))
	wide := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64() * math.Pow(10, 16*rng.Float64()-8)
		}
		return v
	}
	lengths := []int{1024, 1000, 1023, 352}
	for n := 1; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		u := wide(n)
		c := [4][]float64{wide(n), wide(n), wide(n), wide(n)}
		var out [4]float64
		dots4AVX2(&u[0], n, &c[0][0], &c[1][0], &c[2][0], &c[3][0], &out)
		for l := range c {
			if want := floats.Dot(u, c[l]); math.Float64bits(out[l]) != math.Float64bits(want) {
				t.Fatalf("n=%d column %d: %v, floats.Dot %v", n, l, out[l], want)
			}
		}
	}
	// addColumnDots over every range of the 11 dense columns of a design
	// of two blocks, against floats.Dot column by column.
	X, y := magicShape(rng, block+301)
	r := NewRows(X, y, nil)
	u := wide(r.n)
	for k0 := 0; k0 < r.d; k0++ {
		for k1 := k0 + 1; k1 <= r.d; k1++ {
			for _, lo := range []int{0, block} {
				seg := u[lo:min(lo+block, r.n)]
				got, want := make([]float64, r.d), make([]float64, r.d)
				for j := range got {
					got[j], want[j] = float64(j), float64(j)
				}
				r.addColumnDots(got, nil, seg, lo, k0, k1)
				for k := k0; k < k1; k++ {
					want[k] += floats.Dot(seg, r.dm[k*r.n+lo:k*r.n+lo+len(seg)])
				}
				for j := range got {
					if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
						t.Fatalf("columns [%d, %d) rows from %d: dst[%d] = %v, want %v", k0, k1, lo, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// TestFit_AVX2SameBits checks that Fit gives the same Result, bit for bit,
// with the AVX2 kernels (logistic rows, column dots in the gradient and
// the Hessian, margins) as with the Go loops, on sparse, Adult-shaped and
// dense designs within one block and over several, unweighted and with
// bootstrap weights, for the objectives of bitTestObjectives from cold,
// warm and far starts. Not parallel: it assigns the package variable
// useAVX2 (restored before returning).
func TestFit_AVX2SameBits(t *testing.T) {
	needAVX2(t)
	// The designs twice from the same seed: each mode fills its own caches
	// (the Gram matrix, the pass at w = 0).
	build := func() map[string]*Rows {
		rng := rand.New(rand.NewPCG(27, 9))
		designs := blockDesigns(rng)
		for _, name := range []string{"dense/3 blocks", "adult/2 blocks", "dense"} {
			counts := make([]float64, designs[name].N())
			for i := range counts {
				counts[i] = float64(rng.IntN(4))
			}
			designs[name+"/weighted"] = designs[name].WithWeights(counts)
		}
		return designs
	}
	withAVX2, withGo := build(), build()
	defer func() { useAVX2 = true }()
	rng := rand.New(rand.NewPCG(27, 10))
	fits := 0
	for _, name := range []string{"sparse", "adult", "dense", "dense/3 blocks", "adult/2 blocks", "dense/weighted", "dense/3 blocks/weighted", "adult/2 blocks/weighted"} {
		d := withAVX2[name].D()
		objs := bitTestObjectives(randVec(rng, d, 2))
		warm, far := randVec(rng, d, 0.5), randVec(rng, d, 30)
		for _, oname := range []string{"lambda=1e-3", "lambda=1e-6", "objpert", "extraL2", "warm/lambda=1", "far/lambda=1e-4"} {
			obj := objs[oname]
			opts := FitOptions{}
			opts.Init = bitTestStart(oname, warm, far)
			useAVX2 = true
			opts.Work = new(Workspace)
			got, err := Fit(withAVX2[name], obj, opts)
			if err != nil {
				t.Fatal(err)
			}
			useAVX2 = false
			opts.Work = new(Workspace)
			want, err := Fit(withGo[name], obj, opts)
			if err != nil {
				t.Fatal(err)
			}
			sameFitBits(t, name+"/"+oname, "Go loops", got, want)
			fits++
		}
	}
	if fits != 8*6 {
		t.Fatalf("%d fits compared, want %d", fits, 8*6)
	}
}

// TestMargins_AVX2SameBits checks marginsBlock with marginsAVX2 against the
// Go loop (clear, then floats.AddScaled per dense column with a nonzero
// weight), bit for bit, on dense, Adult-shaped and wide (105 dense
// columns) designs, for every
// block length 1…70 and whole blocks (the 32-, 4- and 1-row paths of the
// kernel), from rows 0 and from the second block, with weights of wide
// magnitude, some +0 or −0 (skipped) and all zero. Not parallel: it
// assigns the package variable useAVX2 (restored before returning).
func TestMargins_AVX2SameBits(t *testing.T) {
	needAVX2(t)
	defer func() { useAVX2 = true }()
	rng := rand.New(rand.NewPCG(27, 11))
	X, y := magicShape(rng, block+301)
	dense := NewRows(X, y, nil)
	X, y = adultShape(rng, block+77)
	adult := NewRows(X, y, nil)
	// As many dense columns as standardized Adult (105), more than fit in
	// one pass of registers.
	wideX := mat.NewDense(block+40, 105, nil)
	for i := 0; i < block+40; i++ {
		for j := 0; j < 105; j++ {
			wideX.Set(i, j, rng.NormFloat64()/10)
		}
	}
	wide := NewRows(wideX, logisticLabels(rng, wideX, 1), nil)
	if len(wide.dcols) != 105 {
		t.Fatalf("the wide design has %d column-major columns, want 105", len(wide.dcols))
	}
	compared := 0
	for name, r := range map[string]*Rows{"dense": dense, "adult": adult, "wide": wide} {
		for trial := 0; trial < 4; trial++ {
			w := make([]float64, r.d)
			for j := range w {
				switch rng.IntN(5) {
				case 0:
					w[j] = math.Copysign(0, rng.Float64()-0.5)
				default:
					w[j] = rng.NormFloat64() * math.Pow(10, 8*rng.Float64()-4)
				}
			}
			if trial == 3 {
				clear(w)
			}
			lengths := []int{block, 301, 77}
			for m := 1; m <= 70; m++ {
				lengths = append(lengths, m)
			}
			for _, m := range lengths {
				for _, lo := range []int{0, block} {
					if lo+m > r.n {
						continue
					}
					got, want := make([]float64, m), make([]float64, m)
					for i := range got {
						got[i], want[i] = math.NaN(), math.NaN() // overwritten
					}
					useAVX2 = true
					r.marginsBlock(got, w, lo)
					useAVX2 = false
					r.marginsBlock(want, w, lo)
					for i := range got {
						if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
							t.Fatalf("%s, weights %v, rows [%d, %d): margin %d = %v, Go loop %v", name, w, lo, lo+m, i, got[i], want[i])
						}
					}
					compared++
				}
			}
		}
	}
	if compared < 500 {
		t.Fatalf("only %d blocks compared", compared)
	}
}

// TestWeightedRows_AVX2SameBits checks the AVX2 per-row values of the
// weighted logistic pass against weightedRowsGo, bit for bit (e, max(−z,
// 0), g1 and g2, both NaN counting as equal), on the margins of
// kernelMargins in runs of every length 1…70 and with weights of every
// kind: 0 (g1 = g2 = +0), bootstrap multiplicities, fractional and huge
// ones, and labels ±1 or arbitrary.
func TestWeightedRows_AVX2SameBits(t *testing.T) {
	needAVX2(t)
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 12))
	zs := kernelMargins(rng)
	runs := 0
	for lo, length := 0, 1; lo < len(zs); lo, length = lo+length, length%70+1 {
		z := zs[lo:min(lo+length, len(zs))]
		n := len(z)
		y, omega := make([]float64, n), make([]float64, n)
		for i := range y {
			y[i] = float64(2*rng.IntN(2) - 1)
			if runs%3 == 0 {
				y[i] = rng.NormFloat64()
			}
			switch rng.IntN(5) {
			case 0:
				omega[i] = 0
			case 1:
				omega[i] = float64(1 + rng.IntN(20))
			case 2:
				omega[i] = rng.Float64() * 3
			case 3:
				omega[i] = 1e300 * rng.Float64()
			default:
				omega[i] = 1
			}
		}
		runs++
		bufs := func() [4][]float64 {
			return [4][]float64{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
		}
		got, want := bufs(), bufs()
		weightedRows(z, y, omega, got[0], got[1], got[2], got[3])
		weightedRowsGo(z, y, omega, want[0], want[1], want[2], want[3])
		for k, name := range []string{"g1", "g2", "e", "hz"} {
			for i := range z {
				if !sameFloat(got[k][i], want[k][i]) {
					t.Fatalf("margin %v, weight %v, label %v (row %d of %d): %s = %v, Go loop %v", z[i], omega[i], y[i], i, n, name, got[k][i], want[k][i])
				}
			}
		}
	}
	if runs < 1000 {
		t.Fatalf("only %d runs compared", runs)
	}
}
