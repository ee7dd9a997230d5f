package privacy

import (
	"errors"
	"math"
	"testing"
)

func TestCompose(t *testing.T) {
	tests := []struct {
		name    string
		rule    Rule
		gs      []Guarantee
		want    Guarantee
		wantErr error
	}{
		{"empty", Sequential, nil, Guarantee{Notion: Pure}, nil},
		{"pure adds", Sequential, []Guarantee{EpsDP(0.5, ""), EpsDP(0.25, "")}, Guarantee{Notion: Pure, Epsilon: 0.75}, nil},
		{"approx adds", Sequential, []Guarantee{EpsDP(0.5, ""), EpsDeltaDP(0.5, 1e-6, "")}, Guarantee{Notion: Approx, Epsilon: 1, Delta: 1e-6}, nil},
		{"parallel max", Parallel, []Guarantee{EpsDeltaDP(0.5, 1e-6, ""), EpsDeltaDP(0.25, 1e-5, "")}, Guarantee{Notion: Approx, Epsilon: 0.5, Delta: 1e-5}, nil},
		{"rho adds", Sequential, []Guarantee{Rho(0.125, ""), Rho(0.03125, "")}, Guarantee{Notion: ZCDP, Rho: 0.15625}, nil},
		{"non-private wins", Sequential, []Guarantee{EpsDP(1, ""), NonPrivate("")}, Guarantee{Notion: None, Epsilon: math.Inf(1)}, nil},
		{"ex-post", Sequential, []Guarantee{ExPostEps(0.3, ""), EpsDP(0.1, "")}, Guarantee{Notion: ExPost, Epsilon: 0.4}, nil},
		{"mixed refused", Sequential, []Guarantee{Rho(0.1, ""), EpsDP(1, "")}, Guarantee{}, ErrMixed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Compose(tt.rule, "", tt.gs...)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if err == nil && (got.Notion != tt.want.Notion || math.Abs(got.Epsilon-tt.want.Epsilon) > 1e-15 && !math.IsInf(got.Epsilon, 1) || got.Delta != tt.want.Delta || math.Abs(got.Rho-tt.want.Rho) > 1e-15) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if _, err := Compose(Sequential, "", Guarantee{Notion: "bogus"}); err == nil {
		t.Error("an unknown notion composed")
	}
}

// TestToApprox checks Bun & Steinke's conversion at ρ = 0.5, δ = 1e-5:
// ε = 0.5 + 2·√(0.5·ln 1e5) = 0.5 + 2·2.3994… = 5.2988….
func TestToApprox(t *testing.T) {
	g := Rho(0.5, "").ToApprox(1e-5)
	if want := 0.5 + 2*math.Sqrt(0.5*math.Log(1e5)); g.Notion != Approx || math.Abs(g.Epsilon-want) > 1e-12 || g.Delta != 1e-5 {
		t.Errorf("got %+v, want ε=%v", g, want)
	}
}

// TestCompareLevel compares claims with the level (ε = 1, δ as given) at
// the tolerance's edges (relative 1e-9), both ways, and checks what is
// booked: the larger of claim and level.
func TestCompareLevel(t *testing.T) {
	const tol = 1e-9
	for _, c := range []struct {
		name        string
		claim       Guarantee
		delta       float64
		over, under bool
		booked      Guarantee
	}{
		{"exact", EpsDP(1, ""), 0, false, false, EpsDP(1, "")},
		{"rounding above", EpsDP(1+1e-10, ""), 0, false, false, EpsDP(1+1e-10, "")},
		{"rounding below", EpsDP(1-1e-10, ""), 0, false, false, EpsDP(1-1e-10, "")},
		{"over by 1e-8", EpsDP(1+1e-8, ""), 0, true, false, EpsDP(1+1e-8, "")},
		{"under by 1e-8", EpsDP(1-1e-8, ""), 0, false, true, EpsDP(1, "")},
		{"zero for a private level", EpsDP(0, ""), 0, false, true, EpsDP(1, "")},
		{"a hundredth", EpsDP(0.01, ""), 0, false, true, EpsDP(1, "")},
		{"delta for a pure level", EpsDeltaDP(1, 1e-12, ""), 0, true, false, EpsDeltaDP(1, 1e-12, "")},
		{"delta within", EpsDeltaDP(1, 1e-5, ""), 1e-5, false, false, EpsDeltaDP(1, 1e-5, "")},
		{"delta over", EpsDeltaDP(1, 2e-5, ""), 1e-5, true, false, EpsDeltaDP(1, 2e-5, "")},
		{"delta under", EpsDeltaDP(1, 1e-7, ""), 1e-5, false, true, EpsDeltaDP(1, 1e-5, "")},
		{"pure for an approx level", EpsDP(1, ""), 1e-5, false, false, EpsDP(1, "")},
		{"pure and under for an approx level", EpsDP(0.5, ""), 1e-5, false, true, EpsDP(1, "")},
		{"epsilon under, delta over", EpsDeltaDP(0.5, 2e-5, ""), 1e-5, true, true, EpsDeltaDP(1, 2e-5, "")},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := CompareLevel(c.claim, 1, c.delta, tol)
			if v.Over != c.over || v.Under != c.under || v.Differs() != (c.over || c.under) {
				t.Errorf("over %v, under %v; want %v, %v", v.Over, v.Under, c.over, c.under)
			}
			if b := v.Booked; b.Notion != c.booked.Notion || b.Epsilon != c.booked.Epsilon || b.Delta != c.booked.Delta {
				t.Errorf("booked %+v, want %+v", b, c.booked)
			}
		})
	}
	for _, bad := range []Guarantee{NonPrivate(""), ExPostEps(1, ""), Rho(0.5, "")} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("CompareLevel(%v) did not panic", bad)
				}
			}()
			CompareLevel(bad, 1, 0, tol)
		}()
	}
}
