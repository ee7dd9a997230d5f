package learnercmp

import (
	"strings"
	"testing"

	"github.com/dprepro/dprepro/methods/learneraudit"
)

// TestLearnerSetting: the spec's learners reach `dprepro audit --learner`
// as the kind runs them: comparison.lambdas before comparison.lambda, the
// ε grid, δ, the loss and row norm, and training sets of (K−1)/K of the
// rows, each said in the setting's Choice; a learner the spec does not
// compare is an error at its key.
func TestLearnerSetting(t *testing.T) {
	s := parse(t, strings.Replace(smallSpec, "lambda = 0.01", "lambda = 0.01\ndelta = 1e-6\nloss = \"huber\"", 1))
	src, ok := s.Section.(learneraudit.Source)
	if !ok {
		t.Fatalf("section %T is not a learneraudit.Source", s.Section)
	}
	from := map[string]string{"objective-perturbation": "(comparison.lambda)", "output-perturbation": "(comparison.lambdas.output-perturbation)"}
	for name, lambda := range map[string]float64{"objective-perturbation": 0.01, "output-perturbation": 0.05} {
		st, err := src.LearnerSetting(s, name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Lambda != lambda || st.Delta != 1e-6 || st.TrainShare != 0.75 || len(st.Epsilons) != 2 ||
			st.Config.Loss != "huber" || st.Config.Table != "comparison" || st.Config.RowNorm != s.Data.RowNorm {
			t.Errorf("%s: %+v", name, st)
		}
		// The audit says why it runs in this setting.
		if !strings.Contains(st.Choice, from[name]) || !strings.Contains(st.Choice, "training sets of 3 of the 4 folds") {
			t.Errorf("%s: choice %q, want it to name %s and the training sets", name, st.Choice, from[name])
		}
	}
	if _, err := src.LearnerSetting(s, "non-private"); err == nil || !strings.Contains(err.Error(), `comparison.learners: the spec does not compare learner "non-private"`) {
		t.Errorf("the reference: err = %v", err)
	}
}
