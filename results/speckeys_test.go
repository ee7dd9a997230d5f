package results

import (
	"strings"
	"testing"
)

// TestFlattenSpec_KeyChanges: a resolved spec's settings flatten to dotted
// keys (arrays of tables indexed), and the keys whose values differ are
// named with both values, "(unset)" for a missing one, at most max and
// then how many more; a header without them says nothing.
func TestFlattenSpec_KeyChanges(t *testing.T) {
	a, err := FlattenSpec([]byte("id = \"x\"\n[data]\nsubsample = 600\ndatasets = [\"magic\"]\n[[methods]]\nname = \"m\"\n[methods.params]\nsteps = [1, 2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a["data.subsample"] != "600" || a["data.datasets"] != `["magic"]` || a["methods[0].params.steps"] != "[1, 2]" || a["id"] != `"x"` {
		t.Errorf("flattened %v", a)
	}
	b, _ := FlattenSpec([]byte("id = \"x\"\n[data]\nsubsample = 800\ndatasets = [\"magic\"]\nintercept = true\n"))
	got := keyChanges(a, b, 2)
	if want := "data.intercept: (unset) → true; data.subsample: 600 → 800; and 2 more"; got != want {
		t.Errorf("keyChanges = %q, want %q", got, want)
	}
	if keyChanges(nil, b, 6) != "" {
		t.Error("a header without keys named changes")
	}
	h1 := CheckpointHeader{Format: CheckpointFormat, SpecHash: "a", PerUnit: true, SpecKeys: a}
	h2 := CheckpointHeader{Format: CheckpointFormat, SpecHash: "b", PerUnit: true, SpecKeys: b}
	if ch := strings.Join(h2.Changes(h1), "\n"); !strings.Contains(ch, "a setting every unit reads changed") || !strings.Contains(ch, "data.subsample: 600 → 800") {
		t.Errorf("Changes: %s", ch)
	}
	if ch := h1.Changes(CheckpointHeader{Format: CheckpointFormat, SpecHash: "a", PerUnit: true, SpecKeys: b}); len(ch) != 0 {
		t.Errorf("the same hash with other keys is a change: %v", ch)
	}
}
