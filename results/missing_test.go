package results

import (
	"strings"
	"testing"
)

// TestDataIdentities_Missing: a file read under data.missing = "level" has
// another identity than the same bytes under "drop", and Changes says so;
// "drop" (and a manifest written before the policy existed) keeps the
// identity "real FILE sha256 HEX".
func TestDataIdentities_Missing(t *testing.T) {
	const sum = "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"
	info := func(missing string) []DatasetInfo {
		return []DatasetInfo{{Name: "adult", Source: "real", Files: []FileInfo{{Name: "adult.data", SHA256: sum, Missing: missing}}}}
	}
	old, drop, level := DataIdentities(info("")), DataIdentities(info("drop")), DataIdentities(info("level"))
	if want := "real adult.data sha256 " + sum; old[0].Source != want || drop[0].Source != want {
		t.Errorf("identities %q, %q; want %q", old[0].Source, drop[0].Source, want)
	}
	if level[0].Source != "real adult.data sha256 "+sum+" missing=level" {
		t.Errorf("level identity %q", level[0].Source)
	}
	h0 := CheckpointHeader{Format: CheckpointFormat, Data: drop}
	h1 := CheckpointHeader{Format: CheckpointFormat, Data: level}
	ch := h1.Changes(h0)
	if len(ch) != 1 || !strings.Contains(ch[0], "data: adult changed from real adult.data sha256 "+sum+" to real adult.data sha256 "+sum+" missing=level") {
		t.Errorf("changes %q", ch)
	}
}
