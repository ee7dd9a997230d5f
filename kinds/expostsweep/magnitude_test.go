package expostsweep

import (
	"errors"
	"strings"
	"testing"

	"github.com/dprepro/dprepro/experiments"
)

// TestNew_EpsMaxOverflow: a grid whose ε_max = eps_max_factor·E overflows
// float64 at the smallest α is refused when the experiment is built, at
// accuracy_first.eps_max_factor, instead of failing every unit of that α
// after the others ran. Load refuses λ = 1e-300 already
// (experiments.MinMagnitude); a spec changed in code reaches New.
func TestNew_EpsMaxOverflow(t *testing.T) {
	src := strings.Replace(strings.Replace(logisticSpec, "CAL", "paper", 1), "subsample = 3000", "subsample = 3000\nsynthetic = \"always\"", 1)
	s, err := experiments.Parse("spec.toml", []byte(src), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	s.Section.(*Section).AccuracyFirst.Lambda = 1e-300
	_, err = New(s, Options{})
	var se *experiments.SpecError
	if err == nil || !strings.Contains(err.Error(), "accuracy_first.eps_max_factor: dataset magic: ε_max = 4·E = +Inf at the smallest α = 0.05: E overflows float64 (λ = 1e-300)") {
		t.Errorf("error %v", err)
	} else if !errors.As(err, &se) {
		t.Errorf("error %T, want a *SpecError", err)
	}
}
