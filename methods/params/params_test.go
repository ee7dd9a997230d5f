package params

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

var decl = []Param{
	{Name: "steps", Type: Int, Default: 100},
	{Name: "clip", Type: Float, Default: int64(1)},
	{Name: "noise", Type: String, Default: "gaussian"},
	{Name: "center", Type: Bool, Default: false},
}

func checked(t *testing.T) []Param {
	t.Helper()
	d, err := Check("m", decl)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestExpand: lists expand into the Cartesian product, the first declared
// parameter varying slowest, each setting labelled by the listed
// parameters alone and holding every parameter (defaults normalized:
// the int default of a float parameter is a float64).
func TestExpand(t *testing.T) {
	d := checked(t)
	got, err := Expand("", d, map[string]any{"steps": []any{int64(50), int64(100)}, "clip": []any{0.5, int64(2)}, "noise": "laplace"})
	if err != nil {
		t.Fatal(err)
	}
	var labels, canon []string
	for _, s := range got {
		labels = append(labels, s.Label)
		canon = append(canon, s.Canonical())
	}
	if want := []string{"steps=50,clip=0.5", "steps=50,clip=2", "steps=100,clip=0.5", "steps=100,clip=2"}; !slices.Equal(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
	if canon[1] != "steps=50,clip=2,noise=laplace,center=false" {
		t.Errorf("canonical %q", canon[1])
	}
	s := got[3]
	if s.Int("steps") != 100 || s.Float("clip") != 2 || s.String("noise") != "laplace" || s.Bool("center") || fmt.Sprintf("%T", s.Values["clip"]) != "float64" {
		t.Errorf("setting %v", s.Values)
	}
	if Label("dp-gd", s) != "dp-gd[steps=100,clip=2]" || Base("dp-gd[steps=100,clip=2]") != "dp-gd" || Base("dp-gd") != "dp-gd" {
		t.Errorf("Label/Base: %q %q", Label("dp-gd", s), Base(Label("dp-gd", s)))
	}
	def := Defaults(d)
	if def.Label != "" || def.Int("steps") != 100 || def.Float("clip") != 1 || Label("m", def) != "m" {
		t.Errorf("defaults %+v", def)
	}
	// JSON numbers (float64) with integral values are ints.
	js, err := Expand("", d, map[string]any{"steps": 20.0})
	if err != nil || js[0].Int("steps") != 20 {
		t.Errorf("steps = 20.0: %v %v", js, err)
	}
}

// TestExpand_Errors: every bad value is reported, naming its key.
func TestExpand_Errors(t *testing.T) {
	d := checked(t)
	for _, c := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{"step": int64(3)}, `p.step: unknown parameter "step" (known: steps, clip, noise, center); did you mean "steps"?`},
		{map[string]any{"steps": 2.5}, "p.steps: 2.5 (a float) is not an int"},
		{map[string]any{"steps": "ten"}, `p.steps: "ten" is not an int`},
		{map[string]any{"clip": []any{}}, "p.clip: an empty list"},
		{map[string]any{"clip": []any{1.0, int64(1)}}, "p.clip[1]: 1 listed twice"},
		{map[string]any{"noise": "a b"}, `p.noise: string "a b": want 1–64 letters`},
		{map[string]any{"center": int64(1)}, "p.center: 1 (an integer) is not a bool"},
		{map[string]any{"clip": math.Inf(1)}, "is not finite"},
	} {
		_, err := Expand("p.", d, c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v, want %q", c.set, err, c.want)
		}
	}
	many := map[string]any{}
	var list []any
	for i := range 17 {
		list = append(list, int64(i))
	}
	many["steps"] = list
	many["clip"] = []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0}
	if _, err := Expand("p.", d, many); err == nil || !strings.Contains(err.Error(), "more than 256 variants") {
		t.Errorf("17 × 16 variants: err %v", err)
	}
	if _, err := Expand("p.", nil, map[string]any{"x": int64(1)}); err == nil || !strings.Contains(err.Error(), "the method declares no parameters") {
		t.Errorf("no declaration: err %v", err)
	}
}

// TestCheck: a declaration with a bad name, a repeated name, an unknown
// type or a default of the wrong type is refused, every fault named.
func TestCheck(t *testing.T) {
	_, err := Check("learner x", []Param{
		{Name: "1st", Type: Int, Default: 1},
		{Name: "a", Type: Int, Default: 1},
		{Name: "a", Type: Int, Default: 1},
		{Name: "b", Type: "double", Default: 1.0},
		{Name: "c", Type: Float},
		{Name: "d", Type: Bool, Default: "yes"},
	})
	for _, want := range []string{`name "1st"`, `parameter "a" declared twice`, `type "double"`, "parameter c: no default", `parameter d: default: "yes" is not a bool`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v lacks %q", err, want)
		}
	}
}
