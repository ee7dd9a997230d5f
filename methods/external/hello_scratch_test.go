package external

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestHello_Params: a hello's attributes.params is read into checked
// declarations (JSON's integral numbers as ints); a malformed list, an
// unknown field or a bad declaration is an error naming the method.
func TestHello_Params(t *testing.T) {
	var h Hello
	if err := json.Unmarshal([]byte(`{"type":"hello","protocol":1,"serves":"learner","privacy":"pure","attributes":{"params":[`+
		`{"name":"steps","type":"int","default":100,"doc":"gradient steps"},{"name":"clip","type":"float","default":1}]}}`), &h); err != nil {
		t.Fatal(err)
	}
	decl, err := h.Params("m")
	if err != nil {
		t.Fatal(err)
	}
	if len(decl) != 2 || decl[0].Default != int64(100) || decl[1].Default != 1.0 || decl[0].Doc != "gradient steps" {
		t.Errorf("declarations %+v", decl)
	}
	if d, err := (Hello{}).Params("m"); d != nil || err != nil {
		t.Errorf("no attributes.params: %v %v", d, err)
	}
	for attrs, want := range map[string]string{
		`{"params": {"steps": 1}}`: "method m: its hello's attributes.params is {",
		`{"params": [{"name": "steps", "type": "int", "default": 1, "min": 0}]}`: `unknown field "min"`,
		`{"params": [{"name": "steps", "type": "int", "default": 1.5}]}`:         "parameter steps: default: 1.5 (a float) is not an int",
	} {
		var h Hello
		if err := json.Unmarshal([]byte(`{"attributes":`+attrs+`}`), &h); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Params("m"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", attrs, err, want)
		}
	}
}

// TestMethodParams: a call's params gain "method_params" with the values,
// the other fields unchanged; no values leave them as they are.
func TestMethodParams(t *testing.T) {
	type p struct {
		Lambda float64 `json:"lambda"`
		Task   string  `json:"task"`
	}
	got, err := MethodParams(p{0.5, "logistic"}, map[string]any{"steps": int64(20), "clip": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if want := `{"lambda":0.5,"method_params":{"clip":1,"steps":20},"task":"logistic"}`; string(b) != want {
		t.Errorf("params %s, want %s", b, want)
	}
	same, _ := MethodParams(p{0.5, "x"}, nil)
	if _, ok := same.(p); !ok {
		t.Errorf("no values: params %T, want them unchanged", same)
	}
	if _, err := MethodParams([]int{1}, map[string]any{"a": 1}); err == nil {
		t.Error("params that are not an object accepted")
	}
}

// TestScratch_ReleaseAndPeak: a scope's files go when it is released,
// except one another scope still reads; unscoped files stay; Peak is the
// most bytes on disk at once; a key released and needed again is
// written again.
func TestScratch_ReleaseAndPeak(t *testing.T) {
	sc, err := NewScratch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := func(n int) func() []float64 { return func() []float64 { return make([]float64, n) } }
	size := func(path string) int64 {
		st, err := os.Stat(path)
		if err != nil {
			return -1
		}
		return st.Size()
	}
	a1, _ := sc.VectorIn("A", "a1", v(100))
	shared, _ := sc.VectorIn("A", "shared", v(50))
	if again, _ := sc.VectorIn("B", "shared", v(50)); again != shared {
		t.Fatalf("the shared key has two paths: %s %s", shared, again)
	}
	b1, _ := sc.VectorIn("B", "b1", v(200))
	keep, _ := sc.Vector("keep", v(10))
	all := size(a1) + size(shared) + size(b1) + size(keep)
	if sc.Peak() != all || sc.Bytes() != all {
		t.Fatalf("peak %d, bytes %d, want %d", sc.Peak(), sc.Bytes(), all)
	}
	aSize := size(a1)
	sc.Release("A")
	if size(a1) != -1 || size(shared) < 0 || size(b1) < 0 {
		t.Errorf("after releasing A: a1 %d, shared %d, b1 %d; want a1 gone, the others kept", size(a1), size(shared), size(b1))
	}
	sc.Release("B")
	if size(shared) != -1 || size(b1) != -1 || size(keep) < 0 {
		t.Errorf("after releasing B: shared %d, b1 %d, keep %d; want only keep", size(shared), size(b1), size(keep))
	}
	// a1 needed again: written again, and the peak stays the largest.
	p, _ := sc.VectorIn("C", "a1", v(100))
	if size(p) != aSize || sc.Peak() != all {
		t.Errorf("a1 rewritten: size %d (want %d), peak %d (want %d)", size(p), aSize, sc.Peak(), all)
	}
	sc.Release("") // no-op
	if size(keep) < 0 {
		t.Error("releasing the empty scope removed an unscoped file")
	}
}
