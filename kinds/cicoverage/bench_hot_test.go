package cicoverage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dprepro/dprepro/core/randx"
	"github.com/dprepro/dprepro/experiments"
	"github.com/dprepro/dprepro/runner"
)

// benchData returns $DPREPRO_DATA, skipping the benchmark without it (the
// hot paths are timed on the real files only).
func benchData(b *testing.B) string {
	b.Helper()
	d := os.Getenv("DPREPRO_DATA")
	if d == "" {
		b.Skip("DPREPRO_DATA is not set: this benchmark reads the real UCI files")
	}
	return d
}

// BenchmarkResampleCounts times the bootstrap count drawing of
// wkl-table2-kdd (Wang, Kifer and Lee 2019, Section 7.1: k bootstrap
// replicates of the n records): one replicate's counts per distinct row
// — since issue 27 one multinomial draw (multinomialCounts, about one
// binomial per distinct row) where the records repeat, formerly n draws
// of rng.IntN(n) — and the weighted rows built from the counts
// (resampler.draw), at the quick profile's largest n = 20,000 and at the
// paper's n = 450,000 of KDD-99 (the 10 % file).
//
//	DPREPRO_DATA=../shared/datasets go test -run - -bench ResampleCounts ./kinds/cicoverage
func BenchmarkResampleCounts(b *testing.B) {
	dir := benchData(b)
	s, err := experiments.Load(filepath.Join("..", "..", "experiments", "wkl-table2-kdd.toml"), "quick", testKinds)
	if err != nil {
		b.Fatal(err)
	}
	s.Section.(*Section).ConfidenceIntervals.Values = []float64{20000, 450000}
	e, err := New(s, Options{DataDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	for _, pt := range e.points {
		b.Run(fmt.Sprintf("n=%d", pt.n), func(b *testing.B) {
			rs := newResampler(pt.data, false)
			rng := randx.New(1, "bench", "resample")
			b.ReportAllocs()
			for b.Loop() {
				rs.draw(rng)
			}
			b.ReportMetric(float64(pt.n), "draws/op")
		})
	}
}

// BenchmarkVIFits times the variability-interval unit of the ε₁ sweep of
// wkl-eps1-adult (Wang, Kifer and Lee 2019, Figure 1) at ε₁ = 0.3, the
// quick profile's smallest: 20 bootstrap private fits (the profile's
// vi_fits = 200 scaled down) for each of the spec's methods, then the
// quantiles per coordinate — the fits being the erm solver's Newton steps
// (evalLoss on bootstrap weights).
//
//	DPREPRO_DATA=../shared/datasets go test -run - -bench VIFits ./kinds/cicoverage
func BenchmarkVIFits(b *testing.B) {
	dir := benchData(b)
	s, err := experiments.Load(filepath.Join("..", "..", "experiments", "wkl-eps1-adult.toml"), "quick", testKinds)
	if err != nil {
		b.Fatal(err)
	}
	ci := &s.Section.(*Section).ConfidenceIntervals
	ci.Values = []float64{0.3}
	ci.VIFits = 20
	e, err := New(s, Options{DataDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	var keys []string
	for _, k := range e.units {
		if e.byKey[k].vi {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		b.Fatal("no variability-interval unit")
	}
	for _, key := range keys {
		b.Run(key, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := runner.RunKey(context.Background(), e, key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
