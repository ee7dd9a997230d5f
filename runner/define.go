package runner

import (
	"context"

	"github.com/dprepro/dprepro/experiments"
)

// KindDef is a [Kind] defined by its three parts, so that a kind writes
// only what is its own: its name, its section's defaults and its
// constructor. A kind with optional hooks (AcrossKind, Auditor) embeds
// it in its own type and adds them. See examples/kind-example for the
// minimum a new experiment kind needs.
type KindDef[S experiments.Section] struct {
	// KindName is the spec's kind value, e.g. "cv-tuning": a safe file
	// name. Required.
	KindName string
	// Defaults returns the kind's section with its defaults: a new
	// value on every call (the spec's table is decoded into it).
	// Required.
	Defaults func() S
	// Build builds the experiment of a resolved, validated spec of the
	// kind and its section, loading data as data says (see Kind.New).
	// Required.
	Build func(spec *experiments.Spec, sec S, data DataOptions) (Experiment, error)
	// Pairs, when not empty, are the rows.csv columns that identify a
	// replicate at one dataset and x across methods (e.g. rep and fold):
	// the kind is then a [Pairer], and claims comparing two methods are
	// decided on paired differences. Empty: unpaired.
	Pairs []string
}

// Name implements Kind.
func (k KindDef[S]) Name() string { return k.KindName }

// NewSection implements Kind.
func (k KindDef[S]) NewSection() experiments.Section { return k.Defaults() }

// PairKey implements Pairer: Pairs.
func (k KindDef[S]) PairKey() []string { return k.Pairs }

// New implements Kind: spec's section as S ([SectionOf]), then Build.
func (k KindDef[S]) New(spec *experiments.Spec, data DataOptions) (Experiment, error) {
	sec, err := SectionOf[S](spec, k.KindName)
	if err != nil {
		return nil, err
	}
	return k.Build(spec, sec, data)
}

// Begin is the start of every RunUnit: u as the kind's unit type U
// ([As]), unless the run was cancelled (ctx's error), so that a unit
// handed out after an interrupt does no work.
func Begin[U Unit](ctx context.Context, u Unit) (U, error) {
	v, err := As[U](u)
	if err != nil {
		return v, err
	}
	if err := ctx.Err(); err != nil {
		return v, err
	}
	return v, nil
}
