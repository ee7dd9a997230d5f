package experiments

import (
	"fmt"
	"strings"
)

// keyLines maps dotted key paths of a TOML document to the 1-based line where
// the key (or, for a table, its header) is written. It understands the subset
// of TOML that specs use: [table] headers, key = value lines with bare or
// dotted keys, and values (arrays, strings) spanning several lines.
type keyLines map[string]int

func newKeyLines(src string) keyLines {
	kl := keyLines{}
	table := ""
	arrays := map[string]int{} // [[name]] headers seen so far, by name
	depth := 0                 // open brackets of a multi-line value
	inMulti := ""
	for i, raw := range strings.Split(src, "\n") {
		line := i + 1
		if inMulti != "" { // inside a multi-line string
			if strings.Contains(raw, inMulti) {
				inMulti = ""
			}
			continue
		}
		if depth > 0 {
			depth += bracketDelta(raw)
			continue
		}
		s := strings.TrimSpace(stripComment(raw))
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, "[") {
			name := strings.Trim(s, "[] ")
			table = normKey(name)
			if strings.HasPrefix(s, "[[") { // an array of tables: its i-th table is name[i]
				i := arrays[table]
				arrays[table] = i + 1
				if _, ok := kl[table]; !ok {
					kl[table] = line
				}
				table = fmt.Sprintf("%s[%d]", table, i)
			} else {
				// A sub-table of an array of tables ([methods.params]
				// after [[methods]]) belongs to its latest element.
				for arr, n := range arrays {
					if rest, ok := strings.CutPrefix(table, arr+"."); ok && n > 0 {
						table = fmt.Sprintf("%s[%d].%s", arr, n-1, rest)
						break
					}
				}
			}
			if _, ok := kl[table]; !ok {
				kl[table] = line
			}
			continue
		}
		eq := strings.Index(s, "=")
		if eq < 0 {
			continue
		}
		key := normKey(s[:eq])
		if table != "" {
			key = table + "." + key
		}
		if _, ok := kl[key]; !ok {
			kl[key] = line
		}
		val := strings.TrimSpace(s[eq+1:])
		for _, q := range []string{`"""`, `'''`} {
			if strings.HasPrefix(val, q) && !strings.Contains(val[3:], q) {
				inMulti = q
			}
		}
		depth = bracketDelta(val)
		if depth < 0 {
			depth = 0
		}
	}
	return kl
}

// line returns the line of key, or of its nearest written ancestor, or 0.
func (kl keyLines) line(key string) int {
	for k := key; k != ""; {
		if l, ok := kl[k]; ok {
			return l
		}
		i := strings.LastIndex(k, ".")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

// within returns the first line of a key below table (a dotted table
// header such as [profile.NAME.cv] names no line of its own for
// profile.NAME), or 0.
func (kl keyLines) within(table string) int {
	first := 0
	for k, l := range kl {
		if strings.HasPrefix(k, table+".") && (first == 0 || l < first) {
			first = l
		}
	}
	return first
}

func (kl keyLines) has(key string) bool {
	_, ok := kl[key]
	return ok
}

func normKey(k string) string {
	parts := strings.Split(k, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

// scanUnquoted calls visit for each byte of s outside "..." and '...'
// strings, until visit returns true; it returns that byte's index or len(s).
func scanUnquoted(s string, visit func(c byte) bool) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case visit(c):
			return i
		}
	}
	return len(s)
}

// stripComment removes a trailing # comment that is not inside a string.
func stripComment(s string) string {
	return s[:scanUnquoted(s, func(c byte) bool { return c == '#' })]
}

// bracketDelta counts '[' minus ']' outside strings and comments.
func bracketDelta(s string) int {
	d := 0
	scanUnquoted(stripComment(s), func(c byte) bool {
		switch c {
		case '[':
			d++
		case ']':
			d--
		}
		return false
	})
	return d
}
