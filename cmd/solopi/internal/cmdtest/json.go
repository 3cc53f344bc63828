package cmdtest

// Accessors of a decoded JSON object: the zero value when the key is
// absent or of another type.

// Str is m's string at k.
func Str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

// Num is m's number at k.
func Num(m map[string]any, k string) float64 { f, _ := m[k].(float64); return f }

// Bool is m's boolean at k.
func Bool(m map[string]any, k string) bool { b, _ := m[k].(bool); return b }

// Strs are the strings of m's list at k.
func Strs(m map[string]any, k string) []string {
	var out []string
	l, _ := m[k].([]any)
	for _, v := range l {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}
