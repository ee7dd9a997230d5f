// Package lint holds repository-wide source checks.
package lint

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The randomness policy (package core/randx, "Policy"): every draw comes from a *rand.Rand
// passed in. These patterns catch the ways to break it: the v1 math/rand
// package, top-level functions of math/rand/v2 (the global source), time
// seeds, and gonum distributions built without a Src (which silently use
// the global source).
var (
	reV1Import   = regexp.MustCompile(`^\s*(import\s+)?(\w+\s+)?"math/rand"\s*\)?\s*$`)
	reGlobalCall = regexp.MustCompile(`\brand\.(Float64|Float32|Int|IntN|Int32|Int32N|Int64|Int64N|Uint32|Uint32N|Uint64|Uint64N|UintN|Uint|N|NormFloat64|ExpFloat64|Perm|Shuffle)\(`)
	reTimeSeed   = regexp.MustCompile(`time\.Now\(\)\.(UnixNano|Unix|UnixMilli)\(\)`)
	reDistuv     = regexp.MustCompile(`distuv\.(Laplace|Normal|Gamma|Exponential|Uniform|Beta|Bernoulli|Binomial|Poisson|LogNormal|Pareto|ChiSquared|StudentsT)\{([^}]*)\}`)
)

func TestRandomnessPolicy(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); strings.HasPrefix(n, ".") && path != root || n == "testdata" || n == "results" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "lint_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			code := line
			if j := strings.Index(code, "//"); j >= 0 {
				code = code[:j]
			}
			where := path + ":" + strconv.Itoa(i+1)
			if reV1Import.MatchString(code) {
				t.Errorf("%s: imports math/rand (v1); use math/rand/v2 with an explicit *rand.Rand", where)
			}
			if reGlobalCall.MatchString(code) {
				t.Errorf("%s: calls a top-level math/rand/v2 function (global source): %s", where, strings.TrimSpace(line))
			}
			if reTimeSeed.MatchString(code) {
				t.Errorf("%s: time-based seed: %s", where, strings.TrimSpace(line))
			}
			for _, m := range reDistuv.FindAllStringSubmatch(code, -1) {
				// "lint:nosrc" marks a distribution used only for its CDF or
				// quantiles, never sampled.
				if !strings.Contains(m[2], "Src") && !strings.Contains(line, "lint:nosrc") {
					t.Errorf("%s: gonum distribution without Src (uses the global source): %s", where, m[0])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
