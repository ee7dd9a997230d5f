package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/results"
)

// parFake is fakeExp whose first unit ("d/long/rep=0") hands tasks tasks
// to Env.Parallel; the others are fakeExp's. It counts the work in
// flight — running units other than the long one, plus the long unit's
// tasks — and its maximum. Each of the long unit's first barrier tasks
// waits until barrier tasks are in flight at once, which only helpers
// can bring about; a task that waits longer than a minute fails the
// unit (a guard against a hang, not a timing: the test needs no speed).
type parFake struct {
	*fakeExp
	tasks, barrier int
	inFlight       atomic.Int64
	maxInFlight    atomic.Int64
	tasksInFlight  atomic.Int64
	reached        chan struct{}
	once           sync.Once
}

func newParFake(units, tasks, barrier int) *parFake {
	f := newFake(units)
	f.units[0] = "d/long/rep=0"
	return &parFake{fakeExp: f, tasks: tasks, barrier: barrier, reached: make(chan struct{})}
}

func (e *parFake) enter() {
	n := e.inFlight.Add(1)
	for m := e.maxInFlight.Load(); n > m && !e.maxInFlight.CompareAndSwap(m, n); m = e.maxInFlight.Load() {
	}
}

func (e *parFake) RunUnit(ctx context.Context, u Unit, env Env) ([]results.Row, error) {
	if u.Key() != "d/long/rep=0" {
		e.enter()
		defer e.inFlight.Add(-1)
		return e.fakeExp.RunUnit(ctx, u, env)
	}
	vals := make([]float64, e.tasks)
	err := env.Parallel(ctx, e.tasks, func() func(int) error {
		return func(i int) error {
			e.enter()
			defer e.inFlight.Add(-1)
			if e.tasksInFlight.Add(1) >= int64(e.barrier) {
				e.once.Do(func() { close(e.reached) })
			}
			defer e.tasksInFlight.Add(-1)
			if i < e.barrier {
				select {
				case <-e.reached:
				case <-time.After(time.Minute):
					return fmt.Errorf("task %d: %d tasks never ran at once", i, e.barrier)
				}
			}
			vals[i] = randx.New(uint64(e.spec.Seed), u.Key(), fmt.Sprint(i)).NormFloat64()
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	r := results.Row{"dataset": "d", "data_source": "synthetic", "unit": u.Key(), "method": "long"}
	r.SetFloat("alpha", 1)
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	r.SetFloat("value", sum)
	return []results.Row{r}, nil
}

// TestParallel_HelpersFillFreeSlots: on 4 workers, a long unit that
// starts first and hands 16 tasks to Parallel is joined by the 3 slots
// its 5 short siblings free once the last has started — 4 of its tasks
// run at once (the barrier) — and work in flight never exceeds the 4
// workers. Its record in the manifest counts the 16 tasks and the 3
// helpers, its time includes theirs, and the rows equal those of a run on
// 1 worker (no helper: barrier 1).
func TestParallel_HelpersFillFreeSlots(t *testing.T) {
	run := func(workers int) (string, *parFake) {
		e := newParFake(6, 16, workers)
		dir, err := Run(context.Background(), e, Options{OutDir: t.TempDir(), Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return dir, e
	}
	dir4, e4 := run(4)
	if got := e4.maxInFlight.Load(); got != 4 {
		t.Errorf("4 workers: at most %d units or tasks in flight, want 4", got)
	}
	dir1, e1 := run(1)
	if got := e1.maxInFlight.Load(); got != 1 {
		t.Errorf("1 worker: at most %d in flight, want 1", got)
	}
	for _, f := range []string{"rows.csv", "summary.csv"} {
		if !bytes.Equal(readFile(t, filepath.Join(dir4, f)), readFile(t, filepath.Join(dir1, f))) {
			t.Errorf("%s differs between 1 and 4 workers", f)
		}
	}
	var m struct {
		UnitTimes results.UnitTimes `json:"unit_times"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(dir4, "manifest.json")), &m); err != nil {
		t.Fatal(err)
	}
	cp := readFile(t, filepath.Join(dir4, ".checkpoint", "units.jsonl"))
	var long *results.UnitTime
	for _, line := range bytes.Split(cp, []byte("\n")) {
		var rec struct {
			Unit string            `json:"unit"`
			Time *results.UnitTime `json:"time"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Unit == "d/long/rep=0" {
			long = rec.Time
		}
	}
	if long == nil {
		t.Fatalf("no time recorded for the long unit in the checkpoint:\n%s", cp)
	}
	if long.Helpers != 3 {
		t.Errorf("helpers %d, want 3", long.Helpers)
	}
	if long.Measure == results.MeasureThreadCPU {
		// TaskSeconds is a sum of the tasks' readings, Seconds of the
		// unit's: equal up to rounding when all the time is in tasks.
		if long.Tasks != 16 || !(long.TaskSeconds > 0) || long.TaskSeconds > long.Seconds*(1+1e-9) {
			t.Errorf("tasks %d (want 16), task seconds %v of %v", long.Tasks, long.TaskSeconds, long.Seconds)
		}
	}
	if m.UnitTimes.Scaling == nil || len(m.UnitTimes.Scaling.DispatchUnhelped) != len(results.ScheduleWorkers) {
		t.Errorf("manifest scaling: %+v", m.UnitTimes.Scaling)
	}
}

// TestParallel_FirstErrorInIndexOrder: whichever goroutines run the
// tasks, the error returned is the smallest failed index's, a panic is an
// error, and once a task fails no later task is started by its
// goroutine; Sequential and an Env outside a run agree.
func TestParallel_FirstErrorInIndexOrder(t *testing.T) {
	fails := func(i int) bool { return i%7 == 3 } // 3, 10, 17, …
	for _, c := range []struct {
		name string
		run  func(ctx context.Context, n int, w func() func(int) error) error
	}{
		{"pool", func(ctx context.Context, n int, w func() func(int) error) error {
			p := newPool(4)
			p.drain()
			return Env{pool: p, par: new(unitPar)}.Parallel(ctx, n, w)
		}},
		{"outside a run", Env{}.Parallel},
		{"sequential", Sequential},
	} {
		for trial := 0; trial < 20; trial++ {
			var ran sync.Map
			err := c.run(context.Background(), 200, func() func(int) error {
				return func(i int) error {
					ran.Store(i, true)
					if i == 5 {
						panic("five")
					}
					if fails(i) {
						return fmt.Errorf("task %d failed", i)
					}
					return nil
				}
			})
			if err == nil || err.Error() != "task 3 failed" {
				t.Fatalf("%s: error %v, want task 3's", c.name, err)
			}
			for i := 0; i < 3; i++ {
				if _, ok := ran.Load(i); !ok {
					t.Errorf("%s: task %d before the failure did not run", c.name, i)
				}
			}
			if _, ok := ran.Load(199); ok && c.name != "pool" {
				t.Errorf("%s: task 199 ran after task 3 failed", c.name)
			}
		}
		// A panic alone is reported as the task's error.
		err := c.run(context.Background(), 8, func() func(int) error {
			return func(i int) error {
				if i == 5 {
					panic("five")
				}
				return nil
			}
		})
		if err == nil || !strings.Contains(err.Error(), "panic in task 5: five") {
			t.Errorf("%s: panic reported as %v", c.name, err)
		}
	}
}

// TestParallel_Cancelled: a cancelled context stops the tasks and is the
// error.
func TestParallel_Cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := newPool(3)
	p.drain()
	var n atomic.Int64
	// Tasks after the 10th wait for the cancellation, so that the check
	// does not depend on how fast the goroutines run: each goroutine
	// (at most 3) finishes the task it holds and takes no other.
	cancelled := make(chan struct{})
	err := Env{pool: p}.Parallel(ctx, 1000, func() func(int) error {
		return func(i int) error {
			switch k := n.Add(1); {
			case k == 10:
				cancel()
				close(cancelled)
			case k > 10:
				<-cancelled
			}
			return nil
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if got := n.Load(); got > 10+3 {
		t.Errorf("%d tasks ran, cancelling at the 10th with 3 goroutines", got)
	}
	if len(p.sem) != 0 {
		t.Errorf("%d slots still held after Parallel returned", len(p.sem))
	}
}

// TestParallel_EachGoroutineItsWorker: worker is called once per
// goroutine that runs tasks, and every task runs exactly once.
func TestParallel_EachGoroutineItsWorker(t *testing.T) {
	p := newPool(4)
	p.drain()
	var workers atomic.Int64
	counts := make([]atomic.Int64, 500)
	err := Env{pool: p}.Parallel(context.Background(), len(counts), func() func(int) error {
		workers.Add(1)
		own := 0 // state of this goroutine's own: a race detector would flag sharing
		return func(i int) error {
			own++
			counts[i].Add(1)
			return nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range counts {
		if c := counts[i].Load(); c != 1 {
			t.Fatalf("task %d ran %d times", i, c)
		}
	}
	if w := workers.Load(); w < 1 || w > 5 {
		t.Errorf("%d task functions built for 1 caller and at most 4 helpers", w)
	}
}

// TestParallel_HelpersSpread: two slots freed at once, with two Parallel
// calls running (100 and 90 tasks left, their owners holding the other
// two of 4 slots), go one to each: after the first helper joins the call
// with 100, it has 100/2 left per goroutine against the other's 90/1
// (issue 27). Ranked by tasks left alone, both would join the first. The
// helpers block in their first task until both have been placed, so the
// placement is read before any task is done; a minute's wait guards
// against a hang, the test needs no speed.
func TestParallel_HelpersSpread(t *testing.T) {
	p := newPool(4)
	p.sem <- struct{}{} // the two owners' slots
	p.sem <- struct{}{}
	gate := make(chan struct{})
	built := make(chan string, 8)
	mk := func(name string, n int) *job {
		return &job{ctx: context.Background(), n: n, worker: func() func(int) error {
			built <- name
			return func(int) error { <-gate; return nil }
		}}
	}
	a, b := mk("a", 100), mk("b", 90)
	p.register(a)
	p.register(b)
	p.drain() // both free slots become helpers at once
	got := map[string]int{}
	for range 2 {
		select {
		case name := <-built:
			got[name]++
		case <-time.After(time.Minute):
			t.Fatalf("helpers placed after a minute: %v, want 2", got)
		}
	}
	close(gate)
	p.unregister(a)
	p.unregister(b)
	a.helpers.Wait()
	b.helpers.Wait()
	if got["a"] != 1 || got["b"] != 1 {
		t.Errorf("helpers joined %v, want one on each call", got)
	}
	<-p.sem
	<-p.sem
	if len(p.sem) != 0 {
		t.Errorf("%d slots still held after the helpers ended", len(p.sem))
	}
}
