package cli

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/runner"
)

// TestProcess_TracePrivacy runs the binary with --trace-privacy: the run
// folder holds privacy-trace.csv (runner.TraceColumns, one row per
// release, every mechanism one the harness knows, every release on a
// named stream of a unit), the manifest lists it and counts its releases
// and units, and rows.csv is byte-identical to an untraced run's. Run
// again without the flag, the folder keeps no stale trace; run again with
// it, the units resumed from the finished run's checkpoint are counted as
// untraced and stderr says so. With --shard it is refused (exit 2).
func TestProcess_TracePrivacy(t *testing.T) {
	bin := sharedBinary(t)
	dir, traced, plain := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spec.toml"), []byte(claimsSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runIn(t, dir, bin, "run", "spec.toml", "--out", traced, "--trace-privacy"); r.code != 0 {
		t.Fatalf("run --trace-privacy: exit %d\n%s", r.code, r.stderr)
	}
	if r := runIn(t, dir, bin, "run", "spec.toml", "--out", plain); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	run := filepath.Join(traced, "claimed", "quick-seed5")
	if a, b := mustRead(t, filepath.Join(run, "rows.csv")), mustRead(t, filepath.Join(plain, "claimed", "quick-seed5", "rows.csv")); !bytes.Equal(a, b) {
		t.Error("rows.csv of the traced run differs from the untraced run's")
	}
	recs, err := csv.NewReader(bytes.NewReader(mustRead(t, filepath.Join(run, runner.TraceFile)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 2 || !slices.Equal(recs[0], runner.TraceColumns) {
		t.Fatalf("%s: %d records, header %v", runner.TraceFile, len(recs), recs[0])
	}
	col := func(name string) int { return slices.Index(runner.TraceColumns, name) }
	for _, r := range recs[1:] {
		if _, known := mech.FloatSafe(r[col("mechanism")]); !known || r[col("stream")] == "" || r[col("unit")] == "" || r[col("part")] == "" {
			t.Fatalf("trace row %v: want a known mechanism on a unit's named stream, scoped", r)
		}
	}
	_, _, m := readRun(t, run)
	if m.PrivacyTrace == nil || m.PrivacyTrace.File != runner.TraceFile || m.PrivacyTrace.Releases != len(recs)-1 ||
		m.PrivacyTrace.UnitsTraced != m.Units.Total || m.PrivacyTrace.UnitsUntraced != 0 || !slices.Contains(m.Outputs, runner.TraceFile) {
		t.Errorf("manifest privacy_trace %+v, outputs %v: want %d releases of all %d units", m.PrivacyTrace, m.Outputs, len(recs)-1, m.Units.Total)
	}

	// Again without the flag: no stale trace is left beside the new files.
	if r := runIn(t, dir, bin, "run", "spec.toml", "--out", traced); r.code != 0 {
		t.Fatalf("second run: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(run, runner.TraceFile)); !os.IsNotExist(err) {
		t.Errorf("a run without --trace-privacy left %s (err %v)", runner.TraceFile, err)
	}
	if _, _, m := readRun(t, run); m.PrivacyTrace != nil || slices.Contains(m.Outputs, runner.TraceFile) {
		t.Errorf("manifest of an untraced run: privacy_trace %+v, outputs %v", m.PrivacyTrace, m.Outputs)
	}

	// Again with it: the units the folder's checkpoint resumed are counted
	// as untraced, and said.
	r := runIn(t, dir, bin, "run", "spec.toml", "--out", traced, "--trace-privacy")
	if r.code != 0 {
		t.Fatalf("third run: exit %d\n%s", r.code, r.stderr)
	}
	_, _, m = readRun(t, run)
	// (A finished run's checkpoint is kept: every unit resumes.)
	if m.Units.Resumed != m.Units.Total || m.PrivacyTrace == nil || m.PrivacyTrace.UnitsUntraced != m.Units.Total || m.PrivacyTrace.UnitsTraced != 0 || m.PrivacyTrace.Releases != 0 {
		t.Errorf("resumed run: privacy_trace %+v, units %+v", m.PrivacyTrace, m.Units)
	}
	if !strings.Contains(r.stderr, "--trace-privacy: the ") {
		t.Errorf("stderr does not say that the resumed units are not traced:\n%s", r.stderr)
	}

	// With --shard no process would write the trace: refused, exit 2,
	// nothing written.
	sharded := t.TempDir()
	r = runIn(t, dir, bin, "run", "spec.toml", "--out", sharded, "--shard", "0/2", "--trace-privacy")
	if r.code != 2 || !strings.Contains(r.stderr, "--trace-privacy cannot be combined with --shard") {
		t.Errorf("--shard with --trace-privacy: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if es, _ := os.ReadDir(sharded); len(es) != 0 {
		t.Errorf("the refused run wrote %d entries in its --out", len(es))
	}
}
