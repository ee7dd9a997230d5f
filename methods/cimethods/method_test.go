package cimethods

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/dpci"
	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/core/privacy"
)

// stub is a Method that releases nothing: what the registry sees of a
// method (its name and attributes) is all these tests need. Running
// methods through the kind is tested in kinds/cicoverage.
type stub struct{ name string }

func (m stub) Name() string { return m.name }

func (m stub) Attributes() Attributes {
	return Attributes{Privacy: "fake", Perturbation: "none", Model: dpci.LR}
}

func (m stub) Cost(b Budget) Cost {
	return Cost{Charges: []Charge{{Part: "training", Guarantee: privacy.EpsDP(b.Eps1, "nothing (test stub)")}},
		Rule: "test stub", Covers: "nothing"}
}

func (m stub) Interval(context.Context, Data, Budget) (Release, error) {
	return Release{Status: "nothing released"}, nil
}

func (m stub) Fit(context.Context, Data, float64) (Estimate, error) {
	return Estimate{Status: "nothing released"}, nil
}

// attrs overrides the attributes of a Method.
type attrs struct {
	Method
	a Attributes
}

func (m attrs) Attributes() Attributes { return m.a }

// TestRegister_Errors checks the names and attributes the registry
// refuses.
func TestRegister_Errors(t *testing.T) {
	ok := stub{name: "x"}
	cases := []struct {
		name string
		m    Method
		want string
	}{
		{"nil", nil, "nil method"},
		{"empty", stub{name: ""}, "method name"},
		{"space", stub{name: "dp obj"}, "method name"},
		{"slash", stub{name: "a/b"}, "method name"},
		{"comma", stub{name: "a,b"}, "method name"},
		{"colon", stub{name: "a:b"}, "method name"},
		{"leading dash", stub{name: "-a"}, "method name"},
		{"too long", stub{name: strings.Repeat("a", 65)}, "method name"},
		{"duplicate built-in", stub{name: "dp-obj-lr"}, "already registered"},
		{"no privacy", attrs{ok, Attributes{Perturbation: "p", Model: dpci.LR}}, "need a privacy"},
		{"unknown model", attrs{ok, Attributes{Privacy: "p", Perturbation: "p", Model: "ridge"}}, "unknown model"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Register(c.m)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	if err := Register(stub{name: "dp-obj-lr"}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v, want ErrDuplicate", err)
	}
	if slices.Contains(Names(), "x") {
		t.Error("a refused method was registered")
	}
}

// TestDeclaredBy checks whose word a cost is: the paper's eight methods'
// rests on core/dpci (""), a registered method's and an external one's on
// their own (their name), and a method that merely takes a built-in's
// name is no built-in.
func TestDeclaredBy(t *testing.T) {
	for _, name := range Names()[:8] {
		m, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := DeclaredBy(m); got != "" {
			t.Errorf("DeclaredBy(%s) = %q, want \"\"", name, got)
		}
	}
	const name = "test-declared-by"
	if err := Register(stub{name: name}); err != nil {
		t.Fatal(err)
	}
	defer methods.Remove(name)
	m, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if got := DeclaredBy(m); got != name {
		t.Errorf("DeclaredBy of a registered method = %q, want %q", got, name)
	}
	if got := DeclaredBy(&External{name: "dp-obj-lr"}); got != "dp-obj-lr" {
		t.Errorf("DeclaredBy of an external method = %q, want its name", got)
	}
	if got := DeclaredBy(nil); got != "" {
		t.Errorf("DeclaredBy(nil) = %q", got)
	}
}

// TestShare checks that shared work is computed once per key, errors
// included, and that a type clash panics.
func TestShare(t *testing.T) {
	var s Shared
	calls := 0
	f := func() (int, error) { calls++; return 7, errors.New("boom") }
	for range 2 {
		if v, err := Share(&s, "k", f); v != 7 || err == nil {
			t.Errorf("Share = %v, %v", v, err)
		}
	}
	if calls != 1 {
		t.Errorf("%d calls, want 1", calls)
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic for a type clash")
		}
	}()
	Share(&s, "k", func() (string, error) { return "", nil })
}

// TestNewRecords checks that Records reads each record from its distinct
// row: three records, the first and third equal, over two distinct rows
// (the constant feature last).
func TestNewRecords(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{
		0.5, 1,
		-0.25, 1,
		0.5, 1,
	})
	y := []float64{1, -1, 1}
	base := erm.NewRows(x, y, []int{0, 1}) // the distinct rows: records 0 and 1
	r := NewRecords("ci-0-adult-n=3-d=1", base, []int32{0, 1, 0})
	if r.Key() != "ci-0-adult-n=3-d=1" || r.N() != 3 || !slices.Equal(r.Counts, []int32{0, 0, 0}) {
		t.Errorf("key %q, n %d, counts %v", r.Key(), r.N(), r.Counts)
	}
	if got := r.X(); !mat.Equal(got, x) {
		t.Errorf("X = %v, want %v", mat.Formatted(got), mat.Formatted(x))
	}
	if got := r.Y(); !slices.Equal(got, y) {
		t.Errorf("Y = %v, want %v", got, y)
	}
}
