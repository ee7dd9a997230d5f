package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// LoadOptions change a spec for one run without editing its file
// (`dprepro run --set`, `--only`): applied after the profile, validated
// like the file, and recorded — the run's profile becomes
// "<profile>.set-<h>" (h: 8 hex digits of the SHA-256 of the options), so
// it never shares a folder with, nor is checked against, the runs of the
// file as written, and the manifest lists the options (Spec.Overrides).
type LoadOptions struct {
	// Set are assignments "key=value": a dotted key of the spec
	// ("tuning.epsilons", "cv.folds") and a TOML value ("[0.1, 1]", "5",
	// "\"magic\""; a bare word is a string). Applied in order; a later
	// assignment of a key wins. The keys id, kind, schema, profile.*,
	// claims.* and methods.* cannot be set.
	Set []string
	// Only restricts the spec to the named methods (its kind's
	// [MethodFilter]); empty means all.
	Only []string
}

// Empty reports whether o changes nothing.
func (o LoadOptions) Empty() bool { return len(o.Set) == 0 && len(o.Only) == 0 }

// words returns o as the command-line words that gave it, for the
// manifest.
func (o LoadOptions) words() []string {
	var w []string
	for _, s := range o.Set {
		w = append(w, "--set "+s)
	}
	if len(o.Only) > 0 {
		w = append(w, "--only "+strings.Join(o.Only, ","))
	}
	return w
}

// profileSuffix is ".set-<h>" for o.
func (o LoadOptions) profileSuffix() string {
	sum := sha256.Sum256([]byte(strings.Join(o.words(), "\x00")))
	return ".set-" + hex.EncodeToString(sum[:4])
}

// MethodFilter is implemented by a kind's section whose methods a run may
// restrict (`dprepro run --only`).
type MethodFilter interface {
	// Only keeps, in the section's method lists, the names of names
	// (a name may be in any of its lists, e.g. a cv-tuning learner or a
	// selection method). It returns an error naming the known methods
	// when a name is in none of them; a list left empty is the
	// validation's to refuse.
	Only(names []string) error
}

// forbiddenSet are the keys (or key prefixes) --set may not assign.
var forbiddenSet = []string{"id", "kind", "schema", "profile", "profile_applied", "claims", "methods"}

// splitAssignment splits "key=value" and checks the key.
func splitAssignment(a string) (key, value string, err error) {
	key, value, ok := strings.Cut(a, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return "", "", fmt.Errorf("--set %s: want key=value (a dotted key of the spec, e.g. tuning.epsilons=[0.1,1])", a)
	}
	for _, part := range strings.Split(key, ".") {
		if part == "" || strings.ContainsAny(part, " \t\"'[]=") {
			return "", "", fmt.Errorf("--set %s: %q is not a dotted key of the spec (e.g. cv.folds)", a, key)
		}
	}
	top, _, _ := strings.Cut(key, ".")
	if slices.Contains(forbiddenSet, top) {
		return "", "", fmt.Errorf("--set %s: %s cannot be set from the command line (edit the spec file)", a, top)
	}
	return key, tomlValue(strings.TrimSpace(value)), nil
}

// tomlValue returns v when it is a TOML value, else v as a TOML string
// (so --set data.synthetic=never needs no quotes).
func tomlValue(v string) string {
	var m map[string]any
	if _, err := toml.Decode("v = "+v, &m); err == nil && v != "" {
		return v
	}
	return strconv.Quote(v)
}

// applyOptions applies o to s (a resolved, validated spec of the file
// base): each --set in order, then --only, then validates s again. lines
// locates the file's keys for errors the options did not cause.
func (s *Spec) applyOptions(base string, lines keyLines, o LoadOptions) error {
	if o.Empty() {
		return nil
	}
	set := map[string]string{} // key → the assignment, for the messages
	for _, a := range o.Set {
		key, value, err := splitAssignment(a)
		if err != nil {
			return err
		}
		doc := key + " = " + value + "\n"
		md, err := toml.Decode(doc, s)
		if err != nil {
			return fmt.Errorf("--set %s: %v", a, stripTOMLPosition(err))
		}
		took := len(md.Keys()) > 0 && len(md.Undecoded()) == 0
		if s.Section != nil {
			smd, err := toml.Decode(doc, s.Section)
			if err != nil {
				return fmt.Errorf("--set %s: %v", a, stripTOMLPosition(err))
			}
			took = took || len(smd.Undecoded()) == 0
		}
		if !took {
			return fmt.Errorf("--set %s: %s: unknown key", a, key)
		}
		set[key] = a
	}
	if len(o.Only) > 0 {
		f, ok := s.Section.(MethodFilter)
		if !ok {
			return fmt.Errorf("--only: the %s kind has no methods to choose from", s.Kind)
		}
		if err := f.Only(o.Only); err != nil {
			return fmt.Errorf("--only %s: %w", strings.Join(o.Only, ","), err)
		}
	}
	var errs []error
	for _, e := range s.validate() {
		from := ""
		for k, a := range set {
			if e.key == k || strings.HasPrefix(e.key, k+".") || strings.HasPrefix(k, e.key+".") {
				from = "--set " + a
			}
		}
		switch {
		case from != "":
			errs = append(errs, fmt.Errorf("%s: %s: %s", from, e.path, e.msg))
		case len(o.Only) > 0:
			errs = append(errs, fmt.Errorf("--only %s: %s: %s", strings.Join(o.Only, ","), e.path, e.msg))
		default:
			errs = append(errs, fmt.Errorf("%s%s: %s", lineOf(base, lines, e.key), e.path, e.msg))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	s.Profile += o.profileSuffix()
	s.Overrides = o.words()
	return nil
}

// stripTOMLPosition drops the line and column of a TOML error about the
// one-line document of an assignment (they would point into it, not into
// the file).
func stripTOMLPosition(err error) string {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return pe.Message
	}
	msg := err.Error()
	if m := typeErrRe.FindStringSubmatch(msg); m != nil {
		return m[2] + ": " + m[3]
	}
	return msg
}

// MethodList is one list of method names of a section, for
// [FilterMethods]: its key path and the list.
type MethodList struct {
	Key   string
	Names *[]string
}

// FilterMethods is the usual [MethodFilter]: each list that holds one of
// names keeps only those of names (in its own order); a list that holds
// none of them is left whole (so --only noisy-gd on a cv-tuning spec
// keeps every selection method and the one learner). A name in none of
// the lists is an error listing the spec's methods.
func FilterMethods(names []string, lists ...MethodList) error {
	var all []string
	for _, l := range lists {
		all = append(all, *l.Names...)
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return errors.New(Unknown("method", n, all))
		}
	}
	for _, l := range lists {
		var kept []string
		for _, n := range *l.Names {
			if slices.Contains(names, n) {
				kept = append(kept, n)
			}
		}
		if len(kept) > 0 {
			*l.Names = kept
		}
	}
	return nil
}
