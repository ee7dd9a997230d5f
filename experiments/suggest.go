package experiments

import (
	"fmt"
	"strings"
)

// Unknown returns the message for a name that a spec gives where one of
// known is expected (a registry's names: datasets, learners, methods,
// generators, kinds, ...):
//
//	unknown method "stabilty" (known: stability, alphaSplit, ...); did you mean "stability"?
//
// what names one entry ("method", "dataset"). The hint is DidYouMean's.
func Unknown(what, name string, known []string) string {
	return fmt.Sprintf("unknown %s %q (known: %s)%s", what, name, strings.Join(known, ", "), Hint(name, known))
}

// Hint returns `; did you mean "X"?` when DidYouMean finds a name X of
// known close to name, else "": the suffix of every message naming an
// unknown registry entry.
func Hint(name string, known []string) string {
	if s, ok := DidYouMean(name, known); ok {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// DidYouMean returns the name of known closest to name, when one is close:
// equal but for case, or within Levenshtein distance 2 (insertions,
// deletions and substitutions of one character, compared case-blind), the
// distance also below the length of both names (so that "x" suggests no
// one-letter name and "dp" does not suggest "zcdp"). Among several, the
// nearest wins, then the first in known's order. A name equal to one of
// known has no suggestion.
func DidYouMean(name string, known []string) (string, bool) {
	const maxDist = 2
	lname := []rune(strings.ToLower(name))
	best, bestDist := "", maxDist+1
	for _, k := range known {
		if k == name {
			return "", false
		}
		lk := []rune(strings.ToLower(k))
		d := levenshtein(lname, lk)
		if d > 0 && (d >= len(lname) || d >= len(lk)) {
			continue
		}
		if d < bestDist {
			best, bestDist = k, d
		}
	}
	return best, bestDist <= maxDist
}

// levenshtein is the edit distance of a and b (unit costs), by the
// two-row dynamic programme.
func levenshtein(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
