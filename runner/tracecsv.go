package runner

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/dprepro/dprepro/core/mech"
	"github.com/dprepro/dprepro/results"
)

// TraceFile is the privacy trace a run writes beside its rows with
// Options.TracePrivacy (run --trace-privacy).
const TraceFile = "privacy-trace.csv"

// TraceColumns is the schema of TraceFile: one row per release, in the
// order of mech.Trace.Releases (unit, stream, instance, order of
// drawing), with what the release site recorded (mechanism to
// guarantee), what the trace added (the unit, the stream, the scope, the
// records), and what the draws show: whether every bit came from
// crypto/rand (secure), whether every noise draw used a floating-point-
// safe construction (float_safe), how many noise draws the samplers of
// core/mech noted (draws) and at which scales (drawn, ";"-separated, in
// the units of scale: a release whose drawn scales are not its scale or
// scales was drawn at a scale it does not record), and a digest of the
// stream's bits (two releases with equal digests replayed the same
// bits). scales lists a noise-reduction chain's levels. A declared
// release ("declared-by:NAME") is a method's own word: scale NaN, no
// draws. instance numbers the generators opened on the stream in the
// process (0 the first; on a stream several units share on purpose its
// order may vary with the worker count).
var TraceColumns = []string{"unit", "stream", "instance", "shared", "what", "dataset", "part", "records",
	"mechanism", "scale", "scales", "sensitivity", "dim", "notion", "epsilon", "delta", "rho",
	"secure", "float_safe", "draws", "drawn", "digest"}

// EncodeTrace encodes releases as TraceFile.
func EncodeTrace(rs []mech.Release) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(TraceColumns)
	floats := func(xs []float64) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = results.FormatFloat(x)
		}
		return strings.Join(s, ";")
	}
	for _, r := range rs {
		g := r.Guarantee
		w.Write([]string{r.Unit, r.Stream, strconv.Itoa(r.Instance), strconv.FormatBool(r.Shared), r.What,
			r.Data.Dataset, r.Data.Part, strconv.Itoa(r.Data.N),
			r.Mechanism, results.FormatFloat(r.Scale), floats(r.Scales), results.FormatFloat(r.Sensitivity), strconv.Itoa(r.Dim),
			string(g.Notion), results.FormatFloat(g.Epsilon), results.FormatFloat(g.Delta), results.FormatFloat(g.Rho),
			strconv.FormatBool(r.Secure), strconv.FormatBool(r.FloatSafe), strconv.Itoa(r.Draws), floats(r.Drawn),
			fmt.Sprintf("%016x", r.Digest)})
	}
	w.Flush()
	return b.Bytes(), w.Error()
}
