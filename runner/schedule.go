package runner

import (
	"cmp"
	"math"
	"slices"

	"github.com/dprepro/dprepro/results"
)

// UnitCoster is implemented by an experiment whose units differ much in
// cost: UnitCost returns a relative estimate of what unit u costs (in any
// unit of the kind's choosing — fits × records × features, say — the
// same for every unit of the experiment; > 0). Run dispatches the most
// expensive units first (longest processing time first, LPT), and a
// sharded run gives each shard a share of the estimated total rather
// than of the unit count. The estimate must depend on the spec alone
// (never on a clock or the machine), so that every shard of a run
// computes the same assignment.
//
// Neither changes a result: every unit draws from its own stream (Env)
// and the rows are gathered in the order of Experiment.Units, so rows.csv
// and every other output are byte-identical for any dispatch order,
// worker count or shard assignment.
type UnitCoster interface {
	UnitCost(u Unit) float64
}

// unitCosts returns the cost of each of units (parallel to it) for
// ordering them, and whether there is any information to order by: a
// unit's time measured by an earlier attempt (recorded, in seconds, for
// a unit computed again because its inputs changed) where there is one,
// else the kind's estimate (UnitCoster) scaled to seconds by the ratio
// of measured to estimated time over every unit with both (calib, the
// checkpoint's recorded units); with no measured time at all the
// estimates are used as they are. Without an estimate, a unit with no
// measured time costs the mean measured time (no information either
// way). A nil result means: no information, keep the units' order.
func unitCosts(units []Unit, coster UnitCoster, measured func(key string) (float64, bool), calib []Unit) []float64 {
	est := func(u Unit) float64 { return 0 }
	if coster != nil {
		est = func(u Unit) float64 { return max(coster.UnitCost(u), 0) }
	}
	scale, sumM, sumE, nM := 1.0, 0.0, 0.0, 0
	for _, u := range calib {
		if s, ok := measured(u.Key()); ok {
			sumM += s
			nM++
			sumE += est(u)
		}
	}
	if coster != nil && sumM > 0 && sumE > 0 {
		scale = sumM / sumE
	}
	costs := make([]float64, len(units))
	known := coster != nil
	for i, u := range units {
		if s, ok := measured(u.Key()); ok {
			costs[i], known = s, true
			continue
		}
		switch {
		case coster != nil:
			costs[i] = scale * est(u)
		case nM > 0:
			costs[i] = sumM / float64(nM)
		}
	}
	if !known {
		return nil
	}
	return costs
}

// dispatchOrder returns the order in which Run starts units: the most
// expensive first (costs parallel to units; ties keep the units' order).
// For an experiment with scratch scopes (scoper non-nil) the units stay
// grouped scope by scope, so that few scopes' files are open at once: the
// scopes by their total cost, largest first, and within a scope its units
// largest first. Nil costs keep the units' order (grouped by scope in the
// order of each scope's first unit, as before).
func dispatchOrder(units []Unit, costs []float64, scoper ScratchScoper) []Unit {
	if costs == nil {
		if scoper != nil {
			return groupByScope(units, scoper)
		}
		return slices.Clone(units)
	}
	idx := make([]int, len(units))
	for i := range idx {
		idx[i] = i
	}
	byCost := func(a, b int) int { return cmp.Or(cmp.Compare(costs[b], costs[a]), cmp.Compare(a, b)) }
	if scoper == nil {
		slices.SortStableFunc(idx, byCost)
	} else {
		scopeOf := make([]string, len(units))
		total := map[string]float64{}
		first := map[string]int{}
		for i, u := range units {
			sc := scoper.ScratchScope(u)
			scopeOf[i] = sc
			total[sc] += costs[i]
			if _, ok := first[sc]; !ok {
				first[sc] = i
			}
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			sa, sb := scopeOf[a], scopeOf[b]
			if sa != sb {
				return cmp.Or(cmp.Compare(total[sb], total[sa]), cmp.Compare(first[sa], first[sb]))
			}
			return byCost(a, b)
		})
	}
	out := make([]Unit, len(units))
	for i, j := range idx {
		out[i] = units[j]
	}
	return out
}

// shardUnits returns the units of shard s among units (in their order).
// Without estimates (costs nil) shard i takes the units at positions p
// with p mod N = i. With estimates the assignment balances the estimated
// cost: greedy LPT — the units from the most to the least expensive
// (ties by position), each to the shard with the least estimated cost so
// far (ties to the lowest index). The estimates depend on the spec only
// (UnitCoster), so every shard computes the same assignment on any
// machine; merging needs none of it (results.MergeCheckpoints takes the
// union of the shards' units and checks it is every unit).
func shardUnits(units []Unit, costs []float64, s Shard) []Unit {
	var mine []Unit
	if costs == nil {
		for p, u := range units {
			if p%s.Count == s.Index {
				mine = append(mine, u)
			}
		}
		return mine
	}
	assign := lptAssign(costs, s.Count)
	for p, u := range units {
		if assign[p] == s.Index {
			mine = append(mine, u)
		}
	}
	return mine
}

// lptAssign assigns items of the given costs to n bins by greedy LPT
// (largest first, ties by index; each to the least loaded bin, ties to
// the lowest bin) and returns each item's bin.
func lptAssign(costs []float64, n int) []int {
	idx := make([]int, len(costs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(costs[b], costs[a]), cmp.Compare(a, b)) })
	load := make([]float64, n)
	bin := make([]int, len(costs))
	for _, i := range idx {
		best := 0
		for b := 1; b < n; b++ {
			if load[b] < load[best] {
				best = b
			}
		}
		bin[i] = best
		load[best] += costs[i]
	}
	return bin
}

// scheduleOf returns the manifest's simulated schedules (results.Schedule)
// of the units whose times are known (times, by key), dispatched in the
// order order (the run's: dispatchOrder over every unit of the run) and
// in the units' own order (Experiment.Units, the order before issue 27),
// with the rank correlation of coster's estimates (when not nil) and the
// times.
func scheduleOf(units, order []Unit, times map[string]results.SimUnit, coster UnitCoster) *results.Schedule {
	pick := func(us []Unit) []results.SimUnit {
		var out []results.SimUnit
		for _, u := range us {
			if s, ok := times[u.Key()]; ok {
				out = append(out, s)
			}
		}
		return out
	}
	s := results.SimulateSchedules(pick(units), pick(order), results.ScheduleWorkers)
	if s == nil || coster == nil {
		return s
	}
	var est, got []float64
	for _, u := range units {
		if t, ok := times[u.Key()]; ok {
			est = append(est, coster.UnitCost(u))
			got = append(got, t.Total())
		}
	}
	if r := results.Spearman(est, got); !math.IsNaN(r) {
		s.Estimates = &results.EstimateCheck{Units: len(est), Spearman: math.Round(r*1e4) / 1e4}
	}
	return s
}
