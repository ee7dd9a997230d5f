package datasets

import (
	"math"
	"slices"
	"testing"
)

// TestRealData_AdultStepwise reproduces the predictor selection of
// Chaudhuri & Vinterbo (NIPS 2013), Section 5, on adult.data with '?'
// kept as a level, against R. The values below are R 4.2.2's, printed by
// scripts/adult-step.R (step(glm(y ~ ., binomial), k = log(n)) and step()
// with the default k = 2) on the pinned adult.data:
//
//	full model: rank 99 (101 coefficients), deviance 20565.02; NA:
//	  education_num, occupationTransport-moving
//	Start:  AIC=21593.72   (BIC; R labels it AIC)
//	Step:   AIC=21593.72   - education_num   (Df 0: aliased)
//	Step:   AIC=21261.55   - native_country
//	Step:   AIC=21241.79   - race
//	kept: age workclass fnlwgt education marital_status occupation
//	  relationship sex capital_gain capital_loss hours_per_week;
//	  rank 54, 55 coefficients, deviance 20680.68
//	AIC (k = 2) kept every term but education_num, rank 99.
//
// Under BIC the paper's "98 predictors" are the full model's 98 estimable
// coefficients besides the intercept; the selection keeps 53 (the paper
// reports 52 without naming its criterion).
func TestRealData_AdultStepwise(t *testing.T) {
	dir := realDataDir(t, "adult")
	ds, err := Load("adult", Options{DataDir: dir, Synthetic: SyntheticNever, Missing: MissingLevel,
		Preprocess: Preprocessing{Intercept: true, Select: SelectStepwiseBIC, Coding: CodingTreatment}})
	if err != nil {
		t.Fatal(err)
	}
	s := ds.Selection
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 0.006 { // R prints 2 decimals
			t.Errorf("%s = %.4f, R %.2f", what, got, want)
		}
	}
	near("start BIC", s.Start, 21593.72)
	wantSteps := []struct {
		attr    string
		bic     float64
		aliased bool
	}{{"education-num", 21593.72, true}, {"native-country", 21261.55, false}, {"race", 21241.79, false}}
	if len(s.Steps) != len(wantSteps) {
		t.Fatalf("steps %+v, want %d", s.Steps, len(wantSteps))
	}
	for i, w := range wantSteps {
		if s.Steps[i].Attribute != w.attr || s.Steps[i].Aliased != w.aliased {
			t.Errorf("step %d: %+v, want %s (aliased %v)", i+1, s.Steps[i], w.attr, w.aliased)
		}
		near("BIC after step "+w.attr, s.Steps[i].Criterion, w.bic)
	}
	wantKept := []string{"age", "workclass", "fnlwgt", "education", "marital-status", "occupation", "relationship", "sex", "capital-gain", "capital-loss", "hours-per-week"}
	if !slices.Equal(s.Kept, wantKept) || !slices.Equal(ds.Preprocess.Columns, wantKept) {
		t.Errorf("kept %v (columns %v), want %v", s.Kept, ds.Preprocess.Columns, wantKept)
	}
	near("final deviance", s.Deviance, 20680.68)
	if s.Rank != 54 || s.Columns != 55 || !slices.Equal(s.Aliased, []string{"occupation=Transport-moving"}) || s.Records != 32561 {
		t.Errorf("rank %d columns %d aliased %v records %d; R: 54, 55, [occupationTransport-moving], 32561", s.Rank, s.Columns, s.Aliased, s.Records)
	}
	// The design: the 54 treatment-coded predictor columns and the
	// constant; every record.
	if n, d := ds.X.Dims(); n != 32561 || d != 55 {
		t.Errorf("X is %d×%d, want 32561×55", n, d)
	}

	aic, err := Load("adult", Options{DataDir: dir, Synthetic: SyntheticNever, Missing: MissingLevel,
		Preprocess: Preprocessing{Intercept: true, Select: SelectStepwiseAIC}})
	if err != nil {
		t.Fatal(err)
	}
	if a := aic.Selection; len(a.Dropped) != 1 || a.Dropped[0] != "education-num" || a.Rank != 99 {
		t.Errorf("AIC dropped %v rank %d; R: [education_num], 99", a.Dropped, a.Rank)
	}
	near("full model deviance (AIC run, after the aliased step)", aic.Selection.Deviance, 20565.02)
}
