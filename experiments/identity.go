package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// SharedHash returns the identity of what every unit of a run reads, for
// a kind whose units each say what else they read (runner.UnitReader):
// the SHA-256 of the resolved spec as Hash encodes it, but with sec in
// place of the spec's section — the kind's copy of it with the method
// lists and the grids its units are keyed by taken out — and without the
// [[methods]] tables and their files' digests, which are the inputs of
// the units of those methods ([Spec.MethodIdentity]).
func (s *Spec) SharedHash(sec Section) string {
	c := *s
	c.Methods = nil
	c.Section = sec
	b, err := c.Canonical()
	if err != nil {
		panic("experiments: encoding a validated spec: " + err.Error())
	}
	sum := sha256.Sum256(append([]byte("shared\n"), b...))
	return hex.EncodeToString(sum[:])
}

// MethodIdentity returns the identity of the method a spec's units call
// by name: for an external method ([[methods]]), the SHA-256 of its table
// (command, serves, timeout, files) and its files' digests, so that an
// edit of its script recomputes its units; for any other (built-in, or
// registered by the user's module, whose code the build identifies) its
// name. Neither covers the table's params or grid: the kinds add the
// setting each unit runs.
func (s *Spec) MethodIdentity(name string) string {
	for _, m := range s.Methods {
		if m.Name != name || !m.External() {
			continue
		}
		// Its params and grid are not the method's code: a kind adds the
		// setting a unit runs (methods/params.Setting.Canonical), so that a
		// value added to a list recomputes that variant's units alone.
		m.Params, m.Grid = nil, ""
		var b strings.Builder
		if err := toml.NewEncoder(&b).Encode(m); err != nil {
			panic("experiments: encoding a validated method: " + err.Error())
		}
		var files []string
		for _, d := range m.digests {
			files = append(files, d.Path+" "+d.SHA256)
		}
		sort.Strings(files)
		b.WriteString(strings.Join(files, "\n"))
		sum := sha256.Sum256([]byte(b.String()))
		return fmt.Sprintf("external %s sha256 %s", name, hex.EncodeToString(sum[:8]))
	}
	return name
}

// WithSettings returns the method identity id with the values of each
// parameter setting (its canonical "k=v,…", methods/params) appended as
// " params(…)", empty ones skipped: MethodIdentity leaves a method's
// params out, and every kind that keys units by method adds the values
// its unit ran, so that a value added or changed recomputes only the
// units that ran it.
func WithSettings(id string, settings ...string) string {
	for _, c := range settings {
		if c != "" {
			id += " params(" + c + ")"
		}
	}
	return id
}
