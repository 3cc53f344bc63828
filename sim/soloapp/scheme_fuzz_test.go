package soloapp

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseSchemeURI checks the Activity URI parser on arbitrary input: it
// never panics, always yields valid UTF-8, keeps Names and Params in sync,
// and decodes what a host's form encoding produced back to the first value
// of every name.
func FuzzParseSchemeURI(f *testing.F) {
	f.Add("solopi://startaction/harness?type=case-import&path=%2Fsdcard%2Fx.json&replace=false&requestId=abc", "k", "v w")
	f.Add("solopi://startaction/agent?a=1&a=2&b", "ownerToken", "tok+en/=&%")
	f.Add("solopi://startaction//x/y/?%zz=%&&=", "", "")
	f.Add("solopi:startaction", "中文", "值 1")
	f.Fuzz(func(t *testing.T, uri, key, value string) {
		u := ParseSchemeURI(uri)
		for _, n := range u.Names {
			if !utf8.ValidString(n) {
				t.Fatalf("invalid UTF-8 in name %q", n)
			}
		}
		for k, v := range u.Params {
			if !slices.Contains(u.Names, k) || !utf8.ValidString(v) {
				t.Fatalf("param %q=%q", k, v)
			}
		}
		for _, s := range u.Segments {
			if s == "" || !utf8.ValidString(s) {
				t.Fatalf("bad segment %q", s)
			}
		}
		// Round trip of a host-encoded query (quote_plus ≈ url.QueryEscape).
		if key == "" || !utf8.ValidString(key) || !utf8.ValidString(value) || androidEncode(key) != url.QueryEscape(key) {
			return // only names both encoders leave identical are reachable
		}
		q := url.QueryEscape(key) + "=" + url.QueryEscape(value) + "&" + url.QueryEscape(key) + "=second"
		got := ParseSchemeURI("solopi://startaction/harness?" + q)
		if got.Params[key] != value {
			t.Fatalf("round trip %q=%q: got %q", key, value, got.Params[key])
		}
		h := parseHTTPQuery(q)
		if h[strings.TrimSpace(key)] != "second" {
			t.Fatalf("http last value: %v", h)
		}
	})
}
