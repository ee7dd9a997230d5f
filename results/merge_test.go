package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeCheckpoints merges two shards, then checks that a shard of
// another configuration and a unit whose rows differ between shards are
// refused.
func TestMergeCheckpoints(t *testing.T) {
	h := CheckpointHeader{SpecHash: "s", Seed: 1, Binary: "b"}
	shard := func(units map[string]string, hh CheckpointHeader) string {
		dir := filepath.Join(t.TempDir(), ".checkpoint")
		cp, _, err := OpenCheckpoint(dir, hh)
		if err != nil {
			t.Fatal(err)
		}
		for u, v := range units {
			if err := cp.Append(u, []Row{{"v": v}}); err != nil {
				t.Fatal(err)
			}
		}
		cp.Close()
		return dir
	}
	a := shard(map[string]string{"u1": "1", "u3": "3"}, h)
	b := shard(map[string]string{"u2": "2", "u3": "3"}, h) // u3 twice, the same rows
	dst := filepath.Join(t.TempDir(), ".checkpoint")
	n, err := MergeCheckpoints(dst, h, []string{a, b}, []string{"u1", "u2", "u3"})
	if err != nil || n != 3 {
		t.Fatalf("merge: %d units, %v", n, err)
	}
	cp, changes, err := OpenCheckpoint(dst, h)
	if err != nil || len(changes) > 0 || cp.Len() != 3 {
		t.Fatalf("merged checkpoint: %d units, changes %v, %v", cp.Len(), changes, err)
	}
	if r, _ := cp.Done("u2"); r[0]["v"] != "2" {
		t.Errorf("u2 rows %v", r)
	}
	cp.Close()
	other := shard(map[string]string{"u4": "4"}, CheckpointHeader{SpecHash: "s", Seed: 2, Binary: "b"})
	if _, err := MergeCheckpoints(t.TempDir(), h, []string{a, other}, nil); err == nil || !strings.Contains(err.Error(), "made for another run") {
		t.Errorf("other header: %v", err)
	}
	clash := shard(map[string]string{"u1": "9"}, h)
	if _, err := MergeCheckpoints(t.TempDir(), h, []string{a, clash}, nil); err == nil || !strings.Contains(err.Error(), "differs between shards") {
		t.Errorf("clash: %v", err)
	}
	if _, err := MergeCheckpoints(t.TempDir(), h, []string{filepath.Join(t.TempDir(), "none")}, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing shard: %v", err)
	}
	// Incomplete (u2 missing) or with a unit the run does not have:
	// refused, and nothing written.
	out := filepath.Join(t.TempDir(), ".checkpoint")
	if _, err := MergeCheckpoints(out, h, []string{a}, []string{"u1", "u2", "u3"}); !errors.Is(err, ErrIncompleteMerge) || !strings.Contains(err.Error(), "missing e.g. u2") {
		t.Errorf("incomplete: %v", err)
	}
	if _, err := MergeCheckpoints(out, h, []string{a, b}, []string{"u1", "u2"}); err == nil || !strings.Contains(err.Error(), "does not have (e.g. u3)") {
		t.Errorf("extra unit: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused merge wrote %s", out)
	}
	// A shard with a torn last line, or a unit recorded twice with
	// different rows, is refused naming the file.
	torn := shard(map[string]string{"u1": "1"}, h)
	f, err := os.OpenFile(filepath.Join(torn, "units.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"unit":"u2","rows":[{"v":"2"}],"sum":"x`)
	f.Close()
	if _, err := MergeCheckpoints(t.TempDir(), h, []string{torn}, []string{"u1"}); err == nil || !strings.Contains(err.Error(), "units.jsonl line 3 is damaged") {
		t.Errorf("torn shard: %v", err)
	}
	// Resuming the same checkpoint (not merging it) drops the torn record
	// and says so.
	cp3, _, err := OpenCheckpoint(torn, h)
	if err != nil {
		t.Fatal(err)
	}
	if !cp3.Torn() || cp3.Len() != 1 {
		t.Errorf("resume of a torn checkpoint: torn %v, %d units", cp3.Torn(), cp3.Len())
	}
	cp3.Close()
	// The rewrite that drops a torn tail lists the units in sorted order,
	// so the file's bytes do not depend on map iteration.
	many := shard(map[string]string{"u3": "3", "u1": "1", "u2": "2", "u0": "0"}, h)
	if f, err = os.OpenFile(filepath.Join(many, "units.jsonl"), os.O_APPEND|os.O_WRONLY, 0); err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"unit":"u9"`)
	f.Close()
	cp4, _, err := OpenCheckpoint(many, h)
	if err != nil {
		t.Fatal(err)
	}
	cp4.Close()
	b4, err := os.ReadFile(filepath.Join(many, "units.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b4), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("rewritten checkpoint has %d lines, want header + 4", len(lines))
	}
	for i, l := range lines[1:] {
		if want := fmt.Sprintf(`{"unit":"u%d"`, i); !strings.HasPrefix(l, want) {
			t.Errorf("rewritten line %d = %.20s…, want %s…", i+2, l, want)
		}
	}
	twice := shard(map[string]string{"u1": "1"}, h)
	cp2, _, err := OpenCheckpoint(twice, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp2.Append("u1", []Row{{"v": "7"}}); err != nil {
		t.Fatal(err)
	}
	cp2.Close()
	if _, err := MergeCheckpoints(t.TempDir(), h, []string{twice}, []string{"u1"}); err == nil || !strings.Contains(err.Error(), "recorded twice with different rows") {
		t.Errorf("unit twice in a shard: %v", err)
	}
}

// TestCheckShards: the check a command makes before it writes anything
// accepts what MergeCheckpoints merges and refuses (as a *MergeRefusal)
// what it refuses, writing nothing either way.
func TestCheckShards(t *testing.T) {
	h := CheckpointHeader{SpecHash: "s", Seed: 1, Binary: "b"}
	shard := func(units map[string]string, hh CheckpointHeader) string {
		dir := filepath.Join(t.TempDir(), ".checkpoint")
		cp, _, err := OpenCheckpoint(dir, hh)
		if err != nil {
			t.Fatal(err)
		}
		for u, v := range units {
			if err := cp.Append(u, []Row{{"v": v}}); err != nil {
				t.Fatal(err)
			}
		}
		cp.Close()
		return dir
	}
	a := shard(map[string]string{"u1": "1"}, h)
	b := shard(map[string]string{"u2": "2"}, h)
	other := shard(map[string]string{"u2": "2"}, CheckpointHeader{SpecHash: "s", Seed: 2, Binary: "b"})
	snapshot := func() map[string]string {
		files := map[string]string{}
		for _, d := range []string{a, b, other} {
			p := filepath.Join(d, "units.jsonl")
			files[p] = string(mustReadFile(t, p))
		}
		return files
	}
	before := snapshot()
	if err := CheckShards(h, []string{a, b}, []string{"u1", "u2"}); err != nil {
		t.Errorf("good shards: %v", err)
	}
	cases := []struct {
		name string
		srcs []string
		want string
	}{
		{"a shard missing", []string{a}, "the shards hold 1 of 2 units (missing e.g. u2)"},
		{"another run", []string{a, other}, "made for another run"},
		{"no such shard", []string{a, filepath.Join(t.TempDir(), "none")}, "no such file or directory"},
	}
	for _, tc := range cases {
		err := CheckShards(h, tc.srcs, []string{"u1", "u2"})
		var mr *MergeRefusal
		if !errors.As(err, &mr) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a MergeRefusal saying %q", tc.name, err, tc.want)
		}
	}
	after := snapshot()
	for p, s := range before {
		if after[p] != s {
			t.Errorf("CheckShards changed %s", p)
		}
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
