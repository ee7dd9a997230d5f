package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
)

// UnitTime is the measured time of one unit, recorded with its rows in the
// checkpoint (so that a resumed unit, and every unit of a merged shard,
// keeps the time it was measured with) and summarised in the manifest
// ([UnitTimes]). It is a measurement, not a result: it differs from run to
// run and is never part of rows.csv, summary.csv, a checkpoint line's
// checksum or anything `dprepro check` compares.
type UnitTime struct {
	// Seconds is the unit's time in the run's measure (Measure): the CPU
	// time of the goroutine's OS thread while the unit ran, or its wall
	// time where thread CPU time is not available.
	Seconds float64 `json:"s"`
	// Measure is MeasureThreadCPU or MeasureWall.
	Measure string `json:"measure"`
	// WallSeconds is the unit's wall-clock time (always measured).
	WallSeconds float64 `json:"wall_s"`
	// EndSeconds is when the unit ended, in seconds since the attempt
	// that computed it started its units: the largest over an attempt is
	// that attempt's units-phase wall time.
	EndSeconds float64 `json:"end_s"`
	// Attempt identifies the process's attempt that computed the unit
	// (its start, RFC 3339 with nanoseconds).
	Attempt string `json:"attempt"`
	// Shard is "i/N" when a shard computed the unit, empty otherwise.
	Shard string `json:"shard,omitempty"`
	// Workers is the attempt's worker count.
	Workers int `json:"workers"`
}

// The measures of a [UnitTime].
const (
	// MeasureThreadCPU is the user plus system CPU time of the OS thread
	// the unit's goroutine was locked to (getrusage RUSAGE_THREAD, Linux).
	// Not counted: goroutines the unit starts, the garbage collector's
	// background workers, and external worker processes (their time is
	// the child's; the unit's thread waits for them).
	MeasureThreadCPU = "thread_cpu"
	// MeasureWall is the wall-clock time while the unit ran, on platforms
	// without per-thread CPU time; on a loaded machine it includes the
	// time the unit waited for a core.
	MeasureWall = "wall"
)

// UnitTimes is the manifest's record of the run's per-unit times (issue
// 27): what each unit cost, so that a slow run can be told apart from a
// badly balanced one. Times vary between runs and machines: nothing
// compares them (`dprepro check` and the references compare summary.csv
// and the manifests' design, data and noise only).
type UnitTimes struct {
	// Kind is the spec's experiment kind, whose units these are.
	Kind string `json:"kind"`
	// Measure says what Seconds measures (MeasureThreadCPU or
	// MeasureWall, of the units computed by this process).
	Measure string `json:"measure"`
	// Note says what the measure leaves out.
	Note string `json:"note"`
	// Computed summarises the units this process computed, with its
	// worker count and the wall time of its units phase.
	Computed UnitTimeStats `json:"computed"`
	// Resumed counts the units taken from the checkpoint (an earlier
	// attempt, or the shards of a merge): not computed, so not timed by
	// this process.
	Resumed int `json:"resumed"`
	// ResumedTimed summarises the times the resumed units were measured
	// with when they were computed (recorded in the checkpoint); absent
	// when none recorded one (a checkpoint of an older build).
	ResumedTimed *UnitTimeStats `json:"resumed_timed,omitempty"`
	// Shards summarises, per shard ("i/N"), the units each shard computed
	// (a merged run's units, from their checkpoint records).
	Shards []ShardTimes `json:"shards,omitempty"`
	// Scopes summarises the computed units per scratch scope, for a kind
	// whose units share scratch files by scope (runner.ScratchScoper).
	Scopes []ScopeTimes `json:"by_scope,omitempty"`
	// Scaling simulates the units phase on 2 to 32 workers from the
	// measured times, in the experiment's order, the runner's dispatch
	// order and longest first ([Schedule]); absent when no unit has a
	// time.
	Scaling *Schedule `json:"scaling,omitempty"`
}

// ShardTimes is one shard's [UnitTimeStats].
type ShardTimes struct {
	Shard string `json:"shard"`
	UnitTimeStats
}

// ScopeTimes is one scratch scope's [UnitTimeStats].
type ScopeTimes struct {
	Scope string `json:"scope"`
	UnitTimeStats
}

// UnitTimeStats summarises a set of unit times.
type UnitTimeStats struct {
	Count        int     `json:"count"`
	TotalSeconds float64 `json:"total_s"`
	// P50, P90, P99 are nearest-rank quantiles (the ⌈p·n⌉-th smallest
	// time), MaxSeconds the largest.
	P50        float64 `json:"p50_s"`
	P90        float64 `json:"p90_s"`
	P99        float64 `json:"p99_s"`
	MaxSeconds float64 `json:"max_s"`
	// Longest are the (up to) five longest units, longest first.
	Longest []UnitDuration `json:"longest,omitempty"`
	// Workers and WallSeconds are those of the units phase(s) that
	// computed the units: the worker count, and the sum over attempts of
	// each attempt's units-phase wall time. Zero when unknown.
	Workers     int     `json:"workers,omitempty"`
	WallSeconds float64 `json:"wall_s,omitempty"`
	// CriticalPathSeconds is the lower bound max(longest unit,
	// total/workers) on the units phase with Workers workers (no
	// schedule finishes sooner); BusyFraction is total/(workers × wall),
	// the share of the workers' time spent in the units (in the measure's
	// terms). Zero when Workers or WallSeconds is unknown.
	CriticalPathSeconds float64 `json:"critical_path_lower_bound_s,omitempty"`
	BusyFraction        float64 `json:"busy_fraction,omitempty"`
}

// UnitDuration is one unit's time.
type UnitDuration struct {
	Unit    string  `json:"unit"`
	Seconds float64 `json:"s"`
}

// longestKept is how many of the longest units UnitTimeStats lists.
const longestKept = 5

// SummariseUnitTimes returns the statistics of times (unit key → time),
// for units computed with workers workers during units phases whose wall
// times add up to wall (zero when unknown: then no critical path or busy
// fraction). Ties among the longest units are broken by unit key, so the
// result does not depend on map order.
func SummariseUnitTimes(times map[string]float64, workers int, wall float64) UnitTimeStats {
	st := UnitTimeStats{Count: len(times)}
	if len(times) == 0 {
		return st
	}
	all := make([]UnitDuration, 0, len(times))
	for u, s := range times {
		all = append(all, UnitDuration{Unit: u, Seconds: s})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Seconds != all[j].Seconds {
			return all[i].Seconds > all[j].Seconds
		}
		return all[i].Unit < all[j].Unit
	})
	secs := make([]float64, len(all))
	for i, d := range all {
		secs[len(all)-1-i] = d.Seconds // ascending
		st.TotalSeconds += d.Seconds
	}
	q := func(p float64) float64 {
		k := int(math.Ceil(p*float64(len(secs)))) - 1
		return secs[max(0, min(k, len(secs)-1))]
	}
	st.P50, st.P90, st.P99 = q(0.5), q(0.9), q(0.99)
	st.MaxSeconds = secs[len(secs)-1]
	st.Longest = slices.Clone(all[:min(longestKept, len(all))])
	if workers > 0 && wall > 0 {
		st.Workers, st.WallSeconds = workers, wall
		st.CriticalPathSeconds = max(st.MaxSeconds, st.TotalSeconds/float64(workers))
		st.BusyFraction = st.TotalSeconds / (float64(workers) * wall)
	}
	// Microseconds are the resolution of the measures (getrusage's
	// timeval); the sums' float noise below it is not kept.
	for _, p := range []*float64{&st.TotalSeconds, &st.P50, &st.P90, &st.P99, &st.MaxSeconds, &st.WallSeconds, &st.CriticalPathSeconds} {
		*p = roundMicro(*p)
	}
	st.BusyFraction = math.Round(st.BusyFraction*1e4) / 1e4
	return st
}

func roundMicro(s float64) float64 { return math.Round(s*1e6) / 1e6 }

// SummariseRecorded returns the statistics of unit times recorded in a
// checkpoint (by unit key): their workers are the largest recorded and
// their wall time the sum, over the attempts that computed them, of each
// attempt's last unit end.
func SummariseRecorded(recorded map[string]UnitTime) UnitTimeStats {
	times := make(map[string]float64, len(recorded))
	ends := map[string]float64{}
	workers := 0
	for u, t := range recorded {
		times[u] = t.Seconds
		ends[t.Attempt] = max(ends[t.Attempt], t.EndSeconds)
		workers = max(workers, t.Workers)
	}
	wall := 0.0
	for _, a := range slices.Sorted(maps.Keys(ends)) {
		wall += ends[a]
	}
	return SummariseUnitTimes(times, workers, wall)
}

// ByShard splits recorded unit times by their shard and summarises each
// (SummariseRecorded), in shard order; units no shard computed are left
// out. Nil when no unit was computed by a shard.
func ByShard(recorded map[string]UnitTime) []ShardTimes {
	groups := map[string]map[string]UnitTime{}
	for u, t := range recorded {
		if t.Shard == "" {
			continue
		}
		if groups[t.Shard] == nil {
			groups[t.Shard] = map[string]UnitTime{}
		}
		groups[t.Shard][u] = t
	}
	var out []ShardTimes
	for s, g := range groups {
		out = append(out, ShardTimes{Shard: s, UnitTimeStats: SummariseRecorded(g)})
	}
	index := func(s string) int { // "i/N" → i; shards of one run share N
		var i, n int
		fmt.Sscanf(s, "%d/%d", &i, &n)
		return i
	}
	slices.SortFunc(out, func(a, b ShardTimes) int {
		return cmp.Or(cmp.Compare(index(a.Shard), index(b.Shard)), cmp.Compare(a.Shard, b.Shard))
	})
	return out
}

// ScheduleWorkers are the worker counts of the simulated schedules in
// the manifest ([UnitTimes].Scaling).
var ScheduleWorkers = []int{2, 4, 8, 16, 32}

// Schedule is the manifest's simulated schedules of a run's units (issue
// 27): from the units' measured times, how long the units phase would
// take on W workers and how busy they would be, for W in
// [ScheduleWorkers], when the units are dispatched in three orders. It
// answers "would this run scale to 16 cores?" on a machine with fewer.
//
// Deviation from a real run: the simulation is list scheduling of the
// measured times only — each unit starts, in the order given, as soon as
// a worker is free (as Run's workers take them), and takes the time it
// was measured with. It ignores everything but the units (loading the
// data, θ₀ fits, writing the outputs), contention for memory bandwidth
// and caches (a unit on a busy 16-core machine may take longer than it
// did here), the garbage collector's and external workers' time (not in
// the thread measure) and the machine's other load.
type Schedule struct {
	// Note says what the simulation ignores.
	Note string `json:"note"`
	// Units, TotalSeconds and LongestSeconds are those of the simulated
	// units (those with a measured time: computed, or resumed with a
	// recorded time).
	Units          int     `json:"units"`
	TotalSeconds   float64 `json:"total_s"`
	LongestSeconds float64 `json:"longest_s"`
	// UnitOrder dispatches the units in the experiment's own order
	// (Experiment.Units, grouped by scope for a kind with scratch
	// scopes): the runner's order before longest-first scheduling.
	UnitOrder []SchedulePoint `json:"unit_order"`
	// Dispatch is the order the runner used (runner.UnitCoster estimates,
	// longest first; the unit order for a kind without estimates).
	Dispatch []SchedulePoint `json:"dispatch"`
	// LPT dispatches the units by their measured times, longest first:
	// what perfect estimates would give.
	LPT []SchedulePoint `json:"lpt"`
	// Bound is the best any order can do: makespan max(longest unit,
	// total/W) and the busy fraction it implies. Below 1 when one unit is
	// longer than total/W: only splitting that unit helps.
	Bound []SchedulePoint `json:"bound"`
	// Estimates says how well the kind's cost estimates
	// (runner.UnitCoster) rank the measured times; absent for a kind
	// without estimates, and where the correlation is undefined (fewer
	// than two units, or all estimates or all times equal).
	Estimates *EstimateCheck `json:"estimates,omitempty"`
}

// EstimateCheck compares a kind's unit cost estimates with the measured
// unit times.
type EstimateCheck struct {
	// Units is the number of units with both an estimate and a measured
	// time.
	Units int `json:"units"`
	// Spearman is the rank correlation of estimate and measured time
	// ([Spearman]); 1 means the estimates order the units exactly as
	// their measured times do.
	Spearman float64 `json:"spearman"`
}

// SchedulePoint is the simulated units phase at Workers workers: its
// makespan and the busy fraction total/(Workers × makespan).
type SchedulePoint struct {
	Workers      int     `json:"workers"`
	MakespanS    float64 `json:"makespan_s"`
	BusyFraction float64 `json:"busy_fraction"`
}

// ScheduleNote is [Schedule].Note.
const ScheduleNote = "list scheduling of the measured unit times (each unit, in the order given, starts on the first free worker); ignores non-unit work (data loading, θ₀ fits, outputs), memory-bandwidth and cache contention, GC and external-worker time, and machine load"

// SimulateList returns the makespan of list scheduling times (in
// dispatch order) on workers workers: each unit starts as soon as a
// worker is free — the earliest-free worker — and runs for its time.
// Zero for no units; workers < 1 is taken as 1.
func SimulateList(times []float64, workers int) float64 {
	workers = max(workers, 1)
	free := make([]float64, min(workers, max(len(times), 1)))
	makespan := 0.0
	for _, t := range times {
		w := 0
		for i := 1; i < len(free); i++ {
			if free[i] < free[w] {
				w = i
			}
		}
		free[w] += t
		makespan = max(makespan, free[w])
	}
	return makespan
}

// SimulateSchedules returns the simulated schedules of the units with
// times unitOrder (in the experiment's order) and dispatch (the same
// times in the runner's dispatch order) at each of workers; nil for no
// units.
func SimulateSchedules(unitOrder, dispatch []float64, workers []int) *Schedule {
	if len(unitOrder) == 0 {
		return nil
	}
	lpt := slices.Clone(unitOrder)
	slices.SortStableFunc(lpt, func(a, b float64) int { return cmp.Compare(b, a) })
	s := &Schedule{Note: ScheduleNote, Units: len(unitOrder), LongestSeconds: lpt[0]}
	for _, t := range unitOrder {
		s.TotalSeconds += t
	}
	point := func(w int, makespan float64) SchedulePoint {
		p := SchedulePoint{Workers: w, MakespanS: roundMicro(makespan)}
		if makespan > 0 {
			p.BusyFraction = math.Round(s.TotalSeconds/(float64(w)*makespan)*1e4) / 1e4
		}
		return p
	}
	for _, w := range workers {
		s.UnitOrder = append(s.UnitOrder, point(w, SimulateList(unitOrder, w)))
		s.Dispatch = append(s.Dispatch, point(w, SimulateList(dispatch, w)))
		s.LPT = append(s.LPT, point(w, SimulateList(lpt, w)))
		s.Bound = append(s.Bound, point(w, max(s.LongestSeconds, s.TotalSeconds/float64(w))))
	}
	s.TotalSeconds, s.LongestSeconds = roundMicro(s.TotalSeconds), roundMicro(s.LongestSeconds)
	return s
}

// Spearman returns Spearman's rank correlation of x and y (parallel, the
// same length): the Pearson correlation of their ranks, tied values
// taking the mean of the ranks they span. NaN for fewer than two pairs or
// when either has a single distinct value.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN()
	}
	rx, ry := ranks(x), ranks(y)
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	mx /= float64(len(rx))
	my /= float64(len(ry))
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ranks returns the 1-based ranks of x, ties at their mean rank.
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		mean := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = mean
		}
		i = j + 1
	}
	return r
}
