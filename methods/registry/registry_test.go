package registry

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

type item string

func (i item) Name() string { return string(i) }

func TestCheckName(t *testing.T) {
	long := strings.Repeat("a", MaxName)
	for _, ok := range []string{"a", "Z", "9", "dp-obj-lr", "noisy_gd.v2", "2step", long} {
		if err := CheckName("learner", ok); err != nil {
			t.Errorf("CheckName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", ".a", "_a", "a/b", "a=b", "a,b", "a b", `a"b`, "é", long + "a"} {
		if err := CheckName("learner", bad); !errors.Is(err, ErrBadName) || !strings.Contains(err.Error(), "learner name") {
			t.Errorf("CheckName(%q) = %v, want ErrBadName naming a learner", bad, err)
		}
	}
}

func TestRegistry(t *testing.T) {
	r := New[item]("method", func(v item) error {
		if v == "refused" {
			return errors.New("refused by the check")
		}
		return nil
	}, "stability", "random")
	if err := r.Register("mine"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v    item
		want error
	}{{"random", ErrDuplicate}, {"mine", ErrDuplicate}, {"a/b", ErrBadName}} {
		if err := r.Register(c.v); !errors.Is(err, c.want) {
			t.Errorf("Register(%q) = %v, want %v", c.v, err, c.want)
		}
	}
	if err := r.Register("refused"); err == nil || err.Error() != "refused by the check" {
		t.Errorf("Register(refused) = %v", err)
	}
	if got := r.Names(); !slices.Equal(got, []string{"stability", "random", "mine"}) {
		t.Errorf("Names() = %v: want the built-ins, then registration order", got)
	}
	if !r.Builtin("random") || r.Builtin("mine") || r.BuiltinName("nope") {
		t.Error("Builtin: want the built-ins only")
	}
	if _, i, ok := r.Rank("mine"); !ok || i != 2 {
		t.Errorf("Rank(mine) = %d, %v", i, ok)
	}
	_, err := r.Get("stabilty")
	if err == nil || !strings.Contains(err.Error(), `unknown method "stabilty" (known: stability, random, mine)`) || !strings.Contains(err.Error(), `did you mean "stability"`) {
		t.Errorf("Get(stabilty) = %v", err)
	}
	r.Remove("mine")
	if _, ok := r.Lookup("mine"); ok || len(r.All()) != 2 {
		t.Error("Remove left mine")
	}
	if err := r.Register("mine"); err != nil {
		t.Errorf("Register after Remove: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("removing a built-in did not panic")
		}
	}()
	r.Remove("stability")
}

// TestRegistry_Concurrent registers and looks up from many goroutines
// (run with -race).
func TestRegistry_Concurrent(t *testing.T) {
	r := New[item]("learner", nil)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := item(fmt.Sprintf("l%d", i))
			if err := r.Register(name); err != nil {
				t.Error(err)
			}
			if _, ok := r.Lookup(string(name)); !ok {
				t.Errorf("%s not found after its registration", name)
			}
			_ = r.Names()
		}()
	}
	wg.Wait()
	if len(r.Names()) != 16 {
		t.Errorf("%d names, want 16", len(r.Names()))
	}
}

func TestNew_BadBuiltinPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a duplicate built-in did not panic")
		}
	}()
	New[item]("learner", nil, "a", "a")
}
