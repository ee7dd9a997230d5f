package external

import (
	"encoding/json"
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
		`{"params": [{"name": "steps", "type": "int", "default": 1.5}]}`:         "parameter steps: default: 1.5 (float64) is not an int",
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
