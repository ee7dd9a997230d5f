package datasets

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

type attrKind uint8

const (
	numericAttr attrKind = iota
	categoricalAttr
)

type attribute struct {
	name string
	kind attrKind
}

// format describes the text layout of one data file: one record per line,
// fields separated by sep, the attributes in order and then the label or
// target as the last field.
type format struct {
	sep       byte // field separator (unused when whitespace)
	trimSpace bool // trim spaces around fields (adult uses ", ")
	quoted    bool // strip one pair of surrounding double quotes (bank)
	header    bool // the first non-blank line names the columns
	// missing is the missing-value marker ("" = none). A record with a
	// field equal to it is dropped, except that under [MissingLevel] a
	// marker in a categorical field is kept as a level of that column.
	missing string
	attrs   []attribute
	target  string
	// labels maps the label text to ±1 for classification; nil means the
	// target is numeric (regression).
	labels map[string]float64
	// labelDesc lists the accepted labels for error messages.
	labelDesc string
	// whitespace splits fields at runs of spaces, tabs and '\r' instead of
	// at sep, ignoring leading and trailing blanks (plain matrices such as
	// the IPUMS extracts).
	whitespace bool
}

// parse reads records from r until EOF. path names the file in errors and
// sizeHint (0 if unknown) presizes the columns. policy is [MissingDrop]
// ("" means it) or [MissingLevel]: what becomes of a record holding the
// format's missing marker (ignored for a format without one).
//
// Under MissingLevel a marker in a categorical field is that column's
// level (its literal text, e.g. "?"); a marker in a numeric field or in
// the label still drops the record. FileRecord counts the records read,
// kept, dropped and (MissingLevel) kept with a missing level.
//
// Blank lines are skipped wherever they occur (adult.data ends with one).
// Parsing avoids per-field allocation: lines are split in place, numbers go
// through parseNumber, categorical levels are interned per column.
func (f *format) parse(r io.Reader, path string, sizeHint int, policy string) (*Table, FileRecord, error) {
	var rec FileRecord
	if policy == "" {
		policy = MissingDrop
	}
	if f.missing != "" {
		rec.Missing = policy
	}
	levelOK := make([]bool, len(f.attrs)+1) // a marker in field i is kept as a level
	if policy == MissingLevel {
		for i, a := range f.attrs {
			levelOK[i] = a.kind == categoricalAttr
		}
	}
	nf := len(f.attrs) + 1
	slot := make([]int, len(f.attrs)) // index into the numeric or categorical columns
	var nNum, nCat int
	for i, a := range f.attrs {
		if a.kind == numericAttr {
			slot[i] = nNum
			nNum++
		} else {
			slot[i] = nCat
			nCat++
		}
	}
	num := make([][]float64, nNum)
	for j := range num {
		num[j] = make([]float64, 0, sizeHint)
	}
	codes := make([][]int32, nCat)
	levels := make([]*levelIndex, nCat)
	for j := range codes {
		codes[j] = make([]int32, 0, sizeHint)
		levels[j] = newLevelIndex()
	}
	y := make([]float64, 0, sizeHint)
	rowNum := make([]float64, nNum)
	rowCat := make([]int32, nCat)
	var tally labelTally

	perr := func(line int, format string, args ...any) error {
		return &ParseError{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256<<10), 1<<20)
	fields := make([][]byte, 0, nf)
	line := 0
	needHeader := f.header
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if isBlank(b) {
			continue
		}
		if f.whitespace {
			fields = splitWhitespace(fields, b)
		} else {
			fields = splitFields(fields, b, f.sep)
		}
		for i, fl := range fields {
			if f.trimSpace {
				fl = trimSpaceBytes(fl)
			}
			if f.quoted && len(fl) >= 2 && fl[0] == '"' && fl[len(fl)-1] == '"' {
				fl = fl[1 : len(fl)-1]
			}
			fields[i] = fl
		}
		if needHeader {
			needHeader = false
			if err := f.checkHeader(fields); err != nil {
				return nil, rec, perr(line, "%v", err)
			}
			continue
		}
		if len(fields) != nf {
			return nil, rec, perr(line, "wrong field count: got %d, want %d", len(fields), nf)
		}
		if f.missing != "" {
			if drop, level := missingFields(fields, f.missing, levelOK); drop {
				rec.Dropped++
				continue
			} else if level {
				rec.MissingLevel++
			}
		}

		lab := fields[nf-1]
		var yi float64
		if f.labels != nil {
			v, ok := f.labels[string(lab)]
			if !ok {
				return nil, rec, perr(line, "field %d (%s): unknown label %s (want %s)", nf, f.target, quote(lab), f.labelDesc)
			}
			yi = v
			tally.add(lab, v)
		} else {
			v, ok := parseNumber(lab)
			if !ok {
				return nil, rec, perr(line, "field %d (%s): bad number %s", nf, f.target, quote(lab))
			}
			yi = v
		}
		for i, a := range f.attrs {
			fl := fields[i]
			if a.kind == numericAttr {
				v, ok := parseNumber(fl)
				if !ok {
					return nil, rec, perr(line, "field %d (%s): bad number %s", i+1, a.name, quote(fl))
				}
				rowNum[slot[i]] = v
			} else {
				if len(fl) == 0 {
					return nil, rec, perr(line, "field %d (%s): empty value", i+1, a.name)
				}
				rowCat[slot[i]] = levels[slot[i]].code(fl)
			}
		}
		for j := range num {
			num[j] = append(num[j], rowNum[j])
		}
		for j := range codes {
			codes[j] = append(codes[j], rowCat[j])
		}
		y = append(y, yi)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, rec, perr(line+1, "line longer than 1 MiB")
		}
		return nil, rec, fmt.Errorf("%s: read: %w", path, err)
	}
	if needHeader {
		return nil, rec, perr(line, "missing header line")
	}
	if len(y) == 0 {
		return nil, rec, perr(line, "no records")
	}

	t := &Table{Target: f.target, Y: y}
	if f.labels != nil {
		t.Labels = tally.list()
	}
	for i, a := range f.attrs {
		t.Attributes = append(t.Attributes, a.name)
		if a.kind == numericAttr {
			t.Numeric = append(t.Numeric, NumericColumn{Name: a.name, Values: num[slot[i]]})
		} else {
			c := codes[slot[i]]
			t.Categorical = append(t.Categorical, CategoricalColumn{
				Name:   a.name,
				Levels: levels[slot[i]].sortLevels(c),
				Codes:  c,
			})
		}
	}
	t.check()
	rec.Records = len(y)
	if f.missing != "" {
		rec.Read = rec.Records + rec.Dropped
	}
	if policy == MissingLevel && f.missing != "" {
		t.missingLevel = f.missing
	}
	return t, rec, nil
}

func (f *format) checkHeader(fields [][]byte) error {
	want := make([]string, 0, len(f.attrs)+1)
	for _, a := range f.attrs {
		want = append(want, a.name)
	}
	want = append(want, f.target)
	if len(fields) != len(want) {
		return fmt.Errorf("header: wrong field count: got %d, want %d", len(fields), len(want))
	}
	for i, w := range want {
		if string(fields[i]) != w {
			return fmt.Errorf("header: field %d is %s, want %q", i+1, quote(fields[i]), w)
		}
	}
	return nil
}

// missingFields reports whether a record holds the marker s in a field
// whose levelOK is false (drop: the record is dropped), and else whether
// it holds it in one whose levelOK is true (level: kept as a level).
func missingFields(fields [][]byte, s string, levelOK []bool) (drop, level bool) {
	for i, f := range fields {
		if string(f) != s {
			continue
		}
		if i >= len(levelOK) || !levelOK[i] {
			return true, false
		}
		level = true
	}
	return false, level
}

// pow10 holds the powers of ten that are exact in float64.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseNumber parses a finite decimal number. It rejects NaN and ±Inf.
//
// Fast path: a plain decimal with at most 15 digits ("-12", "0.00",
// "28.7967") is an integer m < 10¹⁵ < 2⁵³ divided by 10^k with k ≤ 15, both
// exact in float64, so the single correctly rounded division gives the same
// bits as strconv.ParseFloat (Clinger's fast path). Anything else (exponents,
// more digits, junk) goes to strconv.ParseFloat.
func parseNumber(b []byte) (float64, bool) {
	i := 0
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i = 1
	}
	var mant uint64
	digits, frac := 0, 0
	dot := false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case '0' <= c && c <= '9':
			if digits == 15 {
				return parseNumberSlow(b)
			}
			mant = mant*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return parseNumberSlow(b)
		}
	}
	if digits == 0 {
		return parseNumberSlow(b)
	}
	v := float64(mant)
	if frac > 0 {
		v /= pow10[frac]
	}
	if neg {
		v = -v
	}
	return v, true
}

func parseNumberSlow(b []byte) (float64, bool) {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}
