package results

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/dprepro/dprepro/core/privacy"
)

// TestNewCharge: each notion's fields, as manifest.json writes them, and
// back.
func TestNewCharge(t *testing.T) {
	for _, c := range []struct {
		name string
		g    privacy.Guarantee
		want string
	}{
		{"pure", privacy.EpsDP(0.5, "x"), `{"part":"p","release":"r","data":"D","notion":"pure-dp","epsilon":0.5,"delta":0,"private":true}`},
		{"approx", privacy.EpsDeltaDP(0.5, 1e-6, "x"), `{"part":"p","release":"r","data":"D","notion":"approx-dp","epsilon":0.5,"delta":1e-06,"private":true}`},
		{"zcdp", privacy.Rho(0.125, "x"), `{"part":"p","release":"r","data":"D","notion":"zcdp","epsilon":"nan","delta":0,"rho":0.125,"private":true}`},
		{"zcdp, ρ = 0", privacy.Rho(0, "x"), `{"part":"p","release":"r","data":"D","notion":"zcdp","epsilon":"nan","delta":0,"rho":0,"private":true}`},
		{"ex-post", privacy.ExPostEps(0.3, "x"), `{"part":"p","release":"r","data":"D","notion":"ex-post","epsilon":0.3,"delta":0,"private":true}`},
		{"not private", privacy.NonPrivate("x"), `{"part":"p","release":"r","data":"D","notion":"none","epsilon":"inf","delta":0,"private":false}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := NewCharge("p", "r", "D", c.g)
			b, err := json.Marshal(ch)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("got  %s\nwant %s", b, c.want)
			}
			var back LedgerCharge
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.Notion != ch.Notion || (back.Rho == nil) != (ch.Rho == nil) || (ch.Rho != nil && *back.Rho != *ch.Rho) ||
				!(back.Epsilon == ch.Epsilon || math.IsNaN(float64(back.Epsilon)) && math.IsNaN(float64(ch.Epsilon))) {
				t.Errorf("round trip %+v, want %+v", back, ch)
			}
			if tot := NewTotal(c.g); tot.Notion != ch.Notion || tot.Private != ch.Private || (tot.Rho == nil) != (ch.Rho == nil) {
				t.Errorf("NewTotal %+v disagrees with NewCharge %+v", tot, ch)
			}
		})
	}
}
