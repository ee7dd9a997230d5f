package results

import (
	"errors"
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
	n, err := MergeCheckpoints(dst, h, []string{a, b})
	if err != nil || n != 3 {
		t.Fatalf("merge: %d units, %v", n, err)
	}
	cp, stale, err := OpenCheckpoint(dst, h)
	if err != nil || stale || cp.Len() != 3 {
		t.Fatalf("merged checkpoint: %d units, stale %v, %v", cp.Len(), stale, err)
	}
	if r, _ := cp.Done("u2"); r[0]["v"] != "2" {
		t.Errorf("u2 rows %v", r)
	}
	cp.Close()
	other := shard(map[string]string{"u4": "4"}, CheckpointHeader{SpecHash: "s", Seed: 2, Binary: "b"})
	if _, err := MergeCheckpoints(t.TempDir(), h, []string{a, other}); err == nil || !strings.Contains(err.Error(), "another spec, seed or build") {
		t.Errorf("other header: %v", err)
	}
	clash := shard(map[string]string{"u1": "9"}, h)
	if _, err := MergeCheckpoints(t.TempDir(), h, []string{a, clash}); err == nil || !strings.Contains(err.Error(), "differs between shards") {
		t.Errorf("clash: %v", err)
	}
	if _, err := MergeCheckpoints(t.TempDir(), h, []string{filepath.Join(t.TempDir(), "none")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing shard: %v", err)
	}
}
