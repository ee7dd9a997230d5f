package results

import (
	"math"
	"testing"
)

// TestSimulateList_HandWorked checks list scheduling on examples worked
// by hand.
func TestSimulateList_HandWorked(t *testing.T) {
	for _, c := range []struct {
		name    string
		times   []float64
		workers int
		want    float64
	}{
		// 2 workers, order 1,1,2: w0 1→[0,1], w1 1→[0,1], 2 → w0 [1,3]: 3.
		{"short first", []float64{1, 1, 2}, 2, 3},
		// Longest first: 2 → w0 [0,2], 1 → w1 [0,1], 1 → w1 [1,2]: 2.
		{"long first", []float64{2, 1, 1}, 2, 2},
		// The textbook LPT-vs-list example (Graham 1969) on 2 workers:
		// 3,3,2,2,2 in LPT order: w0 3, w1 3, w0 5, w1 5, w0 7: 7 (the
		// optimum is 6: {3,3},{2,2,2}; LPT is within 4/3 − 1/(3m)).
		{"graham lpt", []float64{3, 3, 2, 2, 2}, 2, 7},
		// Same times, short first: 2,2,2,3,3: w0 2, w1 2, w0 4, w1 5 (3
		// on w1 at 2), w0 7 (3 on w0 at 4): 7.
		{"graham short first", []float64{2, 2, 2, 3, 3}, 2, 7},
		// The case: one long unit last holds the run. 16 workers,
		// 15 units of 1 then one of 10: the 10 starts at 0 on the 16th
		// worker: 10. With 17 units of 1 before it, the 10 starts at 1: 11.
		{"long last, free worker", append(ones(15), 10), 16, 10},
		{"long last, all busy", append(ones(17), 10), 16, 11},
		{"more workers than units", []float64{4, 1}, 32, 4},
		{"one worker sums", []float64{1.5, 2.5, 3}, 1, 7},
		{"no units", nil, 4, 0},
	} {
		if got := SimulateList(c.times, c.workers); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: makespan %v, want %v", c.name, got, c.want)
		}
	}
}

func ones(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// TestSimulateSchedules_Orders checks the three orders and the bound on
// a hand-worked example: times 1,1,1,1,4 in unit order on 2 workers:
// list gives w0 1,1 → 2, then 4 on w0 at 2 → 6 (w1 1,1 → 2): 6; LPT gives
// 4 on w0, the four 1s on w1: 4 = the bound max(4, 8/2).
func TestSimulateSchedules_Orders(t *testing.T) {
	unitOrder := []float64{1, 1, 1, 1, 4}
	dispatch := []float64{4, 1, 1, 1, 1}
	s := SimulateSchedules(unitOrder, dispatch, []int{2, 4})
	if s.Units != 5 || s.TotalSeconds != 8 || s.LongestSeconds != 4 || s.Note == "" {
		t.Fatalf("header: %+v", s)
	}
	want := map[string][]SchedulePoint{
		// 4 workers, unit order: the four 1s on w0..w3, the 4 on w0 at 1: 5.
		"unit_order": {{2, 6, math.Round(8.0/12*1e4) / 1e4}, {4, 5, 0.4}},
		"dispatch":   {{2, 4, 1}, {4, 4, 0.5}},
		"lpt":        {{2, 4, 1}, {4, 4, 0.5}},
		"bound":      {{2, 4, 1}, {4, 4, 0.5}},
	}
	got := map[string][]SchedulePoint{"unit_order": s.UnitOrder, "dispatch": s.Dispatch, "lpt": s.LPT, "bound": s.Bound}
	for k, w := range want {
		if len(got[k]) != len(w) {
			t.Fatalf("%s: %v, want %v", k, got[k], w)
		}
		for i := range w {
			if got[k][i] != w[i] {
				t.Errorf("%s[%d] = %+v, want %+v", k, i, got[k][i], w[i])
			}
		}
	}
	if SimulateSchedules(nil, nil, ScheduleWorkers) != nil {
		t.Error("no units: want nil")
	}
}

// TestSpearman checks the rank correlation on hand-ranked data.
func TestSpearman(t *testing.T) {
	for _, c := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"same order", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 1000}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		// Ranks x 1,2,3; y 1,3,2: d² = 0+1+1 = 2, ρ = 1 − 6·2/(3·8) = 0.5.
		{"one swap", []float64{1, 2, 3}, []float64{5, 9, 7}, 0.5},
		// Ties: x ranks 1.5,1.5,3; y 1,2,3: Pearson of the ranks,
		// mean 2: dx = −.5,−.5,1; dy = −1,0,1: Σdxdy = 1.5, Σdx² = 1.5,
		// Σdy² = 2: 1.5/√3 = 0.8660.
		{"tie", []float64{1, 1, 2}, []float64{1, 2, 3}, 1.5 / math.Sqrt(3)},
	} {
		if got := Spearman(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if !math.IsNaN(Spearman([]float64{1}, []float64{2})) || !math.IsNaN(Spearman([]float64{1, 1}, []float64{1, 2})) {
		t.Error("undefined correlation: want NaN")
	}
}
