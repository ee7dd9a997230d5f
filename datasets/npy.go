package datasets

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sbinet/npyio/npy"
)

// The .npy files of a user's data ([FileOptions], format "npy") are read
// with github.com/sbinet/npyio: it parses the header (dtype, byte order,
// C or Fortran order, shape) and decodes the elements. This file adds what
// a harness reading untrusted files needs around it: the header length and
// the data size are checked against the file before anything is allocated
// from them, the dtype and rank are checked with messages naming the file,
// and a panic of the decoder on a damaged header becomes an error.

// maxNPYHeader bounds the header of a .npy file (numpy writes a few hundred
// bytes; the format allows 4 GiB).
const maxNPYHeader = 1 << 20

// npyElemSize gives the element size of the accepted dtypes, keyed by the
// dtype without its byte-order mark ("<f8" → "f8").
var npyElemSize = map[string]int{
	"f8": 8, "f4": 4,
	"i8": 8, "i4": 4, "i2": 2, "i1": 1,
	"u8": 8, "u4": 4, "u2": 2, "u1": 1,
	"b1": 1,
}

// npyArray is a numeric array read from a .npy file, as float64: rows ×
// cols (a vector is rows × 1).
type npyArray struct {
	path       string
	rows, cols int
	fortran    bool
	data       []float64
}

// at returns element (i, j).
func (a *npyArray) at(i, j int) float64 {
	if a.fortran {
		return a.data[j*a.rows+i]
	}
	return a.data[i*a.cols+j]
}

// readNPY reads a .npy array of size bytes from r: a 2-D matrix, or, with
// vector set, a label vector of shape (n,) or (n, 1).
func readNPY(r *bufio.Reader, path string, size int64, vector bool) (a *npyArray, err error) {
	defer func() {
		// npyio slices the header text without checking it; a damaged
		// header must be an error naming the file, not a crash.
		if p := recover(); p != nil {
			a, err = nil, fmt.Errorf("%s: not a valid .npy file: damaged header (%v)", path, p)
		}
	}()
	pre, _ := r.Peek(12)
	if len(pre) < 10 || !bytes.Equal(pre[:6], npy.Magic[:]) {
		return nil, fmt.Errorf("%s: not a .npy file (it does not start with the \\x93NUMPY magic)", path)
	}
	var hdrLen, off int
	switch pre[6] {
	case 1:
		hdrLen, off = int(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 2:
		if len(pre) < 12 {
			return nil, fmt.Errorf("%s: not a valid .npy file: truncated header", path)
		}
		hdrLen, off = int(binary.LittleEndian.Uint32(pre[8:12])), 12
	default:
		return nil, fmt.Errorf("%s: .npy format version %d.%d is not supported (want 1.0 or 2.0; numpy.save writes 1.0)", path, pre[6], pre[7])
	}
	if hdrLen > maxNPYHeader || int64(off+hdrLen) > size {
		return nil, fmt.Errorf("%s: not a valid .npy file: header length %d (file %d bytes)", path, hdrLen, size)
	}
	rd, err := npy.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid .npy file: %v", path, err)
	}
	descr := rd.Header.Descr
	kind := strings.TrimLeft(descr.Type, "<>|=")
	esize, ok := npyElemSize[kind]
	switch {
	case kind == "O":
		return nil, fmt.Errorf("%s: dtype %q is an object array (pickled Python objects), which is not read: save a numeric array, e.g. numpy.save(path, x.astype(float))", path, descr.Type)
	case !ok:
		return nil, fmt.Errorf("%s: dtype %q is not supported (want float64, float32, an integer type or bool)", path, descr.Type)
	}
	shape := descr.Shape
	a = &npyArray{path: path, fortran: descr.Fortran}
	switch {
	case vector && len(shape) == 1:
		a.rows, a.cols = shape[0], 1
	case vector && len(shape) == 2 && shape[1] == 1:
		a.rows, a.cols = shape[0], 1
	case vector:
		return nil, fmt.Errorf("%s: the labels must be a vector, shape (n,) or (n, 1) (got shape %v, %d dimensions)", path, shape, len(shape))
	case len(shape) == 2:
		a.rows, a.cols = shape[0], shape[1]
	default:
		return nil, fmt.Errorf("%s: want a 2-D array (rows × columns), got %d dimensions, shape %v", path, len(shape), shape)
	}
	// Compare the data the header promises with the file before
	// allocating it: a truncated file, trailing bytes or an absurd shape
	// is an error here.
	have := size - int64(off+hdrLen)
	if a.rows < 0 || a.cols < 0 || a.cols > 0 && int64(a.rows) > have/int64(a.cols)/int64(esize) ||
		int64(a.rows)*int64(a.cols)*int64(esize) != have {
		return nil, fmt.Errorf("%s: the header says shape %v of dtype %s, but the file has %d bytes of data (truncated, or not one array)",
			path, shape, descr.Type, have)
	}
	n := a.rows * a.cols
	switch kind {
	case "f8":
		a.data, err = npyRead[float64](rd, n)
	case "f4":
		a.data, err = npyRead[float32](rd, n)
	case "i8":
		a.data, err = npyRead[int64](rd, n)
	case "i4":
		a.data, err = npyRead[int32](rd, n)
	case "i2":
		a.data, err = npyRead[int16](rd, n)
	case "i1":
		a.data, err = npyRead[int8](rd, n)
	case "u8":
		a.data, err = npyRead[uint64](rd, n)
	case "u4":
		a.data, err = npyRead[uint32](rd, n)
	case "u2":
		a.data, err = npyRead[uint16](rd, n)
	case "u1":
		a.data, err = npyRead[uint8](rd, n)
	case "b1":
		b := make([]bool, n)
		if err = rd.Read(&b); err == nil {
			a.data = make([]float64, n)
			for i, v := range b {
				if v {
					a.data[i] = 1
				}
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading the data: %v", path, err)
	}
	return a, nil
}

// npyRead reads n elements of type T and converts them to float64 (exact
// for every integer of magnitude below 2⁵³).
func npyRead[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](rd *npy.Reader, n int) ([]float64, error) {
	v := make([]T, n)
	if n > 0 {
		if err := rd.Read(&v); err != nil {
			return nil, err
		}
	}
	out := make([]float64, n)
	for i, x := range v {
		out[i] = float64(x)
	}
	return out, nil
}

// npyTable builds the table of a user's npy data: x the matrix, y the
// label vector of a separate labels file (nil: the label is column
// f.Label of x). See [FileOptions].
func npyTable(x, y *npyArray, f FileOptions) (*Table, parseStats, error) {
	var st parseStats
	n := x.rows
	labelCol := -1
	if y == nil {
		k, _ := strconv.Atoi(f.Label) // checked by Validate
		if k < 0 {
			k += x.cols
		}
		if k < 0 || k >= x.cols {
			return nil, st, fmt.Errorf("%s: label = %q: no such column (the array has %d columns, indices 0 … %d or -%d … -1)",
				x.path, f.Label, x.cols, x.cols-1, x.cols)
		}
		labelCol = k
	} else if y.rows != n {
		return nil, st, fmt.Errorf("%s has %d labels, but %s has %d rows", y.path, y.rows, x.path, n)
	}
	label := func(i int) float64 {
		if y != nil {
			return y.data[i]
		}
		return x.at(i, labelCol)
	}
	var cols []int // the feature columns of x, in order
	for j := range x.cols {
		if j != labelCol {
			cols = append(cols, j)
		}
	}
	if len(cols) == 0 {
		return nil, st, fmt.Errorf("%s: no feature columns (shape (%d, %d), the label is column %d)", x.path, x.rows, x.cols, labelCol)
	}
	isCat := make([]bool, len(cols))
	for _, c := range f.Categorical {
		k, _ := strconv.Atoi(strings.TrimPrefix(c, "f")) // form checked by Validate
		if k < 1 || k > len(cols) {
			return nil, st, fmt.Errorf("%s: categorical: no attribute %q (the attributes are f1 … f%d)", x.path, c, len(cols))
		}
		isCat[k-1] = true
	}
	var pos float64
	if f.Positive != "" {
		pos, _ = parseNumber([]byte(f.Positive)) // checked by Validate
	}

	num := make([][]float64, len(cols))
	codes := make([][]int32, len(cols))
	levels := make([]*levelIndex, len(cols))
	for k := range cols {
		if isCat[k] {
			levels[k] = newLevelIndex()
		}
	}
	var yv []float64
	var buf []byte
rows:
	for i := range n {
		v := label(i)
		switch {
		case math.IsNaN(v):
			st.dropped++
			continue rows
		case math.IsInf(v, 0) && y != nil:
			return nil, st, fmt.Errorf("%s: index %d: infinite label %v", y.path, i, v)
		case math.IsInf(v, 0):
			return nil, st, fmt.Errorf("%s: row index %d, column index %d (the label): infinite value %v", x.path, i, labelCol, v)
		}
		for k, j := range cols {
			switch w := x.at(i, j); {
			case math.IsNaN(w):
				st.dropped++
				continue rows
			case math.IsInf(w, 0):
				return nil, st, fmt.Errorf("%s: row index %d, column index %d (f%d): infinite value %v", x.path, i, j, k+1, w)
			}
		}
		yi := v
		if f.Positive != "" {
			yi = -1
			if v == pos {
				yi = 1
			}
			buf = strconv.AppendFloat(buf[:0], v, 'g', -1, 64)
			st.labels.add(buf, yi)
		}
		for k, j := range cols {
			w := x.at(i, j)
			if isCat[k] {
				buf = strconv.AppendFloat(buf[:0], w, 'g', -1, 64)
				codes[k] = append(codes[k], levels[k].code(buf))
			} else {
				num[k] = append(num[k], w)
			}
		}
		yv = append(yv, yi)
	}
	if len(yv) == 0 {
		return nil, st, fmt.Errorf("%s: no records (%d rows, %d dropped for a NaN)", x.path, n, st.dropped)
	}
	target := "label"
	if y == nil {
		target = fmt.Sprintf("column %d", labelCol)
	}
	t := &Table{Target: target, Y: yv}
	if f.Positive != "" {
		t.Labels = st.labels.list()
	}
	for k := range cols {
		name := "f" + strconv.Itoa(k+1)
		t.Attributes = append(t.Attributes, name)
		if isCat[k] {
			t.Categorical = append(t.Categorical, CategoricalColumn{Name: name, Levels: levels[k].sortLevels(codes[k]), Codes: codes[k]})
		} else {
			t.Numeric = append(t.Numeric, NumericColumn{Name: name, Values: num[k]})
		}
	}
	t.check()
	return t, st, nil
}
