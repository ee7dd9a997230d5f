package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Serves values of a [[methods]] table: the extension point an external
// method stands behind.
const (
	ServesLearner    = "learner"    // a private learner (cv-tuning, learner-comparison)
	ServesCI         = "ci"         // a confidence-interval method (ci-coverage)
	ServesHypothesis = "hypothesis" // a hypothesis generator (expost-sweep)
)

// ServesValues lists the accepted values of methods[i].serves.
var ServesValues = []string{ServesLearner, ServesCI, ServesHypothesis}

// Grid values of a [[methods]] table: how the variants of its
// list-valued params run.
const (
	GridVariants = "variants" // each variant its own method (the default)
	GridPrivate  = "private"  // selected per fold privately, with λ, by the kind's selectors
	GridOracle   = "oracle"   // the variant best on the test fold: not private
)

// GridValues lists the accepted values of methods[i].grid.
var GridValues = []string{GridVariants, GridPrivate, GridOracle}

// External reports whether the table declares an external method (it has
// a command) rather than setting a registered method's parameters.
func (m MethodSpec) External() bool { return len(m.Command) > 0 }

// DefaultMethodTimeout is the per-call timeout of an external method whose
// table sets none.
const DefaultMethodTimeout = 60 * time.Second

// MethodSpec is one [[methods]] table of a spec: a method served by an
// external command that speaks the worker protocol (docs/worker-protocol.md,
// package external), used by name wherever the spec names a method of the
// kind it serves (tuning.learners, comparison.learners,
// confidence_intervals.methods, accuracy_first.generator):
//
//	[[methods]]
//	name = "py-output-perturbation"         # required; a safe name, not a registered one
//	serves = "learner"                      # required: "learner", "ci" or "hypothesis"
//	command = ["python3", "method.py"]      # required; run in the spec file's directory
//	timeout = "60s"                         # per call (and for the handshake); default 60s
//	files = ["helpers.py"]                  # more files whose digest identifies the method
//	grid = "variants"                       # how lists in params run (below); default "variants"
//	[methods.params]                        # values of the parameters the method declares
//	steps = [50, 100]                       # a list expands into one variant per value
//
// A table without command sets the parameters of a registered method (a
// built-in or a Go extension) of that name instead: name, serves, params
// and grid only.
//
// params sets the parameters the method declares (its hello's
// attributes.params for an external method, methods/params): a value, or
// a list of values, which expands into labelled variants
// ("py-dp-gd[steps=50]", …). grid says how the variants run:
// "variants" (each its own method: curves, rows, ledger entries),
// "private" (a kind that tunes selects among them per fold, privately,
// with λ: the candidate set is λ × variants) or "oracle" (the variant
// best on the test fold, labelled not private).
//
// The run's identity (the spec hash, hence the checkpoint a run resumes)
// covers the SHA-256 of every element of command that names a file relative
// to the spec's directory (the script) and of every file in files: editing
// the method's code starts its runs over rather than mixing old and new
// results.
type MethodSpec struct {
	Name    string   `toml:"name"`
	Serves  string   `toml:"serves"`
	Command []string `toml:"command"`
	Timeout string   `toml:"timeout,omitempty"`
	Files   []string `toml:"files,omitempty"`
	// Grid is how the variants of list-valued params run: GridVariants
	// (empty means that), GridPrivate or GridOracle.
	Grid string `toml:"grid,omitempty"`
	// Params sets the method's declared parameters: name → a value or a
	// list of values (methods/params.Expand).
	Params map[string]any `toml:"params,omitempty"`

	// digests maps each file of the method (command elements that are
	// files, then Files) to its SHA-256, computed by Load.
	digests []MethodFile
}

// MethodFile is one file that identifies an external method and its
// SHA-256.
type MethodFile struct {
	Path   string // as written in the spec
	SHA256 string
}

// CallTimeout returns the per-call timeout (DefaultMethodTimeout when the
// table sets none). The spec is validated, so the value parses.
func (m MethodSpec) CallTimeout() time.Duration {
	if m.Timeout == "" {
		return DefaultMethodTimeout
	}
	d, _ := time.ParseDuration(m.Timeout)
	return d
}

// Digests returns the files that identify the method, with their SHA-256
// (set when the spec was loaded from a file).
func (m MethodSpec) Digests() []MethodFile { return slices.Clone(m.digests) }

// Dir returns the directory an external method's command runs in: the
// directory of the spec file ("" for a spec not read from a file: the
// current directory).
func (s *Spec) Dir() string {
	if s.Source == nil {
		return ""
	}
	return filepath.Dir(s.Source.Path)
}

// Method returns the [[methods]] table named name and whether there is one.
func (s *Spec) Method(name string) (MethodSpec, bool) {
	for _, m := range s.Methods {
		if m.Name == name {
			return m, true
		}
	}
	return MethodSpec{}, false
}

// MethodNames returns the names of the external methods ([[methods]]
// tables with a command) serving serves, in file order.
func (s *Spec) MethodNames(serves string) []string {
	var names []string
	for _, m := range s.Methods {
		if m.Serves == serves && m.External() {
			names = append(names, m.Name)
		}
	}
	return names
}

// MethodIndex returns i such that methods[i] is named name, or -1.
func (s *Spec) MethodIndex(name string) int {
	for i, m := range s.Methods {
		if m.Name == name {
			return i
		}
	}
	return -1
}

// validateMethods checks the [[methods]] tables. Whether a name shadows a
// registered method is the kind section's to check (it knows the
// registries).
func (s *Spec) validateMethods() []fieldErr {
	var errs []fieldErr
	add := func(key, path, format string, args ...any) {
		errs = append(errs, fieldErr{key: key, path: path, msg: fmt.Sprintf(format, args...)})
	}
	seen := map[string]int{}
	for i, m := range s.Methods {
		at := fmt.Sprintf("methods[%d]", i)
		switch {
		case m.Name == "":
			add(at+".name", at+".name", "required")
		case !safeName.MatchString(m.Name):
			add(at+".name", at+".name", "must be a safe name: letters, digits, '-', '_' and '.', starting with a letter or digit (got %q)", m.Name)
		default:
			if j, ok := seen[m.Name]; ok {
				add(at+".name", at+".name", "duplicate method %q (also methods[%d])", m.Name, j)
			}
			seen[m.Name] = i
		}
		if !slices.Contains(ServesValues, m.Serves) {
			if m.Serves == "" {
				add(at+".serves", at+".serves", "required (one of: %s)", strings.Join(ServesValues, ", "))
			} else {
				add(at+".serves", at+".serves", "must be one of %s (got %q)", strings.Join(ServesValues, ", "), m.Serves)
			}
		}
		switch {
		case len(m.Command) > 0 && m.Command[0] == "":
			add(at+".command", at+".command", `the program is empty: want the program and its arguments, e.g. ["python3", "method.py"]`)
		case len(m.Command) == 0 && (m.Timeout != "" || len(m.Files) > 0):
			add(at+".command", at+".command", `required with timeout or files: the program and its arguments, e.g. ["python3", "method.py"] (a table without command sets a registered method's params and grid only)`)
		case len(m.Command) == 0 && len(m.Params) == 0 && m.Grid == "":
			add(at+".command", at+".command", `required: the program and its arguments, e.g. ["python3", "method.py"] (or, to set a registered method's parameters, a [methods.params] table)`)
		}
		if len(m.Command) == 0 && m.Serves != "" && m.Serves != ServesLearner {
			add(at+".command", at+".command", "required: a table without command sets a registered learner's parameters, and no registered %s method declares any", m.Serves)
		}
		if m.Grid != "" && m.Grid != GridVariants && m.Serves != "" && m.Serves != ServesLearner {
			add(at+".grid", at+".grid", "grid = %q: variants run for learners only (a %s method's params take one value each)", m.Grid, m.Serves)
		}
		if m.Grid != "" && !slices.Contains(GridValues, m.Grid) {
			add(at+".grid", at+".grid", "must be one of %s (got %q)%s", strings.Join(GridValues, ", "), m.Grid, Hint(m.Grid, GridValues))
		}
		if m.Timeout != "" {
			if d, err := time.ParseDuration(m.Timeout); err != nil || d <= 0 {
				add(at+".timeout", at+".timeout", `must be a positive duration such as "30s" or "5m" (got %q)`, m.Timeout)
			}
		}
		for k, f := range m.Files {
			if f == "" {
				add(at+".files", fmt.Sprintf("%s.files[%d]", at, k), "empty path")
			}
		}
	}
	return errs
}

// Server is implemented by a Section whose kind runs external methods: it
// lists the serves values ([ServesLearner], …) the kind uses. A spec whose
// [[methods]] serve something its kind does not use is refused.
type Server interface {
	Serves() []string
}

// validateServes refuses [[methods]] tables that the spec's kind cannot
// use.
func (s *Spec) validateServes() []fieldErr {
	var uses []string
	if sv, ok := s.Section.(Server); ok {
		uses = sv.Serves()
	}
	var errs []fieldErr
	for i, m := range s.Methods {
		if !slices.Contains(ServesValues, m.Serves) || slices.Contains(uses, m.Serves) {
			continue
		}
		at := fmt.Sprintf("methods[%d].serves", i)
		what := "no external methods"
		if len(uses) > 0 {
			what = "external methods serving " + strings.Join(uses, ", ")
		}
		errs = append(errs, fieldErr{key: at, path: at, msg: fmt.Sprintf("a %s spec runs %s, not %q", s.Kind, what, m.Serves)})
	}
	return errs
}

// digestMethods computes the digests of every method's files (see
// MethodSpec), relative to the spec's directory. A file listed in files
// that cannot be read is an error; a command element that is not a file
// (a program on $PATH, a flag) is not digested.
func (s *Spec) digestMethods() []fieldErr {
	var errs []fieldErr
	dir := s.Dir()
	for i := range s.Methods {
		m := &s.Methods[i]
		m.digests = nil
		for k, arg := range m.Command {
			if k == 0 && !strings.ContainsRune(arg, filepath.Separator) && !strings.ContainsRune(arg, '/') {
				continue // a program looked up on $PATH
			}
			p := arg
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				continue
			}
			sum, err := fileSHA256(p)
			if err != nil {
				at := fmt.Sprintf("methods[%d].command", i)
				errs = append(errs, fieldErr{key: at, path: fmt.Sprintf("%s[%d]", at, k), msg: err.Error()})
				continue
			}
			m.digests = append(m.digests, MethodFile{Path: arg, SHA256: sum})
		}
		for k, f := range m.Files {
			if f == "" {
				continue
			}
			p := f
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			sum, err := fileSHA256(p)
			if err != nil {
				at := fmt.Sprintf("methods[%d].files", i)
				errs = append(errs, fieldErr{key: at, path: fmt.Sprintf("%s[%d]", at, k), msg: fmt.Sprintf("cannot read %s: %v", p, err)})
				continue
			}
			m.digests = append(m.digests, MethodFile{Path: f, SHA256: sum})
		}
	}
	return errs
}

// methodsIdentity is the text that Hash appends to the canonical spec for
// the digests of the external methods' files ("" when there are none, so
// that specs without external methods keep their hash).
func (s *Spec) methodsIdentity() string {
	var lines []string
	for _, m := range s.Methods {
		for _, d := range m.digests {
			lines = append(lines, fmt.Sprintf("%s %s %s", m.Name, d.Path, d.SHA256))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	sort.Strings(lines)
	return "\n# external method files\n" + strings.Join(lines, "\n") + "\n"
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// VariedMethods returns the names of the [[methods]] tables (external or
// registered) serving serves whose params give a list for some parameter:
// the rows label such a method "name[param=value,…]" per variant
// (methods/params.Label), or "name[grid=private]" / "name[grid=oracle]"
// for a grid selected per fold — never "name".
func (s *Spec) VariedMethods(serves string) []string {
	var out []string
	for _, m := range s.Methods {
		if m.Serves != serves || m.Name == "" {
			continue
		}
		for _, v := range m.Params {
			if _, list := v.([]any); list {
				out = append(out, m.Name)
				break
			}
		}
	}
	return out
}

// WithMethods returns the names a spec may use for a method of an
// extension point: the registered names followed by those of the
// [[methods]] tables serving serves. A table whose name is a registered
// one is reported to p (an external method may not shadow a registered
// method).
func (s *Spec) WithMethods(p *Problems, serves string, registered []string) []string {
	known := slices.Clone(registered)
	for i, m := range s.Methods {
		if m.Serves != serves || m.Name == "" {
			continue
		}
		if !m.External() {
			if !slices.Contains(registered, m.Name) {
				p.At(fmt.Sprintf("methods[%d].name", i), "a table without command sets a registered %s method's parameters, and %s", serves, Unknown(serves+" method", m.Name, registered))
			}
			continue
		}
		if slices.Contains(registered, m.Name) {
			p.At(fmt.Sprintf("methods[%d].name", i), "%q is the name of a registered %s method: an external method may not shadow it; give it another name", m.Name, serves)
			continue
		}
		known = append(known, m.Name)
	}
	return known
}
