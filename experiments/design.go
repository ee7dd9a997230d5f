package experiments

// DesignHash returns the SHA-256 of the canonical TOML encoding of the
// resolved spec with its root seed, its secure-noise switch (and the
// acceptance of data-dependent scaling that goes with it) and its source
// cleared: what an experiment computes, on which data, at which profile,
// but not which random draws it makes. Two runs with the same design hash
// estimate the same quantities, so `dprepro check` compares them (bit for
// bit when the seeds match too, else within sampling tolerance); two runs
// whose design hashes differ measure different things and are not compared.
func (s *Spec) DesignHash() string {
	d := *s // a shallow copy: only value fields are changed below
	d.Seed = 0
	d.Output.SecureNoise = false
	d.Data.AcceptDataDependentScaling = false
	d.Source = nil
	return d.Hash()
}
