package runner

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/results"
)

// TestEnvShared_OnceAcrossRuns checks a Memo: the first unit computes a
// key, a unit of another run (same seed and kind) takes its value and is
// told whose it is, the unit's time records it, and what differs — the
// key, the seed, the kind, secure mode, a traced run, no Memo — computes
// its own.
func TestEnvShared_OnceAcrossRuns(t *testing.T) {
	memo := NewMemo()
	a := &experiments.Spec{ID: "spec-a", Kind: "k", Seed: 1}
	b := &experiments.Spec{ID: "spec-b", Kind: "k", Seed: 1}
	var calls atomic.Int64
	compute := func(v int) func() (any, error) {
		return func() (any, error) { calls.Add(1); return v, nil }
	}
	env := func(s *experiments.Spec, key string) Env {
		e := NewEnv(s, key, false)
		e.memo, e.par = memo, new(unitPar)
		return e
	}
	ctx := context.Background()
	v, from, err := env(a, "u1").Shared(ctx, "x", compute(1))
	if err != nil || v != 1 || from != "" || calls.Load() != 1 {
		t.Fatalf("first: %v %q %v (%d calls)", v, from, err, calls.Load())
	}
	eb := env(b, "u2")
	v, from, err = eb.Shared(ctx, "x", compute(2))
	if err != nil || v != 1 || from != "spec-a: u1" || calls.Load() != 1 {
		t.Fatalf("second run: %v %q %v (%d calls), want spec-a's 1 with no call", v, from, err, calls.Load())
	}
	var ut results.UnitTime
	addPar(&ut, eb.par)
	if ut.ReusedFrom != "spec-a: u1" {
		t.Errorf("unit time: reused_from %q", ut.ReusedFrom)
	}
	other := []struct {
		name string
		env  Env
		key  string
	}{
		{"another key", env(b, "u3"), "y"},
		{"another seed", env(&experiments.Spec{ID: "c", Kind: "k", Seed: 2}, "u"), "x"},
		{"another kind", env(&experiments.Spec{ID: "c", Kind: "k2", Seed: 1}, "u"), "x"},
		{"secure", func() Env { e := env(b, "u"); e.secure = true; return e }(), "x"},
		{"traced", env(b, "u").WithTrace(mech.NewTrace()), "x"},
		{"no memo", NewEnv(b, "u", false), "x"},
	}
	for _, o := range other {
		before := calls.Load()
		v, from, err := o.env.Shared(ctx, o.key, compute(3))
		if err != nil || v != 3 || from != "" || calls.Load() != before+1 {
			t.Errorf("%s: %v %q %v, want its own computation", o.name, v, from, err)
		}
	}
}

// TestEnvShared_Failures checks that a failed computation — an error or a
// panic — is not kept (the next unit computes it) and that a unit waiting for another's
// computation stops when its context is done.
func TestEnvShared_Failures(t *testing.T) {
	memo := NewMemo()
	s := &experiments.Spec{ID: "s", Kind: "k", Seed: 1}
	e := NewEnv(s, "u", false)
	e.memo = memo
	boom := errors.New("boom")
	if _, _, err := e.Shared(context.Background(), "x", func() (any, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failing computation: %v", err)
	}
	v, from, err := e.Shared(context.Background(), "x", func() (any, error) { return 7, nil })
	if err != nil || v != 7 || from != "" {
		t.Fatalf("after a failure: %v %q %v, want a computation of its own", v, from, err)
	}

	// A computation that panics passes the panic on and is dropped: the
	// next unit computes it (instead of waiting for it forever).
	func() {
		defer func() {
			if r := recover(); r != "kaboom" {
				t.Errorf("the computation's panic: recovered %v", r)
			}
		}()
		e.Shared(context.Background(), "p", func() (any, error) { panic("kaboom") })
	}()
	if v, from, err := e.Shared(context.Background(), "p", func() (any, error) { return 9, nil }); err != nil || v != 9 || from != "" {
		t.Errorf("after a panic: %v %q %v, want a computation of its own", v, from, err)
	}

	// A computation in progress: a second unit waits; when its context
	// is done it returns the context's error.
	started, release := make(chan struct{}), make(chan struct{})
	go e.Shared(context.Background(), "slow", func() (any, error) { close(started); <-release; return 1, nil })
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := e.Shared(ctx, "slow", func() (any, error) { t.Error("computed twice"); return 2, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("waiting with a done context: %v", err)
	}
	close(release)
	v, from, err = e.Shared(context.Background(), "slow", func() (any, error) { t.Error("computed twice"); return 2, nil })
	if err != nil || v != 1 || from != "s: u" {
		t.Errorf("after the computation: %v %q %v", v, from, err)
	}
}
