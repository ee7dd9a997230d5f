package runner

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/dprepro/dprepro/results"
)

// timeUnit runs f, the work of one unit, on its goroutine locked to one OS
// thread, and returns its time: the thread's CPU time (Linux,
// results.MeasureThreadCPU) or else its wall-clock time
// (results.MeasureWall), and its wall-clock time in either case; the
// caller adds the CPU time of the helpers that ran the unit's Parallel
// tasks (addPar). Locking the thread changes no draw and no row: every
// unit draws from its own stream wherever it runs. What the thread measure
// leaves out is said in results.MeasureThreadCPU (other goroutines f
// starts, background GC, external worker processes).
func timeUnit(f func()) results.UnitTime {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, measure, ok := threadCPU()
	t0 := time.Now()
	f()
	wall := time.Since(t0)
	var c1 time.Duration
	if ok {
		c1, _, ok = threadCPU()
	}
	t := results.UnitTime{Seconds: wall.Seconds(), Measure: results.MeasureWall, WallSeconds: wall.Seconds()}
	if ok && c1 >= c0 {
		t.Seconds, t.Measure = (c1 - c0).Seconds(), measure
	}
	return t
}

// unitTimesNote says what a measure leaves out, for the manifest.
func unitTimesNote(measure string) string {
	switch measure {
	case results.MeasureThreadCPU:
		return "CPU time (user+system) of the OS thread each unit's goroutine was locked to (getrusage RUSAGE_THREAD), plus that of the helpers' threads that ran its parallel tasks; not counted: other goroutines a unit starts, the garbage collector's background workers, external worker processes; resumed units keep the time recorded in the checkpoint when they were computed"
	default:
		return "wall-clock time while each unit ran (no per-thread CPU time on this platform), including waits for a core on a loaded machine; resumed units keep the time recorded in the checkpoint when they were computed"
	}
}

// unitTimesOf builds the manifest's record of per-unit times: the units
// computed here (timed, by key) with workers workers over a units phase of
// wall seconds, and the resumed ones' times as the checkpoint recorded
// them (by shard when shards computed them). scope names each computed
// unit's scratch scope (nil for a kind without scopes).
func unitTimesOf(kind string, timed map[string]results.UnitTime, workers int, wall float64, resumed int, recorded map[string]results.UnitTime, scope func(string) string) *results.UnitTimes {
	measure := ""
	secs := make(map[string]results.SimUnit, len(timed))
	for u, t := range timed {
		secs[u] = t.Sim()
		if measure == "" || t.Measure == results.MeasureWall {
			measure = t.Measure // a wall time anywhere makes the set's measure wall
		}
	}
	if measure == "" {
		_, measure, _ = threadCPU()
		if measure == "" {
			measure = results.MeasureWall
		}
	}
	ut := &results.UnitTimes{
		Kind: kind, Measure: measure, Note: unitTimesNote(measure),
		Computed: results.SummariseSim(secs, workers, wall),
		Resumed:  resumed,
	}
	for u, t := range timed {
		if t.ReusedFrom != "" {
			ut.Reused = append(ut.Reused, results.ReusedUnit{Unit: u, From: t.ReusedFrom})
		}
	}
	slices.SortFunc(ut.Reused, func(a, b results.ReusedUnit) int { return strings.Compare(a.Unit, b.Unit) })
	if len(recorded) > 0 {
		st := results.SummariseRecorded(recorded)
		ut.ResumedTimed = &st
		ut.Shards = results.ByShard(recorded)
	}
	if scope != nil {
		groups := map[string]map[string]results.SimUnit{}
		for u, s := range secs {
			sc := scope(u)
			if groups[sc] == nil {
				groups[sc] = map[string]results.SimUnit{}
			}
			groups[sc][u] = s
		}
		if len(groups) > 1 {
			for sc, g := range groups {
				ut.Scopes = append(ut.Scopes, results.ScopeTimes{Scope: sc, UnitTimeStats: results.SummariseSim(g, 0, 0)})
			}
			slices.SortFunc(ut.Scopes, func(a, b results.ScopeTimes) int { return strings.Compare(a.Scope, b.Scope) })
		}
	}
	return ut
}

// shardLabel is a shard's "i/N", empty for an unsharded run.
func shardLabel(s Shard) string {
	if !s.Sharded() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}
