package cvtune

import "github.com/dprepro/dprepro/methods/registry"

// ErrBadName is returned by [RegisterLearner] and [RegisterSelector] for a
// nil value or a name that breaks the registries' one name rule
// (registry.CheckName).
var ErrBadName = registry.ErrBadName

// ErrDuplicate is returned by [RegisterLearner] and [RegisterSelector] for
// a name that is already registered (built-in names included).
var ErrDuplicate = registry.ErrDuplicate
