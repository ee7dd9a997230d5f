package learnercmp

import (
	"runtime"
	"slices"
	"sync"

	"github.com/dprepro/dprepro/methods/learners"
)

// foldData is what every unit of one (dataset, repetition, fold) reads:
// its training and test rows, made once and shared by the fits of the
// fold (a learners.Data builds its design matrix and its ERM rows the
// first time a learner asks, under a sync.Once).
type foldData struct {
	once              sync.Once
	trainIdx, testIdx []int
	train, test       *learners.Data
}

// foldCache keeps the folds of the units in flight. Units run in fold
// order, so those in flight span at most as many folds as there are
// workers; the cache holds a few more (the least recently used go first),
// so that a fold's data is made once and freed once its units are done.
// Safe for concurrent use.
type foldCache struct {
	mu    sync.Mutex
	cap   int
	order []string // least recently used first
	m     map[string]*foldData
}

func newFoldCache() *foldCache {
	return &foldCache{cap: max(4, runtime.GOMAXPROCS(0)+2), m: map[string]*foldData{}}
}

// get returns the data of fold key, making it with make the first time
// (or again after it was evicted: the same rows, recomputed).
func (c *foldCache) get(key string, make func(*foldData)) *foldData {
	c.mu.Lock()
	d, ok := c.m[key]
	if ok {
		c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
	} else {
		d = &foldData{}
		c.m[key] = d
		for len(c.order) >= c.cap {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.order = append(c.order, key)
	c.mu.Unlock()
	d.once.Do(func() { make(d) })
	return d
}
