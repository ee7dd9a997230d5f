package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/experiments"
)

// defSection is a section for the KindDef tests.
type defSection struct{ N int }

func (*defSection) Validate(*experiments.Spec, *experiments.Problems) {}
func (*defSection) Limits(*experiments.Spec) []experiments.Limit      { return nil }
func (*defSection) Workload(*experiments.Spec) experiments.Workload   { return experiments.Workload{} }

type otherSection struct{ defSection }

// TestKindDef: a KindDef is a Kind whose NewSection returns a new value
// of its defaults on every call, whose New hands Build the spec's section
// as its type (and refuses a spec of another kind or section type without
// calling Build), and which pairs by Pairs (none when empty).
func TestKindDef(t *testing.T) {
	built := 0
	k := KindDef[*defSection]{
		KindName: "def-kind",
		Defaults: func() *defSection { return &defSection{N: 3} },
		Build: func(spec *experiments.Spec, sec *defSection, _ DataOptions) (Experiment, error) {
			built++
			if sec.N != 4 || spec.Section != sec {
				t.Errorf("Build got section %+v of spec section %p", sec, spec.Section)
			}
			return nil, nil
		},
		Pairs: []string{"rep"},
	}
	var _ Kind = k
	var _ Pairer = k
	a, b := k.NewSection(), k.NewSection()
	if a == b || a.(*defSection).N != 3 {
		t.Errorf("NewSection: %p %p %+v, want two new values with the defaults", a, b, a)
	}
	if k.Name() != "def-kind" || strings.Join(k.PairKey(), ",") != "rep" {
		t.Errorf("Name %q PairKey %v", k.Name(), k.PairKey())
	}
	if _, err := k.New(&experiments.Spec{ID: "s", Kind: "def-kind", Section: &defSection{N: 4}}, DataOptions{}); err != nil || built != 1 {
		t.Errorf("New: %v (built %d)", err, built)
	}
	for _, spec := range []*experiments.Spec{
		{ID: "s", Kind: "other-kind", Section: &defSection{N: 4}},
		{ID: "s", Kind: "def-kind", Section: &otherSection{}},
	} {
		if _, err := k.New(spec, DataOptions{}); err == nil || built != 1 {
			t.Errorf("New of kind %q section %T: err %v, built %d (want an error, no Build)", spec.Kind, spec.Section, err, built)
		}
	}
	if k.Pairs = nil; k.PairKey() != nil {
		t.Error("a KindDef without Pairs pairs")
	}
}

type defUnit struct{ Key_ string }

func (u defUnit) Key() string { return u.Key_ }

// TestBegin: Begin returns the unit as the kind's type, an error naming a
// unit of another type, and the context's error once the run is
// cancelled.
func TestBegin(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if u, err := Begin[defUnit](ctx, defUnit{"a/b"}); err != nil || u.Key_ != "a/b" {
		t.Errorf("Begin = %+v, %v", u, err)
	}
	if _, err := Begin[defUnit](ctx, Key("x")); err == nil || !strings.Contains(err.Error(), `unit "x"`) {
		t.Errorf("a unit of another type: %v", err)
	}
	cancel()
	if _, err := Begin[defUnit](ctx, defUnit{"a/b"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
