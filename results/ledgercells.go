package results

import (
	"fmt"
	"math"
)

// LedgerCell is what a kind's ledger reads from the rows of one cell (one
// method at one privacy setting): the largest value of each charge column,
// whether every row was private, and the rows whose method's claim
// differed from the level it was handed. Every kind that books its charges
// from its rows aggregates them here, once ([GroupLedger]), and so do the
// warnings that count the rows over or below their level.
type LedgerCell struct {
	Rows    int  // the rows of the cell
	Private bool // every row says private=true
	// Over and Under count the rows with a release whose claim was over,
	// or below, the level asked; OverNote and UnderNote are the first of
	// each, as the kind's note reader returned them.
	Over, Under         int
	OverNote, UnderNote string

	max     map[string]float64 // math.Max from 0 over every row (NaN sticks)
	present map[string]float64 // the largest over the rows that have the column (NaN sticks)
}

// Max is the largest value of col over the cell's rows, starting from 0;
// a row without a value (NaN) makes it NaN, so an unreadable charge is
// never booked as a smaller one. A column GroupLedger was not asked to
// aggregate is NaN too.
func (c *LedgerCell) Max(col string) float64 {
	if v, ok := c.max[col]; ok {
		return v
	}
	return math.NaN()
}

// MaxPresent is the largest value of col over the rows that have the
// column (an empty value among them makes it NaN, as in Max), NaN when
// none has it: for columns that rows written before they existed lack.
func (c *LedgerCell) MaxPresent(col string) float64 {
	if v, ok := c.present[col]; ok {
		return v
	}
	return math.NaN()
}

// LevelClaims words the cell's claims over and below their level for a
// charge's Claimed: "NOTE in N of M UNIT; booked as returned" (a claim
// over the level is booked as the method returned it) and "…; booked at
// the level" (a claim below it is booked at the level). trim, when not
// nil, shortens a note first (e.g. drops a count the note ends with).
func (c *LedgerCell) LevelClaims(unit string, trim func(string) string) []string {
	if trim == nil {
		trim = func(s string) string { return s }
	}
	var out []string
	if c.Over > 0 {
		out = append(out, fmt.Sprintf("%s in %d of %d %s; booked as returned", trim(c.OverNote), c.Over, c.Rows, unit))
	}
	if c.Under > 0 {
		out = append(out, fmt.Sprintf("%s in %d of %d %s; booked at the level", trim(c.UnderNote), c.Under, c.Rows, unit))
	}
	return out
}

// LedgerCells are the cells of a ledger, in the order their first row
// came.
type LedgerCells struct {
	cells map[string]*LedgerCell
	keys  []string
}

// Get is the cell of key, nil when no row had it.
func (l *LedgerCells) Get(key string) *LedgerCell { return l.cells[key] }

// Keys are the cells' keys in the order of their first row.
func (l *LedgerCells) Keys() []string { return l.keys }

// GroupLedger groups rows into ledger cells by key(row) and aggregates the
// charge columns cols ([LedgerCell.Max], [LedgerCell.MaxPresent]), the
// private column, and the level notes notes(status) finds in each row's
// status (nil: none).
func GroupLedger(rows []Row, key func(Row) string, cols []string, notes func(status string) (over, under string)) *LedgerCells {
	l := &LedgerCells{cells: map[string]*LedgerCell{}}
	for _, r := range rows {
		k := key(r)
		c := l.cells[k]
		if c == nil {
			c = &LedgerCell{Private: true, max: map[string]float64{}, present: map[string]float64{}}
			l.cells[k] = c
			l.keys = append(l.keys, k)
		}
		c.Rows++
		c.Private = c.Private && r["private"] == "true"
		for _, col := range cols {
			v := r.Float(col)
			c.max[col] = math.Max(c.max[col], v)
			if _, has := r[col]; !has {
				continue
			}
			if p, ok := c.present[col]; ok {
				v = math.Max(p, v)
			}
			c.present[col] = v
		}
		if notes == nil {
			continue
		}
		if o, u := notes(r["status"]); o != "" || u != "" {
			if o != "" {
				if c.Over == 0 {
					c.OverNote = o
				}
				c.Over++
			}
			if u != "" {
				if c.Under == 0 {
					c.UnderNote = u
				}
				c.Under++
			}
		}
	}
	return l
}
