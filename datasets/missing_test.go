package datasets

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// missingRows are adult records: the first six are testdata/adult_ok.data
// (lines 3 and 5 hold '?' in categorical fields), then a '?' in a numeric
// field (age) and one in the label.
const missingRows = `39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K
50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, <=50K
54, ?, 180211, Some-college, 10, Married-civ-spouse, ?, Husband, Asian-Pac-Islander, Male, 0, 0, 60, South, >50K
31, Private, 45781, Masters, 14, Never-married, Prof-specialty, Not-in-family, White, Female, 14084, 0, 50, United-States, >50K
40, Private, 121772, Assoc-voc, 11, Married-civ-spouse, Craft-repair, Husband, Asian-Pac-Islander, Male, 0, 0, 40, ?, >50K
42, Private, 159449, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 5178, 0, 40, United-States, >50K
?, Private, 1, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 40, United-States, >50K
44, ?, 2, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 40, United-States, ?
`

func TestParse_MissingPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		policy                               string
		records, dropped, read, missingLvl   int
		wantMissing                          string
		workclass, occupation, nativeCountry []string
		ages                                 []float64
	}{
		// "" is the default, "drop": every record with a '?' goes (4 of 8 kept).
		{"", 4, 4, 8, 0, MissingDrop,
			[]string{"Private", "Self-emp-not-inc", "State-gov"},
			[]string{"Adm-clerical", "Exec-managerial", "Prof-specialty"},
			[]string{"United-States"}, []float64{39, 50, 31, 42}},
		{MissingDrop, 4, 4, 8, 0, MissingDrop,
			[]string{"Private", "Self-emp-not-inc", "State-gov"},
			[]string{"Adm-clerical", "Exec-managerial", "Prof-specialty"},
			[]string{"United-States"}, []float64{39, 50, 31, 42}},
		// "level": records 3 and 5 are kept with '?' as a level ('?' sorts
		// before the letters); the '?' age (record 7) and the '?' label
		// (record 8) still drop their records.
		{MissingLevel, 6, 2, 8, 2, MissingLevel,
			[]string{"?", "Private", "Self-emp-not-inc", "State-gov"},
			[]string{"?", "Adm-clerical", "Craft-repair", "Exec-managerial", "Prof-specialty"},
			[]string{"?", "South", "United-States"}, []float64{39, 50, 54, 31, 40, 42}},
	}
	for _, tt := range tests {
		t.Run("missing="+tt.policy, func(t *testing.T) {
			tb, rec, err := adultFormat.parse(strings.NewReader(missingRows), "mem.data", 0, tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Records != tt.records || rec.Dropped != tt.dropped || rec.Read != tt.read || rec.MissingLevel != tt.missingLvl || rec.Missing != tt.wantMissing {
				t.Errorf("file record = %+v, want records %d, dropped %d, read %d, missing level %d, policy %q",
					rec, tt.records, tt.dropped, tt.read, tt.missingLvl, tt.wantMissing)
			}
			for _, c := range []struct {
				name string
				want []string
			}{{"workclass", tt.workclass}, {"occupation", tt.occupation}, {"native-country", tt.nativeCountry}} {
				if got := catCol(t, tb, c.name).Levels; !slices.Equal(got, c.want) {
					t.Errorf("%s levels = %q, want %q", c.name, got, c.want)
				}
			}
			wantFloats(t, "age", numCol(t, tb, "age"), tt.ages)
			if wc := catCol(t, tb, "workclass"); tt.policy == MissingLevel && wc.Levels[wc.Codes[2]] != "?" {
				t.Errorf("record 3's workclass = %q, want \"?\"", wc.Levels[wc.Codes[2]])
			}
		})
	}
}

// TestParse_MissingIgnored: a format without a missing marker records no
// policy and parses the same under both.
func TestParse_MissingIgnored(t *testing.T) {
	t.Parallel()
	const rows = "1,2,3,4,5,6,7,8,9,10,g\n1,2,3,4,5,6,7,8,9,10,h\n"
	for _, policy := range MissingPolicies {
		tb, rec, err := magicFormat.parse(strings.NewReader(rows), "mem.data", 0, policy)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Missing != "" || rec.Read != 0 || rec.Records != 2 || tb.missingLevel != "" {
			t.Errorf("%s: file record = %+v, missing level %q; want no policy, 2 records", policy, rec, tb.missingLevel)
		}
	}
}

func TestLoad_MissingBadValue(t *testing.T) {
	t.Parallel()
	_, err := Load("adult", Options{Synthetic: SyntheticAlways, Missing: "keep"})
	if err == nil || !strings.Contains(err.Error(), `missing: unknown value "keep" (want "drop", "level")`) {
		t.Errorf("err = %v", err)
	}
}

// TestLoad_MissingSynthetic: the stand-in of adult has no missing values;
// under "level" it says so in its parameters (its identity), stays
// labelled synthetic and has the same columns as under "drop".
func TestLoad_MissingSynthetic(t *testing.T) {
	t.Parallel()
	drop, err := Load("adult", Options{Synthetic: SyntheticAlways, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	level, err := Load("adult", Options{Synthetic: SyntheticAlways, Seed: 7, Missing: MissingLevel})
	if err != nil {
		t.Fatal(err)
	}
	if level.Source.Kind != KindSynthetic || !strings.HasPrefix(level.Source.String(), "SYNTHETIC") {
		t.Errorf("source = %v", level.Source)
	}
	if _, ok := drop.Source.Params["missing"]; ok {
		t.Errorf("drop: params = %v, want no \"missing\"", drop.Source.Params)
	}
	if got := level.Source.Params["missing"]; !strings.Contains(got, "no missing values") {
		t.Errorf("level: params[missing] = %q", got)
	}
	if !slices.Equal(drop.FeatureNames, level.FeatureNames) {
		t.Errorf("feature names differ: %q vs %q", drop.FeatureNames, level.FeatureNames)
	}
}

// TestPublic_MissingLevelUndeclared: under "level" with public scaling a
// '?' level the domain does not declare is refused, naming data.missing
// and the columns; declared, it gets its one-hot column.
func TestPublic_MissingLevelUndeclared(t *testing.T) {
	t.Parallel()
	tb, _, err := adultFormat.parse(strings.NewReader(missingRows), "mem.data", 0, MissingLevel)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := Lookup("adult")
	p := Preprocessing{Scaling: ScalingPublic, Domain: *e.Domain, Intercept: true}
	_, _, _, _, err = p.encode(tb, TaskClassification)
	if err == nil || !strings.Contains(err.Error(), `data.missing = "level" keeps "?" as a level of workclass, occupation, native-country`) {
		t.Fatalf("err = %v", err)
	}
	var oe *OverflowError
	if errors.As(err, &oe) {
		t.Errorf("err is an OverflowError: %v", err)
	}
	dom := e.Domain.Clone()
	for _, a := range []string{"workclass", "occupation", "native-country"} {
		dom.Levels[a] = append(dom.Levels[a], "?")
	}
	p.Domain = dom
	_, _, names, info, err := p.encode(tb, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"workclass=?", "occupation=?", "native-country=?"} {
		if !slices.Contains(names, want) {
			t.Errorf("no column %s in %q", want, names)
		}
	}
	if info.OutOfDomain != 0 {
		t.Errorf("%d levels out of domain, want 0", info.OutOfDomain)
	}
}
