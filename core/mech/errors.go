package mech

import (
	"fmt"
	"math"
)

// ParamError reports an invalid mechanism parameter: a privacy parameter,
// sensitivity or scale that is NaN, infinite or out of range, or an empty
// input. Callers that map errors to spec fields can read Param and Value.
type ParamError struct {
	Op    string  // operation, e.g. "laplace"
	Param string  // parameter name as in the Go signature, e.g. "epsilon" or "scores[3]"
	Value float64 // offending value (the length for empty inputs)
	Want  string  // required domain, e.g. "finite and > 0"
}

// Error formats the error as "mech: <op>: <param> must be <want> (got <value>)".
func (e *ParamError) Error() string {
	return fmt.Sprintf("mech: %s: %s must be %s (got %v)", e.Op, e.Param, e.Want, e.Value)
}

// checkPositive returns a *ParamError unless v is finite and > 0.
// The negated comparison also rejects NaN, for which every comparison is false.
func checkPositive(op, param string, v float64) error {
	if !(v > 0) || math.IsInf(v, 1) {
		return &ParamError{Op: op, Param: param, Value: v, Want: "finite and > 0"}
	}
	return nil
}

// checkOpenUnit returns a *ParamError unless 0 < v < 1.
func checkOpenUnit(op, param string, v float64) error {
	if !(v > 0 && v < 1) {
		return &ParamError{Op: op, Param: param, Value: v, Want: "in (0, 1)"}
	}
	return nil
}

// checkScores returns a *ParamError if scores is empty or holds a NaN or an
// infinite value.
func checkScores(op string, scores []float64) error {
	if len(scores) == 0 {
		return &ParamError{Op: op, Param: "len(scores)", Value: 0, Want: "> 0"}
	}
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return &ParamError{Op: op, Param: fmt.Sprintf("scores[%d]", i), Value: s, Want: "finite"}
		}
	}
	return nil
}

// fill returns dst, allocating len(x) elements when dst is nil, and panics
// when a non-nil dst has a different length from x (a programming error).
func fill(dst, x []float64) []float64 {
	if dst == nil {
		return make([]float64, len(x))
	}
	if len(dst) != len(x) {
		panic(fmt.Sprintf("mech: length mismatch: len(dst) = %d, len(x) = %d", len(dst), len(x)))
	}
	return dst
}
