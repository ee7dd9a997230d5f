package experiments

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// builtin holds the spec files of this directory, compiled into every
// binary, so that `dprepro reproduce`, `audit` and `run ID` work from any
// directory.
//
//go:embed *.toml
var builtin embed.FS

// BuiltinPrefix starts the SourceInfo.Path of a spec loaded from the
// built-in copy, e.g. "builtin:experiments/cv13-magic.toml".
const BuiltinPrefix = "builtin:experiments/"

// BuiltinFiles returns the names of the built-in spec files, sorted.
func BuiltinFiles() []string {
	names, _ := fs.Glob(builtin, "*.toml")
	sort.Strings(names)
	return names
}

// LoadBuiltin loads the built-in spec named by its id or file name (with or
// without .toml) at the named profile, with the experiment kinds kinds
// (see [Parse]).
func LoadBuiltin(name, profile string, kinds Kinds) (*Spec, error) {
	return LoadBuiltinWith(name, profile, kinds, LoadOptions{})
}

// LoadBuiltinWith is [LoadBuiltin] with the changes of o applied to the
// chosen profile (see [LoadOptions]).
func LoadBuiltinWith(name, profile string, kinds Kinds, o LoadOptions) (*Spec, error) {
	file := strings.TrimSuffix(path.Base(name), ".toml") + ".toml"
	src, err := builtin.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("spec: no built-in spec %q (built in: %s)%s", name, strings.Join(BuiltinIDs(), ", "), Hint(name, BuiltinIDs()))
	}
	return ParseWith(BuiltinPrefix+file, src, profile, kinds, o)
}

// BuiltinIDs returns the ids of the built-in specs (their file names
// without .toml), sorted.
func BuiltinIDs() []string {
	var ids []string
	for _, f := range BuiltinFiles() {
		ids = append(ids, strings.TrimSuffix(f, ".toml"))
	}
	return ids
}

// IsBuiltin reports whether name is the id or file name of a built-in spec.
func IsBuiltin(name string) bool {
	_, err := builtin.ReadFile(strings.TrimSuffix(name, ".toml") + ".toml")
	return err == nil && !strings.ContainsAny(name, `/\`)
}
