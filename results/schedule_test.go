package results

import (
	"math"
	"math/rand/v2"
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
	unitOrder := serialUnits(1, 1, 1, 1, 4)
	dispatch := serialUnits(4, 1, 1, 1, 1)
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
	// Units without tasks: help changes nothing.
	want["dispatch_unhelped"] = want["dispatch"]
	got := map[string][]SchedulePoint{"unit_order": s.UnitOrder, "dispatch": s.Dispatch, "dispatch_unhelped": s.DispatchUnhelped, "lpt": s.LPT, "bound": s.Bound}
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

func serialUnits(times ...float64) []SimUnit {
	out := make([]SimUnit, len(times))
	for i, s := range times {
		out[i] = SimUnit{Serial: s}
	}
	return out
}

// TestSimulateHelped_HandWorked checks tail help on examples worked by
// hand (the comments step through them).
func TestSimulateHelped_HandWorked(t *testing.T) {
	for _, c := range []struct {
		name     string
		units    []SimUnit
		workers  int
		want     float64
		unhelped float64 // SimulateList of the totals
		lowerBnd float64
	}{
		// w0: long's tasks 1, 2 (ends 2), 4th at [2,3]; w1: short [0,1],
		// then helps: task 3 at [1,2]. Ends at 3 (4 unit tasks, 2 workers:
		// granularity), unhelped 4, bound max(4/2, 5/2) = 2.5.
		{"helper joins", []SimUnit{{Tasks: 4, TaskSeconds: 4}, {Serial: 1}}, 2, 3, 4, 2.5},
		// A (3 tasks of 2) on w0 at 0; B and C (1 each) end at 1, both
		// help: w1 and w2 take A's 2nd and 3rd at [1,3]; w0 ends its task
		// at 2 and waits for them: 3. Unhelped 6; bound max(0+max(2, 6/3), 8/3).
		{"owner waits", []SimUnit{{Tasks: 3, TaskSeconds: 6}, {Serial: 1}, {Serial: 1}}, 3, 3, 6, 8.0 / 3},
		// A's serial part [0,2] is its own: w1 idles after B ends at 1
		// (no tasks yet), then takes A's 2nd task at 2: 3.
		{"serial part first", []SimUnit{{Serial: 2, Tasks: 2, TaskSeconds: 2}, {Serial: 1}}, 2, 3, 4, 3},
		// Help goes to the unit with the most tasks left: at 1, C's worker
		// joins A (2 left), not B (0 left); A ends at 3, B at 2.
		{"most tasks left", []SimUnit{{Tasks: 4, TaskSeconds: 4}, {Tasks: 2, TaskSeconds: 2}, {Serial: 1}}, 3, 3, 4, 7.0 / 3},
		// Freed workers spread by tasks left per worker (issue 27): A (3
		// tasks of 2) and B (2 tasks of 3) start their tasks at 2 on w0
		// and w1; w3, idle since 0, joins A at once (A: 1 left, 1
		// helper). C ends at 3: w2 joins B (1/1 against A's 1/(1 + 1)):
		// B's tasks at [2,5], [3,6]; A's at [2,4], [2,4], [4,6]: 6.
		// Ranked by tasks left alone, w2 would join A (1 against 1, A the
		// earlier), at [3,5], and B's second task would start at 4 on the
		// freed w3: 7.
		{"spread over units", []SimUnit{{Serial: 2, Tasks: 3, TaskSeconds: 6}, {Serial: 2, Tasks: 2, TaskSeconds: 6}, {Serial: 3}}, 4, 6, 8, 5},
		// No help before the last unit starts: on 1 worker, nothing to
		// share; a unit of tasks is its total.
		{"one worker", []SimUnit{{Tasks: 5, TaskSeconds: 5}, {Serial: 2}}, 1, 7, 7, 7},
	} {
		if got := SimulateHelped(c.units, c.workers); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: makespan %v, want %v", c.name, got, c.want)
		}
		totals := make([]float64, len(c.units))
		for i, u := range c.units {
			totals[i] = u.Total()
		}
		if got := SimulateList(totals, c.workers); math.Abs(got-c.unhelped) > 1e-12 {
			t.Errorf("%s: unhelped %v, want %v", c.name, got, c.unhelped)
		}
		if got := lowerBound(c.units, c.workers); math.Abs(got-c.lowerBnd) > 1e-12 {
			t.Errorf("%s: bound %v, want %v", c.name, got, c.lowerBnd)
		}
	}
}

// TestSimulateHelped_Properties: on random units, the makespan is never
// below the lower bound nor above the one-worker total, and units without
// tasks are list scheduling exactly.
func TestSimulateHelped_Properties(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	for trial := 0; trial < 300; trial++ {
		n, w := 1+rng.IntN(12), 1+rng.IntN(8)
		units := make([]SimUnit, n)
		plain := make([]float64, n)
		maxTask := 0.0
		for i := range units {
			units[i].Serial = rng.Float64() * 3
			plain[i] = units[i].Serial
			if rng.IntN(2) == 0 {
				units[i].Tasks = 1 + rng.IntN(40)
				units[i].TaskSeconds = rng.Float64() * 20
				maxTask = max(maxTask, units[i].TaskSeconds/float64(units[i].Tasks))
			}
		}
		if got, want := SimulateHelped(serialUnits(plain...), w), SimulateList(plain, w); math.Abs(got-want) > 1e-9 {
			t.Fatalf("trial %d: no tasks: %v, list scheduling %v", trial, got, want)
		}
		got, bound := SimulateHelped(units, w), lowerBound(units, w)
		if got < bound-1e-9 {
			t.Fatalf("trial %d: makespan %v below the lower bound %v", trial, got, bound)
		}
		total := 0.0
		for _, u := range units {
			total += u.Total()
		}
		if got > total+1e-9 {
			t.Fatalf("trial %d: makespan %v above the total %v", trial, got, total)
		}
	}
}

// TestHelpRanksAbove: tasks left per worker, the unit's own worker
// counted, compared exactly; equal ratios rank neither above.
func TestHelpRanksAbove(t *testing.T) {
	for _, c := range []struct {
		leftA, helpersA, leftB, helpersB int
		want                             bool
	}{
		{100, 0, 90, 0, true},
		{100, 1, 90, 0, false}, // 50 < 90
		{100, 1, 50, 0, false}, // 50 = 50: a tie
		{50, 0, 100, 1, false},
		{101, 1, 50, 0, true},
		{1, 0, 0, 0, true},
		{1 << 40, 3, 1 << 40, 2, false},
	} {
		if got := HelpRanksAbove(c.leftA, c.helpersA, c.leftB, c.helpersB); got != c.want {
			t.Errorf("HelpRanksAbove(%d, %d, %d, %d) = %v, want %v", c.leftA, c.helpersA, c.leftB, c.helpersB, got, c.want)
		}
	}
}
