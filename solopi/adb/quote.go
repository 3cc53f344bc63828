package adb

import "strings"

// shellQuote quotes s for the device's POSIX shell (mksh on Android): wrap in
// single quotes, and replace each ' with the four bytes ' \ ' ' (close the
// quotes, an escaped quote, reopen).
// This is adb's own escape_arg. Any byte string without NUL round-trips.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellJoin joins args into one command line for the device shell, quoting
// like Python's shlex.join: an argument made only of [A-Za-z0-9_@%+=:,./-]
// stays as is, anything else (and the empty string) goes through ShellQuote.
// The reference host builds its `am start` lines this way, so the device
// sees identical strings from both.
func ShellJoin(args ...string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && isShellSafe(a) {
			b.WriteString(a)
		} else {
			b.WriteString(shellQuote(a))
		}
	}
	return b.String()
}

// isShellSafe is shlex's _find_unsafe complement, ASCII only: Python's \w
// would also accept Unicode letters, but shlex compiles it with re.ASCII.
func isShellSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("_@%+=:,./-", c) >= 0:
		default:
			return false
		}
	}
	return true
}
