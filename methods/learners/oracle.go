package learners

import (
	"fmt"
	"maps"

	"github.com/dprepro/dprepro/methods/params"
	"github.com/dprepro/dprepro/results"
)

// OracleRow is the row of an oracle over a learner's variants
// (a [[methods]] table's grid = "oracle") from its variants' rows of one
// unit, in the variants' order (settings): the variant with the highest
// test AUC (the first of ties) — chosen by looking at the test fold, so
// the release is not private with respect to it: private is false and
// the status says so. method and learner are the oracle's labels,
// setting names the chosen variant, and each column of sum (e.g.
// fit_seconds, fits) is summed over every variant's row: each was fit,
// to be chosen among. Both learner kinds use it.
func OracleRow(rows []results.Row, method, learner string, settings []params.Setting, sum ...string) results.Row {
	best := 0
	for i, r := range rows {
		if r.Float("auc") > rows[best].Float("auc") {
			best = i
		}
	}
	r := maps.Clone(rows[best])
	for _, col := range sum {
		total := 0.0
		for _, x := range rows {
			total += x.Float(col)
		}
		r.SetFloat(col, total)
	}
	r.Set("method", method)
	r.Set("learner", learner)
	r.Set("setting", settings[best].Label)
	r.Set("private", "false")
	note := fmt.Sprintf("oracle: %s has the highest test AUC of %d variants; the choice reads the test fold, so the release is not private", rows[best]["learner"], len(rows))
	if st := rows[best]["status"]; st == "ok" {
		r.Set("status", RowStatus(note))
	} else {
		r.Set("status", st+statusSep+note)
	}
	return r
}
