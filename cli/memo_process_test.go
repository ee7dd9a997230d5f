package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestProcess_SharedUnits runs the real binary on wkl-table4-bank and its
// sigma_floor variant, whose variability-interval units are the same
// computation (runner.Memo): in one command the variant takes all of them
// from the first run and its manifest names each and where it came from,
// while the public-bounds variant in the same command, whose VI units
// have the same keys but other rows and θ₀, takes none;
// its rows.csv and summary.csv are byte-identical to a command that runs
// the variant alone (which reuses nothing), and a traced command
// (--trace-privacy, whose units must draw their releases themselves)
// reuses nothing either and writes the same rows.
func TestProcess_SharedUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary three times")
	}
	bin := buildBinary(t)
	data := []string{}
	if d := os.Getenv("DPREPRO_DATA"); d != "" {
		data = []string{"--data-dir", d}
	}
	stderrs := map[string]string{}
	run := func(extra []string, specs ...string) string {
		out := filepath.Join(t.TempDir(), "runs")
		args := append(append([]string{"run", "--profile", "quick", "--workers", "2", "--out", out}, data...), extra...)
		code, _, stderr := runBin(t, bin, nil, append(args, specs...)...)
		if code != 0 {
			t.Fatalf("dprepro %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		stderrs[out] = stderr
		return out
	}
	const base, variant, public = "wkl-table4-bank", "wkl-table4-bank-sigma-c", "wkl-table4-bank-public"
	dir := func(out, id string) string { return filepath.Join(out, id, "quick-seed2019") }
	both := run(nil, base, variant, public)
	alone := run(nil, variant)
	traced := run([]string{"--trace-privacy"}, base, variant)

	rowsBoth, sumBoth, mBoth := readRun(t, dir(both, variant))
	rowsAlone, sumAlone, mAlone := readRun(t, dir(alone, variant))
	rowsTraced, _, mTraced := readRun(t, dir(traced, variant))
	if !bytes.Equal(rowsBoth, rowsAlone) || !bytes.Equal(sumBoth, sumAlone) {
		t.Error("the variant's rows or summary differ between the shared command and the run alone")
	}
	if !bytes.Equal(rowsTraced, rowsAlone) {
		t.Error("the traced command's rows differ from the run alone")
	}
	_, _, mBase := readRun(t, dir(both, base))
	if n := len(mBase.UnitTimes.Reused); n != 0 {
		t.Errorf("the first run reused %d units, want none", n)
	}
	vi := 0
	for _, u := range mBoth.UnitTimes.Reused {
		if !strings.Contains(u.Unit, "/vi/") || u.From != base+": "+u.Unit {
			t.Errorf("reused %q from %q, want a VI unit from %s's same unit", u.Unit, u.From, base)
		}
		vi++
	}
	want := 0
	for _, l := range strings.Split(string(rowsAlone), "\n") {
		if strings.Contains(l, ",vi,") {
			want++
		}
	}
	if vi == 0 || want == 0 {
		t.Errorf("the variant reused %d VI units (its rows have %d VI rows), want all its VI units", vi, want)
	}
	_, _, mPublic := readRun(t, dir(both, public))
	if n := len(mPublic.UnitTimes.Reused); n != 0 {
		t.Errorf("the public-bounds variant (other data, same unit keys) reused %d units, want none: %v", n, mPublic.UnitTimes.Reused[0])
	}
	// Said on stderr, for the variant only.
	if msg := "dprepro: " + variant + ": " + strconv.Itoa(vi) + " of "; !strings.Contains(stderrs[both], msg) || !strings.Contains(stderrs[both], "earlier run of this command ("+base+")") {
		t.Errorf("the shared command's stderr does not say that the variant took %d units from %s:\n%s", vi, base, stderrs[both])
	}
	for _, out := range []string{alone, traced} {
		if strings.Contains(stderrs[out], "earlier run of this command") {
			t.Errorf("a command that shared nothing says it did:\n%s", stderrs[out])
		}
	}
	if n := len(mAlone.UnitTimes.Reused); n != 0 {
		t.Errorf("the variant alone reused %d units", n)
	}
	if n := len(mTraced.UnitTimes.Reused); n != 0 {
		t.Errorf("a traced command reused %d units, want none", n)
	}
}
