package datasets

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to every format's parser: it must never
// panic, and a rejected file must come back as a *ParseError naming the
// file and line. The seed corpus is the testdata fixtures plus hand-made
// edge cases; `go test -fuzz FuzzParse ./datasets` explores further.
func FuzzParse(f *testing.F) {
	ents, _ := os.ReadDir("testdata")
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("testdata", e.Name())); err == nil && len(b) < 1<<16 {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "\n\n", ",,,,", "1e309,2", "NaN", "\x00\xff", strings.Repeat("1,", 200), " 1  2\t3\r\n"} {
		f.Add([]byte(s))
	}
	formats := map[string]*format{
		"adult": adultFormat, "magic": magicFormat, "kddcup99": kddFormat, "bank": bankFormat,
		"twitter": twitterFormat, "ipums-us": ipumsUSFormat, "ipums-br": ipumsBRFormat,
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for name, fm := range formats {
			for _, policy := range MissingPolicies {
				tb, _, err := fm.parse(bytes.NewReader(data), "fuzz.data", 0, policy)
				if err == nil {
					if tb == nil {
						t.Fatalf("%s (missing = %s): nil table without error", name, policy)
					}
					continue
				}
				var pe *ParseError
				if errors.As(err, &pe) && !strings.HasPrefix(err.Error(), "fuzz.data") {
					t.Errorf("%s (missing = %s): parse error %q does not name the file", name, policy, err)
				}
			}
		}
	})
}
