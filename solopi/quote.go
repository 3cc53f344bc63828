package solopi

import "strings"

// shellSafe reports whether s needs no quoting for the device shell
// (Python shlex.join's rule: only [A-Za-z0-9_@%+=:,./-]).
func shellSafe(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case strings.IndexByte("_@%+=:,./-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ShellQuote quotes one argument for the device's `sh -c`: single quotes,
// with each ' written as '\''.
func ShellQuote(s string) string {
	if shellSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellJoin joins arguments into one device shell command line, quoting each
// as needed (shlex.join), so the device shell re-splits it exactly.
func ShellJoin(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}
