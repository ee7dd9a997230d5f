package rmethod_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"
)

// readNPYScript reads every file named on the command line with read_npy
// and prints one JSON line per file: its dimensions and its values in row
// order (full precision), or the error's message.
const readNPYScript = `
for (path in commandArgs(trailingOnly = TRUE)) {
  r <- tryCatch({
    x <- read_npy(path)
    if (is.matrix(x)) list(dim = I(dim(x)), values = I(as.vector(t(x)))) else list(dim = I(length(x)), values = I(x), vector = TRUE)
  }, error = function(e) list(error = conditionMessage(e)))
  cat(json_encode(r), "\n", sep = "")
}
`

type npyResult struct {
	Dim    []int
	Values []float64
	Vector bool
	Error  string
}

func readWithR(t *testing.T, paths ...string) []npyResult {
	t.Helper()
	out, err := runR(t, readNPYScript, paths...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(paths) {
		t.Fatalf("read_npy printed %d lines for %d files:\n%s", len(lines), len(paths), out)
	}
	res := make([]npyResult, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &res[i]); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	return res
}

// npyHeader returns a version 1.0 .npy header, padded with spaces to a
// multiple of 64 bytes as NumPy writes it.
func npyHeader(descr string, fortran bool, shape string) []byte {
	order := "False"
	if fortran {
		order = "True"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, order, shape)
	n := 10 + len(dict) + 1
	pad := (64 - n%64) % 64
	dict += strings.Repeat(" ", pad) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(dict)))
	b.WriteString(dict)
	return b.Bytes()
}

// TestReadNPY_GoFiles: read_npy reads what Go writes with
// github.com/sbinet/npyio — a matrix in C order (how the harness writes
// data), the same matrix in Fortran order, a vector — bit for bit, with
// the dimensions the file states. npyio writes C order only, so the
// Fortran file is npyio's C-order file of Aᵀ with its header saying
// fortran_order True and A's shape (the same bytes: Aᵀ row by row is A
// column by column); npyio's own reader must read it back as A, so the
// file is checked by Go before R reads it.
func TestReadNPY_GoFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 3))
	const r, c = 5, 3
	a := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			a.Set(i, j, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
		}
	}
	a.Set(0, 0, 5e-324) // the smallest subnormal
	a.Set(1, 2, -1e308)
	v := []float64{0.1, -2.5, 1.0 / 3, 1e-310}
	dir := t.TempDir()
	cPath, fPath, vPath := filepath.Join(dir, "c.npy"), filepath.Join(dir, "f.npy"), filepath.Join(dir, "v.npy")
	writeNPY(t, cPath, a)
	writeNPY(t, vPath, v)

	var tb bytes.Buffer
	if err := npy.Write(&tb, mat.DenseCopyOf(a.T())); err != nil {
		t.Fatal(err)
	}
	old := []byte(fmt.Sprintf("'fortran_order': False, 'shape': (%d, %d), }", c, r))
	repl := []byte(fmt.Sprintf("'fortran_order': True, 'shape': (%d, %d), } ", r, c)) // same length: the header keeps its padding
	fb := bytes.Replace(tb.Bytes(), old, repl, 1)
	if bytes.Equal(fb, tb.Bytes()) {
		t.Fatalf("npyio's header is not as expected: %q", tb.Bytes()[:80])
	}
	if err := os.WriteFile(fPath, fb, 0o644); err != nil {
		t.Fatal(err)
	}
	var back mat.Dense
	if err := npy.Read(bytes.NewReader(fb), &back); err != nil || !mat.Equal(&back, a) {
		t.Fatalf("npyio reads the Fortran-order file as %v (%v), want %v", mat.Formatted(&back), err, mat.Formatted(a))
	}

	got := readWithR(t, cPath, fPath, vPath)
	for k, name := range []string{"C order", "Fortran order"} {
		g := got[k]
		if g.Error != "" || len(g.Dim) != 2 || g.Dim[0] != r || g.Dim[1] != c || g.Vector {
			t.Fatalf("%s: R read %+v, want a %d×%d matrix", name, g, r, c)
		}
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				if gv, w := g.Values[i*c+j], a.At(i, j); math.Float64bits(gv) != math.Float64bits(w) {
					t.Errorf("%s: x[%d, %d] = %v, want %v", name, i+1, j+1, gv, w)
				}
			}
		}
	}
	if g := got[2]; g.Error != "" || !g.Vector || len(g.Values) != len(v) {
		t.Fatalf("vector: R read %+v, want %v", g, v)
	}
	for i := range v {
		if math.Float64bits(got[2].Values[i]) != math.Float64bits(v[i]) {
			t.Errorf("vector: x[%d] = %v, want %v", i+1, got[2].Values[i], v[i])
		}
	}
}

// TestReadNPY_Refuses: anything but a 1-D or 2-D little-endian float64
// array is an error naming the file and what it holds, never a wrong
// array.
func TestReadNPY_Refuses(t *testing.T) {
	dir := t.TempDir()
	f8 := func(n int) []byte {
		b := make([]byte, 8*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(float64(i)))
		}
		return b
	}
	good := append(npyHeader("<f8", false, "(2, 3)"), f8(6)...)
	cases := []struct {
		name, want string
		body       []byte
		write      any // written with npyio instead of body
	}{
		{name: "float32", write: []float32{1, 2}, want: "element type '<f4': only little-endian float64"},
		{name: "int64", write: []int64{1, 2}, want: "element type '<i8'"},
		{name: "big-endian", body: append(npyHeader(">f8", false, "(2,)"), f8(2)...), want: "element type '>f8'"},
		{name: "3-D", body: append(npyHeader("<f8", false, "(2, 1, 1)"), f8(2)...), want: "shape (2, 1, 1): only 1-D and 2-D"},
		{name: "0-D", body: append(npyHeader("<f8", false, "()"), f8(1)...), want: "shape (): only 1-D and 2-D"},
		{name: "truncated", body: good[:len(good)-4], want: "holds 5 of the 6 numbers its shape (2, 3) says"},
		{name: "text", body: []byte("a,b\n1,2\n"), want: "not a .npy file"},
	}
	var paths []string
	for _, c := range cases {
		p := filepath.Join(dir, c.name+".npy")
		if c.write != nil {
			writeNPY(t, p, c.write)
		} else if err := os.WriteFile(p, c.body, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	missing := filepath.Join(dir, "missing.npy")
	got := readWithR(t, append(paths, missing)...)
	for i, c := range cases {
		if g := got[i]; g.Error == "" || !strings.Contains(g.Error, paths[i]) || !strings.Contains(g.Error, c.want) {
			t.Errorf("%s: R read %+v, want an error naming %s and saying %q", c.name, g, paths[i], c.want)
		}
	}
	if g := got[len(cases)]; !strings.Contains(g.Error, missing+": no such file") {
		t.Errorf("missing file: %+v", g)
	}
	// The well-formed file of the same header reads.
	if err := os.WriteFile(paths[0], good, 0o644); err != nil {
		t.Fatal(err)
	}
	if g := readWithR(t, paths[0])[0]; g.Error != "" || len(g.Dim) != 2 || g.Values[5] != 5 {
		t.Errorf("the well-formed 2×3 file: %+v", g)
	}
}
