package learnercmp

import (
	"strings"
	"testing"

	"github.com/dprepro/dprepro/methods/learneraudit"
)

// TestLearnerSetting: the spec's learners reach `dprepro audit --learner`
// as the kind runs them: comparison.lambdas before comparison.lambda, the
// ε grid, δ, the loss and row norm, and training sets of (K−1)/K of the
// rows; a learner the spec does not compare is an error at its key.
func TestLearnerSetting(t *testing.T) {
	s := parse(t, strings.Replace(smallSpec, "lambda = 0.01", "lambda = 0.01\ndelta = 1e-6\nloss = \"huber\"", 1))
	src, ok := s.Section.(learneraudit.Source)
	if !ok {
		t.Fatalf("section %T is not a learneraudit.Source", s.Section)
	}
	for name, lambda := range map[string]float64{"objective-perturbation": 0.01, "output-perturbation": 0.05} {
		st, err := src.LearnerSetting(s, name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Lambda != lambda || st.Delta != 1e-6 || st.TrainShare != 0.75 || len(st.Epsilons) != 2 ||
			st.Config.Loss != "huber" || st.Config.Table != "comparison" || st.Config.RowNorm != s.Data.RowNorm {
			t.Errorf("%s: %+v", name, st)
		}
	}
	if _, err := src.LearnerSetting(s, "non-private"); err == nil || !strings.Contains(err.Error(), `comparison.learners: the spec does not compare learner "non-private"`) {
		t.Errorf("the reference: err = %v", err)
	}
}
