package experiments

// Internals the external tests (package experiments_test) use.
var (
	FormatBytes    = formatBytes
	PhysicalMemory = physicalMemory
)

// RuntimeBytes is the fixed part of every memory estimate.
const RuntimeBytes = runtimeBytes

// ScaledTerms returns the estimate of a run with the given workers and its
// terms as counted in it, largest first.
func (s *Spec) ScaledTerms(workers int) (float64, []MemTerm) { return s.scaledTerms(workers) }

// Problems returns the validation errors of s, as Load reports them.
func (s *Spec) Problems() []string {
	var out []string
	for _, e := range s.validate() {
		out = append(out, e.path+": "+e.msg)
	}
	return out
}
