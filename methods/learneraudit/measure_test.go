package learneraudit

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/core/erm"
	"github.com/dprepro/dprepro/methods/learners"
)

// TestMeasure records the audit's power (not a check: run with
// LEARNERAUDIT_MEASURE=1): ε_LB of the broken output perturbations against
// the releases per side, and the smallest violation factor caught at 10⁴
// releases per side, on the calibration tests' setting.
func TestMeasure(t *testing.T) {
	if os.Getenv("LEARNERAUDIT_MEASURE") == "" {
		t.Skip("measurement: set LEARNERAUDIT_MEASURE=1")
	}
	huber := erm.Huber{H: 0.5}
	rels := []int{200, 400, 600, 1000, 1500, 2000}
	if s := os.Getenv("RELS"); s != "" {
		rels = nil
		for _, f := range strings.Split(s, ",") {
			v, _ := strconv.Atoi(f)
			rels = append(rels, v)
		}
	}
	muls := []float64{2, 4}
	if s := os.Getenv("MULS"); s != "" {
		muls = nil
		for _, f := range strings.Split(s, ",") {
			v, _ := strconv.ParseFloat(f, 64)
			muls = append(muls, v)
		}
	}
	for _, mul := range muls {
		for _, rel := range rels {
			l := learners.Learner(brokenOutPert{"broken-x" + strconv.FormatFloat(mul, 'g', 3, 64), mul, huber})
			if mul == 1 {
				l = learners.OutputPerturbation{Loss: huber}
			}
			seeds, _ := strconv.Atoi(os.Getenv("SEEDS"))
			seeds = max(seeds, 1)
			caught := 0
			var lbs []string
			for s := range seeds {
				o := auditOptions(rel)
				o.Seed = uint64(26 + s)
				r, err := Run(context.Background(), l, o)
				if err != nil {
					t.Fatal(err)
				}
				if r.Violated {
					caught++
				}
				lbs = append(lbs, strconv.FormatFloat(r.EpsLower, 'f', 2, 64))
				if s == 0 {
					t.Logf("noise rate ×%g: %5d releases: %d fits, %v", mul, rel, r.Fits, r.Wall)
				}
			}
			t.Logf("noise rate ×%g (true ε %g): %5d releases: caught %d of %d seeds; ε_LB %s", mul, mul, rel, caught, seeds, strings.Join(lbs, " "))
		}
	}
}
