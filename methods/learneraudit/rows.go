package learneraudit

import "github.com/dprepro/dprepro/results"

// Columns is the schema of an audit.csv, the file `dprepro audit
// --learner` writes and the one a learner-comparison run with
// [comparison.audit] writes beside rows.csv (which prefixes the run's own
// columns: experiment, dataset, method): one row per neighbouring pair,
// the pair's event, counts and bound, then the audit's claim, bound and
// verdict (repeated on each pair's row).
var Columns = []string{
	"learner", "epsilon", "delta", "lambda", "n", "d",
	"pair", "releases", "select", "measure", "event", "threshold", "k0", "k1", "p0_lower", "p1_upper",
	"pair_epsilon_lower", "pair_epsilon_point", "pair_confidence", "pair_verdict",
	"claimed_epsilon", "claimed_delta", "epsilon_lower", "confidence", "verdict", "fits", "declared_by", "what",
}

// Rows returns rep's rows in the [Columns] schema, the level and shape
// from o (the options rep was run with).
func Rows(rep Report, o Options) []results.Row {
	var rows []results.Row
	for _, pr := range rep.Pairs {
		res := pr.Result
		r := results.Row{}
		r.Set("learner", rep.Learner)
		r.SetFloat("epsilon", o.Level.Epsilon)
		r.SetFloat("delta", o.Level.Delta)
		r.SetFloat("lambda", o.Lambda)
		r.SetInt("n", o.N)
		r.SetInt("d", o.D)
		r.Set("pair", pr.Pair)
		r.SetInt("releases", rep.Releases)
		r.SetInt("select", rep.Releases-res.N)
		r.SetInt("measure", res.N)
		r.Set("event", res.Event.String())
		r.SetFloat("threshold", res.Event.T)
		r.SetInt("k0", res.K0)
		r.SetInt("k1", res.K1)
		r.SetFloat("p0_lower", res.P0Lo)
		r.SetFloat("p1_upper", res.P1Hi)
		r.SetFloat("pair_epsilon_lower", res.EpsLower)
		r.SetFloat("pair_epsilon_point", res.EpsPoint)
		r.SetFloat("pair_confidence", pr.Confidence)
		pv := "consistent with the claim"
		if res.Violated {
			pv = "claim violated"
		}
		r.Set("pair_verdict", pv)
		r.SetFloat("claimed_epsilon", rep.Claim.Epsilon)
		r.SetFloat("claimed_delta", rep.Claim.Delta)
		r.SetFloat("epsilon_lower", rep.EpsLower)
		r.SetFloat("confidence", rep.Confidence)
		r.Set("verdict", rep.Verdict())
		r.SetInt("fits", rep.Fits)
		r.Set("declared_by", rep.Declared)
		r.Set("what", pr.What)
		rows = append(rows, r)
	}
	return rows
}
