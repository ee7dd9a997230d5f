package experiments_test

import (
	"errors"
	"strings"
	"testing"

	. "github.com/dprepro/dprepro/experiments"
)

// publicSpec is goodSpec with public scaling on magic and a declared
// range over the registry's documented domain.
var publicSpec = strings.Replace(goodSpec, "[data]\ndatasets = [\"magic\"]\n",
	"[data]\ndatasets = [\"magic\"]\nscaling = \"public\"\n\n[data.bounds.magic]\nfSize = [1, 5]\n", 1)

func TestScaling_Keys(t *testing.T) {
	withDatasets(t)
	s, err := Parse("public.toml", []byte(publicSpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if !s.PublicScaling() || s.DataDependentScaling() || s.ScalingStatement() != StatementPublic {
		t.Errorf("public spec: public %v, data-dependent %v, %q", s.PublicScaling(), s.DataDependentScaling(), s.ScalingStatement())
	}
	d := s.Domain("magic")
	if r := d.Ranges["fSize"]; r.Lo != 1 || r.Hi != 5 || d.Sources["fSize"] != "declared in the spec" {
		t.Errorf("fSize: %v (%s), want the spec's [1, 5]", r, d.Sources["fSize"])
	}
	if r := d.Ranges["fAlpha"]; r.Lo != 0 || r.Hi != 90 {
		t.Errorf("fAlpha: %v, want the registry's [0, 90]", r)
	}
	g, err := Parse("good.toml", []byte(goodSpec), "", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if g.PublicScaling() || !g.DataDependentScaling() || g.ScalingStatement() != StatementDataDependent {
		t.Errorf("default spec: public %v, data-dependent %v, %q", g.PublicScaling(), g.DataDependentScaling(), g.ScalingStatement())
	}
	if got, want := StatementDataDependent, "data-dependent scaling: ε holds for the scaled rows only"; got != want {
		t.Errorf("statement %q, want %q", got, want)
	}
	if got, want := StatementPublic, "public bounds: ε holds for the raw records"; got != want {
		t.Errorf("statement %q, want %q", got, want)
	}
	// Writing the default explicitly is the default.
	e, err := Parse("good.toml", []byte(strings.Replace(goodSpec, "[data]\n", "[data]\nscaling = \"data-dependent\"\n", 1)), "", testKinds)
	if err != nil || e.PublicScaling() {
		t.Errorf("explicit data-dependent: %v, public %v", err, e != nil && e.PublicScaling())
	}
}

func TestScaling_Errors(t *testing.T) {
	withDatasets(t)
	cases := []struct {
		name, src, want string
	}{
		{"unknown mode", strings.Replace(goodSpec, "[data]\n", "[data]\nscaling = \"publik\"\n", 1),
			`bad.toml:7: data.scaling: must be one of data-dependent, public (got "publik")`},
		{"bounds without public scaling", strings.Replace(publicSpec, "scaling = \"public\"\n", "", 1),
			`bad.toml:9: data.bounds: declared bounds are used only with scaling = "public"`},
		{"row bound without public scaling", strings.Replace(goodSpec, "[data]\n", "[data]\nrow_norm_bound = 2.0\n", 1),
			`bad.toml:7: data.row_norm_bound: used only with scaling = "public"`},
		{"row bound with l2-clip", strings.Replace(publicSpec, "scaling = \"public\"\n", "scaling = \"public\"\nrow_norm = \"l2-clip\"\nrow_norm_bound = 2.0\n", 1),
			`bad.toml:10: data.row_norm_bound: used only with row_norm = "l2-max" or "l1-max" (got "l2-clip")`},
		{"zscore", strings.Replace(publicSpec, "scaling = \"public\"\n", "scaling = \"public\"\ncolumn_scale = \"zscore\"\n", 1),
			`bad.toml:9: data.column_scale: "zscore" takes a statistic of the data`},
		{"empty range", strings.Replace(publicSpec, "fSize = [1, 5]", "fSize = [5, 1]", 1),
			`bad.toml:11: data.bounds.magic.fSize: want [lo, hi], finite, lo < hi (got [5 1])`},
		{"three numbers", strings.Replace(publicSpec, "fSize = [1, 5]", "fSize = [1, 5, 7]", 1),
			`bad.toml:11: data.bounds.magic.fSize: want [lo, hi]`},
		{"bounds of another dataset", strings.Replace(publicSpec, "[data.bounds.magic]", "[data.bounds.adult]", 1),
			`bad.toml:10: data.bounds.adult: "adult" is not in data.datasets`},
		{"repeated level", strings.Replace(publicSpec, "fSize = [1, 5]\n", "\n[data.levels.magic]\nclass = [\"g\", \"g\"]\n", 1),
			`bad.toml:13: data.levels.magic.class[1]: empty or repeated level "g"`},
		{"accepting with public scaling", strings.Replace(publicSpec, "scaling = \"public\"\n", "scaling = \"public\"\naccept_data_dependent_scaling = true\n", 1),
			`bad.toml:9: data.accept_data_dependent_scaling: only with data-dependent scaling`},
		{"secure noise in the file", goodSpec + "\n[output]\nsecure_noise = true\n",
			`bad.toml:22: output.secure_noise: secure noise refuses data-dependent scaling: the column and row scale factors and the one-hot levels are computed from the private records`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.toml", []byte(c.src), "", testKinds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse: %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// TestCheckSecureNoise: secure noise set after loading (as --secure-noise
// does) is refused on data-dependent scaling, at data.scaling, unless the
// spec accepts it; public scaling needs nothing.
func TestCheckSecureNoise(t *testing.T) {
	withDatasets(t)
	for _, c := range []struct {
		name, src string
		refused   bool
	}{
		{"data-dependent", goodSpec, true},
		{"accepted", strings.Replace(goodSpec, "[data]\n", "[data]\naccept_data_dependent_scaling = true\n", 1), false},
		{"public", publicSpec, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("s.toml", []byte(c.src), "", testKinds)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.CheckSecureNoise(); err != nil {
				t.Fatalf("without secure noise: %v", err)
			}
			s.Output.SecureNoise = true
			err = s.CheckSecureNoise()
			var se *SpecError
			switch {
			case !c.refused && err != nil:
				t.Errorf("refused: %v", err)
			case c.refused && (!errors.Is(err, ErrDataDependentScaling) || !errors.As(err, &se) || se.Where != "s.toml:6" || se.Path != "data.scaling"):
				t.Errorf("CheckSecureNoise() = %v, want ErrDataDependentScaling at s.toml:6 data.scaling", err)
			}
		})
	}
}
