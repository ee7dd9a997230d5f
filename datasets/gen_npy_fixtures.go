//go:build ignore

// gen_npy_fixtures writes the .npy fixtures of the user-data-file tests
// (testdata/userfile_*.npy) with github.com/sbinet/npyio, the library that
// reads them (numpy was not available where they were made; numpy.load
// reads them alike):
//
//	cd datasets && go run gen_npy_fixtures.go
//
// The values are those of testdata/userfile_ok.csv's kept records, so the
// tests can compare the formats record for record.
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"
)

func main() {
	// 6 records: age, income, label (1 = yes); the last row has a NaN
	// income (dropped, as an empty csv field is).
	nan := math.NaN()
	x := mat.NewDense(6, 3, []float64{
		39, 1.5, 1,
		50, 2.5, 0,
		53, 0.5, 1,
		28, 3, 0,
		45, 2, 1,
		61, nan, 0,
	})
	write("userfile_f8.npy", x)
	// The same features as int32 (income ×10), labels in their own file.
	write("userfile_i4.npy", [6][2]int32{{39, 15}, {50, 25}, {53, 5}, {28, 30}, {45, 20}, {61, 7}})
	write("userfile_labels.npy", []int64{1, 0, 1, 0, 1, 0})
	write("userfile_3d.npy", [2][2][2]float64{{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}})
	write("userfile_str.npy", []string{"a", "bb", "ccc"})
	// An object array: the header of numpy.save(…, allow_pickle=True) on
	// a (2, 2) object array; npyio does not write pickles, and the reader
	// must refuse the array from its header alone.
	raw("userfile_object.npy", "{'descr': '|O', 'fortran_order': False, 'shape': (2, 2), }", []byte("\x80\x02not a real pickle."))
}

func write(name string, v any) {
	var b bytes.Buffer
	if err := npy.Write(&b, v); err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name), b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", name)
}

// raw writes a version 1.0 .npy file with the given header dictionary and
// data bytes, padded as numpy pads it (header length a multiple of 64).
func raw(name, dict string, data []byte) {
	hdr := dict
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	var b bytes.Buffer
	b.Write(npy.Magic[:])
	b.Write([]byte{1, 0})
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	b.Write(data)
	if err := os.WriteFile(filepath.Join("testdata", name), b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", name)
}
