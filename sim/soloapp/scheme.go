package soloapp

import (
	"net/url"
	"strings"
)

// The activity's URI is read by protocol.ParseMutationURI (android.net.Uri);
// this file is the HTTP channel's reading of a query string.

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

// javaURLDecode is java.net.URLDecoder.decode(s, "UTF-8"): '+' is a space
// and %XX a byte, as in url.QueryUnescape; the bytes are read as UTF-8 with
// malformed sequences replaced. A malformed escape makes Java throw;
// NanoHTTPD then keeps no decoded value, which we model by returning the raw
// text so the request still dispatches.
func javaURLDecode(s string) string {
	if d, err := url.QueryUnescape(s); err == nil {
		s = d
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
