package expostsweep

import (
	"context"
	"fmt"
	"github.com/dprepro/dprepro/runner"
	"os"
	"path/filepath"
	"testing"

	"github.com/dprepro/dprepro/experiments"
)

// benchExperiment loads a paper spec (full n = 100,000 subsample) with the
// given calibration; the data and θ* are shared by the benchmark's trials.
func benchExperiment(b *testing.B, file, cal string) *Experiment {
	b.Helper()
	s, err := experiments.Load(filepath.Join("..", "..", "experiments", file), "paper", testKinds)
	if err != nil {
		b.Fatal(err)
	}
	s.Section.(*Section).AccuracyFirst.Calibration = cal
	e, err := New(s, Options{DataDir: os.Getenv("DPREPRO_DATA")})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkTrial measures one trial of each method at α = 0.05 on the
// paper-size data (KDD-99: n = 100,000, p = 38; Twitter stand-in: n =
// 100,000, p = 77). Each iteration is a fresh trial (different noise),
// cycling through the spec's trials. It times RunUnit alone: the units are
// looked up once, not by runner.RunKey, which lists all of the spec's
// units (and opens its external generators, which these specs have none
// of) on every call.
//
//	DPREPRO_DATA=../shared/datasets go test -run - -bench Trial ./kinds/expostsweep
func BenchmarkTrial(b *testing.B) {
	for _, file := range []string{"af17-kdd-logistic.toml", "af17-twitter-ridge.toml"} {
		for _, cal := range []string{"authors-code", "paper"} {
			var e *Experiment
			for _, m := range []string{"noise-reduction", "doubling", "theory"} {
				b.Run(fmt.Sprintf("%s/%s/%s", file[5:len(file)-5], cal, m), func(b *testing.B) {
					if e == nil {
						e = benchExperiment(b, file, cal)
					}
					name := e.data[0].Name
					trials := e.spec.AccuracyFirst.Trials
					byKey := map[string]runner.Unit{}
					for _, u := range e.Units() {
						byKey[u.Key()] = u
					}
					units := make([]runner.Unit, trials)
					for i := range units {
						key := fmt.Sprintf("%s/%s/alpha=0.05/trial=%d", name, m, i+1)
						if units[i] = byKey[key]; units[i] == nil {
							b.Fatalf("no unit %q", key)
						}
					}
					spec := e.Spec()
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						u := units[i%trials]
						if _, err := e.RunUnit(context.Background(), u, runner.NewEnv(spec, u.Key(), spec.Output.SecureNoise)); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
