package cicoverage

import (
	"context"
	"github.com/dprepro/dprepro/runner"
	"os"
	"path/filepath"
	"testing"

	"github.com/dprepro/dprepro/experiments"
)

// BenchmarkUnit times the paper-profile work units of Table 3 at d = 10
// (Adult, n = 30,162, m = 10,000 Monte Carlo samples): a block of 10
// bootstrap replicates for all four LR methods, and 200 variability fits.
// Scale by 100 (CI) and 50 (VI) for one (d, model) cell of the paper.
//
//	DPREPRO_DATA=../shared/datasets go test -run - -bench Unit ./kinds/cicoverage
func BenchmarkUnit(b *testing.B) {
	s, err := experiments.Load(filepath.Join("..", "..", "experiments", "wkl-table3-adult.toml"), "paper", testKinds)
	if err != nil {
		b.Fatal(err)
	}
	s.Section.(*Section).ConfidenceIntervals.Values = []float64{10}
	s.Section.(*Section).ConfidenceIntervals.Replicates = 10
	s.Section.(*Section).ConfidenceIntervals.BlockSize = 10
	s.Section.(*Section).ConfidenceIntervals.VIFits = 200
	s.Section.(*Section).ConfidenceIntervals.Methods = []string{"dp-obj-lr", "dp-output-lr", "zcdp-obj-lr", "zcdp-output-lr"}
	e, err := New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		b.Fatal(err)
	}
	viKey := ""
	for _, k := range e.units {
		if e.byKey[k].vi {
			viKey = k
		}
	}
	for _, c := range []struct{ name, key string }{
		{"ci-10-replicates", "adult/d=10/lr/ci/rep=1-10"},
		{"vi-200-fits", viKey},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := runner.RunKey(context.Background(), e, c.key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
