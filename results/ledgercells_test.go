package results

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// The shared ledger cells: cells in the order of their first row, the
// largest value of each column (an unreadable one sticks as NaN, never a
// smaller charge), a column rows lack, privacy only when every row is, and
// the first note and the count of each kind.
func TestGroupLedger(t *testing.T) {
	rows := []Row{
		{"m": "b", "eps": "0.5", "private": "true", "status": "ok"},
		{"m": "a", "eps": "0.25", "private": "true", "d": "1e-6", "status": "warning: over1; under1"},
		{"m": "a", "eps": "0.75", "private": "true", "d": "2e-6", "status": "warning: over2"},
		{"m": "b", "eps": "0.1", "private": "false", "status": "ok"},
		{"m": "c", "eps": "", "private": "true", "d": "", "status": "ok"},
		{"m": "c", "eps": "0.3", "private": "true", "d": "1", "status": "ok"},
	}
	notes := func(s string) (over, under string) {
		for _, p := range strings.Split(strings.TrimPrefix(s, "warning: "), "; ") {
			switch {
			case over == "" && strings.HasPrefix(p, "over"):
				over = p
			case under == "" && strings.HasPrefix(p, "under"):
				under = p
			}
		}
		return over, under
	}
	l := GroupLedger(rows, func(r Row) string { return r["m"] }, []string{"eps", "d"}, notes)
	if got := l.Keys(); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Fatalf("keys %v, want the order of the first rows [b a c]", got)
	}
	a, b, c := l.Get("a"), l.Get("b"), l.Get("c")
	if l.Get("z") != nil {
		t.Error("a key no row had has a cell")
	}
	if a.Rows != 2 || b.Rows != 2 || c.Rows != 2 {
		t.Errorf("rows %d %d %d, want 2 each", a.Rows, b.Rows, c.Rows)
	}
	if a.Max("eps") != 0.75 || b.Max("eps") != 0.5 {
		t.Errorf("max eps %v %v, want 0.75 0.5", a.Max("eps"), b.Max("eps"))
	}
	if !math.IsNaN(c.Max("eps")) || !math.IsNaN(c.MaxPresent("d")) {
		t.Errorf("an empty value gave %v, %v: want NaN (never booked as a smaller charge)", c.Max("eps"), c.MaxPresent("d"))
	}
	if a.MaxPresent("d") != 2e-6 || !math.IsNaN(b.MaxPresent("d")) {
		t.Errorf("MaxPresent d %v %v, want 2e-6 and NaN for rows without the column", a.MaxPresent("d"), b.MaxPresent("d"))
	}
	if !a.Private || b.Private {
		t.Errorf("private a=%v b=%v, want true false", a.Private, b.Private)
	}
	if a.Over != 2 || a.Under != 1 || a.OverNote != "over1" || a.UnderNote != "under1" {
		t.Errorf("notes %d %d %q %q, want 2 1 over1 under1", a.Over, a.Under, a.OverNote, a.UnderNote)
	}
	want := []string{"OVER1 in 2 of 2 fits; booked as returned", "UNDER1 in 1 of 2 fits; booked at the level"}
	if got := a.LevelClaims("fits", strings.ToUpper); !slices.Equal(got, want) {
		t.Errorf("claims %q, want %q", got, want)
	}
	if got := b.LevelClaims("fits", nil); got != nil {
		t.Errorf("a cell without notes claims %q", got)
	}
}
