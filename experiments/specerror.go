package experiments

import (
	"fmt"
	"strings"
)

// SpecError is an error of one resolved spec found after Load: when a kind
// builds its experiment (a data file that does not load, a learner that
// refuses the spec, a dataset of the wrong task) or when a run of it
// fails. It names the spec once, as a validation problem does:
//
//	spec.toml:12: data.files.mydata.path: data file not found: …
//
// with the file and line of the key at fault, or, when no key is at fault,
// by the spec id:
//
//	cv13-magic: 3 of 600 units failed …
//
// Build one with Spec.ErrorAt, Spec.Errorf or Spec.Attribute.
type SpecError struct {
	// Where is "file:line" of the key (the profile's override when the
	// run's profile sets it), "file" when the key is not written in the
	// file, or the spec id for a spec not read from a file or an error at
	// no key.
	Where string
	// Path is the key path at fault as shown, e.g. "data.datasets[1]";
	// empty for an error at no key.
	Path string
	Err  error
}

// Error returns "WHERE: PATH: ERR", or "WHERE: ERR" without a path.
func (e *SpecError) Error() string {
	if e.Path == "" {
		return e.Where + ": " + e.Err.Error()
	}
	return e.Where + ": " + e.Path + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *SpecError) Unwrap() error { return e.Err }

// Pos returns where key is written in the spec's file: "file:line" (the
// line of the run's profile's override when it sets the key, else of the
// key, else of its nearest written ancestor table), "file" when neither is
// written, or "" for a spec not read from a file. The file is the base
// name of the spec's path, as in validation messages.
func (s *Spec) Pos(key string) string {
	return strings.TrimSuffix(s.where(key), ": ")
}

// ErrorAt returns err as the spec's error at key (the key looked up for
// the line, e.g. "tuning.learners"), shown as path (e.g.
// "tuning.learners[1]"): a *SpecError. A nil err gives nil.
func (s *Spec) ErrorAt(key, path string, err error) error {
	if err == nil {
		return nil
	}
	where := s.Pos(key)
	if where == "" {
		where = s.ID
	}
	return &SpecError{Where: where, Path: path, Err: err}
}

// Errorf returns the spec's error at key, shown as key, with the message
// fmt.Errorf(format, args...) makes.
func (s *Spec) Errorf(key, format string, args ...any) error {
	return s.ErrorAt(key, key, fmt.Errorf(format, args...))
}

// Attribute returns err naming the spec once: a *SpecError, or a join
// (errors.Join) of them, as it is; any other error as a *SpecError at no
// key, "ID: err". Registry.New and the command attribute the errors of
// kinds and runs with it, so a kind's New returns errors without the spec
// id: a *SpecError (ErrorAt, Errorf) where a key is at fault, a plain
// error otherwise. A nil err gives nil.
func (s *Spec) Attribute(err error) error {
	if err == nil || attributed(err) {
		return err
	}
	return &SpecError{Where: s.ID, Err: err}
}

// attributed reports whether err is a *SpecError or a join of attributed
// errors.
func attributed(err error) bool {
	if _, ok := err.(*SpecError); ok {
		return true
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return false
	}
	errs := j.Unwrap()
	for _, e := range errs {
		if !attributed(e) {
			return false
		}
	}
	return len(errs) > 0
}
