package cicoverage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dprepro/dprepro/methods/cimethods"
	"github.com/dprepro/dprepro/results"
	"github.com/dprepro/dprepro/runner"
)

// viUnit returns the VI unit of e for model (the first such unit).
func viUnit(t *testing.T, e *Experiment, model string) runner.Unit {
	t.Helper()
	return unitOf(t, e, "/vi/", "/"+model)
}

// unitOf returns the first unit of e whose key holds part and ends with
// suffix.
func unitOf(t *testing.T, e *Experiment, part, suffix string) runner.Unit {
	t.Helper()
	for _, u := range e.Units() {
		if strings.Contains(u.Key(), part) && strings.HasSuffix(u.Key(), suffix) {
			return u
		}
	}
	t.Fatalf("no unit with %q ending %q", part, suffix)
	return nil
}

// fitOf is the index of the VI fit d belongs to (its scope "vi fit i+1").
func fitOf(d cimethods.Data) int {
	var i int
	fmt.Sscanf(d.Scope.Part, "vi fit %d", &i)
	return i - 1
}

// barrier wraps a method: the first n of its fits wait until n of them
// are in flight at once — which only Parallel's helpers bring about (a
// minute's guard turns a missing helper into an error, not a hang).
type barrier struct {
	cimethods.Method
	n        int64
	inFlight atomic.Int64
	maxSeen  atomic.Int64
	calls    atomic.Int64
	reached  chan struct{}
	once     sync.Once
}

func (b *barrier) Fit(ctx context.Context, d cimethods.Data, eps1 float64) (cimethods.Estimate, error) {
	if err := b.wait(); err != nil {
		return cimethods.Estimate{}, err
	}
	defer b.inFlight.Add(-1)
	return b.Method.Fit(ctx, d, eps1)
}

func (b *barrier) Interval(ctx context.Context, d cimethods.Data, bud cimethods.Budget) (cimethods.Release, error) {
	if err := b.wait(); err != nil {
		return cimethods.Release{}, err
	}
	defer b.inFlight.Add(-1)
	return b.Method.Interval(ctx, d, bud)
}

// wait counts a call in flight (the caller uncounts it) and holds the
// first n calls until n are in flight at once.
func (b *barrier) wait() error {
	n := b.inFlight.Add(1)
	for m := b.maxSeen.Load(); n > m && !b.maxSeen.CompareAndSwap(m, n); m = b.maxSeen.Load() {
	}
	if n >= b.n {
		b.once.Do(func() { close(b.reached) })
	}
	if b.calls.Add(1) <= b.n {
		select {
		case <-b.reached:
		case <-time.After(time.Minute):
			b.inFlight.Add(-1)
			return errors.New("the fits never ran at once")
		}
	}
	return nil
}

// TestRunUnits_HelpedIdentical: a VI unit's fits, and a coverage
// block's replicates, spread over helpers (3 of them in flight at once,
// 2 in a block of 2)
// give the rows of the unit run alone, for each model.
func TestRunUnits_HelpedIdentical(t *testing.T) {
	for _, c := range []struct {
		model, part, suffix string
		atOnce              int64
	}{
		{"lr", "/vi/", "/lr", 3}, {"svm", "/vi/", "/svm", 3}, {"lr", "/lr/ci/rep=1-4", "", 3}, {"svm", "/svm/ci/rep=5-6", "", 2},
	} {
		model := c.model
		plain := load(t, smallSpec)
		u := unitOf(t, plain, c.part, c.suffix)
		want, err := plain.RunUnit(context.Background(), u, runner.NewEnv(plain.spec.Spec, u.Key(), false))
		if err != nil {
			t.Fatal(err)
		}
		helped := load(t, smallSpec)
		var bs []*barrier
		for i, m := range helped.methods {
			if string(m.Attributes().Model) == model {
				b := &barrier{Method: m, n: c.atOnce, reached: make(chan struct{})}
				helped.methods[i] = b
				bs = append(bs, b)
				break // one barrier: its calls are the fits in flight
			}
		}
		got, err := helped.RunUnit(context.Background(), u, runner.HelpedEnv(helped.spec.Spec, u.Key(), false, 3))
		if err != nil {
			t.Fatal(err)
		}
		if bs[0].maxSeen.Load() < c.atOnce {
			t.Errorf("%s: at most %d fits or intervals at once, want %d", u.Key(), bs[0].maxSeen.Load(), c.atOnce)
		}
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: helped rows differ from the unit's own:\n got %v\nwant %v", u.Key(), got, want)
		}
	}
}

// faulty wraps a method: fit noTheta gives no θ̃, fit errAt an error.
type faulty struct {
	cimethods.Method
	noTheta, errAt int
}

func (f faulty) Fit(ctx context.Context, d cimethods.Data, eps1 float64) (cimethods.Estimate, error) {
	switch fitOf(d) {
	case f.noTheta:
		return cimethods.Estimate{Status: "no θ̃ at fit " + fmt.Sprint(f.noTheta)}, nil
	case f.errAt:
		return cimethods.Estimate{}, fmt.Errorf("error at fit %d", f.errAt)
	}
	return f.Method.Fit(ctx, d, eps1)
}

// TestRunVI_FailuresInLoopOrder: the outcome is the single loop's,
// whoever ran the fits: a method whose fit 7 gives no θ̃ has no VI (that
// fit's status), and its error at fit 12 — a fit the loop never asks
// for — does not fail the unit; an error before the first failure does,
// naming the method.
func TestRunVI_FailuresInLoopOrder(t *testing.T) {
	for _, c := range []struct {
		name           string
		noTheta, errAt int
		wantErr        string
	}{
		{"no θ̃ first", 7, 12, ""},
		{"error first", 12, 7, "error at fit 7"},
	} {
		for _, helpers := range []int{0, 3} {
			e := load(t, smallSpec)
			u := viUnit(t, e, "lr")
			var name string
			for i, m := range e.methods {
				if m.Name() == "dp-obj-lr" {
					e.methods[i] = faulty{Method: m, noTheta: c.noTheta, errAt: c.errAt}
					name = m.Name()
				}
			}
			env := runner.NewEnv(e.spec.Spec, u.Key(), false)
			if helpers > 0 {
				env = runner.HelpedEnv(e.spec.Spec, u.Key(), false, helpers)
			}
			rows, err := e.RunUnit(context.Background(), u, env)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), name) {
					t.Errorf("%s, %d helpers: error %v, want %q naming %s", c.name, helpers, err, c.wantErr, name)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s, %d helpers: %v", c.name, helpers, err)
			}
			seen := 0
			for _, r := range rows {
				switch r["method"] {
				case name:
					seen++
					if r["status"] != "no θ̃ at fit 7" || r["vi_length"] != results.FormatFloat(math.NaN()) {
						t.Errorf("%s, %d helpers: %s row status %q, vi_length %q", c.name, helpers, name, r["status"], r["vi_length"])
					}
				case "zcdp-obj-lr":
					if r["status"] != "ok" {
						t.Errorf("%s, %d helpers: zcdp-obj-lr status %q", c.name, helpers, r["status"])
					}
				}
			}
			if seen == 0 {
				t.Errorf("%s: no row of %s", c.name, name)
			}
		}
	}
}
