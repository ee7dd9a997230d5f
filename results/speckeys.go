package results

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// FlattenSpec returns the settings of a resolved spec's TOML (its
// spec.toml, experiments.Spec.Canonical) as dotted key → value text:
// "data.subsample" → "600", "methods[0].name" → "\"py-x\"". A checkpoint's
// header keeps them (CheckpointHeader.SpecKeys) so that a run started
// over can say which keys changed.
func FlattenSpec(canon []byte) (map[string]string, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(canon), &doc); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, x)
			}
		case []map[string]any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", prefix, i), x)
			}
		default:
			out[prefix] = valueText(v)
		}
	}
	walk("", doc)
	return out, nil
}

// valueText formats a TOML value as the spec writes it, shortened.
func valueText(v any) string {
	var s string
	switch v := v.(type) {
	case string:
		s = fmt.Sprintf("%q", v)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = valueText(x)
		}
		s = "[" + strings.Join(parts, ", ") + "]"
	default:
		s = fmt.Sprint(v)
	}
	if len(s) > 60 {
		s = s[:57] + "…"
	}
	return s
}

// keyChanges says, for the keys whose values differ between old and cur
// (both from FlattenSpec), "key: old → new" — "(unset)" for a key one of
// them lacks — at most max of them, sorted, then "and N more"; "" when
// either is empty (a header written without them).
func keyChanges(old, cur map[string]string, max int) string {
	if len(old) == 0 || len(cur) == 0 {
		return ""
	}
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range cur {
		keys[k] = true
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		a, okA := old[k]
		b, okB := cur[k]
		if okA && okB && a == b {
			continue
		}
		if !okA {
			a = "(unset)"
		}
		if !okB {
			b = "(unset)"
		}
		parts = append(parts, fmt.Sprintf("%s: %s → %s", k, a, b))
	}
	if len(parts) > max {
		parts = append(parts[:max], fmt.Sprintf("and %d more", len(parts)-max))
	}
	return strings.Join(parts, "; ")
}
