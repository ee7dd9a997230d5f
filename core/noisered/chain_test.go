package noisered

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/mech"
)

func TestGeometric_Grid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		lo, hi float64
		T      int
	}{
		{"experiments", 1e-5, 70, 1000},
		{"marginal-tests", 0.01, 10, 50},
		{"two-levels", 0.5, 2, 2},
		{"wide", 1e-300, 1e300, 7}, // hi/lo overflows
		{"narrow", 1, 1 + 1e-12, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eps, err := Geometric(tt.lo, tt.hi, tt.T)
			if err != nil {
				t.Fatal(err)
			}
			if len(eps) != tt.T || eps[0] != tt.lo || eps[tt.T-1] != tt.hi {
				t.Fatalf("len %d, ends %v, %v; want %d, %v, %v", len(eps), eps[0], eps[len(eps)-1], tt.T, tt.lo, tt.hi)
			}
			// Constant log-ratio: the exact grid has ln ε_t = ln lo +
			// (t−1)/(T−1)·ln(hi/lo); each level carries a relative error of a
			// few ulps times |ln ε_t| (≤ 700 here), so 1e-12 relative.
			span := math.Log(tt.hi) - math.Log(tt.lo)
			for k, e := range eps {
				want := math.Exp(math.Log(tt.lo) + float64(k)/float64(tt.T-1)*span)
				if math.Abs(e-want) > 1e-12*want {
					t.Errorf("eps[%d] = %v, want %v", k, e, want)
				}
				if k > 0 && !(e > eps[k-1]) {
					t.Errorf("eps[%d] = %v not > eps[%d] = %v", k, e, k-1, eps[k-1])
				}
			}
		})
	}
}

func TestGeometric_Errors(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name   string
		lo, hi float64
		T      int
	}{
		{"lo zero", 0, 1, 10},
		{"lo negative", -1, 1, 10},
		{"lo NaN", nan, 1, 10},
		{"hi NaN", 0.1, nan, 10},
		{"hi Inf", 0.1, inf, 10},
		{"hi equal lo", 1, 1, 10},
		{"hi below lo", 2, 1, 10},
		{"T one", 0.1, 1, 1},
		{"T zero", 0.1, 1, 0},
		{"T negative", 0.1, 1, -3},
		{"levels collide", 1, math.Nextafter(1, 2), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eps, err := Geometric(tt.lo, tt.hi, tt.T)
			if err == nil {
				t.Fatalf("Geometric(%v, %v, %d) = %v, want an error", tt.lo, tt.hi, tt.T, eps)
			}
			if !strings.HasPrefix(err.Error(), "noisered: geometric: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestNewReduce_Errors(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	good := []float64{0.1, 1, 10}
	tests := []struct {
		name  string
		v     []float64
		delta float64
		eps   []float64
	}{
		{"delta zero", []float64{1}, 0, good},
		{"delta negative", []float64{1}, -1, good},
		{"delta NaN", []float64{1}, nan, good},
		{"delta Inf", []float64{1}, inf, good},
		{"eps nil", []float64{1}, 1, nil},
		{"eps empty", []float64{1}, 1, []float64{}},
		{"eps zero", []float64{1}, 1, []float64{0, 1}},
		{"eps negative", []float64{1}, 1, []float64{-1, 1}},
		{"eps NaN", []float64{1}, 1, []float64{0.1, nan, 1}},
		{"eps Inf", []float64{1}, 1, []float64{0.1, inf}},
		{"eps equal", []float64{1}, 1, []float64{0.1, 1, 1}},
		{"eps decreasing", []float64{1}, 1, []float64{1, 0.1}},
		{"scale overflows", []float64{1}, 1e300, []float64{1e-300, 1}},
		{"scale underflows", []float64{1}, 1e-300, []float64{1, 1e300}},
		{"v NaN", []float64{1, nan}, 1, good},
		{"v +Inf", []float64{inf}, 1, good},
		{"v -Inf", []float64{0, -inf}, 1, good},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c, err := New(newRNG(1, "errors"), tt.v, tt.delta, tt.eps); err == nil {
				t.Errorf("New: got a chain of %d levels, want an error", c.Len())
			} else if !strings.HasPrefix(err.Error(), "noisered: new: ") {
				t.Errorf("New: error %q lacks the prefix", err)
			}
			if out, err := Reduce(newRNG(1, "errors"), tt.v, tt.delta, tt.eps); err == nil {
				t.Errorf("Reduce: got %d levels, want an error", len(out))
			} else if !strings.HasPrefix(err.Error(), "noisered: reduce: ") {
				t.Errorf("Reduce: error %q lacks the prefix", err)
			}
		})
	}
}

// TestChain_Protocol checks Step, Epsilon, Next, Changed and Len through a
// whole walk, including T = 1 and an empty v.
func TestChain_Protocol(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		n    int
		eps  []float64
	}{
		{"T=1", 3, []float64{0.5}},
		{"T=2", 4, []float64{0.5, 1}},
		{"irregular", 50, irregularGrid()},
		{"empty v", 0, []float64{0.1, 1, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(newRNG(2, "protocol/"+tt.name), testVector(tt.n), 1, tt.eps)
			if err != nil {
				t.Fatal(err)
			}
			T := len(tt.eps)
			if c.Len() != T || c.Step() != 0 || c.Epsilon() != 0 || len(c.Changed()) != 0 || c.Value() != nil {
				t.Fatalf("before Next: Len %d, Step %d, Epsilon %v, Changed %v, Value %v", c.Len(), c.Step(), c.Epsilon(), c.Changed(), c.Value())
			}
			if c.Events() < tt.n {
				t.Errorf("Events() = %d < len(v) = %d initial draws", c.Events(), tt.n)
			}
			for k := 1; k <= T; k++ {
				if !c.Next() {
					t.Fatalf("Next returned false at step %d of %d", k, T)
				}
				if c.Step() != k || c.Epsilon() != tt.eps[k-1] || len(c.Value()) != tt.n {
					t.Fatalf("step %d: Step %d, Epsilon %v, len(Value) %d", k, c.Step(), c.Epsilon(), len(c.Value()))
				}
				if k == 1 {
					if want := seq(tt.n); !slices.Equal(c.Changed(), want) {
						t.Errorf("t = 1: Changed = %v, want all coordinates", c.Changed())
					}
				}
			}
			last := slices.Clone(c.Value())
			for range 2 {
				if c.Next() {
					t.Fatal("Next returned true after step T")
				}
				if c.Step() != T || c.Epsilon() != tt.eps[T-1] || len(c.Changed()) != 0 || !slices.Equal(c.Value(), last) {
					t.Errorf("after the end: Step %d, Epsilon %v, Changed %v, value changed %v", c.Step(), c.Epsilon(), c.Changed(), !slices.Equal(c.Value(), last))
				}
			}
		})
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestChain_Changed checks on a large chain that Changed lists, in
// ascending order, exactly the coordinates whose bits differ from the
// previous step, so that every other coordinate is bit-identical.
func TestChain_Changed(t *testing.T) {
	t.Parallel()
	const n = 3000
	eps, err := Geometric(1e-3, 70, 200)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(newRNG(3, "changed"), testVector(n), 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	var prev []float64
	total := 0
	for c.Next() {
		cur := c.Value()
		var want []int
		for i := range cur {
			if prev == nil || !same(prev[i], cur[i]) {
				want = append(want, i)
			}
		}
		if !slices.Equal(c.Changed(), want) {
			t.Fatalf("step %d: Changed = %v, want %v", c.Step(), c.Changed(), want)
		}
		if c.Step() > 1 {
			total += len(want)
		}
		prev = slices.Clone(cur)
	}
	if total == 0 || total > c.Events()-n {
		t.Errorf("%d changes along the walk; %d add events", total, c.Events()-n)
	}
}

// TestChain_Deterministic checks that one seed gives bit-identical chains
// and Reduce outputs, and that another seed gives different ones.
func TestChain_Deterministic(t *testing.T) {
	t.Parallel()
	v := testVector(500)
	eps := irregularGrid()
	walk := func(seed uint64) (vals [][]float64, changed [][]int, events int) {
		c, err := New(newRNG(seed, "determinism"), v, 1, eps)
		if err != nil {
			t.Fatal(err)
		}
		for c.Next() {
			vals = append(vals, slices.Clone(c.Value()))
			changed = append(changed, slices.Clone(c.Changed()))
		}
		return vals, changed, c.Events()
	}
	bitsEqual := func(a, b [][]float64) bool {
		return slices.EqualFunc(a, b, func(x, y []float64) bool { return slices.EqualFunc(x, y, same) })
	}
	a, ca, ea := walk(4)
	b, cb, eb := walk(4)
	if !bitsEqual(a, b) || ea != eb || !slices.EqualFunc(ca, cb, slices.Equal[[]int]) {
		t.Error("Chain: same seed, different output")
	}
	if c, _, _ := walk(5); bitsEqual(a, c) {
		t.Error("Chain: seeds 4 and 5 gave the same output")
	}
	ra, err := Reduce(newRNG(4, "determinism"), v, 1, eps)
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := Reduce(newRNG(4, "determinism"), v, 1, eps)
	rc, _ := Reduce(newRNG(5, "determinism"), v, 1, eps)
	if !bitsEqual(ra, rb) {
		t.Error("Reduce: same seed, different output")
	}
	if bitsEqual(ra, rc) {
		t.Error("Reduce: seeds 4 and 5 gave the same output")
	}
}

// TestNewReduce_CopyInputs checks that New and Reduce neither keep nor
// modify v and eps, and that Reduce's levels are distinct slices.
func TestNewReduce_CopyInputs(t *testing.T) {
	t.Parallel()
	v := testVector(20)
	eps := irregularGrid()
	v0, eps0 := slices.Clone(v), slices.Clone(eps)

	ref, _ := New(newRNG(6, "copy"), v0, 1, eps0)
	c, err := New(newRNG(6, "copy"), v, 1, eps)
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		v[i] = 1e9
	}
	for k := range eps {
		eps[k] = float64(k + 1)
	}
	for c.Next() && ref.Next() {
		if !slices.Equal(c.Value(), ref.Value()) || c.Epsilon() != ref.Epsilon() {
			t.Fatalf("step %d: the chain changed with its inputs", c.Step())
		}
	}

	v, eps = slices.Clone(v0), slices.Clone(eps0)
	out, err := Reduce(newRNG(6, "copy"), v, 1, eps)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v, v0) || !slices.Equal(eps, eps0) {
		t.Error("Reduce modified its inputs")
	}
	out[0] = append(out[0], 42)
	out[0][0] = math.Inf(1)
	for k := 1; k < len(out); k++ {
		if out[k][0] == math.Inf(1) || len(out[k]) != len(v) {
			t.Fatalf("level %d aliases level 1", k+1)
		}
	}
}

// TestChain_BitFaithful replays the documented draw order of New on a copy
// of the generator and checks every draw against the walked chain:
//
//   - v̂_T = v + L_T bit for bit, L_T the first Laplace draw of the
//     coordinate (so the final v̂_T − v is the initial draw);
//   - each uniform U put the next add at the step s with
//     (ε_s/ε_{t+1})² < U ≤ (ε_{s+1}/ε_{t+1})², recomputed here from squared
//     ratios (New compares logarithms), or no add when U ≤ (ε_1/ε_{t+1})²;
//   - at each add v̂_s = v̂_{s+1} + L bit for bit, L the replayed
//     Lap(Δ/ε_s) draw, and the value is unchanged at every other step.
//
// The chains have 8 coordinates, so the replay also checks the
// coordinate-major order and the grouping of events by step. This test is
// deterministic; a U within ~1e-15 of a boundary could make the two
// formulas disagree, which is not the case for these seeds.
func TestChain_BitFaithful(t *testing.T) {
	t.Parallel()
	const (
		n     = 8
		delta = 1.5
	)
	for _, g := range gridCases(t) {
		t.Run(g.name, func(t *testing.T) {
			T := len(g.eps)
			adds := 0
			for seed := range uint64(100) {
				v := make([]float64, n)
				for i := range v {
					v[i] = 1000 * math.Sin(float64(seed*n)+float64(i)) // not exactly representable sums
				}
				name := fmt.Sprintf("replay/%s/%d", g.name, seed)
				c, err := New(newRNG(7, name), v, delta, g.eps)
				if err != nil {
					t.Fatal(err)
				}
				p := make([][]float64, 0, T)
				for c.Next() {
					p = append(p, slices.Clone(c.Value()))
				}
				rng := newRNG(7, name)
				for i := range n {
					lT := mech.LaplaceNoise(rng, delta/g.eps[T-1])
					if got, want := p[T-1][i], v[i]+lT; !same(got, want) {
						t.Fatalf("seed %d, coordinate %d: v̂_T = %v, want v + L_T = %v", seed, i, got, want)
					}
					lvl := T - 1 // 0-based level of the current value
					for lvl > 0 {
						u := rng.Float64()
						s := lvl - 1
						for s >= 0 && same(p[s][i], p[s+1][i]) {
							s--
						}
						top := g.eps[lvl]
						if s < 0 {
							if r := g.eps[0] / top; !(u <= r*r) {
								t.Fatalf("seed %d, coordinate %d: no add below level %d but U = %v > (ε_1/ε_%d)² = %v", seed, i, lvl+1, u, lvl+1, r*r)
							}
							break
						}
						lo, hi := g.eps[s]/top, g.eps[s+1]/top
						if !(lo*lo < u && u <= hi*hi) {
							t.Fatalf("seed %d, coordinate %d: add at step %d from level %d, but U = %v is not in (%v, %v]", seed, i, s+1, lvl+1, u, lo*lo, hi*hi)
						}
						l := mech.LaplaceNoise(rng, delta/g.eps[s])
						if got, want := p[s][i], p[s+1][i]+l; !same(got, want) {
							t.Fatalf("seed %d, coordinate %d: v̂_%d = %v, want v̂_%d + L = %v", seed, i, s+1, got, s+2, want)
						}
						adds++
						lvl = s
					}
				}
				if c.Events() != n+numAdds(p) {
					t.Fatalf("seed %d: Events() = %d, want %d", seed, c.Events(), n+numAdds(p))
				}
			}
			if adds == 0 {
				t.Error("no adds replayed")
			}
		})
	}
}

func numAdds(p [][]float64) int {
	s := 0
	for _, c := range numChanges(p) {
		s += c
	}
	return s
}

// TestLogGrid_First checks the guide-table search of New against a plain
// binary search (sort.Search), for thresholds at, just beside and between
// the grid values, on grids that are geometric, irregular, clustered,
// extreme in range, and with logarithms that round to equal values.
func TestLogGrid_First(t *testing.T) {
	t.Parallel()
	geo, _ := Geometric(1e-5, 70, 1000)
	clustered := []float64{1, 1.0000001, 1.0000002, 1.0000003, 50, 50.5, 1e6}
	tests := []struct {
		name string
		eps  []float64
	}{
		{"geometric", geo},
		{"irregular", irregularGrid()},
		{"clustered", clustered},
		{"extreme", []float64{5e-324, 1e-300, 1, 1e300, math.MaxFloat64}},
		{"equal logs", []float64{1e10, math.Nextafter(1e10, 2e10), math.Nextafter(math.Nextafter(1e10, 2e10), 2e10)}},
		{"T=2", []float64{0.5, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newLogGrid(tt.eps)
			ls := g.logSq
			rng := newRNG(8, "first/"+tt.name)
			for lvl := 1; lvl < len(ls); lvl++ {
				var thrs []float64
				for j := 0; j <= lvl; j++ {
					thrs = append(thrs, ls[j], math.Nextafter(ls[j], math.Inf(-1)), math.Nextafter(ls[j], math.Inf(1)))
				}
				for range 50 {
					thrs = append(thrs, math.Log(rng.Float64())+ls[lvl])
				}
				thrs = append(thrs, math.Inf(-1), ls[0]-1e300)
				for _, thr := range thrs {
					if thr > ls[lvl] {
						continue // outside the precondition thr ≤ ℓ_lvl
					}
					want := sort.Search(lvl, func(j int) bool { return ls[j] >= thr })
					if got := g.first(thr, lvl); got != want {
						t.Fatalf("first(%v, %d) = %d, want %d", thr, lvl, got, want)
					}
				}
			}
		})
	}
}

// TestNew_ExtremeGrid checks that ε spanning the float64 range (where ε²
// overflows or underflows) gives a chain without error or panic, with
// finite values and the right marginal order of magnitude at the top.
func TestNew_ExtremeGrid(t *testing.T) {
	t.Parallel()
	eps := []float64{1e-200, 1e-160, 1e-100, 1, 1e100, 1e160, 1e200}
	v := testVector(200)
	c, err := New(newRNG(9, "extreme"), v, 1e-100, eps)
	if err != nil {
		t.Fatal(err)
	}
	for c.Next() {
		for i, x := range c.Value() {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("step %d: v̂[%d] = %v", c.Step(), i, x)
			}
		}
	}
	// At t = T the scale is 1e-300: v̂_T = v exactly in float64.
	if !slices.Equal(c.Value(), v) {
		t.Error("v̂_T differs from v although the noise is below one ulp")
	}
	if _, err := Reduce(newRNG(9, "extreme"), v, 1e-100, eps); err != nil {
		t.Fatal(err)
	}
}

// TestSecureNoise checks New and Reduce given mech.CryptoRand, the
// generator of a run with secure noise: the resampling coins come from it
// as well as the Laplace draws (coins from a published seed would tell which
// levels added noise to which coordinate), so two chains on one input give
// different schedules.
func TestSecureNoise(t *testing.T) {
	v := testVector(500)
	eps := irregularGrid()
	schedule := func() (changed [][]int) {
		c, err := New(mech.CryptoRand(), v, 1, eps)
		if err != nil {
			t.Fatal(err)
		}
		for c.Next() {
			changed = append(changed, slices.Clone(c.Changed()))
		}
		return changed
	}
	if a, b := schedule(), schedule(); slices.EqualFunc(a, b, slices.Equal[[]int]) {
		t.Error("New: two chains gave the same resampling schedule with crypto/rand")
	}
	if _, err := Reduce(mech.CryptoRand(), v, 1, eps); err != nil {
		t.Fatal(err)
	}
}
