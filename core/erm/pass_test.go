package erm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// refLogisticLoop is the unweighted logistic loop of evalLoss as it was
// before logisticPass (commit 0aa4116), kept verbatim as the reference that
// logisticPass must reproduce bit for bit.
func refLogisticLoop(m, y, g1, g2 []float64) float64 {
	var hinge, logs float64
	prod, cnt := 1.0, 0
	for i, z := range m {
		e := expNeg(math.Abs(z))
		r := 1 / (1 + e)
		d1 := -e * r
		var hz float64
		if z < 0 {
			hz = -z
			d1 = -r
		}
		d2 := e * r * r
		hinge += hz
		prod *= 1 + e
		cnt++
		if cnt == 32 {
			logs += math.Log(prod)
			prod, cnt = 1, 0
		}
		g1[i] = y[i] * d1
		g2[i] = d2
	}
	return hinge + logs + math.Log(prod)
}

// TestLogisticPass_BitIdentical checks that the unweighted logistic pass
// returns the same loss sum and derivatives, bit for bit, as the loop it
// replaced, on margins of every regime: typical (|z| < 10), large (up to
// the 708 cut of expNeg and beyond), ±0, and lengths that are and are not
// multiples of the 32-row log blocks; both with the margins given and
// formed in the pass as m + t·q (a line-search trial).
func TestLogisticPass_BitIdentical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 1))
	for _, n := range []int{0, 1, 31, 32, 33, 64, 1000, 15216} {
		m, y := make([]float64, n), make([]float64, n)
		for i := range m {
			switch rng.IntN(10) {
			case 0:
				m[i] = (rng.Float64() - 0.5) * 1600 // beyond ±708 sometimes
			case 1:
				m[i] = math.Copysign(0, rng.Float64()-0.5)
			default:
				m[i] = rng.NormFloat64() * 3
			}
			y[i] = float64(2*rng.IntN(2) - 1)
		}
		for _, trial := range []bool{false, true} {
			g1, g2 := make([]float64, n), make([]float64, n)
			r1, r2 := make([]float64, n), make([]float64, n)
			var got, want float64
			if trial {
				// A line-search trial: margins m + t·q formed in the pass
				// against AddScaledTo followed by the reference loop.
				q, dst, ref := make([]float64, n), make([]float64, n), make([]float64, n)
				for i := range q {
					q[i] = rng.NormFloat64()
				}
				const step = 0.37
				got = logisticPass(dst, m, step, q, y, g1, g2)
				floats.AddScaledTo(ref, m, step, q)
				want = refLogisticLoop(ref, y, r1, r2)
				for i := range ref {
					if math.Float64bits(dst[i]) != math.Float64bits(ref[i]) {
						t.Fatalf("n=%d row %d: trial margin %v, AddScaledTo %v", n, i, dst[i], ref[i])
					}
				}
			} else {
				got = logisticPass(nil, m, 0, nil, y, g1, g2)
				want = refLogisticLoop(m, y, r1, r2)
			}
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("n=%d trial=%v: sum %v, reference %v", n, trial, got, want)
			}
			for i := range m {
				if math.Float64bits(g1[i]) != math.Float64bits(r1[i]) || math.Float64bits(g2[i]) != math.Float64bits(r2[i]) {
					t.Fatalf("n=%d trial=%v row %d: g1,g2 = %v,%v, reference %v,%v", n, trial, i, g1[i], g2[i], r1[i], r2[i])
				}
			}
		}
	}
}

// TestLogisticZero_BitIdentical checks the cached cold-start state of Fit
// (margins, ℓ′, ℓ″, loss sum and data gradient at w = 0) against the
// passes it replaces — margins, logisticPass and mulTransAdd at w = 0 —
// bit for bit, on dense, sparse and mixed designs, twice (computed, then
// cached).
func TestLogisticZero_BitIdentical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 2))
	for name, r := range testDesigns(rng) {
		n, d := r.N(), r.D()
		m, g1, g2 := make([]float64, n), make([]float64, n), make([]float64, n)
		r.margins(m, make([]float64, d), r.y)
		wantLoss := logisticPass(nil, m, 0, nil, r.y, g1, g2)
		wantGrad := make([]float64, d)
		r.mulTransAdd(wantGrad, g1)
		for round := 0; round < 2; round++ {
			zm, z1, z2 := make([]float64, n), make([]float64, n), make([]float64, n)
			loss, grad := r.logisticZero(zm, z1, z2)
			if math.Float64bits(loss) != math.Float64bits(wantLoss) {
				t.Errorf("%s round %d: loss %v, want %v", name, round, loss, wantLoss)
			}
			for j := range grad {
				if math.Float64bits(grad[j]) != math.Float64bits(wantGrad[j]) {
					t.Errorf("%s round %d: grad[%d] = %v, want %v", name, round, j, grad[j], wantGrad[j])
				}
			}
			for i := range zm {
				if math.Float64bits(zm[i]) != math.Float64bits(m[i]) || math.Float64bits(z1[i]) != math.Float64bits(g1[i]) ||
					math.Float64bits(z2[i]) != math.Float64bits(g2[i]) {
					t.Fatalf("%s round %d row %d: m,g1,g2 = %v,%v,%v, want %v,%v,%v", name, round, i, zm[i], z1[i], z2[i], m[i], g1[i], g2[i])
				}
			}
		}
	}
}

// refWeightedLogisticLoop is the logistic case of evalLoss with weights
// (omega not nil) as it was before weightedLogisticPass (commit c1c1da6),
// kept verbatim — including its omega != nil tests and its unweighted
// branch, which a non-nil omega never takes — as the reference that
// weightedLogisticPass must reproduce bit for bit.
func refWeightedLogisticLoop(m, y, omega, g1, g2 []float64) float64 {
	n := len(m)
	y, g1, g2 = y[:n], g1[:n], g2[:n]
	var s float64
	var hinge, logs float64
	prod, cnt := 1.0, 0
	wprod := 1.0
	for i, z := range m {
		if omega != nil && omega[i] == 0 {
			// Rows left out of a bootstrap replicate (about 37 %).
			g1[i], g2[i] = 0, 0
			continue
		}
		e := expNeg(math.Abs(z)) // in [0, 1]: no overflow for any z
		r := 1 / (1 + e)
		d1 := -e * r // ℓ′(z) = −σ(−z) for z ≥ 0
		var hz float64
		if z < 0 {
			hz = -z
			d1 = -r
		}
		d2 := e * r * r
		if omega != nil {
			o := omega[i]
			if k := int(o); float64(k) == o && k > 0 && k <= maxIntWeight {
				f := 1 + e
				for ; k > 0; k-- {
					wprod *= f
				}
				hinge += o * hz
				if wprod > 0x1p830 {
					logs += math.Log(wprod)
					wprod = 1
				}
			} else {
				s += o * (hz + math.Log1p(e))
			}
			d1 *= o
			d2 *= o
		} else {
			hinge += hz
			prod *= 1 + e
			cnt++
			if cnt == 32 {
				logs += math.Log(prod)
				prod, cnt = 1, 0
			}
		}
		g1[i] = y[i] * d1
		g2[i] = d2
	}
	if omega == nil {
		s = hinge + logs + math.Log(prod)
	} else {
		s += hinge + logs + math.Log(wprod)
	}
	return s
}

// refWeightedPass is the unfused path that Fit took for weighted logistic
// rows before weightedLogisticPass: floats.AddScaledTo for a trial, then
// refWeightedLogisticLoop. It has weightedPass's signature.
func refWeightedPass(dst, m []float64, t float64, q, y, omega, g1, g2 []float64) float64 {
	if q != nil {
		floats.AddScaledTo(dst, m, t, q)
		m = dst
	}
	return refWeightedLogisticLoop(m, y, omega, g1, g2)
}

// sameFloat reports whether a and b have the same bits, or are both NaN
// (Go does not specify the sign or payload of a NaN result, which may
// depend on operand order in registers).
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// TestWeightedLogisticPass_BitIdentical checks that the weighted logistic
// pass returns the same loss sum, derivatives and trial margins, bit for
// bit, as AddScaledTo followed by the loop it replaced, on weights of
// every kind — 0 (skipped rows), bootstrap multiplicities 1…20 (above
// maxIntWeight = 16 they take the log1p path), non-integer weights and
// huge ones — and margins of every regime: typical, beyond the ±708 cut of
// expNeg up to ±800, ±0, ±Inf and NaN (compared as both NaN), with
// lengths that are and are not multiples of 32, margins given (q nil) and
// formed as m + t·q for t = 0, 1 and fractional steps. Rows with weights
// above 1 are made common enough that the running product is flushed
// (2⁸³⁰ is reached after about 1,200 factors of (1 + e) ≈ 2).
func TestWeightedLogisticPass_BitIdentical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 3))
	flushes := 0
	for _, n := range []int{0, 1, 31, 33, 100, 1000, 4097, 15217} {
		for _, wkind := range []string{"bootstrap", "mixed", "nonint"} {
			m, y, omega := make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range m {
				switch rng.IntN(20) {
				case 0, 1:
					m[i] = (rng.Float64() - 0.5) * 1600 // up to ±800
				case 2:
					m[i] = math.Copysign(0, rng.Float64()-0.5)
				case 3:
					m[i] = rng.NormFloat64() * 1e-3 // e near 1
				default:
					m[i] = rng.NormFloat64() * 3
				}
				y[i] = float64(2*rng.IntN(2) - 1)
				switch wkind {
				case "bootstrap":
					omega[i] = float64(rng.IntN(4))
				case "mixed":
					omega[i] = float64(rng.IntN(21)) // 0…20
				case "nonint":
					omega[i] = rng.Float64() * 3
					if rng.IntN(4) == 0 {
						omega[i] = float64(rng.IntN(3))
					}
				}
			}
			if n >= 100 && wkind == "mixed" {
				// Rare values: infinite and NaN margins, zero-weight
				// rows with such margins, and weights that are huge or
				// tiny.
				m[7], m[8], m[9] = math.Inf(1), math.Inf(-1), math.NaN()
				m[10], omega[10] = math.NaN(), 0
				m[11], omega[11] = -math.NaN(), 0
				omega[12], omega[13] = 1e300, 5e-324
			}
			// Without the NaN margins the sum must be finite, so that
			// the comparison of sums is not vacuous.
			finite := !(n >= 100 && wkind == "mixed")
			for _, step := range []float64{-1, 0, 1, 0.37, 1e-9} { // −1: q nil
				g1, g2, r1, r2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
				var got, want float64
				if step < 0 {
					got = weightedLogisticPass(nil, m, 0, nil, y, omega, g1, g2)
					want = refWeightedLogisticLoop(m, y, omega, r1, r2)
				} else {
					q, dst, ref := make([]float64, n), make([]float64, n), make([]float64, n)
					for i := range q {
						q[i] = rng.NormFloat64() * 5
					}
					got = weightedLogisticPass(dst, m, step, q, y, omega, g1, g2)
					want = refWeightedPass(ref, m, step, q, y, omega, r1, r2)
					for i := range ref {
						if !sameFloat(dst[i], ref[i]) {
							t.Fatalf("n=%d %s t=%v row %d: trial margin %v, AddScaledTo %v", n, wkind, step, i, dst[i], ref[i])
						}
					}
				}
				if !sameFloat(got, want) {
					t.Errorf("n=%d %s t=%v: sum %v, reference %v", n, wkind, step, got, want)
				}
				if finite && n > 0 && (math.IsNaN(got) || math.IsInf(got, 0)) {
					t.Errorf("n=%d %s t=%v: sum %v, want finite", n, wkind, step, got)
				}
				for i := range m {
					if !sameFloat(g1[i], r1[i]) || !sameFloat(g2[i], r2[i]) {
						t.Fatalf("n=%d %s t=%v row %d (z=%v, ω=%v): g1,g2 = %v,%v, reference %v,%v",
							n, wkind, step, i, m[i], omega[i], g1[i], g2[i], r1[i], r2[i])
					}
				}
			}
			if wkind == "mixed" && n >= 1000 {
				flushes++
			}
		}
	}
	if flushes == 0 {
		t.Fatal("no case long enough to flush the running product")
	}
}

// TestInlinedExpNeg_BitIdentical checks the two inlined copies of expNeg,
// in logisticPass and weightedLogisticPass, against expNeg itself across
// its whole domain (0 to past the 708 cut, both signs of z): one row at a
// time, each pass's g1 = −e·r or −r and g2 = e·r·r must equal, bit for bit,
// those of its reference loop, which calls expNeg. A copy whose e differed
// by one ulp would change e·r (r = 1/(1 + e) is rounded to at most the
// same ulp of 1, e·r keeps e's relative change) for all but rare inputs, so
// 400,000 points catch a copy out of sync.
func TestInlinedExpNeg_BitIdentical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 4))
	one := []float64{1}
	g1, g2, r1, r2 := make([]float64, 1), make([]float64, 1), make([]float64, 1), make([]float64, 1)
	xs := []float64{0, 1e-300, 1e-17, 0.5 * math.Ln2, math.Ln2, 1, 36, 37, 700, 708, math.Nextafter(708, 1000)}
	for k := 0; k < 100000; k++ {
		xs = append(xs, 708*rng.Float64(), 2*rng.Float64())
	}
	same := func(a, b []float64, s, rs float64) bool {
		return math.Float64bits(s) == math.Float64bits(rs) && math.Float64bits(a[0]) == math.Float64bits(b[0])
	}
	for _, x := range xs {
		for _, z := range []float64{x, -x} {
			m := []float64{z}
			got := logisticPass(nil, m, 0, nil, one, g1, g2)
			want := refLogisticLoop(m, one, r1, r2)
			if !same(g1, r1, got, want) || !same(g2, r2, got, want) {
				t.Fatalf("logisticPass z=%v: sum,g1,g2 = %v,%v,%v; reference (expNeg) %v,%v,%v", z, got, g1[0], g2[0], want, r1[0], r2[0])
			}
			got = weightedLogisticPass(nil, m, 0, nil, one, one, g1, g2)
			want = refWeightedLogisticLoop(m, one, one, r1, r2)
			if !same(g1, r1, got, want) || !same(g2, r2, got, want) {
				t.Fatalf("weightedLogisticPass z=%v: sum,g1,g2 = %v,%v,%v; reference (expNeg) %v,%v,%v", z, got, g1[0], g2[0], want, r1[0], r2[0])
			}
		}
	}
}

// TestFit_WeightedPassBitIdentical checks that Fit on weighted rows with the
// logistic loss gives a Result bit-identical to the path it took before
// weightedLogisticPass (floats.AddScaledTo, then the reference loop), by
// running each fit twice: with weightedPass as it is, and with weightedPass
// set to refWeightedPass. Rows: dense, sparse and Adult-shaped designs with
// bootstrap multiplicities (WithWeights, with zero weights, and Resample,
// without), non-integer weights and weights above maxIntWeight;
// objectives: a small and a tiny λ, objective perturbation with large
// margins, an extra L2 term, cold starts, a warm start and a start far
// from the minimizer. The test counts the
// reference's calls to make sure that both the q = nil evaluation and
// backtracked line-search trials (t < 1) were compared. Not parallel: it
// assigns the package variable weightedPass (restored before returning,
// before any parallel test resumes).
func TestFit_WeightedPassBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 5))
	var evals, trials, backtracks int
	counting := func(dst, m []float64, step float64, q, y, omega, g1, g2 []float64) float64 {
		switch {
		case q == nil:
			evals++
		case step < 1:
			backtracks++
		default:
			trials++
		}
		return refWeightedPass(dst, m, step, q, y, omega, g1, g2)
	}
	designs := testDesigns(rng)
	for _, name := range []string{"sparse", "adult", "dense"} {
		base := designs[name]
		n, d := base.N(), base.D()
		counts := make([]int32, n)
		boot := make([]float64, n)
		for k := 0; k < n; k++ {
			counts[rng.IntN(n)]++
		}
		for i, c := range counts {
			boot[i] = float64(c)
		}
		nonint, big := make([]float64, n), make([]float64, n)
		for i := range nonint {
			nonint[i] = 2 * rng.Float64()
			big[i] = boot[i]
			if i%10 == 0 {
				big[i] = float64(maxIntWeight + 1 + rng.IntN(4))
			}
		}
		rowsets := map[string]*Rows{
			"bootstrap":  base.WithWeights(boot),
			"resample":   base.Resample(nil, counts),
			"noninteger": base.WithWeights(nonint),
			"big":        base.WithWeights(big),
		}
		objs := bitTestObjectives(randVec(rng, d, 2)) // objective perturbation: ‖w‖ ~ 10², |m| ≫ 1
		warm, far := randVec(rng, d, 0.5), randVec(rng, d, 30)
		for wname, rows := range rowsets {
			for oname, obj := range objs {
				opts := FitOptions{GradTol: 1e-9}
				opts.Init = bitTestStart(oname, warm, far)
				// Fresh workspaces: the second fit must not take its start
				// from the first (Workspace.startHit).
				opts.Work = new(Workspace)
				got, err := Fit(rows, obj, opts)
				if err != nil {
					t.Fatal(err)
				}
				weightedPass = counting
				opts.Work = new(Workspace)
				want, err := Fit(rows, obj, opts)
				weightedPass = weightedLogisticPass
				if err != nil {
					t.Fatal(err)
				}
				sameFitBits(t, name+"/"+wname+"/"+oname, "reference path", got, want)
			}
		}
	}
	if weightedPass == nil || evals == 0 || trials == 0 || backtracks == 0 {
		t.Fatalf("reference calls: %d evaluations, %d full-step trials, %d backtracked trials; want all > 0", evals, trials, backtracks)
	}
	t.Logf("compared %d evaluations, %d full-step trials, %d backtracked trials", evals, trials, backtracks)
}

// TestFit_FusedTrialBitIdentical checks that Fit with firstTrial (the
// first line-search trial of a step, its margins and the gradient at the
// trial point fused into one blocked pass) gives the same Result, bit for
// bit, as the unfused sequence (margins of p, logisticPass, then the
// gradient pass), on unweighted rows: sparse, Adult-shaped (dense and
// sparse columns) and dense designs, within one block of rows and over
// several (lengths not multiples of the block or of 32); cold, warm and far starts (the far one backtracks).
// Not parallel: it assigns the package variable fuseFirstTrial (restored
// before returning).
func TestFit_FusedTrialBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 6))
	designs := blockDesigns(rng)
	for _, name := range []string{"sparse", "adult", "dense", "dense/3 blocks", "adult/2 blocks"} {
		rows := designs[name]
		d := rows.D()
		objs := bitTestObjectives(randVec(rng, d, 2))
		warm, far := randVec(rng, d, 0.5), randVec(rng, d, 30)
		for oname, obj := range objs {
			opts := FitOptions{}
			opts.Init = bitTestStart(oname, warm, far)
			opts.Work = new(Workspace) // no start from the other fit
			got, err := Fit(rows, obj, opts)
			if err != nil {
				t.Fatal(err)
			}
			fuseFirstTrial = false
			opts.Work = new(Workspace)
			want, err := Fit(rows, obj, opts)
			fuseFirstTrial = true
			if err != nil {
				t.Fatal(err)
			}
			sameFitBits(t, name+"/"+oname, "unfused", got, want)
		}
	}
}

// bitTestObjectives are the logistic objectives the bit-identity tests fit:
// two penalties, objective perturbation with the linear term lin, an extra
// L2 term, and two names whose fits the tests start warm or far out.
func bitTestObjectives(lin []float64) map[string]Objective {
	return map[string]Objective{
		"lambda=1e-3":     {Loss: Logistic{}, Lambda: 1e-3},
		"lambda=1e-6":     {Loss: Logistic{}, Lambda: 1e-6},
		"objpert":         {Loss: Logistic{}, Lambda: 1e-3, Linear: lin},
		"extraL2":         {Loss: Logistic{}, Lambda: 1e-2, ExtraL2: 1e-3},
		"warm/lambda=1":   {Loss: Logistic{}, Lambda: 1},
		"far/lambda=1e-4": {Loss: Logistic{}, Lambda: 1e-4},
	}
}

// bitTestStart is the start the bit-identity tests give the objective of
// bitTestObjectives named oname: warm or far (a start far out, from which
// the line search backtracks) for the two names meant for them, else nil
// (a cold start).
func bitTestStart(oname string, warm, far []float64) []float64 {
	switch oname {
	case "warm/lambda=1":
		return warm
	case "far/lambda=1e-4":
		return far
	}
	return nil
}

// blockDesigns is testDesigns with two designs over several blocks of
// rows, the last block partial and not a multiple of 32: a dense one over
// three blocks ("dense/3 blocks") and an Adult-shaped one over two
// ("adult/2 blocks").
func blockDesigns(rng *rand.Rand) map[string]*Rows {
	designs := testDesigns(rng)
	X, y := magicShape(rng, 2*block+452)
	designs["dense/3 blocks"] = NewRows(X, y, nil)
	X, y = adultShape(rng, block+77)
	designs["adult/2 blocks"] = NewRows(X, y, nil)
	return designs
}

// sameFitBits fails the test unless got and want (the path named ref)
// agree bit for bit: iterations, Hessians, status, J, ‖∇J‖ and every W[j].
func sameFitBits(t *testing.T, id, ref string, got, want Result) {
	t.Helper()
	if got.Iter != want.Iter || got.Hessians != want.Hessians || got.Status != want.Status ||
		math.Float64bits(got.Value) != math.Float64bits(want.Value) ||
		math.Float64bits(got.GradNorm) != math.Float64bits(want.GradNorm) {
		t.Errorf("%s: (iter, hessians, status, J, ‖∇J‖) = (%d, %d, %s, %v, %v), %s (%d, %d, %s, %v, %v)",
			id, got.Iter, got.Hessians, got.Status, got.Value, got.GradNorm, ref,
			want.Iter, want.Hessians, want.Status, want.Value, want.GradNorm)
	}
	for j := range got.W {
		if math.Float64bits(got.W[j]) != math.Float64bits(want.W[j]) {
			t.Fatalf("%s: W[%d] = %v, %s %v", id, j, got.W[j], ref, want.W[j])
		}
	}
}
