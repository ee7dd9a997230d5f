package datasets

import (
	"slices"
	"testing"
)

// TestRealData_AdultMissing reads adult.data under both missing-value
// policies. The counts were measured on the pinned file (sha256 5b00…603d)
// and agree with docs/datasets.md (32,561 records, 2,399 with a '?',
// 30,162 kept by "drop"): '?' appears only in workclass (1,836 records),
// occupation (1,843) and native-country (583). Under "drop" workclass
// also loses its level "Never-worked", whose 7 records all have
// occupation '?'.
func TestRealData_AdultMissing(t *testing.T) {
	dir := realDataDir(t, "adult")
	type col struct {
		levels, missing int // levels, records with '?'
	}
	tests := []struct {
		policy                               string
		records, dropped, missingLvl, dim    int
		workclass, occupation, nativeCountry col
	}{
		{MissingDrop, 30162, 2399, 0, 104, col{7, 0}, col{14, 0}, col{41, 0}},
		{MissingLevel, 32561, 0, 2399, 108, col{9, 1836}, col{15, 1843}, col{42, 583}},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			ds, err := Load("adult", Options{DataDir: dir, Synthetic: SyntheticNever, Missing: tt.policy, Preprocess: Preprocessing{Intercept: true}})
			if err != nil {
				t.Fatal(err)
			}
			n, d := ds.X.Dims()
			if n != tt.records || d != tt.dim+1 {
				t.Errorf("X is %d×%d, want %d×%d", n, d, tt.records, tt.dim+1)
			}
			f := ds.Source.Files[0]
			if f.Records != tt.records || f.Dropped != tt.dropped || f.Read != 32561 || f.MissingLevel != tt.missingLvl || f.Missing != tt.policy {
				t.Errorf("file record = %+v", f)
			}
			tb, _, err := readReal(builtinEntry("adult"), dir, tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				want col
			}{{"workclass", tt.workclass}, {"occupation", tt.occupation}, {"native-country", tt.nativeCountry}} {
				cc := catCol(t, tb, c.name)
				got := col{levels: len(cc.Levels)}
				if k := slices.Index(cc.Levels, "?"); k >= 0 {
					for _, code := range cc.Codes {
						if int(code) == k {
							got.missing++
						}
					}
				}
				if got != c.want {
					t.Errorf("%s: %d levels, %d records with '?'; want %d, %d", c.name, got.levels, got.missing, c.want.levels, c.want.missing)
				}
				if tt.policy == MissingLevel && !slices.Contains(ds.FeatureNames, c.name+"=?") {
					t.Errorf("no one-hot column %s=?", c.name)
				}
			}
			for _, c := range tb.Categorical {
				if c.Name != "workclass" && c.Name != "occupation" && c.Name != "native-country" && slices.Contains(c.Levels, "?") {
					t.Errorf("%s has a '?' level", c.Name)
				}
			}
		})
	}
}
