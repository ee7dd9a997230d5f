package experiments

// Internals the external tests (package experiments_test) use.
var (
	FormatBytes    = formatBytes
	PhysicalMemory = physicalMemory
)

// Problems returns the validation errors of s, as Load reports them.
func (s *Spec) Problems() []string {
	var out []string
	for _, e := range s.validate() {
		out = append(out, e.path+": "+e.msg)
	}
	return out
}
