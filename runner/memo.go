package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
)

// Memo holds the results of computations that several runs of one command
// would repeat bit for bit: a unit that does exactly what a unit of an
// earlier run did — the same inputs, the same streams, the same code —
// takes that unit's result instead of computing it again ([Env.Shared]).
// The papers' specs repeat such work: Wang, Kifer & Lee's variability
// intervals at (n, d, ε₁) are the same in every table and sweep of a
// dataset (wkl-table3-adult, its sigma_floor variant and the three ε
// sweeps of Adult share theirs), and a variant that changes only the
// intervals shares all of them.
//
// A Memo lives in one process (one `dprepro run` or `reproduce`): nothing
// is written to disk, so a shard, a resumed run or a later command
// computes its units itself. It shares nothing in secure mode (draws that
// do not replay are not "the same computation") or when releases are
// traced (each unit's releases must be drawn in it to be recorded). The
// manifest counts the units that took a shared result and names the
// units they took it from (results.UnitTime.ReusedFrom).
//
// A Memo is safe for concurrent use.
type Memo struct {
	mu sync.Mutex
	m  map[string]*memoEntry
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo { return &Memo{m: map[string]*memoEntry{}} }

// compute sets ent's value from f and releases its waiters; a failed
// computation (an error, or a panic, which it passes on once the entry
// is dropped) is removed from the Memo, so that no unit waits for it
// forever and the next one computes it again.
func (m *Memo) compute(k string, ent *memoEntry, f func() (any, error)) {
	done := false
	defer func() {
		if !done && ent.err == nil {
			ent.err = fmt.Errorf("runner: shared computation %s did not return", k)
		}
		if ent.err != nil {
			m.mu.Lock()
			delete(m.m, k)
			m.mu.Unlock()
		}
		close(ent.done)
	}()
	ent.v, ent.err = f()
	done = true
}

type memoEntry struct {
	done  chan struct{} // closed when v or err is set
	v     any
	err   error
	owner string // "spec id: unit key" of the unit that computed v
}

// Shared returns the value compute returns for key, a description of
// everything the computation depends on besides the run's seed and kind
// (which Shared adds): the first unit of the command's runs that asks for
// key computes it, later ones — of this run or another — take its value.
// reused is the "spec id: unit key" of the unit that computed it ("" when
// this call computed it). Without a Memo, in secure mode or in a traced
// run it calls compute. A computation that fails is not kept: the next
// unit asking for key computes it again. A caller waiting for another
// unit's computation stops when ctx is done.
//
// The value is shared, not copied: callers must not modify it.
func (e Env) Shared(ctx context.Context, key string, compute func() (any, error)) (v any, reused string, err error) {
	if e.memo == nil || e.secure || e.trace != nil {
		v, err = compute()
		return v, "", err
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s\x00%s", e.seed, e.kind, key))
	k := hex.EncodeToString(sum[:])
	for {
		e.memo.mu.Lock()
		ent, ok := e.memo.m[k]
		if !ok {
			ent = &memoEntry{done: make(chan struct{}), owner: e.run + ": " + e.key}
			e.memo.m[k] = ent
			e.memo.mu.Unlock()
			e.memo.compute(k, ent, compute)
			return ent.v, "", ent.err
		}
		e.memo.mu.Unlock()
		select {
		case <-ent.done:
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
		if ent.err == nil {
			if e.par != nil {
				e.par.reused.Store(&ent.owner)
			}
			return ent.v, ent.owner, nil
		}
		// The computation failed and was dropped: try again (computing it
		// here unless another unit has started to).
	}
}
