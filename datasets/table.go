package datasets

import (
	"fmt"
	"slices"
	"sort"
)

// Table is a parsed dataset before encoding and scaling: numeric and
// categorical attributes kept apart, each under its name, plus the label or
// target.
//
// Attributes gives the file order of all attributes; [Preprocessing]
// produces design-matrix columns in that order, expanding each categorical
// attribute into its one-hot indicators in place.
type Table struct {
	// Attributes names every attribute in file order.
	Attributes []string
	// Numeric holds the numeric attributes, in file order.
	Numeric []NumericColumn
	// Categorical holds the categorical attributes, in file order.
	Categorical []CategoricalColumn
	// Target names the label or target column.
	Target string
	// Y holds ±1 labels (classification) or the raw target (regression).
	Y []float64
	// Labels lists, for classification, each label value as read with its
	// count and class (see [LabelCount]); nil for regression, and for a
	// table built without label text (Load then lists the classes).
	Labels []LabelCount
	// Files records the files read; empty for a synthetic table.
	Files []FileRecord

	// missingLevel is the missing-value marker kept as a categorical level
	// ([MissingLevel]); "" when none is (checked by public scaling).
	missingLevel string
}

// NumericColumn is one numeric attribute.
type NumericColumn struct {
	Name   string
	Values []float64 // one per record
}

// CategoricalColumn is one categorical attribute.
type CategoricalColumn struct {
	Name string
	// Levels lists the levels in sorted (byte-wise) order. For a real file
	// these are the levels observed after dropping incomplete records; for a
	// synthetic table, every level of the real data, drawn or not, so that
	// the one-hot shape matches the real data.
	Levels []string
	// Codes holds, per record, an index into Levels.
	Codes []int32
}

// N returns the number of records.
func (t *Table) N() int { return len(t.Y) }

// Dim returns the number of design-matrix columns after full one-hot
// encoding, before any intercept.
func (t *Table) Dim() int {
	d := len(t.Numeric)
	for _, c := range t.Categorical {
		d += len(c.Levels)
	}
	return d
}

func (t *Table) numeric(name string) *NumericColumn {
	for i := range t.Numeric {
		if t.Numeric[i].Name == name {
			return &t.Numeric[i]
		}
	}
	return nil
}

func (t *Table) categorical(name string) *CategoricalColumn {
	for i := range t.Categorical {
		if t.Categorical[i].Name == name {
			return &t.Categorical[i]
		}
	}
	return nil
}

// check panics if the table's slices disagree in length; tables are built
// only inside this package, so a mismatch is a bug here.
func (t *Table) check() {
	n := len(t.Y)
	if len(t.Attributes) != len(t.Numeric)+len(t.Categorical) {
		panic("datasets: table attribute list does not match its columns")
	}
	for _, c := range t.Numeric {
		if len(c.Values) != n {
			panic(fmt.Sprintf("datasets: numeric column %s has %d values, want %d", c.Name, len(c.Values), n))
		}
	}
	for _, c := range t.Categorical {
		if len(c.Codes) != n {
			panic(fmt.Sprintf("datasets: categorical column %s has %d codes, want %d", c.Name, len(c.Codes), n))
		}
	}
}

// levelIndex interns the levels of one categorical column while parsing, in
// first-seen order; sortLevels then sorts them and remaps the codes.
type levelIndex struct {
	index  map[string]int32
	levels []string
}

func newLevelIndex() *levelIndex { return &levelIndex{index: make(map[string]int32)} }

// code returns the code of level b, adding it if new. The map lookup with
// string(b) does not allocate; only a new level is copied.
func (l *levelIndex) code(b []byte) int32 {
	if c, ok := l.index[string(b)]; ok {
		return c
	}
	c := int32(len(l.levels))
	s := string(b)
	l.index[s] = c
	l.levels = append(l.levels, s)
	return c
}

// sortLevels sorts the levels and rewrites codes in place to match.
func (l *levelIndex) sortLevels(codes []int32) []string {
	sorted := slices.Clone(l.levels)
	sort.Strings(sorted)
	remap := make([]int32, len(l.levels))
	for newCode, s := range sorted {
		remap[l.index[s]] = int32(newCode)
	}
	for i, c := range codes {
		codes[i] = remap[c]
	}
	return sorted
}
