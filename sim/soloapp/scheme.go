package soloapp

import (
	"strings"
	"unicode/utf8"
)

// SchemeURI is a solopi:// URI as android.net.Uri reads it for the scheme
// activities (docs/device-protocol.md#mutations).
type SchemeURI struct {
	Scheme, Host string
	// Segments are the decoded non-empty path segments.
	Segments []string
	// Params is what Uri.getQueryParameter(name) answers for every name a
	// resolver can ask for: the FIRST value, percent-decoded with '+' as a
	// space; a name without '=' maps to "". Android matches Uri.encode(name)
	// against the raw query, so a name the host encoded non-canonically
	// (for example "%74ype") is unreachable and absent here.
	Params map[string]string
	// Names lists the decoded names in first-occurrence order
	// (getQueryParameterNames), reachable or not.
	Names []string
}

// ParseSchemeURI parses uri like android.net.Uri (hierarchical, lenient: it
// never fails; malformed escapes decode to U+FFFD as Uri.decode does).
func ParseSchemeURI(uri string) SchemeURI {
	var u SchemeURI
	rest := uri
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, ':'); i > 0 && !strings.ContainsAny(rest[:i], "/?") {
		u.Scheme = rest[:i]
		rest = rest[i+1:]
	}
	query := ""
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		query = rest[i+1:]
		rest = rest[:i]
	}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		u.Host = androidDecode(rest[:end], false)
		rest = rest[end:]
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg != "" {
			u.Segments = append(u.Segments, androidDecode(seg, false))
		}
	}
	u.Params = map[string]string{}
	if query == "" {
		return u
	}
	seen := map[string]bool{}
	for _, piece := range strings.Split(query, "&") {
		if piece == "" {
			continue
		}
		name, value, hasEq := strings.Cut(piece, "=")
		key := androidDecode(name, false)
		if !seen[key] {
			seen[key] = true
			u.Names = append(u.Names, key)
		}
		if androidEncode(key) != name {
			continue // getQueryParameter(key) would not find this piece
		}
		if _, found := u.Params[key]; found {
			continue // first value wins
		}
		if !hasEq {
			u.Params[key] = ""
			continue
		}
		u.Params[key] = androidDecode(value, true)
	}
	return u
}

// androidEncode is Uri.encode(s): UTF-8, every byte outside
// [A-Za-z0-9_!.~'()*-] as %XX with uppercase hex.
func androidEncode(s string) string {
	const digits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_!.~'()*-", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&15])
	}
	return b.String()
}

// androidDecode is Uri.decode / UriCodec.decode: %XX escapes decode to bytes,
// malformed escapes and invalid UTF-8 become U+FFFD, and plus optionally
// becomes a space (getQueryParameter converts '+', Uri.decode does not).
func androidDecode(s string, plusToSpace bool) string {
	if !strings.ContainsAny(s, "%+") {
		// An intent's data is a Java String: malformed UTF-8 from the
		// command line arrives already replaced.
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+' && plusToSpace:
			out = append(out, ' ')
		case c == '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				out = append(out, unhex(s[i+1])<<4|unhex(s[i+2]))
				i += 2
			} else {
				out = append(out, "\uFFFD"...)
				// UriCodec consumes the rest of a broken escape.
				for k := 0; k < 2 && i+1 < len(s) && s[i+1] != '%'; k++ {
					i++
				}
			}
		default:
			out = append(out, c)
		}
	}
	if !utf8.Valid(out) {
		return strings.ToValidUTF8(string(out), "\uFFFD")
	}
	return string(out)
}

// parseHTTPQuery is NanoHTTPD 2.2.0's decodeParms: split on '&' (empty
// pieces skipped), split at the first '=', URL-decode both sides with '+'
// as space, trim the key only; duplicate keys: the LAST value wins.
func parseHTTPQuery(raw string) map[string]string {
	out := map[string]string{}
	for _, piece := range strings.Split(raw, "&") {
		if piece == "" {
			continue
		}
		name, value, hasEq := strings.Cut(piece, "=")
		key := strings.TrimSpace(javaURLDecode(name))
		if !hasEq {
			out[key] = ""
			continue
		}
		out[key] = javaURLDecode(value)
	}
	return out
}

// javaURLDecode is java.net.URLDecoder.decode(s, "UTF-8"). A malformed
// escape makes Java throw; NanoHTTPD then keeps no decoded value, which we
// model by returning the raw text so the request still dispatches.
func javaURLDecode(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			out = append(out, ' ')
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return strings.ToValidUTF8(s, "\uFFFD")
			}
			out = append(out, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			out = append(out, c)
		}
	}
	if !utf8.Valid(out) {
		return strings.ToValidUTF8(string(out), "\uFFFD")
	}
	return string(out)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
