package runner

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
)

// Tail help (issue 27). A run's workers take units in dispatch order
// (longest first); once the last unit has started, a worker whose unit
// ends would idle while a few long units finish. A unit made of many
// independent tasks (the variability interval's thousands of bootstrap
// fits) hands them to Env.Parallel instead of looping over them: its own
// goroutine works through them, and every worker slot that frees up after
// the last unit has started joins in as a helper — the slot goes to the
// running Parallel call with the most tasks not yet taken per goroutine on
// it, tasks left / (helpers already on it + 1) (results.HelpRanksAbove),
// so that slots freed at once spread over the calls instead of piling
// onto the largest — until none are left. The worker count is never exceeded (helpers hold a slot as units
// do), no unit waits for a helper (helpers start only after every unit has
// started), and nothing a task computes depends on which goroutine runs
// it, so rows stay bit-identical at any worker count.

// pool is a run's worker slots: the dispatcher takes one per unit
// (acquire) and every helper one (tryAcquire); each is released when its
// unit or helper ends, and the freed slot may go to a helper (rebalance).
type pool struct {
	sem     chan struct{}
	mu      sync.Mutex
	drained bool   // every unit has started: free slots may help
	jobs    []*job // the running Parallel calls with tasks left
}

func newPool(workers int) *pool { return &pool{sem: make(chan struct{}, workers)} }

// acquire takes a slot for a unit, waiting for one; false when ctx ends
// first.
func (p *pool) acquire(ctx context.Context) bool {
	select {
	case p.sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// release frees a slot and hands free slots to helpers.
func (p *pool) release() {
	<-p.sem
	p.rebalance()
}

// drain records that every unit has started: from now on free slots help.
func (p *pool) drain() {
	p.mu.Lock()
	p.drained = true
	p.mu.Unlock()
	p.rebalance()
}

// rebalance starts a helper for each free slot while a running Parallel
// call has tasks not yet taken: the one with the most tasks left per
// goroutine on it, left / (helping + 1) (results.HelpRanksAbove), where
// helping counts the helpers started and not yet ended, those on their
// way included (ties: the earliest call). Each helper started raises its
// call's count before the next slot is placed.
func (p *pool) rebalance() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.drained {
		var best *job
		var bestLeft int
		for _, j := range p.jobs {
			left := int(min(j.left(), int64(j.n))) // one reading per call
			if left > 0 && (best == nil || results.HelpRanksAbove(left, j.helping, bestLeft, best.helping)) {
				best, bestLeft = j, left
			}
		}
		if best == nil {
			return
		}
		select {
		case p.sem <- struct{}{}:
		default:
			return // no free slot
		}
		best.helpers.Add(1) // under p.mu: the job is still registered
		best.helping++
		go func() {
			// Done comes last: once the call's Wait returns, its
			// helpers' slots are free again.
			defer best.helpers.Done()
			best.help()
			p.mu.Lock()
			best.helping--
			p.mu.Unlock()
			p.release()
		}()
	}
}

func (p *pool) register(j *job) {
	p.mu.Lock()
	p.jobs = append(p.jobs, j)
	p.mu.Unlock()
	p.rebalance()
}

// unregister removes j: no helper joins it afterwards.
func (p *pool) unregister(j *job) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.jobs {
		if x == j {
			p.jobs = append(p.jobs[:i], p.jobs[i+1:]...)
			return
		}
	}
}

// unitPar is what a unit's Parallel calls measured, added to its
// results.UnitTime: the tasks run, their CPU time on every thread that
// ran them, the CPU time of the helpers' threads and how many helpers
// joined.
type unitPar struct {
	tasks      atomic.Int64
	taskNanos  atomic.Int64
	helpNanos  atomic.Int64
	helpers    atomic.Int64
	measureErr atomic.Bool // a thread's CPU time could not be read
	// reused is the "spec id: unit key" of the unit whose result this one
	// took from the command's Memo (Env.Shared); nil when none.
	reused atomic.Pointer[string]
}

// addSince adds to dst the calling thread's CPU time since c0 (a reading
// of threadCPU, ok its success), or records that it could not be
// measured.
func (p *unitPar) addSince(dst *atomic.Int64, c0 time.Duration, ok bool) {
	c1, _, ok1 := threadCPU()
	if ok && ok1 && c1 >= c0 {
		dst.Add(int64(c1 - c0))
	} else {
		p.measureErr.Store(true)
	}
}

// job is one Parallel call.
type job struct {
	ctx     context.Context
	n       int
	next    atomic.Int64 // the next task to take
	worker  func() func(i int) error
	par     *unitPar // nil: not measured
	helpers sync.WaitGroup
	helping int // helpers started and not yet ended (under pool.mu)

	failed atomic.Bool
	mu     sync.Mutex
	errAt  int // the smallest failed task, err its error
	err    error
}

// left is the number of tasks not yet taken.
func (j *job) left() int64 {
	if j.failed.Load() || j.ctx.Err() != nil {
		return 0
	}
	return max(0, int64(j.n)-j.next.Load())
}

// work takes and runs tasks until none are left, the context ends or a
// task fails; its goroutine must be locked to its OS thread for the CPU
// times to be its own.
func (j *job) work() {
	var task func(int) error
	for !j.failed.Load() && j.ctx.Err() == nil {
		i := int(j.next.Add(1) - 1)
		if i >= j.n {
			return
		}
		var err error
		if j.par == nil { // not measured: no getrusage per task
			err = j.run(&task, i)
		} else {
			c0, _, ok := threadCPU()
			err = j.run(&task, i)
			j.par.addSince(&j.par.taskNanos, c0, ok)
			j.par.tasks.Add(1)
		}
		if err != nil {
			j.fail(i, err)
		}
	}
}

// run runs task i, building the goroutine's task function on its first
// task; a panic is the task's error.
func (j *job) run(task *func(int) error, i int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in task %d: %v\n%s", i, r, debug.Stack())
		}
	}()
	if *task == nil {
		*task = j.worker()
	}
	return (*task)(i)
}

func (j *job) fail(i int, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil || i < j.errAt {
		j.errAt, j.err = i, err
	}
	j.failed.Store(true)
}

// help is a helper's work on its own OS thread, whose CPU time it adds
// to the unit's.
func (j *job) help() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, _, ok := threadCPU()
	j.work()
	if j.par != nil {
		j.par.addSince(&j.par.helpNanos, c0, ok)
		j.par.helpers.Add(1)
	}
}

// Parallel runs the tasks 0, …, n−1 of the unit, which must be
// independent: each draws only from streams keyed by its own index and
// writes only its own results. The unit's goroutine runs them, joined by
// helpers on the run's free worker slots once every unit has started (see
// the tail help above), so a long unit at the end of a run spreads over
// the idle workers. worker is called once per goroutine that runs tasks,
// to build that goroutine's task function (and its own scratch space:
// workspaces are not shared between goroutines).
//
// Parallel returns when every task taken has returned. Once a task fails
// (or panics) no further task is taken, and the error returned is that of
// the smallest failed index — the first failure in index order, whatever
// the workers — so a unit that stops at its first failing task keeps the
// same error at any worker count. It returns ctx.Err() when ctx ends
// first.
//
// Outside a run (an Env from NewEnv), in a traced run (whose trace
// records releases in the order they happen) and on a single worker, the
// unit's goroutine runs every task itself, in index order.
func (e Env) Parallel(ctx context.Context, n int, worker func() func(i int) error) error {
	j := &job{ctx: ctx, n: n, worker: worker, par: e.par}
	if e.pool != nil && e.trace == nil && n > 1 {
		e.pool.register(j)
		j.work()
		e.pool.unregister(j)
		j.helpers.Wait()
	} else {
		j.work()
	}
	return j.result()
}

// Sequential runs the tasks 0, …, n−1 as Parallel does, on the calling
// goroutine only, in index order: for a unit whose tasks must not run at
// once (an external worker that serves one request at a time).
func Sequential(ctx context.Context, n int, worker func() func(i int) error) error {
	j := &job{ctx: ctx, n: n, worker: worker}
	j.work()
	return j.result()
}

func (j *job) result() error {
	if j.err != nil {
		return j.err
	}
	return j.ctx.Err()
}

// addPar adds a unit's Parallel measures to its time: the helpers' CPU
// time to Seconds (a thread CPU measure: the unit's own thread's time
// excludes them), and the tasks and their CPU time for the simulated
// schedules (results.SimUnit).
func addPar(t *results.UnitTime, p *unitPar) {
	if p == nil {
		return
	}
	if r := p.reused.Load(); r != nil {
		t.ReusedFrom = *r
	}
	if p.tasks.Load() == 0 {
		return
	}
	if t.Measure == results.MeasureThreadCPU && !p.measureErr.Load() {
		t.Seconds += time.Duration(p.helpNanos.Load()).Seconds()
		t.TaskSeconds = time.Duration(p.taskNanos.Load()).Seconds()
		t.Tasks = int(p.tasks.Load())
	}
	t.Helpers = int(p.helpers.Load())
}

// HelpedEnv returns NewEnv's Env whose Parallel calls are joined by up
// to helpers helpers at once, as at the end of a run whose other workers
// are free: for a kind's tests that its Parallel tasks give the same rows
// however they are spread.
func HelpedEnv(spec *experiments.Spec, key string, secure bool, helpers int) Env {
	e := NewEnv(spec, key, secure)
	if helpers > 0 {
		e.pool = newPool(helpers)
		e.pool.drain()
	}
	return e
}
