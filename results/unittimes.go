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
	// Tasks and TaskSeconds are those of a unit that handed independent
	// tasks to runner.Env.Parallel: how many ran and their CPU time on
	// every thread that ran them (thread CPU measure only; zero
	// otherwise). Seconds then includes the helpers' threads.
	Tasks       int     `json:"tasks,omitempty"`
	TaskSeconds float64 `json:"task_s,omitempty"`
	// Helpers is how many helpers (free worker slots after the last unit
	// started) joined the unit's tasks.
	Helpers int `json:"helpers,omitempty"`
	// ReusedFrom, when set, is the "spec id: unit key" of the unit of an
	// earlier run of the same command whose result, bit for bit the one
	// this unit would have computed, it took instead of computing it
	// (runner.Memo); Seconds is then what taking it cost.
	ReusedFrom string `json:"reused_from,omitempty"`
}

// The measures of a [UnitTime].
const (
	// MeasureThreadCPU is the user plus system CPU time of the OS thread
	// the unit's goroutine was locked to (getrusage RUSAGE_THREAD, Linux),
	// plus that of the helpers' threads that ran its Parallel tasks
	// (runner.Env.Parallel). Not counted: other goroutines the unit
	// starts, the garbage collector's
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
	// Reused lists the computed units that took the result of an
	// identical unit of an earlier run of the same command
	// (UnitTime.ReusedFrom, runner.Memo): counted in Computed at what
	// taking it cost.
	Reused []ReusedUnit `json:"reused,omitempty"`
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

// ReusedUnit is a unit that took another's result ([UnitTime.ReusedFrom]).
type ReusedUnit struct {
	Unit string `json:"unit"`
	From string `json:"from"`
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
	// CriticalPathSeconds is the lower bound on the units phase with
	// Workers workers that no schedule beats: max(total/workers, the
	// longest unit's serial work plus its Parallel tasks spread over
	// every worker) — the longest unit itself when it has no tasks
	// ([SimUnit]); BusyFraction is total/(workers × wall),
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

// SummariseUnitTimes returns the statistics of times (unit key → time)
// of units without Parallel tasks: SummariseSim of each time as serial.
func SummariseUnitTimes(times map[string]float64, workers int, wall float64) UnitTimeStats {
	sim := make(map[string]SimUnit, len(times))
	for u, s := range times {
		sim[u] = SimUnit{Serial: s}
	}
	return SummariseSim(sim, workers, wall)
}

// SummariseSim returns the statistics of units (unit key → its time as
// serial work and Parallel tasks), computed with workers workers during
// units phases whose wall times add up to wall (zero when unknown: then
// no critical path or busy fraction). Ties among the longest units are
// broken by unit key, so the result does not depend on map order.
func SummariseSim(units map[string]SimUnit, workers int, wall float64) UnitTimeStats {
	st := UnitTimeStats{Count: len(units)}
	if len(units) == 0 {
		return st
	}
	all := make([]UnitDuration, 0, len(units))
	for u, su := range units {
		all = append(all, UnitDuration{Unit: u, Seconds: su.Total()})
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
		sims := make([]SimUnit, 0, len(units))
		for _, u := range slices.Sorted(maps.Keys(units)) { // a sum in key order: no map-order rounding
			sims = append(sims, units[u])
		}
		st.CriticalPathSeconds = lowerBound(sims, workers)
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
	times := make(map[string]SimUnit, len(recorded))
	ends := map[string]float64{}
	workers := 0
	for u, t := range recorded {
		times[u] = t.Sim()
		ends[t.Attempt] = max(ends[t.Attempt], t.EndSeconds)
		workers = max(workers, t.Workers)
	}
	wall := 0.0
	for _, a := range slices.Sorted(maps.Keys(ends)) {
		wall += ends[a]
	}
	return SummariseSim(times, workers, wall)
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
// was measured with; once every unit has started, free workers help the
// running units' Parallel tasks as runner.Env.Parallel does
// ([SimulateHelped]), each task of a unit taking the unit's mean task
// time. It ignores everything but the units (loading the
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
	// DispatchUnhelped is Dispatch with no tail help: every unit on its
	// own worker, its tasks included (the runner before it had help).
	DispatchUnhelped []SchedulePoint `json:"dispatch_unhelped"`
	// LPT dispatches the units by their measured times, longest first:
	// what perfect estimates would give.
	LPT []SchedulePoint `json:"lpt"`
	// Bound is the best any schedule can do: the makespan lower bound
	// of UnitTimeStats.CriticalPathSeconds at W workers and the busy
	// fraction it implies. Below 1 when one unit's serial work is longer
	// than total/W: only splitting that work helps.
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
const ScheduleNote = "list scheduling of the measured unit times (each unit, in the order given, starts on the first free worker; after the last has started, free workers help the running units' parallel tasks, each task taking its unit's mean task time); ignores non-unit work (data loading, θ₀ fits, outputs), memory-bandwidth and cache contention, GC and external-worker time, and machine load"

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

// SimUnit is a unit as the simulated schedules see it: Serial seconds of
// work only its own worker can do, and Tasks independent tasks taking
// TaskSeconds in all, which free workers may share once every unit has
// started (runner.Env.Parallel's tail help). A unit without tasks is
// its Serial time.
type SimUnit struct {
	Serial      float64
	Tasks       int
	TaskSeconds float64
}

// Total is the unit's time: its serial work and its tasks.
func (u SimUnit) Total() float64 { return u.Serial + u.TaskSeconds }

// Sim is the unit as the simulation sees it: its tasks (when measured)
// and the rest of its time as serial work.
func (t UnitTime) Sim() SimUnit {
	if t.Tasks <= 0 || t.TaskSeconds <= 0 {
		return SimUnit{Serial: t.Seconds}
	}
	return SimUnit{Serial: max(0, t.Seconds-t.TaskSeconds), Tasks: t.Tasks, TaskSeconds: t.TaskSeconds}
}

// lowerBound is the makespan no schedule of units on workers workers
// beats: the total over the workers, and each unit's serial work plus
// its tasks spread over every worker (never less than one task).
func lowerBound(units []SimUnit, workers int) float64 {
	w := float64(max(workers, 1))
	total, longest := 0.0, 0.0
	for _, u := range units {
		total += u.Total()
		own := u.Total()
		if u.Tasks > 0 {
			own = u.Serial + max(u.TaskSeconds/float64(u.Tasks), u.TaskSeconds/w)
		}
		longest = max(longest, own)
	}
	return max(longest, total/w)
}

// SimulateHelped returns the makespan of the runner's schedule of units
// (in dispatch order) on workers workers, with tail help
// (runner.Env.Parallel): each unit starts on the first free worker (the
// lowest-numbered among those free at once), does its serial work, then
// takes its tasks one at a time; once every unit has started, a free
// worker helps the running unit with the most tasks not yet taken per
// worker on it — tasks left / (helpers already on it + 1), the 1 its own
// worker (ties: the one that started its tasks first) — one task at a
// time, until that unit has none left. A unit ends when its last task does: its own
// worker waits for the helpers' last tasks. Each task of a unit takes its
// mean task time. Units without tasks are SimulateList's.
func SimulateHelped(units []SimUnit, workers int) float64 {
	workers = max(workers, 1)
	type job struct {
		left, inflight int
		helpers        int // workers other than the owner taking its tasks
		tau            float64
		owner          int
		ownerWaits     bool
		seq            int
	}
	const (
		idle = iota
		serial
		task
		waiting
	)
	type worker struct {
		state int
		until float64
		unit  int
		job   *job
	}
	ws := make([]worker, workers)
	var jobs []*job // jobs with tasks left or in flight
	next, seq := 0, 0
	makespan, now := 0.0, 0.0
	take := func(w int, j *job) {
		j.left--
		j.inflight++
		ws[w].state, ws[w].until, ws[w].job = task, now+j.tau, j
	}
	end := func(w int) { // w's unit ends now
		makespan = max(makespan, now)
		ws[w] = worker{}
	}
	remove := func(j *job) {
		for i, x := range jobs {
			if x == j {
				jobs = append(jobs[:i], jobs[i+1:]...)
				return
			}
		}
	}
	assign := func() {
		for w := range ws {
			if ws[w].state != idle {
				continue
			}
			if next < len(units) {
				ws[w] = worker{state: serial, until: now + units[next].Serial, unit: next}
				next++
				continue
			}
			var best *job
			for _, j := range jobs {
				if j.left > 0 && (best == nil || HelpRanksAbove(j.left, j.helpers, best.left, best.helpers) ||
					!HelpRanksAbove(best.left, best.helpers, j.left, j.helpers) && j.seq < best.seq) {
					best = j
				}
			}
			if best != nil {
				best.helpers++
				take(w, best)
			}
		}
	}
	assign()
	for {
		w := -1
		for i := range ws {
			if (ws[i].state == serial || ws[i].state == task) && (w < 0 || ws[i].until < ws[w].until) {
				w = i
			}
		}
		if w < 0 {
			return makespan
		}
		now = ws[w].until
		switch ws[w].state {
		case serial:
			u := units[ws[w].unit]
			if u.Tasks <= 0 {
				end(w)
				break
			}
			j := &job{left: u.Tasks, tau: u.TaskSeconds / float64(u.Tasks), owner: w, seq: seq}
			seq++
			jobs = append(jobs, j)
			take(w, j)
		case task:
			j := ws[w].job
			j.inflight--
			owner := j.owner == w
			switch {
			case j.left > 0:
				take(w, j)
			case owner && j.inflight > 0:
				ws[w].state = waiting
				j.ownerWaits = true
			case owner:
				remove(j)
				end(w)
			default: // a helper with nothing left to take
				j.helpers--
				ws[w] = worker{}
				if j.inflight == 0 && j.ownerWaits {
					remove(j)
					end(j.owner)
				}
			}
		}
		assign()
	}
}

// SimulateSchedules returns the simulated schedules of units
// (unitOrder, in the experiment's order; dispatch, the same units in the
// runner's dispatch order) at each of workers; nil for no units.
func SimulateSchedules(unitOrder, dispatch []SimUnit, workers []int) *Schedule {
	if len(unitOrder) == 0 {
		return nil
	}
	lpt := slices.Clone(unitOrder)
	slices.SortStableFunc(lpt, func(a, b SimUnit) int { return cmp.Compare(b.Total(), a.Total()) })
	s := &Schedule{Note: ScheduleNote, Units: len(unitOrder), LongestSeconds: lpt[0].Total()}
	for _, u := range unitOrder {
		s.TotalSeconds += u.Total()
	}
	point := func(w int, makespan float64) SchedulePoint {
		p := SchedulePoint{Workers: w, MakespanS: roundMicro(makespan)}
		if makespan > 0 {
			p.BusyFraction = math.Round(s.TotalSeconds/(float64(w)*makespan)*1e4) / 1e4
		}
		return p
	}
	totals := make([]float64, len(dispatch))
	for i, u := range dispatch {
		totals[i] = u.Total()
	}
	for _, w := range workers {
		s.UnitOrder = append(s.UnitOrder, point(w, SimulateHelped(unitOrder, w)))
		s.Dispatch = append(s.Dispatch, point(w, SimulateHelped(dispatch, w)))
		s.DispatchUnhelped = append(s.DispatchUnhelped, point(w, SimulateList(totals, w)))
		s.LPT = append(s.LPT, point(w, SimulateHelped(lpt, w)))
		s.Bound = append(s.Bound, point(w, lowerBound(unitOrder, w)))
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

// HelpRanksAbove reports whether a running unit with leftA tasks not yet
// taken and helpersA helpers on it has more tasks left per worker than
// one with leftB and helpersB: leftA/(helpersA+1) > leftB/(helpersB+1),
// the +1 the unit's own worker, compared exactly in integers. It is the
// ranking of tail help (runner.Env.Parallel and [SimulateHelped]): a free
// worker joins the unit ranked first (ties: the earliest). Counting the
// helpers already on a unit, those just sent included, keeps several
// freed workers from piling onto one unit while another with almost as
// many tasks left gets none.
func HelpRanksAbove(leftA, helpersA, leftB, helpersB int) bool {
	return int64(leftA)*int64(helpersB+1) > int64(leftB)*int64(helpersA+1)
}
