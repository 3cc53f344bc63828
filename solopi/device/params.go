package device

import (
	"strings"
)

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
		b.WriteString(QuotePlus(x.Key))
		b.WriteByte('=')
		b.WriteString(QuotePlus(x.Value))
	}
	return b.String()
}

// QuotePlus is Python's urllib.parse.quote_plus with its default safe set.
func QuotePlus(s string) string {
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

// SchemeURI builds solopi://startaction/<action>[?params].
func SchemeURI(action string, p Params) string {
	u := "solopi://startaction/" + QuotePlus(action)
	if len(p) > 0 {
		u += "?" + p.Encode()
	}
	return u
}

// QueryPath builds /scheme/<action>[?params] for the HTTP channel.
func QueryPath(action string, p Params) string {
	u := "/scheme/" + QuotePlus(action)
	if len(p) > 0 {
		u += "?" + p.Encode()
	}
	return u
}
