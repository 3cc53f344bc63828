package protocol

import (
	"strings"
	"unicode/utf8"
)

// Scheme URIs (docs/device-protocol.md#mutations): the host builds
// solopi://startaction/<action>?<params> for the protected activity and
// /scheme/<action>?<params> for the HTTP channel; the app reads the first
// with android.net.Uri. MutationURI is the host's one builder and
// ParseMutationURI the device's one reading, so the simulator decodes
// exactly what the host encoded, the way the real app does.

// Param is one query parameter; Params keeps insertion order, which carries
// no meaning on the device but makes commands reproducible in logs and tests.
type Param struct {
	Key, Value string
}

// Params is an ordered parameter list.
type Params []Param

// P builds Params from alternating keys and values.
func P(kv ...string) Params {
	var p Params
	for i := 0; i+1 < len(kv); i += 2 {
		p = append(p, Param{kv[i], kv[i+1]})
	}
	return p
}

// Add appends one parameter and returns the list.
func (p Params) Add(k, v string) Params { return append(p, Param{k, v}) }

// Get returns the first value for k.
func (p Params) Get(k string) (string, bool) {
	for _, x := range p {
		if x.Key == k {
			return x.Value, true
		}
	}
	return "", false
}

// Encode form-encodes the parameters exactly like Python's urlencode
// (quote_plus): space becomes '+', every byte outside [A-Za-z0-9_.~-] is
// percent-encoded. The device decodes both its HTTP and Activity forms.
func (p Params) Encode() string {
	var b strings.Builder
	for i, x := range p {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(quotePlus(x.Key))
		b.WriteByte('=')
		b.WriteString(quotePlus(x.Value))
	}
	return b.String()
}

// quotePlus is Python's urllib.parse.quote_plus with its default safe set.
func quotePlus(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '.', c == '~', c == '-':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// MutationURI builds solopi://startaction/<action>[?params].
func MutationURI(action string, p Params) string {
	return withQuery(schemeURIPrefix+quotePlus(action), p)
}

// QueryPath builds /scheme/<action>[?params] for the HTTP channel.
func QueryPath(action string, p Params) string {
	return withQuery(HTTPPathPrefix+quotePlus(action), p)
}

func withQuery(u string, p Params) string {
	if len(p) > 0 {
		u += "?" + p.Encode()
	}
	return u
}

// parsedURI is a solopi:// URI as android.net.Uri reads it for the scheme
// activities.
type parsedURI struct {
	Scheme, Host string
	// Segments are the decoded non-empty path segments.
	Segments []string
	// Params is what Uri.getQueryParameter(name) answers for every name a
	// resolver can ask for: the FIRST value, percent-decoded with '+' as a
	// space; a name without '=' maps to "". Android matches Uri.encode(name)
	// against the raw query, so a name the host encoded non-canonically
	// (for example "%74ype", or "a+b" for "a b") is unreachable and absent
	// here.
	Params map[string]string
	// Names lists the decoded names in first-occurrence order
	// (getQueryParameterNames), reachable or not.
	Names []string
}

// Action is the resolver the URI names: its only path segment. With no or
// several segments the app starts its launcher instead (ok is false).
func (u parsedURI) Action() (action string, ok bool) {
	if len(u.Segments) != 1 {
		return "", false
	}
	return u.Segments[0], true
}

// ParseMutationURI parses uri like android.net.Uri (hierarchical, lenient:
// it never fails; malformed escapes decode to U+FFFD as Uri.decode does).
func ParseMutationURI(uri string) parsedURI {
	var u parsedURI
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
