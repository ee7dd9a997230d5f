package datasets

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Shape is the size of a dataset's design matrix as the spec's
// preprocessing will build it, known once the records are read and before
// the matrix (N × D float64 values, plus the intercept) is allocated.
type Shape struct {
	// N is the number of records read and kept (before any subsample).
	N int
	// D is the number of design-matrix columns after one-hot encoding and
	// the data.columns selection, not counting the intercept.
	D int
	// Categorical lists each categorical attribute kept with its number
	// of indicator columns, in file order.
	Categorical []LevelCount
}

// LevelCount is a categorical attribute and its number of indicator
// columns (observed levels, or declared ones under public scaling).
type LevelCount struct {
	Name   string
	Levels int
}

// Widest returns the categorical attributes of s that one-hot encoding
// widens most: at most k, the widest first (ties in file order).
func (s Shape) Widest(k int) []LevelCount {
	c := slices.Clone(s.Categorical)
	slices.SortStableFunc(c, func(a, b LevelCount) int { return b.Levels - a.Levels })
	return c[:min(k, len(c))]
}

// String describes the shape for messages: "n = 300, d = 305 after one-hot
// encoding (id: 300 levels, colour: 3 levels)", without the parenthesis
// when no attribute is categorical.
func (s Shape) String() string {
	out := fmt.Sprintf("n = %d, d = %d", s.N, s.D)
	if len(s.Categorical) == 0 {
		return out
	}
	var parts []string
	for _, c := range s.Widest(3) {
		parts = append(parts, fmt.Sprintf("%s: %d levels", c.Name, c.Levels))
	}
	if len(s.Categorical) > 3 {
		parts = append(parts, fmt.Sprintf("%d more categorical", len(s.Categorical)-3))
	}
	return out + " after one-hot encoding (" + strings.Join(parts, ", ") + ")"
}

// shape returns the shape of the design matrix that p builds from t: the
// attributes p keeps, one column per numeric attribute and one per level
// of each categorical attribute (the declared levels under public
// scaling, the observed ones otherwise), without the intercept. p must
// have defaults applied; names that t lacks are counted as nothing (the
// encoder refuses them).
func (p Preprocessing) shape(t *Table) Shape {
	sh := Shape{N: t.N()}
	for _, a := range t.Attributes {
		if len(p.Columns) > 0 && !slices.Contains(p.Columns, a) {
			continue
		}
		if t.numeric(a) != nil {
			sh.D++
			continue
		}
		c := t.categorical(a)
		if c == nil {
			continue
		}
		levels := len(p.codedLevels(c.Levels))
		if p.Scaling == ScalingPublic {
			levels = len(p.Domain.Levels[a])
		}
		sh.D += levels
		sh.Categorical = append(sh.Categorical, LevelCount{Name: a, Levels: levels})
	}
	return sh
}

// wideCategorical returns a warning for each categorical attribute of t
// that p keeps in which more than half of the records have a level of
// their own (one no other record has): an identifier, a timestamp or a
// free-text field listed as categorical. Each level is a design column,
// so such an attribute makes d about n: the model can memorize the
// training records, and the memory grows as n².
func (p Preprocessing) wideCategorical(t *Table) []string {
	n := t.N()
	var w []string
	for _, c := range t.Categorical {
		if len(p.Columns) > 0 && !slices.Contains(p.Columns, c.Name) {
			continue
		}
		count := make([]int, len(c.Levels))
		for _, code := range c.Codes {
			count[code]++
		}
		alone := 0
		for _, k := range count {
			if k == 1 {
				alone++
			}
		}
		if 2*alone > n {
			per := "one level per record"
			if len(c.Levels) < n {
				per = fmt.Sprintf("%d of them with a level of their own", alone)
			}
			w = append(w, fmt.Sprintf("categorical attribute %q has %d levels in %d records (%s): each level is a column of the design matrix, so d grows with n; an identifier? leave it out with data.columns, or do not list it as categorical",
				c.Name, len(c.Levels), n, per))
		}
	}
	return w
}

// LabelCount is one value of a classification label as read, how many
// records have it, and the class it became.
type LabelCount struct {
	// Value is the label as written in the file ("yes", ">50K", "1");
	// for a table built without label text (a synthetic stand-in, a Go
	// provider's table) the class itself, "+1" or "-1".
	Value string
	// Records counts the records with this value, among those read and
	// kept (before any subsample).
	Records int
	// Class is +1 or −1.
	Class float64
}

// maxLabelValues bounds the label values listed one by one; the others
// are counted together, per class (a numeric column taken for the label
// can have a value per record).
const maxLabelValues = 100

// labelTally counts the label values of a classification table as they
// are read, in order of first appearance.
type labelTally struct {
	index  map[string]int
	counts []LabelCount
}

// add counts one record with label value v, read as class.
func (lt *labelTally) add(v []byte, class float64) {
	if i, ok := lt.index[string(v)]; ok {
		lt.counts[i].Records++
		return
	}
	if lt.index == nil {
		lt.index = map[string]int{}
	}
	lt.index[string(v)] = len(lt.counts)
	lt.counts = append(lt.counts, LabelCount{Value: string(v), Records: 1, Class: class})
}

// quoted returns the first k values, quoted, in order of first appearance.
func (lt *labelTally) quoted(k int) []string {
	var q []string
	for _, c := range lt.counts[:min(k, len(lt.counts))] {
		q = append(q, strconv.Quote(c.Value))
	}
	return q
}

// list returns the counts sorted by value (byte-wise), at most
// maxLabelValues of them, the rest folded into one entry per class
// ("(N other values)").
func (lt *labelTally) list() []LabelCount {
	out := slices.Clone(lt.counts)
	slices.SortFunc(out, func(a, b LabelCount) int { return strings.Compare(a.Value, b.Value) })
	if len(out) <= maxLabelValues {
		return out
	}
	rest := out[maxLabelValues:]
	out = out[:maxLabelValues:maxLabelValues]
	for _, class := range []float64{1, -1} {
		values, records := 0, 0
		for _, c := range rest {
			if c.Class == class {
				values++
				records += c.Records
			}
		}
		if values > 0 {
			out = append(out, LabelCount{Value: fmt.Sprintf("(%d other values)", values), Records: records, Class: class})
		}
	}
	return out
}

// nearMisses returns a warning for each label value that differs from the
// positive value only by letter case or surrounding space, naming both
// spellings and their counts: the records of such a value were read as −1
// (or, when no record has the positive value itself, the load fails with
// this note).
func (lt *labelTally) nearMisses(label, positive string) []string {
	want := strings.ToLower(strings.TrimSpace(positive))
	exact := 0
	if i, ok := lt.index[positive]; ok {
		exact = lt.counts[i].Records
	}
	var w []string
	for _, c := range lt.counts {
		if c.Value == positive || strings.ToLower(strings.TrimSpace(c.Value)) != want {
			continue
		}
		tv, tp := strings.TrimSpace(c.Value), strings.TrimSpace(positive)
		var how []string
		if tv != tp {
			how = append(how, "case")
		}
		if tv != c.Value || tp != positive {
			how = append(how, "surrounding space")
		}
		w = append(w, fmt.Sprintf("label %s: value %q (%d records) differs from positive = %q (%d records) only by %s: its records were read as −1, not +1",
			label, c.Value, c.Records, positive, exact, strings.Join(how, " and ")))
	}
	return w
}

// classLabels returns the label counts of a classification table built
// without label text: the classes ±1 as their own values.
func classLabels(y []float64) []LabelCount {
	var pos, neg int
	for _, v := range y {
		if v > 0 {
			pos++
		} else {
			neg++
		}
	}
	var out []LabelCount
	if pos > 0 {
		out = append(out, LabelCount{Value: "+1", Records: pos, Class: 1})
	}
	if neg > 0 {
		out = append(out, LabelCount{Value: "-1", Records: neg, Class: -1})
	}
	return out
}

// OverflowError is a value of the data that a scaling step cannot carry
// out in float64: a column sum, a squared deviation or a row norm beyond
// about 1.8e308. Load refuses the dataset rather than fill its design
// matrix with ±Inf, NaN or silent zeros.
type OverflowError struct {
	// File is the data file the value was read from (empty for data not
	// read from a file).
	File string
	// Step is the spec key of the scaling ("column_scale", "row_norm",
	// "row_norm_bound") and Scaling its value ("zscore", "l1-max").
	Step, Scaling string
	// Column names the attribute (column_scale), or Record the 1-based
	// record (row_norm), at fault.
	Column string
	Record int
	// Why says which quantity overflows, and what to do.
	Why string
	col int // the design column at fault, for the encoder to name it
}

// Error returns "FILE: column "x": column_scale = "zscore" overflows
// float64: WHY".
func (e *OverflowError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	switch {
	case e.Column != "":
		fmt.Fprintf(&b, "column %q: ", e.Column)
	case e.Record > 0:
		fmt.Fprintf(&b, "record %d: ", e.Record)
	}
	fmt.Fprintf(&b, "%s = %q overflows float64: %s", e.Step, e.Scaling, e.Why)
	return b.String()
}

// finite reports whether x is neither NaN nor ±Inf.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
