package randx

import "testing"

func TestNew_Deterministic(t *testing.T) {
	a, b := New(42, "adult", "stability", "rep=1"), New(42, "adult", "stability", "rep=1")
	for i := 0; i < 100; i++ {
		if x, y := a.Uint64(), b.Uint64(); x != y {
			t.Fatalf("draw %d: streams differ: %d vs %d", i, x, y)
		}
	}
}

func TestNew_KeysSeparate(t *testing.T) {
	cases := [][2][]string{
		{{"ab", "c"}, {"a", "bc"}},
		{{"x"}, {"x", ""}},
		{{"rep=1"}, {"rep=2"}},
	}
	for _, c := range cases {
		if Seed(1, c[0]...) == Seed(1, c[1]...) {
			t.Errorf("keys %q and %q collide", c[0], c[1])
		}
	}
	if Seed(1, "k") == Seed(2, "k") {
		t.Error("root seeds 1 and 2 collide")
	}
}
